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
from collections.abc import Callable
from functools import lru_cache

import mpmath
from mpmath import mp, mpf
from scipy.special import log_ndtr

from fuzzpy.accounting.rounding import MP_PREC, float_up_mp

_EPS_CEILING = 1e300  # eps ~ mu^2 / 2 + 40 mu: only a mu past ~1e150 meets it (issue 25)
_MAX_PREC = 4096
_MAX_RAISES = 60


def log_delta(mu: float, epsilon: float) -> float:
    """log delta(eps) of the analytic Gaussian in floating point (log space):
    accurate, but not a proven bound (see `delta_bounds`)."""
    if mu <= 0:
        return -math.inf
    a = log_ndtr(-epsilon / mu + mu / 2)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    if a - b > _CANCELLATION * (abs(a) + abs(b) + 1):
        return a + math.log1p(-math.exp(b - a))
    # A and B agree to most of their digits (tiny mu and eps: eps <= 1e-10 at
    # delta 1e-100 lost a quarter of eps, and below mu ~ 1e-15 the float
    # difference vanished): the difference in mpmath, as precise as needed
    return _log_delta_mp(mu, epsilon)


# the float difference a - b errs by a few ulps of |a| + |b|: trusted when it
# is at least this share of them (then log delta is within ~1e-10)
_CANCELLATION = 1e-6


def _log_delta_mp(mu: float, epsilon: float) -> float:
    """log delta(eps) from `delta_bounds` at a precision raised until the
    bounds agree to a relative 1e-12 (-inf if they never leave 0)."""
    precision = MP_PREC
    while precision <= _MAX_PREC:
        lower, upper, _ = delta_bounds(mu, epsilon, precision)
        if lower > 0 and upper - lower <= 1e-12 * upper:
            with mp.workprec(precision):
                return float(mpmath.log((lower + upper) / 2))
        precision *= 2
    return -math.inf


def delta_bounds(mu: float, epsilon: float, precision: int = MP_PREC) -> tuple[mpf, mpf, mpf]:
    """(lower, upper) bounds on delta(eps) and its slope -d delta/d eps = B,
    in mpmath at ``precision`` bits.

    delta = A - B with A = Phi(x1), B = e^eps Phi(x2), x1 = -eps/mu + mu/2,
    x2 = -eps/mu - mu/2 (mu and eps exact floats). Each of A and B is
    within a relative 2^-(precision - 8) (1 + x^2 + eps) of its value: the
    arguments carry a relative rounding of 2^-precision, which moves
    log Phi(x) by at most x phi(x)/Phi(x) <= 1 + x^2 times it, and e^eps by
    eps times it; erfc and exp add a few units in the last place. Their
    difference is then within the sum of those errors: when A and B nearly
    cancel (small mu), the caller raises the precision until the interval
    decides."""
    with mp.workprec(precision):
        m, e = mpf(mu), mpf(epsilon)
        x1, x2 = -e / m + m / 2, -e / m - m / 2
        a = mpmath.ncdf(x1)
        b = mpmath.exp(e) * mpmath.ncdf(x2)
        unit = mpf(2) ** -(precision - 8)
        error = unit * (a * (1 + x1 * x1) + b * (1 + x2 * x2 + abs(e)))
        return a - b - error, a - b + error, b


def delta_for_epsilon(mu: float, epsilon: float) -> float:
    """An upper bound on delta(eps) (proved, see `delta_bounds`), as a float."""
    if mu <= 0:
        return 0.0
    return max(0.0, float_up_mp(delta_bounds(mu, epsilon)[1]))


def epsilon_for_delta(mu: float, delta: float) -> float:
    """The smallest eps >= 0 with delta(eps) <= delta, rounded up: a float
    search gives a candidate, raised until `delta_bounds` proves it."""
    if delta >= 1 or mu <= 0:
        return 0.0
    if delta <= 0:
        return math.inf
    return _certified_epsilon(float(mu), float(delta))


@lru_cache(maxsize=4096)
def _certified_epsilon(mu: float, delta: float) -> float:
    if _decide(mu, 0.0, delta)[0]:
        return 0.0
    candidate = _candidate(mu, delta)
    if math.isinf(candidate):
        return math.inf
    minimum = max(candidate, 1e-290) * 2.0**-48
    for _ in range(_MAX_RAISES):
        proved, excess, slope = _decide(mu, candidate, delta)
        if proved:
            return candidate
        newton = 2 * excess / slope if slope > 0 else 0.0
        candidate += max(newton, minimum)
        minimum *= 2
    return math.inf


def _decide(mu: float, epsilon: float, delta: float) -> tuple[bool, float, float]:
    """(whether delta(eps) <= delta is proved, the excess of the upper bound,
    the slope), raising the precision while the interval cannot decide."""
    precision = MP_PREC
    target = mpf(delta)
    while True:
        lower, upper, slope = delta_bounds(mu, epsilon, precision)
        if upper <= target:
            return True, 0.0, float(slope)
        if lower > target or precision >= _MAX_PREC:
            return False, float(upper - target), float(slope)
        precision *= 2


@lru_cache(maxsize=4096)  # the floors of basic and advanced composition ask for the same one
def _candidate(mu: float, delta: float) -> float:
    target, hi = _bracket(mu, delta)
    if hi in (0.0, math.inf):
        return hi
    # relative precision only: an absolute 1e-14 was 1e-5 of an eps near 1e-9
    return root_at_or_past(lambda e: _above(mu, e, target), 0.0, hi, xtol=1e-300, rtol=1e-14)


