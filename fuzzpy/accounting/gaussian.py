"""The analytic Gaussian mechanism and its exact composition.

Balle & Wang 2018 ("Improving the Gaussian mechanism for differential
privacy", Thm 8): a Gaussian mechanism with mu = s / sigma is (eps, delta)-DP
exactly for

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),

and for no smaller delta. Composing k Gaussian mechanisms with parameters
mu_i is exactly a Gaussian mechanism with mu = sqrt(sum mu_i^2) (the privacy
loss of each is N(mu_i^2/2, mu_i^2) and they add; Dong, Roth & Su 2022,
Cor. 3.3), so the k-fold composition at sigma is the analytic formula at
sigma / sqrt(k): no bound can be smaller than this one.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr

_EPS_CEILING = 1e6


def log_delta(mu: float, epsilon: float) -> float:
    """log delta(eps) of the analytic Gaussian, computed in log space."""
    if mu <= 0:
        return -math.inf
    a = log_ndtr(-epsilon / mu + mu / 2)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    if b >= a:  # only by rounding: the true difference is tiny and positive
        return -math.inf
    return a + math.log1p(-math.exp(b - a))


def delta_for_epsilon(mu: float, epsilon: float) -> float:
    return math.exp(log_delta(mu, epsilon))


def epsilon_for_delta(mu: float, delta: float) -> float:
    """The smallest eps >= 0 with delta(eps) <= delta, rounded up (the bracket's
    upper end is returned, so the result is never below the exact value)."""
    if delta >= 1 or mu <= 0:
        return 0.0
    if delta <= 0:
        return math.inf
    target = math.log(delta)
    if log_delta(mu, 0.0) <= target:
        return 0.0
    hi = max(1.0, mu * mu / 2 + 4 * mu)
    while log_delta(mu, hi) > target:
        hi *= 2
        if hi > _EPS_CEILING:
            return math.inf
    root = brentq(lambda e: log_delta(mu, e) - target, 0.0, hi, xtol=1e-14, rtol=1e-14)
    return _upper_end(lambda e: log_delta(mu, e) <= target, root, hi)


def mu_for(epsilon: float, delta: float) -> float:
    """The largest mu for which the analytic Gaussian is (eps, delta)-DP
    (delta(eps) is increasing in mu), rounded down."""
    target = math.log(delta)
    lo, hi = 1e-9, 1.0
    while log_delta(hi, epsilon) <= target:
        hi *= 2
    root = brentq(lambda m: log_delta(m, epsilon) - target, lo, hi, xtol=1e-15, rtol=1e-14)
    candidate = root
    while log_delta(candidate, epsilon) > target:
        candidate = math.nextafter(candidate, 0.0) * (1 - 1e-12)
    return candidate


def _upper_end(holds, root: float, hi: float) -> float:
    """Step up from a root until the (monotone) condition provably holds."""
    candidate = root
    step = max(abs(root), 1e-12) * 1e-12
    while not holds(candidate):
        candidate += step
        step *= 2
        if candidate >= hi:
            return hi
    return candidate
