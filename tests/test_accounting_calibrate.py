"""Calibration: the noise found proves the target, and a little less does not."""

from __future__ import annotations

import pytest

from fuzzpy.accounting.accountant import tightest
from fuzzpy.accounting.calibrate import (
    calibrate_gaussian,
    calibrate_laplace,
    gaussian_events,
    laplace_events,
)


def test_gaussian_over_k_rounds_is_exact():
    found = calibrate_gaussian(1.0, 1e-5, 100)
    assert found.guarantee.epsilon <= 1.0
    assert found.guarantee.method == "exact-gaussian"
    slightly_less = tightest(gaussian_events(found.scale * (1 - 1e-6), 100), 1e-5)
    assert slightly_less.epsilon > 1.0


def test_gaussian_scales_with_sensitivity():
    one = calibrate_gaussian(0.5, 1e-6, 10).scale
    three = calibrate_gaussian(0.5, 1e-6, 10, sensitivity=3.0).scale
    assert three == pytest.approx(3 * one, rel=1e-6)


def test_subsampled_gaussian_calibration():
    found = calibrate_gaussian(2.0, 1e-5, 1000, rate=0.01)
    assert found.guarantee.epsilon <= 2.0
    assert tightest(gaussian_events(found.scale * 0.999, 1000, rate=0.01), 1e-5).epsilon > 2.0


def test_laplace_pure_and_approximate():
    pure = calibrate_laplace(1.0, 0.0, 100)
    assert pure.scale == pytest.approx(100.0) and pure.guarantee.method == "pure"
    approx = calibrate_laplace(1.0, 1e-6, 100)
    assert approx.scale < pure.scale / 2  # composition at delta > 0 is far cheaper
    assert tightest(laplace_events(approx.scale, 100), 1e-6).epsilon <= 1.0
    assert tightest(laplace_events(approx.scale * 0.99, 100), 1e-6).epsilon > 1.0


@pytest.mark.parametrize(
    ("epsilon", "delta", "rounds"), [(0.0, 1e-5, 1), (1.0, 1.5, 1), (1.0, 1e-5, 0)]
)
def test_bad_targets_are_rejected(epsilon, delta, rounds):
    with pytest.raises(ValueError):
        calibrate_gaussian(epsilon, delta, rounds)


def test_gaussian_needs_delta():
    with pytest.raises(ValueError):
        calibrate_gaussian(1.0, 0.0, 10)
