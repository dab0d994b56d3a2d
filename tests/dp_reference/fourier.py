"""Hockey-stick curves of compositions with subsampled Gaussians, by inverting
the moment generating function, in long double.

For a privacy loss S with M(z) = E_P[e^{zS}] finite at z = c > 0,

    delta(eps) = E_P[(1 - e^{eps - S})_+]
               = (1 / 2 pi) int M(c + iu) e^{-(c + iu) eps} / ((c + iu)(c + iu + 1)) du,

since for y = s - eps the inverse Laplace transform of 1/(z(z+1)) along
Re z = c is (1 - e^{-y})_+. The integrand is the Fourier transform of
e^{c eps} delta(eps) (in eps), so the trapezoidal rule with step du sums that
function at eps + m T, T = 2 pi / du (Poisson summation):

    trapezoid = delta(eps) + sum_{m != 0} e^{c m T} delta(eps + m T),

every extra term non-negative: the rule overestimates delta by the aliased
terms, bounded below by e^{-cT}/(1 - e^{-cT}) for m < 0 and Chernoff for m > 0
-- checked here by halving du, as the truncation at |u| = U is by letting the
integrand fall below 1e-30 of its peak.

Each composed mechanism contributes n log M_i(z): the Gaussian (mu) has
log M = z (z + 1) mu^2 / 2; the Poisson-subsampled Gaussian (rate q), with
L(x) = log(1 - q + q e^{mu x - mu^2/2}) on x ~ N(0, 1), has
M(z) = E[e^{(z + 1) L}] under removal and E[e^{-z L}] under addition (Zhu,
Dong & Wang 2022), computed by the trapezoidal rule in x, which converges
geometrically for these analytic, Gaussian-weighted integrands.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

LD = np.longdouble
CLD = np.clongdouble
LogMgf = Callable[[np.ndarray], np.ndarray]  # complex long double z -> log M(z)


def gaussian(mu: float) -> LogMgf:
    m2 = LD(mu) ** 2
    return lambda z: z * (z + 1) * m2 / 2


def randomized_response(epsilon: float) -> LogMgf:
    e = LD(epsilon)
    log_p = -np.log1p(np.exp(-e))
    log_1p = -np.log1p(np.exp(e))
    return lambda z: _rr(z, e, log_p, log_1p)


def _rr(z: np.ndarray, e: LD, log_p: LD, log_1p: LD) -> np.ndarray:
    a = log_p + z * e
    b = log_1p - z * e
    top = np.where(a.real > b.real, a, b)
    return top + np.log(np.exp(a - top) + np.exp(b - top))


@dataclass(frozen=True)
class SubsampledGaussian:
    """log M(z) of the Poisson-subsampled Gaussian's loss, one direction."""

    rate: float
    mu: float
    remove: bool
    step: float = 0.01  # x spacing; the caller halves it to check

    def __call__(self, z: np.ndarray) -> np.ndarray:
        q, mu = LD(self.rate), LD(self.mu)
        z = np.asarray(z, dtype=CLD)
        scale = z + 1 if self.remove else -z  # M = E_{N(0,1)}[e^{scale L}]
        c_max = float(np.max(np.abs(scale.real)))
        x_hi = max(12.0, (c_max * self.mu if self.remove else 0.0) + 14.0)
        x = np.arange(-14.0, x_hi, self.step).astype(LD)
        loss = np.log1p(q * np.expm1(mu * x - mu * mu / 2))
        log_weight = -x * x / 2 - LD(0.5) * np.log(2 * LD(np.pi)) + np.log(LD(self.step))
        out = np.empty(z.shape, dtype=CLD)
        for start in range(0, z.size, 32):
            chunk = scale.ravel()[start : start + 32]
            exponent = log_weight[None, :] + chunk[:, None] * loss[None, :]
            top = np.max(exponent.real, axis=1)
            total = np.sum(np.exp(exponent - top[:, None]), axis=1)
            out.ravel()[start : start + 32] = top + np.log(total)
        return out


    def stream(self, tilt: float, du: float) -> _Stream:
        return _Stream(self, tilt, du)


