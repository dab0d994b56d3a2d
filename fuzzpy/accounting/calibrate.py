"""Calibration: how much noise gives (eps, delta) over k rounds?

A noisier mechanism is a post-processing of a less noisy one (add more
independent noise), so its privacy loss is smaller, and every bound the
accountant uses decreases with the noise scale. The smallest scale reaching
the target is found by bisection on log(scale) (scipy's brentq). The
returned scale is then checked: the accountant proves the target at it, so
calibration never promises more privacy than it delivers.

What a person copies is the *printed* scale, so it is checked too (issue
25): `printed` is the smallest 6-digit decimal whose own guarantee,
re-accounted by the same proven methods at the value the text denotes (the
smaller of the decimal and the double it reads as), meets the target --
found upward from the scale found, then downward while the target still
holds, so it may sit a little below the search's `scale` (which `--json`
also reports); `printed_guarantee` is that guarantee.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable
from fractions import Fraction

from scipy.optimize import brentq

from fuzzpy.accounting import gaussian
from fuzzpy.accounting.accountant import Guarantee, tightest
from fuzzpy.accounting.events import Event, Gaussian, Laplace, Repeat, Subsample
from fuzzpy.language.figures import text_down, text_up
from fuzzpy.support.records import frozen

Number = float | Fraction  # a float is taken at its exact binary value


@frozen
class Calibration:
    """Noise ``scale`` (Gaussian sigma or Laplace scale b) and what it proves;
    ``printed``, the scale as text (rounded up), and what *it* proves."""

    mechanism: str
    scale: float
    guarantee: Guarantee
    printed: str = ""
    printed_guarantee: Guarantee | None = None

    def __str__(self) -> str:
        name = "sigma" if self.mechanism == "gaussian" else "scale"
        g = self.printed_guarantee or self.guarantee
        return f"{self.mechanism} {name} = {self.printed or text_up(self.scale)}: ({text_up(g.epsilon)}, {text_up(g.delta)})-DP"


def gaussian_events(
    sigma: Number, rounds: int, sensitivity: Number = 1, rate: Number | None = None
) -> tuple[Event, ...]:
    return _rounds_of(Gaussian(Fraction(sensitivity), Fraction(sigma)), rounds, rate)


def laplace_events(
    scale: Number, rounds: int, sensitivity: Number = 1, rate: Number | None = None
) -> tuple[Event, ...]:
    return _rounds_of(Laplace(Fraction(sensitivity), Fraction(scale)), rounds, rate)


def _rounds_of(step: Event, rounds: int, rate: Number | None) -> tuple[Event, ...]:
    """`rounds` repetitions of `step`, each on a Poisson subsample when rate < 1."""
    if rate is not None and rate < 1:
        step = Subsample(Fraction(rate), (step,))
    return (Repeat(rounds, (step,)),)


def calibrate_gaussian(
    epsilon: float, delta: float, rounds: int, sensitivity: float = 1.0, rate: float | None = None
) -> Calibration:
    _check_target(epsilon, delta, rounds)
    if delta <= 0:
        raise ValueError("the Gaussian mechanism needs delta > 0")
    if rate is None or rate >= 1:
        # exact: k rounds at sigma are one analytic Gaussian at sigma / sqrt(k)
        mu = gaussian.mu_for(epsilon, delta)
        guess = sensitivity * math.sqrt(rounds) / mu
        return _verified("gaussian", guess, epsilon, delta, rounds, sensitivity, rate)
    return _bisect("gaussian", epsilon, delta, rounds, sensitivity, rate)


def calibrate_laplace(
    epsilon: float, delta: float, rounds: int, sensitivity: float = 1.0, rate: float | None = None
) -> Calibration:
    _check_target(epsilon, delta, rounds)
    if delta <= 0 and (rate is None or rate >= 1):
        # pure composition is exact for pure DP: k rounds at scale b cost k s / b
        return _verified(
            "laplace", sensitivity * rounds / epsilon, epsilon, delta, rounds, sensitivity, rate
        )
    return _bisect("laplace", epsilon, delta, rounds, sensitivity, rate)


def _check_target(epsilon: float, delta: float, rounds: int) -> None:
    if not epsilon > 0 or not math.isfinite(epsilon):
        raise ValueError(f"the target epsilon must be positive and finite, got {epsilon}")
    if not 0 <= delta < 1:
        raise ValueError(f"the target delta must lie in [0, 1), got {delta}")
    if rounds < 1:
        raise ValueError(f"the number of rounds must be at least 1, got {rounds}")


def _bisect(
    mechanism: str,
    epsilon: float,
    delta: float,
    rounds: int,
    sensitivity: float,
    rate: float | None,
) -> Calibration:
    build = gaussian_events if mechanism == "gaussian" else laplace_events

    # the search uses the methods that can win here (any subset is a valid
    # bound); the final check in `_verified` uses them all
    methods = ("pure", "pld", "rdp", "kov") if delta > 0 else ("pure",)

    def excess(log_scale: float) -> float:
        events = build(math.exp(log_scale), rounds, sensitivity, rate)
        found = tightest(events, delta, methods).epsilon
        return min(found, 1e9) - epsilon

    lo, hi = math.log(sensitivity) - 3.0, math.log(sensitivity) + 3.0
    while excess(lo) <= 0:
        lo -= 3.0
    while excess(hi) > 0:
        hi += 3.0
        if hi > 60:
            raise ValueError("no noise scale reaches this target")
    root = brentq(excess, lo, hi, xtol=1e-9, rtol=1e-9)
    return _verified(mechanism, math.exp(root), epsilon, delta, rounds, sensitivity, rate)


def _verified(
    mechanism: str,
    scale: float,
    epsilon: float,
    delta: float,
    rounds: int,
    sensitivity: float,
    rate: float | None,
) -> Calibration:
    """Step the scale up until the accountant proves the target at it, then
    find the text to print (see the module's note)."""
    build = gaussian_events if mechanism == "gaussian" else laplace_events
    factor = 1e-9
    while True:
        guarantee = tightest(build(scale, rounds, sensitivity, rate), delta)
        if guarantee.epsilon <= epsilon:
            break
        scale *= 1 + factor
        factor *= 4
        if not scale < 1e300:  # tiny targets at the edge of the doubles' range
            raise ValueError(f"no noise scale fuzzpy can account for proves ({epsilon:g}, {delta:g})-DP")

    def proves(text: str) -> Guarantee | None:
        found = tightest(build(_read_as(text), rounds, sensitivity, rate), delta)
        return found if found.epsilon <= epsilon else None

    printed = text_up(scale, PRINTED_DIGITS)
    printed_guarantee = proves(printed)
    for _ in range(1000):  # a bound not monotone to the last bit: one unit more
        if printed_guarantee is not None:
            break
        printed = _next_above(printed)
        printed_guarantee = proves(printed)
    if printed_guarantee is None:
        raise ValueError(f"no printed scale near {printed} proves the target")
    printed, printed_guarantee = _least_proving(printed, printed_guarantee, proves)
    return Calibration(mechanism, scale, guarantee, printed, printed_guarantee)


def _least_proving(
    printed: str, guarantee: Guarantee, proves: Callable[[str], Guarantee | None]
) -> tuple[str, Guarantee]:
    """As little noise as possible: the least 6-digit text that still proves
    the target, below ``printed`` (which does). Steps of 1, 2, 4, ... units
    down find a text that fails; bisection on the 6-digit texts between
    them finds the least that proves (the bounds decrease with the noise)."""
    failing, step = Fraction(0), 1
    while True:
        lower = _units_below(printed, step)
        if lower is None:
            break
        found = proves(lower)
        if found is None:
            failing = Fraction(lower)
            break
        printed, guarantee, step = lower, found, step * 2
    while True:
        middle = text_up((failing + Fraction(printed)) / 2, PRINTED_DIGITS)
        if Fraction(middle) >= Fraction(printed):
            return printed, guarantee
        found = proves(middle)
        if found is None:
            failing = Fraction(middle)
        else:
            printed, guarantee = middle, found


PRINTED_DIGITS = 6


def _read_as(text: str) -> Fraction:
    """The least value a printed scale may be read as: the decimal itself,
    or the double nearest it (a program may hold either)."""
    return min(Fraction(text), Fraction(float(text)))


def _next_above(text: str) -> str:
    """The 6-digit decimal next above ``text``."""
    above = decimal.Context(prec=PRINTED_DIGITS).next_plus(decimal.Decimal(text))
    return text_up(Fraction(above), PRINTED_DIGITS)


def _units_below(text: str, count: int) -> str | None:
    """``text`` less ``count`` units in its 6th digit, as 6 digits rounded
    down; None at or below 0."""
    value = decimal.Decimal(text)
    unit = decimal.Decimal(1).scaleb(value.adjusted() - PRINTED_DIGITS + 1)
    lower = Fraction(value - count * unit)
    return text_down(lower, PRINTED_DIGITS) if lower > 0 else None


# ---------------------------------------------------------------- `gauss_dp[s, eps, delta]`


def gauss_dp_sigma(sensitivity: Fraction, epsilon: Fraction, delta: Fraction) -> Fraction:
    """The sigma of `gauss_dp[s, eps, delta]`: the one function the checker,
    the interpreter, the accuracy line and the accountant's charge all read
    it from (a reading of the bracket as sigma anywhere would add less noise
    than charged).

    The analytic Gaussian calibration (Balle & Wang, ICML 2018, Thm 8): the
    least sigma for which N(0, sigma^2) on a query of L2 sensitivity s has
    delta(eps) <= delta, found by `calibrate_gaussian` and rounded UP to its
    least 6-digit decimal that the accountant proves the target at (the exact
    sampler takes any positive rational). The floats it searches with are
    rounded toward safety: eps and delta down, s up, so the guarantee holds
    at the exact rationals given. Raises ValueError outside eps > 0,
    0 < delta < 1, s > 0."""
    s, eps, dlt = Fraction(sensitivity), Fraction(epsilon), Fraction(delta)
    if not s > 0:
        raise ValueError(f"the sensitivity bound s must be positive, got {s}")
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps}")
    if not 0 < dlt < 1:
        raise ValueError(f"delta must lie strictly between 0 and 1, got {dlt}")
    return _gauss_dp_sigma(s, eps, dlt)


@functools.lru_cache(maxsize=256)
def _gauss_dp_sigma(s: Fraction, eps: Fraction, dlt: Fraction) -> Fraction:
    eps_f, delta_f, s_f = _float_down(eps), _float_down(dlt), _float_up(s)
    if not (eps_f > 0 and delta_f > 0 and math.isfinite(s_f)):
        raise ValueError(f"({eps}, {dlt}) is beyond the range the calibration reaches")
    found = calibrate_gaussian(eps_f, delta_f, 1, s_f)
    return Fraction(found.printed or text_up(found.scale, PRINTED_DIGITS))


def _float_down(value: Fraction) -> float:
    near = float(value)
    return math.nextafter(near, -math.inf) if Fraction(near) > value else near


def _float_up(value: Fraction) -> float:
    near = float(value)
    return math.nextafter(near, math.inf) if Fraction(near) < value else near
