"""Privacy loss distributions: pessimistic discretisation, FFT composition.

Each atom's dominating pair (`pld_pairs`) is discretised on the grid
{i * interval}: the probability mass of the loss in each cell [l_{j-1}, l_j]
is split between the two end points so as to keep both its P-mass and its
Q-mass (the mean of e^{-L}). Since (1 - t e^{-L})_+ is convex in e^{-L},
this mean-preserving spread can only increase every hockey-stick divergence,
so the discrete pair dominates the original: it is the "connect the dots"
discretisation of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022.
Mass below the grid is moved up to its first point, mass above it to +inf
(both pessimistic).

Composition multiplies Fourier transforms (Koskela, Jalko & Honkela 2020).
The composed loss is kept on a window whose upper end bounds the mass above
it by Chernoff's inequality, computed from the discretised distributions'
moment generating functions; that bound is added to delta. Mass that wraps
around the circular convolution only adds to the window, which can only
increase delta. Rounding in the transforms is ~1e-16 per cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import fft

from fuzzpy.accounting import discrete
from fuzzpy.accounting.atoms import (
    ApproxAtom,
    Atoms,
    GaussianAtom,
    LaplaceAtom,
    PureAtom,
    SubsampledAtom,
)
from fuzzpy.accounting.pld_pairs import (
    BasePair,
    GaussianPair,
    LaplacePair,
    LossTails,
    RandomizedResponsePair,
)

DEFAULT_INTERVAL = 1e-4  # the coarsest grid chosen by default (dp-accounting's default)
MIN_INTERVAL = 1e-6
TARGET_POINTS = 1 << 19  # default grid: about this many points in the composed window
MAX_POINTS = 1 << 21
TAIL_BOUND = 1e-18  # mass allowed above the composed window (added to delta)
_CHERNOFF_ORDERS = np.array([0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0])


@dataclass(frozen=True)
class DiscretePLD:
    """Masses at losses (offset + i) * interval, and mass at +infinity."""

    interval: float
    offset: int
    probs: np.ndarray
    infinity_mass: float

    def log_mgf(self, orders: np.ndarray) -> np.ndarray:
        """log E[e^{t L}; L finite] for each t in ``orders``."""
        losses = (self.offset + np.arange(self.probs.size)) * self.interval
        with np.errstate(divide="ignore"):
            log_probs = np.log(self.probs)
        result = np.empty(len(orders))
        for i, t in enumerate(orders):
            exponent = log_probs + t * losses
            top = float(np.max(exponent))
            result[i] = top + math.log(float(np.sum(np.exp(exponent - top))))
        return result

    def as_composed(self) -> ComposedPLD:
        losses = (self.offset + np.arange(self.probs.size)) * self.interval
        return ComposedPLD(losses, self.probs, self.infinity_mass)


@lru_cache(maxsize=512)
def discretise(tails: LossTails, interval: float) -> DiscretePLD:
    lo, hi = tails.loss_range()
    first = math.floor(lo / interval)
    last = math.ceil(hi / interval) + 1  # strictly above the largest finite loss
    nodes = np.arange(first, last + 1) * interval
    p_sf, p_cdf, q_sf, q_cdf = tails.tails(nodes)
    cell_p = _cell_masses(p_sf, p_cdf)
    cell_q = _cell_masses(q_sf, q_cdf)
    # the share y of a cell's P-mass moved to its upper end keeps the Q-mass:
    # y e^{-l_j} + (a - y) e^{-l_{j-1}} = b  <=>  y = (a - b e^{l_{j-1}}) / (1 - e^{-interval})
    # (b e^{l} in log space; where rounding leaves it undefined, all the mass
    # goes up, which is pessimistic)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        q_scaled = np.exp(np.log(cell_q) + nodes[:-1])
        upper = (cell_p - q_scaled) / -math.expm1(-interval)
    upper = np.clip(np.where(np.isfinite(upper), upper, cell_p), 0.0, cell_p)
    probs = np.zeros(nodes.size)
    probs[:-1] += cell_p - upper
    probs[1:] += upper
    probs[0] += max(float(p_cdf[0]), 0.0)  # below the grid: moved up to its first point
    start, kept = _trim(probs)
    return DiscretePLD(interval, first + start, kept, float(max(p_sf[-1], 0.0)))


def _cell_masses(sf: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """Mass of each cell between consecutive nodes, from whichever tail is small."""
    from_sf = sf[:-1] - sf[1:]
    from_cdf = cdf[1:] - cdf[:-1]
    return np.clip(np.where(sf[:-1] < 0.5, from_sf, from_cdf), 0.0, None)


def _trim(probs: np.ndarray) -> tuple[int, np.ndarray]:
    nonzero = np.flatnonzero(probs > 0)
    if nonzero.size == 0:
        return 0, probs[:1]
    return int(nonzero[0]), probs[nonzero[0] : nonzero[-1] + 1]


# ---------------------------------------------------------------- atoms to pairs


def _base_pair(atom: GaussianAtom | LaplaceAtom | PureAtom | ApproxAtom) -> BasePair:
    if isinstance(atom, GaussianAtom):
        return GaussianPair(atom.mu)
    if isinstance(atom, LaplaceAtom):
        return LaplacePair(float(atom.epsilon))
    if isinstance(atom, PureAtom):
        return RandomizedResponsePair(float(atom.epsilon))
    return RandomizedResponsePair(float(atom.epsilon), float(atom.delta))


def directions(atoms: Atoms) -> list[list[tuple[LossTails, int]]]:
    """The atoms' loss tails for the removal and (if any atom is asymmetric)
    the addition direction. A neighbouring pair is one or the other for every
    mechanism at once, so each direction composes on its own and the larger
    epsilon is the answer. Gaussians merge exactly into one (`atoms` docstring)."""
    remove: list[tuple[LossTails, int]] = []
    add: list[tuple[LossTails, int]] = []
    rho = sum((a.rho * n for a, n in atoms.items() if isinstance(a, GaussianAtom)), 0)
    if rho > 0:
        remove.append((LossTails(GaussianPair(math.sqrt(2 * rho)), 1.0, True), 1))
    for atom, n in atoms.items():
        if isinstance(atom, SubsampledAtom):
            base, q = _base_pair(atom.inner), float(atom.rate)
            remove.append((LossTails(base, q, True), n))
            add.append((LossTails(base, q, False), n))
        elif not isinstance(atom, GaussianAtom):
            remove.append((LossTails(_base_pair(atom), 1.0, True), n))
    if not add:
        return [remove]
    # symmetric pairs (Gaussian, Laplace, randomized response) have the same
    # loss distribution in both directions
    symmetric = [(tails, n) for tails, n in remove if tails.rate >= 1]
    return [remove, add + symmetric]


# ---------------------------------------------------------------- composition


@dataclass(frozen=True)
class ComposedPLD:
    losses: np.ndarray
    masses: np.ndarray
    infinity_mass: float

    def epsilon(self, delta: float) -> float:
        return discrete.epsilon_for_delta(self.losses, self.masses, self.infinity_mass, delta)

    def delta(self, epsilon: float) -> float:
        return discrete.delta_for_epsilon(self.losses, self.masses, self.infinity_mass, epsilon)


class WindowTooLarge(Exception):
    """The composed window needs more than MAX_POINTS grid points."""


def compose(parts: Sequence[tuple[DiscretePLD, int]]) -> ComposedPLD:
    if len(parts) == 1 and parts[0][1] == 1:
        return parts[0][0].as_composed()
    interval = parts[0][0].interval
    finite = math.prod((1 - p.infinity_mass) ** n for p, n in parts)
    low, high = _window(parts)
    size = fft.next_fast_len(high - low + 1, real=True)
    if size > MAX_POINTS:
        raise WindowTooLarge(size)
    spectrum = np.ones(size // 2 + 1, dtype=complex)
    offset = 0
    for part, n in parts:
        spectrum *= _power(fft.rfft(_fold(part.probs, size), size, workers=-1), n)
        offset += n * part.offset
    circular = fft.irfft(spectrum, size, workers=-1)
    masses = np.roll(circular, -((low - offset) % size))
    losses = (low + np.arange(size)) * interval
    # TAIL_BOUND bounds the true mass above the window (Chernoff, `_window`)
    return ComposedPLD(losses, np.clip(masses, 0.0, None), (1 - finite) + TAIL_BOUND)


def _power(z: np.ndarray, n: int) -> np.ndarray:
    """z**n by repeated squaring (faster and more accurate than exp(n log z))."""
    result: np.ndarray | None = None
    while n:
        if n & 1:
            result = z.copy() if result is None else result * z
        n >>= 1
        if n:
            z = z * z
    return np.ones_like(z) if result is None else result


def _fold(probs: np.ndarray, size: int) -> np.ndarray:
    if probs.size <= size:
        return probs
    return np.bincount(np.arange(probs.size) % size, weights=probs, minlength=size)


def _window(parts: Sequence[tuple[DiscretePLD, int]]) -> tuple[int, int]:
    """Grid indices [low, high] outside which the composed finite loss has
    mass at most TAIL_BOUND on each side: Chernoff, P(S >= u) <= E[e^{tS}] e^{-tu}."""
    interval = parts[0][0].interval
    support_low = sum(n * p.offset for p, n in parts)
    support_high = sum(n * (p.offset + p.probs.size - 1) for p, n in parts)
    log_bound = math.log(TAIL_BOUND)
    upper = sum(n * p.log_mgf(_CHERNOFF_ORDERS) for p, n in parts)
    lower = sum(n * p.log_mgf(-_CHERNOFF_ORDERS) for p, n in parts)
    high = float(np.min((upper - log_bound) / _CHERNOFF_ORDERS)) / interval
    low = float(np.max((lower - log_bound) / -_CHERNOFF_ORDERS)) / interval
    return max(support_low, math.floor(low)), min(support_high, math.ceil(high))


def composed(atoms: Atoms, interval: float | None = None) -> list[ComposedPLD]:
    """The composed PLD of each direction. Without ``interval`` the grid is
    chosen so that the composed window holds about TARGET_POINTS points (finer
    than DEFAULT_INTERVAL for small losses, where the grid error would be a
    large share of epsilon); always coarse enough to fit MAX_POINTS."""
    width, span = _window_width(atoms)
    if interval is None:
        interval = _default_interval(width)
    interval = max(interval, width / (MAX_POINTS / 2), span / MAX_POINTS)
    while True:
        try:
            return [
                compose([(discretise(tails, interval), n) for tails, n in direction])
                for direction in directions(atoms)
                if direction
            ]
        except WindowTooLarge:
            interval *= 2


def _default_interval(width: float) -> float:
    """DEFAULT_INTERVAL halved until the window holds about TARGET_POINTS
    points (halving keeps losses on the grid that were on it, such as a
    Laplace epsilon of 0.5)."""
    desired = max(width / TARGET_POINTS, MIN_INTERVAL)
    if desired >= DEFAULT_INTERVAL:
        return DEFAULT_INTERVAL
    return DEFAULT_INTERVAL / 2 ** math.ceil(math.log2(DEFAULT_INTERVAL / desired))


def _window_width(atoms: Atoms) -> tuple[float, float]:
    """The widest composed window over the directions, and the widest single
    loss range, estimated on a coarse grid."""
    width = span = 0.0
    for direction in directions(atoms):
        if not direction:
            continue
        spans = [max(t.loss_range()[1] - t.loss_range()[0], 1e-3) for t, _ in direction]
        rough = max(max(spans) / 4096, MIN_INTERVAL)
        low, high = _window([(discretise(t, rough), n) for t, n in direction])
        width = max(width, (high - low + 2) * rough)
        span = max(span, max(spans))
    return width, span


def epsilon(atoms: Atoms, delta: float, interval: float | None = None) -> float:
    if not atoms:
        return 0.0
    return max(p.epsilon(delta) for p in composed(atoms, interval))


def delta(atoms: Atoms, eps: float, interval: float | None = None) -> float:
    if not atoms:
        return 0.0
    return max(p.delta(eps) for p in composed(atoms, interval))
