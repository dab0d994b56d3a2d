"""The staircase mechanism (issue 29, item 2; Geng & Viswanath, IEEE Trans.
IT 2016): `staircase[eps] e` and `staircase[eps, gamma] e`.

Written from the paper's density, not from the sampler: the CDF and the
discrete law below are derived here and the draws are tested against them
(Kolmogorov-Smirnov, chi-square); the grid's privacy argument is checked by
brute force on small grids; the checker's eps * ceil(s) on programs whose
sensitivity is below, at and above one step; an empirical privacy-loss
bound on neighbouring counts; and the reason for the mechanism -- its
expected |noise| at a large eps is far below Laplace's at the same eps.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting import accountant as A
from fuzzpy.accounting import events as E
from fuzzpy.checker.costs import scale_event
from fuzzpy.cli import main
from fuzzpy.language.sensitivity import Sens
from fuzzpy.ledger.event_codec import events_from_json, events_to_json
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.staircase import (
    GRID_BITS,
    StaircaseGrid,
    bernoulli_between,
    exp_neg_bounds,
    optimal_gamma,
    staircase_grid,
    staircase_release_one,
    staircase_units,
)

np = pytest.importorskip("numpy")
mpmath = pytest.importorskip("mpmath")
stats = pytest.importorskip("scipy.stats")

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the law, from the density


def continuous_cdf(x: np.ndarray, eps: float, gamma: float) -> np.ndarray:
    """P(X <= x) for the staircase density with Delta = 1: mass 1 - b^k below
    |x| = k (each whole step [k, k + 1) holds (1 - b) b^k), then the partial
    step at height a b^k up to k + gamma and a b^(k+1) after it."""
    b = math.exp(-eps)
    a = (1 - b) / (2 * (gamma + (1 - gamma) * b))
    y = np.abs(x)
    k = np.floor(y)
    r = y - k
    inside = 1 - b ** k + 2 * a * b ** k * np.minimum(r, gamma) + 2 * a * b ** (k + 1) * np.maximum(r - gamma, 0)
    return 0.5 + np.sign(x) * inside / 2


def discrete_pmf(eps: float, width: int, inner: int, reach: int) -> dict[int, float]:
    """P(N = n) proportional to e^(-eps L(|n|)), L(j) the number of step
    edges k width + inner (k >= 0) at or below j, normalised in closed form:
    the magnitudes j = k width + r carry b^k (r < inner) or b^(k+1)."""
    b = math.exp(-eps)

    def level(j: int) -> int:
        return 0 if j < inner else (j - inner) // width + 1

    magnitudes = (inner + (width - inner) * b) / (1 - b)  # sum over j >= 0 of b^level(j)
    total = 2 * magnitudes - b ** level(0)  # both signs, zero once
    return {n: b ** level(abs(n)) / total for n in range(-reach, reach + 1)}


def chi_square_p(draws: list[int], pmf: dict[int, float]) -> float:
    n = len(draws)
    points = sorted(pmf)
    counts = {z: 0 for z in points}
    for d in draws:
        if d in counts:
            counts[d] += 1
    observed = [counts[z] for z in points] + [n - sum(counts.values())]
    expected = [n * pmf[z] for z in points] + [max(n * (1 - sum(pmf.values())), 0.0)]
    bins_o: list[float] = []
    bins_e: list[float] = []
    acc_o, acc_e = 0.0, 0.0
    for o, e in zip(observed, expected, strict=True):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= 5:
            bins_o.append(acc_o)
            bins_e.append(acc_e)
            acc_o, acc_e = 0.0, 0.0
    bins_o[-1] += acc_o
    bins_e[-1] += acc_e
    statistic = sum((o - e) ** 2 / e for o, e in zip(bins_o, bins_e, strict=True))
    return float(stats.chi2.sf(statistic, len(bins_o) - 1))


def releases(value: Fraction, eps: Fraction, gamma: Fraction | None, n: int, seed: int) -> np.ndarray:
    source = SeededSource(seed)
    return np.array([float(staircase_release_one(value, eps, gamma, source)) for _ in range(n)])


# ---------------------------------------------------------------- the sampler against the law


@pytest.mark.parametrize(("eps", "gamma", "seed"), [
    (Fraction(1), None, 1), (Fraction(3), None, 2), (Fraction(2), Fraction(1, 4), 3), (Fraction(1, 2), Fraction(9, 10), 4),
])
def test_releases_follow_the_continuous_staircase(eps: Fraction, gamma: Fraction | None, seed: int) -> None:
    draws = releases(Fraction(0), eps, gamma, 1500, seed)
    g = float(gamma) if gamma is not None else 1 / (1 + math.exp(float(eps) / 2))
    result = stats.kstest(draws, lambda x: continuous_cdf(np.asarray(x), float(eps), g))
    assert result.pvalue > 1e-3, result


@pytest.mark.slow
@pytest.mark.parametrize(("eps", "seed"), [(Fraction(1, 3), 5), (Fraction(6), 6), (Fraction(12), 7)])
def test_releases_follow_the_continuous_staircase_more(eps: Fraction, seed: int) -> None:
    draws = releases(Fraction(5, 2), eps, None, 20000, seed) - 2.5
    g = 1 / (1 + math.exp(float(eps) / 2))
    assert stats.kstest(draws, lambda x: continuous_cdf(np.asarray(x), float(eps), g)).pvalue > 1e-3


@pytest.mark.parametrize(("eps", "width", "inner", "seed"), [
    (Fraction(1, 2), 5, 2, 11), (Fraction(3, 2), 4, 1, 12), (Fraction(1), 3, 0, 13), (Fraction(1), 3, 3, 14),
])
def test_the_grid_law_is_the_discrete_staircase(eps: Fraction, width: int, inner: int, seed: int) -> None:
    """The integers drawn, on a coarse hand-made grid (the runtime's grids
    are 2^32 units fine): exactly the discrete staircase, gamma 0 and 1 too."""
    grid = StaircaseGrid(0, width, inner, Fraction(inner, width))
    source = SeededSource(seed)
    draws = [staircase_units(eps, grid, source) for _ in range(3000)]
    assert chi_square_p(draws, discrete_pmf(float(eps), width, inner, 25)) > 1e-3


def test_a_wrong_gamma_is_noticed() -> None:
    """The chi-square has power: draws with inner part 1 are not the law with 3."""
    source = SeededSource(15)
    grid = StaircaseGrid(0, 5, 1, Fraction(1, 5))
    draws = [staircase_units(Fraction(1), grid, source) for _ in range(3000)]
    assert chi_square_p(draws, discrete_pmf(1.0, 5, 3, 25)) < 1e-6


# ---------------------------------------------------------------- exact arithmetic


@settings(max_examples=30, deadline=None)
@given(st.fractions(min_value=0, max_value=300, max_denominator=10**6), st.integers(0, 200))
def test_exp_bounds_bracket_the_true_value(x: Fraction, bits: int) -> None:
    lo, hi = exp_neg_bounds(x, bits)
    mpmath.mp.prec = bits + 600
    true = mpmath.exp(-mpmath.mpf(x.numerator) / x.denominator) * mpmath.mpf(2) ** bits
    assert lo <= true <= hi
    assert hi - lo <= 2


class Words(SeededSource):
    """A source whose words are given (then zeros)."""

    def __init__(self, words: list[int]) -> None:
        super().__init__(0)
        self._given = list(words)

    def word(self) -> int:
        return self._given.pop(0) if self._given else 0


@settings(max_examples=50, deadline=None)
@given(st.fractions(min_value=0, max_value=1, max_denominator=2**70), st.lists(st.integers(0, 2**64 - 1), min_size=3, max_size=3))
def test_the_bernoulli_answers_whether_the_uniform_is_below_p(p: Fraction, words: list[int]) -> None:
    def bounds(k: int) -> tuple[int, int]:
        return math.floor(p * 2**k), math.ceil(p * 2**k)

    v = Fraction((words[0] << 128) | (words[1] << 64) | words[2], 2**192)
    assert bernoulli_between(bounds, Words(words)) == (v < p) or v == p or abs(v - p) < Fraction(1, 2**190)


# ---------------------------------------------------------------- parameters


@settings(max_examples=50, deadline=None)
@given(st.fractions(max_value=0, max_denominator=100), st.one_of(st.none(), st.fractions(0, 1, max_denominator=100)))
def test_a_non_positive_epsilon_is_refused(eps: Fraction, gamma: Fraction | None) -> None:
    with pytest.raises(ValueError):
        staircase_grid(eps, gamma)


@settings(max_examples=25, deadline=None)
@given(st.fractions(min_value=Fraction(1, 100), max_value=50, max_denominator=1000),
       st.one_of(st.fractions(max_value=-Fraction(1, 10**6), max_denominator=10**6),
                 st.fractions(min_value=1 + Fraction(1, 10**6), max_denominator=10**6)))
def test_a_gamma_outside_the_unit_interval_is_refused(eps: Fraction, gamma: Fraction) -> None:
    with pytest.raises(ValueError):
        staircase_grid(eps, gamma)


@settings(max_examples=30, deadline=None)
@given(st.fractions(min_value=Fraction(1, 1000), max_value=60, max_denominator=1000),
       st.one_of(st.none(), st.fractions(0, 1, max_denominator=10**9)))
def test_the_grid_resolves_both_parts_of_a_step(eps: Fraction, gamma: Fraction | None) -> None:
    grid = staircase_grid(eps, gamma)
    unit = 2 ** -grid.exponent
    assert grid.width == unit + 1 and 0 <= grid.inner <= unit
    g = grid.gamma
    assert abs(Fraction(grid.inner, unit) - g) <= Fraction(1, 2 * unit)
    for part in (grid.inner, unit - grid.inner):
        assert part == 0 or part >= 2**GRID_BITS - 1
    if gamma is None:
        true = 1 / (1 + mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator / 2))
        assert abs(mpmath.mpf(g.numerator) / g.denominator - true) <= true * mpmath.mpf(2) ** -60


def test_the_optimal_gamma_falls_with_epsilon() -> None:
    values = [optimal_gamma(Fraction(e)) for e in (Fraction(1, 10), 1, 2, 5, 10, 40)]
    assert values == sorted(values, reverse=True) and values[0] < Fraction(1, 2)


# ---------------------------------------------------------------- the grid's privacy argument


def _level(j: int, width: int, inner: int) -> int:
    return 0 if j < inner else (j - inner) // width + 1


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.data())
def test_a_shift_of_m_units_crosses_at_most_ceil_m_over_width_steps(width: int, data: st.DataObject) -> None:
    inner = data.draw(st.integers(0, width))
    m = data.draw(st.integers(0, 3 * width))
    worst = max(abs(_level(abs(n), width, inner) - _level(abs(n + m), width, inner)) for n in range(-6 * width, 6 * width))
    assert worst <= -(-m // width)


@settings(max_examples=40, deadline=None)
@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**12),
       st.fractions(min_value=Fraction(1, 10**6), max_value=5, max_denominator=10**6),
       st.floats(0, 1), st.sampled_from([Fraction(1, 2), Fraction(3), None]))
def test_rounding_to_the_grid_never_costs_another_step(x: Fraction, s: Fraction, where: float, eps: Fraction | None) -> None:
    """|x - x'| <= s: the grid points move by at most ceil(s) step widths,
    so the release pays eps ceil(s), what the checker charges."""
    grid = staircase_grid(eps or Fraction(1))
    other = x + s * Fraction(where)
    g = Fraction(2) ** grid.exponent
    moved = abs(round(x / g) - round(other / g))
    assert -(-moved // grid.width) <= math.ceil(s)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.fractions(min_value=0, max_value=1, max_denominator=10**6), st.integers(0, 2**20),
       st.fractions(min_value=Fraction(1, 10**3), max_value=4, max_denominator=10**3), st.booleans())
def test_any_monotone_rounding_stays_within_the_widened_steps(bits: int, offset: Fraction, start: int,
                                                              s: Fraction, half_up: bool) -> None:
    """The argument does not rest on the tie rule: round half up (or down)
    as well as half to even moves two points s apart by at most s/g + 1
    units, within ceil(s) steps of 2^bits + 1 units."""
    unit = 2**bits
    a = Fraction(start) + offset
    b = a + s * unit

    def rounded(x: Fraction) -> int:
        return math.floor(x + Fraction(1, 2)) if half_up else math.ceil(x - Fraction(1, 2))

    moved = abs(rounded(b) - rounded(a))
    assert moved <= s * unit + 1 and -(-moved // (unit + 1)) <= math.ceil(s)


# ---------------------------------------------------------------- the checker


def _check(source: str) -> Any:
    from fuzzpy.checker import check_program
    from fuzzpy.frontend.parser import parse_program

    return check_program(parse_program(source, "<staircase>"))


def _refusal(source: str) -> Any:
    from fuzzpy.language.diagnostics import FuzzError

    with pytest.raises(FuzzError) as caught:
        _check(source)
    return caught.value.diagnostics[0]


ROWS = "type P = { age : int, w : num };\n"


@pytest.mark.parametrize(("body", "epsilon"), [
    ("staircase[1] (size db)", 1),
    ("staircase[1] (sum[0, 0.5] (map (fun p -> p.w) db))", 1),  # half a step still crosses one: not 1/2
    ("staircase[2, 0.3] (sum[0, 3] (map (fun p -> p.w) db))", 6),
    ("staircase[1/2] (sum[-1, 1.5] (map (fun p -> p.w) db))", 1),  # ceil(1.5) = 2 steps
    ("staircase[1] (0.25 * size db + 0.25 * size db)", 1),
    ("staircase[3] 7", 0),
])
def test_the_cost_is_eps_times_the_steps_crossed(body: str, epsilon: int) -> None:
    checked = _check(ROWS + f"def m (db : bag P) : fuzzy num = {body};\n")
    assert A.pure_epsilon(checked.definitions["m"].privacy.get("db", ())) == epsilon


def test_a_halved_argument_through_a_call_still_costs_a_whole_step() -> None:
    """Laplace's cost scales down with the argument; the staircase's cannot."""
    checked = _check(ROWS + """
