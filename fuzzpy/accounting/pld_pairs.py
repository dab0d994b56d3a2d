"""Dominating pairs of the atoms, as privacy-loss tail functions with error bounds.

A pair (P, Q) dominates a mechanism when its hockey-stick divergence bounds
the mechanism's for every eps (Zhu, Dong & Wang 2022). Each base pair
here has a privacy loss l = log(dP1/dP0) that is increasing in the outcome,
and gives P_b(l > c) and P_b(l <= c) for b in {0, 1}, accurately in both tails.

* Gaussian, mu = s/sigma: P0 = N(0,1), P1 = N(mu,1); l = mu x - mu^2/2.
* Laplace, eps = s/b: P0 = Lap(0,1), P1 = Lap(eps,1); l = |x| - |x - eps|.
* Pure eps-DP: randomized response, l = +-eps (Kairouz, Oh & Viswanath 2015).
* (eps, delta)-DP: the four-point pair of KOV15 with losses +inf, +-eps, -inf.

Poisson subsampling at rate q (Zhu, Dong & Wang 2022, dominating pairs of Poisson subsampling): under removal
the pair is ((1-q) P0 + q P1, P0), with loss L = log(1 - q + q e^l); under
addition (P0, (1-q) P0 + q P1), with L = -log(1 - q + q e^l). Both are
monotone in l, so the tails of L are tails of l at a transformed threshold.

Error model (what `pld_grid` needs to stay an upper bound in floating point):
every tail value v returned for a threshold c is, for some c' within
`LossTails.threshold_error` of c (the same c' for the P- and Q-tails),
within `rel * v_true + FLOOR` of the exact tail at c'. ``rel`` covers

* scipy's `ndtr`: Cephes computes exp(-x^2/2) from a rounded x^2, about
  (1 + x^2) ulp; we allow 16 (1 + x^2) ulp (tests/test_accounting_rigour.py
  checks it against mpmath), and `exp`, a few ulp;
* the rounding of each base pair's own arguments, which may differ between
  P and Q: a threshold moved by d changes a tail by at most d times the
  density, i.e. by a relative d * hazard, and the hazard rate of the normal
  tail is at most |x| + 2 (Mills' ratio), that of the Laplace tail 1.

The parameters themselves are floats rounded towards less privacy by the
caller (larger mu, eps, q, delta), which gives a dominating pair.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from fuzzpy.support.records import frozen

Array = np.ndarray
ULP = 2.0**-53  # unit roundoff of a double
FLOOR = 2.0**-1000  # absolute error allowed on tails near the subnormal range
DEFAULT_DEPTH = 10.0  # base-loss range kept by default: P(beyond) < 1e-23 for Gaussians


def ndtr_error(x: Array) -> Array:
    """Relative error bound of scipy's ndtr at x (see the module docstring).
    Beyond |x| = 40 ndtr returns 0 or 1, within FLOOR of the exact value."""
    return 16 * ULP * (1 + np.minimum(x * x, 1600.0))


@frozen
class GaussianPair:
    """``depth``: how many standard deviations of the base loss the range keeps
    on either side; the mass beyond is counted at +infinity (`pld_grid`), so
    a small delta needs a deep range (`tail_depth`)."""

    mu: float
    depth: float = DEFAULT_DEPTH

    def _argument(self, c: Array, which: int) -> Array:
        shift = self.mu * self.mu / 2 * (1 if which == 0 else -1)
        return (c + shift) / self.mu

    def sf(self, c: Array, which: int) -> Array:
        return ndtr(-self._argument(c, which))

    def cdf(self, c: Array, which: int) -> Array:
        return ndtr(self._argument(c, which))

    def relative_error(self, c: Array) -> Array:
        # (c + mu^2/2) / mu is computed within ulp (mu + 3|x|) of x; times the
        # hazard rate |x| + 3 that is a relative error of the tail
        x = np.minimum(np.maximum(np.abs(self._argument(c, 0)), np.abs(self._argument(c, 1))), 40)
        return ndtr_error(x) + 2 * ULP * (x + 3) * (self.mu + 3 * x + 1)

    def loss_range(self) -> tuple[float, float]:
        half = self.mu * self.mu / 2
        return -half - self.depth * self.mu, half + self.depth * self.mu


def tail_depth(delta: float, count: int, mu: float = 0.0) -> float:
    """A range depth s (in standard deviations) whose Gaussian tails total at
    most 1e-6 delta over ``count`` parts, by Mills' ratio
    Phi(-s) <= phi(s) / s: at least the default 10 (so nothing changes where
    that sufficed, delta above ~1e-15), at most 38 (Phi(-38) ~ 3e-316, below
    every delta the PLD answers at), and no deeper than keeps the largest base
    loss mu^2/2 + s mu below 700 (a subsampled loss log(1 + q expm1(l)) must
    stay a finite double). Any depth is valid: the cut mass is charged in full
    at +infinity (`pld_grid`); a deep range only costs time."""
    if not 0 < delta < 1:
        return DEFAULT_DEPTH
    log_share = math.log(delta) - math.log(max(count, 1)) + math.log(1e-6)
    depth = DEFAULT_DEPTH
    for _ in range(8):  # s^2/2 + log(s sqrt(2 pi)) >= -log_share, by fixed point
        depth = math.sqrt(max(2 * (-log_share - math.log(depth * math.sqrt(2 * math.pi))), 0.0))
        depth = min(max(DEFAULT_DEPTH, depth), 38.0)
    if depth > DEFAULT_DEPTH:  # the fixed point approached from either side
        depth = min(depth * 1.001, 38.0)
    if mu > 0:
        depth = min(depth, max(DEFAULT_DEPTH, (700.0 - mu * mu / 2) / mu))
    return depth


@frozen
class LaplacePair:
    epsilon: float

    def _threshold(self, c: Array, which: int) -> Array:
        # l > c  <=>  x > (c + eps)/2 for c in [-eps, eps); P1 is P0 shifted by eps
        return (c + self.epsilon) / 2 - (self.epsilon if which == 1 else 0.0)

    def sf(self, c: Array, which: int) -> Array:
        t = self._threshold(c, which)
        inside = np.where(t >= 0, 0.5 * np.exp(-np.abs(t)), 1 - 0.5 * np.exp(-np.abs(t)))
        return np.where(c < -self.epsilon, 1.0, np.where(c >= self.epsilon, 0.0, inside))

    def cdf(self, c: Array, which: int) -> Array:
        t = self._threshold(c, which)
        inside = np.where(t < 0, 0.5 * np.exp(-np.abs(t)), 1 - 0.5 * np.exp(-np.abs(t)))
        return np.where(c < -self.epsilon, 0.0, np.where(c >= self.epsilon, 1.0, inside))

    def relative_error(self, c: Array) -> Array:
        # exp to a few ulp; the threshold (c + eps)/2 - eps within ulp (|c| + 2 eps),
        # times the hazard rate 1
        return 16 * ULP + 4 * ULP * (np.abs(c) + 2 * self.epsilon)

    def loss_range(self) -> tuple[float, float]:
        return -self.epsilon, self.epsilon


@frozen
class RandomizedResponsePair:
    """KOV15's (eps, delta) pair; delta = 0 is randomized response."""

    epsilon: float
    delta: float = 0.0

    def _masses(self, which: int) -> tuple[float, float, float, float]:
        """Masses at losses (+inf, +eps, -eps, -inf) under P_which."""
        p = 1 / (1 + math.exp(-self.epsilon))  # e^eps / (1 + e^eps)
        rest = 1 - self.delta
        if which == 1:
            return self.delta, rest * p, rest * (1 - p), 0.0
        return 0.0, rest * (1 - p), rest * p, self.delta

    def sf(self, c: Array, which: int) -> Array:
        top, high, low, _ = self._masses(which)
        return top + np.where(c < self.epsilon, high, 0.0) + np.where(c < -self.epsilon, low, 0.0)

    def cdf(self, c: Array, which: int) -> Array:
        top, high, low, bottom = self._masses(which)
        return (
            bottom + np.where(c >= -self.epsilon, low, 0.0) + np.where(c >= self.epsilon, high, 0.0)
        )

    def relative_error(self, c: Array) -> Array:
        return np.full(np.shape(c), 16 * ULP)  # comparisons with the atoms are exact

    def loss_range(self) -> tuple[float, float]:
        return -self.epsilon, self.epsilon


