"""Exact probabilities of linear events over independent Laplace / exponential draws.

The probability that a short run of a mechanism takes one path is the integral
of a product of noise densities over a polyhedron. When one draw x (the pivot)
separates the others, i.e. every constraint mentions at most one draw besides
x, the integral is

    int f_x(x) * prod_y [F_y(min upper_y(x)) - F_y(max lower_y(x))]^+ dx,

and on each interval between breakpoints every factor is a finite sum of
c * e^(r x) (Laplace and exponential CDFs are piecewise exponential), so the
product is again such a sum and integrates in closed form (verifier.md,
"Refuting: exact probabilities"). Rates are exact rationals; coefficients are
evaluated with mpmath at 50 significant digits, so the reported probabilities
are exact up to that precision (far below the margins we compare against).
Released continuous values fix draws by a change of variables (density of the
output, with the Jacobian 1/|coefficient|).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from fuzzpy.support.records import frozen

mpmath.mp.dps = 50  # the refuter also sets it around each search (refuter.refute)

Number = Fraction


@frozen
class NoiseDraw:
    kind: str  # "lap" | "lapplus"
    scale: Fraction


@frozen
class Linear:
    """const + sum coeff * draw (draw indices into the run's list of draws)."""

    const: Fraction
    coeffs: tuple[tuple[int, Fraction], ...] = ()

    @staticmethod
    def of(value: Fraction) -> Linear:
        return Linear(Fraction(value))

    @staticmethod
    def draw(index: int) -> Linear:
        return Linear(Fraction(0), ((index, Fraction(1)),))

    def as_dict(self) -> dict[int, Fraction]:
        return dict(self.coeffs)

    @staticmethod
    def build(const: Fraction, coeffs: dict[int, Fraction]) -> Linear:
        return Linear(const, tuple(sorted((k, v) for k, v in coeffs.items() if v != 0)))

    def __add__(self, other: Linear) -> Linear:
        merged = self.as_dict()
        for k, v in other.coeffs:
            merged[k] = merged.get(k, Fraction(0)) + v
        return Linear.build(self.const + other.const, merged)

    def scale(self, factor: Fraction) -> Linear:
        return Linear.build(self.const * factor, {k: v * factor for k, v in self.coeffs})

    def __neg__(self) -> Linear:
        return self.scale(Fraction(-1))

    def __sub__(self, other: Linear) -> Linear:
        return self + (-other)

    @property
    def is_constant(self) -> bool:
        return not self.coeffs

    def substitute(self, index: int, replacement: Linear) -> Linear:
        coeffs = self.as_dict()
        if index not in coeffs:
            return self
        factor = coeffs.pop(index)
        return Linear.build(self.const, coeffs) + replacement.scale(factor)


@frozen
class Mass:
    """A probability: ``atoms`` point-mass coordinates, then a density ``value``.

    More atoms dominate: an output that one run produces with positive
    probability and the other only with density has an infinite ratio.
    """

    atoms: int
    value: mpmath.mpf

    def plus(self, other: Mass) -> Mass:
        if other.value == 0:
            return self
        if self.value == 0 or other.atoms > self.atoms:
            return other
        if other.atoms < self.atoms:
            return self
        return Mass(self.atoms, self.value + other.value)


ZERO = Mass(0, mpmath.mpf(0))


class Unsupported(Exception):
    """The event has no pivot structure, or a density depends on a free draw."""


def path_mass(draws: list[NoiseDraw], constraints: list[Linear], equations: list[tuple[Linear, Fraction]],
              strict: list[bool] | None = None) -> Mass:
    """P(all constraints >= 0, every equation's value = its target) for one path;
    ``strict[k]``: constraint k means "> 0". A border has measure zero in the
    integral over the free draws, but a constraint the equations fix entirely
    at 0 decides: a strict one leaves the path no mass there, so that the two
    sides of a test count a pinned point once (review s29b)."""
    pins: dict[int, Linear] = {}
    jacobian = mpmath.mpf(1)
    atoms = 0
    for linear, target in equations:
        current = _apply(linear, pins)
        if current.is_constant:
            if current.const != target:
                return ZERO
            atoms += 1
            continue
        pivot, coeff = current.coeffs[0]
        rest = Linear.build(current.const, {k: v for k, v in current.coeffs if k != pivot})
        solved = (Linear.of(target) - rest).scale(1 / coeff)
        pins = {k: v.substitute(pivot, solved) for k, v in pins.items()}
        pins[pivot] = solved
        jacobian /= abs(coeff)
    factor = jacobian
    densities: list[tuple[NoiseDraw, Linear]] = []
    for index, value in pins.items():
        if not value.is_constant:
            # a released value that mixes draws (`q[i] + eta - threshold`): the
            # pinned draw's density stays a factor of the integral over the others
            densities.append((draws[index], value))
            continue
        factor *= _density(draws[index], value.const)
    if factor == 0:
        return ZERO
    reduced = [_apply(c, pins) for c in constraints]
    if any(c.is_constant and c.const == 0 and is_strict for c, is_strict in zip(reduced, strict or [], strict=False)):
        return ZERO
    return Mass(atoms, factor * _integrate(draws, reduced, densities))


def _apply(linear: Linear, pins: dict[int, Linear]) -> Linear:
    for index, value in pins.items():
        linear = linear.substitute(index, value)
    return linear


def _density(draw: NoiseDraw, x: Fraction) -> mpmath.mpf:
    b = mpmath.mpf(draw.scale.numerator) / draw.scale.denominator
    xm = mpmath.mpf(x.numerator) / x.denominator
    if draw.kind == "lapplus":
        return mpmath.exp(-xm / b) / b if x >= 0 else mpmath.mpf(0)
    return mpmath.exp(-abs(xm) / b) / (2 * b)


# ---------------------------------------------------------------- pivot integration


def _integrate(draws: list[NoiseDraw], constraints: list[Linear],
               densities: list[tuple[NoiseDraw, Linear]] = ()) -> mpmath.mpf:  # type: ignore[assignment]
    """The integral of the draws' densities over the polyhedron ``constraints >= 0``,
    times the density factors f_d(linear) of draws pinned by released values."""
    live = []
    for c in constraints:
        if c.is_constant:
            if c.const < 0:
                return mpmath.mpf(0)
            continue
        live.append(c)
    if not live and not densities:
        return mpmath.mpf(1)
    total = mpmath.mpf(1)
    for group, factors in _independent_groups(live, list(densities)):
        total *= _integrate_group(draws, group, factors)
        if total == 0:
            break
    return total


def _independent_groups(constraints: list[Linear], densities: list[tuple[NoiseDraw, Linear]],
                        ) -> list[tuple[list[Linear], list[tuple[NoiseDraw, Linear]]]]:
    """Constraints and density factors split by the draws they share: draws
    are independent, so the integral is the product over groups that share
    no draw (a threshold redrawn after each hit starts a new group)."""
    parent: dict[int, int] = {}

    def root(k: int) -> int:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for linear in constraints + [d for _, d in densities]:
        keys = [k for k, _ in linear.coeffs]
        for k in keys[1:]:
            parent[root(k)] = root(keys[0])
    groups: dict[int, tuple[list[Linear], list[tuple[NoiseDraw, Linear]]]] = {}
    for c in constraints:
        groups.setdefault(root(c.coeffs[0][0]), ([], []))[0].append(c)
    for draw, linear in densities:
        groups.setdefault(root(linear.coeffs[0][0]), ([], []))[1].append((draw, linear))
    return list(groups.values())


def _integrate_group(draws: list[NoiseDraw], live: list[Linear],
                     densities: list[tuple[NoiseDraw, Linear]]) -> mpmath.mpf:
    free = sorted({k for c in live for k, _ in c.coeffs} | {k for _, d in densities for k, _ in d.coeffs})
    for pivot in free:
        if all(len([k for k, _ in c.coeffs if k != pivot]) <= 1 for c in live) \
                and all(all(k == pivot for k, _ in d.coeffs) for _, d in densities):
            lines = [(draw, d.as_dict()[pivot], d.const) for draw, d in densities]
            return _pivot_integral(draws, pivot, live, lines)
    raise Unsupported("no single draw separates the others")


Term = dict[Fraction, mpmath.mpf]  # rate -> coefficient: sum coef * e^(rate x)


def _pivot_integral(draws: list[NoiseDraw], pivot: int, constraints: list[Linear],
                    densities: list[tuple[NoiseDraw, Fraction, Fraction]] = ()) -> mpmath.mpf:  # type: ignore[assignment]
    """``densities``: factors f_draw(alpha x + beta) of the pivot x."""
    lower: dict[int, list[tuple[Fraction, Fraction]]] = {}
    upper: dict[int, list[tuple[Fraction, Fraction]]] = {}
    x_low, x_high = None, None
    for c in constraints:
        coeffs = c.as_dict()
        a_x = coeffs.pop(pivot, Fraction(0))
        if not coeffs:  # a_x * x + const >= 0
            bound = -c.const / a_x
            if a_x > 0:
                x_low = bound if x_low is None else max(x_low, bound)
            else:
                x_high = bound if x_high is None else min(x_high, bound)
            continue
        (y, a_y), = coeffs.items()
        line = (-a_x / a_y, -c.const / a_y)  # y >= or <= alpha x + beta
        (lower if a_y > 0 else upper).setdefault(y, []).append(line)
        lower.setdefault(y, lower.get(y, []))
        upper.setdefault(y, upper.get(y, []))
    if x_low is not None and x_high is not None and x_low >= x_high:
        return mpmath.mpf(0)
    points = _breakpoints(lower, upper, x_low, x_high, [-beta / alpha for _, alpha, beta in densities])
    total = mpmath.mpf(0)
    for lo, hi in zip(points, points[1:], strict=False):
        total += _piece(draws, pivot, lower, upper, lo, hi, densities)
    return total


def _breakpoints(lower: dict, upper: dict, x_low: Fraction | None, x_high: Fraction | None,
                 extra: list[Fraction] = ()) -> list:  # type: ignore[assignment]
    cuts = {Fraction(0), *extra}
    for y in set(lower) | set(upper):
        lines = lower.get(y, []) + upper.get(y, [])
        for alpha, beta in lines:
            if alpha != 0:
                cuts.add(-beta / alpha)
        for i, (a1, b1) in enumerate(lines):
            for a2, b2 in lines[i + 1 :]:
                if a1 != a2:
                    cuts.add((b2 - b1) / (a1 - a2))
    inside = sorted(c for c in cuts if (x_low is None or c > x_low) and (x_high is None or c < x_high))
    start = [x_low] if x_low is not None else [None]
    end = [x_high] if x_high is not None else [None]
    return start + inside + end  # None marks -inf at the start and +inf at the end


def _piece(draws: list[NoiseDraw], pivot: int, lower: dict, upper: dict, lo: Fraction | None,
           hi: Fraction | None, densities: list[tuple[NoiseDraw, Fraction, Fraction]] = ()) -> mpmath.mpf:  # type: ignore[assignment]
    if lo is None and hi is None:
        mid = Fraction(0)
    elif lo is None:
        mid = hi - 1
    elif hi is None:
        mid = lo + 1
    else:
        mid = (lo + hi) / 2
    product: Term = _pivot_density_terms(draws[pivot], mid)
    for draw, alpha, beta in densities:
        product = _multiply(product, _density_terms(draw, alpha, beta, mid))
    for y in set(lower) | set(upper):
        low = max(lower.get(y, []), key=lambda line: line[0] * mid + line[1], default=None)
        up = min(upper.get(y, []), key=lambda line: line[0] * mid + line[1], default=None)
        if low is not None and up is not None and low[0] * mid + low[1] >= up[0] * mid + up[1]:
            return mpmath.mpf(0)
        factor = _subtract(_cdf_terms(draws[y], up, mid, upper=True), _cdf_terms(draws[y], low, mid, upper=False))
        product = _multiply(product, factor)
        if not product:
            return mpmath.mpf(0)
    return _integrate_terms(product, lo, hi)


def _mp(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def _pivot_density_terms(draw: NoiseDraw, mid: Fraction) -> Term:
    b = draw.scale
    if draw.kind == "lapplus":
        return {} if mid < 0 else {-1 / b: 1 / _mp(b)}
    return {1 / b: 1 / (2 * _mp(b))} if mid < 0 else {-1 / b: 1 / (2 * _mp(b))}


def _density_terms(draw: NoiseDraw, alpha: Fraction, beta: Fraction, mid: Fraction) -> Term:
    """f(alpha x + beta) near ``mid`` as exponential terms."""
    b = draw.scale
    z_mid = alpha * mid + beta
    if draw.kind == "lapplus":
        return {} if z_mid < 0 else {-alpha / b: mpmath.exp(-_mp(beta / b)) / _mp(b)}
    if z_mid < 0:
        return {alpha / b: mpmath.exp(_mp(beta / b)) / (2 * _mp(b))}
    return {-alpha / b: mpmath.exp(-_mp(beta / b)) / (2 * _mp(b))}


def _cdf_terms(draw: NoiseDraw, line: tuple[Fraction, Fraction] | None, mid: Fraction, upper: bool) -> Term:
    """F(alpha x + beta) near ``mid`` as exponential terms (F(+inf)=1, F(-inf)=0)."""
    if line is None:
        return {Fraction(0): mpmath.mpf(1)} if upper else {}
    alpha, beta = line
    b = draw.scale
    z_mid = alpha * mid + beta
    if draw.kind == "lapplus":
        if z_mid < 0:
            return {}
        return _add({Fraction(0): mpmath.mpf(1)}, {-alpha / b: -mpmath.exp(-_mp(beta / b))})
    if z_mid < 0:
        return {alpha / b: mpmath.exp(_mp(beta / b)) / 2}
    return _add({Fraction(0): mpmath.mpf(1)}, {-alpha / b: -mpmath.exp(-_mp(beta / b)) / 2})


def _add(a: Term, b: Term) -> Term:
    out = dict(a)
    for rate, coef in b.items():
        out[rate] = out.get(rate, mpmath.mpf(0)) + coef
    return out


def _subtract(a: Term, b: Term) -> Term:
    return _add(a, {rate: -coef for rate, coef in b.items()})


def _multiply(a: Term, b: Term) -> Term:
    out: Term = {}
    for r1, c1 in a.items():
        for r2, c2 in b.items():
            rate = r1 + r2
            out[rate] = out.get(rate, mpmath.mpf(0)) + c1 * c2
    return out


def _integrate_terms(terms: Term, lo: Fraction | None, hi: Fraction | None) -> mpmath.mpf:
    total = mpmath.mpf(0)
    for rate, coef in terms.items():
        if coef == 0:
            continue
        if rate == 0:
            if lo is None or hi is None:
                if abs(coef) < mpmath.mpf(10) ** -40:
                    continue
                raise Unsupported("an unbounded piece does not decay")
            total += coef * _mp(hi - lo)
            continue
        r = _mp(rate)
        top = mpmath.mpf(0) if hi is None else mpmath.exp(r * _mp(hi))
        bottom = mpmath.mpf(0) if lo is None else mpmath.exp(r * _mp(lo))
        if (hi is None and rate > 0) or (lo is None and rate < 0):
            if abs(coef) < mpmath.mpf(10) ** -40:
                continue
            raise Unsupported("an unbounded piece does not decay")
        total += coef * (top - bottom) / r
    return total
