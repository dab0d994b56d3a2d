"""One person's k rows over a Poisson-subsampled Laplace (`check --group k`,
a dataset's rows per person; issue 28).

Before, the group was charged group privacy of the subsampled body, composed
by KOV: 50 rounds of `laplace` (eps 1/2 per row) on a 5 % sample, k = 2,
1.93648 at delta 1e-6, where the mixture pair gives 1.4606. The references
here never call the accountant. The two laws are written out from the
sampling coins of the person's rows (each of the 2^k subsets, not the
binomial formula), on outcomes in units of the noise's scale:

* the domination claim (`pld_group.LaplaceGroupTails`: however the k rows
  move the query, by at most eps each, the pair with every row moving by
  +eps dominates) by brute force over the moves, hockey-stick divergences
  summed on a fine grid of outcomes;
* one round: the hockey-stick divergence in mpmath from the densities' ratio
  (one crossing, the pair's ratio being monotone), epsilon by bisection;
* many rounds: dp-accounting's PLD of the pair, its loss law rounded up
  (an upper figure) and down (a lower one) on a fine grid.

Every figure must be valid (at least the exact value, or the lower
estimate) and within 1 % of it.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from fuzzpy.accounting import accountant
from fuzzpy.accounting.events import Group, Laplace, Repeat, Subsample
from fuzzpy.api import loads

# ---------------------------------------------------------------- the laws, from the coins


def _coins(q: float, moves: tuple[float, ...]) -> list[tuple[float, float]]:
    """(chance, shift) for each subset of the person's rows drawn."""
    found = []
    for drawn in itertools.product((False, True), repeat=len(moves)):
        chance = float(np.prod([q if d else 1 - q for d in drawn]))
        found.append((chance, sum(m for m, d in zip(moves, drawn, strict=True) if d)))
    return found


