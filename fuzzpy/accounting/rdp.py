"""Renyi DP: a curve eps(alpha) per atom on a dense order grid, summed under
composition (Mironov 2017, Prop. 1), converted to (eps, delta) at the best order.

Conversion: an (alpha, tau)-RDP mechanism is (eps, delta)-DP with
eps = tau + log((alpha - 1)/alpha) - (log delta + log alpha)/(alpha - 1)
(Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm 21; the same bound is
Canonne, Kamath & Steinke 2020, Prop. 12). It is never worse than Mironov's
tau + log(1/delta)/(alpha - 1).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from fuzzpy.accounting.atoms import (
    ApproxAtom,
    Atom,
    Atoms,
    GaussianAtom,
    LaplaceAtom,
    PureAtom,
    SubsampledAtom,
    subsampled_pure_epsilon,
)

# Dense near 1 (where large deltas and long compositions need it), integers
# up to 128 (where subsampled Gaussians are exact finite sums), then a
# geometric tail of integers up to 1024 (for short compositions at small deltas).
ORDERS = np.unique(
    np.concatenate(
        [
            1 + np.geomspace(1e-3, 0.99, 48),
            np.arange(2, 129),
            np.round(2 ** np.arange(7.25, 10.25, 0.25)),
        ]
    )
)


def gaussian_curve(rho: float) -> np.ndarray:
    """Gaussian mechanism: D_alpha = alpha rho (Mironov 2017, Table II)."""
    return ORDERS * rho


def laplace_curve(epsilon: float) -> np.ndarray:
    """Laplace mechanism (Mironov 2017, Table II): for alpha > 1,
    1/(alpha-1) log(alpha/(2alpha-1) e^{(alpha-1)eps} + (alpha-1)/(2alpha-1) e^{-alpha eps})."""
    a = ORDERS
    terms = np.logaddexp(
        np.log(a / (2 * a - 1)) + (a - 1) * epsilon,
        np.log((a - 1) / (2 * a - 1)) - a * epsilon,
    )
    return np.minimum(terms / (a - 1), epsilon)


def randomized_response_curve(epsilon: float) -> np.ndarray:
    """Any pure eps-DP pair is a post-processing of randomized response with
    P(true) = e^eps/(1+e^eps) (Kairouz, Oh & Viswanath 2015, Sec. 2), so by
    data processing its D_alpha is at most that of randomized response:
    1/(alpha-1) log(p^alpha (1-p)^{1-alpha} + (1-p)^alpha p^{1-alpha})."""
    a = ORDERS
    log_p = -np.logaddexp(0.0, -epsilon)
    log_q = -np.logaddexp(0.0, epsilon)
    terms = np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p)
    return np.minimum(terms / (a - 1), epsilon)


def pure_curve(atom: PureAtom) -> np.ndarray:
    curve = randomized_response_curve(float(atom.epsilon))
    if atom.bounded_range:  # eps^2/8-zCDP (Cesar & Rogers 2021)
        curve = np.minimum(curve, ORDERS * float(atom.epsilon) ** 2 / 8)
    return curve


@lru_cache(maxsize=256)
def subsampled_gaussian_curve(rate: float, mu: float) -> np.ndarray:
    """Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019, Sec. 3.3),
    computed by dp-accounting's RDP accountant at our orders."""
    accountant = RdpAccountant(orders=list(ORDERS))
    accountant.compose(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(1 / mu)))
    curve = np.array(accountant.rdp, dtype=float)
    curve.setflags(write=False)
    return curve


def atom_curve(atom: Atom) -> tuple[np.ndarray, float]:
    """(RDP curve, delta): the atom is delta-approximately RDP with the curve
    (an (eps, delta) atom is delta-approximately eps-DP; deltas add, as for
    approximate zCDP, Bun & Steinke 2016, Sec. 8)."""
    if isinstance(atom, GaussianAtom):
        return gaussian_curve(float(atom.rho)), 0.0
    if isinstance(atom, LaplaceAtom):
        return laplace_curve(float(atom.epsilon)), 0.0
    if isinstance(atom, PureAtom):
        return pure_curve(atom), 0.0
    if isinstance(atom, ApproxAtom):
        return randomized_response_curve(float(atom.epsilon)), float(atom.delta)
    return _subsampled_curve(atom)


def _subsampled_curve(atom: SubsampledAtom) -> tuple[np.ndarray, float]:
    if isinstance(atom.inner, GaussianAtom):
        return subsampled_gaussian_curve(float(atom.rate), atom.inner.mu), 0.0
    amplified = subsampled_pure_epsilon(atom)
    if amplified is not None:  # Balle, Barthe & Gaboardi 2018
        return randomized_response_curve(float(amplified)), 0.0
    assert isinstance(atom.inner, ApproxAtom)
    q = float(atom.rate)
    epsilon = math.log1p(q * math.expm1(float(atom.inner.epsilon)))
    return randomized_response_curve(epsilon), q * float(atom.inner.delta)


def total_curve(atoms: Atoms) -> tuple[np.ndarray, float]:
    curve = np.zeros_like(ORDERS)
    delta = 0.0
    for atom, n in atoms.items():
        c, d = atom_curve(atom)
        curve = curve + n * c
        delta += n * d
    return curve, delta


def epsilon_from_curve(curve: np.ndarray, delta: float) -> float:
    """Balle et al. 2020, Thm 21, minimised over the order grid."""
    if delta <= 0:
        return math.inf
    if delta >= 1:
        return 0.0
    a = ORDERS
    eps = curve + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    best = float(np.nanmin(eps))
    return max(best, 0.0)


def epsilon(atoms: Atoms, delta: float) -> float:
    curve, used = total_curve(atoms)
    return epsilon_from_curve(curve, delta - used)
