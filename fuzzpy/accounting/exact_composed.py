"""Exact epsilon of homogeneous compositions whose worst case has a closed form.

Answered without building a PLD (`accountant.tightest` stops at an exact
answer: no valid bound can be smaller). Each returns a proven upper bound of
the exact epsilon, or None where it does not apply.

* k-fold pure eps0-DP (or (eps0, delta0)-DP) events: KOV's optimal
  composition (Kairouz, Oh & Viswanath 2015, Thm 3.3; `composition.kov`),
  exact because randomized response is itself eps0-DP. Not for the
  exponential mechanism, whose bounded range proves more (Cesar & Rogers 2021).
* k-fold Poisson-subsampled pure eps0-DP: every step is dominated by
  subsampled randomized response (Zhu, Dong & Wang 2022, Thm 9, with
  randomized response dominating every eps0-DP mechanism) and that pair is
  attained, so the exact curve is the larger of the two directions' k-fold
  curves. Per step the loss takes two values, so the k-fold loss is a
  binomial (module `_two_point`): with p = e^eps0 / (1 + e^eps0),
    removal  ((1-q) P0 + q P1 vs P0): log(1 - q + q e^eps0) w.p. (1-q)(1-p) + qp,
             log(1 - q + q e^-eps0) otherwise;
    addition (P0 vs (1-q) P0 + q P1): -log(1 - q + q e^-eps0) w.p. p,
             -log(1 - q + q e^eps0) otherwise.
* k-fold Laplace at eps0 = s/b, for eps >= (k - 2) eps0 (the regime of small
  delta): in units of b the pair is Lap(eps0, 1) vs Lap(0, 1) (Koskela,
  Jalko, Prediger & Honkela 2021, Laplace PLD), whose loss is
  eps0 - 2w, w = eps0 - clip(x, 0, eps0): w = 0 w.p. 1/2, density e^{-w}/2 on
  (0, eps0), w = eps0 w.p. e^{-eps0}/2. With eps = k eps0 - 2r, 0 < r <= eps0,
  only outcomes with sum w < r <= eps0 count, so no part is truncated, and
  the hockey-stick divergence E[(1 - e^{eps - L})_+] integrates to
      delta = 2^{-k} sum_j C(k, j) F_j(r),
      F_j(r) = int_0^r e^{-y} y^{j-1}/(j-1)! (1 - e^{-2(r-y)}) dy
             = 2 e^{-r} sum_{n odd} r^{n+j} / (n+j)!     (F_0 = 1 - e^{-2r}),
  (substitute s = r - y: the integrand is 2 sinh(s) (r-s)^{j-1}/(j-1)!, and
  a Beta integral), hence with all terms positive
      delta(r) = 2^{1-k} e^{-r} sum_{m>=1} c_m r^m / m!,
      c_m = sum_{0 <= j <= min(k, m-1), m - j odd} C(k, j)
  (= 2^{k-1} for m > k). k = 1 gives 1 - e^{-r}, `closed_form.laplace_epsilon`.
  Composed with m pure eps_p events (randomized response: +eps_p w.p.
  p = e^eps_p/(1 + e^eps_p), else -eps_p), f flips lower the loss by
  2 f eps_p, so with eps = k eps0 + m eps_p - 2r, 0 < r <= eps0,
      delta = sum_f C(m, f) p^{m-f} (1-p)^f delta_k(r - f eps_p)   (terms with r - f eps_p > 0).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp, mpf
from scipy.special import gammaln

from fuzzpy.accounting import discrete, heterogeneous
from fuzzpy.accounting.atoms import ApproxAtom, Atoms, LaplaceAtom, PureAtom, SubsampledAtom
from fuzzpy.accounting.rounding import MP_MARGIN, MP_PREC, U, float_up, float_up_mp, mp_of

_MAX_RAISES = 60
_TRUNCATION_BITS = 64
LAPLACE_MAX_COUNT = 400  # 2^{1-k} stays a normal double; beyond, the PLD answers
PURE_MAX_COUNT = 64  # beside Laplace: each bisection step sums up to m + 1 series
TWO_POINT_MAX_COUNT = 100_000


def single(atoms: Atoms) -> tuple[object, int] | None:
    if len(atoms) != 1:
        return None
    ((atom, n),) = atoms.items()
    return atom, n


def kov_is_exact(atoms: Atoms) -> bool:
    """Whether KOV's answer is the exact optimum for these atoms."""
    found = single(atoms)
    if found is None:  # heterogeneous: exact when enumerated (`heterogeneous`)
        return heterogeneous.is_exact(atoms) and heterogeneous.profile(atoms) is not None
    atom, _ = found
    return isinstance(atom, ApproxAtom) or isinstance(atom, PureAtom) and not atom.bounded_range


