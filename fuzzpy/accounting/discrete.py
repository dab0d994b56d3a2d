"""Epsilon from a discrete privacy loss distribution, with proven rounding.

For a privacy loss L (under the first distribution P of a dominating pair)
with masses p_i at finite losses l_i and mass p_inf at +infinity, the
smallest delta for a given eps is the hockey-stick divergence

    delta(eps) = p_inf + sum_{l_i > eps} p_i (1 - e^{eps - l_i})

(Sommer, Meiser & Mohammadi 2019; Koskela, Jalko & Honkela 2020). Between two
consecutive losses it is affine in e^eps, so the smallest eps with
delta(eps) <= target is found from suffix sums.

The masses (or their logarithms) are taken as given, exactly; the answer is
then a proven upper bound on the exact smallest eps:

* the search works in log space (suffix log-sum-exps of log p_i - l_i), so
  nothing under- or overflows for losses beyond +-745 (the float range of
  e^l), where e^{-l} used to underflow to 0 and the answer fell below the
  optimum;
* its result is only a candidate: `delta_upper` bounds delta(eps) from above
  with a rounding analysis (every term is non-negative, so relative errors
  add up and cannot cancel), and eps is raised until that bound is at most
  the target. Whatever the search's rounding did, the returned eps has a
  certified delta.
"""

from __future__ import annotations

import math

import numpy as np

from fuzzpy.accounting.rounding import TINY, U

_MAX_RAISES = 200


def epsilon_for_delta(
    losses: np.ndarray, masses: np.ndarray, infinity_mass: float, delta: float
) -> float:
    """Smallest eps >= 0 with delta(eps) <= delta, rounded up; inf if none.

    ``losses`` must be sorted ascending; only losses > 0 matter for eps >= 0.
    """
    losses = np.asarray(losses, dtype=float)
    first = int(np.searchsorted(losses, 0.0, side="right"))
    masses = np.clip(np.asarray(masses, dtype=float)[first:], 0.0, None)
    with np.errstate(divide="ignore"):
        log_masses = np.log(masses)
    return _solve(losses[first:], log_masses, infinity_mass, delta)


def epsilon_for_delta_log(
    losses: np.ndarray, log_masses: np.ndarray, infinity_mass: float, delta: float
) -> float:
    """`epsilon_for_delta` with the masses given by their logarithms (-inf
    for a zero mass), for masses below the float range."""
    losses = np.asarray(losses, dtype=float)
    first = int(np.searchsorted(losses, 0.0, side="right"))
    return _solve(losses[first:], np.asarray(log_masses, dtype=float)[first:], infinity_mass, delta)


def candidate_log(losses: np.ndarray, log_masses: np.ndarray, delta: float) -> float:
    """The float solution of `epsilon_for_delta_log` on positive ascending
    losses, not certified (for estimates, e.g. the accountant's floors)."""
    if losses.size == 0:
        return 0.0
    return _candidate(losses, log_masses, 0.0, delta)


def _solve(losses: np.ndarray, log_masses: np.ndarray, infinity_mass: float, delta: float) -> float:
    """The search on the positive losses (ascending) and their log masses."""
    if infinity_mass > delta:
        return math.inf
    if losses.size == 0:
        return 0.0
    candidate = _candidate(losses, log_masses, infinity_mass, delta)
    return _certified(losses, log_masses, infinity_mass, delta, candidate)


