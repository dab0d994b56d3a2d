"""`sigmoid`, exactly 1/4-Lipschitz as the checker claims (docs/semantics.md).

A float logistic function is not 1/4-Lipschitz at tiny scales: two inputs
one grid step apart (on a grid much finer than an ulp) may round to outputs
a whole ulp apart. What runs instead is the piecewise-linear interpolation S
of the logistic function sigma on the dyadic grid x_j = j h, h = 2^-8, with
node values rounded to multiples of 2^-40:

    S(x_j) = y_j = round(2^40 sigma(x_j)) / 2^40      for 0 <= j <= N = 32 / h,
    S(x)   = 1 - S(-x)                                 for x < 0,
    S(x)   = y_N                                       for x >= 32.

S is continuous and piecewise linear, so its Lipschitz constant is its
largest chord slope (y_{j+1} - y_j) / h. Why that is <= 1/4: sigma' is
even, at most 1/4 and decreasing on [0, inf), so the exact chord slopes are
largest on [0, h], where (sigma(h) - 1/2) / h = 1/4 - h^2/48 + O(h^4)
(sigma(x) = 1/2 + x/4 - x^3/48 + ...), i.e. below 1/4 by about 3.2e-7.
Rounding moves each node by at most 2^-41, hence a chord slope by at most
2^-40 / h = 2^-32 (about 2.3e-10): every chord of S is below 1/4. The table
is also checked exactly, chord by chord, when it is built (`_table`), so the
bound holds for the values that run, whatever the analysis. S is within
2e-7 of sigma everywhere (the interpolation error h^2 max|sigma''| / 8 plus
the rounding).

The node values are computed in integer fixed point (120 bits), so the table
is the same on every platform. At macro level S is evaluated exactly (with
`Fraction`s); per row, the same interpolation in doubles.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

from fuzzpy.support.lazy import lazy

np = lazy("numpy")

STEP_BITS = 8  # h = 2^-8
VALUE_BITS = 40  # node values are multiples of 2^-40
RANGE = 32  # S is flat beyond +/- 32
NODES = RANGE << STEP_BITS  # N
_FIXED = 120  # bits of the fixed-point computation of the nodes


def _exp_minus_step() -> int:
    """floor(e^-h 2^120), from the alternating Taylor series in exact rationals."""
    h = Fraction(1, 1 << STEP_BITS)
    total, term, k = Fraction(0), Fraction(1), 0
    while abs(term) > Fraction(1, 1 << (_FIXED + 16)):
        total += term
        k += 1
        term = term * (-h) / k
    return math.floor(total * (1 << _FIXED))


@cache
def _table() -> tuple[int, ...]:
    """Node values y_0..y_N in units of 2^-40, checked to be 1/4-Lipschitz."""
    one = 1 << _FIXED
    step = _exp_minus_step()
    power = one  # e^(-j h) in fixed point
    values = []
    for _ in range(NODES + 1):
        denominator = one + power  # (1 + e^-x) 2^120; sigma = 2^120 / denominator
        values.append((2 * (one << VALUE_BITS) + denominator) // (2 * denominator))  # rounded
        power = (power * step) >> _FIXED
    limit = 1 << (VALUE_BITS - STEP_BITS - 2)  # h/4 in units of 2^-40
    for a, b in zip(values, values[1:], strict=False):
        if not 0 <= b - a <= limit:
            raise AssertionError("the sigmoid table is not 1/4-Lipschitz")  # cannot happen (docstring)
    return tuple(values)


@cache
def _float_table() -> np.ndarray:
    return np.ldexp(np.array(_table(), dtype=np.float64), -VALUE_BITS)  # exact: 41-bit integers


def sigmoid_exact(x: int | Fraction) -> Fraction:
    """S(x) exactly."""
    if x < 0:
        return 1 - sigmoid_exact(-x)
    table = _table()
    scaled = Fraction(x) * (1 << STEP_BITS)
    j = math.floor(scaled)
    if j >= NODES:
        return Fraction(table[NODES], 1 << VALUE_BITS)
    t = scaled - j
    return (table[j] + t * (table[j + 1] - table[j])) / (1 << VALUE_BITS)


def sigmoid_rows(x: np.ndarray | np.generic) -> np.ndarray | np.generic:
    """S per row, in doubles (per-row results need only be deterministic)."""
    table = _float_table()
    d = np.asarray(x, dtype=np.float64)
    scaled = np.minimum(np.abs(d) * (1 << STEP_BITS), float(NODES))
    j = np.minimum(np.floor(scaled).astype(np.int64), NODES - 1)
    t = scaled - j
    y = table[j] + t * (table[j + 1] - table[j])
    result = np.where(d < 0, 1.0 - y, y)
    return result[()] if result.ndim == 0 else result