BasePair = GaussianPair | LaplacePair | RandomizedResponsePair


@frozen
class Tails:
    """P(L > c), P(L <= c), Q(L > c), Q(L <= c) at thresholds c, and a
    relative error bound valid for all four (module docstring)."""

    p_sf: Array
    p_cdf: Array
    q_sf: Array
    q_cdf: Array
    rel: Array


@frozen
class LossTails:
    """A (possibly subsampled) pair in one direction: tails of the loss L."""

    base: BasePair
    rate: float  # 1.0: not subsampled
    remove: bool  # True: removal direction; False: addition

    def _threshold(self, eps: Array) -> tuple[Array, Array]:
        """For removal, L > eps <=> l > g(eps); for addition L > eps <=> l < g(-eps),
        with g(e) = log((e^e - (1-q))/q). Also returns where g is -inf (always / never)."""
        q = self.rate
        e = eps if self.remove else -eps
        if q >= 1:
            return e, np.zeros_like(e, dtype=bool)
        shifted = np.expm1(e) + q  # e^e - (1 - q)
        degenerate = shifted <= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.log(np.where(degenerate, 1.0, shifted) / q)
        return g, degenerate

    def _mix(self, fn: str, c: Array) -> tuple[Array, Array]:
        """(P-probability, Q-probability) of {l > c} (fn='sf') or {l <= c} (fn='cdf')."""
        q = self.rate
        f0 = getattr(self.base, fn)(c, 0)
        f1 = getattr(self.base, fn)(c, 1)
        mixture = (1 - q) * f0 + q * f1 if q < 1 else f1
        return (mixture, f0) if self.remove else (f0, mixture)

    def tails(self, eps: Array) -> Tails:
        g, degenerate = self._threshold(eps)
        if self.remove:
            p_sf, q_sf = self._mix("sf", g)
            p_cdf, q_cdf = self._mix("cdf", g)
        else:  # L > eps <=> l < g: the lower tail of l ("cdf"), up to atoms at g
            p_sf, q_sf = self._mix("cdf", g)
            p_cdf, q_cdf = self._mix("sf", g)
        always = 1.0 if self.remove else 0.0
        fix = lambda a, v: np.where(degenerate, v, a)  # noqa: E731
        finite_g = np.where(np.isfinite(g), g, 0.0)
        rel = self.base.relative_error(finite_g) + 4 * ULP  # the mixture adds two roundings
        return Tails(
            fix(p_sf, always),
            fix(p_cdf, 1 - always),
            fix(q_sf, always),
            fix(q_cdf, 1 - always),
            rel,
        )

    def threshold_error(self, eps: Array) -> float:
        """How far (in L) the threshold the tails were computed at may lie from
        the nominal one (the same for P and Q: g is computed once). For the
        subsampled map, g = log((expm1(e) + q)/q) is computed with an error
        whose image under L = log(1 - q + q e^l) (slope <= 1) is at most a
        few ulp times 3 + 1/(1 - q) + |g| + |e|; without subsampling, 0."""
        if self.rate >= 1:
            return 0.0
        g, _ = self._threshold(eps)
        finite = np.abs(g[np.isfinite(g)])
        g_max = float(finite.max()) if finite.size else 0.0
        e_max = float(np.max(np.abs(eps))) if np.size(eps) else 0.0
        return 8 * ULP * (3 + 1 / (1 - self.rate) + g_max + e_max)

    def loss_range(self) -> tuple[float, float]:
        lo, hi = self.base.loss_range()
        q = self.rate
        if q < 1 and isinstance(self.base, RandomizedResponsePair) and self.base.delta > 0:
            lo = -math.inf  # the atom at l = -inf becomes L = +-log(1 - q)

        def mapped(loss: float) -> float:
            return loss if q >= 1 else math.log1p(q * math.expm1(loss))

        if self.remove:
            return mapped(lo), mapped(hi)
        return -mapped(hi), -mapped(lo)
