"""Exact hockey-stick curves in mpmath.

Every privacy loss here is that of the worst-case (dominating) pair of the
mechanism, under the first distribution P; delta(eps) = E_P[(1 - e^{eps - S})_+]
plus the mass at +inf, for S the sum of the independent losses.

* Gaussian, mu = s/sigma: S ~ N(mu^2/2, mu^2), so
  delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) for every real
  eps (Balle & Wang 2018, Thm 8); Gaussians add their mu^2.
* Pure eps-DP: randomized response, loss +eps w.p. e^eps/(1+e^eps), else -eps
  (Kairouz, Oh & Viswanath 2015); Poisson subsampling at rate q maps a loss l
  to log(1 - q + q e^l) under removal, the other pair to -log(1 - q + q e^l)
  (Zhu, Dong & Wang 2022). Compositions are enumerated.
* Laplace, eps0 = s/b: atoms at +eps0 (mass 1/2) and -eps0 (mass e^{-eps0}/2),
  density e^{(l - eps0)/2}/4 on (-eps0, eps0). A sum of J density draws has
  density e^{(s - J eps0)/2}/4^J times the volume g_J(s) of
  {v in (-eps0, eps0)^J : sum v = s}, and the integrals of e^{+-s/2} g_J above
  a threshold are alternating sums of Gamma tails (inclusion-exclusion over
  the box), computed at a precision that absorbs the cancellation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache, lru_cache

import mpmath as mp

DPS = 50


def mpf(x: Fraction | float | int) -> mp.mpf:
    if isinstance(x, Fraction):
        return mp.mpf(x.numerator) / x.denominator
    return mp.mpf(x)


# ---------------------------------------------------------------- discrete losses

Discrete = list[tuple[mp.mpf, mp.mpf]]  # (loss, P-mass)


def randomized_response(epsilon: Fraction, count: int) -> Discrete:
    """k-fold randomized response: loss (k - 2j) eps w.p. C(k,j) p^{k-j} (1-p)^j."""
    e = mpf(epsilon)
    p = mp.exp(e) / (1 + mp.exp(e))
    return [
        ((count - 2 * j) * e, mp.binomial(count, j) * p ** (count - j) * (1 - p) ** j)
        for j in range(count + 1)
    ]


def subsampled_response(epsilon: Fraction, rate: Fraction, count: int, remove: bool) -> Discrete:
    """k-fold Poisson-subsampled randomized response, one direction."""
    e, q = mpf(epsilon), mpf(rate)
    p = mp.exp(e) / (1 + mp.exp(e))
    high, low = mp.log(1 - q + q * mp.exp(e)), mp.log(1 - q + q * mp.exp(-e))
    if remove:  # P = (1-q) P0 + q P1: "+" has P1-probability p, P0-probability 1 - p
        p_high = (1 - q) * (1 - p) + q * p
    else:  # P = P0, and the loss is negated
        p_high, high, low = 1 - p, -high, -low
    return [
        (
            j * high + (count - j) * low,
            mp.binomial(count, j) * p_high**j * (1 - p_high) ** (count - j),
        )
        for j in range(count + 1)
    ]


def convolve(a: Discrete, b: Discrete) -> Discrete:
    merged: dict[str, tuple[mp.mpf, mp.mpf]] = {}
    for la, pa in a:
        for lb, pb in b:
            loss = la + lb
            key = mp.nstr(loss, 30)
            old = merged.get(key)
            merged[key] = (loss, pb * pa + (old[1] if old else 0))
    return list(merged.values())


def discrete_delta(points: Discrete, epsilon: mp.mpf, infinity: float = 0.0) -> mp.mpf:
    return infinity + mp.fsum(p * (1 - mp.exp(epsilon - x)) for x, p in points if x > epsilon)


# ---------------------------------------------------------------- Gaussian


def gaussian_delta(mu: mp.mpf, epsilon: mp.mpf) -> mp.mpf:
    if mu == 0:
        return mp.mpf(1) if epsilon < 0 else mp.mpf(0)  # a point mass at loss 0
    return mp.ncdf(mu / 2 - epsilon / mu) - mp.exp(epsilon) * mp.ncdf(-mu / 2 - epsilon / mu)


def gaussian_mixture_delta(mu: mp.mpf, points: Discrete, epsilon: mp.mpf) -> mp.mpf:
    """A Gaussian composed with a discrete loss: E over the discrete part."""
    return mp.fsum(p * gaussian_delta(mu, epsilon - x) for x, p in points)


# ---------------------------------------------------------------- Laplace


@lru_cache(maxsize=64)
def _gamma_tails(j_max: int, x: mp.mpf) -> tuple[mp.mpf, ...]:
    """Q(J, x) = e^{-x} sum_{r<J} x^r/r! for J = 0..j_max (x >= 0)."""
    tails = [mp.mpf(0)]
    term, total = mp.mpf(1), mp.mpf(0)
    for r in range(j_max):
        total += term
        tails.append(total)
        term = term * x / (r + 1)
    scale = mp.exp(-x)
    return tuple(t * scale for t in tails)


class LaplaceComposition:
    """delta(eps) of the k-fold Laplace mechanism (module docstring)."""

    def __init__(self, epsilon0: Fraction, count: int) -> None:
        self.count = count
        self.dps = DPS + int(0.7 * count) + 20
        with mp.workdps(self.dps):
            self.e0 = mpf(epsilon0)
            self.w = 2 * self.e0
            self.weights = self._weights()

    def _weights(self) -> dict[tuple[int, int], mp.mpf]:
        """W(J, m) = sum over A - B = m, A + B = k - J of the multinomial
        probabilities of A upper atoms, B lower ones and J density draws, with
        the density's constant 1/4^J e^{-J eps0/2} folded in."""
        k, e0 = self.count, self.e0
        up, down = mp.mpf(1) / 2, mp.exp(-e0) / 2
        density = mp.exp(-e0 / 2) / 4
        weights: dict[tuple[int, int], mp.mpf] = {}
        for j in range(k + 1):
            for a in range(k - j + 1):
                b = k - j - a
                coefficient = mp.factorial(k) / (
                    mp.factorial(a) * mp.factorial(b) * mp.factorial(j)
                )
                key = (j, a - b)
                weights[key] = weights.get(key, 0) + coefficient * up**a * down**b * density**j
        return weights

    def _box_lower(self, j: int, threshold: mp.mpf) -> mp.mpf:
        """I_J(-1/2, T) = int over (0, w)^J of e^{-sum/2} [sum > T]."""
        total = mp.mpf(0)
        for i, factor in enumerate(self._factors(j)):
            x = max(threshold - i * self.w, 0) / 2
            total += factor * _gamma_tails(j, x)[j]
        return total

    @cache  # noqa: B019 - a handful of instances
    def _factors(self, j: int) -> tuple[mp.mpf, ...]:
        """(-1)^i C(J, i) e^{-i w/2} 2^J for i = 0..J."""
        return tuple(
            (-1) ** i * mp.binomial(j, i) * mp.exp(-i * self.w / 2) * 2**j for i in range(j + 1)
        )

    def _box_upper(self, j: int, threshold: mp.mpf) -> mp.mpf:
        """I_J(+1/2, T), by y -> w - y."""
        whole = (2 * (1 - mp.exp(-self.w / 2))) ** j
        return mp.exp(j * self.w / 2) * (whole - self._box_lower(j, j * self.w - threshold))

    def delta(self, epsilon: mp.mpf, shifts: Discrete | None = None) -> mp.mpf:
        """delta(eps) of the composition with a discrete loss (``shifts``)."""
        shifts = shifts if shifts is not None else [(mp.mpf(0), mp.mpf(1))]
        with mp.workdps(self.dps):
            total = mp.mpf(0)
            for (j, m), weight in self.weights.items():
                for shift, mass in shifts:
                    tau = mp.mpf(epsilon) - shift - m * self.e0
                    total += mass * weight * self._inner(j, tau)
            return +total

    def _inner(self, j: int, tau: mp.mpf) -> mp.mpf:
        if j == 0:
            return max(1 - mp.exp(tau), 0)
        threshold = tau + j * self.e0
        upper = mp.exp(-j * self.e0 / 2) * self._box_upper(j, threshold)
        lower = mp.exp(tau) * mp.exp(j * self.e0 / 2) * self._box_lower(j, threshold)
        return upper - lower