def _bracket(mu: float, delta: float) -> tuple[float, float]:
    """log delta and an epsilon past the root (0.0 when eps 0 already holds,
    inf past the ceiling: then the answer itself)."""
    target = math.log(delta)
    if _above(mu, 0.0, target) <= 0:
        return target, 0.0
    hi = max(1.0, mu * mu / 2 + 4 * mu)
    while _above(mu, hi, target) > 0:
        hi *= 2
        if hi > _EPS_CEILING:
            return target, math.inf
    return target, hi


def _above(mu: float, epsilon: float, target: float) -> float:
    """A number of the sign of log delta(eps) - target (what the searches
    read): delta = A - B <= A = Phi(-eps/mu + mu/2), so when log A is
    already at or below the target, so is log delta (in floats too:
    `log_delta` is log A plus a log1p of a negative number, or the mpmath
    value of a smaller delta), and the difference in mpmath that
    `log_delta` falls back to near cancellation is not needed (speed only:
    the same signs, the same candidate, issue 25 item 5)."""
    if mu > 0:
        log_a = float(log_ndtr(-epsilon / mu + mu / 2))
        if log_a <= target:
            return log_a - target
    return log_delta(mu, epsilon) - target


def root_at_or_past(f: Callable[[float], float], a: float, b: float, xtol: float, rtol: float) -> float:
    """A point within xtol + rtol |x| of a root of `f` between a and b (f(a)
    and f(b) of opposite signs), on the side where f <= 0: bisection, in
    place of scipy's brentq (scipy.optimize is ~0.2 s of imports, issue 24).
    A float candidate only: the callers prove or adjust what they use."""
    fa = f(a)
    if fa <= 0:
        return a
    while True:
        middle = (a + b) / 2
        if abs(b - a) <= xtol + rtol * abs(middle) or middle in (a, b):
            return b
        if f(middle) > 0:
            a = middle
        else:
            b = middle


def candidate(mu: float, delta: float) -> float:
    """The float epsilon at delta, not rounded safely (for estimates only)."""
    return _candidate(mu, delta)


@lru_cache(maxsize=4096)  # basic's and advanced's floors ask for the same one
def floor_candidate(mu: float, delta: float) -> float:
    """`candidate` to a relative 1e-12 (at or just past the root, as it),
    by regula falsi with the Illinois modification instead of bisection: a
    few evaluations instead of ~50 (the floors that skip costly methods,
    which compare with a relative margin of 1e-6; issue 25 item 5)."""
    target, hi = _bracket(mu, delta)
    if hi in (0.0, math.inf):
        return hi
    return _illinois(lambda e: _above(mu, e, target), 0.0, hi, rtol=1e-12)


def _illinois(f: Callable[[float], float], a: float, b: float, rtol: float) -> float:
    """A point within rtol |x| (or 1e-300) past a root of the decreasing-sign
    `f` (f(a) > 0 >= f(b), a < b), on the side where f <= 0. Bisection when
    the secant step leaves the bracket, and after 60 steps."""
    fa, fb = f(a), f(b)
    kept = 0  # which end was kept last (+1: a, -1: b): Illinois halves its value
    for steps in range(400):
        if b - a <= rtol * abs(b) + 1e-300:
            return b
        c = (a * fb - b * fa) / (fb - fa) if steps < 60 and fb != fa else (a + b) / 2
        if not a < c < b:
            c = (a + b) / 2
        fc = f(c)
        if fc > 0:
            a, fa = c, fc
            if kept == 1:
                fb /= 2
            kept = 1
        else:
            b, fb = c, fc
            if kept == -1:
                fa /= 2
            kept = -1
    return b


# calibration stops here: below it the Gaussian's rho = mu^2 / 2 leaves the
# range of doubles and no figure the accountant proves would be near exact
SMALLEST_MU = 1e-150


def _beyond(epsilon: float, delta: float) -> str:
    return (
        f"({epsilon:g}, {delta:g})-DP needs a Gaussian with mu = sensitivity / sigma below about "
        f"{1e6 * SMALLEST_MU:g} (sigma above {1 / (1e6 * SMALLEST_MU):g} times the sensitivity): "
        "beyond the range in which fuzzpy's accountant proves the Gaussian's epsilon; "
        "ask for a larger epsilon or delta"
    )


def mu_for(epsilon: float, delta: float) -> float:
    """The largest mu for which the analytic Gaussian is (eps, delta)-DP
    (delta(eps) is increasing in mu), rounded down; the calibration that uses
    it checks its answer with the accountant."""
    target = math.log(delta)
    lo, hi = 1e-9, 1.0
    while log_delta(hi, epsilon) <= target:
        hi *= 2
    while log_delta(lo, epsilon) > target:  # a tiny target: a tiny mu
        if lo <= SMALLEST_MU:
            raise ValueError(_beyond(epsilon, delta))
        lo = max(lo * 1e-6, SMALLEST_MU)
    root = root_at_or_past(lambda m: log_delta(m, epsilon) - target, hi, lo, xtol=1e-300, rtol=1e-14)
    if root < 1e6 * SMALLEST_MU:  # near where log_delta loses every digit (eps, delta ~ 1e-150)
        raise ValueError(_beyond(epsilon, delta))
    candidate = root
    while log_delta(candidate, epsilon) > target:
        candidate = math.nextafter(candidate, 0.0) * (1 - 1e-12)
    return candidate
