"""Powers of noisy values in a mechanism: bounded work, exact results.

A reviewer's proved Gaussian mechanism squared its noisy value eight times
(`w = w * w` in a loop) and refined its draws until the time limit after the
ledger was charged (FZ720, "charged, not released"); the Laplace one took
seconds. The interval of the expanded polynomial (3 + 8X)^256 overestimates
by up to ((3 + 8|X|) / |3 + 8X|)^256, paid in digits of the draw; intervals
now follow the computation (a square is the square of one interval).
Measured by counted work (digits drawn, terms multiplied), never by time.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from fuzzpy.runtime import lazy_reals as R
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import RuntimeFailure


def _power_of_two(base: R.Number, squarings: int) -> R.Number:
    for _ in range(squarings):
        base = R.multiply(base, base)
    return base


@pytest.mark.parametrize("kind", ["gauss", "lap"])
@pytest.mark.parametrize("seed", [0, 2])
def test_a_power_is_released_after_few_digits(kind: str, seed: int) -> None:
    # 3 + 8X near 0 for some seeds: the old expanded interval needed 264+ digits at w^64
    w = R.add(Fraction(3), R.draw(kind, Fraction(8), SeededSource(seed)))
    power = _power_of_two(w, 6)
    assert isinstance(power, R.Noisy)
    R.to_float(power)
    assert max(d.known for d in power.draws.values()) <= 136  # 53 bits + log2(64) + a refinement step


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gauss", "lap"])
def test_a_power_is_the_nearest_double_to_the_exact_value(kind: str) -> None:
    w = R.add(Fraction(3), R.draw(kind, Fraction(8), SeededSource(0)))
    power = _power_of_two(w, 5)
    assert isinstance(power, R.Noisy)
    released = R.to_float(power)
    for d in power.draws.values():  # refine far, then bound the expanded polynomial itself
        d.refine(400 - d.known)
    low, high = R._interval(power.num, power.draws)
    assert float(low) == released == float(high)


def test_a_product_and_a_quotient_keep_their_sign_and_identities() -> None:
    source = SeededSource(5)
    x, y = R.draw("gauss", Fraction(1), source), R.draw("lap", Fraction(2), source)
    square = R.multiply(R.add(x, y, -1), R.add(x, y, -1))
    assert R.sign(square) == 1 and R.sign(R.negate(square)) == -1
    expanded = R.add(R.add(R.multiply(x, x), R.multiply(y, y)), R.multiply(R.multiply(x, y), Fraction(-2)))
    assert R.add(square, expanded, -1) == 0  # (x - y)^2 - (x^2 + y^2 - 2xy) is exactly 0
    ratio = R.divide(square, R.add(x, y, -1))
    assert R.compare("==", ratio, R.add(x, y, -1))
    assert R.compare("<", ratio, R.add(R.add(x, y, -1), Fraction(1, 10**30)))


def test_a_product_too_large_to_expand_is_refused_at_once() -> None:
    source = SeededSource(3)
    w = R.add(R.draw("gauss", Fraction(8), source), R.draw("gauss", Fraction(8), source))
    w = R.add(w, R.draw("lap", Fraction(8), source))
    with pytest.raises(RuntimeFailure) as refused:
        _power_of_two(w, 8)  # (X + Y + Z)^256: 33153 terms; was hours of expansion
    assert refused.value.code == "FZ519" and "too large" in refused.value.message


def test_a_release_beyond_the_largest_double_saturates() -> None:
    # 10^400 (squared from 10^50 + noise) was an internal OverflowError after the charge
    w = R.add(Fraction(10**50), R.draw("gauss", Fraction(1), SeededSource(2)))
    power = _power_of_two(w, 3)
    assert isinstance(power, R.Noisy)
    assert R.to_float(power) == 1.7976931348623157e308
    assert R.to_float(R.negate(power)) == -1.7976931348623157e308
