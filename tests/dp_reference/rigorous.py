"""Proven brackets for compositions of Poisson-subsampled Gaussians (DP-SGD).

The exact curve of k steps is delta(eps) = max over the two directions of
E_P[(1 - e^{eps - S})_+], S the sum of k independent losses of the step's
dominating pair (Zhu, Dong & Wang 2022):

    remove: P = (1-q) N(0,1) + q N(mu,1), Q = N(0,1), loss log(1 - q + q e^{mu x - mu^2/2})
    add:    P = N(0,1), Q = (1-q) N(0,1) + q N(mu,1), the negated loss.

One step's curve is a closed form in Phi (evaluated in mpmath at 30 digits):
with T_P(l) = P(S > l), T_Q(l) = Q(S > l) and x = e^l,

    g(x) = T_P(log x) - x T_Q(log x),   g convex in x, g(0) = 1, g' = -T_Q.

Two pairs on the lattice h Z bound the step from both sides in Blackwell's
order; k-fold composition keeps the order (post-processing acts coordinatewise)
and the hockey stick obeys data processing, so their k-fold curves bracket
the exact one. (A pair's hockey-stick curve x -> H_x(P || Q), x >= 0, orders
pairs as Blackwell's theorem for dichotomies does: Blackwell 1953; Dong,
Roth & Su 2022, Prop. 2.10. Any convex piecewise-linear g with g(0) = 1 and
(1 - x)_+ <= g <= 1 is such a curve: its kinks at x_j = e^{l_j} carry
Q-mass = the slope's jump and P-mass = x_j times that.)

* upper: connect the dots -- g interpolated linearly at lattice nodes
  (chords lie above a convex function), flat after the last node: the mass
  beyond goes to +infinity (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022).
* lower: nodes lowered by e_j, so that every chord stays below g: on a
  segment [a, b], g - chord >= -t (1 - t)(b - a)(g'(b) - g'(a)) (the two
  tangents' convex combination), so endpoints lowered by e_a, e_b with
  (1 - t) e_a + t e_b >= t (1 - t)(b - a) Q(segment) for t in [0, 1] keep
  the chord below g; nodes never below (1 - x)_+; then the lower convex hull.

The k-fold composition of each lattice measure is computed in float by
repeated squaring of the exponentially tilted measure (tilting by e^{t l}
commutes with convolution), every convolution with a proven entrywise
error bound (`safe_fft`), carried in the safe direction (upper vectors
rounded up, lower ones down). Mass outside each block's window is dropped
from the lower side and bounded on the upper side, on either side of the
window alike by Chernoff: f(s) = (1 - e^{eps - s})_+ <= e^{t (s - eps)} for
every s, so a cut piece of a block A of k_A steps adds at most
e^{-t eps} E[e^{t S_A}; cut] M(t)^{k - k_A}. (Bounding the piece above the
window by its probability instead -- f <= 1 -- ignores that the other
k - k_A steps must still carry the sum to eps: for a block of few steps that
probability is far above delta, and the upper end came out 0.995 against
0.718 at q = 0.01, sigma = 1, 100 steps, delta = 1e-5.)
Masses are rounded outward when leaving mpmath; mpmath's 40-digit values are
taken to within a relative 1e-36 (NOISE), carried into every mass.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import mpmath as mp
import numpy as np

DPS = 40
WIDEN = mp.mpf("1e-20")
NOISE = mp.mpf("1e-36")  # error allowed for mpmath's values, relative to their size
# node spacing, in lattice steps, by the tail mass beyond a node: thinner
# nodes only loosen the lower pair where the mass is tiny
SPACING = ((1e-8, 1), (1e-14, 16), (1e-20, 256), (0.0, 4096))
EDGE = 1e-45  # tail mass beyond the outermost nodes
TRIM = 1e-8  # a block's window keeps all but this share of its tilted mass on each side (only tightness: the lower side drops the rest)
VARIANCE_SHARE = 2e-6  # lattice: h^2 / 4 <= this share of one step's loss variance


def _mpf(x) -> mp.mpf:
    if isinstance(x, Fraction):
        return mp.mpf(x.numerator) / x.denominator
    return mp.mpf(x)


@dataclass(frozen=True)
class SampledGaussian:
    """One direction of the Poisson-subsampled Gaussian (rate q, mu = s / sigma)."""

    rate: Fraction
    mu: Fraction
    remove: bool

    def tails(self, loss: mp.mpf) -> tuple[mp.mpf, mp.mpf]:
        """(P(S > loss), Q(S > loss))."""
        q, mu = _mpf(self.rate), _mpf(self.mu)
        if self.remove:
            if loss <= mp.log1p(-q):
                return mp.mpf(1), mp.mpf(1)
            x = (mp.log((mp.expm1(loss) + q) / q) + mu * mu / 2) / mu  # S > l iff X > x
            q_tail = mp.ncdf(-x)
            return (1 - q) * q_tail + q * mp.ncdf(mu - x), q_tail
        if loss >= -mp.log1p(-q):
            return mp.mpf(0), mp.mpf(0)
        x = (mp.log((mp.expm1(-loss) + q) / q) + mu * mu / 2) / mu  # S > l iff X < x
        p_tail = mp.ncdf(x)
        return p_tail, (1 - q) * p_tail + q * mp.ncdf(x - mu)

    def variance(self) -> float:
        """One step's loss variance under P, roughly (sizes the lattice only)."""
        q, mu = float(self.rate), float(self.mu)
        return q * q * math.expm1(mu * mu)

    def support(self, h: float) -> tuple[int, int]:
        """Lattice indices [lo, hi] outside which either tail holds < EDGE."""
        q = _mpf(self.rate)
        if self.remove:
            lo = math.floor(float(mp.log1p(-q)) / h)
            hi = self._crossing(lambda loss: self.tails(loss)[0], h, upward=True)
        else:
            hi = math.ceil(float(-mp.log1p(-q)) / h)
            lo = self._crossing(lambda loss: 1 - min(self.tails(loss)), h, upward=False)
        return lo, hi

    def spacing_edges(self, h: float) -> list[tuple[int, int, int]]:
        """(left index, right index, steps): nodes between the indices where
        both tails exceed a SPACING level are that many lattice steps apart."""
        edges = []
        for level, steps in SPACING[:-1]:
            left = self._crossing(lambda loss: 1 - min(self.tails(loss)), h, upward=False, level=level)
            right = self._crossing(lambda loss: max(self.tails(loss)), h, upward=True, level=level)
            edges.append((left, right, steps))
        return edges

    def _crossing(self, tail, h: float, upward: bool, level: float = EDGE) -> int:
        step = 0.5 if upward else -0.5
        edge = 0.0
        inside = 0.0
        while tail(mp.mpf(edge)) > level:
            inside = edge
            edge += step
            step *= 2
        for _ in range(40):  # bisect back: tail(inside) > level >= tail(edge)
            middle = (inside + edge) / 2
            if tail(mp.mpf(middle)) > level:
                inside = middle
            else:
                edge = middle
        return math.ceil(edge / h) if upward else math.floor(edge / h)


