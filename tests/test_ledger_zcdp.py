"""The zCDP <-> (eps, delta) conversions the zcdp budget rule relies on."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy.stats import norm

from fuzzpy.ledger.zcdp import zcdp_epsilon, zcdp_log_delta, zcdp_rho_budget

CASES = [(0.1, 1e-6), (1.0, 1e-6), (1.0, 1e-10), (3.0, 1e-5), (10.0, 1e-8)]


def gaussian_delta(sigma: float, epsilon: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism, sensitivity 1 (Balle &
    Wang 2018, Thm 8); the Gaussian is exactly 1/(2 sigma^2)-zCDP."""
    a = 1 / (2 * sigma)
    return norm.cdf(a - epsilon * sigma) - math.exp(epsilon) * norm.cdf(-a - epsilon * sigma)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_bound_is_never_below_the_exact_gaussian_delta(sigma: float, epsilon: float) -> None:
    rho = 1 / (2 * sigma**2)
    assert math.exp(zcdp_log_delta(rho, epsilon)) >= gaussian_delta(sigma, epsilon)


@pytest.mark.parametrize(("epsilon", "delta"), CASES)
def test_budget_rho_is_sound_and_tighter_than_the_classical_conversion(
    epsilon: float, delta: float
) -> None:
    rho = zcdp_rho_budget(Fraction(epsilon), Fraction(delta))
    # Bun & Steinke 2016, Prop. 1.3, solved for rho
    log_inv = math.log(1 / delta)
    classical = (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2
    assert rho >= Fraction(classical)
    assert zcdp_log_delta(float(rho), epsilon) <= math.log(delta)
    # and it is the largest such rho, up to the bisection's precision
    assert zcdp_log_delta(float(rho) * (1 + 1e-6), epsilon) > math.log(delta)


@pytest.mark.parametrize(("epsilon", "delta"), CASES)
def test_epsilon_and_rho_conversions_are_inverse(epsilon: float, delta: float) -> None:
    rho = zcdp_rho_budget(Fraction(epsilon), Fraction(delta))
    back = zcdp_epsilon(rho, Fraction(delta))
    assert back == pytest.approx(epsilon, rel=1e-6)
    assert back <= Fraction(epsilon) * (1 + Fraction(1, 10**6))


def test_epsilon_is_at_most_the_classical_one() -> None:
    rho, delta = Fraction(1, 2), Fraction(1, 10**5)
    classical = 0.5 + 2 * math.sqrt(0.5 * math.log(1e5))
    assert zcdp_epsilon(rho, delta) < classical
    assert zcdp_epsilon(Fraction(0), delta) == 0


def test_a_rho_beyond_the_double_range_gives_a_finite_upper_bound() -> None:
    """a11 F3: `run --rule zcdp` on gauss[1] (vsum[1e200] ..) crashed converting
    rho to a float; the exact bound 2 rho + ceil(log 1/delta) + 1 is used."""
    from fuzzpy.ledger.rules import format_number

    rho = Fraction(10) ** 400 / 2
    epsilon = zcdp_epsilon(rho, Fraction(1, 10**6))
    assert rho < epsilon <= 2 * rho + 15  # epsilon >= rho for any conversion of rho-zCDP
    assert format_number(epsilon) == "~1.00001e+400"  # rounded up (issue 25), one layout for every figure
