"""Exact continuous noise for mechanisms: draws as lazily refined real numbers.

The verifier proves a mechanism for real-valued noise (`lap(b)` has density
e^(-|x|/b) / 2b, `lapplus(b)` density e^(-x/b) / b on x >= 0) and real
inputs: a shift of a draw by any real a costs |a| / b. A grid sampler only
supports shifts by grid multiples, and real-valued queries move by other
amounts (then neighbours' outputs fall on different cosets of the grid). So a
mechanism's draws are exact reals instead, known through intervals with
dyadic ends that shrink when a decision needs it:

* E ~ Exp(1) is K + F with K and F independent (memorylessness): P(K = k) =
  (1 - 1/e) e^-k (count successes of Bernoulli(1/e)), and F in [0, 1) with
  density proportional to e^-f. Given F's first m binary digits, its next j
  digits J satisfy P(J = u) proportional to exp(-u / 2^(m+j)) (the density
  is e^-f again inside the known cell), drawn by rejection: U uniform in
  [0, 2^j), kept with probability exp(-U / 2^(m+j)), an exact Bernoulli
  (Canonne, Kamath & Steinke 2020, Alg. 1, `samplers.bernoulli_exp_fraction`).
  The digits not yet drawn are uniform given the ones drawn and the
  decisions taken so far, so refining later never biases anything.
* `lap(b)` is b S E with a fair sign S, `lapplus(b)` is b E.
* `gauss(sigma)` is sigma X with X ~ N(0, 1) exact: X = V1 sqrt(2E / S) with
  (V1, V2) uniform in the unit disk, S = V1^2 + V2^2, and E ~ Exp(1) the
  draw above, independent. (V1, V2) / sqrt(S) is a uniform point of the unit
  circle and 2E a chi-square with 2 degrees of freedom (the squared radius of
  a standard 2-D normal), independent, so X is the first coordinate of a
  standard 2-D normal (Box & Muller 1958; Marsaglia & Bray's polar form, with
  the radius drawn on its own instead of from S). V1 and V2 are lazy uniform
  digits; the point is kept once a cell of its digits lies inside the disk
  (rejected once it lies outside), so the digits not yet drawn are uniform
  given the ones drawn, as for E. X's interval is computed from its parts'
  intervals with outward-rounded square roots.

Values computed from draws are kept exactly, as quotients of polynomials in
the draws with rational coefficients. A comparison refines the draws until
the interval of the difference excludes 0. The draws have a joint density,
so a polynomial that is not identically zero vanishes with probability 0:
refinement ends with probability 1, and an equality between values that are
not the same polynomial is false (an event of probability 1). A released
number is the nearest double to the exact real: post-processing.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from itertools import count

from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import bernoulli_exp_fraction
from fuzzpy.runtime.values import RuntimeFailure
from fuzzpy.support.records import frozen

#: Digits added to a draw per refinement round (doubling up to the maximum).
FIRST_STEP, MAX_STEP = 8, 64
#: A decision still open after this many digits per draw has probability
#: below 2^-4000: reported rather than looped on.
MAX_DIGITS = 4096
#: Pairs of monomials one product of noisy values may multiply: the exact
#: (expanded) form of a value is what decides that a difference is identically
#: 0; a bound on it makes every operation's work bounded whatever the draws
#: (w squared 9 times over one draw multiplies 257 x 257 terms; over two
#: draws 8 times, 8385 x 8385, refused at once rather than run for hours).
MAX_PRODUCT_PAIRS = 1 << 17

_serials = count()
Monomial = tuple[int, ...]  # serial numbers of draws, sorted, with repeats for powers
Terms = dict[Monomial, Fraction]
ONE: Monomial = ()


class Draw:
    """One exact Exp(1) variate (times a fair sign for Laplace), refined on demand."""

    __slots__ = ("serial", "source", "whole", "digits", "known", "negative")

    def __init__(self, source: RandomSource, two_sided: bool) -> None:
        self.serial = next(_serials)
        self.source = source
        self.whole = 0
        while bernoulli_exp_fraction(Fraction(1), source):
            self.whole += 1
        self.digits = 0  # the first `known` binary digits of F, as an integer
        self.known = 0
        self.negative = two_sided and source.below_one(2) == 1

    def interval(self) -> tuple[Fraction, Fraction]:
        low, high, known = self.bounds()
        return Fraction(low, 1 << known), Fraction(high, 1 << known)

    def bounds(self) -> tuple[int, int, int]:
        """(low, high, k): the draw lies in [low / 2^k, high / 2^k]."""
        low = (self.whole << self.known) + self.digits
        return (-low - 1, -low, self.known) if self.negative else (low, low + 1, self.known)

    def refine(self, more: int) -> None:
        if self.known >= MAX_DIGITS:
            raise RuntimeFailure("FZ519", "a comparison of noisy values could not be decided")
        while True:
            block = self.source.below_one(1 << more)
            if bernoulli_exp_fraction(Fraction(block, 1 << (self.known + more)), self.source):
                break
        self.digits = (self.digits << more) | block
        self.known += more


@frozen
class Shape:
    """How a value was computed, for its interval (`_shape_interval`).

    `op` is "poly" (`terms` over a constant denominator: affine values, whose
    range over a box is computed exactly from the polynomial), or "mul" /
    "div" of the two `parts`' values. The expanded polynomial of w^256 has 257
    monomials whose interval sum overestimates by a factor up to
    ((|a| + |b| |X|) / |a + b X|)^256 (the dependency problem of interval
    arithmetic; Moore, Kearfott & Cloud 2009, Sec. 5.1), which a decision
    then pays for in digits of every draw. Following the computation instead,
    a square is the square of one interval and the relative width of w^(2^k)
    is about 2^k times w's: a product of n factors needs about log2(n) more
    digits, not n times more.
    """

    op: str
    terms: Terms
    parts: tuple[Shape, ...]
    draws: dict[int, Draw]  # of a "poly" node's terms

    def __hash__(self) -> int:  # identity: a shared operand is evaluated once
        return id(self)


@frozen
class Noisy:
    """numerator / denominator, polynomials in the draws (never a constant);
    `shape` is how it was computed, whose interval decides comparisons."""

    num: Terms
    den: Terms
    draws: dict[int, Draw]
    shape: Shape

    def __hash__(self) -> int:  # identity: values are compared by `compare`
        return id(self)


Number = Fraction | Noisy


class GaussDraw(Draw):
    """One exact N(0, 1) variate V1 sqrt(2E / S), refined on demand (module docstring).

    `known` digits of each of U1, U2 (V = 2U - 1) and of E are drawn; the
    bounds are X's interval at that precision, widened outward to 2^-known.
    """

    __slots__ = ("u1", "u2", "radius")

    def __init__(self, source: RandomSource) -> None:  # Draw.__init__ is not called: the parts differ
        self.serial = next(_serials)
        self.source = source
        while True:  # a uniform point of the unit disk, by rejection on lazy digits
            self.u1 = self.u2 = self.known = 0
            inside = None
            while inside is None:
                self._more_digits(FIRST_STEP)
                inside = self._in_disk()
            if inside:
                break
        while self._squared_radius()[0] == 0:  # a cell away from the centre (S > 0 with probability 1)
            self._more_digits(FIRST_STEP)
        self.radius = Draw(source, two_sided=False)
        self.radius.refine(self.known)

    def _more_digits(self, more: int) -> None:
        if self.known >= MAX_DIGITS:
            raise RuntimeFailure("FZ519", "a comparison of noisy values could not be decided")
        self.u1 = (self.u1 << more) | self.source.below_one(1 << more)
        self.u2 = (self.u2 << more) | self.source.below_one(1 << more)
        self.known += more

    def _coordinate(self, digits: int) -> tuple[int, int]:
        """V = 2U - 1 lies in [low, high] / 2^known."""
        low = 2 * digits - (1 << self.known)
        return low, low + 2

    def _squared_radius(self) -> tuple[int, int]:
        """S = V1^2 + V2^2 lies in [low, high] / 4^known."""
        low = high = 0
        for digits in (self.u1, self.u2):
            a, b = self._coordinate(digits)
            low += 0 if a <= 0 <= b else min(a * a, b * b)
            high += max(a * a, b * b)
        return low, high

    def _in_disk(self) -> bool | None:
        low, high = self._squared_radius()
        one = 1 << (2 * self.known)
        if high < one:
            return True
        if low >= one:  # the circle itself has probability 0
            return False
        return None

    def bounds(self) -> tuple[int, int, int]:
        k = self.known
        s_low, s_high = self._squared_radius()
        e_low, e_high = self.radius.interval()
        # sqrt(2E / S) with S = s / 4^k, to 2^-(k + 8)
        precision, four_k = k + 8, 1 << (2 * k)
        r_low = Fraction(_isqrt_floor(2 * e_low * four_k / s_high, precision), 1 << precision)
        r_high = Fraction(_isqrt_ceil(2 * e_high * four_k / s_low, precision), 1 << precision)
        a, b = self._coordinate(self.u1)
        ends = [Fraction(v, 1 << k) * r for v in (a, b) for r in (r_low, r_high)]
        low, high = min(ends), max(ends)
        scaled_low, scaled_high = low * (1 << k), high * (1 << k)
        return math.floor(scaled_low), math.ceil(scaled_high), k

    def refine(self, more: int) -> None:
        self._more_digits(more)
        self.radius.refine(self.known - self.radius.known)


def _isqrt_floor(x: Fraction, bits: int) -> int:
    """floor(sqrt(x) * 2^bits) for x >= 0."""
    return math.isqrt((x.numerator << (2 * bits)) // x.denominator)


def _isqrt_ceil(x: Fraction, bits: int) -> int:
    """ceil(sqrt(x) * 2^bits) for x >= 0."""
    m = -((-x.numerator << (2 * bits)) // x.denominator)
    root = math.isqrt(m)
    return root if root * root == m else root + 1


def draw(kind: str, scale: Number, source: RandomSource) -> Number:
    """`lap(scale)`, `lapplus(scale)` or `gauss(scale)` (scale = sigma); the scale must be positive."""
    if kind not in ("lap", "lapplus", "gauss"):  # never another draw in place of an unknown one
        raise RuntimeFailure("FZ527", f"`{kind}` draws in a `mechanism` cannot be run")
    if sign(scale) <= 0:
        raise RuntimeFailure("FZ517", "noise needs a positive scale")
    unit = GaussDraw(source) if kind == "gauss" else Draw(source, two_sided=kind == "lap")
    unit_terms: Terms = {(unit.serial,): Fraction(1)}
    return multiply(scale, Noisy(unit_terms, {ONE: Fraction(1)}, {unit.serial: unit}, _poly(unit_terms, {unit.serial: unit})))


# ---------------------------------------------------------------- arithmetic


def _parts(value: Number) -> tuple[Terms, Terms, dict[int, Draw]]:
    if isinstance(value, Noisy):
        return value.num, value.den, value.draws
    return ({ONE: Fraction(value)} if value else {}), {ONE: Fraction(1)}, {}


def _add_terms(a: Terms, b: Terms, factor: int = 1) -> Terms:
    out = dict(a)
    for mono, c in b.items():
        out[mono] = out.get(mono, Fraction(0)) + factor * c
    return {m: c for m, c in out.items() if c != 0}


def _mul_terms(a: Terms, b: Terms) -> Terms:
    # a factor of one monomial (a constant scale) is linear work, like a sum: never refused
    # (`runtime.product_sizes` decides before the charge whether any other product can be)
    if min(len(a), len(b)) > 1 and len(a) * len(b) > MAX_PRODUCT_PAIRS:
        raise RuntimeFailure("FZ519", f"a product of noisy values is too large to keep exactly (its factors' "
                             f"expanded forms have {len(a)} and {len(b)} terms; at most {MAX_PRODUCT_PAIRS} "
                             "pairs are multiplied)")
    out: Terms = {}
    for m1, c1 in a.items():
        for m2, c2 in b.items():
            mono = tuple(sorted(m1 + m2))
            out[mono] = out.get(mono, Fraction(0)) + c1 * c2
    return {m: c for m, c in out.items() if c != 0}


def _make(num: Terms, den: Terms, draws: dict[int, Draw], shape: tuple[str, Number, Number] | None = None) -> Number:
    """The value num / den; `shape` is the operation that computed it (op, a, b),
    kept for the interval unless the value is affine (then its polynomial is exact)."""
    if not num:
        return Fraction(0)
    if set(den) == {ONE}:
        c = den[ONE]
        num, den = {m: v / c for m, v in num.items()}, {ONE: Fraction(1)}
        if set(num) == {ONE}:
            return num[ONE]
    used = {s for terms in (num, den) for mono in terms for s in mono}
    kept = {s: d for s, d in draws.items() if s in used}
    if set(den) == {ONE} and all(len(mono) <= 1 for mono in num) or shape is None:
        exact = _poly(num, kept) if set(den) == {ONE} else Shape("div", {}, (_poly(num, kept), _poly(den, kept)), {})
        return Noisy(num, den, kept, exact)
    op, a, b = shape
    return Noisy(num, den, kept, Shape(op, {}, (_shape_of(a), _shape_of(b)), {}))


def _poly(terms: Terms, draws: dict[int, Draw]) -> Shape:
    return Shape("poly", terms, (), draws)  # the value's draws: a superset of the terms' only ever refines more


def _shape_of(value: Number) -> Shape:
    if isinstance(value, Noisy):
        return value.shape
    return _poly({ONE: Fraction(value)}, {})


def add(a: Number, b: Number, factor: int = 1) -> Number:
    """a + b (or a - b with factor -1)."""
    if not isinstance(a, Noisy) and not isinstance(b, Noisy):
        return a + factor * b
    an, ad, adr = _parts(a)
    bn, bd, bdr = _parts(b)
    if ad == bd:
        num, den = _add_terms(an, bn, factor), ad
    else:
        num, den = _add_terms(_mul_terms(an, bd), _mul_terms(bn, ad), factor), _mul_terms(ad, bd)
    return _make(num, den, {**adr, **bdr}, ("add" if factor == 1 else "sub", a, b))


def multiply(a: Number, b: Number) -> Number:
    if not isinstance(a, Noisy) and not isinstance(b, Noisy):
        return a * b
    an, ad, adr = _parts(a)
    bn, bd, bdr = _parts(b)
    return _make(_mul_terms(an, bn), _mul_terms(ad, bd), {**adr, **bdr}, ("mul", a, b))


def divide(a: Number, b: Number) -> Number:
    """a / b, where a division by zero gives 0 (docs/semantics.md)."""
    if not isinstance(b, Noisy):
        return Fraction(0) if b == 0 else multiply(a, 1 / Fraction(b))
    an, ad, adr = _parts(a)
    bn, bd, bdr = _parts(b)
    return _make(_mul_terms(an, bd), _mul_terms(ad, bn), {**adr, **bdr}, ("div", a, b))


def negate(a: Number) -> Number:
    return add(Fraction(0), a, -1)


# ---------------------------------------------------------------- decisions


def _interval(terms: Terms, draws: dict[int, Draw]) -> tuple[Fraction, Fraction]:
    """Exact bounds of a polynomial over the draws' current intervals.

    Affine terms (the common case) are summed as integers over a common
    power-of-two denominator per coefficient denominator; other monomials by
    interval products of Fractions.
    """
    low = high = Fraction(0)
    bounds = {serial: draw_.bounds() for serial, draw_ in draws.items()}
    top = max((b[2] for b in bounds.values()), default=0)
    sums: dict[int, list[int]] = {}  # coefficient denominator -> [low, high] numerators over it * 2^top
    for mono, c in terms.items():
        if len(mono) == 1:
            a, b, known = bounds[mono[0]]
            shift = top - known
            a, b = a << shift, b << shift
            p = c.numerator
            entry = sums.setdefault(c.denominator, [0, 0])
            if p > 0:
                entry[0] += p * a
                entry[1] += p * b
            else:
                entry[0] += p * b
                entry[1] += p * a
            continue
        lo = hi = c
        for serial in mono:
            a, b = draws[serial].interval()
            products = (lo * a, lo * b, hi * a, hi * b)
            lo, hi = min(products), max(products)
        low, high = low + lo, high + hi
    for q, (lo_num, hi_num) in sums.items():
        low += Fraction(lo_num, q << top)
        high += Fraction(hi_num, q << top)
    return low, high


def _refine_least_known(draws: list[Draw], step: int) -> None:
    """Bring every draw up to `step` more digits than the least precise one
    has (draws already refined further, by earlier decisions, wait)."""
    target = min(d.known for d in draws) + step
    for d in draws:
        if d.known < target:
            d.refine(target - d.known)


Interval = tuple[Fraction, Fraction] | None  # None: unbounded (a quotient by an interval holding 0)


def _shape_interval(top: Shape) -> Interval:
    """An interval holding the value `top` computes, at the draws' current
    digits, by interval arithmetic along the computation (each shared operand
    once; a square as the square of one interval, not a product of two)."""
    done: dict[int, Interval] = {}
    stack = [top]
    while stack:
        shape = stack[-1]
        if id(shape) in done:
            stack.pop()
            continue
        waiting = [p for p in shape.parts if id(p) not in done]
        if waiting:
            stack.extend(waiting)
            continue
        stack.pop()
        done[id(shape)] = _node_interval(shape, [done[id(p)] for p in shape.parts])
    return done[id(top)]


#: A value whose expanded numerator has at most this many monomials (over a
#: constant denominator) is also bounded by them, and the two enclosures
#: intersected: where the computation cancels (x y - x y + z^2), the
#: expanded form is the tighter one.
SMALL_POLY = 64


def _value_interval(value: Noisy) -> Interval:
    bounds = _shape_interval(value.shape)
    if value.shape.op == "poly" or set(value.den) != {ONE} or len(value.num) > SMALL_POLY:
        return bounds
    low, high = _interval(value.num, value.draws)
    if bounds is None:
        return low, high
    return max(low, bounds[0]), min(high, bounds[1])


def _node_interval(shape: Shape, parts: list[Interval]) -> Interval:
    if shape.op == "poly":
        return _interval(shape.terms, shape.draws)
    a, b = parts
    if a is None or b is None:
        return None
    if shape.op in ("add", "sub"):
        return (a[0] + b[0], a[1] + b[1]) if shape.op == "add" else (a[0] - b[1], a[1] - b[0])
    if shape.op == "div":
        if b[0] <= 0 <= b[1]:
            return None
        b = (1 / b[1], 1 / b[0])
    elif shape.parts[0] is shape.parts[1]:  # a square is never negative
        low, high = sorted((a[0] * a[0], a[1] * a[1]))
        return (Fraction(0) if a[0] <= 0 <= a[1] else low, high)
    products = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(products), max(products)


def _shape_draws(top: Shape) -> list[Draw]:
    found: dict[int, Draw] = {}
    seen: set[int] = set()
    stack = [top]
    while stack:
        shape = stack.pop()
        if id(shape) not in seen:
            seen.add(id(shape))
            found.update(shape.draws)
            stack.extend(shape.parts)
    return list(found.values())


def sign(value: Number) -> int:
    """-1, 0 or 1: exact for constants, by refinement for noisy values (a
    value that is not the zero polynomial is not 0, with probability 1)."""
    if not isinstance(value, Noisy):
        return (value > 0) - (value < 0)
    draws, step = _shape_draws(value.shape), FIRST_STEP
    while True:
        bounds = _value_interval(value)
        if bounds is not None and bounds[0] > 0:
            return 1
        if bounds is not None and bounds[1] < 0:
            return -1
        _refine_least_known(draws, step)
        step = min(2 * step, MAX_STEP)


def compare(op: str, a: Number, b: Number) -> bool:
    difference = add(a, b, -1)
    if isinstance(difference, Noisy) and op in ("==", "!="):
        return op == "!="  # not the same polynomial: equal with probability 0
    s = sign(difference)
    return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[op]


def absolute(a: Number) -> Number:
    return negate(a) if sign(a) < 0 else a


def maximum(a: Number, b: Number) -> Number:
    return a if compare(">=", a, b) else b


def minimum(a: Number, b: Number) -> Number:
    return a if compare("<=", a, b) else b


def to_float(value: Noisy) -> float:
    """The double nearest to the exact value (rounding is monotone, so an
    interval whose ends round alike decides it)."""
    draws = _shape_draws(value.shape)
    while True:
        bounds = _value_interval(value)
        if bounds is not None:
            low, high = _nearest(bounds[0]), _nearest(bounds[1])
            if low == high:
                return low
        _refine_least_known(draws, MAX_STEP)  # a double needs about 53 digits


def _nearest(x: Fraction) -> float:
    """The nearest double, saturated at +/- DBL_MAX (no infinity is ever released)."""
    try:
        return float(x)
    except OverflowError:
        return sys.float_info.max if x > 0 else -sys.float_info.max  # never float(x): it overflows


def round_to_grid(value: Number, exponent: int) -> Fraction:
    """The multiple of 2^exponent nearest to the exact value (floor(v / g + 1/2)):
    rounding is monotone, so an interval whose ends round alike decides it; a
    tie has probability 0 for a value with a density (post-processing)."""
    grid = Fraction(2) ** exponent
    if not isinstance(value, Noisy):
        return math.floor(value / grid + Fraction(1, 2)) * grid
    draws, step = _shape_draws(value.shape), FIRST_STEP
    while True:
        bounds = _value_interval(value)
        if bounds is not None:
            low, high = (math.floor(b / grid + Fraction(1, 2)) for b in bounds)
            if low == high:
                return low * grid
        _refine_least_known(draws, step)
        step = min(2 * step, MAX_STEP)