def subsampled_laplace_delta(epsilon0: Fraction, rate: Fraction, epsilon: mp.mpf, remove: bool) -> mp.mpf:
    """One Poisson-subsampled Laplace mechanism (scale b = 1/eps0, sensitivity 1),
    one direction, exactly. With f0 = Lap(0, b), f1 = Lap(1, b), the ratio
    f1/f0 = e^{l(x)}, l(x) = (|x| - |x - 1|)/b, is non-decreasing in x, so the
    set where the hockey-stick integrand is positive is a half-line cut at
    the x where l(x) reaches a threshold (Zhu, Dong & Wang 2022 for the pairs):
    removal, P = (1-q) f0 + q f1, Q = f0: delta = q S1(t) - (e^eps - 1 + q) S0(t)
    on x > t with l(t) = log((e^eps - 1 + q)/q); addition, P = f0,
    Q = (1-q) f0 + q f1: delta = (1 - e^eps (1-q)) F0(t) - e^eps q F1(t) on
    x < t with l(t) = log((1 - e^eps (1-q)) / (e^eps q))."""
    b, q, e = 1 / mpf(epsilon0), mpf(rate), mp.exp(epsilon)

    def cut(level: mp.mpf) -> mp.mpf:  # the x in [0, 1] where l(x) = level, clamped
        return min(max((b * level + 1) / 2, mp.mpf(0)), mp.mpf(1))

    def cdf(x: mp.mpf, centre: int) -> mp.mpf:
        y = (x - centre) / b
        return mp.exp(y) / 2 if y <= 0 else 1 - mp.exp(-y) / 2

    if remove:
        level = mp.log((e - 1 + q) / q)
        if level >= 1 / b:
            return mp.mpf(0)
        t = cut(level)
        return max(q * (1 - cdf(t, 1)) - (e - 1 + q) * (1 - cdf(t, 0)), mp.mpf(0))
    if e * (1 - q) >= 1:
        return mp.mpf(0)
    level = mp.log((1 - e * (1 - q)) / (e * q))
    if level <= -1 / b:
        return mp.mpf(0)
    t = cut(level)
    return max((1 - e * (1 - q)) * cdf(t, 0) - e * q * cdf(t, 1), mp.mpf(0))


