"""Bounds on the numbers the front end and the checker compute with exactly.

Static numbers (literals, top-level `let`s, static arithmetic, mechanism
claims at a call) are exact rationals. Unbounded, a literal such as
`1e1000000000` takes the checker minutes of big-integer work, and a value
beyond the largest double cannot be carried out by `run`, which computes with
doubles. So every static value must be zero or have a magnitude between the
smallest normal double (2^-1022, about 2.2e-308) and the largest double
(about 1.8e308), and a numerator and denominator of at most
`MAX_STATIC_BITS` bits (so that exact arithmetic on it stays cheap).

Sensitivities the checker *derives* (products of many static factors) are
not refused but rounded up (`bounded_sensitivity`): beyond the largest
double they become infinite, and a denominator past the bound is rounded up
to a multiple of 2^-MAX_STATIC_BITS. Rounding a sensitivity up is sound.
"""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction

MAX_STATIC_BITS = 1100
#: A numeric literal longer than this is refused before it is converted (no
#: value within the bounds needs more than about 330 digits).
MAX_LITERAL_CHARS = 400
#: The largest decimal exponent written in a literal that is converted at all.
MAX_LITERAL_EXPONENT = 2000
#: The largest magnitude of a static value (the largest double), and the smallest non-zero one.
MAX_MAGNITUDE = Fraction(sys.float_info.max)
MIN_MAGNITUDE = Fraction(sys.float_info.min)

#: The most rounds of `loop[k]` and buckets of `group[k]`: `run` carries out
#: every round and allocates every bucket, and the accountant's exact methods
#: hold a point per composition; beyond this a count is refused (FZ217).
MAX_STATIC_COUNT = 1_000_000

#: The most rounds of `iterate[k]` (FZ217). Its state is an exact number that
#: may gain bits every round (`y / 2 + c` one bit, `y * 1.1` about seven), so
#: a run's work grows as the square of the rounds: at 10^6 rounds of
#: `y / 2 + sum[0, 1] db` it ran for more than 290 s after the charge
#: (review s30c); at 2^16 it takes about 2 s.
MAX_ITERATE_ROUNDS = 2**16

#: The most elements of an arithmetic range `[a, b .. c]` (FZ118): it is
#: desugared to a list literal of that many numbers, which the checker and
#: `run` (one score per `expmech` candidate) carry element by element.
MAX_RANGE_LENGTH = 100_000

#: The highest total power, and the most terms, of an epsilon written over a
#: definition's static parameters (`fuzzpy.language.symbolic.Poly`): each
#: of its coefficients, and its value at every call, is a static number in
#: range like any other (FZ217 otherwise), so the exact arithmetic of
#: instantiating it stays small.
MAX_STATIC_DEGREE = 32
MAX_STATIC_TERMS = 256

_SCALE = 1 << MAX_STATIC_BITS
_EXPONENT = re.compile(r"[eE]([+-]?)0*(\d+)\Z")


def in_static_range(value: Fraction) -> bool:
    """Whether an exact static value is within the bounds."""
    if value.numerator.bit_length() > MAX_STATIC_BITS or value.denominator.bit_length() > MAX_STATIC_BITS:
        return False
    return value == 0 or MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE


def literal_value(text: str) -> Fraction | None:
    """The exact value of a numeric literal, or None when it is out of range
    (checked on the text first, so that no huge number is ever built)."""
    if len(text) > MAX_LITERAL_CHARS:
        return None
    match = _EXPONENT.search(text)
    if match is not None and len(match.group(2)) > len(str(MAX_LITERAL_EXPONENT)):
        return None
    if match is not None and int(match.group(2)) > MAX_LITERAL_EXPONENT:
        return None
    value = Fraction(text)
    return value if in_static_range(value) else None


def bounded_sensitivity(value: Fraction) -> Fraction | None:
    """A derived sensitivity rounded up into range; None means infinity."""
    if value > MAX_MAGNITUDE:
        return None
    if value.denominator.bit_length() > MAX_STATIC_BITS:
        return Fraction(math.ceil(value * _SCALE), _SCALE)
    return value


__all__ = [
    "MAX_STATIC_COUNT",
    "MAX_ITERATE_ROUNDS",
    "MAX_STATIC_DEGREE",
    "MAX_STATIC_TERMS",
    "MAX_LITERAL_CHARS",
    "MAX_LITERAL_EXPONENT",
    "MAX_STATIC_BITS",
    "bounded_sensitivity",
    "in_static_range",
    "literal_value",
]
