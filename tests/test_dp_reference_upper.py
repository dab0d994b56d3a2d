"""The proven upper ends of the DP-SGD references (tests/dp_reference/
lattice_compose.epsilon_upper, renyi_upper): the composed upper curve lies
above the exact composition of its lattice measure, and on small
subsampled-Gaussian compositions the upper end lies above the numerical
inversion's epsilon and the proven lower end, and (lattice) not far above."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from dp_reference import fourier, lattice_compose, renyi_upper, rigorous, trees
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting.events import Gaussian, Repeat, Subsample

H = 2.0**-8  # a coarse lattice: seconds of mpmath per step, cached on disk

# Minutes each (mpmath lattice steps, Fourier inversions): run with
# FUZZPY_SLOW_REFERENCES=1, as bench/accounting_grid.py's references are.
long_reference = pytest.mark.skipif(not os.environ.get("FUZZPY_SLOW_REFERENCES"),
                                    reason="set FUZZPY_SLOW_REFERENCES=1 for the long reference checks")


def _exact_delta(lattice: rigorous.Lattice, k: int, eps: float) -> float:
    """delta(eps) of the k-fold composition, by direct convolution (all
    terms non-negative: relative error ~ k n u, far below the bounds' slack)."""
    mass = lattice.mass
    for _ in range(k - 1):
        mass = np.convolve(mass, lattice.mass)
    losses = (k * lattice.first + np.arange(mass.size)) * lattice.h
    f = np.where(losses > eps, -np.expm1(eps - losses), 0.0)
    finite = float(np.sum(lattice.mass))
    # (s + p)^k - s^k without cancellation
    some_infinite = finite**k * math.expm1(k * math.log1p(lattice.infinity / finite))
    return float(np.sum(mass * f)) + some_infinite


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=3, max_size=60),
    st.integers(-40, 10),
    st.integers(2, 40),
    st.floats(0.0, 3.0),
    st.floats(0.05, 20.0),
    st.sampled_from([0.0, 1e-9, 1e-4]),
)
def test_composed_upper_curve_lies_above_the_exact_one(weights, first, k, eps, t, infinity):
    raw = np.array(weights)
    raw[0] += 1e-3  # not all zero
    mass = raw / np.sum(raw) * (1 - infinity)
    lattice = rigorous.Lattice(0.05, first, mass, infinity)
    exact = _exact_delta(lattice, k, eps)
    upper = lattice_compose.Curve(lattice_compose.compose(lattice, k, t, upper=True))
    lower = lattice_compose.Curve(
        lattice_compose.compose(rigorous.Lattice(0.05, first, mass), k, t, upper=False)
    )
    assert float(upper.delta(eps)) >= exact * (1 - 1e-12)
    assert float(lower.delta(eps)) <= exact * (1 + 1e-12) + 1e-300


def _sampled(q: Fraction, sigma: Fraction):
    pairs = [rigorous.SampledGaussian(q, 1 / sigma, remove) for remove in (True, False)]
    return pairs, [rigorous.step_bounds(pair, H, upper=True) for pair in pairs]


def _numerical_delta(q: Fraction, sigma: Fraction, k: int, eps: float) -> float:
    events = [Repeat(k, (Subsample(q, (Gaussian(Fraction(1), sigma),)),))]
    mix = trees.flatten(events)
    return max(
        fourier.converged_delta(trees.fourier_components(mix, remove), eps)
        for remove in (True, False)
    )


