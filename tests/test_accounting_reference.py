"""For random event trees and deltas, the reported epsilon's true delta --
computed independently in tests/dp_reference -- is at most delta.

The trees mix the kinds of mechanism the references compute exactly:
Gaussians with pure events (randomized response), a Laplace mechanism with
pure events, Poisson-subsampled pure events; and, marked slow, subsampled
Gaussians (numerical Fourier inversion).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from dp_reference import trees
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting.accountant import tightest
from fuzzpy.accounting.events import Gaussian, Laplace, Repeat, Subsample, Verified

F = Fraction
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)

deltas = st.sampled_from([1e-2, 1e-4, 1e-6, 1e-9, 1e-12, 1e-15])
pure_eps = st.sampled_from([F(1, 10), F(1, 4), F(1, 2), F(1), F(2)])
counts = st.integers(1, 25)


def _pure(eps: Fraction) -> Verified:
    return Verified("m", eps)


gaussians = st.builds(
    lambda sigma, n: Repeat(n, (Gaussian(F(1), sigma),)),
    st.sampled_from([F(1, 2), F(1), F(2), F(5)]),
    st.integers(1, 10),
)
pures = st.builds(lambda eps, n: Repeat(n, (_pure(eps),)), pure_eps, counts)
laplaces = st.builds(
    lambda eps, n: Repeat(n, (Laplace(F(1), 1 / eps),)),
    st.sampled_from([F(1, 4), F(1, 2), F(1)]),
    st.integers(1, 6),
)
sampled = st.builds(
    lambda q, eps, n: Repeat(n, (Subsample(q, (_pure(eps),)),)),
    st.sampled_from([F(1, 10), F(1, 4), F(1, 2)]),
    st.sampled_from([F(1, 2), F(1), F(2)]),
    st.integers(1, 40),
)

trees_strategy = st.one_of(
    st.tuples(st.lists(gaussians, min_size=1, max_size=2), st.lists(pures, max_size=2)),
    st.tuples(st.tuples(laplaces), st.lists(pures, max_size=1)),
    st.tuples(st.lists(sampled, min_size=1, max_size=2), st.lists(pures, max_size=1)),
    st.tuples(st.lists(pures, min_size=1, max_size=3), st.just([])),
).map(lambda parts: [*parts[0], *parts[1]])


def _check(events, delta: float) -> None:
    found = tightest(events, delta)
    assert found.proven
    true_delta = trees.delta(events, found.epsilon)
    assert true_delta <= delta * (1 + 1e-12), (found, float(true_delta))


@SETTINGS
@given(trees_strategy, deltas)
def test_reported_epsilon_is_an_upper_bound(events, delta):
    _check(events, delta)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("q", "sigma", "steps", "extra"),
    [
        (F(1, 4), F(2), 20, []),
        (F(1, 2), F(2), 10, [Gaussian(F(1), F(3))]),
        (F(1, 4), F(2), 30, [Repeat(3, (_pure(F(1, 2)),))]),
    ],
)
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_subsampled_gaussians_are_upper_bounds(q, sigma, steps, extra, delta):
    events = [Repeat(steps, (Subsample(q, (Gaussian(F(1), sigma),)),)), *extra]
    _check(events, delta)
