"""The accuracy of a release: how far the released value may be from the
exact query, at a stated confidence, computed from the noise exactly as
`fuzzpy.runtime.noise` samples it (docs/semantics.md, "Accuracy").

Every number here is a function of public parameters only (the noise's
scale, the grid, the number of entries or candidates, the confidence):
accuracy is post-processing of what is public, never of the data.

A release of x at Laplace scale b is g * (round(x/g) + Z) with
Z ~ DLap(t), P(Z = z) = (1 - q)/(1 + q) q^|z|, q = exp(-1/t). Its error is
g Z plus a rounding error of at most g/2, so

    P(|release - x| > g (k + 1/2)) <= P(|Z| > k) = 2 q^(k+1) / (1 + q),

the exact tail of the discrete Laplace (the discrete analogue of Dwork &
Roth, Thm 3.8: P(|Lap(b)| > b ln(1/alpha)) = alpha). The smallest such k is
solved in closed form in doubles and one grid unit is added (the doubles'
error is far below one unit, t < 2^34), so the interval is never too narrow.

The Gaussian release adds Z ~ N_Z(0, s^2), P(Z = z) proportional to
f(z) = exp(-z^2 / (2 s^2)). Its normaliser is at least sqrt(2 pi) s (Poisson
summation; Canonne, Kamath & Steinke 2020, Fact 18 and Prop. 5) and, f being
decreasing on z >= 0, sum_{z >= m} f(z) <= f(m) + sqrt(2 pi) s Q(m / s), so

    P(|Z| >= m) <= 2 Q(m / s) + 2 f(m) / (sqrt(2 pi) s)        (m >= 1),

an upper bound on the exact tail (tested against brute-force sums), the
continuous Gaussian's P(|N(0, s^2)| > s Phi^-1(1 - alpha/2)) = alpha plus a
term below 1/s. The smallest m it admits is found from the Gaussian's
quantile upwards, and one unit added.

The integer releases add their noise to the exact integer, with no grid:
`geometric[eps]` adds Z with P(Z = z) = (1 - q)/(1 + q) q^|z|, q = e^-eps,
so P(|Z| > k) = 2 q^(k+1) / (1 + q) exactly, and the half-width is the least
integer k with that at most alpha (checked in mpmath: never too narrow);
`dgauss[sigma]` adds N_Z(0, sigma^2), whose tail is summed term by term
(`dgauss_exact_units`: the window's terms, a bound on the rest, the
normaliser from below, a 1e-9 relative margin up) for sigma up to
EXACT_DGAUSS_SIGMA, and beyond it bounded as above. Both intervals are
integers +- k, with P(|Z| <= k) >= the confidence; k is the least such
integer (up to the margin), so the interval is exact, not a bound.

The exponential mechanism picks candidate i with probability proportional
to exp(eps u_i / 2) (`fuzzpy.runtime.expmech`), so for n candidates
P(u_chosen <= OPT - c) <= n exp(-eps c / 2) (McSherry & Talwar 2007; Dwork &
Roth, Thm 3.11, with the score's units as the program wrote them): with
probability at least 1 - beta, u_chosen > OPT - (2 / eps) ln(n / beta).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

#: The confidence shown when none is asked for.
DEFAULT_CONFIDENCE = Fraction(95, 100)


@dataclass(frozen=True)
class NoiseNote:
    """What one noise draw was, in public terms: ``kind`` "laplace" (``scale``
    b, grid 2^``exponent``, ``units`` t) or "gauss" (``scale`` sigma, grid,
    ``units`` sigma_u), over ``entries`` numbers; "staircase" (``scale`` eps,
    grid 2^``exponent``, ``units`` the inner part of a step, `runtime.staircase`);
    or "expmech" (``scale`` eps, ``entries`` the number of candidates, no grid)."""

    kind: str
    scale: Fraction
    entries: int
    exponent: int = 0
    units: int = 0


def dlap_tail(t: int, k: int) -> float:
    """P(|Z| > k) for Z ~ DLap(t), exactly as a formula: 2 q^(k+1) / (1 + q)."""
    q = math.exp(-1 / t)
    return 2 * math.exp(-(k + 1) / t) / (1 + q)


def dlap_units(t: int, alpha: float) -> int:
    """A k >= 0 with P(|Z| > k) <= alpha for Z ~ DLap(t) (the least one, plus one)."""
    q = math.exp(-1 / t)
    least = math.ceil(t * math.log(2 / (alpha * (1 + q)))) - 1
    return max(least, 0) + 1


def dgauss_tail_bound(sigma_units: int, m: int) -> float:
    """An upper bound on P(|Z| >= m) for Z ~ N_Z(0, sigma_units^2) (module note)."""
    if m <= 0:
        return 1.0
    s = float(sigma_units)
    z = m / s
    return math.erfc(z / math.sqrt(2)) + 2 * math.exp(-z * z / 2) / (math.sqrt(2 * math.pi) * s)


def dgauss_units_real(sigma: Fraction, alpha: float) -> int:
    """`dgauss_units` for any sigma > 0 (the bound holds for every sigma: the
    normaliser is at least sqrt(2 pi) sigma, Poisson summation): the m it
    returns has P(|Z| >= m) <= alpha, so k = m - 1 would do, and one unit of
    margin covers the double's rounding of sigma and of the bound."""
    s = math.nextafter(float(sigma), math.inf)
    m = max(1, math.ceil(s * NormalDist().inv_cdf(1 - alpha / 2)))
    while _dgauss_bound(s, m) > alpha:
        m += 1 + m // 2**20
    return m


