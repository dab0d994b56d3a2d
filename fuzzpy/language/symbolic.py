"""Polynomials over a definition's static parameters: symbolic privacy costs.

A `def` whose `num` parameter stands in the epsilon of `laplace[..]` or
`expmech[..]` is checked once with that parameter as a symbol, in the manner
of DFuzz's sensitivity-indexed types (Gaboardi, Haeberlen, Hsu, Narayan &
Pierce, "Linear dependent types for differential privacy", POPL 2013, where
sensitivities are index terms over index variables). The index terms here are
polynomials with exact rational coefficients over parameter names: an epsilon
such as `eps / 2` or `e1 + 3 * e2`, and a cost such as `2 * eps + 0.1`.

Every symbol stands for a positive real (each call is refused unless its
argument is a positive static number, or a polynomial of this kind), so a
polynomial whose coefficients are all positive is positive at every call, and
one whose coefficients are below another's, term by term, is below it.
Evaluation at the call's numbers is exact (`Fraction`), so instantiating a
symbolic cost gives exactly the number the checker would find for the
program written with those numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from fuzzpy.language.limits import MAX_STATIC_DEGREE, MAX_STATIC_TERMS, in_static_range
from fuzzpy.support.records import frozen

#: a product of symbols: (name, power) pairs sorted by name, powers non-zero
#: (a negative power divides: `0.1 / n`, a Laurent monomial; every symbol is
#: positive, so the term-by-term tests below stay sufficient)
Monomial = tuple[tuple[str, int], ...]


@frozen
class Poly:
    """sum of coefficient * monomial, canonical: sorted terms, no zero coefficient."""

    terms: tuple[tuple[Monomial, Fraction], ...] = ()

    # -- construction
    @staticmethod
    def const(value: Fraction | int) -> Poly:
        value = Fraction(value)
        return Poly((((), value),)) if value != 0 else Poly()

    @staticmethod
    def var(name: str) -> Poly:
        term: tuple[Monomial, Fraction] = (((name, 1),), Fraction(1))
        return Poly((term,))

    @staticmethod
    def _from(table: Mapping[Monomial, Fraction]) -> Poly:
        return Poly(tuple(sorted(((m, c) for m, c in table.items() if c != 0), key=lambda t: _order(t[0]))))

    # -- predicates
    @property
    def is_const(self) -> bool:
        return all(not m for m, _ in self.terms)

    @property
    def value(self) -> Fraction:
        """The constant value (only when `is_const`)."""
        assert self.is_const
        return self.terms[0][1] if self.terms else Fraction(0)

    @property
    def positive(self) -> bool:
        """Positive at every positive value of the symbols: not zero, and
        every coefficient positive (sufficient; a polynomial with a negative
        coefficient is not trusted to stay positive)."""
        return bool(self.terms) and all(c > 0 for _, c in self.terms)

    def at_most(self, other: Poly) -> bool:
        """self <= other at every positive value of the symbols, shown term
        by term: other - self has no negative coefficient (sufficient)."""
        return all(c >= 0 for _, c in (other - self).terms)

    @property
    def degree(self) -> int:
        """The highest total power of a term, dividing symbols counted too
        (0 for a constant)."""
        return max((sum(abs(p) for _, p in m) for m, _ in self.terms), default=0)

    def inverse(self) -> Poly | None:
        """1 / self when self is one term with a positive coefficient (a
        monomial: its inverse is a Laurent monomial); None otherwise."""
        if len(self.terms) != 1 or self.terms[0][1] <= 0:
            return None
        m, c = self.terms[0]
        return Poly((((tuple((name, -power) for name, power in m)), 1 / c),))

    @property
    def divides(self) -> bool:
        """Whether some term divides by a symbol (a negative power)."""
        return any(p < 0 for m, _ in self.terms for _, p in m)

    def out_of_limits(self) -> str | None:
        """Why this polynomial is beyond the bounds every static value keeps
        (`fuzzpy.language.limits`), or None: each coefficient is a static
        number in range (so a constant is one), the degree is at most
        `MAX_STATIC_DEGREE` and there are at most `MAX_STATIC_TERMS` terms,
        so that exact arithmetic on it, and its value at in-range numbers,
        stays cheap."""
        if self.degree > MAX_STATIC_DEGREE:
            return f"it has degree {self.degree}, more than {MAX_STATIC_DEGREE}"
        if len(self.terms) > MAX_STATIC_TERMS:
            return f"it has {len(self.terms)} terms, more than {MAX_STATIC_TERMS}"
        if not all(in_static_range(c) for _, c in self.terms):
            return "a coefficient (or its value) is out of the static range"
        return None

    def symbols(self) -> frozenset[str]:
        return frozenset(name for m, _ in self.terms for name, _ in m)

    # -- algebra
    def __add__(self, other: Poly) -> Poly:
        table: dict[Monomial, Fraction] = dict(self.terms)
        for m, c in other.terms:
            table[m] = table.get(m, Fraction(0)) + c
        return Poly._from(table)

    def __neg__(self) -> Poly:
        return Poly(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def __mul__(self, other: Poly) -> Poly:
        table: dict[Monomial, Fraction] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = _times(m1, m2)
                table[m] = table.get(m, Fraction(0)) + c1 * c2
        return Poly._from(table)

    def scale(self, k: Fraction) -> Poly:
        return Poly._from({m: c * k for m, c in self.terms})

    def evaluate(self, values: Mapping[str, Fraction]) -> Fraction:
        """The exact value at numbers for every symbol (KeyError if one is missing)."""
        total = Fraction(0)
        for m, c in self.terms:
            term = c
            for name, power in m:
                term *= values[name] ** power
            total += term
        return total

    def substitute(self, values: Mapping[str, Poly]) -> Poly:
        """The polynomial with each symbol replaced by a polynomial (symbols
        not in ``values`` stay)."""
        total = Poly()
        for m, c in self.terms:
            term = Poly.const(c)
            for name, power in m:
                base = values.get(name, Poly.var(name))
                if power < 0:
                    inverse = base.inverse()
                    if inverse is None:
                        raise ValueError(f"cannot divide by {base}")
                    base = inverse
                for _ in range(abs(power)):
                    term = term * base
            total = total + term
        return total

    # -- rendering
    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts: list[str] = []
        for m, c in self.terms:
            magnitude = abs(c)
            symbols = " * ".join(name if power == 1 else f"{name}^{power}" for name, power in m if power > 0)
            below = [name if power == -1 else f"{name}^{-power}" for name, power in m if power < 0]
            if below:  # `0.1 / n`, `eps / (n * m)`
                above = " * ".join(x for x in (_number(magnitude) if magnitude != 1 or not symbols else "", symbols) if x)
                under = below[0] if len(below) == 1 else f"({' * '.join(below)})"
                text = f"{above} / {under}"
            elif not m:
                text = _number(magnitude)
            elif magnitude == 1:
                text = symbols
            else:
                text = f"{_number(magnitude)} * {symbols}"
            sign = "-" if c < 0 else "+"
            parts.append(f"{sign} {text}")
        first = parts[0]
        head = first[2:] if first.startswith("+") else f"-{first[2:]}"
        return " ".join([head, *parts[1:]])


def _times(a: Monomial, b: Monomial) -> Monomial:
    powers: dict[str, int] = dict(a)
    for name, power in b:
        powers[name] = powers.get(name, 0) + power
    return tuple(sorted((name, power) for name, power in powers.items() if power != 0))


def _order(m: Monomial) -> tuple[int, Monomial]:
    """Higher degrees first, constants last: `2 * eps + 0.1`."""
    return (-sum(p for _, p in m), m)


def _number(x: Fraction) -> str:
    """A non-negative coefficient as the sensitivity algebra prints it
    (exact, or rounded up: a printed cost is never below the true one)."""
    from fuzzpy.language.sensitivity import Sens

    return str(Sens(x))
