"""Integer releases of integer queries: `geometric[eps]` and `dgauss[sigma]`
(issue 29, items 1 and 5).

Checked from the outside, each against a computation written here rather
than the code's own: the samplers against their exact pmfs (chi-square on
seeded draws), the intervals against brute-force sums and against thousands
of seeded draws, the accountant's figures against the hockey-stick
divergence summed term by term in mpmath (CKS 2020, Thm 7, derived here
from the pmfs), the checker's rules on programs, `budget --accuracy` against
the interval it promises, and an empirical epsilon on neighbouring datasets.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from fuzzpy.accounting import accountant as A
from fuzzpy.accounting import events as E
from fuzzpy.accounting.neighbours import Neighbours
from fuzzpy.cli import main
from fuzzpy.ledger.event_codec import events_from_json, events_to_json
from fuzzpy.runtime.accuracy import (
    NoiseNote,
    dgauss_exact_units,
    geometric_units,
    half_width,
    noise_for_accuracy,
)
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.samplers import discrete_gaussian, geometric_noise

mpmath = pytest.importorskip("mpmath")
stats = pytest.importorskip("scipy.stats")

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- exact pmfs, written here


def geometric_pmf(eps: Fraction, z: int) -> float:
    q = math.exp(-float(eps))
    return (1 - q) / (1 + q) * q ** abs(z)


def dgauss_pmf_table(sigma: float, reach: int) -> dict[int, float]:
    """P(Z = z) for |z| <= reach, normalised over a window far wider than reach."""
    wide = reach + int(60 * sigma) + 60
    weights = {z: math.exp(-z * z / (2 * sigma * sigma)) for z in range(-wide, wide + 1)}
    total = math.fsum(weights.values())
    return {z: weights[z] / total for z in range(-reach, reach + 1)}


def chi_square_p(draws: list[int], pmf: dict[int, float]) -> float:
    """The chi-square p-value of integer draws against a pmf on the listed
    points (the rest of the mass one tail bin), bins merged to >= 5 expected."""
    n = len(draws)
    points = sorted(pmf)
    observed = [sum(1 for d in draws if d == z) for z in points]
    expected = [n * pmf[z] for z in points]
    observed.append(n - sum(observed))
    expected.append(max(n - sum(expected), 0.0))
    bins_o, bins_e, acc_o, acc_e = [], [], 0, 0.0
    for o, e in zip(observed, expected, strict=True):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= 5:
            bins_o.append(acc_o)
            bins_e.append(acc_e)
            acc_o, acc_e = 0, 0.0
    bins_o[-1] += acc_o
    bins_e[-1] += acc_e
    statistic = sum((o - e) ** 2 / e for o, e in zip(bins_o, bins_e, strict=True))
    return float(stats.chi2.sf(statistic, len(bins_o) - 1))


# ---------------------------------------------------------------- samplers


@pytest.mark.parametrize(("eps", "seed"), [(Fraction(7, 10), 1), (Fraction(3, 2), 2)])
def test_geometric_sampler_matches_its_pmf(eps: Fraction, seed: int) -> None:
    """eps = 3/2 takes the floor(X / n) path with n = 3 (CKS Alg. 2's two integers)."""
    draws = geometric_noise(eps, 6000, SeededSource(seed))
    reach = int(12 / float(eps))
    assert chi_square_p(draws, {z: geometric_pmf(eps, z) for z in range(-reach, reach + 1)}) > 1e-4
    assert all(isinstance(d, int) for d in draws)


@pytest.mark.slow
@pytest.mark.parametrize("eps", [Fraction(1, 20), Fraction(5), Fraction(13, 7)])
def test_geometric_sampler_matches_its_pmf_more(eps: Fraction) -> None:
    draws = geometric_noise(eps, 30000, SeededSource(11))
    reach = max(3, int(14 / float(eps)))
    assert chi_square_p(draws, {z: geometric_pmf(eps, z) for z in range(-reach, reach + 1)}) > 1e-4


@pytest.mark.parametrize(("sigma", "seed"), [(Fraction(3, 2), 3), (Fraction(1, 2), 4)])
def test_discrete_gaussian_sampler_matches_its_pmf(sigma: Fraction, seed: int) -> None:
    """Non-integer sigmas: the exact-rational path of CKS Algorithm 3."""
    draws = discrete_gaussian(sigma * sigma, 5000, SeededSource(seed))
    table = dgauss_pmf_table(float(sigma), int(8 * float(sigma)) + 2)
    assert chi_square_p(draws, table) > 1e-4


def test_a_mis_scaled_sampler_is_caught() -> None:
    """The frequency test has power: geometric draws at eps = 0.5 fail the pmf of eps = 0.6."""
    draws = geometric_noise(Fraction(1, 2), 6000, SeededSource(5))
    wrong = Fraction(3, 5)
    assert chi_square_p(draws, {z: geometric_pmf(wrong, z) for z in range(-20, 21)}) < 1e-6


# ---------------------------------------------------------------- intervals


def _geometric_least_k(eps: Fraction, alpha: Fraction) -> int:
    with mpmath.workprec(200):
        e = mpmath.mpf(eps.numerator) / eps.denominator
        q = mpmath.exp(-e)
        pmf = lambda z: (1 - q) / (1 + q) * q ** abs(z)  # noqa: E731
        a = mpmath.mpf(alpha.numerator) / alpha.denominator
        covered = pmf(0)
        k = 0
        while 1 - covered > a:  # P(|Z| > k) = 1 - P(|Z| <= k)
            k += 1
            covered += 2 * pmf(k)
        return k


@pytest.mark.parametrize("eps", [Fraction(1, 10), Fraction(1, 2), Fraction(2), Fraction(7)])
@pytest.mark.parametrize("confidence", [Fraction(1, 2), Fraction(9, 10), Fraction(95, 100), Fraction(999, 1000)])
def test_geometric_interval_is_the_least_integer(eps: Fraction, confidence: Fraction) -> None:
    assert geometric_units(eps, 1 - confidence) == _geometric_least_k(eps, 1 - confidence)


@pytest.mark.parametrize("sigma", [Fraction(1, 2), Fraction(3, 2), Fraction(4), pytest.param(Fraction(30), marks=pytest.mark.slow)])
@pytest.mark.parametrize("confidence", [Fraction(1, 2), Fraction(9, 10), Fraction(95, 100), Fraction(99, 100)])
def test_dgauss_interval_is_the_least_integer(sigma: Fraction, confidence: Fraction) -> None:
    table = dgauss_pmf_table(float(sigma), int(12 * float(sigma)) + 5)
    k = 0
    while 1 - math.fsum(table[z] for z in range(-k, k + 1)) > float(1 - confidence):
        k += 1
    found = dgauss_exact_units(sigma, float(1 - confidence))
    # the least k, or one more where the exact tail sits within the 1e-9 margin of alpha
    assert found in (k, k + 1)
    if found == k + 1:
        tail = 1 - math.fsum(table[z] for z in range(-k, k + 1))
        assert tail > float(1 - confidence) * (1 - 1e-8)


@pytest.mark.parametrize(("kind", "scale", "seed"), [("geometric", Fraction(3, 10), 7), ("dgauss", Fraction(3), 8)])
@pytest.mark.parametrize("confidence", [Fraction(9, 10), Fraction(95, 100)])
def test_interval_coverage_matches_its_level(kind: str, scale: Fraction, seed: int, confidence: Fraction) -> None:
    """Thousands of seeded draws: the empirical coverage is the exact P(|Z| <= k),
    which is at least the level and, one unit narrower, below it."""
    k = int(half_width(NoiseNote(kind, scale, 1), confidence))
    n = 4000
    draws = geometric_noise(scale, n, SeededSource(seed)) if kind == "geometric" else \
        discrete_gaussian(scale * scale, n, SeededSource(seed))
    if kind == "geometric":
        exact = lambda m: math.fsum(geometric_pmf(scale, z) for z in range(-m, m + 1))  # noqa: E731
    else:
        table = dgauss_pmf_table(float(scale), 60)
        exact = lambda m: math.fsum(table[z] for z in range(-m, m + 1))  # noqa: E731
    assert exact(k) >= float(confidence) > exact(k - 1)
    covered = sum(1 for d in draws if abs(d) <= k) / n
    assert abs(covered - exact(k)) <= 4 * math.sqrt(exact(k) * (1 - exact(k)) / n)


# ---------------------------------------------------------------- the accountant


def _dgauss_delta(sigma: Fraction, shift: int, eps: float) -> float:
    """sum_y max(P(y) - e^eps Q(y), 0) for P = N_Z(0, sigma^2), Q = N_Z(shift, sigma^2)."""
    with mpmath.workprec(160):
        s2 = mpmath.mpf(sigma.numerator) ** 2 / mpmath.mpf(sigma.denominator) ** 2
        reach = int(40 * float(sigma)) + 40
        f = lambda y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2))  # noqa: E731
        z = mpmath.fsum(f(y) for y in range(-reach, reach + 1))
        e = mpmath.exp(mpmath.mpf(eps))
        return float(mpmath.fsum(max(f(y) - e * f(y - shift), 0) for y in range(-reach, reach + 1)) / z)