def _candidate(losses: np.ndarray, log_masses: np.ndarray, infinity_mass: float, delta: float) -> float:
    """The exact solution up to rounding (not yet a proven bound)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # tail[j] = sum_{i >= j} p_i ; log_weighted[j] = log sum_{i >= j} p_i e^{-l_i}
        tail = np.cumsum(np.exp(log_masses)[::-1])[::-1]
        log_weighted = _suffix_logsumexp(log_masses - losses)
        if infinity_mass + tail[0] - math.exp(log_weighted[0]) <= delta:
            return 0.0  # delta at eps = 0 uses every positive loss
        next_tail = np.append(tail[1:], 0.0)
        next_log_weighted = np.append(log_weighted[1:], -np.inf)
        # delta(l_j) = p_inf + tail[j+1] - e^{l_j + log_weighted[j+1]}; the
        # exponent is at most log tail[j+1] <= 0, so it cannot overflow
        at_nodes = infinity_mass + next_tail - np.exp(losses + next_log_weighted)
    below = at_nodes <= delta
    if not np.any(below):
        return float(losses[-1])
    j = int(np.argmax(below))
    # eps lies in (l_{j-1}, l_j] (or (0, l_0]): solve p_inf + tail[j] - e^eps W_j = delta
    lower = float(losses[j - 1]) if j > 0 else 0.0
    numerator = infinity_mass + tail[j] - delta
    if numerator <= 0 or not np.isfinite(log_weighted[j]):
        return float(losses[j])
    epsilon = math.log(numerator) - float(log_weighted[j])
    return min(max(epsilon, lower), float(losses[j]))


def _suffix_logsumexp(values: np.ndarray) -> np.ndarray:
    """log sum_{i >= j} e^{values_i} for every j: cumulative sums scaled by the
    largest value, and log-space accumulation (slower) only for the suffixes
    whose scaled sum is too small to keep its digits."""
    backwards = values[::-1]
    top = float(np.max(backwards))
    if top == -math.inf:
        return np.full(values.size, -np.inf)
    with np.errstate(divide="ignore", under="ignore"):
        scaled = np.cumsum(np.exp(backwards - top))
        result = top + np.log(scaled)
    small = int(np.searchsorted(scaled, 1e-280))  # scaled is non-decreasing
    if small:
        result[:small] = np.logaddexp.accumulate(backwards[:small])
    return result[::-1]


def _certified(
    losses: np.ndarray, log_masses: np.ndarray, infinity_mass: float, delta: float, epsilon: float
) -> float:
    """Raise ``epsilon`` until `delta_upper` proves delta(eps) <= delta.

    A nonzero candidate is first raised by 2^-40 relative (the proof's
    rounding margin is ~1e-13 of delta, so an exact candidate usually passes
    then at the first check); each further raise is twice the Newton step
    (delta decreases with slope -sum_{l_i > eps} p_i e^{eps - l_i}), and at
    least a few ulps. At the largest loss the sum is empty and delta_upper =
    p_inf <= delta, so the search ends there at the latest."""
    top = float(losses[-1])
    if epsilon > 0:
        epsilon += (1 + epsilon) * 2.0**-40
    minimum = max(abs(epsilon), 1.0) * 2.0**-48
    for _ in range(_MAX_RAISES):
        if epsilon >= top:
            return top
        bound = delta_upper(losses, log_masses, infinity_mass, epsilon)
        if bound <= delta:
            return epsilon
        slope = _slope(losses, log_masses, epsilon)
        newton = 2 * (bound - delta) / slope if slope > 0 else 0.0
        epsilon += max(newton, minimum)
        minimum *= 2.0
    return top


def _slope(losses: np.ndarray, log_masses: np.ndarray, epsilon: float) -> float:
    """-d delta / d eps = sum_{l_i > eps} p_i e^{eps - l_i} (an estimate)."""
    first = int(np.searchsorted(losses, epsilon, side="right"))
    with np.errstate(over="ignore", under="ignore"):
        values = log_masses[first:] + (epsilon - losses[first:])
        return float(np.exp(np.logaddexp.reduce(values))) if values.size else 0.0


def delta_upper(
    losses: np.ndarray, log_masses: np.ndarray, infinity_mass: float, epsilon: float
) -> float:
    """An upper bound on p_inf + sum_{l_i > eps} p_i (1 - e^{eps - l_i}) for
    the given log masses, proved against float rounding.

    Each term is computed as exp(t_i - M) with t_i = log p_i + log(-expm1(eps - l_i))
    and M the largest t_i. Rounding (1 ulp per operation, see `rounding`):
    eps - l_i has relative error <= U, which moves -expm1 by at most U
    relatively (|x e^x / (1 - e^x)| <= 1 for x < 0); expm1, the two logs, the
    additions t_i and t_i - M and the exp add at most U (|log p_i| + |log(...)|
    + |t_i| + |t_i - M| + 4) in the exponent. Terms that underflow lose less
    than TINY each. The sum of n non-negative terms in any order is within a
    factor 1 + n U. Everything is multiplied into one relative margin."""
    first = int(np.searchsorted(losses, epsilon, side="right"))  # losses sorted ascending
    if first == losses.size:
        return float(infinity_mass)
    above_masses = log_masses[first:]
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        log_factor = np.log(-np.expm1(epsilon - losses[first:]))
        terms = above_masses + log_factor
        top = float(np.max(terms))
        if top == -math.inf:
            return float(infinity_mass)
        scaled = np.exp(terms - top)
        count = scaled.size
        total = float(np.sum(scaled)) + count * TINY
        finite = np.isfinite(terms)
        magnitude = (
            float(np.max(np.abs(above_masses[finite]), initial=0.0))
            + float(np.max(np.abs(log_factor[finite]), initial=0.0))
            + 2 * float(np.max(np.abs(terms[finite]), initial=0.0))
            + 2 * abs(top)
            + 8
        )
    exponent_error = 4 * magnitude * U  # an ulp is at most 2 U relative
    log_bound = top + math.log(total) + exponent_error + (count + 4) * U
    log_bound += (abs(top) + abs(math.log(total)) + 2) * U  # the additions and the log
    bound = (infinity_mass + math.exp(log_bound)) * (1 + 8 * U)
    return float(bound)


def delta_for_epsilon(
    losses: np.ndarray, masses: np.ndarray, infinity_mass: float, epsilon: float
) -> float:
    """An upper bound on delta(eps) (proved against rounding, see `delta_upper`)."""
    losses = np.asarray(losses, dtype=float)
    first = int(np.searchsorted(losses, epsilon, side="right"))
    masses = np.clip(np.asarray(masses, dtype=float)[first:], 0.0, None)
    with np.errstate(divide="ignore"):
        log_masses = np.log(masses)
    return delta_upper(losses[first:], log_masses, infinity_mass, epsilon)
