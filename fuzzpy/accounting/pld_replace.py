"""The replace-one pair of Poisson subsampling, as loss tails for the PLD.

Under replace-one neighbours D = B + x, D' = B + x' (same size), a Poisson
sample at rate q holds the replaced row with probability q (x on one side,
x' on the other) and is otherwise the same sample S of B, so the outputs are

    P = (1-q) M(S) + q M(S + x),    Q = (1-q) M(S) + q M(S + x').

For a body whose removal direction (M(S + y), M(S)) is dominated by a base
pair (A+, A0) on the line with an increasing likelihood ratio, A0 symmetric
about 0 and A- the mirror image of A+ (Gaussian N(mu) / N(0) / N(-mu);
Laplace Lap(eps) / Lap(0) / Lap(-eps)), the pair

    P* = (1-q) A0 + q A+,    Q* = (1-q) A0 + q A-

dominates (P, Q) (the pair dp-accounting uses for REPLACE_ONE; Zhu, Dong &
Wang, AISTATS 2022, for dominating pairs and their composition; Balle,
Barthe & Gaboardi 2018 for the privacy profile of the mixtures). Proof: for
any event E with p = M(S)(E), domination of (M(S + x), M(S)) gives
M(S + x)(E) <= A+(U_p) where U_p is the upper half-line of A0-mass p
(Neyman-Pearson), and domination of (M(S + x'), M(S)) applied to the
complement gives M(S + x')(E) >= 1 - A+(complement's half-line) = A-(U_p) by
the mirror symmetry. So for every gamma >= 0

    P(E) - gamma Q(E) <= (1-q)(1-gamma) p + q A+(U_p) - gamma q A-(U_p)
                      = P*(U_p) - gamma Q*(U_p) <= H_gamma(P* || Q*),

one set U_p serving both bounds; the same with x or x' absent from the
sample's other rows (x' = nothing: the add/remove pairs are dominated too).
The pair is symmetric (x -> -x swaps P* and Q*), so one direction serves
both, and its loss

    L(x) = log((1-q) + q e^{l+(x)}) - log((1-q) + q e^{l-(x)})

is increasing and odd; the tails of L are those of x beyond the threshold
x*(c) solving L(x*) = c, in closed form for both bodies (below).

Error model (`pld_pairs`): the tails are computed at the float threshold
x~, exactly the tails at the loss c' = L(x~); `threshold_error` bounds
|c' - c| (the slope of L in the base loss is at most 2), and ``rel`` the
relative error of the tails at x~ (ndtr / exp, and the rounding of the
shifted arguments, which differs between the components).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from fuzzpy.accounting.pld_pairs import GaussianPair, LaplacePair, Tails, ndtr_error
from fuzzpy.support.records import frozen

Array = np.ndarray
ULP = 2.0**-53
_LOG2 = math.log(2.0)


@frozen
class ReplaceTails:
    """The replace-one pair of a Poisson-subsampled Gaussian or Laplace body
    (module docstring), with the interface of `pld_pairs.LossTails`."""

    base: GaussianPair | LaplacePair
    rate: float  # 0 < q < 1, rounded up (a larger q is a mixture toward it: less private)
    remove: bool = True  # symmetric: the same pair in both directions

    # ------------------------------------------------------------ thresholds

    def _threshold(self, c: Array) -> tuple[Array, Array]:
        """x*(c) and a bound of its absolute error in base-loss units."""
        if isinstance(self.base, GaussianPair):
            return self._gaussian_threshold(c)
        return self._laplace_threshold(c)

    def _gaussian_threshold(self, c: Array) -> tuple[Array, Array]:
        # with a = e^{mu x}, k = q e^{-mu^2/2}: k a^2 - B a - k e^c = 0, B = (1-q) expm1(c)
        # for c >= 0 (no cancellation); x*(-c) = -x*(c)
        base = self.base
        assert isinstance(base, GaussianPair)
        mu, q = base.mu, self.rate
        e = np.abs(c)
        b = (1 - q) * np.expm1(e)
        with np.errstate(divide="ignore"):
            log_b = np.log(b)
        log_k = math.log(q) - mu * mu / 2
        s = np.logaddexp(2 * log_b, 2 * _LOG2 + 2 * log_k + e) / 2
        log_a = np.logaddexp(log_b, s) - _LOG2 - log_k
        x = np.sign(c) * log_a / mu
        finite_b = np.where(np.isfinite(log_b), np.abs(log_b), 0.0)
        # each log / logaddexp a few ulp of its magnitude; mu^2/2 and log q likewise
        error = 32 * ULP * (finite_b + np.abs(s) + abs(log_k) + mu * mu + e + np.abs(log_a) + 4)
        return x, error

    def _laplace_threshold(self, c: Array) -> tuple[Array, Array]:
        # on [0, eps0]: L = log(1-q+q e^{2x-eps0}) - A, A = log(1-q+q e^{-eps0}):
        # x = (log((expm1(|c| + A) + q)/q) + eps0)/2, odd in c, clamped to [-eps0, eps0]
        base = self.base
        assert isinstance(base, LaplacePair)
        eps0, q = base.epsilon, self.rate
        a = math.log1p(q * math.expm1(-eps0))
        z = np.abs(c) + a
        gq = np.expm1(z) + q
        floor = q * math.exp(-eps0) / 2  # gq >= q e^{-eps0} exactly for |c| >= 0
        log_g = np.log(np.maximum(gq, floor) / q)
        x = np.clip(np.sign(c) * (log_g + eps0) / 2, -eps0, eps0)
        # beyond the atoms at -+top: every loss is above (below) c
        top = self.loss_range()[1]
        x = np.where(c >= top, np.inf, np.where(c < -top, -np.inf, x))
        err_z = 8 * ULP * (np.abs(c) + abs(a) + 1)
        err_gq = 4 * ULP * (np.abs(np.expm1(z)) + q) + np.exp(z) * err_z * 2
        rel_g = err_gq / np.maximum(gq, floor)
        error = rel_g + 8 * ULP * (np.abs(log_g) + eps0 + 1)  # in 2x: base-loss units
        return x, error

    # ------------------------------------------------------------ tails

    def tails(self, eps: Array) -> Tails:
        eps = np.asarray(eps, dtype=float)
        x, _ = self._threshold(eps)
        q = self.rate
        size = np.where(np.isfinite(x), np.abs(x), 0.0)
        if isinstance(self.base, GaussianPair):
            mu = self.base.mu
            args = (x, x - mu, x + mu)  # P(X > x) under N(0), N(mu), N(-mu) is ndtr(-arg)
            sf = [ndtr(-a) for a in args]
            cdf = [ndtr(a) for a in args]
            hazard = np.minimum(np.maximum.reduce([np.abs(a) for a in args]), 40)
            rel = ndtr_error(hazard) + 4 * ULP * (size + mu + 1) * (hazard + 3)
        else:
            eps0 = self.base.epsilon
            args = (x, x - eps0, x + eps0)
            sf = [_laplace_sf(a) for a in args]
            cdf = [_laplace_sf(-a) for a in args]
            rel = 16 * ULP + 8 * ULP * (size + 2 * eps0 + 1)
        p_sf = (1 - q) * sf[0] + q * sf[1]
        q_sf = (1 - q) * sf[0] + q * sf[2]
        p_cdf = (1 - q) * cdf[0] + q * cdf[1]
        q_cdf = (1 - q) * cdf[0] + q * cdf[2]
        return Tails(p_sf, p_cdf, q_sf, q_cdf, rel + 8 * ULP)

    def threshold_error(self, eps: Array) -> float:
        """A bound of |L(x~) - c| over the thresholds: twice the base-loss
        error of x~ (the slope of L in the base loss is at most 2), doubled
        for safety, plus the rounding of the loss range's ends."""
        eps = np.asarray(eps, dtype=float)
        if eps.size == 0:
            return 0.0
        x, error = self._threshold(eps)
        size = np.where(np.isfinite(x), np.abs(x), 0.0)
        if isinstance(self.base, GaussianPair):
            error = error + 4 * ULP * self.base.mu * size  # x = log a / mu, rounded
            ends = 0.0
        else:  # the atoms' loss, a difference of two log1p's of magnitude <= eps0, -log(1-q)
            ends = 8 * ULP * (self.base.epsilon - math.log1p(-self.rate) + 1)
        finite = error[np.isfinite(error)]
        if finite.size < error.size:
            return math.inf
        return 4 * float(np.max(finite)) + ends + 16 * ULP * (abs(self.loss_range()[1]) + 1)

    def loss_range(self) -> tuple[float, float]:
        q = self.rate
        if isinstance(self.base, LaplacePair):
            eps0 = self.base.epsilon
            top = math.log1p(q * math.expm1(eps0)) - math.log1p(q * math.expm1(-eps0))
            return -top, top
        mu, depth = self.base.mu, self.base.depth
        x = depth + mu
        hi = math.log1p(q * math.expm1(mu * x - mu * mu / 2)) - math.log1p(q * math.expm1(-mu * x - mu * mu / 2))
        return -hi, hi


def _laplace_sf(y: Array) -> Array:
    """P(Lap(0, 1) > y), accurate in both tails."""
    return np.where(y >= 0, 0.5 * np.exp(-np.abs(y)), 1 - 0.5 * np.exp(-np.abs(y)))
