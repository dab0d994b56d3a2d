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
* Z_low is the float sum of f over the window, a lower bound on Z up to the
  summation's rounding (at most 2K + 1 ulps relative); each f(y) is an exp of
  an argument at most 470 (delta >= DELTA_FLOOR), within ~1e-13 relative; every
  mass is raised by MARGIN = 1e-9 relative, far above those errors; each loss
  is raised by 1e-12 of its size plus 1e-15 absolute. Raising masses and
  losses only raises delta(eps), so the epsilon found is never too small;
* `discrete.epsilon_for_delta` then certifies its own rounding.

The window holds 2K + 1 <= MAX_POINTS atoms; a larger sigma (or a tinier
delta) is left to the zCDP and Renyi methods, which use rho = d^2 / (2 sigma^2)
(CKS 2020, Sec. 2.1), never the continuous Gaussian's profile.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fuzzpy.accounting.atoms import Atoms, DiscreteGaussianAtom
from fuzzpy.accounting.discrete import epsilon_for_delta

MAX_POINTS = 400_001
MAX_SHIFT = 16
DELTA_FLOOR = 1e-200
MARGIN = 1e-9
TAIL_SHARE = 1e-4  # the cut tail's mass, at most this share of delta


def _window(sigma: float, shift: int, delta: float) -> int | None:
    """K: the tail beyond K (as a Gaussian tail, sum_{y > K} f(y) <= sqrt(pi/2) sigma
    exp(-K^2/(2 sigma^2)) up to Z >= sqrt(2 pi) sigma) is below TAIL_SHARE * delta."""
    depth = math.sqrt(2 * math.log(1 / (TAIL_SHARE * delta)))
    k = math.ceil(sigma * depth) + shift + 2
    return k if 2 * k + 1 <= MAX_POINTS else None


def loss_atoms(shift: int, sigma: Fraction, delta: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(losses ascending, masses, mass at +infinity) of the pair at shift d,
    each raised (module note); None where the window would be too wide."""
    s2 = float(Fraction(sigma) ** 2)
    k = _window(math.sqrt(s2), shift, delta)
    if k is None or not math.isfinite(s2) or s2 <= 0:
        return None
    y = np.arange(-k, k + 1, dtype=np.float64)
    f = np.exp(-(y * y) / (2 * s2))
    z_low = float(np.sum(f))
    masses = f / z_low * (1 + MARGIN)
    ratio = math.exp(-(2 * k + 3) / (2 * s2))
    tail = math.exp(-((k + 1) ** 2) / (2 * s2)) / (1 - ratio) / z_low * (1 + MARGIN) if ratio < 1 else 1.0
    losses = (shift * shift - 2 * y * shift) / (2 * s2)
    losses = losses + np.abs(losses) * 1e-12 + 1e-15
    return losses[::-1].copy(), masses[::-1].copy(), tail


def pair_epsilon(shift: int, sigma: Fraction, delta: float) -> float | None:
    """The smallest epsilon (rounded up) at which the pair at shift d has
    hockey-stick divergence at most delta; None where not computed."""
    if not DELTA_FLOOR <= delta < 1:
        return None
    found = loss_atoms(shift, sigma, delta)
    if found is None:
        return None
    losses, masses, tail = found
    return epsilon_for_delta(losses, masses, tail, delta)


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