def _dgauss_bound(s: float, m: int) -> float:
    z = m / s
    return math.erfc(z / math.sqrt(2)) + 2 * math.exp(-z * z / 2) / (math.sqrt(2 * math.pi) * s)


def dgauss_units(sigma_units: int, alpha: float) -> int:
    """A k >= 0 with P(|Z| > k) <= alpha for Z ~ N_Z(0, sigma_units^2)."""
    m = max(1, math.ceil(sigma_units * NormalDist().inv_cdf(1 - alpha / 2)))
    while dgauss_tail_bound(sigma_units, m) > alpha:
        m += 1 + m // 2**20  # a few steps: the extra term is below 1 / sigma_units
    return m  # |Z| > m - 1 is |Z| >= m: k = m - 1, and one unit of margin


#: sigma up to which the discrete Gaussian's tail is summed term by term
EXACT_DGAUSS_SIGMA = 20_000
_TAIL_MARGIN = 1e-9


def geometric_tail(epsilon: Fraction, k: int) -> float:
    """P(|Z| > k) for P(Z = z) proportional to exp(-eps |z|): 2 q^(k+1) / (1 + q) (a float)."""
    q = math.exp(-float(epsilon))
    return 2 * math.exp(-(k + 1) * float(epsilon)) / (1 + q)


def geometric_units(epsilon: Fraction, alpha: Fraction) -> int:
    """The least k >= 0 with P(|Z| > k) <= alpha, the tail evaluated in mpmath
    from the exact eps and alpha (so a k is never accepted too early)."""
    import mpmath
    from mpmath import mp

    with mp.workprec(128):
        e = mp.mpf(epsilon.numerator) / epsilon.denominator
        a = mp.mpf(alpha.numerator) / alpha.denominator
        q = mpmath.exp(-e)

        def tail(k: int) -> mp.mpf:
            return 2 * mpmath.exp(-(k + 1) * e) / (1 + q) * (1 + mp.mpf(2) ** -100)

        guess = max(0, int(mpmath.floor(mpmath.log(2 / (a * (1 + q))) / e)) - 2)
        while guess > 0 and tail(guess - 1) <= a:
            guess -= 1
        while tail(guess) > a:
            guess += 1
        return guess


def dgauss_exact_units(sigma: Fraction, alpha: float) -> int | None:
    """The least k >= 0 with P(|Z| > k) <= alpha for Z ~ N_Z(0, sigma^2), the
    tail summed over a window (module note), raised by a relative margin;
    None for sigma above EXACT_DGAUSS_SIGMA."""
    s = float(sigma)
    if s > EXACT_DGAUSS_SIGMA:
        return None
    import numpy as np

    k_max = math.ceil(s * 40) + 2  # exp(-800) beyond: the rest bounded below
    z = np.arange(0, k_max + 1, dtype=np.float64)
    f = np.exp(-(z * z) / (2 * s * s))
    ratio = math.exp(-(2 * k_max + 3) / (2 * s * s))
    rest = f[-1] / (1 - ratio) if ratio < 1 else math.inf  # sum beyond k_max, each term <= ratio x the last
    normaliser = 2 * float(np.sum(f)) - f[0]  # the window's sum: below Z
    # tails[k] = sum_{z > k} f(z), on one side
    tails = np.concatenate([np.cumsum(f[::-1])[::-1][1:], [0.0]]) + rest
    probs = 2 * tails / normaliser * (1 + _TAIL_MARGIN)
    ok = np.flatnonzero(probs <= alpha)
    return int(ok[0]) if ok.size else None


