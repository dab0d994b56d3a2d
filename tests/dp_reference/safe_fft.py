"""Convolution of non-negative vectors by FFT, with a proven bound on its
floating-point error, and float powers with a proven relative error.

The FFT is the radix-2 Cooley-Tukey algorithm (bit-reversed input,
decimation in time), written here so that Higham's bound applies to it
exactly: with computed twiddle factors |w^ - w| <= mu and
eta = mu + gamma_4 (sqrt 2 + mu), the computed y^ = fl(F x) satisfies

    ||y^ - y||_2 <= phi ||y||_2,   phi = L eta / (1 - L eta),  L = log2 N

(Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 24.2).
The twiddles are cos/sin of exact binary angles computed in mpmath and
rounded to nearest, so mu = u |w| = u (u = 2^-53). Complex products carry
|fl(ab) - ab| <= sqrt 2 gamma_2 |ab| (Higham Lemma 3.5). `convolve` turns
these into an entrywise bound E on the linear convolution a * b, computed
as IFFT(FFT a . FFT b) with zero padding:

    ||c^ - c||_inf <= ||c^ - c||_2 <= E(||a||_1, ||a||_2, ||b||_1, ||b||_2, N)

(derivation beside `error_bound`). Underflow adds at most one subnormal
unit per operation, covered by an absolute term.
"""

from __future__ import annotations

import math
import os
import tempfile
from functools import lru_cache
from pathlib import Path

import mpmath as mp
import numpy as np

U = 2.0**-53
TINY = 2.0**-1000  # relative floor: entries below TINY * max are dropped / lifted


def gamma(n: float) -> float:
    return n * U / (1 - n * U)


@lru_cache(maxsize=32)
def _twiddles(n: int) -> np.ndarray:
    """w_k = exp(-2 pi i k / n), k < n/2, each part rounded to nearest from
    mpmath (cached on disk: minutes of mpmath at n = 2^21)."""
    path = Path(tempfile.gettempdir()) / "fuzzpy-dp-reference" / f"twiddles-v1-{n}.npy"
    if path.exists():
        return np.load(path)
    out = _exact_twiddles(n)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(partial, out)
    os.replace(partial, path)
    return out


