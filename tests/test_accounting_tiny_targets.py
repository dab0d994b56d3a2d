"""Tiny epsilons at tiny deltas (issue 25): the analytic Gaussian, its
calibration and the CKS zCDP conversion, each against an independent
high-precision computation written here (mpmath at 300 digits, plain
bisection on the defining formula)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from mpmath import mp, mpf

from fuzzpy.accounting.calibrate import calibrate_gaussian
from fuzzpy.accounting.gaussian import epsilon_for_delta, log_delta
from fuzzpy.accounting.zcdp import epsilon_cks


def _delta_at(mu: mpf, eps: mpf) -> mpf:
    # Balle & Wang 2018, Thm 8, restated from the paper
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def _exact_epsilon(mu: float, delta: float) -> mpf:
    """The least eps with delta(eps) <= delta, to a relative ~1e-15
    (geometric bisection at 120 digits)."""
    with mp.workdps(120):
        m, target = mpf(mu), mpf(delta)
        if _delta_at(m, mpf(0)) <= target:
            return mpf(0)
        lo, hi = mpf("1e-320"), mpf(1)
        while _delta_at(m, hi) > target:
            hi *= 2
        while hi / lo > 1 + mpf("1e-15"):
            middle = mp.sqrt(lo * hi)
            lo, hi = (middle, hi) if _delta_at(m, middle) > target else (lo, middle)
        return hi


# (mu, delta): a Gaussian of mu = 1 / sigma and the delta asked about; old
# float code was up to 40% loose here (the difference A - B cancelled)
CASES = [
    (5.034195282860295e-12, 1e-100),
    (7.638334289923592e-14, 1e-200),
    (2.7763567070513253e-15, 1e-300),
    (3.0624391911260205e-12, 1e-300),
    (2.0e-16, 1e-250),
]


@pytest.mark.parametrize(("mu", "delta"), CASES)
def test_exact_gaussian_is_valid_and_tight_at_tiny_epsilon(mu: float, delta: float) -> None:
    exact = _exact_epsilon(mu, delta)
    found = epsilon_for_delta(mu, delta)
    assert mpf(found) >= exact  # a valid bound
    assert mpf(found) <= exact * (1 + mpf("1e-9"))  # and the optimum


def test_float_log_delta_matches_mpmath_where_terms_cancel() -> None:
    # mu = 1e-15, eps = 1e-14: delta ~ 7.5e-40, where A and B agree to ~30 digits
    with mp.workdps(120):
        expected = float(mp.log(_delta_at(mpf(1e-15), mpf(1e-14))))
    assert log_delta(1e-15, 1e-14) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("epsilon", "delta"), [(1e-14, 1e-300), (1e-10, 1e-100), (1e-12, 1e-200)])
def test_gaussian_calibration_reaches_tiny_targets_with_little_extra_noise(epsilon: float, delta: float) -> None:
    found = calibrate_gaussian(epsilon, delta, 1)
    sigma = float(Fraction(found.printed))
    # the printed sigma proves the target ...
    assert float(_exact_epsilon(1 / sigma, delta)) <= epsilon
    # ... and is within 0.01% of the least sigma that does (mu exact here)
    with mp.workdps(120):
        lo, hi = mpf("1e-300"), mpf(1)  # mu: delta(eps) grows with mu
        while hi / lo > 1 + mpf("1e-12"):
            middle = mp.sqrt(lo * hi)
            lo, hi = (middle, hi) if _delta_at(middle, mpf(epsilon)) <= delta else (lo, middle)
        least_sigma = 1 / lo
    assert sigma <= float(least_sigma) * (1 + 1e-4)


def _cks(rho: mpf, delta: mpf, alpha: mpf) -> mpf:
    # Canonne, Kamath & Steinke 2020, Prop. 12 (as in the paper)
    return alpha * rho + (mp.log(1 / delta) + (alpha - 1) * mp.log(1 - 1 / alpha) - mp.log(alpha)) / (alpha - 1)


@pytest.mark.parametrize(("sigma", "delta"), [(1e15, 1e-300), (1e15, 1e-10), (1e9, 1e-100)])
def test_zcdp_cks_reaches_its_optimum_for_huge_sigma(sigma: float, delta: float) -> None:
    rho = 1 / (2 * sigma * sigma)
    with mp.workdps(100):
        r, d = mpf(rho), mpf(delta)
        # the minimum over alpha, on a fine log grid around sqrt(log(1/delta) / rho)
        centre = mp.sqrt(mp.log(1 / d) / r)
        best = min(_cks(r, d, centre * mp.e ** (k / mpf(200))) for k in range(-400, 401))
        exact_gaussian = _exact_epsilon(math.sqrt(2 * rho), delta)
    found = epsilon_cks(rho, delta)
    assert mpf(found) >= exact_gaussian  # valid (the Gaussian's exact epsilon is below any bound)
    assert mpf(found) <= max(best, mpf(0)) * (1 + mpf("1e-6"))  # (a negative bound proves eps = 0)


@pytest.mark.parametrize("rho", [math.inf, 1e300, 1e308])
def test_cks_of_an_overflowing_rho_is_no_bound_never_zero(rho: float) -> None:
    # sigma 1e-300 gives rho = inf: a NaN search once returned max(0, nan) = 0
    from fuzzpy.accounting.zcdp import epsilon_cks

    assert epsilon_cks(rho, 1e-6) >= rho