def st (x : num) : fuzzy num = staircase[1] x;
def lp (x : num) : fuzzy num = laplace[1] x;
def m (db : bag P) : fuzzy num = st (0.5 * size db);
def l (db : bag P) : fuzzy num = lp (0.5 * size db);
""")
    assert A.pure_epsilon(checked.definitions["m"].privacy["db"]) == 1
    assert A.pure_epsilon(checked.definitions["l"].privacy["db"]) == Fraction(1, 2)


@pytest.mark.parametrize(("body", "code"), [
    ("staircase[1, 1.5] (size db)", "FZ202"),
    ("staircase[1, -0.1] (size db)", "FZ202"),
    ("staircase[0] (size db)", "FZ202"),
    ("staircase[-2] (size db)", "FZ202"),
    ("staircase[1, 0.5, 2] (size db)", "FZ208"),
    ("staircase[1] (counts (group[2] (fun p -> p.age) db))", "FZ201"),
    ("staircase[1] (size db > 3)", "FZ201"),
])
def test_bad_parameters_and_arguments_are_refused(body: str, code: str) -> None:
    assert _refusal(ROWS + f"def m (db : bag P) : fuzzy num = {body};\n").code == code


def test_a_parameter_epsilon_is_checked_at_each_call() -> None:
    checked = _check(ROWS + """