@dataclass
class Lattice:
    """A measure on the lattice h Z: mass[i] at loss (first + i) h."""

    h: float
    first: int
    mass: np.ndarray
    infinity: float = 0.0  # mass at +infinity


@dataclass
class _Nodes:
    j: list = field(default_factory=list)
    x: list = field(default_factory=list)
    curve: list = field(default_factory=list)  # g(x_j)
    q_tail: list = field(default_factory=list)  # T_Q(l_j)
    noise: list = field(default_factory=list)  # a bound on the error of curve[j]


def _nodes(pair: SampledGaussian, h: float) -> _Nodes:
    lo, hi = pair.support(h)
    edges = pair.spacing_edges(h)
    nodes = _Nodes()
    hm = mp.mpf(h)
    j = lo
    with mp.workdps(DPS):
        while True:
            loss = hm * j
            p_tail, q_tail = pair.tails(loss)
            x = mp.exp(loss)
            nodes.j.append(j)
            nodes.x.append(x)
            nodes.curve.append(p_tail - x * q_tail)
            nodes.q_tail.append(q_tail)
            nodes.noise.append(NOISE * (p_tail + x * q_tail + x))
            if j >= hi:
                break
            step = next((s for left, right, s in edges if left <= j < right), SPACING[-1][1])
            j = min([j + step, hi] + [left for left, _, _ in edges if left > j])
    return nodes


def _masses(points) -> list[tuple[int, mp.mpf, mp.mpf]]:
    """(j, P-mass, error bound) at the kinks of the piecewise-linear curve
    through (0, 1) and ``points`` (x, y, j, noise of y), flat after the
    last: Q-mass = the slope's jump, P-mass = x times it."""
    masses = []
    previous_x, previous_y, previous_noise = mp.mpf(0), mp.mpf(1), mp.mpf(0)
    for i, (x, y, j, noise) in enumerate(points):
        slope_in = (y - previous_y) / (x - previous_x)
        error = (noise + previous_noise) / (x - previous_x)
        if i + 1 < len(points):
            nx, ny, _, next_noise = points[i + 1]
            slope_out = (ny - y) / (nx - x)
            error += (noise + next_noise) / (nx - x)
        else:
            slope_out = mp.mpf(0)
            error += noise
        masses.append((j, x * (slope_out - slope_in), 2 * x * error))
        previous_x, previous_y, previous_noise = x, y, noise
    return masses


def _upper_points(nodes: _Nodes) -> list[tuple[mp.mpf, mp.mpf, int]]:
    return list(zip(nodes.x, nodes.curve, nodes.j, nodes.noise, strict=True))


