"""The sensitivity algebra: non-negative reals extended with infinity.

Values are exact (`Fraction`) so that no rounding can make a proof unsound;
infinity is a distinct element. The rules of Fuzz (Reed & Pierce, ICFP 2010,
section 3) need:

* addition (contexts of two subterms add), with inf + s = inf;
* scaling s * t, where 0 * inf = 0 (a variable not used at all stays unused
  even under an infinitely sensitive context);
* join (max) for the branches of `case` / `if` and for with-pairs;
* the *case scaling* of Fuzz's case rule: the scrutinee's context is scaled by
  ``case_scale(r)`` = max(r, epsilon > 0), so that a scrutinee used at 0 inside
  infinitely sensitive branches still becomes infinite ("never by less than a
  positive amount", language design section 3).
"""

from __future__ import annotations

import dataclasses
import decimal
import math
from collections.abc import Callable
from fractions import Fraction
from functools import total_ordering

from fuzzpy.language.limits import MAX_MAGNITUDE, MAX_STATIC_BITS, bounded_sensitivity
from fuzzpy.language.symbolic import Poly
from fuzzpy.support.records import frozen


@total_ordering
@frozen
class Sens:
    """A sensitivity: a non-negative exact rational, or infinity, or an
    index term over a definition's `nat` parameters (DFuzz's sensitivity
    indices, Gaboardi et al. POPL 2013: `n * x` is n-sensitive in x).

    A symbolic sensitivity has ``value`` None and its polynomial in ``poly``
    (non-constant, every coefficient positive, so it is positive and grows
    with every symbol). Code that reads only ``value`` sees it as infinite,
    the weaker claim: only `+`, `*`, `join` and the rules that know index
    terms (`as_poly`) read it precisely."""

    value: Fraction | None  # None encodes infinity (or a symbolic value, see ``poly``)
    poly: Poly | None = None
    #: the exact square of the true bound when ``value`` is a square root rounded up
    #: (`checker.typerel.sqrt_sens`), kept through products, so that sqrt(n) sqrt(n)
    #: is known to be n where a ceiling is taken (`ceiling`); None: ``value`` is the bound
    square: Fraction | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # derived sensitivities are rounded up into the static range (sound:
        # a larger sensitivity is a weaker claim); see `fuzzpy.language.limits`
        value = self.value
        if value is None:
            return
        size = value.numerator.bit_length() - value.denominator.bit_length()  # about log2(value)
        if value.denominator.bit_length() > MAX_STATIC_BITS or (size >= 1023 and value > MAX_MAGNITUDE):
            object.__setattr__(self, "value", bounded_sensitivity(value))

    # -- construction
    @staticmethod
    def of(x: int | Fraction | str | Sens) -> Sens:
        if isinstance(x, Sens):
            return x
        if isinstance(x, str) and x.strip() in ("inf", "infinity", "∞"):
            return INF
        value = Fraction(x)
        if value < 0:
            raise ValueError(f"a sensitivity is non-negative, got {value}")
        return Sens(value)

    @staticmethod
    def symbolic(p: Poly) -> Sens:
        """The sensitivity an index term stands for: a number when it is
        constant; infinity when a coefficient is negative (such a term is
        not trusted to bound a sensitivity term by term)."""
        if p.is_const:
            return Sens.of(p.value) if p.value >= 0 else INF
        if any(c <= 0 for _, c in p.terms) or p.out_of_limits() is not None:
            return INF
        return Sens(None, p)

    def as_poly(self) -> Poly | None:
        """The index term of a finite or symbolic sensitivity; None for infinity."""
        if self.poly is not None:
            return self.poly
        return None if self.value is None else Poly.const(self.value)

    # -- predicates
    @property
    def is_inf(self) -> bool:
        """Infinite, or symbolic (read as infinite by rules that need a number)."""
        return self.value is None

    @property
    def is_symbolic(self) -> bool:
        return self.poly is not None

    @property
    def is_zero(self) -> bool:
        return self.value == 0

    # -- algebra
    def __add__(self, other: Sens) -> Sens:
        if self.poly is not None or other.poly is not None:
            return _symbolic(self, other, lambda a, b: a + b)
        if self.value is None or other.value is None:
            return INF
        return Sens(self.value + other.value)

    def __mul__(self, other: Sens) -> Sens:
        """Scaling; 0 * inf = 0 (an unused variable stays unused)."""
        if self.is_zero or other.is_zero:
            return ZERO
        if self.poly is not None or other.poly is not None:
            return _symbolic(self, other, lambda a, b: a * b)
        if self.value is None or other.value is None:
            return INF
        if self.square is None and other.square is None:
            return Sens(self.value * other.value)
        # the true bounds' product, squared exactly (the rounded value stays an upper bound)
        return Sens(self.value * other.value, square=self.exact_square * other.exact_square)

    @property
    def exact_square(self) -> Fraction:
        """The square of the true bound of a finite sensitivity (at most ``value`` squared)."""
        assert self.value is not None
        return self.square if self.square is not None else self.value * self.value

    def ceiling(self, unit: Fraction = Fraction(1), strict: bool = False) -> int:
        """The least integer k with k * unit at least (``strict``: above) the
        true bound of a finite sensitivity, ``unit`` > 0: exact for a rounded
        square root (so sqrt(7) sqrt(7) gives 7, not the 8 its rounded product
        would), from its square."""
        assert self.value is not None and unit > 0
        if self.square is None:
            ratio = self.value / unit
            return math.floor(ratio) + 1 if strict else math.ceil(ratio)
        target = self.square / (unit * unit)  # k^2 >= (or >) target, k >= 0
        root = math.isqrt(target.numerator // target.denominator)  # floor(sqrt(target)), or just below
        while root * root < target or strict and root * root == target:
            root += 1
        return root

    def floor(self) -> int:
        """The largest integer at most the true bound of a finite sensitivity."""
        assert self.value is not None
        if self.square is None:
            return math.floor(self.value)
        root = math.isqrt(self.square.numerator // self.square.denominator)
        while (root + 1) * (root + 1) <= self.square:
            root += 1
        return root

    def join(self, other: Sens) -> Sens:
        if self.poly is not None or other.poly is not None:
            # max of two index terms with non-negative coefficients over
            # non-negative symbols is at most their coefficient-wise max
            return _symbolic(self, other, _coefficient_max)
        larger, smaller = (self, other) if self >= other else (other, self)
        if larger.square is not None and smaller.value is not None and smaller.exact_square > larger.square:
            return Sens(larger.value)  # the other's true bound may be the larger one: the rounded value only
        return larger

    def __lt__(self, other: Sens) -> bool:
        if self.value is None:
            return False
        if other.value is None:
            return True
        return self.value < other.value

    # -- rendering
    def to_json(self) -> float | str:
        if self.poly is not None:
            return str(self.poly)
        if self.value is None:
            return "inf"
        if self.value.denominator == 1:
            return int(self.value)
        approx = float(self.value)  # within range: see __post_init__
        # JSON numbers are decimal text: "0.1" is exact; otherwise never print
        # a bound below the exact value
        if Fraction(repr(approx)) != self.value and Fraction(approx) < self.value:
            approx = math.nextafter(approx, math.inf)
        return approx

    def __str__(self) -> str:
        if self.poly is not None:
            return str(self.poly)
        if self.value is None:
            return "inf"
        if self.value.denominator == 1:
            return str(self.value.numerator)
        exact = _exact_decimal(self.value)
        if exact is not None:
            return exact
        text = f"{self.value.numerator}/{self.value.denominator}"
        if len(text) <= 9:
            return text
        return _decimal_upward(self.value)


def _symbolic(a: Sens, b: Sens, op: Callable[[Poly, Poly], Poly]) -> Sens:
    left, right = a.as_poly(), b.as_poly()
    if left is None or right is None:
        return INF
    return Sens.symbolic(op(left, right))


def _coefficient_max(a: Poly, b: Poly) -> Poly:
    table = dict(a.terms)
    for m, c in b.terms:
        table[m] = max(table.get(m, Fraction(0)), c)
    return Poly._from(table)


def _exact_decimal(value: Fraction, max_digits: int = 12) -> str | None:
    """`0.125` for 1/8: the exact decimal, when it is short."""
    rest, places = value.denominator, 0
    for prime in (2, 5):
        count = 0
        while rest % prime == 0:
            rest //= prime
            count += 1
        places = max(places, count)
    if rest != 1 or places > max_digits:
        return None
    digits = str(abs(value.numerator) * 10**places // value.denominator).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")


def _decimal_upward(value: Fraction, digits: int = 6) -> str:
    """A short decimal at least ``value`` (rounded up, so a printed bound
    is never below the exact one)."""
    context = decimal.Context(prec=digits, rounding=decimal.ROUND_CEILING)
    quotient = context.divide(decimal.Decimal(value.numerator), decimal.Decimal(value.denominator))
    return format(quotient, "f") if quotient.adjusted() >= -5 else format(quotient, "e")


ZERO = Sens(Fraction(0))
ONE = Sens(Fraction(1))
INF = Sens(None)


def case_scale(r: Sens) -> Sens:
    """Fuzz's case rule scales the scrutinee by r, but never by 0: a branch
    that ignores its bound variable still reveals which branch was taken.
    So r = 0 becomes 1 and any other r stays r. Any positive floor is sound:
    a scrutinee at finite distance stays on its branch (sums and lists of
    other lengths are infinitely far), and a positive factor keeps an
    infinitely sensitive scrutinee (0 * inf = 0 otherwise) infinite."""
    return ONE if r.is_zero else r


def total(values: list[Sens]) -> Sens:
    result = ZERO
    for value in values:
        result = result + value
    return result
