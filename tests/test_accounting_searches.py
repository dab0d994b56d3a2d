"""The accountant's float searches without scipy.optimize (issue 24: ~0.2 s of
imports): a bisection for the analytic Gaussian's candidates and a
golden-section search for the CKS zCDP conversion. Both only propose: the
Gaussian's candidate is proved (or raised) in mpmath, and every alpha of the
conversion is a valid bound. Checked here against scipy's own answers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize_scalar

from fuzzpy.accounting import gaussian, zcdp
from fuzzpy.accounting.gaussian import root_at_or_past


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.floats(-50, 50), st.floats(0.01, 10), st.booleans())
def test_the_root_is_on_the_nonpositive_side_and_close(root: float, slope: float, falling: bool) -> None:
    f = (lambda x: slope * (root - x)) if falling else (lambda x: slope * (x - root))
    lo, hi = root - 7.5, root + 12.25
    a, b = (lo, hi) if falling else (hi, lo)  # f(a) > 0 >= f(b)
    found = root_at_or_past(f, a, b, xtol=1e-14, rtol=1e-14)
    assert f(found) <= 0
    assert abs(found - root) <= 2 * (1e-14 + 1e-14 * abs(root)) + 1e-15


@pytest.mark.parametrize("mu", [0.05, 0.7, 1.0, 3.0, 40.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.01])
def test_gaussian_candidates_match_brentq_and_are_proved(mu: float, delta: float) -> None:
    target = math.log(delta)
    hi = max(1.0, mu * mu / 2 + 4 * mu)
    while gaussian.log_delta(mu, hi) > target:
        hi *= 2
    reference = brentq(lambda e: gaussian.log_delta(mu, e) - target, 0.0, hi, xtol=1e-14, rtol=1e-14)
    ours = gaussian.candidate(mu, delta)
    assert ours == pytest.approx(reference, rel=1e-12, abs=1e-13)
    proved = gaussian.epsilon_for_delta(mu, delta)
    assert proved >= ours and gaussian.delta_bounds(mu, proved)[1] <= delta


@pytest.mark.parametrize("rho", [1e-4, 0.02, 0.5, 2.0, 30.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.05])
def test_cks_conversion_is_as_tight_as_scipys_minimiser(rho: float, delta: float) -> None:
    ours = zcdp.epsilon_cks(rho, delta)
    values = [zcdp.epsilon_at_order(rho, delta, 1 + math.exp(-12 + 0.25 * i)) for i in range(97)]
    best = min(range(97), key=values.__getitem__)
    lo, hi = -12 + 0.25 * max(best - 1, 0), -12 + 0.25 * min(best + 1, 96)
    theirs = minimize_scalar(lambda t: zcdp.epsilon_at_order(rho, delta, 1 + math.exp(t)), bounds=(lo, hi),
                             method="bounded", options={"xatol": 1e-10}).fun
    reference = max(0.0, min(values[best], float(theirs)))  # epsilon_cks reports no negative epsilon
    assert 0 <= ours <= reference * (1 + 1e-12)
