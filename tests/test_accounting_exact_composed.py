"""The exact closed forms answered before any PLD (fuzzpy.accounting.exact_composed):
k-fold Laplace at small delta, k-fold Poisson-subsampled pure events and
k-fold pure events (KOV). For random parameters and deltas the reported
epsilon's true delta -- computed independently in tests/dp_reference -- is
at most delta, and it is tight: 1e-9 below it the true delta exceeds delta."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
from dp_reference import trees
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting import exact_composed
from fuzzpy.accounting.accountant import atoms_of, tightest
from fuzzpy.accounting.events import Laplace, Repeat, Subsample, Verified

F = Fraction
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True)
deltas = st.sampled_from([1e-3, 1e-5, 1e-7, 1e-9, 1e-12, 1e-15])
eps0s = st.sampled_from([F(1, 20), F(1, 10), F(1, 4), F(1, 2), F(1), F(3, 2)])


def _valid_and_tight(events, found, delta: float) -> None:
    with mp.workdps(40):
        assert trees.delta(events, found.epsilon) <= delta
        if found.epsilon > 1e-6:
            assert trees.delta(events, found.epsilon * (1 - 1e-9)) > delta


@SETTINGS
@given(eps0s, st.integers(2, 12), deltas)
def test_k_fold_laplace(eps0, k, delta):
    events = [Repeat(k, (Laplace(F(1), 1 / eps0),))]
    found = tightest(events, delta)
    if found.method == "exact-laplace":  # only where eps >= (k - 2) eps0
        assert found.epsilon >= float((k - 2) * eps0) * (1 - 1e-12)
        _valid_and_tight(events, found, delta)
    else:
        assert exact_composed.laplace_epsilon(atoms_of(events, delta), delta) is None
        with mp.workdps(40):
            assert trees.delta(events, found.epsilon) <= delta


@SETTINGS
@given(eps0s, st.sampled_from([F(1, 1000), F(1, 100), F(1, 10), F(1, 2)]), st.integers(1, 300), deltas)
def test_k_fold_subsampled_pure(eps0, q, k, delta):
    events = [Repeat(k, (Subsample(q, (Verified("m", eps0),)),))]
    found = tightest(events, delta)
    assert found.method == "exact-subsampled"
    _valid_and_tight(events, found, delta)


@SETTINGS
@given(eps0s, st.integers(2, 300), deltas)
def test_k_fold_pure_is_kov(eps0, k, delta):
    events = [Repeat(k, (Verified("m", eps0),))]
    found = tightest(events, delta)
    assert found.method == "kov"
    _valid_and_tight(events, found, delta)


def test_laplace_series_matches_the_single_laplace_closed_form():
    """k = 1 of the series is 1 - e^{-r} (closed_form.laplace_epsilon)."""
    coefficients = exact_composed._coefficients(1)
    for r in (1e-12, 1e-6, 0.01, 0.3, 1.0):
        value = exact_composed._laplace_delta_upper(1, coefficients, r)
        exact = -mp.expm1(-mp.mpf(r))
        assert exact <= value <= exact * (1 + 1e-13)


@SETTINGS
@given(eps0s, st.integers(1, 8), eps0s, st.integers(1, 12), deltas)
def test_laplace_with_pure_events(eps0, k, eps_p, m, delta):
    events = [Repeat(k, (Laplace(F(1), 1 / eps0),)), Repeat(m, (Verified("m", eps_p),))]
    found = tightest(events, delta)
    if found.method == "exact-laplace":
        _valid_and_tight(events, found, delta)
    else:
        with mp.workdps(40):
            assert trees.delta(events, found.epsilon) <= delta
