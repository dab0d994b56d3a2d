"""The accountant against exact, independently computed reference values:
the analytic Gaussian with sigma / sqrt(k), and the Kairouz-Oh-Viswanath
optimum for k-fold pure DP (checked against brute-force enumeration)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from fuzzpy.accounting import composition, discrete
from fuzzpy.accounting.accountant import guarantees, tightest
from fuzzpy.accounting.events import ExpMech, Gaussian, Laplace, Repeat, Verified

# ---------------------------------------------------------------- Gaussian


def reference_gaussian_epsilon(sigma: float, k: int, delta: float) -> float:
    """Balle & Wang 2018, Thm 8, at mu = sqrt(k) / sigma, with plain scipy
    (no log space) and a bisection of its own."""
    mu = math.sqrt(k) / sigma

    def gap(eps: float) -> float:
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta

    return brentq(gap, 0.0, 200.0, xtol=1e-13)


GAUSSIAN_CASES = [
    (1.0, 1, 1e-5),
    (2.0, 10, 1e-6),
    (5.0, 100, 1e-5),
    (10.0, 1000, 1e-7),
    (0.7, 3, 1e-3),
]


@pytest.mark.parametrize(("sigma", "k", "delta"), GAUSSIAN_CASES)
def test_k_fold_gaussian_is_the_analytic_formula_at_sigma_over_root_k(sigma, k, delta):
    found = tightest([Repeat(k, (Gaussian(Fraction(1), Fraction(sigma)),))], delta)
    expected = reference_gaussian_epsilon(sigma, k, delta)
    assert found.method == "exact-gaussian"
    assert found.epsilon >= expected - 1e-9
    assert found.epsilon == pytest.approx(expected, rel=1e-8, abs=1e-9)


@pytest.mark.parametrize(("sigma", "k", "delta"), GAUSSIAN_CASES)
def test_every_method_is_at_least_the_exact_gaussian_value(sigma, k, delta):
    events = [Repeat(k, (Gaussian(Fraction(1), Fraction(sigma)),))]
    exact = reference_gaussian_epsilon(sigma, k, delta)
    found = guarantees(events, delta)
    assert {g.method for g in found} >= {
        "exact-gaussian",
        "pld",
        "rdp",
        "zcdp",
        "zcdp-cks",
        "basic",
    }
    for g in found:
        assert g.epsilon >= exact - 1e-9, g.method


def test_heterogeneous_gaussians_compose_exactly():
    # sensitivities 1, 2 at sigmas 2, 4 and 3 rounds at sigma 6: mu^2 = 1/4 + 1/4 + 3/36
    events = [
        Gaussian(Fraction(1), Fraction(2)),
        Gaussian(Fraction(2), Fraction(4)),
        Repeat(3, (Gaussian(Fraction(1), Fraction(6)),)),
    ]
    mu = math.sqrt(1 / 4 + 1 / 4 + 3 / 36)
    expected = reference_gaussian_epsilon(1 / mu, 1, 1e-6)
    assert tightest(events, 1e-6).epsilon == pytest.approx(expected, rel=1e-8)


# ---------------------------------------------------------------- KOV


def kov_published_points(eps0: float, k: int) -> list[tuple[float, float]]:
    """Kairouz, Oh & Viswanath 2015, Thm 3.3 (delta0 = 0): the composition is
    ((k - 2i) eps0, delta_i)-DP with delta_i =
    sum_{l<i} C(k,l) (e^{(k-l) eps0} - e^{(k-2i+l) eps0}) / (1 + e^eps0)^k."""
    points = []
    for i in range(k // 2 + 1):
        total = sum(
            math.comb(k, l) * (math.exp((k - l) * eps0) - math.exp((k - 2 * i + l) * eps0))
            for l in range(i)  # noqa: E741 (the paper's index)
        )
        points.append(((k - 2 * i) * eps0, total / (1 + math.exp(eps0)) ** k))
    return points


def brute_force_delta(eps0: float, k: int, eps: float) -> float:
    """Hockey-stick divergence of k-fold randomized response by enumerating
    all 2^k outcomes."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    total = 0.0
    for outcome in itertools.product((1, -1), repeat=k):
        prob = math.prod(p if s == 1 else 1 - p for s in outcome)
        loss = eps0 * sum(outcome)
        total += prob * max(0.0, 1 - math.exp(eps - loss))
    return total


