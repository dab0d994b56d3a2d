"""`wishart[eps, delta, b, k] db`: an exact sample of W_d(k, X^T X + w^2 I).

What runs (docs/semantics.md, "`wishart`"; the privacy analysis and the
choice of w^2 are `fuzzpy.accounting.wishart`):

1. Each row x is clipped to L2 norm b and rounded toward zero onto the grid
   g = 2^(floor(log2 b) - ROW_BITS), as an integer vector u with
   ||u||^2 g^2 <= b^2 checked in integers (`aggregates._enforce_norm`): a
   deterministic map of one row, so one row added or removed moves
   M = sum u u^T by one u u^T, and Sigma = g^2 M + w^2 I by v v^T with
   ||v||_2 <= b. M is an exact integer matrix (`_outer_sum`): Sigma is
   rational.
2. Sigma = L D L^T exactly (L unit lower triangular, D > 0 diagonal, both
   rational: Sigma >= w^2 I is positive definite). g_i = L D^(1/2) z_i with
   z_i of exact N(0, 1) draws (`lazy_reals.GaussDraw`), so g_i ~ N(0, Sigma).
3. The released matrix is S / k - w^2 I, S = sum g_i g_i^T, each entry
   rounded to the nearest multiple of 2^OUT (half to even, never reached:
   a grid midpoint has probability 0). The entries are known through
   intervals (the draws' dyadic intervals, L and sqrt(D_m) to 2^-F outward,
   interval products and sums in integers counting units of 2^-F, rounded
   outward after each product); every draw is refined, and F raised, until
   each entry's interval lies strictly inside one rounding cell. No floating point touches
   a value before it is rounded; the rounding is post-processing, and the
   grid 2^OUT is fixed by w^2 and k only (public).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.runtime.lazy_reals import FIRST_STEP, MAX_STEP, GaussDraw
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.values import RuntimeFailure
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

if TYPE_CHECKING:
    import numpy

#: Rows are kept to 2^-ROW_BITS of b (relative), in integers of at most 2^27.
ROW_BITS = 26
#: The output grid lies OUT_BITS below w^2 / k (the noise's scale is above it).
OUT_BITS = 40
#: The most draws (k d) one release may make, and the largest k.
MAX_DRAWS = 1 << 14
MAX_K = 4096
_CHUNK = 1 << 16
_HALF = 14  # u = hi 2^14 + lo, 0 <= lo < 2^14, |hi| <= 2^13: int64 products below 2^28
Interval = tuple[Fraction, Fraction]


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > x else e


def row_grid(bound: Fraction) -> int:
    """e with the rows' grid 2^e = 2^(floor(log2 b) - ROW_BITS)."""
    return _floor_log2(bound) - ROW_BITS


def output_grid(w2: Fraction, k: int) -> int:
    """e with the released entries' grid 2^e: OUT_BITS below w^2 / k."""
    return _floor_log2(w2 / k) - OUT_BITS


def second_moment(rows: numpy.ndarray, bound: Fraction) -> list[list[Fraction]]:
    """X^T X of the rows clipped to L2 norm b and rounded toward zero onto
    the rows' grid (step 1 of the module docstring), exactly."""
    from fuzzpy.runtime.aggregates import _enforce_norm, _scale_factors
    from fuzzpy.runtime.vectors import clip_l2_rows

    d = int(rows.shape[1])
    e = row_grid(bound)
    limit = (bound / Fraction(2) ** e) ** 2
    max_square = limit.numerator // limit.denominator
    target = float(bound) * (1 - 2.0**-30)
    totals = [[0] * d for _ in range(d)]
    for start in range(0, rows.shape[0], _CHUNK):
        clipped = clip_l2_rows(rows[start:start + _CHUNK], target)
        for factor in _scale_factors(e):
            clipped = clipped * factor
        units = _enforce_norm(np.trunc(np.clip(clipped, -(2.0**62), 2.0**62)).astype(np.int64), max_square)
        partial = _outer_sum(units)
        totals = [[t + int(p) for t, p in zip(trow, prow, strict=True)] for trow, prow in zip(totals, partial, strict=True)]
    scale = Fraction(2) ** (2 * e)
    return [[t * scale for t in row] for row in totals]


def _outer_sum(units: numpy.ndarray) -> list[list[int]]:
    """sum u u^T over the rows, exactly: each |u| <= 2^27 is split in two
    halves whose int64 products (below 2^28) summed over at most 2^16 rows
    stay below 2^44."""
    hi = units >> _HALF
    lo = units - (hi << _HALF)
    parts = ((hi.T @ hi).tolist(), (hi.T @ lo).tolist(), (lo.T @ hi).tolist(), (lo.T @ lo).tolist())
    d = units.shape[1]
    return [[(int(parts[0][i][j]) << (2 * _HALF)) + ((int(parts[1][i][j]) + int(parts[2][i][j])) << _HALF)
             + int(parts[3][i][j]) for j in range(d)] for i in range(d)]