# ---------------------------------------------------------------- subsampled pure


def subsampled_pure_epsilon(atoms: Atoms, delta: float) -> float | None:
    """k-fold Poisson-subsampled pure eps0-DP (module docstring), proven."""
    found = single(atoms)
    if found is None:
        return None
    atom, k = found
    if not (isinstance(atom, SubsampledAtom) and isinstance(atom.inner, PureAtom)):
        return None
    if atom.inner.bounded_range or k > TWO_POINT_MAX_COUNT or not 0 < delta < 1:
        return None
    q, e0 = atom.rate, atom.inner.epsilon
    if not (0 < q < 1 and 0 < e0 <= 700):
        return None
    found = max(_two_point_epsilon(q, e0, k, delta, remove) for remove in (True, False))
    return found if math.isfinite(found) else None


def _float_steps(q: float, e0: float, remove: bool) -> tuple[float, float, float, float]:
    """(high loss, its log mass, low loss, its log mass) of one step, in floats."""
    up_loss = math.log1p(q * math.expm1(e0))
    down_loss = math.log1p(q * math.expm1(-e0))
    log_p = -math.log1p(math.exp(-e0))
    log_1p = -math.log1p(math.exp(e0))
    if remove:
        high = math.log((1 - q) * math.exp(log_1p) + q * math.exp(log_p))
        return up_loss, high, down_loss, math.log1p(-math.exp(high))
    return -down_loss, log_p, -up_loss, log_1p


def _two_point_epsilon(q: Fraction, e0: Fraction, k: int, delta: float, remove: bool) -> float:
    hi, log_hi, lo, log_lo = _float_steps(float(q), float(e0), remove)
    j = np.arange(k + 1, dtype=float)  # j high outcomes: loss j hi + (k - j) lo, ascending
    losses = j * hi + (k - j) * lo
    log_masses = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1) + j * log_hi + (k - j) * log_lo
    # a candidate only (gammaln's error is not bounded): certified below in mpmath
    candidate = discrete.epsilon_for_delta_log(losses, log_masses, 0.0, delta)
    if math.isinf(candidate):
        return math.inf
    top = k * hi * (1 + 1e-9) + 1e-300  # above the largest loss: delta = 0 there
    epsilon = max(candidate, 0.0)
    minimum = max(abs(epsilon), 1.0) * 2.0**-48
    for _ in range(_MAX_RAISES):
        if epsilon >= top:
            epsilon = top
        excess, slope = _two_point_excess(q, e0, k, delta, remove, epsilon)
        if excess <= 0:
            return epsilon
        if epsilon >= top:
            return math.inf
        newton = 2 * excess / slope if slope > 0 else 0.0
        epsilon += max(newton, minimum)
        minimum *= 2
    return math.inf


def _mp_steps(q: mpf, e0: mpf, remove: bool) -> tuple[mpf, mpf, mpf, mpf]:
    up_loss = mpmath.log1p(q * mpmath.expm1(e0))
    down_loss = mpmath.log1p(q * mpmath.expm1(-e0))
    p = 1 / (1 + mpmath.exp(-e0))
    if remove:
        high = (1 - q) * (1 - p) + q * p
        return up_loss, high, down_loss, 1 - high
    return -down_loss, p, -up_loss, 1 - p


