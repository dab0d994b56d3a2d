"""Conversions between rho-zCDP and (epsilon, delta)-DP used by the ledger.

Only directions that keep privacy claims sound are offered: a budget's rho
is rounded *down*, an epsilon shown for a rho is rounded *up*.

The conversion is the one of Canonne, Kamath & Steinke 2020 ("The Discrete
Gaussian for Differential Privacy", Cor. 13): rho-zCDP implies
(eps, delta)-DP with

    delta = inf_{a > 1} exp((a - 1)(a rho - eps)) / (a - 1) * (1 - 1/a)^a.

It is never worse than the classical eps = rho + 2 sqrt(rho log(1/delta))
of Bun & Steinke 2016 (Prop. 1.3). Any order a gives a valid delta, so an
inexact minimisation can only make the result more conservative.
"""

from __future__ import annotations

import math
from fractions import Fraction

# Relative slack for floating-point error when deciding "delta(rho) <= target"
# (the terms are sums of a few products; their rounding error is ~1e-15).
_LOG_SLACK = 1e-9
# Bisections stop within this relative distance of the optimum, on the safe side.
_RELATIVE_PRECISION = 1e-12


def _log_delta_at(order: float, rho: float, epsilon: float) -> tuple[float, float]:
    """log of the CKS bound at one order, and the magnitude of its terms."""
    main = (order - 1.0) * (order * rho - epsilon)
    rest = -math.log(order - 1.0) + order * math.log1p(-1.0 / order)
    return main + rest, abs(main) + abs(rest)


def _best_order(rho: float, epsilon: float) -> float:
    """The order minimising the bound: the log is convex in a, with derivative
    2 a rho - rho - eps + log(1 - 1/a), increasing; find its root by bisection."""

    def slope(order: float) -> float:
        return 2 * order * rho - rho - epsilon + math.log1p(-1.0 / order)

    low = max(1.0 + 1e-12, (epsilon + rho) / (2 * rho))
    high = low + 1.0
    while slope(high) < 0:
        high = low + 2 * (high - low)
    while high - low > 1e-9 * high:  # the bound is flat near its minimum
        middle = (low + high) / 2
        if slope(middle) < 0:
            low = middle
        else:
            high = middle
    return high


def zcdp_log_delta(rho: float, epsilon: float) -> float:
    """Upper bound on log delta such that rho-zCDP gives (epsilon, delta)-DP,
    padded for rounding."""
    if rho <= 0:
        return -math.inf
    value, magnitude = _log_delta_at(_best_order(rho, epsilon), rho, epsilon)
    return min(0.0, value + _LOG_SLACK * (1.0 + magnitude))


_FLOAT_RHO = Fraction(10) ** 300


def zcdp_epsilon(rho: Fraction, delta: Fraction) -> Fraction:
    """Smallest epsilon (rounded up) such that rho-zCDP gives (epsilon, delta)-DP."""
    if rho <= 0:
        return Fraction(0)
    if rho > _FLOAT_RHO:  # beyond the float search: Bun & Steinke 2016, Prop. 1.3 with
        # 2 sqrt(rho L) <= rho + L (AM-GM), L = log(1/delta): exact and an upper bound
        return 2 * rho + math.ceil(math.log(1 / float(delta))) + 1
    rho_f, target = float(rho), math.log(float(delta))
    # Bun & Steinke 2016, Prop. 1.3: this epsilon always suffices.
    high = rho_f + 2 * math.sqrt(rho_f * math.log(1 / float(delta)))
    high = high * (1 + 1e-12) + 1e-300
    low = 0.0
    while high - low > _RELATIVE_PRECISION * high:
        middle = (low + high) / 2
        if zcdp_log_delta(rho_f, middle) <= target:
            high = middle
        else:
            low = middle
    return Fraction(high)


def zcdp_rho_budget(epsilon: Fraction, delta: Fraction) -> Fraction:
    """Largest rho (rounded down) such that rho-zCDP gives (epsilon, delta)-DP.

    Used once, when an (epsilon, delta) budget under the zCDP filter is set.
    """
    eps_f, target = float(epsilon), math.log(float(delta))
    low, high = 0.0, eps_f
    while high - low > _RELATIVE_PRECISION * high:
        middle = (low + high) / 2
        if zcdp_log_delta(middle, eps_f) <= target:
            low = middle
        else:
            high = middle
    return Fraction(low)
