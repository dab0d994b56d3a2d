"""The proven lower ends of the DP-SGD references (tests/dp_reference/rigorous,
lattice_compose, safe_fft): the FFT's error bound holds, and the lower end of
a small subsampled-Gaussian composition lies below fuzzpy's proven epsilon
and the numerical inversion, and not far below."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from dp_reference import fourier, lattice_compose, rigorous, safe_fft, trees
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting.accountant import tightest
from fuzzpy.accounting.events import Gaussian, Repeat, Subsample


def test_fft_is_the_dft():
    rng = np.random.default_rng(1)
    x = rng.random(256) + 1j * rng.random(256)
    assert np.max(np.abs(safe_fft.fft(x) - np.fft.fft(x))) < 1e-12
    assert np.max(np.abs(safe_fft.ifft(safe_fft.fft(x)) - x)) < 1e-14


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(0, 2**20), min_size=1, max_size=300),
    st.lists(st.integers(0, 2**20), min_size=1, max_size=300),
    st.integers(-30, 30),
)
def test_convolution_bounds_contain_the_exact_convolution(a, b, shift):
    # integers below 2^20: np.convolve is exact (sums below 2^53)
    exact = np.convolve(np.array(a, dtype=float), np.array(b, dtype=float))
    scale = 2.0**shift
    va, vb = np.array(a, dtype=float) * scale, np.array(b, dtype=float)
    upper = safe_fft.convolve(va, vb, upper=True)
    lower = safe_fft.convolve(va, vb, upper=False)
    assert np.all(lower <= exact * scale)
    assert np.all(exact * scale <= upper)
    assert np.all(upper - lower <= 1e-9 * np.max(exact * scale) + 1e-300)


def test_tilt_factors_are_within_their_bound():
    import mpmath as mp

    mantissas, exponents, bound = safe_fft.tilt_factors(3.7, 2.0**-8, -500, 3000, block=256)
    with mp.workdps(40):
        for i in (0, 1, 255, 256, 1000, 2999):
            exact = mp.exp(mp.mpf(3.7) * mp.mpf(2.0**-8) * (i - 500))
            value = mp.mpf(mantissas[i]) * mp.mpf(2) ** int(exponents[i])
            assert abs(value / exact - 1) <= bound[i]


@pytest.mark.slow  # ~21 s: the default suite keeps its 10-minute limit
def test_lower_end_lies_below_the_epsilon_and_near_it():
    q, sigma, k, delta = Fraction(1, 10), Fraction(1), 20, 1e-6
    pairs = [rigorous.SampledGaussian(q, 1 / sigma, remove) for remove in (True, False)]
    lowers = [rigorous.step_bounds(pair, 2.0**-8)[0] for pair in pairs]
    for lower in lowers:  # a sub-probability measure on the lattice
        assert 0.999 < float(np.sum(lower.mass)) <= 1.0
    events = [Repeat(k, (Subsample(q, (Gaussian(Fraction(1), sigma),)),))]
    proven = tightest(events, delta).epsilon
    lo = lattice_compose.epsilon_lower(lowers, k, delta, proven)
    assert lo <= proven
    assert lo > 0.97 * proven
    # the numerical inversion's delta at lo is above delta (lo is below its epsilon)
    mix = trees.flatten(events)
    numerical = max(
        fourier.converged_delta(trees.fourier_components(mix, remove), lo)
        for remove in (True, False)
    )
    assert numerical > delta
