"""Noisy releases on a power-of-two grid, safe against floating-point attacks.

Mironov (CCS 2012) showed that adding textbook floating-point Laplace noise
leaks the input through the set of representable outputs. Here noise never
touches a float: a release of the exact value x at Laplace scale b is

    g * (round(x / g) + Z),   Z ~ DLap(t): P(Z = z) proportional to exp(-|z| / t),

with a power-of-two granularity g fixed by b and the number of coordinates d
(never by the data, nor by whether x happens to be an integer) and the
integer t = ceil(b (1 + SLACK) / g), drawn by the exact sampler of Canonne,
Kamath & Steinke (2020). Rounding to the nearest grid point (half to even)
is monotone, so for queries with |x - x'|_1 <= s over d coordinates,
|round(x/g) - round(x'/g)|_1 <= s/g + d, and the release is
(s/g + d)/t <= eps (s + d g) / (1 + SLACK)-DP with eps = 1/b.

Statement (what the runtime guarantees): the query x is computed exactly --
macro-level arithmetic is exact, aggregates are exact integer sums of per-row
contributions bounded by their clamps, and `sigmoid` and `clip2` are exactly
as Lipschitz as the checker claims (docs/semantics.md) -- so x moves by at
most the sensitivity s the checker derived. The grid is g = 2^e with
e = floor(log2 b) - 32 - ceil(log2 d), so d g <= b 2^-32, and the release is
at most (eps s)-DP -- the cost the checker charged -- whenever
eps s >= 2^-23 (then d g <= s 2^-9 <= s SLACK / 2). (Half of SLACK once
covered floating-point error in computing x; queries are exact now, and it
is kept as margin.) `run` refuses, before charging, a program whose Laplace
or Gaussian events fall below that floor, or whose static numbers the
runtime cannot carry out (`refusals`); t < 2^58 (the samplers' range) holds
for every release of at most 2^24 coordinates, and a longer one is refused.

The Gaussian is the same with the discrete Gaussian (CKS Thm. 14/15: adding
N_Z(0, sigma_u^2) to an integer query of L2 sensitivity D is
D^2/(2 sigma_u^2)-zCDP): sigma_u = ceil(sigma (1 + SLACK) / g), L2 rounding
error <= sqrt(d) g, so rho <= s^2 / (2 sigma^2) whenever s / sigma >= 2^-23.

The released value g * N is exact (a dyadic rational); printing it as a
double is post-processing of an exactly private value, so it cannot weaken
the guarantee.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from fuzzpy.accounting.events import Event, Gaussian, Group, Laplace, Repeat, Sample, Subsample
from fuzzpy.language.figures import text_up
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import (
    discrete_gaussian,
    discrete_gaussian_array,
    discrete_laplace,
    discrete_laplace_ints,
    geometric,
)
from fuzzpy.runtime.values import RuntimeFailure
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

GRID_BITS = 32
SLACK = Fraction(1, 256)
#: Smallest eps * s (Laplace) or s / sigma (Gaussian) the grid serves exactly.
MIN_RELATIVE_COST = Fraction(1, 2**23)
#: The most coordinates one release may have (keeps t below 2^58).
MAX_RELEASE_ENTRIES = 2**24
_INT64_SAFE = 2**62
_FEW_DRAWS = 16


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > x else e


def _ceil_log2(n: int) -> int:
    return (n - 1).bit_length() if n > 1 else 0


def grid_exponent(scale: Fraction, spread: int) -> int:
    """e with g = 2^e and spread * g <= scale * 2^-32, where `spread` bounds the
    rounding error in grid units (d for L1, ceil(sqrt d) for L2)."""
    return _floor_log2(scale) - GRID_BITS - _ceil_log2(spread)


def _grid_units(scale_over_g: Fraction) -> int:
    return math.ceil(scale_over_g * (1 + SLACK))


def _check_entries(d: int) -> None:
    if d > MAX_RELEASE_ENTRIES:
        raise RuntimeFailure("FZ520", f"a release of {d} numbers is longer than the exact noise grid serves ({MAX_RELEASE_ENTRIES})")


def _to_units(values: np.ndarray, e: int) -> np.ndarray | list[int]:
    """round(x / 2^e) exactly (half to even): int64 when safe, Python
    integers otherwise. int64 and float64 entries stand for their exact
    values; object arrays hold exact ints and Fractions."""
    if values.dtype.kind in "iub" and e <= 0:
        ints = values.astype(np.int64)
        if ints.size == 0 or int(np.abs(ints).max()) < _INT64_SAFE >> (-e):
            return ints << np.int64(-e)
        return [int(v) << (-e) for v in ints.tolist()]
    if values.dtype.kind in "iufb":
        floats = values.astype(np.float64)
        with np.errstate(all="ignore"):
            scaled = np.rint(np.ldexp(floats, -e))  # exact scaling; round half to even (monotone)
        if scaled.size == 0 or (np.all(np.isfinite(scaled)) and float(np.abs(scaled).max()) < _INT64_SAFE):
            return scaled.astype(np.int64)
        values = np.array([Fraction(v) for v in floats.tolist()], dtype=object)
    grid = Fraction(2) ** e
    return [round(Fraction(v) / grid) for v in values.tolist()]


def _from_units(units: np.ndarray | list[int], e: int) -> np.ndarray:
    """g * N, exactly: a double array when every entry is one exactly, else an
    object array of exact values (doubles where they are exact, Fractions
    for the rest)."""
    if not isinstance(units, np.ndarray):
        units = np.array(units, dtype=object)
    if not -1074 <= e <= 971:
        return _fractions(units.tolist(), e)
    # Entries of 2^53 or more in size are not exact doubles (and may lie
    # beyond the double range): they become Fractions, the rest is scaled in
    # doubles. The mask is computed on the integers themselves.
    big = np.flatnonzero(np.abs(units) >= 2**53) if units.size else np.zeros(0, dtype=np.int64)
    if big.size == 0:
        return np.ldexp(units.astype(np.float64), e)
    small = np.ones(units.size, dtype=bool)
    small[big] = False
    out = np.empty(units.size, dtype=object)
    out[small] = np.ldexp(units[small].astype(np.float64), e).tolist() if small.any() else []
    out[big] = _fractions(units[big].tolist(), e)
    return out


def _fractions(items: list[int], e: int) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = [Fraction(int(u) << e) if e >= 0 else Fraction(int(u), 1 << -e) for u in items]
    return out


def _add(units: np.ndarray | list[int], noise: np.ndarray | list[int]) -> np.ndarray | list[int]:
    if isinstance(units, np.ndarray) and isinstance(noise, np.ndarray):
        if units.size and int(np.abs(units).max()) >= _INT64_SAFE - 2**60:
            return [int(a) + int(b) for a, b in zip(units.tolist(), noise.tolist(), strict=True)]
        return units + noise
    return [int(a) + int(b) for a, b in zip(list(units), list(noise), strict=True)]


def laplace_grid(scale: Fraction, entries: int) -> tuple[int, int]:
    """(e, t): the grid 2^e and the discrete Laplace's t of a release of
    ``entries`` numbers at scale b (also what its accuracy is computed from)."""
    e = grid_exponent(scale, max(entries, 1))
    return e, _grid_units(scale / Fraction(2) ** e)


def gauss_grid(sigma: Fraction, entries: int) -> tuple[int, int]:
    """(e, sigma_u): the grid and the discrete Gaussian's sigma in grid units."""
    spread = math.isqrt(max(entries, 1) - 1) + 1  # ceil(sqrt(d)): L2 rounding error
    e = grid_exponent(sigma, spread)
    return e, _grid_units(sigma / Fraction(2) ** e)