@pytest.mark.parametrize(("eps0", "k"), [(0.1, 2), (0.5, 3), (1.0, 5), (0.3, 8), (2.0, 4)])
def test_kov_matches_the_published_points(eps0, k):
    for eps_i, delta_i in kov_published_points(eps0, k):
        if delta_i <= 0 or eps_i <= 0:
            continue
        found = composition.kov_epsilon(eps0, 0.0, k, delta_i * (1 + 1e-12))
        assert found == pytest.approx(eps_i, abs=1e-9)


@pytest.mark.parametrize(("eps0", "k"), [(0.2, 6), (0.7, 5), (1.5, 3)])
def test_kov_between_the_points_matches_brute_force(eps0, k):
    for delta in (1e-1, 3e-2, 1e-3):
        eps = composition.kov_epsilon(eps0, 0.0, k, delta)
        assert brute_force_delta(eps0, k, eps) <= delta * (1 + 1e-9)
        if eps > 1e-6:  # and it is the smallest such eps
            assert brute_force_delta(eps0, k, eps - 1e-6) > delta


def test_kov_with_delta0_uses_the_published_correction():
    eps0, delta0, k, delta = 0.5, 1e-7, 6, 1e-3
    eps = composition.kov_epsilon(eps0, delta0, k, delta)
    inner = brute_force_delta(eps0, k, eps)
    assert 1 - (1 - delta0) ** k * (1 - inner) <= delta * (1 + 1e-9)


def test_k_fold_pure_events_never_beat_kov():
    # a verified pure mechanism's worst case is randomized response: KOV is exact
    events = [Repeat(50, (Verified("m", Fraction(1, 4)),))]
    exact = composition.kov_epsilon(0.25, 0.0, 50, 1e-6)
    found = guarantees(events, 1e-6)
    assert tightest(events, 1e-6).epsilon == pytest.approx(exact, rel=1e-9)
    for g in found:
        assert g.epsilon >= exact - 1e-9, g.method


def test_discrete_epsilon_solves_the_hockey_stick_exactly():
    losses = np.array([-1.0, 0.5, 2.0])
    masses = np.array([0.2, 0.5, 0.3])
    eps = discrete.epsilon_for_delta(losses, masses, 0.01, 0.1)
    assert discrete.delta_for_epsilon(losses, masses, 0.01, eps) == pytest.approx(0.1, rel=1e-9)
    assert discrete.delta_for_epsilon(losses, masses, 0.01, eps) <= 0.1 + 1e-15


# ---------------------------------------------------------------- pure and mixed


def test_pure_laplace_composition_bounds():
    events = [Repeat(100, (Laplace(Fraction(1), Fraction(2)),))]
    best = tightest(events, 1e-6)
    kov = composition.kov_epsilon(0.5, 0.0, 100, 1e-6)
    # Laplace is 0.5-DP, so KOV bounds it; its own PLD is tighter still
    assert best.method == "pld"
    assert 0 < best.epsilon < kov < 50


def test_exponential_mechanism_uses_bounded_range():
    events = [Repeat(20, (ExpMech(Fraction(1, 2)),))]
    best = tightest(events, 1e-6)
    # rho = 20 * (1/2)^2 / 8 (Cesar & Rogers 2021) beats KOV for randomized response
    assert best.method in ("zcdp-cks", "rdp")
    assert best.epsilon < composition.kov_epsilon(0.5, 0.0, 20, 1e-6)
