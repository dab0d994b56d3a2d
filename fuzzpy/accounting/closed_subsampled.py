"""Exact epsilon of one Poisson-subsampled Laplace mechanism, certified.

With eps0 = s/b, the worst-case pair is f0 = Lap(0, b') and f1 = Lap(1, b'),
b' = 1/eps0, and Poisson subsampling at rate q gives the pairs
((1-q) f0 + q f1, f0) for removal and (f0, (1-q) f0 + q f1) for addition
(Zhu, Dong & Wang 2022, Thm 9). The ratio f1/f0 = e^{l(x)},
l(x) = (|x| - |x - 1|)/b', is non-decreasing, so each hockey-stick integral
is over a half-line cut where l(x) crosses a level, in closed form:

  removal:  delta = q S1(t) - (e^eps - 1 + q) S0(t),  l(t) = log((e^eps - 1 + q)/q)
  addition: delta = (1 - e^eps (1-q)) F0(t) - e^eps q F1(t),
            l(t) = log((1 - e^eps (1-q)) / (e^eps q)),

t clamped to [0, 1] (l is constant outside), S, F the Laplace tails and CDFs.
The epsilon is found in floats and then certified: the delta at the float
answer is evaluated in mpmath at 128 bits from the exact q and eps0, and the
answer is accepted only if that value plus an error allowance (far above the
rounding of a 128-bit evaluation of these few terms, each at most 2) is at
most the requested delta -- so the float returned is a proven upper bound.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

_PREC = 128
_ALLOWANCE = mpmath.mpf(2) ** -100  # >> rounding of ~30 operations on terms <= 2 at 128 bits


def _cut(b, level, lib):
    return min(max((b * level + 1) / 2, 0), 1)


def _cdf(x, centre, b, lib):
    y = (x - centre) / b
    return lib.exp(y) / 2 if y <= 0 else 1 - lib.exp(-y) / 2


def _delta(q, b, eps, lib) -> object:
    """max over both directions of the hockey-stick divergence at eps (lib:
    math for the search, mpmath for the certificate)."""
    e = lib.exp(eps)
    found = 0
    level = lib.log((e - 1 + q) / q)
    if level < 1 / b:
        t = _cut(b, level, lib)
        found = max(found, q * (1 - _cdf(t, 1, b, lib)) - (e - 1 + q) * (1 - _cdf(t, 0, b, lib)))
    if e * (1 - q) < 1:
        level = lib.log((1 - e * (1 - q)) / (e * q))
        if level > -1 / b:
            t = _cut(b, level, lib)
            found = max(found, (1 - e * (1 - q)) * _cdf(t, 0, b, lib) - e * q * _cdf(t, 1, b, lib))
    return found


def _certified(rate: Fraction, epsilon0: Fraction, eps: float, delta: float) -> bool:
    with mpmath.workprec(_PREC):
        q = mpmath.mpf(rate.numerator) / rate.denominator
        b = mpmath.mpf(epsilon0.denominator) / epsilon0.numerator
        return _delta(q, b, mpmath.mpf(eps), mpmath) + _ALLOWANCE <= delta


def subsampled_laplace_epsilon(rate: Fraction, epsilon0: Fraction, delta: float) -> float | None:
    """The smallest certified float epsilon of one subsampled Laplace at delta
    (None if the certificate fails, e.g. for extreme parameters)."""
    if not (0 < rate < 1 and epsilon0 > 0 and 0 < delta < 1) or epsilon0 > 700:
        return None
    q, b = float(rate), 1 / float(epsilon0)
    lo, hi = 0.0, math.log1p(q * math.expm1(float(epsilon0))) * (1 + 1e-9)
    if _delta(q, b, 0.0, math) <= delta and _certified(rate, epsilon0, 0.0, delta):
        return 0.0
    for _ in range(200):  # bisection in floats: delta(eps) is non-increasing
        mid = (lo + hi) / 2
        if not lo < mid < hi:
            break
        if _delta(q, b, mid, math) > delta:
            lo = mid
        else:
            hi = mid
    for _ in range(8):  # certify, stepping up if the float search was optimistic
        if _certified(rate, epsilon0, hi, delta):
            return hi
        hi = hi * (1 + 1e-12) + 1e-300
    return None
