"""Exact epsilon of a single pure mechanism at delta > 0, in closed form.

A single event needs no privacy loss distribution: its worst-case pair has
a hockey-stick curve that inverts in closed form.

* Pure eps0-DP (randomized response, Kairouz, Oh & Viswanath 2015): the loss
  is +eps0 with probability p = e^eps0 / (1 + e^eps0), else -eps0, so for
  0 <= eps <= eps0, delta(eps) = p (1 - e^{eps - eps0}) and
  eps = eps0 + log(1 - delta (1 + e^{-eps0})).
* Laplace, eps0 = s/b: delta(eps) = 1 - e^{(eps - eps0)/2} for 0 <= eps <= eps0
  (the loss is eps0 with probability 1/2 and has density e^{(l - eps0)/2}/4 on
  (-eps0, eps0); integrating (1 - e^{eps - l}) gives the same), so
  eps = eps0 + 2 log(1 - delta).

Both are increasing in eps0, so eps0 rounded up gives an upper bound; the
logarithm's argument is rounded towards 1 (its log towards 0) and the sum
is stepped up twice, so the float returned is never below the exact value.
"""

from __future__ import annotations

import math
from fractions import Fraction

from fuzzpy.accounting.pld_pairs import ULP


def _up(value: Fraction) -> float:
    rounded = float(value)
    return rounded if Fraction(rounded) >= value else math.nextafter(rounded, math.inf)


def _sum_up(a: float, b: float) -> float:
    return max(math.nextafter(math.nextafter(a + b, math.inf), math.inf), 0.0)


def randomized_response_epsilon(epsilon0: Fraction, delta: float) -> float:
    """eps of one pure eps0-DP mechanism at delta (0 when delta is large)."""
    e0 = _up(epsilon0)
    scaled = delta * (1 + math.exp(-e0)) * (1 - 4 * ULP)  # rounded down: log1p(-x) rounds up
    if scaled >= 1:
        return 0.0
    return _sum_up(e0, math.log1p(-scaled) * (1 - 4 * ULP))


def laplace_epsilon(epsilon0: Fraction, delta: float) -> float:
    """eps of one Laplace mechanism with eps0 = s/b at delta (0 when delta is large)."""
    if delta >= 1:
        return 0.0
    e0 = _up(epsilon0)
    return _sum_up(e0, 2 * math.log1p(-delta) * (1 - 4 * ULP))