def _lower_points(nodes: _Nodes) -> list[tuple[mp.mpf, mp.mpf, int]]:
    """Nodes lowered so that every chord lies below the curve, the last at 0,
    none below (1 - x)_+; then their lower convex hull."""
    x, g, tq = nodes.x, nodes.curve, nodes.q_tail  # g to within NOISE
    m = len(x)
    # segment s joins node s - 1 and node s (s = 0: the origin (0, 1), exact)
    gap = [x[0] * (1 - tq[0])] + [(x[s] - x[s - 1]) * (tq[s - 1] - tq[s]) for s in range(1, m)]
    floor = [max(1 - xi, mp.mpf(0)) for xi in x]
    lowering = [max(gap[i], gap[i + 1] if i + 1 < m else 0) / 4 + nodes.noise[i] for i in range(m)]
    lowering[0] = max(lowering[0], gap[0])  # the origin is not lowered
    lowering[-1] = g[-1]  # the last node sits at 0
    capped = [False] * m  # node on its floor (1 - x)_+
    for _ in range(50):
        for i in range(m):
            if lowering[i] >= g[i] - floor[i]:
                lowering[i], capped[i] = max(g[i] - floor[i], mp.mpf(0)), True
        failing = [s for s in range(m) if not _chord_below(s, lowering, gap, capped, x)]
        if not failing:
            break
        for s in failing:
            for i in (s - 1, s):  # raise the non-capped end to the full gap
                if i >= 0 and not capped[i]:
                    lowering[i] = max(lowering[i], gap[s])
    else:
        detail = [(s, capped[s - 1], capped[s], x[s - 1], lowering[s - 1], lowering[s], gap[s]) for s in failing[:3]]
        raise RuntimeError(f"no lowering keeps every chord below the curve: {detail}")
    points = [
        (x[i], floor[i] if capped[i] else g[i] - lowering[i], nodes.j[i], nodes.noise[i])
        for i in range(m)
    ]
    return _lower_hull(points)


def _chord_below(s: int, lowering, gap, capped, x) -> bool:
    """Whether the chord of segment s (nodes s - 1, s) lies below the curve."""
    e_b = lowering[s]
    if s == 0:
        e_a, on_line_a = mp.mpf(0), True  # the origin lies on 1 - x
    else:
        e_a = lowering[s - 1]
        on_line_a = capped[s - 1] and x[s - 1] <= 1
    on_line_b = capped[s] and x[s] <= 1
    if on_line_a and on_line_b:
        return True  # the chord is 1 - x, and g >= 1 - x
    if s > 0 and capped[s - 1] and capped[s] and x[s - 1] >= 1:
        return True  # the chord is 0
    width = gap[s]
    if width <= 0:
        return e_a >= 0 and e_b >= 0
    t = (width + e_a - e_b) / (2 * width)
    if 0 < t < 1:
        return e_a - (e_b - e_a - width) ** 2 / (4 * width) >= 0
    return e_a >= 0 and e_b >= 0


def _lower_hull(points):
    hull = [(mp.mpf(0), mp.mpf(1), None, None)]
    for p in points:
        while len(hull) >= 2:
            (ox, oy, _, _), (ax, ay, _, _) = hull[-2], hull[-1]
            if (ax - ox) * (p[1] - oy) - (ay - oy) * (p[0] - ox) <= 0:
                hull.pop()  # not a left turn: a is above the chord o-p
            else:
                break
        hull.append(p)
    return hull[1:]


def _round(value: mp.mpf, error: mp.mpf, up: bool) -> float:
    """A float on the safe side of value +- error (and a relative WIDEN)."""
    widened = value * (1 + WIDEN) + error if up else value * (1 - WIDEN) - error
    f = float(widened)
    if up and mp.mpf(f) < widened:
        f = math.nextafter(f, math.inf)
    if not up and mp.mpf(f) > widened:
        f = math.nextafter(f, -math.inf)
    return max(f, 0.0)


def _to_lattice(masses, infinity: mp.mpf, h: float, up: bool) -> Lattice:
    first = masses[0][0]
    mass = np.zeros(masses[-1][0] - first + 1)
    for j, p, error in masses:
        mass[j - first] += _round(p, error, up)  # no two masses share a j
    return Lattice(h, first, mass, _round(infinity, infinity * WIDEN, True) if up else 0.0)


def _cache_path(key: str) -> Path:
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / "fuzzpy-dp-reference" / f"{digest}.pkl"


@lru_cache(maxsize=16)
def step_bounds(pair: SampledGaussian, h: float, upper: bool = False) -> tuple[Lattice, ...]:
    """(lower,) or (lower, upper) lattice measures of one step (cached on
    disk: minutes of mpmath at fine lattices)."""
    path = _cache_path(f"v3|{pair}|{h!r}|{upper}")
    if path.exists():
        return pickle.loads(path.read_bytes())
    with mp.workdps(DPS):
        nodes = _nodes(pair, h)
        found = (_to_lattice(_masses(_lower_points(nodes)), mp.mpf(0), h, up=False),)
        if upper:
            last = nodes.curve[-1] + nodes.noise[-1]
            found += (_to_lattice(_masses(_upper_points(nodes)), last, h, up=True),)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(pickle.dumps(found))
    os.replace(partial, path)
    return found


def lattice_step(pairs: list[SampledGaussian]) -> float:
    """A power of two h with h^2 / 4 <= VARIANCE_SHARE * the smallest variance."""
    variance = min(p.variance() for p in pairs)
    h = math.sqrt(4 * VARIANCE_SHARE * variance)
    return 2.0 ** math.floor(math.log2(h))