# ---------------------------------------------------------------- solving for epsilon


def solve_epsilon(
    delta_of: Callable[[mp.mpf], mp.mpf], delta: float, hi: float = 1.0, tolerance: float = 1e-13
) -> tuple[float, float]:
    """(lo, hi): delta_of(hi) <= delta < delta_of(lo) (or lo = hi = 0 when
    delta_of(0) <= delta), hi - lo <= tolerance * max(1, hi); delta_of must
    be non-increasing. Regula falsi (Illinois) on log delta, kept bracketed."""
    target = mp.log(mp.mpf(delta))

    def gap(eps: mp.mpf) -> mp.mpf:
        value = delta_of(eps)
        return (mp.log(value) if value > 0 else mp.mpf(-(10**6))) - target

    lo, g_lo = mp.mpf(0), gap(mp.mpf(0))
    if g_lo <= 0:
        return 0.0, 0.0
    top = mp.mpf(hi)
    g_top = gap(top)
    while g_top > 0:
        lo, g_lo, top = top, g_top, top * 2
        if top > 1e5:
            return float(lo), float("inf")
        g_top = gap(top)
    side = 0
    while top - lo > tolerance * max(1, top):
        mid = (lo * g_top - top * g_lo) / (g_top - g_lo)
        if not lo < mid < top or top - lo > 0.5 * (top + lo) and side == 0:
            mid = (lo + top) / 2
        g_mid = gap(mid)
        if g_mid > 0:
            lo, g_lo = mid, g_mid
            if side == -1:
                g_top /= 2
            side = -1
        else:
            top, g_top = mid, g_mid
            if side == 1:
                g_lo /= 2
            side = 1
    # rounded outwards: lo down, hi up
    return (
        math.nextafter(float(mp.nstr(lo, 20)), -math.inf),
        math.nextafter(float(mp.nstr(top, 20)), math.inf),
    )


def discrete_epsilon(points: Discrete, delta: float, infinity: float = 0.0) -> float:
    """The exact smallest eps >= 0 for a discrete loss (solved on each piece,
    where delta is affine in e^eps)."""
    target = mp.mpf(delta)
    if infinity > target:
        return float("inf")
    ordered = sorted(points, key=lambda lp: lp[0])
    losses = [x for x, _ in ordered]
    masses = [p for _, p in ordered]
    tail, weighted = mp.mpf(0), mp.mpf(0)
    # walk down from the top: for eps in [l_{j-1}, l_j), delta = inf + tail - e^eps weighted
    for index in range(len(losses) - 1, -1, -1):
        tail += masses[index]
        weighted += masses[index] * mp.exp(-losses[index])
        lower = losses[index - 1] if index > 0 else mp.mpf("-inf")
        left = max(lower, mp.mpf(0))
        if left >= losses[index]:
            return 0.0
        if infinity + tail - mp.exp(left) * weighted > target:
            return float(mp.log((infinity + tail - target) / weighted))
        if left == 0:
            return 0.0
    return 0.0


def pure_sum(pairs: Sequence[tuple[Fraction, int]]) -> Fraction:
    return sum((e * n for e, n in pairs), Fraction(0))
