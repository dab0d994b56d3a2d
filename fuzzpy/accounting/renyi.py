"""Renyi DP with the sharp subsampled-Gaussian bound, certified at one order.

The order is searched in floating point over integer and fractional orders;
the chosen order's epsilon is then recomputed in mpmath at 40 digits (each
term a few ulp of 1e-40 off) and rounded up, so the result is proven even
where the float search was not exact (any order gives a valid bound).
Kept apart from `rdp` (the grid method) on purpose.

Per-atom Renyi divergences D_alpha (alpha > 1), composed by adding (Mironov
2017, Prop. 1):
* Gaussian: alpha rho (Mironov 2017, Table II).
* Laplace eps: 1/(alpha-1) log(alpha/(2alpha-1) e^{(alpha-1)eps}
  + (alpha-1)/(2alpha-1) e^{-alpha eps}) (Mironov 2017, Table II).
* Pure eps (and the eps of an (eps, delta) atom, whose delta is set aside,
  Bun & Steinke 2016, Sec. 8): randomized response, which every eps-DP pair
  post-processes (Kairouz, Oh & Viswanath 2015), so
  1/(alpha-1) log(p^alpha (1-p)^{1-alpha} + (1-p)^alpha p^{1-alpha}), p = e^eps/(1+e^eps);
  for the exponential mechanism also alpha eps^2/8 (Cesar & Rogers 2021).
* Poisson-subsampled pure or (eps, delta): the amplified
  (log(1 + q(e^eps - 1)), q delta) (Balle, Barthe & Gaboardi 2018).
* Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019, Sec. 3.3; the
  removal direction is the larger one there): D_alpha = log(A_alpha)/(alpha-1),
  A_alpha = sum_k C(alpha, k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2 s^2)} for integer
  alpha (s = sigma / sensitivity); for fractional alpha the two series split at
  z0 = 1/2 + s^2 log(1/q - 1):
    A1 = sum_k C(alpha,k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2s^2)} erfc((k - z0)/(sqrt2 s))/2,
    A2 = sum_k C(alpha,k) (1-q)^k q^{alpha-k} e^{((alpha-k)^2-(alpha-k))/(2s^2)}
         erfc((z0 - (alpha-k))/(sqrt2 s))/2,
  alternating beyond k > alpha with terms shrinking to 0: summed until the
  terms fall below 1e-15 of the total and have shrunk for 8 steps, the next
  term's size bounds the remainder and is added (when that takes too long,
  log A_alpha is bounded by the chord between the neighbouring integers:
  log A_alpha = log E[r^alpha] is convex in alpha, by Hoelder). Below order 2
  the subsampled Gaussian uses D_2 (D_alpha grows with alpha).

Conversion (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020,
Thm 21; the conversion of Steinke's composition chapter): (alpha, tau)-RDP
gives (eps, delta)-DP with
    eps = tau + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

import mpmath as mp
import numpy as np
from scipy.special import gammaln, log_ndtr

from fuzzpy.accounting.atoms import (
    ApproxAtom,
    Atom,
    Atoms,
    DiscreteGaussianAtom,
    GaussianAtom,
    GeometricAtom,
    LaplaceAtom,
    PureAtom,
    ShuffledAtom,
    SubsampledAtom,
)

INTEGER_ORDERS = np.arange(2, 257, dtype=float)
FRACTIONAL_ORDERS = np.concatenate([1 + np.geomspace(1e-3, 0.9, 16), np.arange(2.25, 32, 0.25)])
FRACTIONAL_ORDERS = FRACTIONAL_ORDERS[np.round(FRACTIONAL_ORDERS) != FRACTIONAL_ORDERS]
ORDERS = np.sort(np.concatenate([INTEGER_ORDERS, FRACTIONAL_ORDERS]))
_DPS = 40
_SERIES_TERMS = 2000
_FLOAT_TERMS = 600


def _mpf(x: Fraction | float) -> mp.mpf:
    if isinstance(x, Fraction):
        return mp.mpf(x.numerator) / x.denominator
    return mp.mpf(x)


# ---------------------------------------------------------------- per atom, float


def _rr_curve(epsilon: float, a: np.ndarray) -> np.ndarray:
    log_p = -np.logaddexp(0.0, -epsilon)
    log_q = -np.logaddexp(0.0, epsilon)
    terms = np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p)
    return np.minimum(terms / (a - 1), epsilon)


def _laplace_curve(epsilon: float, a: np.ndarray) -> np.ndarray:
    terms = np.logaddexp(
        np.log(a / (2 * a - 1)) + (a - 1) * epsilon, np.log((a - 1) / (2 * a - 1)) - a * epsilon
    )
    return np.minimum(terms / (a - 1), epsilon)


def _amplified(rate: float, epsilon: float) -> float:
    return math.log1p(rate * math.expm1(epsilon))


@lru_cache(maxsize=128)
def _subsampled_gaussian_curve(rate: float, sigma: float) -> np.ndarray:
    """MTZ19's log(A_alpha)/(alpha - 1) at ORDERS, in float (for the search)."""
    values = np.array([_log_a_float(rate, sigma, a) / (a - 1) for a in ORDERS])
    values.setflags(write=False)
    return values


