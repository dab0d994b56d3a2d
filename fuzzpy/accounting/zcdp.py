"""Zero-concentrated DP: rho of each atom, and conversions to (eps, delta).

rho-zCDP (Bun & Steinke 2016): D_alpha(P || Q) <= alpha rho for all alpha > 1.
Costs add under composition (BS16, composition lemma). A delta-approximate
rho-zCDP mechanism (BS16, Sec. 8) is rho-zCDP except with probability
delta; (eps, delta)-DP implies delta-approximate eps^2/2-zCDP, and the deltas
of approximate zCDP add under composition (BS16, Sec. 8).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp

from fuzzpy.accounting.atoms import (
    ApproxAtom,
    Atom,
    Atoms,
    DiscreteGaussianAtom,
    GaussianAtom,
    LaplaceAtom,
    PureAtom,
    SubsampledAtom,
    subsampled_pure_epsilon,
)
from fuzzpy.accounting.rounding import MP_PREC, U, float_down, float_up, fraction_up_mp, mp_of, up


def pure_rho(epsilon: Fraction) -> Fraction:
    """The tight zCDP of pure eps-DP: rho = eps tanh(eps/2) = eps (e^eps - 1)/(e^eps + 1)
    (Steinke 2024, "Sharp RDP & zCDP from pure DP", differentialprivacy.org,
    Thm 5, via the Kearns-Saul inequality; first noted by Yu-Xiang Wang 2022).
    Randomized response attains it as alpha -> 1, where D_alpha / alpha tends
    to its KL divergence eps (p - q) = eps tanh(eps/2). At most eps^2/2 (Bun &
    Steinke 2016, Prop. 3.3) and at most eps. Rounded up to a Fraction."""
    if epsilon <= 0:
        return Fraction(0)
    with mp.workprec(MP_PREC):
        e = mp_of(epsilon)
        return min(fraction_up_mp(e * mpmath.tanh(e / 2)), epsilon**2 / 2, epsilon)


def laplace_rho(epsilon: Fraction) -> Fraction:
    """The tight zCDP of the Laplace mechanism with sensitivity / scale = eps:
    rho = eps + e^-eps - 1 (Harrison & Manurangsi 2025, "Exact zCDP
    characterizations for fundamental differentially private mechanisms",
    FORC 2026, arXiv:2510.25746; conjectured by Yu-Xiang Wang 2022).

    Why this value: rho-zCDP means D_alpha <= alpha rho for every alpha > 1,
    so the tight rho is sup_alpha D_alpha / alpha. As alpha -> 1, D_alpha
    tends to the KL divergence: for P = Lap(0, 1), Q = Lap(eps, 1),
    KL = E_P[|X - eps| - |X|] = (eps + e^-eps) - 1, using E|X - c| = c + e^-c
    for X ~ Lap(0, 1) and c >= 0. So rho >= eps + e^-eps - 1; Harrison &
    Manurangsi prove D_alpha / alpha never exceeds that limit (it is
    decreasing in alpha), which tests/test_accounting_tight.py checks against
    sup_alpha D_alpha / alpha computed by quadrature. Rounded up to a Fraction;
    in mpmath with extra bits for small eps (eps + e^-eps - 1 ~ eps^2/2 cancels)."""
    if epsilon <= 0:
        return Fraction(0)
    extra = max(0, -2 * math.floor(math.log2(epsilon))) if epsilon < 1 else 0
    with mp.workprec(MP_PREC + extra):
        e = mp_of(epsilon)
        return min(fraction_up_mp(e + mpmath.expm1(-e)), pure_rho(epsilon))


def atom_rho(atom: Atom) -> tuple[Fraction, Fraction]:
    """(rho, delta): the atom is delta-approximately rho-zCDP (rho rounded up)."""
    if isinstance(atom, GaussianAtom):
        return atom.rho, Fraction(0)  # BS16, Prop. 1.6
    if isinstance(atom, DiscreteGaussianAtom):
        return atom.rho, Fraction(0)  # the discrete Gaussian (CKS 2020, Sec. 2.1)
    if isinstance(atom, PureAtom) and atom.bounded_range:
        # bounded range: eps^2/8 (Cesar & Rogers 2021), or the pure bound if smaller (eps > ~8)
        return min(atom.epsilon**2 / 8, pure_rho(atom.epsilon)), Fraction(0)
    if isinstance(atom, LaplaceAtom):
        return laplace_rho(atom.epsilon), Fraction(0)
    if isinstance(atom, PureAtom):
        return pure_rho(atom.epsilon), Fraction(0)
    if isinstance(atom, ApproxAtom):
        # (eps, delta)-DP is delta-approximately zCDP with the rho of an eps-DP
        # pair (BS16, Sec. 8: the decomposition leaves a pair whose likelihood
        # ratio is within e^{+-eps}, the only hypothesis of Steinke's Thm 5)
        return pure_rho(atom.epsilon), atom.delta
    if not isinstance(atom, SubsampledAtom):
        # a replace-one pair (`atoms.ReplaceSubsampledAtom`): not this method's (`accountant.REPLACE_AWARE`)
        raise ValueError("no zCDP rule for a replace-one subsampled atom")
    return _subsampled_rho(atom)


def _subsampled_rho(atom: SubsampledAtom) -> tuple[Fraction, Fraction]:
    # Subsampling never increases a Renyi divergence: D_alpha is jointly
    # quasi-convex (van Erven & Harremoes 2014), and both directions
    # of the subsampled pair are mixtures with the unsubsampled pair; so the
    # inner atom's rho is valid, and so is that of the amplified epsilon.
    inner_rho, inner_delta = atom_rho(atom.inner)
    amplified = subsampled_pure_epsilon(atom)
    if amplified is not None:
        return min(pure_rho(amplified), inner_rho), Fraction(0)
    if isinstance(atom.inner, ApproxAtom):
        # (log(1 + q(e^eps - 1)), q delta) (Balle, Barthe & Gaboardi 2018)
        pure = SubsampledAtom(atom.rate, PureAtom(atom.inner.epsilon))
        amplified = subsampled_pure_epsilon(pure)
        return pure_rho(amplified), atom.rate * atom.inner.delta  # type: ignore[arg-type]
    return inner_rho, inner_delta


def total_rho(atoms: Atoms) -> tuple[Fraction, Fraction]:
    rho, delta = Fraction(0), Fraction(0)
    for atom, n in atoms.items():
        r, d = atom_rho(atom)
        rho += n * r
        delta += n * d
    return rho, delta


def epsilon_simple(rho: float, delta: float) -> float:
    """BS16, Prop. 1.3: rho-zCDP implies (rho + 2 sqrt(rho log(1/delta)), delta)-DP.
    A sum of non-negative terms, each a few roundings: 8 ulps up cover it."""
    if delta <= 0:
        return math.inf
    if delta >= 1:
        return 0.0
    return up(rho + 2 * math.sqrt(rho * -math.log(delta)), 8)


def epsilon_at_order(rho: float, delta: float, alpha: float) -> float:
    """Canonne, Kamath & Steinke 2020 (Prop. 12 / Cor. 13): rho-zCDP is
    (eps, delta)-DP for every alpha > 1 with
    eps = alpha rho + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log(alpha)) / (alpha - 1).
    Rounded up: each term carries a few roundings, and dividing by alpha - 1
    scales the numerator's absolute error with it; 16 U times the sum of the
    terms' magnitudes bounds the total."""
    log_inverse = -math.log(delta)
    shrink = (alpha - 1) * math.log1p(-1 / alpha)
    log_alpha = math.log(alpha)
    value = alpha * rho + (log_inverse + shrink - log_alpha) / (alpha - 1)
    magnitude = alpha * rho + (log_inverse + abs(shrink) + abs(log_alpha)) / (alpha - 1)
    return value + 16 * U * magnitude


