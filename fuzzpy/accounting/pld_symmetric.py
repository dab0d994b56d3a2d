"""The symmetrised pair of a subsampled step whose pair may face either way.

A fixed-size sample under replace-one (`neighbours`, `events.Subsample.
either_way`) gives, per step and for either order of the two datasets, a
hockey-stick divergence at e^eps (eps >= 0) at most that of the Poisson
removal pair R = ((1-q) Q0 + q P0, Q0) of the body at distance 2 (Balle,
Barthe & Gaboardi 2018, Thm 2 and Thm 10). The composition theorem of
dominating pairs (Zhu, Dong & Wang, AISTATS 2022, Thm 10) needs one pair that
dominates every step for all alpha, i.e. both orders. R alone does not (at
alpha < 1 it bounds one order only), nor does composing R and its reverse A
separately and taking the larger: a step may face either way from one step
to the next. The least symmetric pair above R is the symmetrisation of its
trade-off function, C(f) = min{f, f^-1}** (Dong, Roth & Su 2022, Sec. 4;
Zhu, Dong & Wang 2022, Sec. 5): its privacy loss law under P is

    omega_C(l) = omega_R(l)             for l > 0,
    omega_C(-l) = e^{-l} omega_R(l)     for l > 0 (so P and Q are mirror images),
    omega_C(0) = 1 - P_R(L > 0) - Q_R(L > 0),

whose hockey-stick divergence is R's at every eps >= 0 and, by the mirror,
bounds the step's at eps < 0 too (H_{e^-e}(P||Q) = 1 - e^-e + e^-e H_{e^e}(Q||P)).
It is a probability law when P_R(L > 0) + Q_R(L > 0) <= 1, which holds for
every base pair here (Gaussian, Laplace, randomized response, KOV's (eps,
delta) pair: each is the mirror image of itself, so Q0(l > 0) = P0(l < 0), and
P_R(L>0) + Q_R(L>0) = (1-q) Q0(l>0) + q P0(l>0) + Q0(l>0) <= P0(l>0) + P0(l<0)).
One step of C is exactly R's figure; T steps compose C^T, which is
symmetric, so one direction suffices.

Tails: for c >= 0 those of R above c (and their complements below); for
c < 0, P_C(L <= c) = Q_R(L > -c) and Q_C(L <= c) = P_R(L > -c) (an atom of R
at exactly -c is counted above c for P and Q alike: its mass moves up in
loss, which only raises the bound, `pld_grid`). Complements carry an
absolute error that `_complement` turns into a relative one for `pld_grid`.
"""

from __future__ import annotations

import numpy as np

from fuzzpy.accounting.pld_pairs import ULP, BasePair, LossTails, Tails
from fuzzpy.support.records import frozen

Array = np.ndarray


@frozen
class SymmetrisedTails:
    """The symmetrised pair of the subsampled removal pair ``inner`` (module
    docstring); the same interface as `pld_pairs.LossTails`."""

    inner: LossTails

    def __post_init__(self) -> None:
        if not self.inner.remove:
            raise ValueError("the symmetrised pair is built from the removal pair")

    @property
    def base(self) -> BasePair:
        return self.inner.base

    @property
    def rate(self) -> float:
        return self.inner.rate

    @property
    def remove(self) -> bool:
        return True

    def tails(self, eps: Array) -> Tails:
        eps = np.asarray(eps, dtype=float)
        upper = self.inner.tails(np.abs(eps))  # R's tails above |c|
        rel = upper.rel
        positive = eps >= 0
        # c >= 0: R's upper tails, their complements below
        p_cdf_pos, rel_p_pos = _complement(upper.p_sf, rel)
        q_cdf_pos, rel_q_pos = _complement(upper.q_sf, rel)
        # c < 0: the mirror, P_C(L <= c) = Q_R(L > -c), Q_C(L <= c) = P_R(L > -c)
        p_sf_neg, rel_p_neg = _complement(upper.q_sf, rel)
        q_sf_neg, rel_q_neg = _complement(upper.p_sf, rel)
        p_sf = np.where(positive, upper.p_sf, p_sf_neg)
        p_cdf = np.where(positive, p_cdf_pos, upper.q_sf)
        q_sf = np.where(positive, upper.q_sf, q_sf_neg)
        q_cdf = np.where(positive, q_cdf_pos, upper.p_sf)
        rels = np.where(positive, np.maximum(rel_p_pos, rel_q_pos), np.maximum(rel_p_neg, rel_q_neg))
        return Tails(p_sf, p_cdf, q_sf, q_cdf, np.maximum(rels, rel))

    def threshold_error(self, eps: Array) -> float:
        # the thresholds are R's at |c|: the mirror is exact
        return self.inner.threshold_error(np.abs(np.asarray(eps, dtype=float)))

    def loss_range(self) -> tuple[float, float]:
        _, hi = self.inner.loss_range()
        top = max(hi, 0.0)
        return -top, top


def _complement(value: Array, rel: Array) -> tuple[Array, Array]:
    """1 - v for a tail v known within rel * v (+ a rounding), as a value
    and a relative error with |value - exact| <= rel' * value (what
    `pld_grid.upper`, `lower` and `_cell_bounds` use): the absolute error
    e = rel v + 2 ulp over the computed 1 - v, at most 1 where 1 - v is
    within 2e of 0 (the value is then raised to 2e)."""
    error = rel * np.maximum(value, 0.0) + 2 * ULP
    raw = 1.0 - value
    small = raw < 2 * error
    out = np.where(small, 2 * error, raw)
    relative = np.where(small, 1.0, 2 * error / np.where(small, 1.0, out))
    return out, relative
