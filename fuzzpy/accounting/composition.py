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
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp, mpf
from scipy.special import gammaln

from fuzzpy.accounting import discrete, gaussian, heterogeneous, optimal
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
)
from fuzzpy.accounting.rounding import MP_MARGIN, MP_PREC, float_down, float_up, mp_of, up

_SPLITS: Sequence[float] = (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98)

# Rounding: every epsilon below is rounded up and every delta an atom uses is
# an exact Fraction (or a float that bounds it from above), so the delta left
# for the rest is computed exactly and rounded down (`rounding`).


# ---------------------------------------------------------------- one atom


def discrete_gaussian_epsilon(atom: DiscreteGaussianAtom, delta: float) -> float:
    """One discrete Gaussian at ``delta``: its exact profile (CKS 2020, Thm 7;
    `discrete_gaussian`) where computed, else its zCDP converted (CKS 2020,
    Prop. 12 via `zcdp.epsilon_cks`, rho rounded up)."""
    from fuzzpy.accounting import discrete_gaussian, zcdp

    exact = discrete_gaussian.atom_epsilon(atom, delta)
    return exact if exact is not None else zcdp.epsilon_cks(float_up(atom.rho), delta)



def fixed_pair(atom: Atom) -> tuple[float, Fraction] | None:
    """(eps rounded up, exact delta) of an atom whose guarantee does not
    depend on a delta share."""
    if isinstance(atom, LaplaceAtom | PureAtom):
        return float_up(atom.epsilon), Fraction(0)
    if isinstance(atom, ApproxAtom):
        return float_up(atom.epsilon), atom.delta
    if isinstance(atom, SubsampledAtom) and not isinstance(atom.inner, GaussianAtom):
        # (log(1 + q(e^eps - 1)), q delta) (Balle, Barthe & Gaboardi 2018), exact inputs
        delta = atom.inner.delta if isinstance(atom.inner, ApproxAtom) else Fraction(0)
        return float_up(amplified_epsilon_up(atom.rate, atom.inner.epsilon)), atom.rate * delta
    return None


def flexible_epsilon(atom: Atom, delta: float) -> float:
    """eps of a Gaussian-based atom that uses at most ``delta``, rounded up."""
    if isinstance(atom, GaussianAtom):
        return gaussian.epsilon_for_delta(atom.mu, delta)
    if isinstance(atom, DiscreteGaussianAtom):
        return discrete_gaussian_epsilon(atom, delta)
    if isinstance(atom, SubsampledAtom) and isinstance(atom.inner, GaussianAtom):
        # the inner delta is rounded down, so rate * inner <= delta exactly
        inner_delta = min(float_down(Fraction(delta) / atom.rate), 1.0)
        inner = gaussian.epsilon_for_delta(atom.inner.mu, inner_delta)
        if math.isinf(inner):
            return math.inf
        return float_up(amplified_epsilon_up(atom.rate, Fraction(inner)))
    raise TypeError(f"not a flexible atom: {atom!r}")


def _split(atoms: Atoms) -> tuple[list[tuple[float, Fraction, int]], list[tuple[Atom, int]]]:
    fixed, flexible = [], []
    for atom, n in atoms.items():
        pair = fixed_pair(atom)
        if pair is None:
            flexible.append((atom, n))
        else:
            fixed.append((pair[0], pair[1], n))
    return fixed, flexible


def _free_delta(atoms: Atoms, delta: float) -> Fraction:
    """delta minus what the fixed atoms use, exactly."""
    return Fraction(delta) - sum((d * n for _, d, n in _split(atoms)[0]), Fraction(0))


def _product_share(atoms: Atoms, delta: float) -> float | None:
    """The delta s each flexible atom may use so that
    1 - prod_fixed (1 - delta_i)^{n_i} (1 - s)^count <= delta, rounded down
    (0.0 without flexible atoms); None when the fixed deltas alone exceed delta.
    In mpmath from the exact deltas, with the 2^-100 margin on the safe side."""
    fixed, flexible = _split(atoms)
    count = sum(n for _, n in flexible)
    if delta >= 1:
        return 1.0 if count else 0.0
    with mp.workprec(MP_PREC):
        log_kept = mpmath.fsum(n * mpmath.log1p(-mp_of(d)) for _, d, n in fixed if d > 0)
        log_target = mpmath.log1p(-mpf(delta))
        if not count:
            # 1 - kept <= delta, checked with the margin on 1 - kept itself (on kept,
            # the margin's absolute 2^-100 exceeded every delta below ~1e-30: pure
            # events answered inf there, issue 25); none at all without deltas
            if not any(d > 0 for _, d, _ in fixed):
                return 0.0
            return 0.0 if -mpmath.expm1(log_kept) * (1 + MP_MARGIN) <= mpf(delta) else None
        log_room = log_target - log_kept  # log((1 - delta) / kept)
        share = -mpmath.expm1(log_room / count) * (1 - MP_MARGIN)
        return _float_below(share) if share > 0 else None


