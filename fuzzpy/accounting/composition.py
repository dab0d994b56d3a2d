"""Composition theorems for (eps, delta)-DP: basic, advanced, optimal (KOV).

Each atom is first turned into an (eps_i, delta_i)-DP guarantee. Pure and
verified atoms have a fixed pair; Gaussian-based atoms are *flexible*: they
are (eps_i(delta_i), delta_i)-DP for every delta_i (analytic Gaussian,
Balle & Wang 2018), and the methods below give them a share of the target
delta. Any split of delta gives a valid bound, so trying several is sound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import gammaln

from fuzzpy.accounting import discrete, gaussian
from fuzzpy.accounting.atoms import (
    ApproxAtom,
    Atom,
    Atoms,
    GaussianAtom,
    LaplaceAtom,
    PureAtom,
    SubsampledAtom,
)

_SPLITS: Sequence[float] = (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98)


# ---------------------------------------------------------------- one atom


def fixed_pair(atom: Atom) -> tuple[float, float] | None:
    """(eps, delta) of an atom whose guarantee does not depend on a delta share."""
    if isinstance(atom, LaplaceAtom | PureAtom):
        return float(atom.epsilon), 0.0
    if isinstance(atom, ApproxAtom):
        return float(atom.epsilon), float(atom.delta)
    if isinstance(atom, SubsampledAtom) and not isinstance(atom.inner, GaussianAtom):
        epsilon, delta = fixed_pair(atom.inner)  # type: ignore[misc]
        return amplify(float(atom.rate), epsilon, delta)
    return None


def flexible_epsilon(atom: Atom, delta: float) -> float:
    """eps of a Gaussian-based atom at its delta share."""
    if isinstance(atom, GaussianAtom):
        return gaussian.epsilon_for_delta(atom.mu, delta)
    if isinstance(atom, SubsampledAtom) and isinstance(atom.inner, GaussianAtom):
        q = float(atom.rate)
        inner = gaussian.epsilon_for_delta(atom.inner.mu, delta / q)
        return amplify(q, inner, delta / q)[0]
    raise TypeError(f"not a flexible atom: {atom!r}")


def amplify(q: float, epsilon: float, delta: float) -> tuple[float, float]:
    """Poisson subsampling at rate q of an (eps, delta)-DP mechanism is
    (log(1 + q (e^eps - 1)), q delta)-DP (Balle, Barthe & Gaboardi 2018)."""
    if math.isinf(epsilon):
        return math.inf, q * delta
    return math.log1p(q * math.expm1(epsilon)), q * delta


def _split(atoms: Atoms) -> tuple[list[tuple[float, float, int]], list[tuple[Atom, int]]]:
    fixed, flexible = [], []
    for atom, n in atoms.items():
        pair = fixed_pair(atom)
        if pair is None:
            flexible.append((atom, n))
        else:
            fixed.append((pair[0], pair[1], n))
    return fixed, flexible


def _pairs_at(atoms: Atoms, share: float) -> tuple[list[tuple[float, int]], float] | None:
    """Every atom's eps (with multiplicity) when each flexible atom gets `share`
    of delta; also the total delta they use. None if a flexible share is 0."""
    fixed, flexible = _split(atoms)
    if flexible and share <= 0:
        return None
    eps = [(e, n) for e, _, n in fixed] + [(flexible_epsilon(a, share), n) for a, n in flexible]
    used = sum(d * n for _, d, n in fixed) + share * sum(n for _, n in flexible)
    return eps, used


def _fixed_delta(atoms: Atoms) -> float:
    return sum(d * n for _, d, n in _split(atoms)[0])


def _flexible_count(atoms: Atoms) -> int:
    return sum(n for _, n in _split(atoms)[1])


# ---------------------------------------------------------------- basic


def basic(atoms: Atoms, delta: float) -> float:
    """Basic composition: eps and delta add (Dwork, Kenthapadi, McSherry,
    Mironov & Naor 2006; Dwork & Roth 2014, Thm 3.16)."""
    free = delta - _fixed_delta(atoms)
    if free < 0:
        return math.inf
    count = _flexible_count(atoms)
    result = _pairs_at(atoms, free / count if count else 0.0)
    if result is None:
        return math.inf
    return math.fsum(e * n for e, n in result[0])


# ---------------------------------------------------------------- advanced


def advanced(atoms: Atoms, delta: float) -> float:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010, Thm III.3), in its
    heterogeneous form (Dwork & Roth 2014, Thm 3.20 proof): for
    (eps_i, delta_i)-DP steps and any delta' > 0 the composition is
    (sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1),
     delta' + sum delta_i)-DP. The best of several delta splits is kept."""
    free = delta - _fixed_delta(atoms)
    if free <= 0:
        return math.inf
    count = _flexible_count(atoms)
    best = math.inf
    for fraction in _SPLITS if count else (1.0,):
        slack = fraction * free
        result = _pairs_at(atoms, (free - slack) / count if count else 0.0)
        if result is None:
            continue
        pairs = result[0]
        if any(math.isinf(e) for e, _ in pairs):
            continue
        squares = math.fsum(e * e * n for e, n in pairs)
        drift = math.fsum(e * math.expm1(e) * n for e, n in pairs)
        best = min(best, math.sqrt(2 * math.log(1 / slack) * squares) + drift)
    return best


