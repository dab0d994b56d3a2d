"""The exact privacy of one discrete Gaussian release (`dgauss[sigma]`).

For an integer query that moves by an integer d between neighbours, the
release q + Y, Y ~ N_Z(0, sigma^2) (P(Y = y) = f(y) / Z, f(y) =
exp(-y^2 / (2 sigma^2)), Z the sum of f over the integers), has the pair
P = N_Z(0, sigma^2), Q = N_Z(d, sigma^2), and under P the privacy loss at
y is log P(y) / Q(y) = (d^2 - 2 y d) / (2 sigma^2) (the normalisers cancel:
both are Z). Its hockey-stick divergence is Canonne, Kamath & Steinke 2020,
Thm 7:

    delta(eps) = P[Y > eps sigma^2 / d - d / 2] - e^eps P[Y > eps sigma^2 / d + d / 2],

which is what `discrete.epsilon_for_delta` computes from the loss's atoms.
The pair is symmetric (y -> d - y swaps P and Q), so one direction serves
both; for a query of sensitivity s the worst pair over d = 1 .. ceil(s) is
taken (the largest epsilon).

What is computed, and why it is an upper bound:

* the support is cut to |y| <= K; the mass below -K (the largest losses) is
  put at +infinity, bounded by f(K + 1) / (1 - r) / Z_low with r =
  exp(-(2K + 3) / (2 sigma^2)) the ratio bound of consecutive f beyond K;
  the mass above K has losses below 0 and adds nothing at eps >= 0;
* the masses are kept as logarithms, log f(y) = -y^2 / (2 sigma^2) (no exp:
  at sigma = 0.001 the masses beyond y = 0 lie far below the float range,
  e^-500000, and underflowed to 0; the search then stopped at delta 1e-200,
  issue 25). Each log f(y) carries a relative rounding of a few ulps (the
  division and sigma^2's float), covered by raising it by 4 U |log f(y)|;
  Z_low is the float sum of f over the window, a lower bound on Z up to the
  summation's rounding (Z >= f(0) = 1 and each term's error at most a few
  ulps of Z: below 2K + 5 ulps relative); every mass is raised by MARGIN =
  1e-9 relative, far above those errors; each loss is raised by 1e-12 of its
  size plus 1e-15 absolute; the cut tail's mass is read no lower than e^-700
  (so never 0 from underflow). Raising masses and losses only raises
  delta(eps), so the epsilon found is never too small;
* `discrete.epsilon_for_delta_log` then certifies its own rounding.

The window holds 2K + 1 <= MAX_POINTS atoms; a larger sigma (or a tinier
delta) is left to the zCDP and Renyi methods, which use rho = d^2 / (2 sigma^2)
(CKS 2020, Sec. 2.1), never the continuous Gaussian's profile.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fuzzpy.accounting.atoms import Atoms, DiscreteGaussianAtom
from fuzzpy.accounting.discrete import epsilon_for_delta_log
from fuzzpy.accounting.rounding import U

MAX_POINTS = 400_001
MAX_SHIFT = 16
DELTA_FLOOR = 1e-300  # as the PLD's (`pld.DELTA_FLOOR`); was 1e-200 while the masses were floats
MARGIN = 1e-9
TAIL_SHARE = 1e-4  # the cut tail's mass, at most this share of delta


def _window(sigma: float, shift: int, delta: float) -> int | None:
    """K: the tail beyond K (as a Gaussian tail, sum_{y > K} f(y) <= sqrt(pi/2) sigma
    exp(-K^2/(2 sigma^2)) up to Z >= sqrt(2 pi) sigma) is below TAIL_SHARE * delta."""
    depth = math.sqrt(2 * math.log(1 / (TAIL_SHARE * delta)))
    k = math.ceil(sigma * depth) + shift + 2
    return k if 2 * k + 1 <= MAX_POINTS else None


def loss_atoms(shift: int, sigma: Fraction, delta: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(losses ascending, log masses, mass at +infinity) of the pair at shift d,
    each raised (module note); None where the window would be too wide."""
    s2 = float(Fraction(sigma) ** 2)
    if not math.isfinite(s2) or s2 <= 0:
        return None
    k = _window(math.sqrt(s2), shift, delta)
    if k is None:
        return None
    y = np.arange(-k, k + 1, dtype=np.float64)
    log_f = -(y * y) / (2 * s2)
    with np.errstate(under="ignore"):
        log_z_low = math.log(float(np.sum(np.exp(log_f))))  # the largest term is f(0) = 1
    raise_by = math.log1p(MARGIN)
    log_masses = log_f + np.abs(log_f) * (4 * U) - log_z_low + raise_by
    log_ratio = -(2 * k + 3) / (2 * s2)
    if log_ratio < 0:
        log_tail = -((k + 1) ** 2) / (2 * s2) * (1 - 4 * U) - math.log(-math.expm1(log_ratio)) - log_z_low + raise_by
        tail = math.exp(max(log_tail, -700.0))
    else:
        tail = 1.0
    losses = (shift * shift - 2 * y * shift) / (2 * s2)
    losses = losses + np.abs(losses) * 1e-12 + 1e-15
    return losses[::-1].copy(), log_masses[::-1].copy(), tail


def pair_epsilon(shift: int, sigma: Fraction, delta: float) -> float | None:
    """The smallest epsilon (rounded up) at which the pair at shift d has
    hockey-stick divergence at most delta; None where not computed."""
    if not DELTA_FLOOR <= delta < 1:
        return None
    found = loss_atoms(shift, sigma, delta)
    if found is None:
        return None
    losses, log_masses, tail = found
    return epsilon_for_delta_log(losses, log_masses, tail, delta)


def atom_epsilon(atom: DiscreteGaussianAtom, delta: float) -> float | None:
    """The worst pair over the integer shifts 1 .. atom.shift."""
    if atom.shift > MAX_SHIFT:
        return None
    worst = 0.0
    for d in range(1, atom.shift + 1):
        eps = pair_epsilon(d, atom.sigma, delta)
        if eps is None:
            return None
        worst = max(worst, eps)
    return worst


def delta_exact(shift: int, sigma: Fraction, epsilon: float, terms: int = 4000) -> float:
    """CKS Thm 7 in mpmath, by direct summation (a reference for tests)."""
    import mpmath
    from mpmath import mp

    with mp.workprec(200):
        s2 = mp.mpf(Fraction(sigma).numerator) ** 2 / mp.mpf(Fraction(sigma).denominator) ** 2
        f = {y: mpmath.exp(-mp.mpf(y) ** 2 / (2 * s2)) for y in range(-terms, terms + 1)}
        z = mpmath.fsum(f.values())
        e = mp.mpf(epsilon)
        total = mpmath.fsum(
            max(f[y] - mpmath.exp(e) * f.get(y - shift, mp.mpf(0)), 0) for y in range(-terms, terms + 1)
        )
        return float(total / z)


def epsilon(atoms: Atoms, delta: float) -> float | None:
    """The accountant's `exact-dgauss`: one discrete Gaussian release alone."""
    if len(atoms) != 1:
        return None
    ((atom, n),) = atoms.items()
    if n != 1 or not isinstance(atom, DiscreteGaussianAtom):
        return None
    return atom_epsilon(atom, delta)