def _log_a_float(q: float, s: float, a: float) -> float:
    if a < 2:
        return _log_a_float(q, s, 2.0) * (a - 1)  # D_alpha <= D_2
    if a == round(a):
        k = np.arange(int(a) + 1)
        log_terms = (
            gammaln(a + 1)
            - gammaln(k + 1)
            - gammaln(a - k + 1)
            + (a - k) * math.log1p(-q)
            + k * math.log(q)
            + (k * k - k) / (2 * s * s)
        )
        return float(np.logaddexp.reduce(log_terms))
    z0 = 0.5 + s * s * math.log(1 / q - 1)
    k = np.arange(_FLOAT_TERMS, dtype=float)
    log_binomial = gammaln(a + 1) - gammaln(k + 1) - gammaln(a - k + 1)
    # C(alpha, k) has floor(k - alpha) negative factors once k > alpha
    sign = np.where((k > a) & ((np.floor(k - a) % 2) == 1), -1.0, 1.0)
    first = (
        log_binomial
        + (a - k) * math.log1p(-q)
        + k * math.log(q)
        + (k * k - k) / (2 * s * s)
        + log_ndtr((z0 - k) / s)
    )
    b = a - k
    second = (
        log_binomial
        + k * math.log1p(-q)
        + b * math.log(q)
        + (b * b - b) / (2 * s * s)
        + log_ndtr((b - z0) / s)
    )
    top = max(np.max(first), np.max(second))
    total = np.sum(sign * (np.exp(first - top) + np.exp(second - top)))
    return top + math.log(max(total, 1e-300))


def _float_curve(atom: Atom) -> tuple[np.ndarray, float]:
    a = ORDERS
    if isinstance(atom, GaussianAtom | DiscreteGaussianAtom):  # the discrete one: its zCDP (CKS 2020)
        return a * float(atom.rho), 0.0
    if isinstance(atom, LaplaceAtom):
        return _laplace_curve(float(atom.epsilon), a), 0.0
    if isinstance(atom, PureAtom):
        curve = _rr_curve(float(atom.epsilon), a)
        if atom.bounded_range:
            curve = np.minimum(curve, a * float(atom.epsilon) ** 2 / 8)
        return curve, 0.0
    if isinstance(atom, ApproxAtom):
        return _rr_curve(float(atom.epsilon), a), float(atom.delta)
    if isinstance(atom, ShuffledAtom):  # FMT's pair: not this method's (`accountant.REPLACE_AWARE`)
        raise ValueError("no Renyi bound for a shuffle's pair here")
    inner, q = atom.inner, float(atom.rate)
    if isinstance(inner, GaussianAtom):
        return _subsampled_gaussian_curve(q, 1 / inner.mu), 0.0
    if isinstance(inner, ApproxAtom):
        return _rr_curve(_amplified(q, float(inner.epsilon)), a), q * float(inner.delta)
    if isinstance(inner, DiscreteGaussianAtom):  # never built (`atoms.Flattener` summarises it first)
        raise ValueError("no Renyi bound for a subsampled discrete Gaussian here")
    if isinstance(inner, GeometricAtom):  # only a group's pair (`accountant.REPLACE_AWARE`)
        raise ValueError("no Renyi bound for a group over a subsampled geometric here")
    return _rr_curve(_amplified(q, float(inner.epsilon)), a), 0.0


