"""Rounding in the safe direction: the numbers a privacy bound is made of.

A reported epsilon must never fall below the optimum for its method's
guarantee, so every float that feeds one is rounded the conservative way:
epsilons, rhos and deltas spent *up*, deltas still available *down*.

Error model (used in the comments that say why a step is safe): IEEE 754
double arithmetic rounds each +, -, *, / and sqrt correctly (relative error
at most U = 2^-53), and the C library's exp, log, expm1 and log1p are within
1 ulp (glibc's documented maximum on x86-64). Transcendental constants that
must be exact upper bounds are computed with mpmath at `MP_PREC` bits, whose
functions are accurate to a few units in the last of those bits; a relative
margin of 2^-100 covers them with room to spare.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from fuzzpy.language.figures import double_up

if TYPE_CHECKING:
    import mpmath

U = 2.0**-53  # unit roundoff of a double
TINY = 5e-324  # the smallest positive (subnormal) double
MP_PREC = 160


def __getattr__(name: str) -> Any:
    """`MP_MARGIN` = 2^-100 as an mpf, made on first use: mpmath loads only
    when a bound needs it (a run of pure-epsilon releases never does)."""
    if name == "MP_MARGIN":
        import mpmath

        return mpmath.mpf(2) ** -100
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def up(value: float, ulps: float = 4.0) -> float:
    """``value`` raised by ``ulps`` relative units of roundoff (and at least
    to the next float): an upper bound on any number within that many
    roundings of it."""
    if math.isnan(value) or math.isinf(value):
        return value
    raised = value + abs(value) * ulps * U
    return max(math.nextafter(value, math.inf), raised)


def down(value: float, ulps: float = 4.0) -> float:
    """``value`` lowered by ``ulps`` relative units of roundoff (and at least
    to the float below)."""
    if math.isnan(value) or math.isinf(value):
        return value
    lowered = value - abs(value) * ulps * U
    return min(math.nextafter(value, -math.inf), lowered)


def float_up(value: Fraction) -> float:
    """The smallest float >= an exact value (``float()`` rounds to nearest):
    the rule of every printed figure (`language.figures.double_up`)."""
    return double_up(value)


def float_down(value: Fraction) -> float:
    """The largest float <= an exact value."""
    return -float_up(-value)


def mp_of(value: Fraction | float | int) -> mpmath.mpf:
    """An exact number as an mpf at the current precision (a float is exact)."""
    import mpmath

    if isinstance(value, Fraction):
        return mpmath.mpf(value.numerator) / value.denominator
    return mpmath.mpf(value)


def fraction_of_mp(value: mpmath.mpf) -> Fraction:
    """The exact rational value of an mpf (a binary fraction)."""
    sign, mantissa, exponent, _ = value._mpf_
    exact = Fraction(mantissa) * (Fraction(2) ** exponent)
    return -exact if sign else exact


def fraction_up_mp(value: mpmath.mpf) -> Fraction:
    """A short Fraction (a double) at least ``value * (1 + 2^-100)``: an
    upper bound on the exact number an mpmath evaluation approximates."""
    from mpmath import mp

    with mp.workprec(MP_PREC):
        padded = value + abs(value) * __getattr__("MP_MARGIN")
    return Fraction(float_up(fraction_of_mp(padded)))


def float_up_mp(value: mpmath.mpf) -> float:
    """The float above ``value * (1 + 2^-100)`` (see `fraction_up_mp`)."""
    return float(fraction_up_mp(value))
