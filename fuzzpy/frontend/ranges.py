"""Arithmetic ranges `[a .. c]` and `[a, b .. c]`: desugared to list literals.

A range is written sugar for the list literal of its elements (Haskell's
`enumFromThenTo` on exact rationals): `a, a + s, a + 2s, ...` up to and
including `c`, where the step `s` is `b - a` (or 1 without `b`). The tree
builder replaces it by the `ListLit` the written-out list would give, so the
checker, verifier and runtime see exactly a literal list: no new semantics.

Bounds are numeric literals, optionally negated (FZ117 otherwise); every
element is computed exactly with `Fraction`s, so `[0, 0.1 .. 1]` has exactly
11 elements. A step of zero, or one that walks away from `c`, would give an
infinite or empty list (FZ116); a range of more than `MAX_RANGE_LENGTH`
elements is refused before any element is built (FZ118).

Elements are written as integers when every bound is written as an integer,
and with a decimal point otherwise, so the list's element type is the one the
bounds give (`[1.0 .. 3.0]` is `list num`, `[1 .. 3]` is `list int`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from fuzzpy.language import syntax as ast
from fuzzpy.language.limits import MAX_RANGE_LENGTH, in_static_range, literal_value
from fuzzpy.language.source import Span

#: Decimal texts longer than this are written in exponent form instead.
_PLAIN_DIGITS = 40


@dataclass(frozen=True)
class RangeProblem(Exception):
    """A range that cannot be desugared: a code, a message, the span to blame, a hint."""

    code: str
    message: str
    span: Span
    hint: str | None = None


def bound_value(node: object) -> tuple[Fraction, bool] | None:
    """The exact value of a bound and whether it is written as an integer, or
    None when the bound is not a (possibly negated) numeric literal."""
    if isinstance(node, ast.NumLit):
        value = literal_value(node.text)
        return None if value is None else (value, node.is_int)
    if isinstance(node, ast.Unary) and node.op == "-" and isinstance(node.operand, ast.NumLit):
        inner = bound_value(node.operand)
        return None if inner is None else (-inner[0], inner[1])
    return None


def range_length(first: Fraction, step: Fraction, last: Fraction) -> int:
    """How many elements `first, first + step, ...` has up to `last` (0 when none)."""
    if step == 0:
        return 0
    count = (last - first) / step
    return 0 if count < 0 else int(count) + 1  # int() floors a non-negative Fraction


def number_text(value: Fraction, integral: bool) -> str:
    """An exact literal text for `value` >= 0 (a terminating decimal, as every
    element of a range of decimal literals is)."""
    if integral:
        return str(value.numerator)
    whole, rest = divmod(value.numerator, value.denominator)
    if rest == 0:
        return f"{whole}.0"
    if not _terminating(value.denominator):
        raise ValueError(f"{value} is not a terminating decimal")
    scale, power = 1, 10
    while power % value.denominator:  # the least 10^k the denominator divides (a 2^i 5^j)
        scale, power = scale + 1, power * 10
    digits = value.numerator * power // value.denominator
    text = str(digits).rjust(scale + 1, "0")
    plain = f"{text[:-scale]}.{text[-scale:]}".rstrip("0")
    if len(plain) <= _PLAIN_DIGITS:
        return plain
    return f"{digits}e-{scale}"


def element(value: Fraction, integral: bool, span: Span) -> ast.Expr:
    """The node the written-out element would parse to (`-3` is a negation)."""
    literal = ast.NumLit(number_text(abs(value), integral), span)
    return ast.Unary("-", literal, span) if value < 0 else literal


def _terminating(denominator: int) -> bool:
    """Whether 1/denominator is a terminating decimal (denominator = 2^i 5^j)."""
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    return denominator == 1


def desugar(bounds: list[ast.Expr], span: Span) -> tuple[ast.Expr, ...]:
    """The elements of `[a .. c]` (bounds `[a, c]`) or `[a, b .. c]` (`[a, b, c]`).

    Generated elements carry the span of the whole range; the written first
    (and second) element keep their own."""
    values: list[Fraction] = []
    integral = True
    for bound in bounds:
        found = bound_value(bound)
        if found is None:
            raise RangeProblem(
                "FZ117",
                "a bound of a range `[a, b .. c]` must be a number written out (a literal, "
                "possibly negated)",
                bound.span,
                hint="write the number itself, or write the list out element by element",
            )
        values.append(found[0])
        integral = integral and found[1]
    first, last = values[0], values[-1]
    step = values[1] - first if len(values) == 3 else Fraction(1)
    count = range_length(first, step, last)
    if count == 0:
        why = "its step is zero" if step == 0 else (
            f"its step {_show(step)} moves from {_show(first)} away from its last bound {_show(last)}")
        raise RangeProblem(
            "FZ116", f"this range is empty or endless: {why}", span,
            hint="write `[a, b .. c]` with b - a the step, moving from a towards c "
            "(`[10, 9 .. 1]` counts down)",
        )
    if count > MAX_RANGE_LENGTH:
        raise RangeProblem(
            "FZ118", f"this range has {count} elements, more than the {MAX_RANGE_LENGTH} allowed",
            span, hint="take a larger step",
        )
    items: list[ast.Expr] = []
    for index in range(count):
        if index < len(bounds) - 1:
            written = bound_value(bounds[index])
            if integral or (written is not None and not written[1]):
                items.append(bounds[index])  # as written (its span, its spelling)
            else:  # `1` in `[1 .. 3.5]` is the num 1.0, as the other elements are (review s29c)
                items.append(element(first + index * step, False, bounds[index].span))
            continue
        value = first + index * step
        if value != 0 and not in_static_range(value):
            raise RangeProblem(
                "FZ115", f"the element {_show(value)} of this range is out of range "
                "(zero or magnitude 2.2e-308 to 1.8e308)", span,
            )
        items.append(element(value, integral, span))
    return tuple(items)


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(float(value))
