"""k-fold randomized response, the worst case of k-fold (eps0, delta0)-DP,
and the certificate that makes KOV's epsilon a proven bound.

Kairouz, Oh & Viswanath 2015 (Thm 3.3): the k-fold composition of
(eps0, delta0)-DP mechanisms is (eps, delta)-DP iff

    1 - (1 - delta0)^k (1 - delta_k(eps)) <= delta,

with delta_k(eps) = sum_{j: l_j > eps} C(k, j) p^{k-j} q^j (1 - e^{eps - l_j}),
l_j = (k - 2j) eps0, p = e^eps0 / (1 + e^eps0), q = 1 - p.

`composition.kov_candidate` solves this in floating point (masses from
gammaln, whose error is not bounded by any documented figure); `certified`
then checks the candidate with mpmath and raises it until the check passes.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp, mpf
from scipy.special import gammaln

from fuzzpy.accounting.rounding import MP_MARGIN, MP_PREC, float_up

_MAX_RAISES = 60
_TRUNCATION_BITS = 64  # stop summing once the remaining mass is this far below the sum


def randomized_response(epsilon0: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Losses (ascending) and log-probabilities of k-fold randomized response
    (in logs: the masses of long compositions are below the float range)."""
    j = np.arange(k, -1, -1, dtype=float)  # j "flips": loss (k - 2j) eps0, ascending
    log_p = -np.logaddexp(0.0, -epsilon0)  # log(e^eps0 / (1 + e^eps0))
    log_q = -np.logaddexp(0.0, epsilon0)
    log_binomial = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1)
    return (k - 2 * j) * epsilon0, log_binomial + (k - j) * log_p + j * log_q


def certified(epsilon0: float, delta0: float, k: int, delta: float, epsilon: float) -> float:
    """The smallest eps >= ``epsilon`` found by raising it (Newton steps, then
    doubling) at which `holds` proves KOV's condition; inf if none."""
    if math.isnan(epsilon) or math.isinf(epsilon):
        return math.inf
    # the largest loss, k eps0, rounded up: delta_k(top) = 0. The float product
    # may round below it (1000 * 0.1 = 100.0 < 1000 * 0.1000000000000000055),
    # where the top mass still counts: at delta 1e-300 that failed the check
    # and answered inf (issue 25)
    top = float_up(Fraction(k) * Fraction(epsilon0))
    minimum = max(abs(epsilon), 1.0) * 2.0**-48
    for _ in range(_MAX_RAISES):
        if epsilon >= top:
            return top if holds(epsilon0, delta0, k, delta, top)[0] else math.inf
        ok, excess, slope = holds(epsilon0, delta0, k, delta, epsilon)
        if ok:
            return epsilon
        newton = 2 * excess / slope if slope > 0 else 0.0
        epsilon += max(newton, minimum)
        minimum *= 2
    return math.inf


def holds(
    epsilon0: float, delta0: float, k: int, delta: float, epsilon: float
) -> tuple[bool, float, float]:
    """(whether an upper bound on 1 - (1 - delta0)^k (1 - delta_k(eps)) is
    <= delta, its excess over delta, and the slope -d/d eps of the bound).

    Rigour: all inputs are exact floats. At MP_PREC bits (more for tiny
    eps0, so that 1 - e^{-2 eps0} keeps its digits) every operation is
    correctly rounded to within 2^-MP_PREC; the terms come from one
    loggamma and a recursion of a few multiplications per term, so n terms
    carry a relative error below 8 n 2^-MP_PREC, far below the 2^-100
    margin multiplied in at the end. The nearest loss above eps uses
    -expm1(eps - l) (no cancellation however close l is to eps); the rest are
    at least 2 eps0 above. The sum stops once j m_j, a bound on the masses
    left (m_0 <= ... <= m_j below the mode (k+1) q of the binomial), is
    negligible, and that bound is added in full."""
    extra = max(0, math.ceil(-math.log2(epsilon0))) if epsilon0 > 0 else 0
    precision = MP_PREC + extra + k.bit_length()
    with mp.workprec(precision):
        tail, slope = _randomized_response_tail(mpf(epsilon0), k, mpf(epsilon))
        used = -mpmath.expm1(k * mpmath.log1p(-mpf(delta0)))  # 1 - (1 - delta0)^k
        bound = (used + (1 - used) * tail) * (1 + MP_MARGIN)
        excess = bound - mpf(delta)
        return bool(excess <= 0), float(excess), float((1 - used) * slope)


def _randomized_response_tail(e0: mpf, k: int, eps: mpf) -> tuple[mpf, mpf]:
    """(upper bound on delta_k(eps), sum of m_j e^{eps - l_j} over l_j > eps)."""
    if e0 <= 0:
        return mpf(0), mpf(0)
    j = min(k, math.floor((k - float(eps) / float(e0)) / 2) + 2)
    while j >= 0 and not (k - 2 * j) * e0 > eps:  # the exact last loss above eps
        j -= 1
    if j < 0:
        return mpf(0), mpf(0)
    log_p = -mpmath.log1p(mpmath.exp(-e0))
    log_q = -mpmath.log1p(mpmath.exp(e0))
    mode = int(mpmath.floor((k + 1) * mpmath.exp(log_q))) - 1
    log_binomial = mpmath.loggamma(k + 1) - mpmath.loggamma(j + 1) - mpmath.loggamma(k - j + 1)
    mass = mpmath.exp(log_binomial + (k - j) * log_p + j * log_q)
    factor = mpmath.exp(eps - (k - 2 * j) * e0)  # e^{eps - l_j} < 1
    gap = -mpmath.expm1(eps - (k - 2 * j) * e0)  # 1 - factor, without cancellation
    ratio, shrink = mpmath.exp(e0), mpmath.exp(-2 * e0)  # m_{j-1}/m_j = j/(k-j+1) * p/q
    negligible = mpf(2) ** -_TRUNCATION_BITS
    total, slope = mpf(0), mpf(0)
    while True:
        total += mass * gap
        slope += mass * factor
        if j == 0:
            return total, slope
        if j <= mode and j * mass <= total * negligible:
            return total + j * mass, slope
        mass = mass * j / (k - j + 1) * ratio
        factor *= shrink
        gap = 1 - factor
        j -= 1
