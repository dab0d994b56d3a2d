"""From surface syntax to the checker's values: static numbers and types.

Static numbers are exact `Fraction`s (or infinity, only where a sensitivity is
expected): literals, top-level `let` constants and arithmetic over them.
Surface types (`fuzzpy.language.syntax.TypeExpr`) become semantic types
(`fuzzpy.language.types`) once `type` aliases are resolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from fuzzpy.checker.errors import CheckError
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.limits import MAX_STATIC_BITS, MAX_STATIC_COUNT, in_static_range
from fuzzpy.language.sensitivity import INF, ONE, Sens
from fuzzpy.language.source import Span


def static_value(expr: S.Expr, constants: Mapping[str, Fraction]) -> Fraction | None:
    """The exact value of a static expression, or None if it is not static.
    Every intermediate value is within `fuzzpy.language.limits` (FZ217 otherwise)."""
    if isinstance(expr, S.NumLit):
        return in_range(expr.value, expr.span)
    if isinstance(expr, S.Var):
        return constants.get(expr.name)
    if isinstance(expr, S.Unary) and expr.op == "-":
        inner = static_value(expr.operand, constants)
        return None if inner is None else -inner
    if isinstance(expr, S.Ann):
        return static_value(expr.expr, constants)
    if isinstance(expr, S.Binary) and expr.op in ("+", "-", "*", "/"):
        left = static_value(expr.left, constants)
        right = static_value(expr.right, constants)
        if left is None or right is None:
            return None
        return static_arith(expr.op, left, right, expr)
    return None


def static_arith(op: str, left: Fraction, right: Fraction, expr: S.Expr) -> Fraction:
    """`left op right` on static numbers, exactly, refused out of range
    (operands in range have at most 1000 bits, so this is always cheap)."""
    if op == "/" and right == 0:
        raise CheckError("FZ203", "division by zero in a static expression", expr.span)
    if op == "+":
        value = left + right
    elif op == "-":
        value = left - right
    elif op == "*":
        value = left * right
    else:
        value = left / right
    return in_range(value, expr.span)


def in_range(value: Fraction, span: Span | None) -> Fraction:
    if not in_static_range(value):
        raise _out_of_range(span)
    return value


def _out_of_range(span: Span | None) -> CheckError:
    return CheckError(
        "FZ217",
        "this static value is out of range: a static number is zero or lies between 2.2e-308 and 1.8e308 in "
        f"magnitude (the range of doubles), with a numerator and denominator of at most {MAX_STATIC_BITS} bits",
        span,
        hint="`run` computes with doubles, which cannot carry such a number; use smaller constants",
    )


def require_static(expr: S.Expr, constants: Mapping[str, Fraction], what: str) -> Fraction:
    value = static_value(expr, constants)
    if value is None:
        raise CheckError(
            "FZ202",
            f"{what} must be a static number (a literal or a top-level `let` constant)",
            expr.span,
            hint="move the value into a top-level `let` or write it as a literal",
        )
    return value


def static_count(expr: S.Expr, constants: Mapping[str, Fraction], what: str, least: int,
                 most: int = MAX_STATIC_COUNT) -> int:
    """A whole number of rounds or buckets, at least ``least`` and at most
    ``most`` (run carries out each one)."""
    k = require_static(expr, constants, what)
    if k.denominator != 1 or k < least:
        raise CheckError("FZ202", f"{what} must be a whole number of at least {least}, got {Sens.of(abs(k)) if k >= 0 else k}", expr.span)
    if k > most:
        raise CheckError(
            "FZ217",
            f"{what} is {k}, more than the {most:,} that `run` carries out",
            expr.span,
            hint="use fewer rounds or buckets",
        )
    return int(k)


def static_sens(expr: S.Expr, constants: Mapping[str, Fraction], what: str) -> Sens:
    """A sensitivity written in the source: a static non-negative number or `inf`."""
    if isinstance(expr, S.InfLit) or (isinstance(expr, S.Var) and expr.name == "inf"):
        return INF
    value = require_static(expr, constants, what)
    if value < 0:
        raise CheckError("FZ202", f"{what} must be non-negative, got {value}", expr.span)
    return Sens(value)


def positive_static(expr: S.Expr, constants: Mapping[str, Fraction], what: str) -> Fraction:
    value = require_static(expr, constants, what)
    if value <= 0:
        shown = f"-{Sens.of(-value)}" if value < 0 else "0"
        raise CheckError("FZ202", f"{what} must be positive, got {shown}", expr.span)
    return value


# ---------------------------------------------------------------- types

_BASE: dict[str, T.Type] = {
    "num": T.NUM,
    "real": T.NUM,
    "int": T.INT,
    "nat": T.INT,  # a `def`'s `(n : nat)` is a static index (driver); elsewhere a whole number
    "bool": T.BOOL,
    "string": T.STRING,
    "unit": T.UNIT,
}


def elaborate(
    ty: S.TypeExpr, aliases: Mapping[str, T.Type], constants: Mapping[str, Fraction]
) -> T.Type:
    """Resolve a surface type. A distribution may only be the result of a
    definition or function: inside data (a tuple, record, sum, list, bag, or
    another distribution) its cost would travel with a value that is charged
    nothing, so such types are refused."""
    resolved = _elaborate(ty, aliases, constants)
    for component in _data_components(resolved):
        if isinstance(component, T.TFuzzy):
            raise CheckError(
                "FZ213",
                f"`{resolved}` stores a distribution inside data: only a definition or function may return one",
                ty.span,
                hint="`sample` the distribution and store the value, or return the distribution itself",
            )
    return resolved


def _data_components(ty: T.Type) -> list[T.Type]:
    if isinstance(ty, T.TTuple):
        return list(ty.items)
    if isinstance(ty, (T.TWith, T.TSum)):
        return [ty.left, ty.right]
    if isinstance(ty, T.TRecord):
        return [t for _, t in ty.fields]
    if isinstance(ty, (T.TList, T.TBag)):
        return [ty.elem]
    if isinstance(ty, T.TFuzzy):
        return [ty.inner]
    return []


def _elaborate(ty: S.TypeExpr, aliases: Mapping[str, T.Type], constants: Mapping[str, Fraction]) -> T.Type:
    if isinstance(ty, S.TyName):
        if ty.name in _BASE:
            return _BASE[ty.name]
        if ty.name in aliases:
            return aliases[ty.name]
        raise CheckError("FZ204", f"unknown type `{ty.name}`", ty.span)
    if isinstance(ty, S.TyTuple):
        return T.TTuple(tuple(elaborate(t, aliases, constants) for t in ty.items))
    if isinstance(ty, S.TyWith):
        return T.TWith(elaborate(ty.left, aliases, constants), elaborate(ty.right, aliases, constants))
    if isinstance(ty, S.TySum):
        return T.TSum(elaborate(ty.left, aliases, constants), elaborate(ty.right, aliases, constants))
    if isinstance(ty, S.TyRecord):
        names = [n for n, _ in ty.fields]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise CheckError("FZ205", f"the field `{duplicate}` appears twice in a record type", ty.span)
        return T.TRecord(tuple((n, elaborate(t, aliases, constants)) for n, t in ty.fields))
    if isinstance(ty, S.TyList):
        return T.TList(elaborate(ty.elem, aliases, constants), ty.matrix)
    if isinstance(ty, S.TyVec):
        if ty.norm not in ("1", "2", "inf"):
            raise CheckError("FZ206", f"`vec[{ty.norm}]`: the norm must be 1, 2 or inf", ty.span)
        elem = elaborate(ty.elem, aliases, constants)
        if not isinstance(elem, (T.TNum, T.TInt)):
            raise CheckError("FZ206", f"vectors hold numbers, not `{elem}`", ty.elem.span)
        return T.TVec(ty.norm, T.NUM)
    if isinstance(ty, S.TyBag):
        return T.TBag(elaborate(ty.elem, aliases, constants))
    if isinstance(ty, S.TyFuzzy):
        return T.TFuzzy(elaborate(ty.inner, aliases, constants))
    if isinstance(ty, S.TyFun):
        param = elaborate(ty.param, aliases, constants)
        result = elaborate(ty.result, aliases, constants)
        if ty.arrow == "-o":
            sens = ONE
        elif ty.arrow == "->" or ty.sens is None:
            sens = INF
        else:
            sens = static_sens(ty.sens, constants, "a function's sensitivity")
        return T.TFun(param, sens, result)
    raise CheckError("FZ204", f"unsupported type syntax `{type(ty).__name__}`", getattr(ty, "span", None))


def with_alias(ty: T.Type, name: str) -> T.Type:
    """Remember the alias name of a record type, for printing."""
    if isinstance(ty, T.TRecord):
        return T.TRecord(ty.fields, alias=name)
    return ty
