"""Epsilon from upper bounds of a composed privacy loss distribution.

For a privacy loss with P-masses m_i at losses l_i and mass m_inf at +inf,
the smallest delta at eps is the hockey-stick divergence

    delta(eps) = m_inf + sum_{l_i > eps} m_i (1 - e^{eps - l_i})

(Sommer, Meiser & Mohammadi 2019; Koskela, Jalko & Honkela 2020), which only
grows when any m_i grows or any l_i moves up: upper bounds of the masses,
with every loss possibly up to ``shift`` larger, give an upper bound of
delta(eps) evaluated at eps - shift. `DeltaBound.delta` computes it as a sum
of non-negative terms, so its floating-point error is a relative
(n + 8) ulp (Higham 2002, eq. 4.4), added; `epsilon` finds the smallest
eps whose bound is within the target, and checks it with `delta`.
"""

from __future__ import annotations

import math

import numpy as np

from fuzzpy.accounting.pld_pairs import ULP
from fuzzpy.support.records import frozen


@frozen
class DeltaBound:
    """delta(eps) <= infinity + below [eps below the window] + the window's sum
    (``losses`` ascending: the window's grid from where it can matter for eps >= 0)."""

    losses: np.ndarray
    masses: np.ndarray  # upper bounds of the P-masses there
    infinity: float  # upper bound of the mass at +inf or above the window
    below: float  # upper bound of the mass below the window
    window_low: float  # the window's lowest loss
    shift: float  # every loss may truly be up to this much larger

    def delta(self, epsilon: float) -> float:
        """An upper bound of delta(epsilon), rounded safely (for epsilon >= 0:
        `pld._bound` may put 1 for ``below`` when the window starts below -shift)."""
        e0 = math.nextafter(epsilon - self.shift, -math.inf)
        start = int(np.searchsorted(self.losses, e0, side="right"))
        terms = np.subtract(e0, self.losses[start:])  # in place from here: the same roundings
        np.expm1(terms, out=terms)
        np.negative(terms, out=terms)
        terms *= self.masses[start:]
        window = float(np.sum(terms)) * (1 + (terms.size + 8) * ULP)
        below = self.below if e0 < self.window_low else 0.0
        total = (self.infinity + below + window) * (1 + 4 * ULP)
        return total if total == total else math.inf  # NaN proves nothing

    def epsilon(self, delta: float) -> float:
        """The smallest eps >= 0 (up to a relative 1e-12) whose bound is at most delta."""
        if self.infinity >= delta:
            return math.inf
        # aim a little below delta, so that the rounded-up check passes at once
        candidate, near_zero = self._solve(delta * (1 - 4 * (self.losses.size + 16) * ULP))
        # the bound at 0 is summed only when the solve stops at the first
        # node >= 0 (or at none): past it, the delta there, which the bound
        # at 0 is at least, is above the target (speed only: either way
        # the answer is checked by `delta`)
        if near_zero and self.delta(0.0) <= delta:
            return 0.0
        step = max(abs(candidate), 1.0) * 1e-13
        while self.delta(candidate) > delta:
            candidate += step
            step *= 2
            if not math.isfinite(candidate):
                return math.inf
        return candidate

    def _solve(self, delta: float) -> tuple[float, bool]:
        """Where the piecewise form infinity + C_j - e^eps W_j crosses delta,
        C_j and W_j the suffix sums of m and m e^{-l} (not rounded safely:
        `epsilon` checks the answer), and whether that is at the first
        node >= 0 or at none."""
        losses, masses = self.losses, self.masses
        if losses.size == 0:
            return self.shift, True
        tail = np.cumsum(masses[::-1])[::-1]
        log_weighted = _log_weighted_tails(losses, masses)
        # delta at each node: the masses strictly above it count
        at_nodes = np.full(losses.size, self.infinity)
        with np.errstate(over="ignore", invalid="ignore"):
            at_nodes[:-1] += tail[1:] - log_weighted.exp_above()
        first = int(np.searchsorted(losses, 0.0, side="left"))  # the first node >= 0
        ok = at_nodes[first:] <= delta
        j = first + int(np.argmax(ok)) if ok.size else losses.size
        if j >= losses.size or not ok[j - first]:
            return float(losses[-1]) + self.shift, True
        near_zero = j == first
        lower = max(float(losses[j - 1]), 0.0) if j > 0 else 0.0
        numerator = self.infinity + tail[j] - delta
        log_w = log_weighted.at(j)
        if not math.isfinite(log_w) or numerator <= 0:
            return float(losses[j]) + self.shift, near_zero
        eps = math.log(numerator) - log_w
        return min(max(eps, lower), float(losses[j])) + self.shift, near_zero


@frozen
class _WeightedTails:
    """The suffix sums W_j of m e^{-l}: as ``scaled`` = W_j e^{l_0} with
    ``decay`` = e^{l_0 - l} when the window is narrow enough, else as ``logs``
    (log space: l may exceed 709)."""

    losses: np.ndarray
    scaled: np.ndarray | None
    decay: np.ndarray | None
    logs: np.ndarray | None

    def exp_above(self) -> np.ndarray:
        """e^{l_j} W_{j+1} for every node but the last."""
        if self.logs is None:
            return self.scaled[1:] / self.decay[:-1]
        return np.exp(self.losses[:-1] + self.logs[1:])

    def at(self, j: int) -> float:
        """log W_j."""
        if self.logs is not None:
            return float(self.logs[j])
        value = float(self.scaled[j])
        return math.log(value) - float(self.losses[0]) if value > 0 else -math.inf


def _log_weighted_tails(losses: np.ndarray, masses: np.ndarray) -> _WeightedTails:
    if losses[-1] - losses[0] < 600:
        decay = np.exp(losses[0] - losses)
        scaled = np.cumsum((masses * decay)[::-1])[::-1]
        return _WeightedTails(losses, scaled, decay, None)
    with np.errstate(divide="ignore"):
        logs = np.logaddexp.accumulate((np.log(masses) - losses)[::-1])[::-1]
    return _WeightedTails(losses, None, None, logs)