def _exact_twiddles(n: int) -> np.ndarray:
    """mpmath on the first octant only; the rest by the exact symmetries
    cos(pi/2 - a) = sin a and cos(pi - a) = -cos a (the same real numbers,
    so the same nearest floats)."""
    k = np.arange(n // 2)
    cos, sin = np.empty(n // 2), np.empty(n // 2)
    eighth = n // 8 if n >= 8 else n // 2 - 1
    with mp.workdps(25):
        for j in range(eighth + 1):
            angle = mp.mpf(2 * j) / n  # exact: n is a power of two
            cos[j], sin[j] = float(mp.cospi(angle)), float(mp.sinpi(angle))
    if n >= 8:
        second = (k > eighth) & (k <= n // 4)
        cos[second], sin[second] = sin[n // 4 - k[second]], cos[n // 4 - k[second]]
        third = k > n // 4
        cos[third], sin[third] = -cos[n // 2 - k[third]], sin[n // 2 - k[third]]
    return cos - 1j * sin


@lru_cache(maxsize=32)
def _bit_reversal(n: int) -> np.ndarray:
    bits = n.bit_length() - 1
    index = np.arange(n)
    reversed_index = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        reversed_index |= ((index >> b) & 1) << (bits - 1 - b)
    return reversed_index


def fft(x: np.ndarray) -> np.ndarray:
    """Radix-2 decimation-in-time DFT, y_k = sum_j x_j exp(-2 pi i jk / n)."""
    n = x.size
    y = x.astype(np.complex128)[_bit_reversal(n)]
    twiddles = _twiddles(n)
    half = 1
    while half < n:
        blocks = y.reshape(-1, 2, half)
        w = twiddles[:: n // (2 * half)][:half]
        odd = blocks[:, 1, :] * w
        even = blocks[:, 0, :]
        y = np.stack((even + odd, even - odd), axis=1).reshape(n)
        half *= 2
    return y


def ifft(y: np.ndarray) -> np.ndarray:
    """Inverse DFT: conj(F conj y) / n (both steps exact but F)."""
    return np.conj(fft(np.conj(y))) / y.size


def phi(n: int) -> float:
    """Higham Thm 24.2's relative 2-norm error of one FFT of length n."""
    levels = n.bit_length() - 1
    mu = U
    eta = mu + gamma(4) * (math.sqrt(2) + mu)
    return levels * eta / (1 - levels * eta)


def error_bound(a1: float, a2: float, b1: float, b2: float, n: int) -> float:
    """Entrywise bound on |c^ - a * b| for norms a1 = ||a||_1, a2 = ||a||_2
    (upper bounds), and so for b, at FFT length n.

    With A = F a (||A||_2 = sqrt n ||a||_2, ||A||_inf <= ||a||_1), A^ its
    computed value (||A^ - A||_2 <= f sqrt n a2, f = phi(n)), W^ = fl(A^ . B^):
      ||W^ - A.B||_2 <= sqrt2 g2 ||A^.B^||_2 + ||A^ - A||_2 ||B^||_inf + ||A||_inf ||B^ - B||_2
      ||A^.B^||_2 <= ||A^||_inf ||B^||_2 <= (a1 + f sqrt n a2)(1 + f) sqrt n b2
      ||B^||_inf <= b1 + f sqrt n b2
    and the inverse transform (1/n) F* adds f ||W^||_2 / sqrt n, with
    ||W^||_2 <= ||A.B||_2 + ||W^ - A.B||_2 <= a1 sqrt n b2 + ||W^ - A.B||_2.
    Everything is divided by sqrt n at the end (||(1/n) F* v||_2 = ||v||_2 / sqrt n)."""
    f = phi(n)
    root = math.sqrt(n)
    product = (a1 + f * root * a2) * (1 + f) * b2  # ||A^.B^||_2 / sqrt n
    dw = (
        math.sqrt(2) * gamma(2) * product
        + f * a2 * (b1 + f * root * b2)
        + a1 * f * b2
    )  # ||W^ - A.B||_2 / sqrt n
    total = dw + f * (a1 * b2 + dw)
    underflow = 4 * n * (n.bit_length() + 2) * 2.0**-1074
    return total * (1 + 1e-6) + underflow


def norms(v: np.ndarray) -> tuple[float, float]:
    """Upper bounds on ||v||_1 and ||v||_2 of a non-negative vector (the
    float sums' relative error is at most gamma_n; 1e-8 covers n < 2^26)."""
    return float(np.sum(v)) * (1 + 1e-8), math.sqrt(float(np.dot(v, v))) * (1 + 1e-8)


def convolve(a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """Entrywise an upper (``upper``) or lower bound on the linear convolution
    of the exact vectors that ``a`` and ``b`` bound the same way (all >= 0)."""
    length = a.size + b.size - 1
    n = 1 << max((length - 1).bit_length(), 1)
    pad_a = np.zeros(n)
    pad_a[: a.size] = a
    fa = fft(pad_a)
    if a is b:
        fb = fa
    else:
        pad_b = np.zeros(n)
        pad_b[: b.size] = b
        fb = fft(pad_b)
    c = ifft(fa * fb).real[:length]
    a1, a2 = norms(a)
    b1, b2 = (a1, a2) if a is b else norms(b)
    e = error_bound(a1, a2, b1, b2, n)
    if upper:
        return np.maximum(np.nextafter(c + e, np.inf), 0.0)
    return np.maximum(np.nextafter(c - e, -np.inf), 0.0)


def tilt_factors(t: float, h: float, first: int, count: int, block: int = 1024):
    """exp(t h j) for j = first .. first + count - 1, as float mantissas m_j
    and one integer exponent per entry (value m_j 2^e_j), with a bound on
    each mantissa's relative error. Anchors exp(t h j0) come from mpmath at
    every ``block``-th j; in between a running product of r = exp(t h)
    rounded to nearest: at most 2i + 3 roundings (Higham Lemma 3.1)."""
    block = max(1, min(block, int(500 / max(abs(t * h), 1e-300))))  # no overflow in a block
    mantissas = np.empty(count)
    exponents = np.empty(count, dtype=np.int64)
    bound = np.empty(count)
    with mp.workdps(30):
        r = float(mp.exp(mp.mpf(t) * mp.mpf(h)))
        for start in range(0, count, block):
            size = min(block, count - start)
            anchor = mp.exp(mp.mpf(t) * mp.mpf(h) * (first + start))
            mantissa, exponent = mp.frexp(anchor)
            run = float(mantissa) * np.cumprod(np.concatenate(([1.0], np.full(size - 1, r))))
            mantissas[start : start + size] = run
            exponents[start : start + size] = int(exponent)
            i = np.arange(size, dtype=float)
            bound[start : start + size] = (2 * i + 3) * U / (1 - (2 * i + 3) * U)
    return mantissas, exponents, bound
