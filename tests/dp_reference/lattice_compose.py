"""k-fold composition of lattice measures in float, with proven bounds
(the second half of `rigorous`).

A measure m on the lattice h Z is carried exponentially tilted, as
tau(l) = m(l) e^{t l} = v[i] 2^scale at l = (first + i) h: tilting commutes
with convolution, and puts the mass that decides delta(eps) near eps in the
bulk, where the FFT's absolute error is small beside it. Blocks of 2^j steps
come from repeated squaring; each is cut to a window holding all but TRIM
of its tilted mass on either side (`rigorous` module docstring: the cut is
dropped on the lower side and bounded on the upper side).

`epsilon_lower` and `epsilon_upper` give the proven ends of a reference.
The upper side moves one step's upper tail of mass <= 1e-6 delta / k to
+infinity (raising a loss only raises delta; the union bound charges k times
that mass) so that the tilt puts the bulk near eps, not in the heavy tail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mpmath as mp
import numpy as np

from dp_reference import safe_fft
from dp_reference.rigorous import TRIM, Lattice

LN2 = math.log(2)


@dataclass
class Tilted:
    v: np.ndarray
    first: int
    scale: int  # tilted mass at (first + i) h is v[i] 2^scale


@dataclass
class Composed:
    """The k-fold measure of one side, tilted, and the upper side's cut terms."""

    upper: bool
    h: float
    t: float
    k: int
    measure: Tilted
    cuts: list = field(default_factory=list)  # (multiplicity, steps in block, tilted mass, scale)
    log_mgf: float = 0.0  # log M(t) of one step (upper bound), for the cuts' Chernoff terms
    infinity: float = 0.0  # one step's mass at +infinity


def _normalised(v: np.ndarray, scale: int, upper: bool) -> Tilted:
    """v 2^scale with max(v) in [1/2, 1): an exact power-of-two rescaling,
    entries below TINY * max lifted to 2 TINY (upper) or dropped (lower)."""
    top = float(np.max(v))
    if top == 0:
        return Tilted(v, 0, scale)
    _, exponent = math.frexp(top)
    small = v < safe_fft.TINY * top
    v = np.where(small, 2 * safe_fft.TINY * top if upper else 0.0, v) if np.any(small) else v
    if upper:
        v = np.where(v > 0, v, 0.0)
    return Tilted(np.ldexp(v, -exponent), 0, scale + exponent)


def tilt(lattice: Lattice, t: float, upper: bool) -> tuple[Tilted, float]:
    """The tilted lattice measure, rounded outward, and log of its total (upper)."""
    n = lattice.mass.size
    mantissas, exponents, bound = safe_fft.tilt_factors(t, lattice.h, lattice.first, n)
    product = lattice.mass * mantissas  # relative error <= bound + u
    top = int(np.max(exponents[product > 0]))
    v = np.ldexp(product, exponents - top)
    slack = 2 * (bound + safe_fft.U)
    v = np.nextafter(v * (1 + slack), np.inf) if upper else np.nextafter(v * (1 - slack), 0.0)
    v = np.where(product > 0, v, 0.0)
    if upper:  # whatever fell below the float range (ldexp to a subnormal) is lifted
        v = np.where((product > 0) & (v < 2.0**-1020), 2.0**-1020, v)
    else:  # and dropped from the lower side (a subnormal may have rounded up)
        v = np.where(v < 2.0**-1020, 0.0, v)
    shaped = _normalised(v, top, upper)
    total = float(np.sum(shaped.v)) * (1 + 1e-8)
    shaped.first = lattice.first
    return shaped, math.log(total) + shaped.scale * LN2


def _trim(block: Tilted, upper: bool):
    """The window, and (upper) the tilted mass cut on either side of it."""
    v = block.v
    total = float(np.sum(v))
    left = np.cumsum(v)
    right = np.cumsum(v[::-1])[::-1]
    start = int(np.searchsorted(left, TRIM * total, side="right"))
    stop = v.size - int(np.searchsorted(right[::-1], TRIM * total, side="right"))
    start, stop = min(start, stop - 1), max(stop, start + 1)
    kept = Tilted(v[start:stop], block.first + start, block.scale)
    below = float(left[start - 1]) if start > 0 else 0.0
    above = float(right[stop]) if stop < v.size else 0.0
    cut = (below + above) * (1 + 1e-8) if upper else None
    return kept, cut