def half_width(note: NoiseNote, confidence: Fraction) -> Fraction:
    """The half-width h with P(|release - x| <= h) >= confidence for each
    entry (Laplace, Gaussian), or the utility gap c with P(u_chosen > OPT - c)
    >= confidence (exponential mechanism); an upper bound, exact where it can be."""
    alpha = float(1 - confidence)
    if note.kind == "geometric":  # scale = eps; the exact tail (module note)
        return Fraction(geometric_units(note.scale, 1 - confidence))
    if note.kind == "dgauss":  # scale = sigma
        exact = dgauss_exact_units(note.scale, alpha)
        if exact is not None:
            return Fraction(exact)
        return Fraction(dgauss_units_real(note.scale, alpha))
    if note.kind == "staircase":  # scale = eps, the grid 2^exponent, units = the inner part I
        from fuzzpy.runtime.staircase import StaircaseGrid, tail_units

        grid = StaircaseGrid(note.exponent, 2 ** -note.exponent + 1, note.units, Fraction(0))
        return Fraction(2) ** note.exponent * (tail_units(note.scale, grid, 1 - confidence) + Fraction(1, 2))
    if note.kind == "smooth":  # continuous Lap(b), b <= scale: P(|Z| > b ln(1/alpha)) = alpha; then the grid's g/2
        # exact in the scale (a static 2 (hi - lo) / eps may exceed the largest double, review s30d);
        # the double ln(1/alpha) raised by a relative 2^-40 covers its rounding
        factor = Fraction(math.nextafter(math.log(1 / alpha) * (1 + 2**-40), math.inf))
        return note.scale * factor + Fraction(2) ** note.exponent / 2
    if note.kind == "expmech":
        # Dwork & Roth Thm 3.11 (McSherry-Talwar): n exp(-eps c / 2) = beta
        gap = 2 / float(note.scale) * math.log(max(note.entries, 1) / alpha)
        return Fraction(math.nextafter(max(gap, 0.0), math.inf))
    g = Fraction(2) ** note.exponent
    # Laplace: Dwork & Roth Thm 3.8, discrete form; Gaussian: CKS 2020, the tail bound (module note)
    k = dlap_units(note.units, alpha) if note.kind == "laplace" else dgauss_units(note.units, alpha)
    return g * (k + Fraction(1, 2))  # the rounding to the grid moves x by at most g/2


def textbook_half_width(note: NoiseNote, confidence: Fraction) -> float:
    """The continuous noise's half-width (for comparison): b ln(1/alpha) for
    Laplace (Dwork & Roth Thm 3.8), sigma Phi^-1(1 - alpha/2) for the Gaussian."""
    alpha = float(1 - confidence)
    try:
        return _textbook(note, confidence, alpha)
    except OverflowError:  # a scale beyond the largest double (review s30d): so is the half-width
        return math.inf


def _textbook(note: NoiseNote, confidence: Fraction, alpha: float) -> float:
    if note.kind == "geometric":
        return math.log(1 / alpha) / float(note.scale)
    if note.kind == "staircase":
        from fuzzpy.runtime.staircase import continuous_half_width

        return continuous_half_width(note.scale, note.units * Fraction(2) ** note.exponent, 1 - confidence)
    if note.kind in ("laplace", "smooth"):
        return float(note.scale) * math.log(1 / alpha)
    return float(note.scale) * NormalDist().inv_cdf(1 - alpha / 2)


# ---------------------------------------------------------------- noise for an accuracy

#: the noise kinds `noise_for_accuracy` solves for, and their parameter's name
PARAMETERS = {"laplace": "eps", "gauss": "sigma", "geometric": "eps", "dgauss": "sigma"}
_DIGITS = 6
_SEARCH_STEPS = 80