def _float_below(value: mpf) -> float:
    """A float <= a positive mpf."""
    rounded = float(value)
    return rounded if mpf(rounded) <= value else math.nextafter(rounded, 0.0)


def _share(free: Fraction, count: int) -> float:
    """Each of ``count`` flexible atoms' share of ``free``, rounded down so
    the shares never add up to more than ``free``."""
    return float_down(free / count) if count else 0.0


def _epsilons_at(atoms: Atoms, share: float) -> list[tuple[float, int]] | None:
    """Every atom's eps (with multiplicity) when each flexible atom gets
    ``share`` of delta; None if a flexible share is 0."""
    fixed, flexible = _split(atoms)
    if flexible and share <= 0:
        return None
    return [(e, n) for e, _, n in fixed] + [(flexible_epsilon(a, share), n) for a, n in flexible]


def _flexible_count(atoms: Atoms) -> int:
    return sum(n for _, n in _split(atoms)[1])


# ---------------------------------------------------------------- basic


def basic(atoms: Atoms, delta: float) -> float:
    """Basic composition: eps add (Dwork, Kenthapadi, McSherry, Mironov & Naor
    2006; Dwork & Roth 2014, Thm 3.16), and the deltas combine as
    1 - prod (1 - delta_i), never more than their sum: the optimal composition
    condition (Murtagh & Vadhan 2016, Thm 1.4; `heterogeneous`) at
    eps = sum eps_i, where the randomized-response part of delta is 0."""
    share = _product_share(atoms, delta)
    if share is None:
        return math.inf
    pairs = _epsilons_at(atoms, share)
    if pairs is None:
        return math.inf
    # n products rounded once each, then one correctly rounded sum (fsum) of
    # non-negative numbers: within 2 ulps relative
    return up(math.fsum(e * n for e, n in pairs), 4)


#: Beyond this many fixed atoms the exact product below is not formed (its
#: Fractions grow with the count); `basic` still answers above the boundary.
BOUNDARY_MAX_COUNT = 10_000


def boundary_epsilon(atoms: Atoms, delta: Fraction) -> float | None:
    """sum eps_i (rounded up) when the fixed (eps_i, delta_i) atoms'
    1 - prod (1 - delta_i) is at most the exact ``delta``, in exact Fractions;
    None otherwise (or with a flexible atom, which needs a share > 0). At
    eps = sum eps_i the optimal composition's delta is exactly
    1 - prod (1 - delta_i) (Kairouz, Oh & Viswanath 2015, Thm 3.3;
    Murtagh & Vadhan 2016, Thm 1.4): a delta typed as exactly that value
    (0.28 for (1, 0.1) and (2, 0.2)) is met, where the methods, run at the
    largest float <= delta, find it just out of reach (issue 25)."""
    fixed, flexible = _split(atoms)
    if flexible or not fixed or sum(n for _, _, n in fixed) > BOUNDARY_MAX_COUNT:
        return None
    kept = Fraction(1)
    for _, d, n in fixed:
        kept *= (1 - Fraction(d)) ** n
    if 1 - kept > delta:
        return None
    return float_up(sum((Fraction(e) * n for e, _, n in fixed), Fraction(0)))


# ---------------------------------------------------------------- advanced


