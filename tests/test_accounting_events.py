"""From event trees to atoms: pure epsilon, rho, groups, subsampling, releases."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from fuzzpy.accounting.accountant import (
    FILTER_METHODS,
    atoms_of,
    atoms_summary,
    compose_releases,
    pure_epsilon,
    rho,
    tightest,
)
from fuzzpy.accounting.atoms import (
    ApproxAtom,
    GaussianAtom,
    LaplaceAtom,
    PureAtom,
    SubsampledAtom,
)
from fuzzpy.accounting.events import ExpMech, Gaussian, Group, Laplace, Repeat, Subsample, Verified

F = Fraction


def test_pure_epsilon_is_exact():
    events = [Laplace(F(1), F(10)), Repeat(3, (ExpMech(F(1, 3)),)), Verified("svt", F(1, 7))]
    assert pure_epsilon(events) == F(1, 10) + 1 + F(1, 7)
    assert isinstance(pure_epsilon(events), Fraction)


def test_pure_epsilon_is_none_for_approximate_events():
    assert pure_epsilon([Laplace(F(1), F(1)), Gaussian(F(1), F(1))]) is None
    assert pure_epsilon([Verified("m", F(1), F(1, 10**6))]) is None


def test_group_privacy_scales_pure_costs_and_sensitivities():
    assert pure_epsilon([Group(F(3), (Laplace(F(1), F(2)),))]) == F(3, 2)
    assert rho([Group(F(2), (Gaussian(F(1), F(1)),))]) == 4 * F(1, 2)
    atoms = atoms_summary([Group(F(2), (Verified("m", F(1, 2), F(1, 10**8)),))])
    ((atom, count),) = atoms.items()
    assert count == 1 and atom.epsilon == 1
    # (k eps, (1 + ... + e^{(k-1) eps}) delta): the chain of Vadhan 2017, Lemma 2.2's proof
    assert float(atom.delta) == pytest.approx((1 + math.exp(0.5)) * 1e-8)


def test_subsampled_pure_epsilon_is_amplified_and_rounded_up():
    found = pure_epsilon([Subsample(F(1, 10), (Laplace(F(1), F(1)),))])
    exact = math.log1p(0.1 * math.expm1(1.0))
    assert found is not None and exact <= float(found) <= exact * (1 + 1e-14)


def test_rho_adds_and_subsampling_never_increases_it():
    events = [Repeat(4, (Gaussian(F(2), F(4)),)), Laplace(F(1), F(2))]
    # Laplace at eps = 1/2: eps + e^-eps - 1 (Harrison & Manurangsi 2025), rounded up
    laplace = math.exp(-0.5) - 0.5
    assert 4 * F(4, 32) + F(laplace) <= rho(events) <= 4 * F(4, 32) + F(laplace * (1 + 1e-15))
    assert rho([Subsample(F(1, 10), (Gaussian(F(1), F(1)),))]) == F(1, 2)
    assert rho([Verified("m", F(1), F(1, 10**6))]) is None


def test_flattening_merges_and_multiplies():
    atoms = atoms_summary(
        [
            Repeat(10, (Subsample(F(1, 2), (Subsample(F(1, 5), (Gaussian(F(1), F(1)),)),)),)),
            Subsample(F(1, 10), (Gaussian(F(1), F(2)), Gaussian(F(1), F(2)))),
            Subsample(F(1, 10), (Laplace(F(1), F(1)), ExpMech(F(1)))),
            Repeat(0, (Laplace(F(1), F(1)),)),
            Subsample(F(1), (Laplace(F(1), F(4)),)),
        ]
    )
    assert atoms == {
        SubsampledAtom(F(1, 10), GaussianAtom(F(1, 2))): 10,
        SubsampledAtom(F(1, 10), GaussianAtom(F(1, 4))): 1,
        SubsampledAtom(F(1, 10), PureAtom(F(2))): 1,
        LaplaceAtom(F(1, 4)): 1,
    }


def test_composite_subsampled_body_is_summarised_within_delta():
    body = (Laplace(F(1), F(2)), Gaussian(F(1), F(2)))
    events = [Repeat(50, (Subsample(F(1, 10), body),))]
    best = tightest(events, 1e-6)
    assert math.isfinite(best.epsilon)
    # the summary's delta over all 50 repeats is half of the target
    ((atom, count),) = atoms_of(events, 1e-6).items()
    assert count == 50 and isinstance(atom.inner, ApproxAtom)
    assert float(atom.inner.delta) * 50 == pytest.approx(0.5e-6)


def test_composite_body_needs_a_delta():
    assert pure_epsilon([Subsample(F(1, 10), (Laplace(F(1), F(1)), Gaussian(F(1), F(1))))]) is None
    assert (
        tightest([Subsample(F(1, 10), (Gaussian(F(1), F(1)), Laplace(F(1), F(1))))], 0).method
        == "none"
    )


def test_approximate_events_at_delta_zero_have_no_finite_epsilon():
    found = tightest([Gaussian(F(1), F(1))], 0.0)
    assert math.isinf(found.epsilon) and found.method == "none"
    assert tightest([Laplace(F(1), F(2))], 0.0).epsilon == 0.5


def test_releases_compose_across_runs():
    release = [Gaussian(F(1), F(3))]
    one = tightest(release, 1e-6).epsilon
    four = compose_releases([release] * 4, 1e-6)
    assert four.epsilon == pytest.approx(tightest([Gaussian(F(1), F(3, 2))], 1e-6).epsilon)
    assert one < four.epsilon < 4 * one
    filtered = compose_releases([release] * 4, 1e-6, methods=FILTER_METHODS)
    assert filtered.method in FILTER_METHODS and filtered.epsilon >= four.epsilon


def test_bad_delta_is_rejected():
    with pytest.raises(ValueError):
        tightest([Laplace(F(1), F(1))], 2.0)