def _convolve(a: Tilted, b: Tilted, upper: bool) -> Tilted:
    product = safe_fft.convolve(a.v, b.v if b is not a else a.v, upper)
    shaped = _normalised(product, a.scale + b.scale, upper)
    shaped.first = a.first + b.first
    return shaped


def compose(lattice: Lattice, k: int, t: float, upper: bool) -> Composed:
    """The k-fold composition of the lattice measure, tilted by t."""
    single, log_mgf = tilt(lattice, t, upper)
    out = Composed(upper, lattice.h, t, k, single, log_mgf=log_mgf, infinity=lattice.infinity)

    def cut(block: Tilted, multiplicity: int, steps: int) -> Tilted:
        kept, mass = _trim(block, upper)
        if mass:
            out.cuts.append((multiplicity, steps, mass, block.scale))
        return kept

    power, result, result_steps, j = cut(single, k, 1), None, 0, 0
    while True:
        if (k >> j) & 1:
            if result is None:
                result, result_steps = power, 1 << j
            else:
                result_steps += 1 << j
                result = cut(_convolve(result, power, upper), 1, result_steps)
        if k >> (j + 1) == 0:
            break
        power = cut(_convolve(power, power, upper), k >> (j + 1), 1 << (j + 1))
        j += 1
    out.measure = result
    return out


class Curve:
    """delta(eps) of a composed side: exact sums of float terms with their
    rounding bounded, plus (upper) the cut terms and k times the mass at
    infinity (union bound)."""

    def __init__(self, composed: Composed) -> None:
        self.c = composed
        m = composed.measure
        n = m.v.size
        # e^{-t l} and e^{-l} on the window, as float mantissas with exponents
        self.weight_m, self.weight_e, self.weight_b = safe_fft.tilt_factors(
            -composed.t, composed.h, m.first, n
        )
        self.inv_m, self.inv_e, self.inv_b = safe_fft.tilt_factors(-1.0, composed.h, m.first, n)
        self.losses = (m.first + np.arange(n)) * composed.h
        with mp.workdps(30):
            self.infinity = composed.k * mp.mpf(composed.infinity)  # union bound over the steps
            self.cut_mass = mp.fsum(
                mult * mp.mpf(mass) * mp.mpf(2) ** scale * mp.exp((composed.k - steps) * mp.mpf(composed.log_mgf))
                for mult, steps, mass, scale in composed.cuts
            )

    def delta(self, eps: float) -> mp.mpf:
        c, m = self.c, self.c.measure
        upper = c.upper
        with mp.workdps(30):
            e_eps = mp.exp(mp.mpf(eps))
            inverse = np.ldexp(self.inv_m, self.inv_e)  # normal floats: exact
            lo_hi = float(e_eps) * inverse
            rel = self.inv_b + 4 * safe_fft.U
            w = lo_hi * (1 - 2 * rel) if upper else lo_hi * (1 + 2 * rel)
            f = 1 - w
            f = np.nextafter(f, np.inf) if upper else np.nextafter(f, -np.inf)
            f = np.clip(f, 0.0, 1.0)
            if not upper:
                f = np.where(self.losses > eps, f, 0.0)
            exponents = self.weight_e + m.scale
            reference = int(np.max(exponents))
            terms = m.v * self.weight_m * f  # relative error: weight_b + 3u
            scaled = np.ldexp(terms, exponents - reference)
            slack = self.weight_b + 4 * safe_fft.U
            if upper:
                scaled = np.where(terms > 0, np.maximum(scaled * (1 + 2 * slack), 2.0**-1020), 0.0)
                total = mp.mpf(float(np.sum(scaled))) * (1 + mp.mpf(1e-8))
            else:
                scaled = np.where(scaled < 2.0**-1020, 0.0, scaled * (1 - 2 * slack))
                total = mp.mpf(float(np.sum(scaled))) * (1 - mp.mpf(1e-8))
            value = total * mp.mpf(2) ** reference
            if upper:
                value += self.infinity + mp.exp(-mp.mpf(c.t) * mp.mpf(eps)) * self.cut_mass
            return value