@dataclass(frozen=True)
class NoiseChoice:
    """The noise a program writes (`laplace[eps]`, `gauss[sigma]`,
    `geometric[eps]`, `dgauss[sigma]`: ``parameter``, 6 significant digits)
    whose interval at ``confidence`` is +/- ``half_width`` <= the asked
    accuracy, exactly as `half_width` states it for a scalar release."""

    kind: str
    parameter: Fraction
    half_width: Fraction
    confidence: Fraction


def scalar_note(kind: str, parameter: Fraction) -> NoiseNote:
    """The note of one scalar release `kind[parameter]` (as `run` records it)."""
    if kind == "laplace":
        from fuzzpy.runtime.noise import laplace_grid

        e, t = laplace_grid(1 / parameter, 1)
        return NoiseNote(kind, 1 / parameter, 1, e, t)
    if kind == "gauss":
        from fuzzpy.runtime.noise import gauss_grid

        e, units = gauss_grid(parameter, 1)
        return NoiseNote(kind, parameter, 1, e, units)
    return NoiseNote(kind, parameter, 1)


def noise_for_accuracy(kind: str, accuracy: Fraction, confidence: Fraction) -> NoiseChoice:
    """The most private noise of ``kind`` whose stated interval is within
    +/- ``accuracy`` at ``confidence``: the least eps (laplace, geometric)
    or the largest sigma (gauss, dgauss), found by bisection on the exact
    interval, then written with 6 significant digits rounded toward a
    narrower interval (eps up, sigma down) and checked again at that value,
    so that the printed parameter itself achieves the accuracy. ValueError
    for an accuracy or confidence out of range, or when the search finds no
    such noise."""
    if kind not in PARAMETERS:
        raise ValueError(f"no accuracy rule for {kind!r}")
    if accuracy <= 0 or not 0 < confidence < 1:
        raise ValueError("the accuracy must be positive and the confidence in (0, 1)")
    by_eps = PARAMETERS[kind] == "eps"

    def fits(p: Fraction) -> bool:
        return half_width(scalar_note(kind, p), confidence) <= accuracy

    guess = _continuous_guess(kind, float(accuracy), float(1 - confidence))
    lo, hi = guess / 4, guess * 4  # in the parameter; fits is monotone in it
    for _ in range(200):  # widen until the bracket holds the boundary
        if by_eps and not fits(_as_fraction(hi)):
            hi *= 4
        elif not by_eps and not fits(_as_fraction(lo)):
            lo /= 4
            if lo < 1e-300:
                raise ValueError(f"no {kind} noise gives +/- {accuracy} at this confidence")
        else:
            break
    for _ in range(_SEARCH_STEPS):
        middle = math.sqrt(lo * hi)
        ok = fits(_as_fraction(middle))
        if by_eps:
            lo, hi = (lo, middle) if ok else (middle, hi)
        else:
            lo, hi = (middle, hi) if ok else (lo, middle)
    found = hi if by_eps else lo
    printed = _decimal(found, up=by_eps)
    while not fits(printed):  # one unit of the last digit at a time, toward less noise
        printed = _decimal_step(printed, up=by_eps)
    return NoiseChoice(kind, printed, half_width(scalar_note(kind, printed), confidence), confidence)


def _continuous_guess(kind: str, x: float, alpha: float) -> float:
    if kind in ("laplace", "geometric"):
        return math.log(1 / alpha) / x  # eps with b ln(1/alpha) = x
    return x / NormalDist().inv_cdf(1 - alpha / 2)


def _as_fraction(value: float) -> Fraction:
    return Fraction(repr(value))


def _decimal(value: float, up: bool) -> Fraction:
    """``value`` with 6 significant digits, rounded up or down."""
    exponent = math.floor(math.log10(value)) - (_DIGITS - 1)
    unit = Fraction(10) ** exponent
    scaled = Fraction(repr(value)) / unit
    whole = math.ceil(scaled) if up else math.floor(scaled)
    return max(whole, 1) * unit


def _decimal_step(value: Fraction, up: bool) -> Fraction:
    exponent = math.floor(math.log10(value)) - (_DIGITS - 1)
    unit = Fraction(10) ** exponent
    stepped = value + unit if up else value - unit
    if stepped <= 0:
        raise ValueError("no noise parameter of 6 digits achieves this accuracy")
    return stepped
