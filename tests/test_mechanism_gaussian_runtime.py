"""`gauss(sigma)` draws in a `mechanism`, run (issue 29 item 4).

The runtime draws them exactly as lazy reals (`fuzzpy.runtime.lazy_reals.GaussDraw`:
V1 sqrt(2E / S) from a lazy uniform point of the unit disk and an exact Exp(1)),
so comparisons are decided exactly and a released number is the double nearest the
exact value. Checked here as a stranger would: against scipy's normal law (KS and a
chi-square on equiprobable cells), against the closed-form probabilities of a noisy
max (numerical integration, not a sampler), and against the identities an exact
real obeys (x - x is 0, a comparison agrees with the values it compares).
The statistical tests are `slow` (CI's second job).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl, Program
from fuzzpy.runtime import lazy_reals as R
from fuzzpy.runtime.interpreter import Interpreter
from fuzzpy.runtime.mechanisms import run_mechanism
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import RuntimeFailure

GAUSSIAN = Path(__file__).resolve().parent.parent / "examples" / "mechanisms" / "gaussian"


def _mechanism(text: str) -> tuple[MechanismDecl, Program]:
    program = parse_program(text, "m.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return decl, program


def _from_file(name: str) -> tuple[MechanismDecl, Program]:
    return _mechanism((GAUSSIAN / f"{name}.fz").read_text())


RELEASE = """mechanism shifted (x : num, sigma : num) : num
  requires sigma >= 1
  privacy (1, 1/2)
{
  return x + gauss(sigma);
}
"""


# ---------------------------------------------------------------- exactness, fast


def test_a_gaussian_draw_is_an_exact_real_not_a_refusal() -> None:
    source = SeededSource(41)
    x = R.draw("gauss", Fraction(5, 3), source)
    assert isinstance(x, R.Noisy)
    assert R.add(x, x, -1) == 0  # the same polynomial: exactly zero, no float residue
    assert R.compare("==", x, x) and not R.compare("==", x, R.add(x, Fraction(1, 10**30)))
    # a shift far below a double's resolution is still seen by the exact comparison
    assert R.compare("<", x, R.add(x, Fraction(1, 10**40)))


def test_comparisons_agree_with_the_released_doubles() -> None:
    source = SeededSource(5)
    draws = [R.draw("gauss", Fraction(2), source) for _ in range(40)]
    floats = [R.to_float(d) for d in draws]  # type: ignore[arg-type]
    for a, b, fa, fb in zip(draws, draws[1:], floats, floats[1:], strict=False):
        if fa != fb:
            assert R.compare("<", a, b) == (fa < fb)


def test_a_scale_that_is_not_positive_and_an_unknown_draw_are_refused() -> None:
    with pytest.raises(RuntimeFailure) as bad_scale:
        R.draw("gauss", Fraction(0), SeededSource(1))
    assert bad_scale.value.code == "FZ517"
    with pytest.raises(RuntimeFailure) as unknown:
        R.draw("cauchy", Fraction(1), SeededSource(1))  # never another law in its place
    assert unknown.value.code == "FZ527"


def test_the_noisy_max_runs_and_a_seed_repeats_it() -> None:
    decl, program = _from_file("gauss_report_noisy_max")
    q = [3, 140, 2, 9]  # one answer far above the others: sigma = 8 rarely hides it

    def runs(seed: int) -> list[object]:
        interp = Interpreter(program, SeededSource(seed))
        return [run_mechanism(decl, (q, 8), interp) for _ in range(30)]

    first = runs(11)
    assert first == runs(11)
    assert set(first) <= {0, 1, 2, 3} and first.count(1) >= 28


def test_above_threshold_runs_on_a_vector_longer_than_one() -> None:
    decl, program = _from_file("gauss_above_threshold")
    interp = Interpreter(program, SeededSource(3))
    outs = [run_mechanism(decl, ([-500, -500, 500], 0, 8), interp) for _ in range(20)]
    assert outs == [2] * 20


# ---------------------------------------------------------------- distribution, slow


@pytest.mark.slow  # 12,000 exact draws: seconds
def test_a_released_gaussian_has_the_normal_law_ks_and_chi_square() -> None:
    decl, program = _mechanism(RELEASE)
    x, sigma = Fraction(-7, 3), Fraction(5, 2)
    interp = Interpreter(program, SeededSource(20261129))
    values = np.array([run_mechanism(decl, (x, sigma), interp) for _ in range(12_000)], dtype=float)
    z = (values - float(x)) / float(sigma)
    assert stats.kstest(z, "norm").pvalue > 1e-4
    cells = 24  # equiprobable under N(0, 1)
    edges = stats.norm.ppf(np.linspace(0, 1, cells + 1)[1:-1])
    counts = np.bincount(np.searchsorted(edges, z), minlength=cells)
    assert stats.chisquare(counts).pvalue > 1e-4
    # the tails too: P(|Z| > 3) = 0.0027 (about 32 of 12,000)
    assert 10 <= int(np.sum(np.abs(z) > 3)) <= 60


def _noisy_max_law(q: list[float], sigma: float) -> list[float]:
    """P[argmax_i q_i + N(0, sigma^2) = i], by quadrature: the integral over x of
    phi(x) prod_{j != i} Phi(x + (q_i - q_j) / sigma)."""
    law = []
    for i, qi in enumerate(q):
        def density(x: float, qi: float = qi, i: int = i) -> float:
            p = stats.norm.pdf(x)
            for j, qj in enumerate(q):
                if j != i:
                    p *= stats.norm.cdf(x + (qi - qj) / sigma)
            return float(p)
        law.append(integrate.quad(density, -12, 12, limit=200)[0])
    return law


@pytest.mark.slow  # 6,000 exact runs of the noisy max: seconds
def test_the_noisy_max_reports_each_index_with_its_exact_probability() -> None:
    decl, program = _from_file("gauss_report_noisy_max")
    q, sigma = [0, 4, 8, -3, 6], 8
    law = _noisy_max_law([float(v) for v in q], float(sigma))
    assert math.isclose(sum(law), 1.0, abs_tol=1e-6)
    interp = Interpreter(program, SeededSource(7))
    n = 6_000
    outs = [run_mechanism(decl, (q, sigma), interp) for _ in range(n)]
    counts = np.bincount(np.array(outs, dtype=int), minlength=len(q))
    assert stats.chisquare(counts, np.array(law) * n).pvalue > 1e-4


@pytest.mark.slow  # 4,000 exact runs of AboveThreshold: seconds
def test_above_threshold_answers_with_its_exact_probabilities() -> None:
    """One query: out = 0 iff q + N1 >= t + N0, i.e. N1 - N0 >= t - q with N1 - N0 ~ N(0, 2 sigma^2)."""
    decl, program = _from_file("gauss_above_threshold")
    q, t, sigma = 3, 10, 8
    p_yes = float(stats.norm.sf((t - q) / (sigma * math.sqrt(2))))
    interp = Interpreter(program, SeededSource(13))
    n = 4_000
    yes = sum(run_mechanism(decl, ([q], t, sigma), interp) == 0 for _ in range(n))
    assert stats.binomtest(yes, n, p_yes).pvalue > 1e-4


def test_the_audit_runs_a_gaussian_mechanism_against_its_eps_and_delta() -> None:
    """`fuzzpy audit` samples `gauss` with the grid's discrete Gaussian and bounds eps at the
    claim's delta (not at delta 0, where an (eps, delta) claim may rightly be exceeded)."""
    from fuzzpy.runtime.audit import audit_mechanism

    _decl, program = _from_file("gauss_report_noisy_max")
    result = audit_mechanism(program, "gauss_report_noisy_max", samples=4_000, pilot=2_000, seed=2, lengths=(2,))
    assert result.delta == pytest.approx(0.0004)
    assert result.lower <= result.claim == 1.0
