"""Poisson-subsampled Gaussians against a fine-grid dp-accounting PLD.

Reference: dp-accounting's pessimistic connect-the-dots PLD at a grid twice
finer than its default (5e-5), an upper bound; and its optimistic PLD (a
lower bound on the true epsilon). Ours must agree with the upper reference
within 0.1 % and never fall below the lower one.
"""

from __future__ import annotations

import logging
from fractions import Fraction

import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld

from fuzzpy.accounting.accountant import guarantees, tightest
from fuzzpy.accounting.events import Gaussian, Laplace, Repeat, Subsample

DELTA = 1e-5
STEPS = (1000, 10000)
REFERENCE_INTERVAL = 5e-5


def events(q: float, sigma: float, steps: int):
    step = Subsample(Fraction(q), (Gaussian(Fraction(1), Fraction(sigma)),))
    return [Repeat(steps, (step,))]


def reference(q: float, sigma: float) -> dict[int, tuple[float, float]]:
    """(lower, upper) reference epsilon for each number of steps."""
    logging.getLogger().setLevel(logging.ERROR)  # dp-accounting warns about buckets
    upper = dpa_pld.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=REFERENCE_INTERVAL
    )
    lower = dpa_pld.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=1e-4, pessimistic_estimate=False
    )
    return {
        k: (
            lower.self_compose(k).get_epsilon_for_delta(DELTA),
            upper.self_compose(k).get_epsilon_for_delta(DELTA),
        )
        for k in STEPS
    }


CASES = [
    pytest.param(0.01, 0.8, marks=pytest.mark.slow),
    pytest.param(0.01, 1.1, marks=pytest.mark.slow),
    (0.01, 2.0),
    pytest.param(0.001, 0.8, marks=pytest.mark.slow),
    (0.001, 1.1),
    (0.001, 2.0),
]


@pytest.mark.parametrize(("q", "sigma"), CASES)
def test_subsampled_gaussian_agrees_with_fine_grid_pld(q, sigma):
    for steps, (lower, upper) in reference(q, sigma).items():
        found = tightest(events(q, sigma, steps), DELTA)
        assert found.method == "pld"
        assert found.epsilon == pytest.approx(upper, rel=1e-3), steps
        assert found.epsilon >= lower, steps


def test_subsampling_amplifies():
    plain = tightest([Repeat(100, (Gaussian(Fraction(1), Fraction(2)),))], DELTA).epsilon
    sampled = tightest(events(0.1, 2.0, 100), DELTA).epsilon
    assert sampled < plain / 3


def test_generic_amplification_and_rdp_are_upper_bounds_of_the_pld():
    found = {g.method: g.epsilon for g in guarantees(events(0.01, 1.1, 1000), DELTA)}
    assert found["pld"] <= found["rdp"] <= found["basic"]
    assert found["rdp"] < 1.2 * found["pld"]


@pytest.mark.parametrize(("q", "steps"), [(1.0, 100), (0.1, 200)])
def test_laplace_pld_agrees_with_dp_accounting(q, steps):
    """Laplace eps0 = 0.5 (plain and Poisson-subsampled) against dp-accounting's
    pessimistic PLD at its default grid (an upper bound) and its optimistic
    one (a lower bound)."""
    logging.getLogger().setLevel(logging.ERROR)
    kwargs = {"sampling_prob": q, "value_discretization_interval": 1e-4}
    upper = dpa_pld.from_laplace_mechanism(2.0, **kwargs).self_compose(steps)
    lower = dpa_pld.from_laplace_mechanism(2.0, pessimistic_estimate=False, **kwargs)
    lower = lower.self_compose(steps)
    step = Laplace(Fraction(1), Fraction(2))
    found = tightest([Repeat(steps, (Subsample(Fraction(q), (step,)) if q < 1 else step,))], 1e-6)
    assert found.method == "pld"
    assert found.epsilon <= upper.get_epsilon_for_delta(1e-6) * (1 + 1e-6)
    assert found.epsilon >= lower.get_epsilon_for_delta(1e-6)