def laplace_release(values: np.ndarray, scale: Fraction, source: RandomSource) -> np.ndarray:
    """values + Laplace(scale) noise on the grid (module docstring), elementwise."""
    values = np.asarray(values)
    _check_entries(values.size)
    e, t = laplace_grid(scale, values.size)
    noise = discrete_laplace(t, values.size, source)
    return _from_units(_add(_to_units(values.ravel(), e), noise), e).reshape(values.shape)


def gauss_release(values: np.ndarray, sigma: Fraction, source: RandomSource) -> np.ndarray:
    """values + Gaussian(sigma) noise on the grid, elementwise (discrete Gaussian)."""
    values = np.asarray(values)
    _check_entries(values.size)
    e, sigma_units = gauss_grid(sigma, values.size)
    sigma2 = Fraction(sigma_units) ** 2
    # a few draws one at a time (no numpy arrays to set up), many in int64 batches
    noise = discrete_gaussian(sigma2, values.size, source) if values.size <= _FEW_DRAWS else \
        discrete_gaussian_array(sigma2, values.size, source)
    return _from_units(_add(_to_units(values.ravel(), e), noise), e).reshape(values.shape)


def laplace_release_one(value: int | Fraction, scale: Fraction, source: RandomSource) -> Fraction:
    """`laplace_release` of one exact number, on Python integers: the same
    grid, the same draw from the same words, the same value (g * N is exact
    in both: |N| < 2^53 is an exact double there, or a Fraction)."""
    e, t = _scalar_grid(scale)
    noise = discrete_laplace_ints(t, 1, source)[0]
    return Fraction(round(Fraction(value) / Fraction(2) ** e) + noise) * Fraction(2) ** e


@lru_cache(maxsize=256)
def _scalar_grid(scale: Fraction) -> tuple[int, int]:
    return laplace_grid(scale, 1)


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
    found = undiscretisable(events)
    return found[1] if found else None


def undiscretisable(events: tuple[Event, ...]) -> tuple[Event, str] | None:
    """The first event the grid cannot serve exactly, and why."""
    for event in events:
        if isinstance(event, Laplace) and 0 < event.epsilon < MIN_RELATIVE_COST:
            return event, f"a Laplace release costs only eps = {text_up(event.epsilon, 3)}"
        if isinstance(event, Gaussian) and 0 < event.sensitivity / event.sigma < MIN_RELATIVE_COST:
            ratio = float(event.sensitivity / event.sigma)
            return event, f"a Gaussian release has sensitivity / sigma = {ratio:.3g}"
        if isinstance(event, (Repeat, Subsample, Sample, Group)):
            found = undiscretisable(event.body)
            if found:
                return found
    return None
