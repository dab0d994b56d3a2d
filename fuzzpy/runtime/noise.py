"""Noisy releases on a power-of-two grid, safe against floating-point attacks.

Mironov (CCS 2012) showed that adding textbook floating-point Laplace noise
leaks the input through the set of representable outputs. Here noise never
touches a float: a release of x at Laplace scale b is

    g * (round(x / g) + Z),   Z ~ DLap(t): P(Z = z) proportional to exp(-|z| / t),

with a power-of-two granularity g fixed by b (never by the data) and the
integer t = ceil(b (1 + SLACK) / g), drawn by the exact sampler of Canonne,
Kamath & Steinke (2020). Rounding to the nearest grid point is monotone, so
for queries with |x - x'|_1 <= s over d coordinates,
|round(x/g) - round(x'/g)|_1 <= s/g + d, and the release is
(s/g + d)/t <= eps (s + d g) / (1 + SLACK)-DP with eps = 1/b.

Statement (what the runtime guarantees): the grid is g = 2^e with
e = floor(log2 b) - 32 - ceil(log2 d), so d g <= b 2^-32, and the release is
at most (eps s)-DP -- the cost the checker charged -- whenever
eps s >= 2^-23 (then d g <= s 2^-9 = s SLACK / 2). The other half of the
slack covers floating-point error in computing x itself: a query whose
computed value moves by up to s (1 + 2^-9) between neighbours still meets
the bound. (numpy's pairwise summation of n clamped floats errs by at most
about log2(n) 2^-53 n s, below s 2^-9 for any n under 10^11.) Integer-valued queries (counts,
histograms, clamped sums of int columns) get the grid g = min(b 2^-20, 1),
are multiples of it already and are never rounded: for them the bound
s/(g t) <= eps s / (1 + SLACK) holds unconditionally.
`run` refuses, before charging, a program whose Laplace or Gaussian events
fall below that floor (`check_discretisable`).

The Gaussian is the same with the discrete Gaussian (CKS Thm. 14/15: adding
N_Z(0, sigma_u^2) to an integer query of L2 sensitivity D is
D^2/(2 sigma_u^2)-zCDP): sigma_u = ceil(sigma (1 + SLACK) / g), L2 rounding
error <= sqrt(d) g, so rho <= s^2 / (2 sigma^2) whenever s / sigma >= 2^-23.

The final conversion of the integer g * N to a float is post-processing of
an exactly private integer, so it cannot weaken the guarantee.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from fuzzpy.accounting.events import Event, Gaussian, Group, Laplace, Repeat, Subsample
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import discrete_gaussian, discrete_laplace, geometric

GRID_BITS = 32
#: Integer queries are never rounded, so a coarser grid loses nothing and
#: keeps every draw within 32-bit integers (half the random bits).
INTEGER_GRID_BITS = 20
SLACK = Fraction(1, 256)
#: Smallest eps * s (Laplace) or s / sigma (Gaussian) the grid serves exactly.
MIN_RELATIVE_COST = Fraction(1, 2**23)
_INT64_SAFE = 2**62


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > x else e


def _ceil_log2(n: int) -> int:
    return (n - 1).bit_length() if n > 1 else 0


def grid_exponent(scale: Fraction, spread: int, integer_valued: bool) -> int:
    """e with g = 2^e and spread * g <= scale * 2^-32, where `spread` bounds the
    rounding error in grid units (d for L1, ceil(sqrt d) for L2); integer
    queries are never rounded and get g = min(scale 2^-20, 1)."""
    if integer_valued:
        return min(_floor_log2(scale) - INTEGER_GRID_BITS, 0)
    return _floor_log2(scale) - GRID_BITS - _ceil_log2(spread)


def _grid_units(scale_over_g: Fraction) -> int:
    return math.ceil(scale_over_g * (1 + SLACK))


def _to_units(values: np.ndarray, e: int) -> np.ndarray | list[int]:
    """round(x / 2^e) exactly: int64 when safe, Python integers otherwise."""
    if values.dtype.kind in "iub" and e <= 0:
        ints = values.astype(np.int64)
        if ints.size == 0 or int(np.abs(ints).max()) < _INT64_SAFE >> (-e):
            return ints << np.int64(-e)
        return [int(v) << (-e) for v in ints.tolist()]
    floats = values.astype(np.float64)
    if not np.all(np.isfinite(floats)):
        raise ValueError("cannot add noise to a value that is not a finite number")
    scaled = np.rint(np.ldexp(floats, -e))  # exact scaling; round half to even (monotone)
    if scaled.size == 0 or float(np.abs(scaled).max()) < _INT64_SAFE:
        return scaled.astype(np.int64)
    return [round(Fraction(v) / Fraction(2) ** e) for v in floats.tolist()]


def _from_units(units: np.ndarray | list[int], e: int) -> np.ndarray:
    if isinstance(units, np.ndarray):
        return np.ldexp(units.astype(np.float64), e)
    return np.array([float(Fraction(u) * Fraction(2) ** e) for u in units], dtype=np.float64)


def _add(units: np.ndarray | list[int], noise: np.ndarray | list[int]) -> np.ndarray | list[int]:
    if isinstance(units, np.ndarray) and isinstance(noise, np.ndarray):
        if units.size and int(np.abs(units).max()) >= _INT64_SAFE - 2**60:
            return [int(a) + int(b) for a, b in zip(units.tolist(), noise.tolist(), strict=True)]
        return units + noise
    return [int(a) + int(b) for a, b in zip(list(units), list(noise), strict=True)]


def laplace_release(values: np.ndarray, scale: Fraction, source: RandomSource) -> np.ndarray:
    """values + Laplace(scale) noise on the grid (module docstring), elementwise."""
    values = np.asarray(values)
    integer_valued = values.dtype.kind in "iub"
    e = grid_exponent(scale, max(values.size, 1), integer_valued)
    t = _grid_units(scale / Fraction(2) ** e)
    noise = discrete_laplace(t, values.size, source)
    return _from_units(_add(_to_units(values.ravel(), e), noise), e).reshape(values.shape)


def gauss_release(values: np.ndarray, sigma: Fraction, source: RandomSource) -> np.ndarray:
    """values + Gaussian(sigma) noise on the grid, elementwise (discrete Gaussian)."""
    values = np.asarray(values)
    integer_valued = values.dtype.kind in "iub"
    spread = math.isqrt(max(values.size, 1) - 1) + 1  # ceil(sqrt(d)): L2 rounding error
    e = grid_exponent(sigma, spread, integer_valued)
    sigma_units = _grid_units(sigma / Fraction(2) ** e)
    noise = discrete_gaussian(Fraction(sigma_units) ** 2, values.size, source)
    units = _to_units(values.ravel(), e)
    total = [int(a) + b for a, b in zip(list(units), noise, strict=True)]
    return _from_units(total, e).reshape(values.shape)


@lru_cache(maxsize=256)
def _scalar_grid(scale: Fraction) -> tuple[int, int]:
    e = grid_exponent(scale, 1, False)
    return e, _grid_units(scale / Fraction(2) ** e)


def lap_draw(scale: Fraction, source: RandomSource) -> Fraction:
    """One Laplace(scale) draw on the grid g = 2^(floor(log2 b) - 32), for
    mechanisms, as the exact rational g * Z.

    Shifting the draw by a multiple a of g costs |a| / (g t) <= |a| / b: the
    coupling proofs of the verifier carry over for grid-multiple alignments.
    """
    e, t = _scalar_grid(scale)
    return Fraction(int(discrete_laplace(t, 1, source)[0])) * Fraction(2) ** e


def lapplus_draw(scale: Fraction, source: RandomSource) -> Fraction:
    """One one-sided (exponential, scale b) draw on the same grid as `lap_draw`."""
    e, t = _scalar_grid(scale)
    return Fraction(int(geometric(t, 1, source)[0])) * Fraction(2) ** e


def check_discretisable(events: tuple[Event, ...]) -> str | None:
    """Why the grid cannot serve these events exactly, or None when it can."""
    for event in events:
        if isinstance(event, Laplace) and 0 < event.epsilon < MIN_RELATIVE_COST:
            return f"a Laplace release costs only eps = {float(event.epsilon):.3g}"
        if isinstance(event, Gaussian) and 0 < event.sensitivity / event.sigma < MIN_RELATIVE_COST:
            return f"a Gaussian release has sensitivity / sigma = {float(event.sensitivity / event.sigma):.3g}"
        if isinstance(event, (Repeat, Subsample, Group)):
            reason = check_discretisable(event.body)
            if reason:
                return reason
    return None