def lib (e : num) (db : bag P) : fuzzy num = staircase[e] (sum[0, 0.5] (map (fun p -> p.w) db));
def m (db : bag P) : fuzzy num = lib 3 db;
""")
    assert A.pure_epsilon(checked.definitions["m"].privacy["db"]) == 3


def test_the_word_is_a_name_elsewhere() -> None:
    _check(ROWS + "let staircase = 2;\ndef m (db : bag P) : fuzzy num = laplace[staircase] (size db);\n")


# ---------------------------------------------------------------- the accountant and the ledger


def test_the_event_is_pure_with_whole_steps() -> None:
    assert E.Staircase(Fraction(3, 2), Fraction(1)).epsilon == 2
    assert E.Staircase(Fraction(0), Fraction(5)).epsilon == 0
    assert A.tightest([E.Staircase(Fraction(1, 3), Fraction(2))], 0).epsilon == pytest.approx(2)
    two = (E.Staircase(Fraction(1), Fraction(1)), E.Staircase(Fraction(1, 2), Fraction(1)))
    assert A.tightest(list(two), 0).epsilon == pytest.approx(2)
    assert scale_event(E.Staircase(Fraction(1), Fraction(1)), Sens(Fraction(1, 2))).epsilon == 1
    assert events_from_json(events_to_json(two)) == two


def test_replace_one_doubles_the_shift() -> None:
    from fuzzpy.accounting.neighbours import REPLACE_ONE, resolve

    restated = resolve((E.Staircase(Fraction(1, 2), Fraction(1)),), REPLACE_ONE)
    assert sum(e.epsilon for e in restated) == 1  # ceil(2 x 1/2) steps


# ---------------------------------------------------------------- privacy, empirically


def _loss_lower_bound(first: np.ndarray, second: np.ndarray, edges: np.ndarray, alpha: float = 1e-3) -> float:
    """max over bins of log(P1 low / P2 high), Clopper-Pearson at alpha each."""
    n = len(first)
    best = 0.0
    c1, _ = np.histogram(first, edges)
    c2, _ = np.histogram(second, edges)
    for a, b in ((c1, c2), (c2, c1)):
        for ka, kb in zip(a.tolist(), b.tolist(), strict=True):
            if ka == 0:
                continue
            low = stats.beta.ppf(alpha, ka, n - ka + 1)
            high = stats.beta.ppf(1 - alpha, kb + 1, n - kb) if kb < n else 1.0
            best = max(best, math.log(low / high))
    return best


def _step_edges(gamma: float) -> np.ndarray:
    edges = sorted({k + sign * d for k in range(-3, 5) for sign in (1, -1) for d in (0.0, gamma)})
    return np.array([-1e9, *edges, 1e9])


def test_neighbouring_counts_show_a_loss_below_the_claim() -> None:
    """Counts 7 and 8 released at eps = 1: the step edges show a loss bound
    above half the claim (the test has power) and below it."""
    eps = Fraction(1)
    first = releases(Fraction(7), eps, None, 2500, 21) - 7
    second = releases(Fraction(8), eps, None, 2500, 22) - 7
    found = _loss_lower_bound(first, second, _step_edges(1 / (1 + math.exp(0.5))))
    assert 0.5 < found < float(A.tightest([E.Staircase(Fraction(1), eps)], 0).epsilon)


@pytest.mark.slow
def test_a_mis_scaled_staircase_shows_a_loss_above_the_claim() -> None:
    """Noise for eps = 3 claimed as eps = 1 is caught; eps = 1 noise is not."""
    n = 20000
    gamma3 = 1 / (1 + math.exp(1.5))
    wrong = _loss_lower_bound(releases(Fraction(0), Fraction(3), None, n, 23),
                              releases(Fraction(1), Fraction(3), None, n, 24), _step_edges(gamma3))
    right = _loss_lower_bound(releases(Fraction(0), Fraction(1), None, n, 25),
                              releases(Fraction(1), Fraction(1), None, n, 26), _step_edges(1 / (1 + math.exp(0.5))))
    assert wrong > 1 > right > 0.8


# ---------------------------------------------------------------- the point of the mechanism


def test_at_a_large_epsilon_the_staircase_errs_far_less_than_laplace() -> None:
    """E|X| at eps = 10: about e^-5 for the staircase (Geng & Viswanath:
    e^(eps/2) / (e^eps - 1)), 1/10 for Laplace; the second moment likewise
    far below Laplace's 2 / eps^2 (bench/staircase.py prints both by eps)."""
    draws = releases(Fraction(0), Fraction(10), None, 1500, 31)
    mean = float(np.mean(np.abs(draws)))
    assert mean < 0.3 * 0.1
    assert mean == pytest.approx(math.exp(5) / (math.exp(10) - 1), rel=0.5)
    assert float(np.mean(draws**2)) < 0.5 * 2 / 10**2  # Laplace's variance is 2 / eps^2