def choose_tilt(lattice: Lattice, k: int, eps: float) -> float:
    """The t minimising Chernoff's k log M(t) - t eps - log t (a choice of
    tilt only: the bounds hold at any t >= 0)."""
    keep = lattice.mass > 0
    log_mass = np.log(lattice.mass[keep])
    losses = (lattice.first + np.nonzero(keep)[0]) * lattice.h
    best, best_t = math.inf, 1.0
    for t in np.geomspace(1e-2, 2e3, 400):
        exponent = log_mass + t * losses
        top = float(np.max(exponent))
        value = k * (top + math.log(float(np.sum(np.exp(exponent - top))))) - t * eps - math.log(t)
        if value < best:
            best, best_t = value, float(t)
    return best_t


def epsilon_lower(lowers: list[Lattice], k: int, delta: float, hint: float) -> float:
    """A proven lower end for the exact epsilon at delta of the k-fold
    composition, given per direction one step's lower lattice measure:
    the largest eps found (to a relative 1e-11) with delta_lo(eps) > delta.
    (The tilt is chosen from the same measures; any tilt is valid.)"""
    curves = [_curve(_capped(lower, 1e-6 * delta / k), k, hint, upper=False) for lower in lowers]
    return _boundary(lambda e: max(c.delta(e) for c in curves) > delta, hint)[0]


def epsilon_upper(uppers: list[Lattice], k: int, delta: float, hint: float) -> float:
    """A proven upper end for the exact epsilon at delta of the k-fold
    composition, given per direction one step's upper lattice measure: the
    least eps found (to a relative 1e-11) with delta_hi(eps) <= delta."""
    curves = [_curve(_tail_to_infinity(upper, 1e-6 * delta / k), k, hint, upper=True) for upper in uppers]
    return _boundary(lambda e: max(c.delta(e) for c in curves) > delta, hint)[1]


def _curve(lattice: Lattice, k: int, hint: float, upper: bool) -> Curve:
    """One direction's k-fold delta curve, tilted for ``hint``."""
    return Curve(compose(lattice, k, choose_tilt(lattice, k, hint), upper=upper))


def _tail_to_infinity(lattice: Lattice, tail: float) -> Lattice:
    """The upper measure with its upper tail of mass <= ``tail`` moved to
    +infinity. delta_k(eps) = E[F(L_1, ..., L_k)] with F = (1 - e^{eps - sum})_+
    non-decreasing in each L_i, so raising losses (a monotone coupling of
    independent steps) only raises it; it spares tilting a heavy tail into
    the window, and costs at most k * tail of delta (union bound: `Curve`)."""
    above = np.cumsum(lattice.mass[::-1])[::-1] * (1 + 1e-8)  # >= mass at index >= i
    keep = max(int(np.searchsorted(-above, -tail, side="left")), 1)
    moved = float(above[keep]) if keep < lattice.mass.size else 0.0
    return Lattice(lattice.h, lattice.first, lattice.mass[:keep].copy(), lattice.infinity + moved)


def _capped(lattice: Lattice, tail: float) -> Lattice:
    """The lower measure without its upper tail of mass <= ``tail`` (dropping
    mass only lowers delta; it spares tilting a heavy tail into the window:
    k steps lose at most k * tail of delta)."""
    above = np.cumsum(lattice.mass[::-1])[::-1]  # mass at index >= i
    keep = int(np.searchsorted(-above, -tail, side="left"))  # first i with above[i] <= tail
    keep = max(keep, 1)
    return Lattice(lattice.h, lattice.first, lattice.mass[:keep].copy())


def _boundary(above, hint: float) -> tuple[float, float]:
    """(a, b), b - a <= 1e-11 b, with above(a) and not above(b) (a = 0 when
    not above(0)); above is non-increasing in eps."""
    step = max(1e-3 * hint, 1e-9)
    a, b = max(hint - step, 0.0), hint + step
    while above(b):
        a, b, step = b, b + 4 * step, 4 * step
    while a > 0 and not above(a):
        b, step = a, 4 * step
        a = max(a - step, 0.0)
    if a == 0 and not above(0.0):
        return 0.0, 0.0
    while b - a > 1e-11 * b:
        middle = (a + b) / 2
        if above(middle):
            a = middle
        else:
            b = middle
    return a, b