@pytest.mark.parametrize("sigma", [Fraction(1, 2), pytest.param(Fraction(1), marks=pytest.mark.slow), Fraction(2),
                                   pytest.param(Fraction(7, 3), marks=pytest.mark.slow), Fraction(10)])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, pytest.param(1e-10, marks=pytest.mark.slow)])
def test_one_discrete_gaussian_is_charged_its_exact_profile(sigma: Fraction, delta: float) -> None:
    g = A.tightest([E.DiscreteGaussian(Fraction(1), sigma)], delta)
    assert g.method == "exact-dgauss" and g.proven
    assert _dgauss_delta(sigma, 1, g.epsilon) <= delta  # valid
    assert _dgauss_delta(sigma, 1, g.epsilon * (1 - 1e-3) - 1e-9) > delta  # and tight


def test_the_continuous_gaussian_figure_would_be_too_small() -> None:
    """At sigma = 2, delta = 1e-6 the discrete Gaussian's exact epsilon is
    above the continuous Gaussian's: charging the continuous figure (the
    `Gaussian` event) would understate the loss."""
    sigma, delta = Fraction(2), 1e-6
    continuous = A.tightest([E.Gaussian(Fraction(1), sigma)], delta).epsilon
    assert _dgauss_delta(sigma, 1, continuous) > delta
    charged = A.tightest([E.DiscreteGaussian(Fraction(1), sigma)], delta).epsilon
    assert charged > continuous