# ---------------------------------------------------------------- runs


@pytest.mark.slow
def test_the_example_runs_and_charges_whole_steps(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["run", str(ROOT / "examples" / "staircase_counts.fz"), "older_sum", "--data",
                 f"db={ROOT / 'examples' / 'data' / 'people.csv'}", "--budget", "20", "--ledger",
                 str(tmp_path / "l.sqlite"), "--dataset", "people", "--json", "--seed", "3"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["charged"]["exact"]["epsilon"] == "2"
    assert isinstance(doc["released"], float)


def test_run_refuses_an_epsilon_it_cannot_sample(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "big.fz"
    program.write_text(ROWS + "def m (db : bag P) : fuzzy num = staircase[5000] (size db);\n")
    data = tmp_path / "p.csv"
    data.write_text("age,w\n1,0.5\n")
    code = main(["run", str(program), "m", "--data", f"db={data}", "--budget", "10000",
                 "--ledger", str(tmp_path / "l.sqlite")])
    captured = capsys.readouterr()
    assert code != 0 and "FZ517" in captured.out + captured.err


def test_one_seed_moves_the_release_by_the_query_only() -> None:
    """The noise drawn does not depend on the value: with one seed the
    releases of 7 and 8 differ by 1 up to one grid unit."""
    a = staircase_release_one(7, Fraction(2), None, SeededSource(9))
    b = staircase_release_one(8, Fraction(2), None, SeededSource(9))
    assert abs(b - a - 1) <= Fraction(2) ** staircase_grid(Fraction(2)).exponent


@pytest.mark.slow
def test_an_audit_of_half_a_step_finds_a_whole_step_of_loss(capsys: pytest.CaptureFixture[str]) -> None:
    """`fuzzpy audit` on a query that moves by 1/2 at eps = 4: a loss above
    eps x 1/2 = 2 (what a Laplace-style eps s rule would claim) is found,
    and none above eps ceil(1/2) = 4, the checker's claim."""
    code = main(["audit", "--samples", "3000", "--seed", "1", "--json",
                 str(ROOT / "examples" / "staircase_counts.fz"), "half_step"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and not doc["leak"] and doc["claim"]["epsilon"] == 4
    assert doc["lower_bound"] > 2


# ---------------------------------------------------------------- accuracy


@pytest.mark.parametrize(("eps", "width", "inner"), [
    (Fraction(1, 2), 5, 2), (Fraction(3), 7, 1), (Fraction(1), 4, 0), (Fraction(2), 3, 3), (Fraction(1, 20), 6, 3),
])
@pytest.mark.parametrize("alpha", [Fraction(1, 2), Fraction(1, 20), Fraction(1, 1000)])
def test_the_interval_is_the_least_or_one_unit_more(eps: Fraction, width: int, inner: int, alpha: Fraction) -> None:
    from fuzzpy.runtime.staircase import tail_units

    pmf = discrete_pmf(float(eps), width, inner, 4000)
    tails, covered = [], pmf[0]
    for m in range(0, 3000):  # P(|N| > m)
        covered += 2 * pmf[m] if m > 0 else 0.0
        tails.append(1 - covered)
    least = min(m for m, t in enumerate(tails) if t <= float(alpha))
    found = tail_units(eps, StaircaseGrid(0, width, inner, Fraction(inner, width)), alpha)
    assert least <= found <= least + 1
    assert tails[found] <= float(alpha)


@pytest.mark.parametrize(("eps", "seed"), [(Fraction(1, 2), 41), (Fraction(4), 42)])
def test_interval_coverage_matches_its_level(eps: Fraction, seed: int) -> None:
    from fuzzpy.runtime.accuracy import NoiseNote, half_width, textbook_half_width

    grid = staircase_grid(eps)
    note = NoiseNote("staircase", eps, 1, grid.exponent, grid.inner)
    width = float(half_width(note, Fraction(9, 10)))
    assert width == pytest.approx(textbook_half_width(note, Fraction(9, 10)), rel=1e-6)
    draws = releases(Fraction(100), eps, None, 2000, seed) - 100
    inside = float(np.mean(np.abs(draws) <= width))
    assert 0.88 < inside < 0.92


@pytest.mark.slow
def test_run_prints_the_interval(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "one.fz"
    program.write_text(ROWS + "def m (db : bag P) : fuzzy num = staircase[4] (size db);\n")
    data = tmp_path / "p.csv"
    data.write_text("age,w\n1,0.5\n2,0.25\n")
    code = main(["run", str(program), "m", "--data", f"db={data}", "--budget", "10", "--json", "--seed", "1",
                 "--ledger", str(tmp_path / "l.sqlite")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    (accuracy,) = doc["accuracy"]
    assert accuracy["derived"] and accuracy["epsilon"] == 4
    assert accuracy["half_width"] == pytest.approx(0.7615, abs=1e-3)  # 2 a gamma + 2 a b (h - gamma) = 0.95


def test_budget_accounts_staircase_releases(capsys: pytest.CaptureFixture[str]) -> None:
    """Four releases at eps0 = 1/2 of a query moving by 3/2: two steps each."""
    code = main(["budget", "--staircase", "0.5", "--sensitivity", "1.5", "--rounds", "4", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["tightest"]["epsilon"] == pytest.approx(4.0) and "staircase" in doc["releases"]
