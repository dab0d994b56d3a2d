"""The exact privacy of one Wishart release (`wishart[eps, delta, b, k]`).

The release (Sheffet, "Differentially private ordinary least squares", ICML
2017, Thm 3.1's mechanism; "Old techniques in differentially private linear
regression", ALT 2019, Sec. 3) is a sample S of the Wishart W_d(k, Sigma)
with Sigma = X^T X + w^2 I: S = sum_{i=1..k} g_i g_i^T, g_i ~ N(0, Sigma)
iid. The rows x of X are clipped to L2 norm b, so adding one row moves
Sigma to Sigma + v v^T with ||v||_2 <= b. The analysis below is this
module's own (docs/semantics.md, "`wishart`", gives it in full); the
constants of the papers are not used.

* S is a function of G = (g_1 .. g_k), so G's (eps, delta) bounds S's
  (post-processing). Whitening by Sigma_1^(-1/2) (one bijection applied to
  both) turns N(0, Sigma_1) vs N(0, Sigma_1 + v v^T) into N(0, I) vs
  N(0, I + u u^T) with ||u||^2 = a = v^T Sigma_1^(-1) v; a rotation taking u
  to e_1 leaves the other coordinates identical under both. The pair is
  P = N(0, 1)^k vs Q = N(0, 1 + a)^k, whose loss log p/q = (k/2) ln(1+a) -
  R a / (2 (1 + a)) depends on R = sum z_i^2 only (chi2_k under P,
  (1 + a) chi2_k under Q). Hence, with F_k / SF_k the chi-square CDF and
  survival function with k degrees of freedom,

      delta_{P||Q}(eps) = F_k(T) - e^eps F_k(T / (1 + a)),
                          T = (k ln(1 + a) - 2 eps) (1 + a) / a   (0 if T <= 0),
      delta_{Q||P}(eps) = SF_k(T' / (1 + a)) - e^eps SF_k(T'),
                          T' = (k ln(1 + a) + 2 eps) (1 + a) / a.

* a <= b^2 / w^2 because Sigma_1 >= w^2 I. The pair at a smaller a' is a
  post-processing of the pair at a: add independent N(0, t) to every
  coordinate of both and divide by sqrt(1 + t): N(0, 1) stays N(0, 1) and
  N(0, 1 + a) becomes N(0, 1 + a / (1 + t)); every a' in (0, a) is reached.
  So both deltas are non-decreasing in a and the worst case is a = b^2 / w^2.

`calibrate` picks w^2 = b^2 t with t the least point of the grid m 2^j
(1024 <= m < 2048) whose a = 1 / t has max(delta_{P||Q}, delta_{Q||P}) at
eps below delta (1 - 2^-20), evaluated in mpmath at 256 + log2(1 / delta) +
eps / ln 2 bits (`precision`): each delta is a difference of terms of size
at most e^eps, each computed to about 2^-256 of its size (mpmath's
regularized incomplete gamma at the working precision), so the absolute error
is below 2^-200 delta, covered many times over by the margin: the delta
claimed is never below the truth. The grid point above the least one fails the test, so w^2 is at
most 2^-10 relatively above the least value the analysis allows.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

#: Mantissa bits of the noise grid t = m 2^j (1024 <= m < 2048).
GRID_BITS = 10
#: The working precision, bits.
PRECISION = 256
#: The relative margin between the delta computed and the delta claimed.
MARGIN = Fraction(1, 2**20)
#: The range of exponents j searched (t from 2^-300 to 2^300).
_LOWEST, _HIGHEST = -300, 300


def delta_pq(a: Any, k: int, eps: Any) -> Any:
    """delta_{P||Q}(eps) for P = N(0, 1)^k, Q = N(0, 1 + a)^k (an mpmath number)."""
    import mpmath

    a, eps = mpmath.mpf(a), mpmath.mpf(eps)
    t = (k * mpmath.log1p(a) - 2 * eps) * (1 + a) / a
    if t <= 0:
        return mpmath.mpf(0)
    return _cdf(k, t) - mpmath.exp(eps) * _cdf(k, t / (1 + a))


def delta_qp(a: Any, k: int, eps: Any) -> Any:
    """delta_{Q||P}(eps) for the same pair (an mpmath number)."""
    import mpmath

    a, eps = mpmath.mpf(a), mpmath.mpf(eps)
    t = (k * mpmath.log1p(a) + 2 * eps) * (1 + a) / a
    return _sf(k, t / (1 + a)) - mpmath.exp(eps) * _sf(k, t)


def _cdf(k: int, x: Any) -> Any:
    import mpmath

    return mpmath.gammainc(mpmath.mpf(k) / 2, 0, mpmath.mpf(x) / 2, regularized=True)


def _sf(k: int, x: Any) -> Any:
    import mpmath

    return mpmath.gammainc(mpmath.mpf(k) / 2, mpmath.mpf(x) / 2, mpmath.inf, regularized=True)


def wishart_delta(a: Fraction, k: int, eps: Fraction) -> float:
    """max(delta_{P||Q}, delta_{Q||P}) at eps for the ratio a (a float, for display and tests)."""
    from mpmath import mp

    with mp.workprec(PRECISION + 64):
        return float(max(delta_pq(a, k, eps), delta_qp(a, k, eps), 0))


def precision(eps: Fraction, delta: Fraction) -> int:
    """Working bits: the deltas are differences of numbers up to e^eps in size
    that must be known to delta 2^-20 absolutely, so PRECISION bits beyond
    log2(1 / delta) + eps / ln 2."""
    return PRECISION + math.ceil(math.log2(delta.denominator / delta.numerator)) + math.ceil(float(eps) / math.log(2))


def _passes(t: Fraction, k: int, eps: Fraction, delta: Fraction) -> bool:
    import mpmath
    from mpmath import mp

    with mp.workprec(precision(eps, delta)):
        a = 1 / mpmath.mpf(t.numerator) * t.denominator
        bound = mpmath.mpf(delta.numerator) / delta.denominator * (1 - mpmath.mpf(MARGIN.numerator) / MARGIN.denominator)
        worst = max(delta_pq(a, k, eps), delta_qp(a, k, eps))
        return bool(worst <= bound)


def _grid(n: int) -> Fraction:
    """The n-th grid point: (1024 + n mod 1024) 2^(n div 1024 - 10), increasing in n."""
    j, m = divmod(n, 1 << GRID_BITS)
    return Fraction((1 << GRID_BITS) + m) * Fraction(2) ** (j - GRID_BITS)


@lru_cache(maxsize=64)
def calibrate_ratio(eps: Fraction, delta: Fraction, k: int) -> Fraction:
    """t = w^2 / b^2: the least grid point whose worst ratio a = 1 / t is (eps, delta)."""
    if not (eps > 0 and 0 < delta < 1 and k >= 1):
        raise ValueError("wishart needs eps > 0, 0 < delta < 1 and k >= 1")
    low, high = _LOWEST << GRID_BITS, _HIGHEST << GRID_BITS
    if not _passes(_grid(high), k, eps, delta):
        raise ValueError("no noise on the grid is enough at this (eps, delta)")
    if _passes(_grid(low), k, eps, delta):
        return _grid(low)
    while high - low > 1:  # invariant: low fails, high passes (delta decreases in t)
        mid = (low + high) // 2
        if _passes(_grid(mid), k, eps, delta):
            high = mid
        else:
            low = mid
    return _grid(high)


def noise_variance(eps: Fraction, delta: Fraction, bound: Fraction, k: int) -> Fraction:
    """w^2 for `wishart[eps, delta, b, k]`: b^2 times `calibrate_ratio`."""
    return bound * bound * calibrate_ratio(Fraction(eps), Fraction(delta), int(k))
