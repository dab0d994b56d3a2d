"""Exact, order-independent aggregates: `sum[lo, hi]` and `vsum[c]`.

Casacuberta, Shoemate, Vadhan & Wagaman ("Widespread Underestimation of
Sensitivity in Differentially Private Libraries and How to Fix It", CCS 2022)
show that floating-point sums of clamped values can move by far more than
the clamp bound between neighbours (rounding depends on the order and on the
other rows) and that wrapping integer sums are worse. Here each row is first
mapped to an integer number of units of a fixed grid g = 2^e that depends
only on the static bound, then the integers are added exactly:

* `sum[lo, hi]`: row x contributes g * trunc(clamp(x, lo, hi) / g) (rounded
  toward zero, so never more than max(|lo|, |hi|) in size), with
  g = 2^(ceil(log2 max(|lo|, |hi|)) - 48): a row is at most 2^48 units.
* `vsum[c]`: row x is clipped to L2 norm c in doubles, each entry rounded
  toward zero onto g = 2^(ceil(log2 c) - 30), and the bound
  ||units|| <= c / g is then checked exactly in integers (rows that fail,
  through float error, are shrunk until they pass), so no row contributes
  more than c in L2 norm, whatever the float error of the clipping.

The sums of units are exact integers (int64 partial sums over chunks small
enough never to wrap, added as Python integers), so the result is the same
for any order of the rows and moves by at most the bound between neighbours:
exactly the checker's sensitivity. The result is an exact rational.
"""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.runtime.exact import DBL_MAX
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

SUM_UNIT_BITS = 48
VSUM_UNIT_BITS = 30
_CHUNK = 1 << 14  # rows per int64 partial sum: 2^14 * 2^48 <= 2^62


def _ceil_log2(x: Fraction) -> int:
    """The smallest e with 2^e >= x > 0."""
    e = x.numerator.bit_length() - x.denominator.bit_length()  # 2^(e-1) < x < 2^(e+1)
    return e if Fraction(2) ** e >= x else e + 1


def grid_exponent(bound: Fraction, bits: int) -> int:
    """e with bound / 2^e <= 2^bits (and > 2^(bits-1))."""
    return _ceil_log2(bound) - bits


def _trunc_units(x: Fraction, e: int) -> int:
    """trunc(x / 2^e), exactly."""
    scaled = x / Fraction(2) ** e
    return int(scaled)  # int() truncates toward zero


def _scale_factors(e: int) -> tuple[float, ...]:
    """Doubles whose product is 2^-e, each representable (|-e| may pass 1023)."""
    if -1022 <= -e <= 1023:
        return (float(2.0**-e),)
    half = -e // 2
    return (float(2.0**half), float(2.0 ** (-e - half)))


def clamped_sum(column: np.ndarray, lo: Fraction, hi: Fraction) -> Fraction:
    """The exact sum of g * trunc(clamp(x, lo, hi) / g) over the rows."""
    bound = max(abs(lo), abs(hi))
    if bound == 0 or column.size == 0:
        return Fraction(0)
    e = grid_exponent(bound, SUM_UNIT_BITS)
    low, high = float(_trunc_units(lo, e)), float(_trunc_units(hi, e))  # |.| <= 2^48: exact doubles
    factors = _scale_factors(e)
    total = 0
    buffer = np.empty(min(_CHUNK, column.size), dtype=np.float64)
    units = np.empty(buffer.size, dtype=np.int64)
    with np.errstate(all="ignore"):
        for start in range(0, column.size, _CHUNK):
            chunk = column[start : start + _CHUNK]
            total += _chunk_units(chunk, factors, low, high, buffer[: chunk.size], units[: chunk.size])
    return total * Fraction(2) ** e


def _chunk_units(
    chunk: np.ndarray, factors: tuple[float, ...], low: float, high: float, b: np.ndarray, u: np.ndarray
) -> int:
    """The sum of clip(trunc(x * 2^-e), low, high) over a chunk, exactly."""
    np.multiply(chunk, factors[0], out=b)  # exact scaling by a power of 2 (an int64 row: its nearest double)
    for factor in factors[1:]:
        np.multiply(b, factor, out=b)
    np.clip(b, low, high, out=b)
    np.copyto(u, b, casting="unsafe")  # truncates toward zero; low, high are integers
    part = int(u.sum())
    if not low * u.size <= part <= high * u.size:
        # only a NaN can land outside [low, high]; per-row results and loaded
        # data are finite, so this never runs: a NaN would count as 0
        np.clip(np.nan_to_num(b, nan=0.0), low, high, out=b)
        np.copyto(u, b, casting="unsafe")
        part = int(u.sum())
    return part


def vector_sum(rows: np.ndarray, c: Fraction, width: int) -> list[Fraction]:
    """The exact sum of the rows clipped to L2 norm c and rounded toward zero
    onto the grid, as exact numbers; `width` is the vectors' length."""
    from fuzzpy.runtime.vectors import clip_l2_rows

    if rows.size == 0 or c == 0:
        return [Fraction(0)] * width
    e = grid_exponent(c, VSUM_UNIT_BITS)
    limit = (c / Fraction(2) ** e) ** 2
    max_square = limit.numerator // limit.denominator  # ||units||^2 <= (c/g)^2, in integers
    # Clipping in doubles to c (1 - 2^-30) leaves room for its rounding error
    # (relative (d + 5) 2^-52), so the exact check below almost never acts.
    target = float(min(c, Fraction(DBL_MAX))) * (1 - 2.0**-30)
    factors = _scale_factors(e)
    totals = [0] * width
    for start in range(0, rows.shape[0], 1 << 20):
        clipped = clip_l2_rows(rows[start : start + (1 << 20)], target)
        for factor in factors:
            clipped = clipped * factor
        units = np.trunc(np.clip(clipped, -(2.0**62), 2.0**62)).astype(np.int64)
        units = _enforce_norm(units, max_square)
        partial = units.sum(axis=0, dtype=np.int64).tolist()  # |unit| <= 2^30, 2^20 rows: no wrap
        totals = [t + int(p) for t, p in zip(totals, partial, strict=True)]
    scale = Fraction(2) ** e
    return [t * scale for t in totals]


def _enforce_norm(units: np.ndarray, max_square: int) -> np.ndarray:
    """The exact check ||row||^2 <= max_square. Rows the double estimate
    cannot clear are checked in integers; a row that fails shrinks by 2^-20
    until it passes (deterministic, per row)."""
    if units.shape[1] == 0:
        return units
    estimate = np.einsum("ij,ij->i", units.astype(np.float64), units.astype(np.float64))
    suspects = np.flatnonzero(estimate > max_square * (1 - 2.0**-40))
    for i in suspects.tolist():
        row = [int(v) for v in units[i].tolist()]
        while sum(v * v for v in row) > max_square:
            row = [(1 if v > 0 else -1) * max(abs(v) - (abs(v) >> 20) - 1, 0) for v in row]
        units[i] = row
    return units
