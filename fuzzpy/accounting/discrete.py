"""Epsilon from a discrete privacy loss distribution, exactly.

For a privacy loss L (under the first distribution P of a dominating pair)
with masses p_i at finite losses l_i and mass p_inf at +infinity, the
smallest delta for a given eps is the hockey-stick divergence

    delta(eps) = p_inf + sum_{l_i > eps} p_i (1 - e^{eps - l_i})

(Sommer, Meiser & Mohammadi 2019; Koskela, Jalko & Honkela 2020). Between two
consecutive losses it is affine in e^eps, so the smallest eps with
delta(eps) <= target is found exactly from suffix sums.
"""

from __future__ import annotations

import math

import numpy as np


def epsilon_for_delta(
    losses: np.ndarray, masses: np.ndarray, infinity_mass: float, delta: float
) -> float:
    """Smallest eps >= 0 with delta(eps) <= delta; inf if none.

    ``losses`` must be sorted ascending; only losses > 0 matter for eps >= 0.
    """
    if infinity_mass > delta:
        return math.inf
    keep = losses > 0
    losses = losses[keep]
    masses = np.clip(masses[keep], 0.0, None)
    if losses.size == 0:
        return 0.0
    # tail[j] = sum_{i >= j} p_i ; tail_weighted[j] = sum_{i >= j} p_i e^{-l_i}
    tail = np.cumsum(masses[::-1])[::-1]
    tail_weighted = np.cumsum((masses * np.exp(-losses))[::-1])[::-1]
    # delta at eps = 0 uses every positive loss
    if infinity_mass + tail[0] - tail_weighted[0] <= delta:
        return 0.0
    # delta(l_j) = p_inf + tail[j+1] - e^{l_j} tail_weighted[j+1]
    next_tail = np.append(tail[1:], 0.0)
    next_weighted = np.append(tail_weighted[1:], 0.0)
    with np.errstate(divide="ignore"):
        at_nodes = infinity_mass + next_tail - np.exp(losses + np.log(next_weighted))
    j = int(np.argmax(at_nodes <= delta)) if np.any(at_nodes <= delta) else losses.size - 1
    if at_nodes[j] > delta:
        return math.inf
    # eps lies in (l_{j-1}, l_j] (or (0, l_0]); solve the affine piece there
    lower = losses[j - 1] if j > 0 else 0.0
    numerator = infinity_mass + tail[j] - delta
    if tail_weighted[j] <= 0 or numerator <= 0:
        return float(losses[j])
    epsilon = math.log(numerator) - math.log(tail_weighted[j])
    epsilon = min(max(epsilon, lower), float(losses[j]))
    return epsilon + 1e-12 * (1 + abs(epsilon))  # absorb rounding: stay an upper bound


def delta_for_epsilon(
    losses: np.ndarray, masses: np.ndarray, infinity_mass: float, epsilon: float
) -> float:
    above = losses > epsilon
    contribution = masses[above] * -np.expm1(epsilon - losses[above])
    return float(infinity_mass + np.clip(contribution, 0.0, None).sum())