def test_a_sensitivity_of_two_takes_the_worse_shift() -> None:
    sigma, delta = Fraction(3), 1e-6
    g = A.tightest([E.DiscreteGaussian(Fraction(3, 2), sigma)], delta)  # integer shifts up to 2
    assert max(_dgauss_delta(sigma, d, g.epsilon) for d in (1, 2)) <= delta
    assert g.epsilon > A.tightest([E.DiscreteGaussian(Fraction(1), sigma)], delta).epsilon


@pytest.mark.parametrize("delta", [pytest.param(1e-3, marks=pytest.mark.slow), 1e-6])
def test_compositions_of_discrete_gaussians_hold(delta: float) -> None:
    """Ten releases: never the PLD of the continuous pair; the zCDP figure
    (rho = 10 / (2 sigma^2), CKS 2020) converted, which holds."""
    events = [E.Repeat(10, (E.DiscreteGaussian(Fraction(1), Fraction(4)),))]
    g = A.tightest(events, delta)
    assert math.isfinite(g.epsilon) and g.method not in ("pld", "exact-gaussian", "exact-mixture")
    assert A.rho(events) == Fraction(10, 32)
    assert all(x.method != "pld" for x in A.guarantees(events, delta))


def test_geometric_is_charged_as_randomized_response() -> None:
    """The discrete Laplace at unit sensitivity has loss +-eps, the
    randomized-response pair: delta(e) = (1 - e^(e - eps)) / (1 + e^-eps),
    above the continuous Laplace's. Its figure must be at least that."""
    eps, delta = 1.0, 1e-2
    exact = eps + math.log1p(-delta * (1 + math.exp(-eps)))
    g = A.tightest([E.Geometric(Fraction(1), Fraction(1))], delta)
    assert g.epsilon >= exact and g.epsilon == pytest.approx(exact, rel=1e-9)
    laplace = A.tightest([E.Laplace(Fraction(1), Fraction(1))], delta).epsilon
    assert laplace < exact  # the figure a Laplace event would have charged: too small
    assert A.tightest([E.Geometric(Fraction(3), Fraction(2))], 0).epsilon == 1.5  # pure eps x s


def test_events_round_trip_and_restate_for_replace_one() -> None:
    events = (E.Geometric(Fraction(1), Fraction(2)), E.DiscreteGaussian(Fraction(1), Fraction(5, 2)))
    assert events_from_json(events_to_json(events)) == events
    restated = Neighbours("replace-one").resolve(events)
    assert restated == (E.Geometric(Fraction(2), Fraction(2)), E.DiscreteGaussian(Fraction(2), Fraction(5, 2)))


def test_a_subsampled_discrete_gaussian_is_amplified_not_continuous() -> None:
    plain = A.tightest([E.DiscreteGaussian(Fraction(1), Fraction(2))], 1e-6).epsilon
    sampled = A.tightest([E.Subsample(Fraction(1, 10), (E.DiscreteGaussian(Fraction(1), Fraction(2)),))], 1e-6)
    assert math.isfinite(sampled.epsilon) and sampled.epsilon < plain


