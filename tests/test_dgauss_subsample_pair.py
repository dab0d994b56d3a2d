"""The add/remove pair of a Poisson-subsampled discrete Gaussian (dgsub brief).

A black-box review found a subsampled `dgauss` summarised as one (eps, delta)
figure before amplification (one round 0.6606 against an exact 0.499157;
50 rounds 15.28 against about 1.914), and the replace-one case of a shift
above 1 without any finite figure at delta = 1e-6 (now the replace pair with
shifts +-s, `pld_atomic.dgauss_replace_pair`). The references here are
computed from the two probability mass functions themselves, never from
fuzzpy's accountant:

* one round: the hockey-stick divergence summed in mpmath over the outcomes,
  in both directions (removal P = (1-q) f + q f(. - s) against Q = f;
  addition the reverse), epsilon found by bisection;
* rounds: dp-accounting's PLD built from the same mass functions,
  pessimistic (an upper bound) and optimistic (a lower bound), the larger
  direction of each.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import pytest

from fuzzpy.accounting import accountant
from fuzzpy.accounting.events import DiscreteGaussian, Repeat, Subsample
from fuzzpy.accounting.neighbours import REPLACE_ONE, resolve
from fuzzpy.api import loads

Masses = dict[int, mpmath.mpf]


def _pmfs(sigma: float, q: float, shift: int, cut: int = 15) -> tuple[Masses, Masses]:
    """f = N_Z(0, sigma^2) and the mixture (1-q) f + q f(. - shift), on |y| <= cut sigma + shift."""
    with mpmath.workprec(150):
        s2 = mpmath.mpf(sigma) ** 2
        k = int(cut * sigma) + shift + 2
        raw = {y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2)) for y in range(-2 * k, 2 * k + 1)}
        z = mpmath.fsum(raw.values())
        qq = mpmath.mpf(q)
        f = {y: raw[y] / z for y in range(-k, k + 1)}
        mix = {y: (1 - qq) * raw[y] / z + qq * raw[y - shift] / z for y in range(-k, k + 1)}
        return f, mix


def _hockey(p: Masses, r: Masses, eps: float) -> mpmath.mpf:
    e = mpmath.exp(mpmath.mpf(eps))
    return mpmath.fsum(max(p[y] - e * r[y], 0) for y in p)


def _exact_epsilon(p: Masses, r: Masses, delta: float) -> float:
    with mpmath.workprec(150):
        lo, hi = 0.0, 30.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _hockey(p, r, mid) > delta else (lo, mid)
        return hi


def _one_round_exact(sigma: float, q: float, shift: int, delta: float) -> float:
    f, mix = _pmfs(sigma, q, shift)
    return max(_exact_epsilon(mix, f, delta), _exact_epsilon(f, mix, delta))


def _fuzzpy(sigma: int, q: Fraction, shift: int, steps: int, delta: float, relation: object = None) -> float:
    body = (DiscreteGaussian(Fraction(shift), Fraction(sigma)),)
    events: tuple = (Repeat(steps, (Subsample(q, body, direct=True),)),)
    if relation is not None:
        events = resolve(events, relation)
    return accountant.tightest(events, delta).epsilon


@pytest.mark.parametrize(("sigma", "q", "shift", "delta"), [
    (2, Fraction(1, 10), 1, 1e-6),  # the review's case: 0.6606 before, exact 0.499157
    (3, Fraction(1, 4), 2, 1e-5),
    (1, Fraction(1, 50), 1, 1e-9),
    (5, Fraction(1, 20), 3, 1e-2),  # small epsilons: the PLD's grid gave 0.0232, exact 0.00512
    (5, Fraction(1, 20), 3, 1e-4),  # 0.1710 by the grid, exact 0.1693
])
def test_one_round_against_the_summed_hockey_stick(sigma: int, q: Fraction, shift: int, delta: float) -> None:
    found = _fuzzpy(sigma, q, shift, 1, delta)
    exact = _one_round_exact(float(sigma), float(q), shift, delta)
    assert exact * (1 - 1e-9) <= found <= exact * 1.001, (found, exact)


def _dp_accounting(sigma: float, q: float, shift: int, steps: int, delta: float, pessimistic: bool) -> float:
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    f, mix = _pmfs(sigma, q, shift)
    log_f = {y: float(mpmath.log(v)) for y, v in f.items() if v > 0}
    log_mix = {y: float(mpmath.log(v)) for y, v in mix.items() if v > 0}
    found = []
    for lower, upper in ((log_f, log_mix), (log_mix, log_f)):  # removal, addition
        one = pld.from_two_probability_mass_functions(
            lower, upper, pessimistic_estimate=pessimistic, value_discretization_interval=1e-4)
        found.append(one.self_compose(steps).get_epsilon_for_delta(delta))
    return max(found)


@pytest.mark.slow
@pytest.mark.parametrize(("sigma", "q", "shift", "steps", "delta"), [
    (2, Fraction(1, 10), 1, 50, 1e-6),  # the review's case: 15.28 before, about 1.914
    (4, Fraction(1, 20), 3, 200, 1e-8),
])
def test_rounds_against_dp_accounting_bracket(sigma: int, q: Fraction, shift: int, steps: int, delta: float) -> None:
    found = _fuzzpy(sigma, q, shift, steps, delta)
    low = _dp_accounting(float(sigma), float(q), shift, steps, delta, pessimistic=False)
    high = _dp_accounting(float(sigma), float(q), shift, steps, delta, pessimistic=True)
    assert low * (1 - 1e-9) <= found <= high * 1.01, (found, low, high)


def test_fifty_rounds_are_no_longer_the_summary_figure() -> None:
    found = _fuzzpy(2, Fraction(1, 10), 1, 50, 1e-6)
    assert 1.9 < found < 1.93  # about 1.914 (the bracket above); 15.28 before


# ---------------------------------------------------------------- replace-one, shift above 1


def _replace_lower(sigma: float, q: float, shift: int, delta: float) -> float:
    """A lower bound every valid figure meets: the replace pair of a query
    moving by +shift for the row and -shift for its replacement, P = (1-q) f
    + q f(. - s), Q = (1-q) f + q f(. + s), summed in mpmath."""
    f, mix = _pmfs(sigma, q, shift)
    reflected = {y: mix[-y] for y in mix}
    return _exact_epsilon(mix, reflected, delta)


@pytest.mark.slow  # about 2 s (the default suite stays under 10 minutes)
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-12, 1e-40])
def test_replace_one_shift_two_is_finite_at_every_delta(delta: float) -> None:
    found = _fuzzpy(2, Fraction(1, 10), 2, 1, delta, REPLACE_ONE)
    assert math.isfinite(found)  # inf at 1e-6 before, 2.85645 at 1e-3
    lower = _replace_lower(2.0, 0.1, 2, delta)
    # the replace pair with shifts +-2 is the one charged (`pld_atomic.dgauss_replace_pair`): tight
    assert lower * (1 - 1e-9) <= found <= lower * 1.001, (found, lower)


def _hockey_of_shift(sigma: float, a: int, gamma: float) -> mpmath.mpf:
    """H_gamma(N_Z(a) || N_Z(0)) by direct summation."""
    f, _ = _pmfs(sigma, 0.5, 1)
    shifted = {y: f.get(y - a, mpmath.mpf(0)) for y in f}
    with mpmath.workprec(150):
        return mpmath.fsum(max(shifted[y] - gamma * f[y], 0) for y in f)


@pytest.mark.parametrize("sigma", [0.7, 2.0])
def test_the_largest_shift_dominates_every_smaller_one(sigma: float) -> None:
    # `pld_atomic` SHIFT_DOMINATION, which both pairs rest on: H_gamma of shift a
    # is at most that of shift s = 3 for every |a| <= 3 and gamma >= 0 (below 1 too)
    for gamma in (0.05, 0.4, 1.0, 1.7, 6.0, 40.0):
        top = _hockey_of_shift(sigma, 3, gamma)
        for a in (-3, -2, -1, 0, 1, 2):
            assert _hockey_of_shift(sigma, a, gamma) <= top + 1e-15, (a, gamma)  # a = -3: equal


@pytest.mark.slow
def test_budget_cli_replace_one_shift_two(capsys: pytest.CaptureFixture[str]) -> None:
    from fuzzpy.cli import main

    figures = []
    for delta in ("1e-6", "1e-3"):
        assert main(["budget", "--dgauss", "2", "--subsample", "0.1", "--sensitivity", "2",
                     "--neighbours", "replace-one", "--delta", delta, "--json"]) == 0
        figures.append(json.loads(capsys.readouterr().out)["tightest"]["epsilon"])
    assert all(isinstance(x, float) and math.isfinite(x) for x in figures), figures
    assert figures[1] <= 2.85645  # the group bound over the summary before
    lower = _replace_lower(2.0, 0.1, 2, 1e-6)
    assert lower <= figures[0] <= lower * 1.001


def test_check_of_a_doubled_count_under_replace_one_is_finite() -> None:
    source = "def dg(db : bag num) : fuzzy int = subsample[0.1] (fun b -> dgauss[2] (2 * size b)) db;\n"
    report = loads(source).check(1e-6, REPLACE_ONE, None)
    found = float(report["dg"].parameters[0].cost.epsilon)
    lower = _replace_lower(2.0, 0.1, 2, 1e-6)
    assert lower <= found <= lower * 1.001, (found, lower)