# ---------------------------------------------------------------- per atom, certified


def _certified(atom: Atom, a: mp.mpf) -> tuple[mp.mpf, mp.mpf]:
    """(an upper bound of D_alpha at order a, the atom's delta), in mpmath."""
    if isinstance(atom, GaussianAtom | DiscreteGaussianAtom):  # the discrete one: its zCDP (CKS 2020)
        return a * _mpf(atom.rho), mp.mpf(0)
    if isinstance(atom, LaplaceAtom):
        e = _mpf(atom.epsilon)
        inner = a / (2 * a - 1) * mp.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mp.exp(-a * e)
        return min(mp.log(inner) / (a - 1), e), mp.mpf(0)
    if isinstance(atom, PureAtom):
        e = _mpf(atom.epsilon)
        value = _rr_certified(e, a)
        if atom.bounded_range:
            value = min(value, a * e * e / 8)
        return value, mp.mpf(0)
    if isinstance(atom, ApproxAtom):
        return _rr_certified(_mpf(atom.epsilon), a), _mpf(atom.delta)
    if isinstance(atom, ShuffledAtom):  # FMT's pair: not this method's (`accountant.REPLACE_AWARE`)
        raise ValueError("no Renyi bound for a shuffle's pair here")
    inner, q = atom.inner, _mpf(atom.rate)
    if isinstance(inner, GaussianAtom):
        sigma = 1 / mp.sqrt(2 * _mpf(inner.rho))
        if a < 2:
            return mp.log(_a_certified(q, sigma, mp.mpf(2))), mp.mpf(0)  # D_alpha <= D_2
        return _log_a_certified(q, sigma, a) / (a - 1), mp.mpf(0)
    if isinstance(inner, DiscreteGaussianAtom):  # never built (`atoms.Flattener` summarises it first)
        raise ValueError("no Renyi bound for a subsampled discrete Gaussian here")
    if isinstance(inner, GeometricAtom):  # only a group's pair (`accountant.REPLACE_AWARE`)
        raise ValueError("no Renyi bound for a group over a subsampled geometric here")
    amplified = mp.log1p(q * mp.expm1(_mpf(inner.epsilon)))
    delta = q * _mpf(inner.delta) if isinstance(inner, ApproxAtom) else mp.mpf(0)
    return _rr_certified(amplified, a), delta


def _rr_certified(e: mp.mpf, a: mp.mpf) -> mp.mpf:
    p = 1 / (1 + mp.exp(-e))
    value = mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
    return min(value, e)


def _log_a_certified(q: mp.mpf, s: mp.mpf, a: mp.mpf) -> mp.mpf:
    """An upper bound of log A_alpha: the series, else the convexity chord."""
    value = _a_certified(q, s, a)
    if mp.isfinite(value):
        return mp.log(value)
    low, high = mp.floor(a), mp.floor(a) + 1
    return (high - a) * mp.log(_a_certified(q, s, low)) + (a - low) * mp.log(
        _a_certified(q, s, high)
    )


def _a_certified(q: mp.mpf, s: mp.mpf, a: mp.mpf) -> mp.mpf:
    """An upper bound of MTZ19's A_alpha (module docstring); inf when the
    series does not settle within _SERIES_TERMS terms."""
    if a == mp.floor(a):
        n = int(a)
        return mp.fsum(
            mp.binomial(n, k) * (1 - q) ** (n - k) * q**k * mp.exp((k * k - k) / (2 * s * s))
            for k in range(n + 1)
        )
    z0 = mp.mpf(1) / 2 + s * s * mp.log(1 / q - 1)
    total, previous, shrinking = mp.mpf(0), mp.inf, 0
    for k in range(_SERIES_TERMS):
        b = a - k
        term = mp.binomial(a, k) * (
            (1 - q) ** b
            * q**k
            * mp.exp((k * k - k) / (2 * s * s))
            * mp.erfc((k - z0) / (mp.sqrt(2) * s))
            / 2
            + (1 - q) ** k
            * q**b
            * mp.exp((b * b - b) / (2 * s * s))
            * mp.erfc((z0 - b) / (mp.sqrt(2) * s))
            / 2
        )
        total += term
        size = abs(term)
        shrinking = shrinking + 1 if size < previous else 0
        previous = size
        if k > a + 1 and shrinking >= 8 and size < total * mp.mpf(10) ** -15:
            return total + 2 * size  # an alternating tail is within its first term
    return mp.inf


