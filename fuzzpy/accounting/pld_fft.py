"""Composing grid PLDs by FFT, with a proven bound on the result's error.

The composed P-masses are the convolution of the parts' masses (the losses
add). A plain floating-point FFT computes every composed mass to within
about 1e-16 of the largest one, which is useless for a delta of 1e-12.
So the convolution is computed for the exponentially tilted masses
p_j e^{t l_j} / M(t), whose convolution is the tilted composed masses
(e^{t(l + l')} = e^{tl} e^{tl'}), and untilted afterwards: with t near the
Chernoff order of the target delta the masses that matter, near the answer
epsilon, are the largest ones of the tilted vector, and the FFT's absolute
error, divided by the tilt, is a relative error there.

Error bound (every term computed and added):
* Tilting a part rounds each entry within a relative rho_i (from the sizes
  of the exponents); the exact convolution of the rounded entries is within
  a factor (1 - rho_i)^{-n_i} of the exact tilted composition.
* FFT, componentwise: a power-of-two FFT (pocketfft's radix-4 and radix-2
  passes, and the real-data pass) computes every output through at most
  L = 2 log2(N) + 4 levels, each an addition or a multiplication by a
  constant of modulus at most 1, whose rounding errs by at most 8 ulp of
  the magnitude it acts on (a complex product rounds within sqrt(5) ulp,
  Brent, Percival & Zimmermann 2007, its real form within 2 sqrt(2) ulp,
  twiddle factors within an ulp). The magnitudes at one level add up to at
  most sum |x_j|, and errors pass on unamplified, so every output errs by
  at most kappa sum |x_j| with kappa = 8 L ulp (the summation analysis of
  Higham 2002, ch. 4, applied along the FFT's graph; tests check it).
  Every frequency of a part's transform is thus within r_i = kappa ||x_i||_1.
* Powers and products, per frequency: with a = |computed X|, the exact and
  computed values both lie within a + r; telescoping the product,
  |prod X^n - prod X*^n| <= sum_i n_i r_i g_i with
  g_i = (a_i + r_i)^{n_i - 1} prod_{j != i} (a_j + r_j)^{n_j}; each complex
  multiplication adds a relative sqrt(5) ulp.
* Frequencies whose bound prod (a_i + r_i)^{n_i} is below e^-100 (its
  computed log; the rounding of that log is a relative few ulp, so e^-99
  bounds each) are set to 0 and e^-99 each is added to the spectrum's error.
* Inverse FFT: an entry is 1/N times a sum over the (full, Hermitian)
  spectrum, so a spectrum error of 1-norm E errs by E / N, and the inverse
  transform itself by kappa ||spectrum||_1 / N.
* Untilting: exp(log_scale - t l) rounds within a relative ulp of each of
  |l| t, |t l|, |log_scale| and the exponent, plus exp's own ulp; the
  exponent is linear in l, so these are largest at the window's ends and
  one factor (1 + 4 ulp (their sum + 2)) covers every entry.
The circular convolution adds to each window entry the mass that wraps
around, which can only increase the bound; mass outside the window is
bounded separately (Chernoff, `pld._window_tails`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import fft

from fuzzpy.accounting.pld_grid import GridPLD
from fuzzpy.accounting.pld_pairs import ULP
from fuzzpy.support.records import frozen

_SUBNORMAL = 2.0**-1000  # tilted entries below this are treated as absolute errors
_NEGLIGIBLE = -100.0  # log of a spectrum value small enough to drop
_DROPPED_BOUND = math.exp(_NEGLIGIBLE + 1.0)  # a bound of one dropped value (`compose`)


def fft_error_factor(size: int) -> float:
    """kappa of the module docstring for a transform of length ``size``
    (compounded: (1 + 8 ulp)^L - 1)."""
    levels = 2 * math.log2(size) + 4
    return math.expm1(levels * math.log1p(8 * ULP)) * (1 + 1e-6)


@frozen
class TiltedComposition:
    """Upper bounds ``masses`` of the composed P-masses at losses
    (first + i) * interval (each possibly up to ``shift`` larger), for the
    part of the window from grid index ``first`` up."""

    interval: float
    first: int
    masses: np.ndarray
    shift: float
    error: float  # the bound on each tilted entry's FFT error (for planning)


def compose(
    parts: Sequence[tuple[GridPLD, int]], tilt: float, low: int, size: int, first: int
) -> TiltedComposition:
    """The parts' composition (part i repeated n_i times) on the window of
    grid indices [low, low + size), ``size`` a power of two; the masses from
    index ``first`` (>= low) up are returned."""
    interval = parts[0][0].interval
    kappa = fft_error_factor(size)
    log_scale = 0.0  # sum n_i log M_i(t): the tilted vectors are divided by it
    rounding = 0.0  # sum n_i log(1 / (1 - rho_i))
    absolute = 0.0  # error from entries below the normal range
    multiplications = 0
    transforms = []
    bounds = []  # per part: (n, r = spectral error bound, log(a + r))
    for part, count in parts:
        tilted, log_m, rho, tiny = _tilted(part, tilt)
        log_scale += count * log_m
        rounding += count * -math.log1p(-rho)
        absolute += count * tiny
        folded = _fold(tilted, part.offset, low, size)
        transform = fft.rfft(folded)
        r = kappa * float(np.sum(folded)) * (1 + size * ULP)
        transforms.append(transform)
        log_ar = np.abs(transform)
        log_ar += r
        bounds.append((count, r, np.log(log_ar, out=log_ar)))
        multiplications += 2 * count.bit_length() + 1
    # frequencies whose product is below e^-100 even with the errors are left
    # out (set to 0): their whole value is added to the error instead
    log_all = sum(n * log_ar for n, _, log_ar in bounds)
    keep = np.flatnonzero(log_all > _NEGLIGIBLE)
    # each dropped value is below e^{-100} up to the rounding of log_all
    # (a relative few ulp per term): e^{-99} bounds it without an exp per entry
    dropped_sum = 2.0 * (log_all.size - keep.size) * _DROPPED_BOUND
    spectrum = np.zeros(size // 2 + 1, dtype=complex)
    kept = np.ones(keep.size, dtype=complex)
    for transform, (count, _, _) in zip(transforms, bounds, strict=True):
        kept *= _power(transform[keep], count)
    spectrum[keep] = kept
    kept_bounds = [(n, r, log_ar[keep]) for n, r, log_ar in bounds]
    error = (_spectral_error(kept_bounds, kept, multiplications) + dropped_sum) / size
    circular = fft.irfft(spectrum, size)
    error += kappa * _full_sum(np.abs(kept)) / size + absolute
    # every part was folded relative to `low`: the composed index s sits at
    # circular[(s - k low) mod N], k the number of parts composed
    total_count = sum(c for _, c in parts)
    start = min(max(first - low, 0), size)
    positions = (start + (low - total_count * low)) % size
    count = size - start
    tilted_masses = np.empty(count)
    head = min(size - positions, count)
    tilted_masses[:head] = circular[positions : positions + head]
    tilted_masses[head:] = circular[: count - head]
    losses = np.arange(low + start, low + start + count, dtype=float)  # integers: exact
    losses *= interval
    exponent = np.multiply(losses, -tilt)  # (log_scale + rounding) - tilt l, the same roundings
    exponent += log_scale + rounding
    # the computed exponent errs by an ulp of each of |l| t, |t l|, |log_scale|
    # and |exponent| (linear in the loss: both largest at an end of the window),
    # exp adds an ulp: a relative 4 ulp of their sum covers exp(exponent)'s
    # error; (1 - rho)^-n comes from `rounding`
    largest = 0.0
    if count:
        ends = (0, count - 1)
        largest = max(abs(float(exponent[i])) + 2 * abs(tilt * float(losses[i])) for i in ends)
        largest += abs(log_scale + rounding)
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN: capped by the caller
        masses = np.exp(exponent, out=exponent)
        tilted_masses += error
        np.maximum(tilted_masses, 0.0, out=tilted_masses)
        masses *= tilted_masses
        masses *= 1 + 4 * ULP * (largest + 2)
    shift = sum(c * p.shift for p, c in parts)
    return TiltedComposition(interval, low + start, masses, shift, error)


def _tilted(part: GridPLD, tilt: float) -> tuple[np.ndarray, float, float, float]:
    """(p_j e^{t l_j} / M(t) rounded, log M(t), relative error bound, absolute
    error from entries too small to carry a relative bound)."""
    log_probs = part.log_probs
    exponent = log_probs + tilt * part.losses
    top = float(np.max(exponent))
    log_m = top + math.log(float(np.sum(np.exp(exponent - top))))
    shifted = exponent - log_m
    tilted = np.exp(shifted)
    finite = np.isfinite(log_probs)
    # log, one multiplication, two subtractions and exp: each rounding is a
    # relative ulp of a term of size |log p|, |t l| or |log M|
    size = np.abs(log_probs[finite]) + np.abs(tilt * part.losses[finite]) + abs(log_m) + 2
    rho = 4 * ULP * float(np.max(size)) if size.size else 0.0
    small = tilted < _SUBNORMAL
    tiny = float(np.count_nonzero(small & finite)) * _SUBNORMAL
    tilted[small] = 0.0
    return tilted, log_m, min(rho, 0.5), tiny


def _fold(values: np.ndarray, offset: int, low: int, size: int) -> np.ndarray:
    """The values at grid indices offset + j, placed at (offset + j - low) mod size."""
    start = (offset - low) % size
    if values.size <= size - start:
        folded = np.zeros(size)
        folded[start : start + values.size] = values
        return folded
    positions = (start + np.arange(values.size)) % size
    return np.bincount(positions, weights=values, minlength=size)


def _power(z: np.ndarray, n: int) -> np.ndarray:
    """z**n by repeated squaring (each multiplication rounds within sqrt(5) ulp)."""
    result: np.ndarray | None = None
    z = z.copy()
    while n:
        if n & 1:
            result = z.copy() if result is None else np.multiply(result, z, out=result)
        n >>= 1
        if n:
            np.multiply(z, z, out=z)
    return np.ones_like(z) if result is None else result


def _full_sum(half: np.ndarray) -> float:
    """An upper bound of the sum over the full Hermitian spectrum of the
    non-negative ``half`` (its mirror image counted twice, DC and Nyquist
    included)."""
    return 2.0 * float(np.sum(half)) * (1 + half.size * ULP)


def _spectral_error(
    bounds: list[tuple[int, float, np.ndarray]], spectrum: np.ndarray, multiplications: int
) -> float:
    """An upper bound of the 1-norm (full spectrum) of computed minus exact
    product spectrum (module docstring)."""
    log_all = sum(n * log_ar for n, _, log_ar in bounds)
    total = 0.0
    for n, r, log_ar in bounds:
        if r == 0.0:
            continue
        g = np.subtract(log_all, log_ar)  # (a_i + r_i)^{n_i - 1} prod_{j != i} (a_j + r_j)^{n_j}
        np.exp(g, out=g)
        total += n * r * _full_sum(g)
    rounding = math.sqrt(5) * ULP * multiplications * 1.01
    return (total + rounding * _full_sum(np.abs(spectrum))) * (1 + 1e-6)