# ---------------------------------------------------------------- the checker


def _check(source: str) -> Any:
    from fuzzpy.checker import check_program
    from fuzzpy.frontend.parser import parse_program

    return check_program(parse_program(source, "<int>"))


def _refusal(source: str) -> Any:
    from fuzzpy.language.diagnostics import FuzzError

    with pytest.raises(FuzzError) as caught:
        _check(source)
    return caught.value.diagnostics[0]


ROWS = "type P = { age : int, w : num };\n"


def test_an_int_count_gets_integer_noise_and_its_events() -> None:
    checked = _check(ROWS + """
def g (db : bag P) : fuzzy int = geometric[1/4] (2 * size db);
def d (db : bag P) : fuzzy int = dgauss[3] (sum[-1, 2] (map (fun p -> p.age) db));
""")
    assert checked.definitions["g"].privacy["db"] == (E.Geometric(Fraction(2), Fraction(4)),)
    # add/remove: max(|-1|, |2|) = 2; a replaced row moves the clamped sum by the width 3
    assert checked.definitions["d"].privacy["db"] == (E.DiscreteGaussian(Fraction(2), Fraction(3), replaced=Fraction(3)),)


@pytest.mark.parametrize(("body", "hint"), [
    ("geometric[1] (sum[0, 1] (map (fun p -> p.w) db))", "laplace"),
    ("dgauss[1] (sum[0, 2.5] (map (fun p -> p.age) db))", "gauss"),
    ("geometric[1] (counts (group[2] (fun p -> p.age) db))", "laplace"),
    ("dgauss[2] ((size db) / 2)", "gauss"),
])
def test_a_non_integer_argument_is_refused_with_a_hint(body: str, hint: str) -> None:
    diagnostic = _refusal(ROWS + f"def m (db : bag P) : fuzzy int = {body};\n")
    assert diagnostic.code == "FZ201" and hint in (diagnostic.hint or "")


def test_the_result_is_a_fuzzy_int() -> None:
    diagnostic = _refusal(ROWS + "def m (db : bag P) : fuzzy bool = geometric[1] (size db);\n")
    assert diagnostic.code.startswith("FZ2")


def test_a_static_parameter_epsilon_is_checked_at_each_call() -> None:
    checked = _check(ROWS + """
def lib (e : num) (db : bag P) : fuzzy int = geometric[e / 2] (size db);
def m (db : bag P) : fuzzy int = lib 1 db;
""")
    from fuzzpy.accounting.accountant import pure_epsilon

    assert pure_epsilon(checked.definitions["m"].privacy["db"]) == Fraction(1, 2)


def test_the_new_words_remain_names_elsewhere() -> None:
    _check(ROWS + "let geometric = 3;\ndef m (db : bag P) : fuzzy int = dgauss[geometric] (size db);\n")