@long_reference
@settings(max_examples=3, deadline=None)
@given(
    st.sampled_from([(Fraction(1, 10), Fraction(1)), (Fraction(1, 10), Fraction(2))]),
    st.integers(5, 40),
    st.sampled_from([1e-4, 1e-6, 1e-9]),
)
def test_upper_end_lies_above_the_epsilon_and_near_it(qs, k, delta):
    q, sigma = qs
    pairs, bounds = _sampled(q, sigma)
    renyi, _ = renyi_upper.epsilon_upper(q, 1 / sigma, k, delta)
    lo = lattice_compose.epsilon_lower([b[0] for b in bounds], k, delta, renyi / 2)
    hi = lattice_compose.epsilon_upper([b[1] for b in bounds], k, delta, lo)
    assert lo <= hi <= renyi
    assert hi <= lo * 1.01  # tight at this coarse lattice
    # the numerical inversion's delta at hi is within delta (hi is above its
    # epsilon), up to the inversion's own relative error
    assert _numerical_delta(q, sigma, k, hi) <= delta * (1 + 1e-6)
    # and the Renyi end is above it too
    assert _numerical_delta(q, sigma, k, renyi) <= delta * (1 + 1e-6)


@pytest.mark.parametrize(
    ("q", "sigma", "k", "delta"),
    [
        pytest.param(Fraction(1, 10), Fraction(1), 20, 1e-6, marks=long_reference),
        pytest.param(Fraction(1, 1000), Fraction(2), 1000, 1e-15, marks=long_reference),
    ],
)
def test_renyi_end_lies_above_the_numerical_epsilon(q, sigma, k, delta):
    renyi, alpha = renyi_upper.epsilon_upper(q, 1 / sigma, k, delta)
    assert alpha >= 2
    assert _numerical_delta(q, sigma, k, renyi) <= delta


def test_renyi_moment_is_the_gaussian_at_full_rate():
    # q = 1: A_alpha = e^{alpha (alpha - 1) mu^2 / 2}, D_alpha = alpha mu^2 / 2 (Mironov 2017)
    with mp.workdps(50):
        for alpha in (2, 5, 17):
            value = renyi_upper.log_moment(Fraction(1), Fraction(1, 2), alpha) / (alpha - 1)
            assert abs(value - mp.mpf(alpha) / 8) <= 1e-40
            assert value >= mp.mpf(alpha) / 8  # rounded up


def test_renyi_end_at_an_order_matches_the_conversion():
    q, mu, k, delta, alpha = Fraction(1, 10), Fraction(1), 10, 1e-6, 7
    value = renyi_upper.epsilon_at(q, mu, k, delta, alpha)
    terms = [
        math.comb(alpha, j) * 0.9 ** (alpha - j) * 0.1**j * math.exp((j * j - j) / 2)
        for j in range(alpha + 1)
    ]
    tau = k * math.log(sum(terms)) / (alpha - 1)
    expected = tau + math.log(1 - 1 / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1)
    assert abs(float(value) - expected) <= 1e-12 * expected


def test_every_stored_upper_end_brackets_the_reference_and_renyi_reproduces():
    """bench/accounting_grid_upper.json against bench/accounting_grid_reference.json:
    every DP-SGD row's proven upper end lies above its proven lower end and
    (within the inversion's own error) its numerical estimate; the Renyi ends
    of a spread of rows are recomputed (about 10 ms each)."""
    import json
    import re
    from pathlib import Path

    bench = Path(__file__).parent.parent / "bench"
    uppers = json.loads((bench / "accounting_grid_upper.json").read_text())
    references = json.loads((bench / "accounting_grid_reference.json").read_text())
    assert len(uppers) == 108
    for key, upper in uppers.items():
        lo, numerical_hi = references[key][:2]
        assert upper["hi"] >= lo, key
        assert upper["hi"] >= numerical_hi * (1 - 1e-6), key
        assert upper["hi"] == min(v for v in (upper["lattice"], upper["renyi"]) if v is not None), key
    for key in sorted(uppers)[::9]:
        found = re.match(r"dp-sgd q=([0-9.]+) sigma=([0-9.]+) k=(\d+)\|(.+)", key)
        assert found is not None
        q, sigma, k, delta = Fraction(found[1]), Fraction(found[2]), int(found[3]), float(found[4])
        renyi, _ = renyi_upper.epsilon_upper(q, 1 / sigma, k, delta)
        assert renyi == pytest.approx(uppers[key]["renyi"], rel=1e-12), key
