"""Relations between types: subtyping, joining branch types, norm conversions.

Subtyping is Fuzz's: `int <: num` (same metric), and an s-sensitive function
is also an s'-sensitive one for s <= s' (contravariant in its parameter).

Vector norms (language design, sections 2 and 5). For x in R^n:
    ||x||_inf <= ||x||_2 <= ||x||_1 <= sqrt(n) ||x||_2 <= n ||x||_inf
so converting a value between `vec[p]` metrics multiplies its sensitivity by
1 (1 -> 2, 1 -> inf, 2 -> inf), sqrt(n) (2 -> 1, inf -> 2) or n (inf -> 1).
Square roots are rounded *up* to a rational, so a bound is never understated.
"""

from __future__ import annotations

import math
from fractions import Fraction

from fuzzpy.checker.lengths import Lengths
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import ONE, Sens

_SQRT_DIGITS = 10**6


def sqrt_upper(x: Fraction) -> Fraction:
    """The exact square root when it is rational, else a rational just above it."""
    if x < 0:
        raise ValueError("square root of a negative number")
    num_root, den_root = math.isqrt(x.numerator), math.isqrt(x.denominator)
    if num_root * num_root == x.numerator and den_root * den_root == x.denominator:
        return Fraction(num_root, den_root)
    scaled = x * _SQRT_DIGITS * _SQRT_DIGITS
    root = math.isqrt(math.ceil(scaled))
    if root * root < scaled:
        root += 1
    return Fraction(root, _SQRT_DIGITS)


def sqrt_sens(x: Fraction) -> Sens:
    """sqrt(x) as a sensitivity: rounded up (`sqrt_upper`), with its exact
    square kept when irrational (`Sens.square`, read by `Sens.ceiling`)."""
    root = sqrt_upper(x)
    return Sens(root) if root * root == x else Sens(root, square=x)


def norm_factor(source: str, target: str, length: int | None) -> Sens | None:
    """The factor a sensitivity is multiplied by when a `vec[source]` value is
    read in the `vec[target]` metric; None when it needs an unknown length."""
    if source == target or target == "inf" or (source, target) == ("1", "2"):
        return ONE
    if length is None:
        return None
    # Never 0, even for the empty vector: what the checker scales by 0 is not
    # evaluated at run time (docs/semantics.md), and a coercion is invisible there.
    n = Fraction(max(length, 1))
    if (source, target) == ("inf", "1"):
        return Sens(n)
    return sqrt_sens(n)  # inf -> 2, 2 -> 1


def subtype(actual: T.Type, expected: T.Type, lengths: Lengths) -> bool:
    """Whether ``actual`` fits ``expected``; vector lengths are unified (and
    the unifications undone when the answer is no)."""
    mark = lengths.mark()
    if _subtype(actual, expected, lengths):
        return True
    lengths.undo(mark)
    return False


def same_type(a: T.Type, b: T.Type, lengths: Lengths) -> bool:
    mark = lengths.mark()
    if _subtype(a, b, lengths) and _subtype(b, a, lengths):
        return True
    lengths.undo(mark)
    return False


def _subtype(actual: T.Type, expected: T.Type, lengths: Lengths) -> bool:
    if isinstance(actual, T.TVec) and isinstance(expected, T.TVec):
        return actual.norm == expected.norm and lengths.unify(actual.length, expected.length)
    if isinstance(actual, T.TInt) and isinstance(expected, T.TNum):
        return True
    if isinstance(actual, T.TFun) and isinstance(expected, T.TFun):
        return (
            _subtype(expected.param, actual.param, lengths)
            and actual.sens <= expected.sens
            and _subtype(actual.result, expected.result, lengths)
        )
    if isinstance(actual, _BASE) or isinstance(expected, _BASE):
        return type(actual) is type(expected)
    pairs = _components(actual, expected)
    return pairs is not None and all(_subtype(a, e, lengths) for a, e in pairs)


_BASE = (T.TNum, T.TInt, T.TBool, T.TString, T.TUnit)


def join_types(a: T.Type, b: T.Type, lengths: Lengths) -> T.Type | None:
    """The least type both branches fit in, if any."""
    if subtype(a, b, lengths):
        return b
    if subtype(b, a, lengths):
        return a
    if isinstance(a, T.TFun) and isinstance(b, T.TFun) and same_type(a.param, b.param, lengths):
        result = join_types(a.result, b.result, lengths)
        return None if result is None else T.TFun(a.param, a.sens.join(b.sens), result)
    return None


def _components(a: T.Type, b: T.Type) -> list[tuple[T.Type, T.Type]] | None:
    if isinstance(a, T.TTuple) and isinstance(b, T.TTuple) and len(a.items) == len(b.items):
        return list(zip(a.items, b.items, strict=True))
    if isinstance(a, T.TWith) and isinstance(b, T.TWith):
        return [(a.left, b.left), (a.right, b.right)]
    if isinstance(a, T.TSum) and isinstance(b, T.TSum):
        return [(a.left, b.left), (a.right, b.right)]
    if isinstance(a, T.TRecord) and isinstance(b, T.TRecord):
        if [n for n, _ in a.fields] != [n for n, _ in b.fields]:
            return None
        return [(x, y) for (_, x), (_, y) in zip(a.fields, b.fields, strict=True)]
    for kind in (T.TList, T.TBag):
        if isinstance(a, kind) and isinstance(b, kind):
            return [(a.elem, b.elem)]
    if isinstance(a, T.TFuzzy) and isinstance(b, T.TFuzzy):
        return [(a.inner, b.inner)]
    return None


def is_numeric(t: T.Type) -> bool:
    return isinstance(t, (T.TNum, T.TInt))


def is_number_list(t: T.Type) -> bool:
    return isinstance(t, T.TList) and is_numeric(t.elem)


def contains_fuzzy(t: T.Type) -> bool:
    if isinstance(t, T.TFuzzy):
        return True
    pairs = _components(t, t)
    return pairs is not None and any(contains_fuzzy(a) for a, _ in pairs)


def contains_function(t: T.Type) -> bool:
    if isinstance(t, T.TFun):
        return True
    pairs = _components(t, t)
    return pairs is not None and any(contains_function(a) for a, _ in pairs)