# ---------------------------------------------------------------- conversion


def _conversion(tau: np.ndarray, a: np.ndarray, log_delta: float) -> np.ndarray:
    return tau + np.log1p(-1 / a) - (log_delta + np.log(a)) / (a - 1)


def epsilon(atoms: Atoms, delta: float) -> float | None:
    """A proven epsilon at delta (None when the atoms' deltas leave nothing)."""
    values = _converted(atoms, delta, _float_curve)
    if values is None:
        return None
    order = float(ORDERS[int(np.argmin(values))])
    return _certify(atoms, delta, order)


def epsilon_floor(atoms: Atoms, delta: float) -> float | None:
    """A float estimate from below of `epsilon` (for skipping it when it
    cannot win): the same search, with each subsampled Gaussian's D_alpha at
    a fractional order replaced by D at the integer below (D_alpha does not
    decrease with alpha; below 2 `epsilon` uses D_2 itself), which costs one
    vectorised sum instead of the fractional series."""
    values = _converted(atoms, delta, _floor_curve)
    return None if values is None else float(np.min(values))


def _floor_curve(atom: Atom) -> tuple[np.ndarray, float]:
    if isinstance(atom, SubsampledAtom) and isinstance(atom.inner, GaussianAtom):
        return _integer_floor_curve(float(atom.rate), 1 / atom.inner.mu), 0.0
    return _float_curve(atom)


def _converted(atoms: Atoms, delta: float, curve_of: Callable[[Atom], tuple[np.ndarray, float]]) -> np.ndarray | None:
    """The conversion's epsilon at every order (inf where not finite) for
    the atoms' composed curve (`curve_of`: an atom's RDP curve and delta
    share); None when the atoms' deltas leave nothing of delta."""
    curve = np.zeros_like(ORDERS)
    used = 0.0
    for atom, n in atoms.items():
        c, d = curve_of(atom)
        curve = curve + n * c
        used += n * d
    left = delta - used * (1 + 1e-9)
    if left <= 0:
        return None
    values = _conversion(curve, ORDERS, math.log(left))
    return np.where(np.isfinite(values), values, np.inf)


class _FloorTable:
    """The q- and sigma-free parts of `_integer_floor_curve`'s terms, over
    the pairs (n, k <= min(n, most)) flattened row by row (log C(n, k), n, k,
    k^2 - k, each row's start and row index): constants, built once per
    process and truncation on first use (not a memo of any input, so
    cold-cache timings keep them)."""

    _built: dict[int, tuple[np.ndarray, ...]] = {}

    @classmethod
    def get(cls, most: int) -> tuple[np.ndarray, ...]:
        if most not in cls._built:
            top = int(INTEGER_ORDERS[-1])
            orders = np.arange(2, top + 1)
            lengths = np.minimum(orders, most) + 1
            rows = np.repeat(np.arange(orders.size), lengths)
            n = orders[rows]
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            k = np.arange(n.size) - starts[rows]
            log_factorial = gammaln(np.arange(top + 1) + 1.0)
            log_binomial = log_factorial[n] - log_factorial[k] - log_factorial[n - k]
            kf = k.astype(float)
            cls._built[most] = (log_binomial, n.astype(float), kf, kf * kf - kf, starts, rows)
        return cls._built[most]


# the binomial sums' terms beyond k = K are dropped when they are below
# e^_NEGLIGIBLE_TERMS of the sum (`_floor_terms`)
_TRUNCATIONS = (16, 32, 64, 128)
_NEGLIGIBLE_TERMS = -45.0


