"""Calibration: how much noise gives (eps, delta) over k rounds?

A noisier mechanism is a post-processing of a less noisy one (add more
independent noise), so its privacy loss is smaller, and every bound the
accountant uses decreases with the noise scale. The smallest scale reaching
the target is found by bisection on log(scale) (scipy's brentq). The
returned scale is then checked: the accountant proves the target at it, so
calibration never promises more privacy than it delivers.
"""

from __future__ import annotations

import math
from fractions import Fraction

from scipy.optimize import brentq

from fuzzpy.accounting import gaussian
from fuzzpy.accounting.accountant import Guarantee, tightest
from fuzzpy.accounting.events import Event, Gaussian, Laplace, Repeat, Subsample
from fuzzpy.records import frozen

Number = float | Fraction  # a float is taken at its exact binary value


@frozen
class Calibration:
    """Noise ``scale`` (Gaussian sigma or Laplace scale b) and what it proves."""

    mechanism: str
    scale: float
    guarantee: Guarantee


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
    """Step the scale up until the accountant proves the target at it."""
    build = gaussian_events if mechanism == "gaussian" else laplace_events
    factor = 1e-9
    while True:
        guarantee = tightest(build(scale, rounds, sensitivity, rate), delta)
        if guarantee.epsilon <= epsilon:
            return Calibration(mechanism, scale, guarantee)
        scale *= 1 + factor
        factor *= 4