def _two_point_excess(
    q: Fraction, e0: Fraction, k: int, delta: float, remove: bool, epsilon: float
) -> tuple[float, float]:
    """(an upper bound of delta_k(eps) minus delta, the slope -d delta/d eps).

    Rigour: q and eps0 are exact; the step's losses hi > lo, its mass ratio
    w = m_hi/m_lo and the mass m_{j0} of the first binomial term are computed
    in mpmath at MP_PREC bits and rounded up (`float_up_mp`), so that
    l_j <= j hi + (k - j) lo and every mass is at most its float recursion in
    exact arithmetic. In floats, the gap eps - l_j is lowered by 4 ulp of the
    largest magnitude involved (a product and two sums), so each
    1 - e^{gap} (expm1 within 1 ulp) only grows; where that lowered gap is
    still >= 0 the exact term is 0 (clipped), and the exact gap decreases in
    j, so every j below j0 adds 0. The masses relative to m_{j0} come from
    m_{j+1} = m_j w (k - j)/(j + 1): 3 roundings a step, so n steps and the
    sum of n non-negative terms stay within a relative (4n + 8) U, applied.
    The sum stops once the masses left, bounded by a geometric series (the
    ratio decreases in j), are below 2^-64 of the sum; that bound is added."""
    with mp.workprec(MP_PREC):
        mp_hi, m_hi, mp_lo, m_lo = _mp_steps(mp_of(q), mp_of(e0), remove)
        hi, lo, w = float_up_mp(mp_hi), float_up_mp(mp_lo), float_up_mp(m_hi / m_lo)
    scale = 4 * U * (abs(epsilon) + k * max(abs(hi), abs(lo)) + 1)

    def gap(j: int) -> float:  # a lower bound of eps - l_j
        return epsilon - (j * hi + (k - j) * lo) - scale

    j = max(0, min(k, math.floor((epsilon - k * lo) / (hi - lo)) - 1))
    while j > 0 and gap(j - 1) < 0:
        j -= 1
    with mp.workprec(MP_PREC):
        first = float_up_mp(mpmath.binomial(k, j) * m_hi**j * m_lo ** (k - j))
    total, slope, mass, steps = 0.0, 0.0, 1.0, 0
    while True:
        g = gap(j)
        if g < 0:
            total += mass * -math.expm1(g)
            slope += mass * math.exp(g)
        if j == k:
            break
        ratio = w * (k - j) / (j + 1)
        mass *= ratio
        j += 1
        steps += 1
        if ratio < 1 and j < k and gap(j) < 0:
            rest = mass / (1 - ratio)  # the masses from j on, at most a geometric series
            if rest <= total * 2.0**-_TRUNCATION_BITS:
                total += rest
                break
    total *= 1 + (4 * steps + 16) * U
    if not math.isfinite(total):
        return math.inf, slope
    with mp.workprec(MP_PREC):
        bound = mpf(first) * mpf(total) * (1 + MP_MARGIN)
        return float(bound - mpf(delta)), float(first * slope)


# ---------------------------------------------------------------- k-fold Laplace