class _Stream:
    """log M(c + i n du) of a subsampled Gaussian for n = 0, 1, 2, ..., by the
    recurrence e^{i(n+1) du L} = e^{i n du L} e^{i du L}: a product per point
    and step instead of an exponential (the rounding drift, n ulp of long
    double, stays far below what matters)."""

    def __init__(self, pair: SubsampledGaussian, tilt: float, du: float) -> None:
        q, mu = LD(pair.rate), LD(pair.mu)
        real = tilt + 1 if pair.remove else -tilt  # M = E_{N(0,1)}[e^{scale L}]
        x_hi = max(12.0, (real * pair.mu if pair.remove else 0.0) + 14.0)
        x = np.arange(-14.0, x_hi, pair.step).astype(LD)
        loss = np.log1p(q * np.expm1(mu * x - mu * mu / 2))
        log_weight = -x * x / 2 - LD(0.5) * np.log(2 * LD(np.pi)) + np.log(LD(pair.step))
        log_weight = log_weight + LD(real) * loss
        self.top = np.max(log_weight)
        self.current = np.exp(log_weight - self.top).astype(CLD)
        sign = 1 if pair.remove else -1
        self.rotation = np.exp(1j * sign * LD(du) * loss).astype(CLD)

    def take(self, count: int) -> np.ndarray:
        powers = np.empty((count, self.rotation.size), dtype=CLD)
        powers[0] = 1
        np.cumprod(np.broadcast_to(self.rotation, (count - 1, self.rotation.size)), axis=0, out=powers[1:])
        out = (powers * self.current).sum(axis=1)
        self.current = self.current * powers[-1] * self.rotation
        return self.top + np.log(out)


Component = tuple[LogMgf, int]


def log_mgf(components: Sequence[Component], z: np.ndarray) -> np.ndarray:
    total = np.zeros(np.shape(z), dtype=CLD)
    for fn, count in components:
        total = total + count * fn(z)
    return total


def _best_tilt(components: Sequence[Component], epsilon: float) -> float:
    """The c minimising the integrand at u = 0 (least cancellation). Only a
    choice of contour (the agreement of two settings checks the result), so
    the subsampled Gaussians' quadrature runs at a coarser step here."""
    grid = np.geomspace(1e-3, 500, 100)
    coarse = [
        (dataclasses.replace(fn, step=0.05) if isinstance(fn, SubsampledGaussian) else fn, n)
        for fn, n in components
    ]
    values = log_mgf(coarse, grid.astype(CLD)).real - grid * epsilon - np.log(grid * (grid + 1))
    finite = np.isfinite(values)
    return float(grid[finite][int(np.argmin(values[finite]))])


def delta(
    components: Sequence[Component], epsilon: float, du: float, tilt: float | None = None
) -> float:
    """The trapezoidal rule for delta(eps) with step du (module docstring)."""
    c = tilt if tilt is not None else _best_tilt(components, epsilon)
    e = LD(epsilon)
    total = LD(0)
    peak = None
    n = 0
    quiet = 0
    while quiet < 3:
        u = (np.arange(n, n + 64) * du).astype(LD)
        z = (LD(c) + 1j * u).astype(CLD)
        values = np.exp(log_mgf(components, z) - z * e) / (z * (z + 1))
        weights = np.ones(64, dtype=LD)
        if n == 0:
            weights[0] = LD(0.5)
        total += np.sum((values * weights).real)
        size = float(np.max(np.abs(values)))
        peak = size if peak is None else max(peak, size)
        quiet = quiet + 1 if size < 1e-32 * peak else 0
        n += 64
        if n > 200_000:
            raise RuntimeError("the integrand does not decay")
    return float(total * LD(du) / LD(math.pi))


def alias_period(components: Sequence[Component], epsilon: float) -> float:
    """A period T = 2 pi / du at which the aliased terms are negligible: the
    lower ones are below e^{-cT}, the upper ones below Chernoff's bound."""
    c = _best_tilt(components, epsilon)
    return max(80.0 / c, 10.0)