def epsilon_cks(rho: float, delta: float) -> float:
    """The CKS20 conversion minimised over alpha (any alpha is valid, so an
    imprecise minimiser only loosens the bound; each value is rounded up)."""
    if delta <= 0:
        return math.inf
    if delta >= 1 or rho <= 0:
        return 0.0
    if not math.isfinite(rho):  # no noise to speak of (sigma 1e-300): no finite epsilon
        return math.inf
    # search over log(alpha - 1): a coarse grid, then a bounded refinement. The
    # grid reaches the optimum alpha ~ 1 + sqrt(log(1/delta) / rho) however
    # small rho is (sigma = 1e15: alpha ~ 1e16; a grid ending at e^12 was 10^4x
    # loose there). The grid is scanned vectorised (numpy) only to locate the
    # minimum; every value returned is computed by `epsilon_at_order`.
    centre = 0.5 * (math.log(-math.log(delta)) - math.log(rho))
    # alpha - 1 >= e^-27 keeps alpha a double above 1 (a huge rho's optimum lies below it; any alpha is valid)
    grid = np.linspace(max(min(-12.0, centre - 12.0), _LOWEST_LOG_ORDER), max(12.0, centre + 12.0), 97)
    best = int(np.argmin(_orders_estimate(rho, delta, 1 + np.exp(grid))))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    at_grid = epsilon_at_order(rho, delta, 1 + math.exp(float(grid[best])))
    refined = _golden_minimum(lambda t: epsilon_at_order(rho, delta, 1 + math.exp(t)), float(lo), float(hi))
    found = min(at_grid, refined)
    # a NaN is no bound: `max(0.0, nan)` would read it as 0 (a review of issue 25's change: sigma 1e-300 printed 0)
    return math.inf if math.isnan(found) else max(0.0, found)


_LOWEST_LOG_ORDER = -27.0


def _orders_estimate(rho: float, delta: float, alphas: np.ndarray) -> np.ndarray:
    """`epsilon_at_order` at many orders in floating point (to locate the
    minimum only; not a bound)."""
    with np.errstate(all="ignore"):
        values = alphas * rho + (-math.log(delta) + (alphas - 1) * np.log1p(-1 / alphas) - np.log(alphas)) / (
            alphas - 1
        )
    return np.where(np.isfinite(values), values, np.inf)


_GOLDEN = (math.sqrt(5) - 1) / 2


def _golden_minimum(f: Callable[[float], float], lo: float, hi: float, tolerance: float = 1e-10) -> float:
    """The least value of `f` seen by a golden-section search of [lo, hi]
    (Kiefer 1953) down to `tolerance`: every value is a valid bound, so the
    search only has to be good, not exact -- and it needs no scipy.optimize
    (~0.2 s of imports, issue 24)."""
    a, b = lo, hi
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    best = min(fc, fd)
    while b - a > tolerance:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
        best = min(best, fc, fd)
    return best


def approximate_epsilon(atoms: Atoms, delta: float, tight: bool) -> float:
    """eps at delta from the atoms' total (approximate) zCDP cost: rho rounded
    up, the delta left over computed exactly and rounded down."""
    rho, used = total_rho(atoms)
    remaining = Fraction(delta) - used
    if remaining <= 0:
        return math.inf
    convert = epsilon_cks if tight else epsilon_simple
    return convert(float_up(rho), float_down(remaining))
