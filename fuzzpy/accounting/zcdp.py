"""Zero-concentrated DP: rho of each atom, and conversions to (eps, delta).

rho-zCDP (Bun & Steinke 2016): D_alpha(P || Q) <= alpha rho for all alpha > 1.
Costs add under composition (BS16, composition lemma). A delta-approximate
rho-zCDP mechanism (BS16, Sec. 8) is rho-zCDP except with probability
delta; (eps, delta)-DP implies delta-approximate eps^2/2-zCDP, and the deltas
of approximate zCDP add under composition (BS16, Sec. 8).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize_scalar

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


def atom_rho(atom: Atom) -> tuple[Fraction, Fraction]:
    """(rho, delta): the atom is delta-approximately rho-zCDP."""
    if isinstance(atom, GaussianAtom):
        return atom.rho, Fraction(0)  # BS16, Prop. 1.6
    if isinstance(atom, PureAtom) and atom.bounded_range:
        return atom.epsilon**2 / 8, Fraction(0)  # bounded range: Cesar & Rogers 2021
    if isinstance(atom, LaplaceAtom | PureAtom):
        return atom.epsilon**2 / 2, Fraction(0)  # BS16, Prop. 1.4
    if isinstance(atom, ApproxAtom):
        return atom.epsilon**2 / 2, atom.delta  # BS16, Prop. 1.4 and Sec. 8
    return _subsampled_rho(atom)


def _subsampled_rho(atom: SubsampledAtom) -> tuple[Fraction, Fraction]:
    amplified = subsampled_pure_epsilon(atom)
    if amplified is not None:
        return amplified**2 / 2, Fraction(0)
    if isinstance(atom.inner, ApproxAtom):
        # (log(1 + q(e^eps - 1)), q delta) (Balle, Barthe & Gaboardi 2018)
        pure = SubsampledAtom(atom.rate, PureAtom(atom.inner.epsilon))
        amplified = subsampled_pure_epsilon(pure)
        return amplified**2 / 2, atom.rate * atom.inner.delta  # type: ignore[operator]
    # Subsampling never increases a Renyi divergence: D_alpha is jointly
    # quasi-convex (van Erven & Harremoes 2014), and both directions
    # of the subsampled pair are mixtures with the unsubsampled pair.
    return atom_rho(atom.inner)


def total_rho(atoms: Atoms) -> tuple[Fraction, Fraction]:
    rho, delta = Fraction(0), Fraction(0)
    for atom, n in atoms.items():
        r, d = atom_rho(atom)
        rho += n * r
        delta += n * d
    return rho, delta


def epsilon_simple(rho: float, delta: float) -> float:
    """BS16, Prop. 1.3: rho-zCDP implies (rho + 2 sqrt(rho log(1/delta)), delta)-DP."""
    if delta <= 0:
        return math.inf
    if delta >= 1:
        return 0.0
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def epsilon_at_order(rho: float, delta: float, alpha: float) -> float:
    """Canonne, Kamath & Steinke 2020 (Prop. 12 / Cor. 13): rho-zCDP is
    (eps, delta)-DP for every alpha > 1 with
    eps = alpha rho + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log(alpha)) / (alpha - 1)."""
    return alpha * rho + (
        math.log(1 / delta) + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)
    ) / (alpha - 1)


def epsilon_cks(rho: float, delta: float) -> float:
    """The CKS20 conversion minimised over alpha (any alpha is valid, so an
    imprecise minimiser only loosens the bound)."""
    if delta <= 0:
        return math.inf
    if delta >= 1 or rho <= 0:
        return 0.0
    # search over log(alpha - 1): a coarse grid, then a bounded refinement
    grid = np.linspace(-12.0, 12.0, 97)
    values = [epsilon_at_order(rho, delta, 1 + math.exp(t)) for t in grid]
    best = int(np.argmin(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    refined = minimize_scalar(
        lambda t: epsilon_at_order(rho, delta, 1 + math.exp(t)),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return max(0.0, min(values[best], float(refined.fun)))


def approximate_epsilon(atoms: Atoms, delta: float, tight: bool) -> float:
    """eps at delta from the atoms' total (approximate) zCDP cost."""
    rho, used = total_rho(atoms)
    remaining = delta - float(used)
    if remaining <= 0:
        return math.inf
    convert = epsilon_cks if tight else epsilon_simple
    return convert(float(rho), remaining)