def subsampled_response(rate: float, epsilon: float, remove: bool) -> LogMgf:
    """Poisson-subsampled randomized response: a two-point loss (`exact`)."""
    q, e = LD(rate), LD(epsilon)
    p = 1 / (1 + np.exp(-e))
    high, low = np.log1p(q * np.expm1(e)), np.log1p(q * np.expm1(-e))
    p_high = (1 - q) * (1 - p) + q * p if remove else 1 - p
    if not remove:
        high, low = -high, -low
    log_a, log_b = np.log(p_high), np.log1p(-p_high)
    return lambda z: _rr_pair(np.asarray(z, dtype=CLD), log_a, high, log_b, low)


def _rr_pair(z: np.ndarray, log_a: LD, high: LD, log_b: LD, low: LD) -> np.ndarray:
    a = log_a + z * high
    b = log_b + z * low
    top = np.where(a.real > b.real, a, b)
    return top + np.log(np.exp(a - top) + np.exp(b - top))


def converged_delta(components: Sequence[Component], epsilon: float) -> float:
    """delta(eps) by the trapezoidal rule at two tilts and periods (the tilt
    halved and a third of the least-cancelling one, the period 80/c and
    twice that); the smaller (aliasing only adds), after checking that they
    agree to 1e-7."""
    best = _best_tilt(components, epsilon)
    values = []
    for c, scale in ((best / 2, 1.0), (best / 3, 2.0)):
        period = max(80.0 / c, 20.0) * scale
        values.append(delta(components, epsilon, 2 * math.pi / period, tilt=c))
    low, high = min(values), max(values)
    if high < 1e-40:  # far below any delta asked for: zero, up to rounding
        return max(high, 0.0)
    if high - low > 1e-7 * high:
        raise RuntimeError(f"the inversion did not converge: {values}")
    return low


class Inversion:
    """The trapezoidal rule at a fixed tilt c and period T, with the values of
    log M(c + iu) on its grid computed once: delta(eps) for many eps."""

    def __init__(self, components: Sequence[Component], tilt: float, period: float) -> None:
        self.c = tilt
        self.du = 2 * math.pi / period
        streams = [
            (fn.stream(tilt, self.du) if hasattr(fn, "stream") else None, fn, count)
            for fn, count in components
        ]
        values, n, quiet, peak = [], 0, 0, 0.0
        while quiet < 3:
            u = (np.arange(n, n + 64) * self.du).astype(LD)
            z = (LD(tilt) + 1j * u).astype(CLD)
            chunk = np.zeros(64, dtype=CLD)
            for stream, fn, count in streams:
                chunk += count * (stream.take(64) if stream is not None else fn(z))
            values.append(chunk)
            size = float(np.max(chunk.real))
            peak = size if n == 0 else max(peak, size)
            quiet = quiet + 1 if size < peak - 80 else 0  # e^-80 of the peak
            n += 64
            if n > 400_000:
                raise RuntimeError("the integrand does not decay")
        self.log_mgf = np.concatenate(values)
        self.z = (LD(tilt) + 1j * (np.arange(self.log_mgf.size) * self.du).astype(LD)).astype(CLD)

    def delta(self, epsilon: float) -> float:
        e = LD(epsilon)
        values = np.exp(self.log_mgf - self.z * e) / (self.z * (self.z + 1))
        weights = np.ones(values.size, dtype=LD)
        weights[0] = LD(0.5)
        return float(np.sum((values * weights).real) * LD(self.du) / LD(math.pi))


def inversions(components: Sequence[Component], epsilon_hint: float) -> list[Inversion]:
    """The two settings of `converged_delta`, for answers near epsilon_hint."""
    best = _best_tilt(components, epsilon_hint)
    return [
        Inversion(components, c, max(80.0 / c, 20.0) * scale)
        for c, scale in ((best / 2, 1.0), (best / 3, 2.0))
    ]