def advanced(atoms: Atoms, delta: float) -> float:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010, Thm III.3), in its
    heterogeneous form (Dwork & Roth 2014, Thm 3.20 proof): for
    (eps_i, delta_i)-DP steps and any delta' > 0 the composition is
    (sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1),
     delta' + sum delta_i)-DP. The best of several delta splits is kept."""
    free = _free_delta(atoms, delta)
    if free <= 0:
        return math.inf
    count = _flexible_count(atoms)
    best = math.inf
    for fraction in _SPLITS if count else (1.0,):
        slack = float_down(free * Fraction(fraction))
        if slack <= 0:
            continue
        pairs = _epsilons_at(atoms, _share(free - Fraction(slack), count))
        if pairs is None or any(math.isinf(e) for e, _ in pairs):
            continue
        # sums of non-negative terms and a few roundings each: 16 ulps cover them
        squares = math.fsum(e * e * n for e, n in pairs)
        drift = math.fsum(e * math.expm1(e) * n for e, n in pairs)
        bound = math.sqrt(2 * -math.log(slack) * squares) + drift
        best = min(best, up(bound, 16))
    return best


# ---------------------------------------------------------------- KOV


def kov_epsilon(epsilon0: float, delta0: float, k: int, delta: float) -> float:
    """Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Thm 3.3):
    the k-fold composition of (eps0, delta0)-DP mechanisms is (eps, delta)-DP
    iff 1 - (1 - delta0)^k (1 - delta_k(eps)) <= delta, where delta_k is the
    hockey-stick curve of k-fold randomized response: loss (k - 2j) eps0 with
    probability C(k, j) e^{(k-j) eps0} / (1 + e^eps0)^k. Solved between its
    atoms in floating point (the theorem's grid points are special cases),
    then certified in extended precision (`optimal.certified`)."""
    if k == 0 or delta >= 1:
        return 0.0
    candidate = kov_candidate(epsilon0, delta0, k, delta)
    return optimal.certified(epsilon0, delta0, k, delta, candidate)


def kov_candidate(epsilon0: float, delta0: float, k: int, delta: float) -> float:
    """KOV's epsilon in floating point: accurate, but not yet a proven bound.

    The inner delta 1 - (1 - delta)/(1 - delta0)^k is computed as
    (delta - a)/(1 - a) with a = 1 - (1 - delta0)^k = -expm1(k log1p(-delta0)):
    no difference of two numbers near 1, which in the form 1 - (1 - delta)
    lost every digit of a delta near 1e-16 (and rounded it up)."""
    if k == 0 or delta >= 1:
        return 0.0
    if delta0 >= 1:
        return math.inf
    used = -math.expm1(k * math.log1p(-delta0))
    if used >= delta:
        return math.inf
    inner = (delta - used) / (1 - used)
    losses, log_masses = optimal.randomized_response(epsilon0, k)
    return discrete.epsilon_for_delta_log(losses, log_masses, 0.0, inner)


#: KOV's exact composition holds k + 1 points in memory; beyond this many
#: compositions it is skipped (PLD, RDP and the closed forms still apply).
KOV_MAX_COUNT = 1_000_000


def kov(atoms: Atoms, delta: float) -> float | None:
    """KOV for a homogeneous composition (every atom gives the same pair, or a
    single flexible atom repeated k times); None when it does not apply. Of a
    flexible atom's delta splits, the best candidate is certified."""
    fixed, flexible = _split(atoms)
    if flexible:
        if fixed or len(flexible) != 1:
            return None
        atom, k = flexible[0]
        if k > KOV_MAX_COUNT:  # its exact distribution has k + 1 atoms: other methods bound it
            return None
        options = []
        for fraction in _SPLITS:
            delta0 = fraction * delta / k  # any delta0: the pair below is valid for it
            epsilon0 = flexible_epsilon(atom, delta0)
            if math.isfinite(epsilon0):
                options.append((kov_candidate(epsilon0, delta0, k, delta), epsilon0, delta0))
        if not options:
            return math.inf
        candidate, epsilon0, delta0 = min(options)
        return optimal.certified(epsilon0, delta0, k, delta, candidate)
    pairs = {(e, d) for e, d, _ in fixed}
    if len(pairs) != 1:
        # heterogeneous pure and (eps, delta) events (Murtagh & Vadhan 2016)
        return heterogeneous.epsilon(atoms, delta)
    ((epsilon0, delta0),) = pairs
    count = sum(n for _, _, n in fixed)
    if count > KOV_MAX_COUNT:
        return None
    return kov_epsilon(epsilon0, float_up(delta0), count, delta)