# ---------------------------------------------------------------- runs


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, definition: str, *extra: str) -> dict[str, Any]:
    code = main(["run", str(ROOT / "examples" / "integer_counts.fz"), definition, "--data",
                 f"db={ROOT / 'examples' / 'data' / 'people.csv'}", "--budget", "20,1e-3", "--ledger",
                 str(tmp_path / "l.sqlite"), "--dataset", "people", "--json", "--seed", "3", *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_the_example_releases_integers_with_exact_intervals(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    doc = _run(capsys, tmp_path, "counts")
    married, total = doc["released"]
    assert isinstance(married, int) and isinstance(total, int)
    first, second = doc["accuracy"]
    assert first["noise"] == "geometric" and first["half_width"] == geometric_units(Fraction(1, 2), Fraction(1, 20))
    assert second["noise"] == "dgauss" and second["half_width"] == dgauss_exact_units(Fraction(8), 0.05)
    assert doc["charged"]["delta"] > 0 and doc["charged"]["epsilon"] > 0.5


def test_the_example_gives_the_same_release_on_duckdb(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    memory = _run(capsys, tmp_path, "noisy_older")["released"]
    duck = _run(capsys, tmp_path, "noisy_older", "--engine", "duckdb")["released"]
    assert memory == duck and isinstance(duck, int)


# ---------------------------------------------------------------- budget --accuracy


@pytest.mark.parametrize("kind", ["laplace", "gauss", "geometric", "dgauss"])
@pytest.mark.parametrize(("accuracy", "confidence"), [(Fraction(5), Fraction(95, 100)), (Fraction(120), Fraction(99, 100))])
def test_noise_for_accuracy_achieves_it_and_is_the_most_private(kind: str, accuracy: Fraction,
                                                                confidence: Fraction) -> None:
    from fuzzpy.runtime.accuracy import scalar_note

    choice = noise_for_accuracy(kind, accuracy, confidence)
    assert half_width(scalar_note(kind, choice.parameter), confidence) <= accuracy
    # one unit of the 6th digit toward more noise no longer achieves it
    unit = Fraction(10) ** (math.floor(math.log10(choice.parameter)) - 5)
    more_noise = choice.parameter - unit if kind in ("laplace", "geometric") else choice.parameter + unit
    assert half_width(scalar_note(kind, more_noise), confidence) > accuracy


def test_budget_accuracy_prints_the_noise_and_its_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["budget", "--accuracy", "5", "--geometric"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("geometric[0.538175]: +/- 5 at 95%") and "0.538175-DP" in out
    assert main(["budget", "--accuracy", "5", "--dgauss", "--confidence", "0.9", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["half_width"] <= 5 and doc["guarantee"]["method"] == "exact-dgauss"


@pytest.mark.parametrize("argv", [["--geometric"], ["--accuracy", "5"], ["--accuracy", "5", "--geometric", "1"],
                                  ["--accuracy", "5", "--laplace", "--dgauss"], ["--confidence", "0.9", "--laplace", "1"]])
def test_budget_accuracy_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(["budget", *argv]) == 2
    assert "FZ703" in capsys.readouterr().err


def test_budget_integer_releases(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["budget", "--geometric", "0.5", "--rounds", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tightest"]["epsilon"] == 1.5
    assert main(["budget", "--dgauss", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tightest"]["method"] == "exact-dgauss"


# ---------------------------------------------------------------- an empirical epsilon on neighbours


def _lower_bound(first: list[int], second: list[int], delta: float = 0.0, alpha: float = 5e-4) -> float:
    """max over events {X <= t} and {X >= t} of ln((lower(P1) - delta) / upper(P2)), Clopper-Pearson."""
    n = len(first)
    best = -math.inf
    for t in range(min(first + second), max(first + second) + 1):
        for inside in (lambda x, t=t: x <= t, lambda x, t=t: x >= t):
            for a, b in ((first, second), (second, first)):
                ka, kb = sum(1 for x in a if inside(x)), sum(1 for x in b if inside(x))
                low = stats.beta.ppf(alpha, ka, n - ka + 1) if ka else 0.0
                high = stats.beta.ppf(1 - alpha, kb + 1, n - kb) if kb < n else 1.0
                if low - delta > 0 and high > 0:
                    best = max(best, math.log((low - delta) / high))
    return best


def _releases(kind: str, scale: Fraction, count: int, n: int, seed: int) -> list[int]:
    source = SeededSource(seed)
    if kind == "geometric":
        return [count + z for z in geometric_noise(scale, n, source)]
    return [count + z for z in discrete_gaussian(scale * scale, n, source)]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "scale"), [("geometric", Fraction(1)), ("dgauss", Fraction(1))])
def test_empirical_epsilon_is_below_the_claim(kind: str, scale: Fraction) -> None:
    """Counts 7 and 8 (one person more): the lower bound on the loss stays
    below what the accountant charges; noise for four times the epsilon (a
    mis-scaled release) shows a loss above it."""
    n = 20000
    delta = 1e-6 if kind == "dgauss" else 0.0
    event = E.Geometric(Fraction(1), 1 / scale) if kind == "geometric" else E.DiscreteGaussian(Fraction(1), scale)
    claim = A.tightest([event], delta).epsilon
    first, second = _releases(kind, scale, 7, n, 1), _releases(kind, scale, 8, n, 2)
    assert _lower_bound(first, second, delta) < claim
    wrong = scale * 4 if kind == "geometric" else scale / 4
    first, second = _releases(kind, wrong, 7, n, 3), _releases(kind, wrong, 8, n, 4)
    assert _lower_bound(first, second, delta) > claim


def test_empirical_epsilon_of_geometric_is_near_its_claim() -> None:
    """A quick form (default suite): at eps = 1/2 the events {X <= 7} show a
    loss bound below the claim and above half of it (the test has power)."""
    n = 3000
    first, second = _releases("geometric", Fraction(1, 2), 7, n, 5), _releases("geometric", Fraction(1, 2), 8, n, 6)
    found = _lower_bound(first, second, alpha=1e-3)
    assert 0.2 < found < 0.5
