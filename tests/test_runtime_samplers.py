"""The exact samplers match their distributions, and grid releases have no holes.

Goodness of fit: chi-square tests at level alpha = 1e-4 on seeded draws (the
seeds are fixed, so each test is deterministic; the level says how unlikely a
failure of a correct sampler would be for a random seed).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fuzzpy.runtime.expmech import exponential_mechanism
from fuzzpy.runtime.noise import (
    SLACK,
    _grid_units,
    gauss_release,
    grid_exponent,
    lap_draw,
    laplace_release,
)
from fuzzpy.runtime.randomness import SecureSource, SeededSource
from fuzzpy.runtime.samplers import (
    bernoulli,
    bernoulli_exp,
    bernoulli_exp_fraction,
    discrete_gaussian,
    discrete_laplace,
    geometric,
)

ALPHA = 1e-4


def _chi_square_pvalue(observed: np.ndarray, expected_probs: np.ndarray) -> float:
    """Pearson chi-square, pooling the tail cells into the last one."""
    n = observed.sum()
    expected = expected_probs * n
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], n - expected[keep].sum())
    if exp[-1] < 5:
        obs[-2] += obs[-1]
        exp[-2] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    return float(stats.chisquare(obs, exp).pvalue)


def _discrete_laplace_pmf(z: np.ndarray, t: int) -> np.ndarray:
    q = math.exp(-1 / t)
    return (1 - q) / (1 + q) * q ** np.abs(z)


@pytest.mark.parametrize("t", [1, 3, 10])
def test_discrete_laplace_matches_pmf(t: int) -> None:
    draws = discrete_laplace(t, 100_000, SeededSource(11 + t))
    support = np.arange(-12 * t, 12 * t + 1)
    observed = np.array([np.count_nonzero(draws == z) for z in support])
    assert observed.sum() >= 99_990  # nearly everything falls in +-12t
    probs = _discrete_laplace_pmf(support, t)
    assert _chi_square_pvalue(observed, probs / probs.sum()) > ALPHA


@pytest.mark.parametrize("sigma2", [Fraction(1), Fraction(9, 2), Fraction(16)])
def test_discrete_gaussian_matches_pmf(sigma2: Fraction) -> None:
    draws = np.array(discrete_gaussian(sigma2, 20_000, SeededSource(5)))
    sigma = math.sqrt(sigma2)
    support = np.arange(-int(8 * sigma) - 1, int(8 * sigma) + 2)
    weights = np.exp(-(support.astype(float) ** 2) / (2 * float(sigma2)))
    observed = np.array([np.count_nonzero(draws == z) for z in support])
    assert observed.sum() == draws.size
    assert _chi_square_pvalue(observed, weights / weights.sum()) > ALPHA


def test_geometric_matches_pmf() -> None:
    t = 4
    draws = geometric(t, 50_000, SeededSource(3))
    assert draws.min() >= 0
    support = np.arange(0, 15 * t)
    q = math.exp(-1 / t)
    probs = (1 - q) * q**support
    observed = np.array([np.count_nonzero(draws == x) for x in support])
    assert _chi_square_pvalue(observed, probs) > ALPHA


@pytest.mark.parametrize(("num", "den"), [(0, 1), (1, 3), (1, 1), (5, 2), (7, 3)])
def test_bernoulli_exp_frequency(num: int, den: int) -> None:
    n = 40_000
    hits = int(bernoulli_exp(np.full(n, num), den, SeededSource(num * 10 + den)).sum())
    p = math.exp(-num / den)
    assert stats.binomtest(hits, n, p).pvalue > ALPHA


def test_bernoulli_exp_fraction_frequency() -> None:
    source = SeededSource(8)
    gamma = Fraction(3, 7) + 2
    hits = sum(bernoulli_exp_fraction(gamma, source) for _ in range(20_000))
    assert stats.binomtest(hits, 20_000, math.exp(-float(gamma))).pvalue > ALPHA


def test_bernoulli_rational_frequency() -> None:
    hits = int(bernoulli(Fraction(3, 10), 50_000, SeededSource(2)).sum())
    assert stats.binomtest(hits, 50_000, 0.3).pvalue > ALPHA


def test_exponential_mechanism_matches_distribution() -> None:
    scores = [0.0, 1.0, 2.5, 2.5, -3.0]
    eps = Fraction(1)
    source = SeededSource(4)
    counts = np.bincount([exponential_mechanism(scores, eps, source) for _ in range(20_000)], minlength=5)
    weights = np.exp(np.array(scores) * float(eps) / 2)
    assert _chi_square_pvalue(counts, weights / weights.sum()) > ALPHA


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.integers(1, 2**61), st.integers(1, 200), st.integers(0, 2**32))
def test_uniform_below_stays_in_range(bound: int, count: int, seed: int) -> None:
    draws = SeededSource(seed).below(bound, count)
    assert draws.shape == (count,)
    assert draws.min() >= 0 and draws.max() < bound


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.integers(1, 10**40), st.integers(0, 2**32))
def test_big_uniform_below_stays_in_range(bound: int, seed: int) -> None:
    assert 0 <= SeededSource(seed).big_below(bound) < bound


def test_secure_source_is_private_and_seeded_is_not() -> None:
    assert SecureSource().private and not SeededSource(1).private
    assert SecureSource().below(10, 1000).max() < 10


# ---------------------------------------------------------------- no holes


_finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(x=_finite, shift=st.floats(0, 1), eps=st.sampled_from(["0.1", "0.5", "1", "3"]), seed=st.integers(0, 2**32))
def test_every_output_of_one_database_is_possible_on_its_neighbour(
    x: float, shift: float, eps: str, seed: int
) -> None:
    """The release lands on the grid g Z whatever the input (so no output is
    impossible under a neighbour: Mironov's attack finds no hole), and its
    probability under x and under x' = x + shift (|shift| <= s = 1) differ by
    at most the factor exp(eps * s), computed exactly from the pmf."""
    scale = 1 / Fraction(eps)
    e = grid_exponent(scale, 1)
    t = _grid_units(scale / Fraction(2) ** e)
    y = float(laplace_release(np.array(x), scale, SeededSource(seed)))
    units = Fraction(y) / Fraction(2) ** e
    assert units.denominator == 1  # on the grid: reachable from every input
    neighbour = x + shift
    steps = [abs(units - round(Fraction(v) / Fraction(2) ** e)) for v in (x, neighbour)]
    log_ratio = abs(steps[0] - steps[1]) / Fraction(t)  # pmf ratio is exp(-(d0 - d1)/t)
    assert log_ratio <= Fraction(eps) * 1  # sensitivity 1 >= |x - x'|


def test_grid_slack_makes_noise_no_narrower_than_asked() -> None:
    for b in [Fraction(1, 3), Fraction(10), Fraction(7, 1000)]:
        e = grid_exponent(b, 1)
        t = _grid_units(b / Fraction(2) ** e)
        assert Fraction(t) * Fraction(2) ** e >= b * (1 + SLACK)


def test_integer_releases_scale_and_spread() -> None:
    values = np.arange(200_000, dtype=np.int64) * 0
    noisy = laplace_release(values, Fraction(2), SeededSource(9)).astype(np.float64)  # exact values, printed
    assert abs(np.mean(np.abs(noisy)) - 2) < 0.05  # E|Lap(b)| = b
    assert abs(np.median(noisy)) < 0.05


def test_mechanism_draw_has_the_laplace_spread() -> None:
    source = SeededSource(12)
    draws = np.array([lap_draw(Fraction(3), source) for _ in range(4000)])
    assert abs(np.mean(np.abs(draws)) - 3) < 0.25


@pytest.mark.parametrize("t", [2, 7])
def test_one_at_a_time_paths_match_the_pmf(t: int) -> None:
    """Small requests take the Python-integer path: it must match as well."""
    source = SeededSource(21 + t)
    draws = np.concatenate([discrete_laplace(t, 5, source) for _ in range(6000)])
    support = np.arange(-12 * t, 12 * t + 1)
    observed = np.array([np.count_nonzero(draws == z) for z in support])
    probs = _discrete_laplace_pmf(support, t)
    assert _chi_square_pvalue(observed, probs / probs.sum()) > ALPHA
    one_sided = np.concatenate([geometric(t, 5, source) for _ in range(4000)])
    q = math.exp(-1 / t)
    support = np.arange(0, 15 * t)
    observed = np.array([np.count_nonzero(one_sided == x) for x in support])
    assert _chi_square_pvalue(observed, (1 - q) * q**support) > ALPHA


@settings(max_examples=30, deadline=None, derandomize=True)
@given(x=_finite, sigma=st.sampled_from(["0.5", "3", "100"]), seed=st.integers(0, 2**32))
def test_gaussian_releases_land_on_a_grid_fixed_by_sigma(x: float, sigma: str, seed: int) -> None:
    """Every output is a multiple of the grid g (fixed by sigma and the
    dimension, not the data); the discrete Gaussian charges every grid point,
    so whatever one database produces, its neighbour can produce too."""
    e = grid_exponent(Fraction(sigma), 1)
    y = float(gauss_release(np.array([x]), Fraction(sigma), SeededSource(seed))[0])
    assert (Fraction(y) / Fraction(2) ** e).denominator == 1