# ---------------------------------------------------------------- KOV


def kov_epsilon(epsilon0: float, delta0: float, k: int, delta: float) -> float:
    """Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Thm 3.3):
    the k-fold composition of (eps0, delta0)-DP mechanisms is (eps, delta)-DP
    iff 1 - (1 - delta0)^k (1 - delta_k(eps)) <= delta, where delta_k is the
    hockey-stick curve of k-fold randomized response: loss (k - 2j) eps0 with
    probability C(k, j) e^{(k-j) eps0} / (1 + e^eps0)^k. Solved exactly between
    its atoms (the theorem's grid points i = 0..k/2 are special cases)."""
    if k == 0:
        return 0.0
    survive = (1 - delta0) ** k
    if survive <= 0:
        return math.inf
    inner_delta = 1 - (1 - delta) / survive
    if inner_delta < 0:
        return math.inf
    losses, masses = randomized_response_composition(epsilon0, k)
    return discrete.epsilon_for_delta(losses, masses, 0.0, inner_delta)


def randomized_response_composition(epsilon0: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Losses (ascending) and probabilities of k-fold randomized response."""
    j = np.arange(k, -1, -1, dtype=float)  # j "flips": loss (k - 2j) eps0, ascending
    log_p = -np.logaddexp(0.0, -epsilon0)  # log(e^eps0 / (1 + e^eps0))
    log_1mp = -np.logaddexp(0.0, epsilon0)
    log_binomial = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1)
    masses = np.exp(log_binomial + (k - j) * log_p + j * log_1mp)
    return (k - 2 * j) * epsilon0, masses


#: KOV's exact composition holds k + 1 points in memory; beyond this many
#: compositions it is skipped (PLD, RDP and the closed forms still apply).
KOV_MAX_COUNT = 1_000_000


def kov(atoms: Atoms, delta: float) -> float | None:
    """KOV for a homogeneous composition (every atom gives the same pair, or a
    single flexible atom repeated k times); None when it does not apply."""
    fixed, flexible = _split(atoms)
    if flexible:
        if fixed or len(flexible) != 1:
            return None
        atom, k = flexible[0]
        if k > KOV_MAX_COUNT:  # its exact distribution has k + 1 atoms: other methods bound it
            return None
        best = math.inf
        for fraction in _SPLITS:
            delta0 = fraction * delta / k
            best = min(best, kov_epsilon(flexible_epsilon(atom, delta0), delta0, k, delta))
        return best
    pairs = {(e, d) for e, d, _ in fixed}
    if len(pairs) != 1:
        return None
    ((epsilon0, delta0),) = pairs
    count = sum(n for _, _, n in fixed)
    return None if count > KOV_MAX_COUNT else kov_epsilon(epsilon0, delta0, count, delta)
