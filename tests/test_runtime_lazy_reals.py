"""Exact continuous noise for mechanisms (fuzzpy/runtime/lazy_reals.py):
the draws follow the Laplace and exponential laws whatever order they are
refined in, arithmetic and comparisons on them are exact, and a released
number is the double nearest to the exact value.

Distributions are checked with Kolmogorov-Smirnov tests at fixed seeds
(p-values far above 1e-4 when the law is right).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy import stats

from fuzzpy.runtime import lazy_reals as R
from fuzzpy.runtime.randomness import SeededSource

N = 3000


def _released(value: R.Number) -> float:
    return R.to_float(value) if isinstance(value, R.Noisy) else float(value)


@pytest.mark.parametrize(("kind", "law"), [("lap", stats.laplace(scale=2)), ("lapplus", stats.expon(scale=2))])
def test_draws_follow_their_law(kind: str, law: object) -> None:
    source = SeededSource(3)
    values = [_released(R.draw(kind, Fraction(2), source)) for _ in range(N)]
    assert stats.kstest(values, law.cdf).pvalue > 1e-4  # type: ignore[attr-defined]


def test_refining_in_small_steps_or_at_once_gives_the_same_law() -> None:
    source = SeededSource(4)
    at_once, in_steps = [], []
    for _ in range(N):
        a, b = R.Draw(source, two_sided=False), R.Draw(source, two_sided=False)
        a.refine(64)
        for step in (1, 2, 5, 8, 16, 32):
            b.refine(step)
        at_once.append(float(a.interval()[0]))
        in_steps.append(float(b.interval()[0]))
    assert stats.ks_2samp(at_once, in_steps).pvalue > 1e-4
    assert stats.kstest(in_steps, stats.expon().cdf).pvalue > 1e-4


def test_a_comparison_decided_early_does_not_bias_the_value() -> None:
    # condition on "the draw is above 1" (decided after a few digits), then release it:
    # the released values follow the exponential law conditioned on exceeding 1
    source = SeededSource(5)
    kept = []
    while len(kept) < N:
        eta = R.draw("lapplus", Fraction(1), source)
        if R.compare(">", eta, Fraction(1)):
            kept.append(_released(eta) - 1)
    assert stats.kstest(kept, stats.expon().cdf).pvalue > 1e-4


def test_arithmetic_is_exact() -> None:
    source = SeededSource(6)
    eta = R.draw("lap", Fraction(1), source)
    other = R.draw("lap", Fraction(1), source)
    assert R.add(eta, eta, -1) == 0
    assert R.multiply(eta, 0) == 0
    assert R.compare("==", R.add(eta, other), R.add(other, eta))
    assert not R.compare("==", eta, other)  # different draws: equal with probability 0
    assert R.divide(eta, 0) == 0  # x / 0 = 0
    doubled = R.multiply(eta, 2)
    assert R.compare("==", R.divide(doubled, eta), Fraction(2))
    assert R.compare("<", R.add(eta, -1), eta)
    square = R.multiply(eta, eta)
    assert R.sign(square) == 1


def test_a_release_is_the_nearest_double() -> None:
    source = SeededSource(7)
    for _ in range(200):
        eta = R.draw("lap", Fraction(1, 3), source)
        value = R.add(eta, Fraction(1, 10))
        released = R.to_float(value)  # type: ignore[arg-type]
        low, high = R._interval(value.num, value.draws)  # type: ignore[union-attr]
        # the exact value lies in [low, high], and both ends round to the released double
        assert float(low) == released == float(high)
        assert math.isfinite(released)


def test_neighbours_outputs_share_their_support() -> None:
    """A grid runtime puts x + noise on the coset x + gZ, so 0.3 and 1.3 (a
    real-valued query and its neighbour) were told apart by the residue; exact
    noise gives both the same support."""
    source = SeededSource(8)
    grid = Fraction(1, 2**40)
    for x in (Fraction(3, 10), Fraction(13, 10)):
        residues = {(Fraction(_released(R.add(R.draw("lap", Fraction(1), source), x))) - x) % grid
                    for _ in range(50)}
        assert len(residues) > 40
