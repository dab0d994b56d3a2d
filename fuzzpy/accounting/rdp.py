"""Renyi DP: a curve eps(alpha) per atom on a dense order grid, summed under
composition (Mironov 2017, Prop. 1), converted to (eps, delta) at the best order.

Conversion: an (alpha, tau)-RDP mechanism is (eps, delta)-DP with
eps = tau + log((alpha - 1)/alpha) - (log delta + log alpha)/(alpha - 1)
(Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm 21; the same bound is
Canonne, Kamath & Steinke 2020, Prop. 12). It is never worse than Mironov's
tau + log(1/delta)/(alpha - 1).

Every curve comes with an absolute bound on its floating-point error (the
error model of `rounding`: 1 ulp per operation, an ulp at most 2 U of the
value), carried through the composition and the conversion and added to each
order's epsilon, so the minimum over orders is rounded up. Parameters enter
rounded up (rho, eps), which only makes a curve larger: the Renyi divergence
of each pair below increases with its parameter.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from functools import lru_cache

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant
from scipy import integrate

from fuzzpy.accounting.atoms import (
    ApproxAtom,
    Atom,
    Atoms,
    DiscreteGaussianAtom,
    GaussianAtom,
    LaplaceAtom,
    PureAtom,
    SubsampledAtom,
    amplified_epsilon_up,
    subsampled_pure_epsilon,
)
from fuzzpy.accounting.rounding import U, float_down, float_up
from fuzzpy.support.quiet import quiet_absl

# Dense near 1 (where large deltas and long compositions need it); from 2 to
# 128 a geometric grid with 1% steps (fractional orders: where a subsampled
# Gaussian's curve turns steeply upwards the best order lies between two
# integers, and missing it cost up to a third of epsilon), together with the
# integers; then a geometric tail up to 1024 (short compositions at small deltas).
ORDERS = np.unique(
    np.concatenate(
        [
            1 + np.geomspace(1e-3, 1.0, 160),
            np.geomspace(2.0, 128.0, 419),
            np.arange(2, 129),
            np.round(2 ** np.arange(7.25, 10.25, 0.25)),
        ]
    )
)

Curve = tuple[np.ndarray, np.ndarray]  # (values, absolute error bound)

# Where the subsampled Gaussian is computed (the others follow by
# monotonicity): every 6th order below 2 (by quadrature, the slow part),
# every order from 2 to 16 (where the curve turns steeply upwards it changes
# by several percent from one order to the next, and the integers are 6-50%
# apart), then the integers and the tail (at most 6% apart; each fractional
# order costs a slowly converging series).
_WHOLE = ORDERS[np.round(ORDERS) == ORDERS]
_SUBSAMPLED_ORDERS = np.concatenate(
    [ORDERS[ORDERS < 2][::6], ORDERS[(ORDERS >= 2) & (ORDERS <= 16)], _WHOLE[_WHOLE > 16]]
)

# dp-accounting's subsampled-Gaussian series are float computations without
# an error bound of their own; tests/test_accounting_tight.py checks them
# against quadrature in mpmath. This relative margin covers their rounding
# and their truncation (stopped at terms e^-30 below the sum) many times over.
_SUBSAMPLED_MARGIN = 1e-9


def gaussian_curve(rho: float) -> np.ndarray:
    """Gaussian mechanism: D_alpha = alpha rho (Mironov 2017, Table II)."""
    return _gaussian(rho)[0]


def _gaussian(rho: float) -> Curve:
    values = ORDERS * rho
    return values, 2 * U * values


def laplace_curve(epsilon: float) -> np.ndarray:
    return _laplace(epsilon)[0]


def _laplace(epsilon: float) -> Curve:
    """Laplace mechanism (Mironov 2017, Prop. 6): for alpha > 1,
    1/(alpha-1) log(alpha/(2alpha-1) e^{(alpha-1)eps} + (alpha-1)/(2alpha-1) e^{-alpha eps}),
    and never above eps. The log-sum-exp's error is a few ulps of its terms'
    magnitudes; dividing by alpha - 1 scales it."""
    a = ORDERS
    first = np.log(a / (2 * a - 1))
    second = np.log((a - 1) / (2 * a - 1))
    terms = np.logaddexp(first + (a - 1) * epsilon, second - a * epsilon)
    magnitude = np.abs(first) + np.abs(second) + (2 * a - 1) * epsilon + np.abs(terms) + 1
    return _capped(terms / (a - 1), 16 * U * magnitude / (a - 1), epsilon)


def randomized_response_curve(epsilon: float) -> np.ndarray:
    return _randomized_response(epsilon)[0]


def _randomized_response(epsilon: float) -> Curve:
    """Any pure eps-DP pair is a post-processing of randomized response with
    P(true) = e^eps/(1+e^eps) (Kairouz, Oh & Viswanath 2015, Sec. 2), so by
    data processing its D_alpha is at most that of randomized response:
    1/(alpha-1) log(p^alpha (1-p)^{1-alpha} + (1-p)^alpha p^{1-alpha})
    (tight: Steinke 2024, "Sharp RDP & zCDP from pure DP", Thm 4)."""
    a = ORDERS
    log_p = -np.logaddexp(0.0, -epsilon)
    log_q = -np.logaddexp(0.0, epsilon)
    first, second = a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p
    terms = np.logaddexp(first, second)
    magnitude = (2 * a - 1) * (abs(log_p) + abs(log_q)) + np.abs(terms) + 1
    return _capped(terms / (a - 1), 16 * U * magnitude / (a - 1), epsilon)


def _capped(values: np.ndarray, error: np.ndarray, epsilon: float) -> Curve:
    """A pure eps-DP pair has D_alpha <= eps (exactly, with no error)."""
    above = values + error >= epsilon
    return np.where(above, epsilon, values), np.where(above, 0.0, error)


def pure_curve(atom: PureAtom) -> np.ndarray:
    return _pure(atom)[0]


def _pure(atom: PureAtom) -> Curve:
    epsilon = float_up(atom.epsilon)
    curve = _randomized_response(epsilon)
    if atom.bounded_range:  # eps^2/8-zCDP (Cesar & Rogers 2021)
        curve = _minimum(curve, _gaussian(float_up(atom.epsilon**2 / 8)))
    return curve


def _minimum(first: Curve, second: Curve) -> Curve:
    """The smaller upper bound at each order (each value with its own error)."""
    take = first[0] + first[1] <= second[0] + second[1]
    return np.where(take, first[0], second[0]), np.where(take, first[1], second[1])


def _subsampled_gaussian(rate: float, mu: float) -> Curve:
    values, error = subsampled_gaussian_curve_with_error(rate, mu)
    return values, error


def subsampled_gaussian_curve(rate: float, mu: float) -> np.ndarray:
    return subsampled_gaussian_curve_with_error(rate, mu)[0]


@lru_cache(maxsize=256)
def subsampled_gaussian_curve_with_error(rate: float, mu: float) -> Curve:
    """Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019, Sec. 3.3),
    ``rate`` and ``mu`` rounded up (a larger rate or a smaller sigma only
    increases it). Computed at a subset of the orders (`_SUBSAMPLED_ORDERS`)
    and carried to the others by monotonicity: D_alpha never decreases with
    alpha (van Erven & Harremoes 2014, Thm 3), so each order takes the value
    of the next computed order above it.

    Orders >= 2: dp-accounting's RDP accountant (a finite sum at integer
    orders, MTZ's two series at fractional ones). Orders in (1, 2), where
    those series converge slowly or not at all (dp-accounting then drops the
    order): `_log_moment_by_quadrature`."""
    high = _SUBSAMPLED_ORDERS[_SUBSAMPLED_ORDERS >= 2]
    low = _SUBSAMPLED_ORDERS[_SUBSAMPLED_ORDERS < 2]
    accountant = RdpAccountant(orders=list(high))
    with quiet_absl():
        accountant.compose(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(1 / mu)))
    high_values = np.array(accountant.rdp, dtype=float)
    high_error = _SUBSAMPLED_MARGIN * np.abs(high_values) + 1e-300
    low_values, low_error = np.empty(low.size), np.empty(low.size)
    for i, order in enumerate(low):
        log_moment, log_error = _log_moment_by_quadrature(rate, 1 / mu, float(order))
        low_values[i] = log_moment / (order - 1)
        low_error[i] = log_error / (order - 1)
    computed = np.concatenate([low_values, high_values])
    computed_error = np.concatenate([low_error, high_error])
    # the next computed order at or above each order (inf beyond the last one)
    index = np.searchsorted(_SUBSAMPLED_ORDERS, ORDERS, side="left")
    inside = index < _SUBSAMPLED_ORDERS.size
    clipped = np.minimum(index, _SUBSAMPLED_ORDERS.size - 1)
    values = np.where(inside, computed[clipped], np.inf)
    error = np.where(inside, computed_error[clipped], 0.0)
    values.setflags(write=False)
    error.setflags(write=False)
    return values, error


def _log_moment_by_quadrature(rate: float, sigma: float, order: float) -> tuple[float, float]:
    """(log A_alpha, a generous bound on its error) with
    A_alpha = E_{z ~ N(0, sigma^2)}[(1 - q + q e^{(2z - 1)/(2 sigma^2)})^alpha]
    (MTZ 2019, Sec. 3.3), by adaptive quadrature of the integrand scaled by
    its maximum. The error bound is 1000 times quadpack's estimate plus the
    rounding of the log-space integrand; tests/test_accounting_tight.py checks
    the values against mpmath quadrature at 120 bits."""
    variance = sigma * sigma
    log_keep, log_rate = math.log1p(-rate), math.log(rate)
    shift = -0.5 * math.log(2 * math.pi * variance)

    def log_integrand(z: float) -> float:
        ratio = np.logaddexp(log_keep, log_rate + (2 * z - 1) / (2 * variance))
        return float(shift - z * z / (2 * variance) + order * ratio)

    grid = np.linspace(-12 * sigma, 12 * sigma + order + 2, 241)
    logs = [log_integrand(z) for z in grid]
    peak = int(np.argmax(logs))
    top, centre = logs[peak], float(grid[peak])
    cuts = [centre + width * sigma for width in (-40.0, -8.0, 0.0, 8.0, 40.0)]
    pieces = [(-np.inf, cuts[0]), *zip(cuts, cuts[1:], strict=False), (cuts[-1], np.inf)]
    total, estimate = 0.0, 0.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", integrate.IntegrationWarning)
        for lo, hi in pieces:
            value, error = integrate.quad(
                lambda z: math.exp(log_integrand(z) - top), lo, hi, epsabs=0.0, epsrel=1e-13, limit=200
            )
            total += value
            estimate += error
    if any(issubclass(w.category, integrate.IntegrationWarning) for w in caught) or not total > 0:
        # quadpack's own estimate is then not to be trusted (extreme sigma,
        # e.g. 0.001): no bound at this order (inf; the others still hold)
        return math.inf, math.inf
    rounding = 64 * U * (abs(top) + order * (abs(log_rate) + 1) + 1)
    return top + math.log(total), 1000 * estimate / total + rounding


def atom_curve(atom: Atom) -> tuple[np.ndarray, float]:
    """(RDP curve, delta): the atom is delta-approximately RDP with the curve
    (an (eps, delta) atom is delta-approximately eps-DP; deltas add, as for
    approximate zCDP, Bun & Steinke 2016, Sec. 8)."""
    curve, _, delta = atom_curve_with_error(atom)
    return curve, float(delta)


def atom_curve_with_error(atom: Atom) -> tuple[np.ndarray, np.ndarray, Fraction]:
    """(curve, absolute error bound, exact delta)."""
    if isinstance(atom, GaussianAtom | DiscreteGaussianAtom):
        # the discrete Gaussian: D_alpha <= alpha rho, its zCDP (CKS 2020, Sec. 2.1)
        return (*_gaussian(float_up(atom.rho)), Fraction(0))
    if isinstance(atom, LaplaceAtom):
        return (*_laplace(float_up(atom.epsilon)), Fraction(0))
    if isinstance(atom, PureAtom):
        return (*_pure(atom), Fraction(0))
    if isinstance(atom, ApproxAtom):
        return (*_randomized_response(float_up(atom.epsilon)), atom.delta)
    if not isinstance(atom, SubsampledAtom):
        # a replace-one pair (`atoms.ReplaceSubsampledAtom`): not this method's (`accountant.REPLACE_AWARE`)
        raise ValueError("no Renyi curve for a replace-one subsampled atom")
    return _subsampled_curve(atom)


def _subsampled_curve(atom: SubsampledAtom) -> tuple[np.ndarray, np.ndarray, Fraction]:
    if isinstance(atom.inner, GaussianAtom):
        # 1/mu = sigma rounded down by rounding mu up (`GaussianAtom.mu`)
        return (*_subsampled_gaussian(float_up(atom.rate), atom.inner.mu), Fraction(0))
    amplified = subsampled_pure_epsilon(atom)
    if amplified is not None:  # Balle, Barthe & Gaboardi 2018
        curve = _randomized_response(float_up(amplified))
        if isinstance(atom.inner, LaplaceAtom):
            # subsampling never increases a Renyi divergence (joint
            # quasi-convexity, van Erven & Harremoes 2014): the inner curve holds too
            curve = _minimum(curve, _laplace(float_up(atom.inner.epsilon)))
        return (*curve, Fraction(0))
    assert isinstance(atom.inner, ApproxAtom)
    epsilon = amplified_epsilon_up(atom.rate, atom.inner.epsilon)
    return (*_randomized_response(float_up(epsilon)), atom.rate * atom.inner.delta)


def total_curve(atoms: Atoms) -> tuple[np.ndarray, float]:
    curve, _, delta = total_curve_with_error(atoms)
    return curve, float(delta)


def total_curve_with_error(atoms: Atoms) -> tuple[np.ndarray, np.ndarray, Fraction]:
    """The composed curve, its error bound (each n * c and each sum is one
    more rounding of at most 2 U of the value) and the exact total delta."""
    curve = np.zeros_like(ORDERS)
    error = np.zeros_like(ORDERS)
    delta = Fraction(0)
    for atom, n in atoms.items():
        c, e, d = atom_curve_with_error(atom)
        curve = curve + n * c
        error = error + n * e + 4 * U * np.abs(curve)
        delta += n * d
    return curve, error, delta


def epsilon_from_curve(curve: np.ndarray, delta: float, error: np.ndarray | None = None) -> float:
    """Balle et al. 2020, Thm 21, minimised over the order grid, each order's
    value raised by the curve's error and the conversion's own rounding."""
    if delta <= 0:
        return float("inf")
    if delta >= 1:
        return 0.0
    a = ORDERS
    log_delta = np.log(delta)
    shrink = np.log1p(-1 / a)
    tail = (log_delta + np.log(a)) / (a - 1)
    eps = curve + shrink - tail
    rounding = 16 * U * (np.abs(curve) + np.abs(shrink) + (abs(log_delta) + np.log(a)) / (a - 1))
    if error is not None:
        rounding = rounding + error
    best = float(np.nanmin(eps + rounding))
    return max(best, 0.0)


def epsilon(atoms: Atoms, delta: float) -> float:
    curve, error, used = total_curve_with_error(atoms)
    remaining = Fraction(delta) - used
    if remaining <= 0:
        return float("inf")
    return epsilon_from_curve(curve, float_down(remaining), error)