def ldl(sigma: list[list[Fraction]]) -> tuple[list[list[Fraction]], list[Fraction]]:
    """Sigma = L D L^T exactly, for a symmetric positive definite Sigma."""
    d = len(sigma)
    lower = [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]
    diag: list[Fraction] = []
    for j in range(d):
        dj = sigma[j][j] - sum((lower[j][m] ** 2 * diag[m] for m in range(j)), Fraction(0))
        if dj <= 0:
            raise RuntimeFailure("FZ519", "the Wishart scale matrix is not positive definite")
        diag.append(dj)
        for i in range(j + 1, d):
            lower[i][j] = (sigma[i][j] - sum((lower[i][m] * lower[j][m] * diag[m] for m in range(j)), Fraction(0))) / dj
    return lower, diag


def _isqrt_units(x: Fraction, bits: int) -> tuple[int, int]:
    """(lo, hi) with lo 2^-bits <= sqrt(x) <= hi 2^-bits (x > 0)."""
    low = math.isqrt((x.numerator << (2 * bits)) // x.denominator)
    m = -((-x.numerator << (2 * bits)) // x.denominator)
    high = math.isqrt(m)
    return low, (high if high * high == m else high + 1)


def _units(x: Fraction, bits: int) -> tuple[int, int]:
    """(floor, ceil) of x 2^bits."""
    scaled = x.numerator << bits
    return scaled // x.denominator, -(-scaled // x.denominator)


def _shift_down(lo: int, hi: int, bits: int) -> tuple[int, int]:
    """An interval of units of 2^-2F brought to units of 2^-F, outward."""
    return lo >> bits, -((-hi) >> bits)


def _mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    products = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(products), max(products)


def _square(a: tuple[int, int]) -> tuple[int, int]:
    low, high = sorted((a[0] * a[0], a[1] * a[1]))
    return (0 if a[0] <= 0 <= a[1] else low), high


def _draw_units(draw: GaussDraw, bits: int) -> tuple[int, int]:
    low, high, known = draw.bounds()
    return (low << (bits - known), high << (bits - known)) if bits >= known else _shift_down(low, high, known - bits)


def _entries(lower: list[list[Fraction]], diag: list[Fraction], draws: list[list[GaussDraw]],
             k: int, w2: Fraction, bits: int) -> list[list[Interval]]:
    """Intervals holding every entry of S / k - w^2 I at the draws' current
    digits: fixed-point integer interval arithmetic in units of 2^-bits
    (products in units of 2^-2 bits, brought back outward), so every
    enclosure holds the exact value."""
    d = len(lower)
    roots = [_isqrt_units(x, bits) for x in diag]
    coefficients = [[_units(lower[j][m], bits) for m in range(j + 1)] for j in range(d)]
    total = [[[0, 0] for _ in range(d)] for _ in range(d)]
    for row in draws:
        h = [_shift_down(*_mul(roots[m], _draw_units(row[m], bits)), bits) for m in range(d)]
        g = []
        for j in range(d):
            lo = hi = 0
            for m in range(j + 1):
                a, b = _mul(coefficients[j][m], h[m])
                lo, hi = lo + a, hi + b
            g.append(_shift_down(lo, hi, bits))
        for j in range(d):
            gj = g[j]
            for m in range(j, d):
                a, b = _square(gj) if j == m else _mul(gj, g[m])
                cell = total[j][m]
                cell[0] += a
                cell[1] += b
    out = [[(Fraction(0), Fraction(0)) for _ in range(d)] for _ in range(d)]
    unit = 1 << (2 * bits)
    for j in range(d):
        for m in range(j, d):
            shift = w2 if j == m else Fraction(0)
            lo, hi = total[j][m]
            out[j][m] = out[m][j] = (Fraction(lo, unit * k) - shift, Fraction(hi, unit * k) - shift)
    return out


def _rounded(interval: Interval, e: int) -> int | None:
    """n with the interval strictly inside ((n - 1/2) 2^e, (n + 1/2) 2^e), or None."""
    grid = Fraction(2) ** e
    n = math.floor(interval[0] / grid + Fraction(1, 2))
    return n if (n - Fraction(1, 2)) * grid < interval[0] and interval[1] < (n + Fraction(1, 2)) * grid else None


def sample_release(sigma: list[list[Fraction]], k: int, w2: Fraction, source: RandomSource) -> list[list[Fraction]]:
    """S / k - w^2 I for S ~ W_d(k, Sigma), each entry rounded to the output grid."""
    d = len(sigma)
    if d == 0:
        return []
    return release_of(sigma, [[GaussDraw(source) for _ in range(d)] for _ in range(k)], w2)


def release_of(sigma: list[list[Fraction]], draws: list[list[GaussDraw]], w2: Fraction) -> list[list[Fraction]]:
    """`sample_release` for given N(0, 1) draws (k rows of d), refined as the rounding needs."""
    k = len(draws)
    lower, diag = ldl(sigma)
    flat = [x for row in draws for x in row]
    e = output_grid(w2, k)
    step = FIRST_STEP
    while True:
        # fixed point: finer than every draw's digits and than the output grid
        bits = max(x.known for x in flat) + max(0, -e) + 2 * step
        intervals = _entries(lower, diag, draws, k, w2, bits)
        units = [[_rounded(cell, e) for cell in row] for row in intervals]
        if all(u is not None for row in units for u in row):
            grid = Fraction(2) ** e
            return [[int(u) * grid for u in row if u is not None] for row in units]
        target = min(x.known for x in flat) + step
        for x in flat:
            if x.known < target:
                x.refine(target - x.known)
        step = min(2 * step, MAX_STEP)