def laplace_epsilon(atoms: Atoms, delta: float) -> float | None:
    """k-fold Laplace, with m pure events of one epsilon or none (module
    docstring), proven; None outside eps >= k eps0 + m eps_p - 2 eps0."""
    parts = _laplace_and_pure(atoms)
    if parts is None or not 0 < delta < 1:
        return None
    e0, k, e_pure, m = parts
    coefficients = _coefficients(k)
    p = math.exp(e_pure) / (1 + math.exp(e_pure)) * (1 + 4 * U) if m else 1.0
    q = 1 / (1 + math.exp(e_pure)) * (1 + 4 * U) if m else 0.0

    def bound(r: float) -> float:
        # flips f of the pure events lower the loss by 2 f eps_p: the Laplace
        # part then needs its own deficit below r - f eps_p
        total, f = 0.0, 0
        while f <= m:
            r_f = float_up(Fraction(r) - f * Fraction(e_pure)) if f else r
            if r_f <= 0:
                break
            weight = math.comb(m, f) * p ** (m - f) * q**f * (1 + 2 * (m + 4) * U)
            total += weight * _laplace_delta_upper(k, coefficients, r_f)
            f += 1
        return total * (1 + (f + 2) * U)

    top = float_up(e0)
    if bound(top) <= delta:
        return None  # the answer lies below the regime
    lo, hi = 0.0, top  # bound(lo) <= delta < bound(hi)
    for _ in range(100):
        mid = (lo + hi) / 2
        if not lo < mid < hi:
            break
        if bound(mid) <= delta:
            lo = mid
        else:
            hi = mid
    if Fraction(lo) > e0:  # the formula holds for r <= eps0 only
        return None
    # eps rounded up: the exact r behind it is at most lo, so delta(r) <= delta
    return float_up(k * e0 + m * Fraction(e_pure) - 2 * Fraction(lo))


def _laplace_and_pure(atoms: Atoms) -> tuple[Fraction, int, float, int] | None:
    """(eps0, k, eps_p rounded up, m) when the atoms are k >= 1 Laplace atoms
    of one eps0 and m >= 0 pure atoms (randomized response is their exact
    worst case; a larger eps_p dominates) of one eps_p, k + m >= 2."""
    laplace = [(a, n) for a, n in atoms.items() if isinstance(a, LaplaceAtom)]
    pure = [(a, n) for a, n in atoms.items() if isinstance(a, PureAtom) and not a.bounded_range]
    if len(laplace) != 1 or len(pure) > 1 or len(laplace) + len(pure) != len(atoms):
        return None
    (atom, k), (pure_atom, m) = laplace[0], pure[0] if pure else (None, 0)
    if k + m < 2 or k > LAPLACE_MAX_COUNT or m > PURE_MAX_COUNT:
        return None
    if not 0 < atom.epsilon <= 50 or (pure_atom is not None and not 0 < pure_atom.epsilon <= 50):
        return None
    return atom.epsilon, k, float_up(pure_atom.epsilon) if m else 0.0, m


def _coefficients(k: int) -> list[int]:
    """c_1 .. c_{k+1} (module docstring) as exact integers."""
    binomials = [math.comb(k, j) for j in range(k + 1)]
    return [sum(binomials[j] for j in range(min(k, m - 1) + 1) if (m - j) % 2) for m in range(1, k + 2)]


def _laplace_delta_upper(k: int, coefficients: list[int], r: float) -> float:
    """An upper bound of delta(r) = 2^{1-k} e^{-r} sum_m c_m r^m/m! (r a float).

    Rounding: t_m = r^m/m! by the recursion t_m = t_{m-1} r / m (2 roundings
    each), c_m rounded once, each product once, the sum of N non-negative
    terms within N ulp, exp within 1 ulp, the power of two exact: a relative
    (4N + 8) U in all, applied as (1 + 8 (N + 4) U). Terms that underflow
    lose less than 2^-1074 each (added). The series is cut once m > k + 1,
    m > 2r and the term is below 2^-64 of the sum; the rest is at most
    2^{k-1} t_m (r/(m+1)) / (1 - r/(m+1)) <= 2^k t_m (added)."""
    if r <= 0:
        return 0.0
    half = float(2 ** (k - 1))
    total, term, m = 0.0, 1.0, 0
    while True:
        m += 1
        term = term * r / m
        c = float(coefficients[m - 1]) if m <= k + 1 else half
        total += c * term
        if m > k + 1 and m > 2 * r and c * term <= total * 2.0**-64:
            total += 2 * half * term
            break
    total += (m + 2) * 5e-324
    scaled = total * math.exp(-r) * 2.0 ** (1 - k)
    return scaled * (1 + 8 * (m + 4) * U) + 5e-324