# ---------------------------------------------------------------- floors (for skipping)
# Float estimates from below of what `advanced` and `kov` can give, used only
# to skip them when the best proven bound so far is already smaller:
# skipping never affects validity, only (by the margin) tightness.


def _flexible_floor(atom: Atom, delta: float) -> float:
    """A float estimate of the smallest eps a flexible atom gets with at most
    ``delta`` (eps decreases as its delta grows)."""
    if isinstance(atom, GaussianAtom):
        return gaussian.floor_candidate(atom.mu, delta)
    if isinstance(atom, DiscreteGaussianAtom):
        return 0.0  # no cheap estimate from below: never skips a method
    inner = gaussian.floor_candidate(atom.inner.mu, min(delta / float(atom.rate), 1.0))
    return math.log1p(float(atom.rate) * math.expm1(inner))


def _floor_pairs(atoms: Atoms, delta: float) -> list[tuple[float, int]] | None:
    """(eps_i, count) with each flexible atom's eps at delta / (number of
    flexible atoms): the floors' shared ingredient (None if none is flexible)."""
    fixed, flexible = _split(atoms)
    count = sum(n for _, n in flexible)
    if not count or not 0 < delta < 1:
        return None
    pairs = [(e, n) for e, _, n in fixed]
    return pairs + [(_flexible_floor(a, delta / count), n) for a, n in flexible]


def basic_floor(atoms: Atoms, delta: float) -> float | None:
    """`basic` gives each flexible atom a share <= delta / count, so its bound
    is at least sum eps_i with each flexible eps_i at delta / count (a float
    estimate: no certification, which is what `basic` spends its time on)."""
    pairs = _floor_pairs(atoms, delta)
    return None if pairs is None else math.fsum(e * n for e, n in pairs)


def advanced_floor(atoms: Atoms, delta: float) -> float | None:
    """`advanced` uses a slack <= delta and shares <= delta / count, so its
    bound is at least sqrt(2 ln(1/delta) sum eps_i^2) + sum eps_i (e^eps_i - 1)
    with each flexible eps_i at delta / count."""
    pairs = _floor_pairs(atoms, delta)
    if pairs is None:
        return None
    squares = math.fsum(e * e * n for e, n in pairs)
    drift = math.fsum(e * math.expm1(e) * n for e, n in pairs)
    return math.sqrt(2 * -math.log(delta) * squares) + drift


def kov_floor(atoms: Atoms, delta: float) -> float | None:
    """`kov` of one flexible atom uses delta0 <= max(_SPLITS) delta / k, whose
    eps0 is at least the floor there; KOV grows with eps0 and delta0."""
    fixed, flexible = _split(atoms)
    if fixed or len(flexible) != 1 or not 0 < delta < 1:
        return None
    atom, k = flexible[0]
    if k > KOV_MAX_COUNT:
        return None
    epsilon0 = _flexible_floor(atom, max(_SPLITS) * delta / k)
    if not math.isfinite(epsilon0):
        return None
    losses, log_masses = _rr_band(epsilon0, k)
    first = int(np.searchsorted(losses, 0.0, side="right"))
    if first >= losses.size:
        return 0.0
    # dropping terms of delta_k(eps) (a sum of non-negative terms) lowers the
    # curve, so the eps solved from the band is at most KOV's: still a floor
    return discrete.candidate_log(losses[first:], log_masses[first:], delta)


_BAND_SIGMAS = 40.0  # binomial standard deviations kept by `_rr_band`


def _rr_band(epsilon0: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """k-fold randomized response (`optimal.randomized_response`) restricted
    to flip counts within _BAND_SIGMAS standard deviations of the mean: a few
    thousand points instead of k + 1 (floors only; the mass left out is far
    below any delta)."""
    q = 1 / (1 + math.exp(epsilon0)) if epsilon0 < 700 else 0.0
    mean, spread = k * q, _BAND_SIGMAS * math.sqrt(k * q * (1 - q)) + 16
    low, high = max(0, math.floor(mean - spread)), min(k, math.ceil(mean + spread))
    j = np.arange(high, low - 1, -1, dtype=float)  # losses (k - 2j) eps0, ascending
    log_p = -np.logaddexp(0.0, -epsilon0)
    log_q = -np.logaddexp(0.0, epsilon0)
    log_binomial = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1)
    return (k - 2 * j) * epsilon0, log_binomial + (k - j) * log_p + j * log_q