def _density(q: float, moves: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    return sum(c * 0.5 * np.exp(-np.abs(x - a)) for c, a in _coins(q, moves))


def _grid_hockey(p: np.ndarray, r: np.ndarray, gamma: float, dx: float) -> float:
    """The trapezoid rule: within ~1e-7 of the integral here (kinks at the centres)."""
    f = np.maximum(p - gamma * r, 0.0)
    return float((np.sum(f) - (f[0] + f[-1]) / 2) * dx)


@pytest.mark.parametrize(("eps", "k"), [
    (1.0, 2), pytest.param(2.5, 2, marks=pytest.mark.slow), pytest.param(0.7, 3, marks=pytest.mark.slow)])
def test_every_move_of_the_rows_is_dominated_by_all_moving_up(eps: float, k: int) -> None:
    q, dx, slack = 0.3, 1e-3, 1e-6  # slack: the rule's error, far below the gaps tested
    x = np.arange(-36.0, 36.0 + k * eps, dx)
    base = _density(q, (), x)
    top, bottom = _density(q, (eps,) * k, x), _density(q, (-eps,) * k, x)
    steps = (-eps, -eps / 3, 0.0, eps / 2, eps)
    for moves in itertools.product(steps, repeat=k):
        law = _density(q, moves, x)
        other = _density(q, tuple(-m for m in moves), x)  # the replaced rows' side, moved back
        for gamma in (0.4, 1.0, 1.7, 6.0):  # below 1 too: the PLD composes at every gamma
            assert _grid_hockey(law, base, gamma, dx) <= _grid_hockey(top, base, gamma, dx) + slack, (moves, gamma)
            assert _grid_hockey(base, law, gamma, dx) <= _grid_hockey(base, top, gamma, dx) + slack, (moves, gamma)
            assert _grid_hockey(law, other, gamma, dx) <= _grid_hockey(top, bottom, gamma, dx) + slack, (moves, gamma)


# ---------------------------------------------------------------- one round, in mpmath


class _Pair:
    """first against second, each a list of (chance, centre) of unit Laplace laws."""

    def __init__(self, first: list[tuple[float, float]], second: list[tuple[float, float]]) -> None:
        self.first = [(mpmath.mpf(c), mpmath.mpf(a)) for c, a in first]
        self.second = [(mpmath.mpf(c), mpmath.mpf(a)) for c, a in second]
        self.reach = max(abs(a) for _, a in self.first + self.second) + 1

    @staticmethod
    def _dens(law: list, x: mpmath.mpf) -> mpmath.mpf:  # type: ignore[type-arg]
        return mpmath.fsum(c * mpmath.exp(-abs(x - a)) / 2 for c, a in law)

    @staticmethod
    def _above(law: list, t: mpmath.mpf) -> mpmath.mpf:  # type: ignore[type-arg]
        return mpmath.fsum(c * (mpmath.exp(-(t - a)) / 2 if t >= a else 1 - mpmath.exp(t - a) / 2) for c, a in law)

    def hockey(self, eps: float) -> mpmath.mpf:
        """sup_E first(E) - e^eps second(E); the ratio first/second increases in
        x (checked at the ends), so E is a half-line {x > t}."""
        gamma = mpmath.exp(eps)
        ratio = lambda x: self._dens(self.first, x) / self._dens(self.second, x)  # noqa: E731
        lo, hi = -self.reach, self.reach
        assert ratio(lo) <= ratio(hi)
        if ratio(hi) <= gamma:
            return mpmath.mpf(0)
        if ratio(lo) > gamma:
            return max(mpmath.mpf(0), 1 - gamma)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if ratio(mid) > gamma else (mid, hi)
        return self._above(self.first, hi) - gamma * self._above(self.second, hi)


def _bisect(delta_of, delta: float, hi: float = 30.0) -> float:  # noqa: ANN001
    lo = 0.0
    if delta_of(lo) <= delta:
        return 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return hi


def _pairs(eps: float, q: float, k: int, replace: bool) -> list[_Pair]:
    up, down, still = _coins(q, (eps,) * k), _coins(q, (-eps,) * k), [(1.0, 0.0)]
    if replace:
        return [_Pair(up, down)]
    flip = lambda law: [(c, -a) for c, a in law]  # noqa: E731  (the addition pair, reflected)
    return [_Pair(up, still), _Pair(flip(still), flip(up))]


def one_round_exact(eps: float, q: float, k: int, delta: float, replace: bool = False) -> float:
    with mpmath.workdps(40):
        return max(_bisect(pair.hockey, delta) for pair in _pairs(eps, q, k, replace))


def _fuzzpy(eps: Fraction, q: Fraction, k: int, steps: int, delta: float, replace: bool = False,
            person: bool = True) -> accountant.Guarantee:
    step = Subsample(q, (Laplace(Fraction(1), 1 / eps),), direct=True, replace=replace)
    body = (step,) if steps == 1 else (Repeat(steps, (step,)),)
    return accountant.tightest((Group(Fraction(k), body, rows=person),), delta)


@pytest.mark.slow  # each accountant call tries every flattening, a few seconds
@pytest.mark.parametrize(("eps", "q", "k", "delta", "replace"), [
    (Fraction(1), Fraction(1, 10), 2, 1e-6, False),
    (Fraction(1), Fraction(1, 10), 2, 1e-6, True),
    (Fraction(3), Fraction(1, 4), 3, 1e-3, False),
    (Fraction(2), Fraction(1, 5), 2, 1e-2, True),
])
def test_one_round_is_the_exact_mixture_figure(eps: Fraction, q: Fraction, k: int, delta: float,
                                               replace: bool) -> None:
    found = _fuzzpy(eps, q, k, 1, delta, replace)
    exact = one_round_exact(float(eps), float(q), k, delta, replace)
    assert exact * (1 - 1e-9) <= found.epsilon <= exact * 1.01, (found, exact)


# ---------------------------------------------------------------- many rounds: dp-accounting


def _loss_law(pair: _Pair, h: float, up: bool) -> dict[int, float]:
    """The loss log(first / second) under first, rounded to multiples of h
    (up: pessimistic), from a fine grid of outcomes in doubles: the mass of
    each outcome cell at the larger (up) or smaller loss of its two ends."""
    first = [(float(c), float(a)) for c, a in pair.first]
    second = [(float(c), float(a)) for c, a in pair.second]
    reach = float(pair.reach) + 60.0
    x = np.linspace(-reach, reach, 2_000_001)

    def cdf(law: list[tuple[float, float]], t: np.ndarray) -> np.ndarray:
        return sum(c * np.where(t < a, 0.5 * np.exp(np.minimum(t - a, 0)), 1 - 0.5 * np.exp(-np.maximum(t - a, 0)))
                   for c, a in law)

    def dens(law: list[tuple[float, float]], t: np.ndarray) -> np.ndarray:
        return sum(c * 0.5 * np.exp(-np.abs(t - a)) for c, a in law)

    loss = np.log(dens(first, x)) - np.log(dens(second, x))
    cells = np.diff(cdf(first, x))
    ends = np.maximum(loss[1:], loss[:-1]) if up else np.minimum(loss[1:], loss[:-1])
    index = np.ceil(ends / h - 1e-9).astype(int) if up else np.floor(ends / h + 1e-9).astype(int)
    totals = np.bincount(index - index.min(), weights=cells)
    law = {int(i) + int(index.min()): float(m) for i, m in enumerate(totals) if m > 0}
    law[int(index.max() if up else index.min())] += 1.0 - float(cells.sum())  # the two ends beyond the grid
    return law


def rounds_bracket(eps: float, q: float, k: int, steps: int, delta: float, replace: bool = False) -> tuple[float, float]:
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    h = min(1e-4, 5e-3 / steps)
    bounds = []
    for up in (False, True):
        found = []
        for pair in _pairs(eps, q, k, replace):
            law = _loss_law(pair, h, up)
            one = pld.PrivacyLossDistribution.create_from_rounded_probability(law, 0.0, h, pessimistic_estimate=up)
            found.append(one.self_compose(steps).get_epsilon_for_delta(delta))
        bounds.append(max(found))
    return bounds[0], bounds[1]


@pytest.mark.slow  # the references take seconds
@pytest.mark.parametrize(("eps", "q", "k", "steps", "delta", "replace"), [
    (Fraction(1, 2), Fraction(1, 20), 2, 50, 1e-6, False),
    (Fraction(1, 2), Fraction(1, 20), 2, 50, 1e-6, True),
    (Fraction(1, 2), Fraction(1, 20), 3, 50, 1e-6, False),
    (Fraction(1, 5), Fraction(1, 100), 2, 1000, 1e-6, False),
])
def test_rounds_against_dp_accounting(eps: Fraction, q: Fraction, k: int, steps: int, delta: float,
                                      replace: bool) -> None:
    found = _fuzzpy(eps, q, k, steps, delta, replace)
    lower, upper = rounds_bracket(float(eps), float(q), k, steps, delta, replace)
    assert found.method == "pld"
    assert lower <= found.epsilon <= lower * 1.01, (found, lower, upper)
    before = _fuzzpy(eps, q, k, steps, delta, replace, person=False)  # the group rule charged before
    assert found.epsilon < before.epsilon


def test_check_group_two_of_fifty_subsampled_counts() -> None:
    """Through the public API: 1.93648 by the group rule before."""
    source = ("def c (db : bag num) : fuzzy num =\n"
              "  loop[50] 0 (fun t -> subsample[0.05] (fun b -> laplace[0.5] (size b)) db);\n")
    two = float(loads(source).check(1e-6, None, None, group=2)["c"].parameters[0].cost.epsilon)
    assert 1.458 < two < 1.4606 * 1.001, two


# ---------------------------------------------------------------- the sampler, statistically


@pytest.mark.slow  # 2 x 6,000 interpreter runs
def test_seeded_runs_on_a_person_of_two_rows_stay_within_the_charge() -> None:
    """The runtime's exact samplers on D (three rows) and D plus one person's
    two rows: on half-lines {x > t}, the Clopper-Pearson bound of the loss
    (99.9 % per side) stays at most the figure `check --group 2` charges,
    and the worst half-line shows a loss well above a single row's."""
    from fuzzpy.frontend.parser import parse_program
    from fuzzpy.runtime.audit import loss_bound
    from fuzzpy.runtime.bag import Bag, column_from_rows
    from fuzzpy.runtime.interpreter import Interpreter
    from fuzzpy.runtime.randomness import SeededSource
    from fuzzpy.runtime.values import force

    source = "def c (db : bag num) : fuzzy num = subsample[0.5] (fun b -> laplace[2] (size b)) db;\n"
    charged = float(loads(source).check(1e-6, None, None, group=2)["c"].parameters[0].cost.epsilon)
    pure = 2 * np.log(1 + 0.5 * np.expm1(2.0))  # the mixture's largest loss; at delta 1e-6 a little less
    assert pure * (1 - 1e-5) <= charged <= pure, charged
    program = parse_program(source, "c.fz")
    n = 6_000

    def outputs(rows: int, seed: int) -> np.ndarray:
        interp = Interpreter(program, SeededSource(seed))
        bag = Bag(column_from_rows([Fraction(0)] * rows, Fraction(0)))
        release = interp.definition("c")(bag)
        return np.array([float(force(release.sample())) for _ in range(n)])

    base, person = outputs(3, 1), outputs(5, 2)
    worst = 0.0
    for t in np.arange(2.0, 6.01, 0.5):
        bound = loss_bound(int(np.sum(person > t)), int(np.sum(base > t)), n, n, 1e-3)
        assert bound <= charged, (t, bound, charged)
        worst = max(worst, bound)
    assert worst > np.log(1 + 0.5 * np.expm1(2.0)), worst  # more than one row's amplified epsilon