def _floor_terms(q: float, s: float) -> int:
    """The fewest terms K (k <= K) of every row n <= 256 of the binomial sum
    below whose dropped rest is below e^-45 of the row's sum (speed only:
    fewer terms only lower the floor, and by far less than a rounding). With
    r_k = term_{k+1} / term_k = (n - k) / (k + 1) q / (1 - q) e^{k / s^2} <= R
    for k >= K, R <= 1/2, the rest is at most term_K, and term_K / term_0
    <= C(n, K) (q / (1 - q))^K e^{K (K - 1) / (2 s^2)} (the row's sum is at
    least term_0)."""
    top = float(INTEGER_ORDERS[-1])
    if not 0 < q < 1 or top / (s * s) > 700:
        return int(top)
    log_odds = math.log(q) - math.log1p(-q)
    for most in _TRUNCATIONS:
        ratio = math.log(top / (most + 1)) + log_odds + top / (s * s)
        log_binomial = math.lgamma(top + 1) - math.lgamma(most + 1) - math.lgamma(top - most + 1)
        tail = log_binomial + most * log_odds + most * (most - 1) / (2 * s * s)
        if ratio <= -math.log(2) and tail <= _NEGLIGIBLE_TERMS:
            return most
    return int(top)


def _integer_floor_curve(q: float, s: float) -> np.ndarray:
    """MTZ19's D_n at n = max(2, floor(alpha)) for alpha in ORDERS (integer
    orders: a finite binomial sum, all orders at once)."""
    log_binomial, n, k, k_pairs, starts, rows = _FloorTable.get(_floor_terms(q, s))
    log_keep, log_q = math.log1p(-q), math.log(q)
    # log of C(n, k) (1-q)^(n-k) q^k e^{(k^2-k)/(2 s^2)}
    log_terms = log_binomial + n * log_keep + k * (log_q - log_keep) + k_pairs / (2 * s * s)
    peak = np.maximum.reduceat(log_terms, starts)
    log_a = peak + np.log(np.add.reduceat(np.exp(log_terms - peak[rows]), starts))
    d_integer = log_a / (INTEGER_ORDERS - 1)
    index = np.maximum(np.floor(ORDERS), 2).astype(int) - 2
    return d_integer[index]


def _certify(atoms: Atoms, delta: float, order: float) -> float | None:
    with mp.workdps(_DPS):
        a = mp.mpf(order)
        tau, used = mp.mpf(0), mp.mpf(0)
        for atom, n in atoms.items():
            value, d = _certified(atom, a)
            tau += n * value
            used += n * d
        left = mp.mpf(delta) - used
        if left <= 0 or not mp.isfinite(tau):
            return None
        eps = tau + mp.log1p(-1 / a) - (mp.log(left) + mp.log(a)) / (a - 1)
        value = max(float(eps), 0.0)
    # the 40-digit value is within far less than this of the exact one
    return math.nextafter(value * (1 + 1e-13) + 1e-300, math.inf)


def certified_divergence(atoms: Atoms, order: float) -> tuple[float, Fraction]:
    """An upper bound of the composition's Renyi divergence at ``order`` (the
    per-atom bounds above, added: Mironov 2017, Prop. 1), rounded up, and the
    atoms' total delta set aside (exact). Gaussian atoms add exactly
    (alpha rho, a Fraction); the others in 40-digit mpmath."""
    exact = sum((Fraction(order) * atom.rho * n for atom, n in atoms.items() if isinstance(atom, GaussianAtom)),
                Fraction(0))
    with mp.workdps(_DPS):
        a = mp.mpf(order)
        tau = mp.mpf(0)
        for atom, n in atoms.items():
            if not isinstance(atom, GaussianAtom):
                tau += n * _certified(atom, a)[0]
        # 40 digits are within 1e-30 (relative) of the exact sum: raise by that
        bound = _mpf(exact) + tau * (1 + mp.mpf(10) ** -30) if tau else None
        value = float(bound) if bound is not None and mp.isfinite(bound) else math.inf
        if bound is None:
            value = float(exact)
            if Fraction(value) < exact:
                value = math.nextafter(value, math.inf)
        elif mp.isfinite(bound) and mp.mpf(value) < bound:
            value = math.nextafter(value, math.inf)
    delta = sum((n * atom.delta for atom, n in atoms.items() if isinstance(atom, ApproxAtom)), Fraction(0))
    delta += sum((n * atom.rate * atom.inner.delta for atom, n in atoms.items()
                  if isinstance(atom, SubsampledAtom) and isinstance(atom.inner, ApproxAtom)), Fraction(0))
    return value, delta
