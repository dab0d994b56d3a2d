"""Exact epsilon of Gaussians composed with pure and (eps, delta) events.

The Gaussians merge into one of mu = sqrt(sum mu_i^2) (`gaussian`), whose
loss is N(mu^2/2, mu^2); each pure or (eps_i, delta_i) event is dominated by
randomized response with a mass delta_i at +-infinity, which is attained
(Kairouz, Oh & Viswanath 2015; `heterogeneous`), so the discrete part's loss
D takes the values x with probabilities p_x (enumerated). Conditioning on D,

    delta(eps) = 1 - prod (1 - delta_i) (1 - sum_x p_x delta_G(eps - x)),

with delta_G(e) = Phi(mu/2 - e/mu) - e^e Phi(-mu/2 - e/mu) the analytic
Gaussian's curve (Balle & Wang 2018, Thm 8), valid for every real e: the
hockey-stick divergence E_P[(1 - e^{eps - L_G - D})_+] averaged over D. No
bound can be smaller. No tail is cut, so this answers at every delta down to
the smallest double (the PLD stops at 1e-300).

Rigour: a float candidate (log_ndtr, vectorised) is checked in mpmath: every
delta_G term is bounded above as `gaussian.delta_bounds` does (relative
error 2^-(precision - 8) (1 + x^2 + |e|) on each Phi term), the masses are
binomial products at MP_PREC + 16 bits, and the whole is padded by 2^-100;
the candidate is raised until the check passes.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp, mpf
from scipy.special import log_ndtr

from fuzzpy.accounting import heterogeneous
from fuzzpy.accounting.atoms import ApproxAtom, Atoms, GaussianAtom, PureAtom, mu_up
from fuzzpy.accounting.gaussian import root_at_or_past
from fuzzpy.accounting.optimal import randomized_response
from fuzzpy.accounting.rounding import MP_MARGIN, MP_PREC, mp_of

_MAX_RAISES = 60
_EPS_CEILING = 1e300  # the analytic Gaussian's reach (`gaussian._EPS_CEILING`, issue 25)


def applies(atoms: Atoms) -> bool:
    """Gaussians and at least one pure (not an exponential mechanism) or
    (eps, delta) event, nothing else: then the answer is exact."""
    gaussians = [a for a in atoms if isinstance(a, GaussianAtom)]
    others = [a for a in atoms if not isinstance(a, GaussianAtom)]
    return bool(gaussians and others) and all(
        isinstance(a, ApproxAtom) or isinstance(a, PureAtom) and not a.bounded_range for a in others
    )


def epsilon(atoms: Atoms, delta: float) -> float | None:
    """The exact epsilon at ``delta``, rounded up; None where it does not apply."""
    if not applies(atoms) or not 0 < delta < 1:
        return None
    discrete = {a: n for a, n in atoms.items() if not isinstance(a, GaussianAtom)}
    found = heterogeneous.profile(Atoms(discrete))
    if found is None:
        return None
    groups, deltas = found
    rho = sum((a.rho * n for a, n in atoms.items() if isinstance(a, GaussianAtom)), Fraction(0))
    mu = mu_up(rho)  # a larger mu is a less private Gaussian: the bound stays valid
    losses, log_masses = _points(groups)
    kept = _log_kept(deltas)
    candidate = _candidate(mu, losses, log_masses, math.exp(kept), delta)
    if math.isinf(candidate):
        return math.inf
    return _certified(mu, groups, deltas, delta, candidate)


def _points(groups: heterogeneous.Groups) -> tuple[np.ndarray, np.ndarray]:
    losses, log_masses = np.zeros(1), np.zeros(1)
    for eps, n in groups:
        values, masses = randomized_response(eps, n)
        losses = (losses[:, None] + values[None, :]).ravel()
        log_masses = (log_masses[:, None] + masses[None, :]).ravel()
    return losses, log_masses


def _log_kept(deltas: tuple[tuple[Fraction, int], ...]) -> float:
    return float(sum(n * math.log1p(-float(d)) for d, n in deltas))


def _log_gaussian_delta(mu: float, e: np.ndarray) -> np.ndarray:
    """log delta_G(e), vectorised, in floats (a candidate only)."""
    a = log_ndtr(mu / 2 - e / mu)
    b = e + log_ndtr(-mu / 2 - e / mu)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b < a, a + np.log1p(-np.exp(np.minimum(b - a, 0.0))), -np.inf)


def _log_delta(mu: float, losses: np.ndarray, log_masses: np.ndarray, kept: float, eps: float) -> float:
    terms = log_masses + _log_gaussian_delta(mu, eps - losses)
    top = float(np.max(terms))
    if not math.isfinite(top):
        finite = -math.inf
    else:
        finite = top + math.log(float(np.sum(np.exp(terms - top))))
    # 1 - kept (1 - F) = (1 - kept) + kept F
    used = -math.expm1(math.log(kept)) if kept < 1 else 0.0
    if used <= 0:
        return math.log(kept) + finite
    return float(np.logaddexp(math.log(used), math.log(kept) + finite))


def _candidate(mu: float, losses: np.ndarray, log_masses: np.ndarray, kept: float, delta: float) -> float:
    target = math.log(delta)
    if 1 - kept > delta:
        return math.inf
    f = lambda e: _log_delta(mu, losses, log_masses, kept, e) - target  # noqa: E731
    if f(0.0) <= 0:
        return 0.0
    hi = max(1.0, mu * mu / 2 + 4 * mu + float(np.max(losses)))
    if not math.isfinite(hi):  # mu past ~1e154: beyond doubles
        return math.inf
    while f(hi) > 0:
        hi *= 2
        if hi > _EPS_CEILING:
            return math.inf
    return root_at_or_past(f, 0.0, hi, xtol=1e-14, rtol=1e-14)


def _certified(
    mu: float,
    groups: heterogeneous.Groups,
    deltas: tuple[tuple[Fraction, int], ...],
    delta: float,
    eps: float,
) -> float:
    minimum = max(abs(eps), 1.0) * 2.0**-48
    for _ in range(_MAX_RAISES):
        if holds(mu, groups, deltas, delta, eps):
            return eps
        eps += minimum
        minimum *= 2
    return math.inf


def holds(
    mu: float,
    groups: heterogeneous.Groups,
    deltas: tuple[tuple[Fraction, int], ...],
    delta: float,
    eps: float,
    precision: int = MP_PREC + 16,
) -> bool:
    """Whether an upper bound of 1 - kept (1 - sum_x p_x delta_G(eps - x)) is <= delta."""
    with mp.workprec(precision):
        log_kept = mpmath.fsum(n * mpmath.log1p(-mp_of(d)) for d, n in deltas)
        total = mpmath.fsum(
            mass * _gaussian_delta_up(mpf(mu), mpf(eps) - loss, precision)
            for loss, mass in _mp_points(groups)
        )
        # 1 - kept (1 - total) = used + kept total, used = -expm1(log kept): no
        # difference of numbers near 1 (which would lose a total below 2^-precision)
        used = -mpmath.expm1(log_kept)
        bound = (used + mpmath.exp(log_kept) * min(total, mpf(1))) * (1 + MP_MARGIN)
        return bool(bound <= mpf(delta))


def _mp_points(groups: heterogeneous.Groups) -> list[tuple[mpf, mpf]]:
    """The discrete loss values and their masses, each a product of binomial
    terms (exact losses: integer multiples of doubles, added at this precision)."""
    points = [(mpf(0), mpf(1))]
    for e0, n in groups:
        rows = heterogeneous.loss_rows(e0, n)
        points = [(x + y, p * m) for x, p in points for y, m in rows]
    return points


def _gaussian_delta_up(m: mpf, e: mpf, precision: int) -> mpf:
    """delta_G(e) bounded above (`gaussian.delta_bounds`'s error term), for any real e."""
    x1, x2 = -e / m + m / 2, -e / m - m / 2
    a = mpmath.ncdf(x1)
    b = mpmath.exp(e) * mpmath.ncdf(x2)
    unit = mpf(2) ** -(precision - 8)
    error = unit * (a * (1 + x1 * x1) + b * (1 + x2 * x2 + abs(e)))
    return max(a - b + error, mpf(0))
