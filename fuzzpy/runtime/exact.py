"""Macro-level numbers: exact and total (docs/semantics.md, "Numbers").

Outside per-row functions an `int` is a Python `int` and a `num` a Python
`int` or `fractions.Fraction`: the checker reasons over the exact reals, and
these are the exact reals the program can reach (literals are exact
decimals, sums and releases are grid multiples). No float, NaN or infinity
is ever a macro-level value.

Every operation is total, with the conventions of Lean's Mathlib (which
makes the same choices so that field and analysis lemmas hold without side
conditions): x / 0 = 0, log 0 = 0, log x = log |x|, sqrt x = 0 for x < 0.
`exp`, `log` and `sqrt` of exact inputs are irrational; the checker gives
them infinite sensitivity, so only determinism matters: their value is the
double the platform's libm returns for the nearest double of the input,
converted exactly, with results beyond the largest double saturated to it.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

Exact = int | Fraction

#: The largest finite double; overflowing float results saturate to +/- this.
DBL_MAX = sys.float_info.max
EXACT_DBL_MAX = Fraction(DBL_MAX)


def is_exact(value: object) -> bool:
    """A macro-level number (bool is not a number here)."""
    return isinstance(value, (int, Fraction)) and not isinstance(value, bool)


def to_exact(value: object) -> object:
    """Numbers from outside the exact world (a Python float from a mechanism
    or an argument, a numpy scalar) as exact values; other values unchanged.
    A float is read as the dyadic rational it is; a non-finite one
    saturates (NaN reads as 0)."""
    if isinstance(value, (bool, int, Fraction)):
        return value
    if isinstance(value, float):  # np.float64 too
        return _float_to_exact(float(value))
    numpy = sys.modules.get("numpy")  # a numpy scalar exists only once numpy is imported
    if numpy is None:
        return value
    if isinstance(value, numpy.bool_):
        return bool(value)
    if isinstance(value, numpy.integer):
        return int(value)
    if isinstance(value, numpy.floating):
        return _float_to_exact(float(value))
    return value


def _float_to_exact(x: float) -> Fraction:
    """A `num`: always a Fraction, so the kind of a value never depends on it."""
    if math.isnan(x):
        return Fraction(0)
    if math.isinf(x):
        return EXACT_DBL_MAX if x > 0 else -EXACT_DBL_MAX
    return Fraction(x)


def to_float(value: Exact | float) -> float:
    """The nearest double (Python rounds Fraction -> float correctly),
    saturated to +/- DBL_MAX instead of overflowing."""
    try:
        return float(value)
    except OverflowError:
        return DBL_MAX if value > 0 else -DBL_MAX


def divide(left: Exact, right: Exact) -> Fraction:
    """Exact division, total: x / 0 = 0 (a `num` either way)."""
    if right == 0:
        return Fraction(0)
    return Fraction(left) / right


def arith(op: str, left: Exact, right: Exact) -> Exact:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    return divide(left, right)


def _from_double(x: float) -> Fraction:
    return _float_to_exact(max(-DBL_MAX, min(DBL_MAX, x)) if not math.isnan(x) else x)


def exp(x: Exact) -> Exact:
    try:
        return _from_double(math.exp(to_float(x)))
    except OverflowError:
        return EXACT_DBL_MAX


def log(x: Exact) -> Exact:
    """log |x|, and log 0 = 0 (also for inputs whose nearest double is 0)."""
    near = abs(to_float(x))
    return Fraction(0) if near == 0 else _from_double(math.log(near))


def sqrt(x: Exact) -> Exact:
    """sqrt x, and 0 for x <= 0."""
    near = to_float(x)
    return Fraction(0) if near <= 0 else _from_double(math.sqrt(near))


def floor(x: Exact) -> int:
    return math.floor(x)


def clamp(x: Exact, lo: Exact, hi: Exact) -> Exact:
    return min(max(x, lo), hi)
