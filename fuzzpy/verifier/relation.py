"""The neighbour relation on concrete inputs: do two inputs satisfy the `requires`?

A mechanism's claim speaks about pairs (x, x') of inputs where x satisfies
every `requires` (`dist(e)` read as e in x' minus e in x), x' satisfies the
ones that do not mention distances (both inputs lie in the domain), vectors
keep their length, and each vector moves within its norm (`vec[inf]`: every
entry by at most 1; `vec[1]`: by at most 1 in total; `vec[2]`: the squares
by at most 1 in total). The refuter reports only pairs this module accepts,
and the neighbour harness of the tests draws its inputs from it.
Expressions are read as the runtime reads them (docs/semantics.md): an
entry outside a vector is 0, a division by 0 is 0.
"""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.language.syntax import (
    Binary,
    BoolLit,
    Call,
    Dist,
    Expr,
    Forall,
    If,
    Index,
    NumLit,
    Unary,
    Var,
)
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.walk import sub_expressions

Scalar = Fraction | bool
Vectors = dict[str, list[Fraction]]


def evaluate(expr: Expr, env: dict[str, Scalar], dists: dict[str, Fraction] | None = None,
             vectors: Vectors | None = None, deltas: Vectors | None = None) -> Scalar:
    """The value of a precondition (or claim) at concrete inputs and distances.

    Raises KeyError when it mentions something not given.
    """
    dists, vectors, deltas = dists or {}, vectors or {}, deltas or {}

    def go(e: Expr, bound: dict[str, Scalar]) -> Scalar:
        if isinstance(e, (NumLit, BoolLit)):
            return e.value
        if isinstance(e, Var):
            return bound[e.name] if e.name in bound else env[e.name]
        if isinstance(e, Dist):
            inner = e.expr
            if isinstance(inner, Var):
                return dists.get(inner.name, Fraction(0))
            if isinstance(inner, Index) and isinstance(inner.base, Var):
                return _entry(deltas.get(inner.base.name, []), go(inner.index, bound))
            raise KeyError("dist() of this expression")
        if isinstance(e, Index) and isinstance(e.base, Var):
            return _entry(vectors[e.base.name], go(e.index, bound))
        if isinstance(e, Unary):
            inner = go(e.operand, bound)
            return -inner if e.op == "-" else not inner
        if isinstance(e, If):
            return go(e.then if go(e.cond, bound) else e.orelse, bound)
        if isinstance(e, Call):
            return _call(e, [go(a, bound) for a in e.args] if e.func != "len" else [], vectors)
        if isinstance(e, Binary):
            return _binary(e.op, lambda: go(e.left, bound), lambda: go(e.right, bound))
        if isinstance(e, Forall):
            length = max((len(v) for v in (*vectors.values(), *deltas.values())), default=0)
            return all(go(e.body, {**bound, e.var: Fraction(i)}) for i in range(length))
        raise KeyError(type(e).__name__)

    return go(expr, {})


def _entry(values: list[Fraction], index: Scalar) -> Fraction:
    """Entry ``index``, or 0 outside the vector (zero padding, as at run time)."""
    if isinstance(index, bool) or not isinstance(index, Fraction) or index.denominator != 1:
        return Fraction(0)
    k = int(index)
    return values[k] if 0 <= k < len(values) else Fraction(0)


def _call(e: Call, args: list[Scalar], vectors: Vectors) -> Scalar:
    if e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], Var):
        return Fraction(len(vectors[e.args[0].name]))
    if e.func == "abs" and len(args) == 1:
        return abs(args[0])
    if e.func in ("max", "min") and len(args) == 2:
        return max(args) if e.func == "max" else min(args)  # type: ignore[type-var]
    raise KeyError(f"call of {e.func}")


def _binary(op: str, left, right) -> Scalar:  # noqa: ANN001 - thunks
    if op == "&&":
        return bool(left()) and bool(right())
    if op == "||":
        return bool(left()) or bool(right())
    if op == "==>":
        return (not left()) or bool(right())
    a, b = left(), right()
    if op == "/":
        return Fraction(0) if b == 0 else a / b
    table = {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
        "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
        "==": lambda: a == b, "!=": lambda: a != b,
    }
    return table[op]()


def mentions_distance(expr: Expr) -> bool:
    return any(isinstance(e, Dist) for e in sub_expressions(expr))


def within_norm(norm: str, delta: list[Fraction]) -> bool:
    if norm == "1":
        return sum(abs(d) for d in delta) <= 1
    if norm == "2":
        return sum(d * d for d in delta) <= 1
    return all(abs(d) <= 1 for d in delta)


def neighbours(info: MechanismInfo, params: dict[str, Scalar], other_params: dict[str, Scalar],
               vectors: Vectors, other_vectors: Vectors) -> bool:
    """Is (params, vectors) -> (other_params, other_vectors) a pair the claim speaks about?"""
    if set(vectors) != set(info.vectors) or set(other_vectors) != set(info.vectors):
        return False
    deltas: Vectors = {}
    for name, norm in info.vectors.items():
        one, two = vectors[name], other_vectors[name]
        if len(one) != len(two):
            return False
        deltas[name] = [b - a for a, b in zip(one, two, strict=True)]
        if not within_norm(norm, deltas[name]):
            return False
    from fuzzpy.verifier.prover import private_scalars

    private = private_scalars(info)
    dists = {}
    for name in info.scalars:
        a, b = params[name], other_params[name]
        if name not in private or isinstance(a, bool) or isinstance(b, bool):
            if a != b:  # public parameters are the same in both runs
                return False
            continue
        dists[name] = b - a
    try:
        for req in info.decl.requires:
            if not evaluate(req, params, dists, vectors, deltas):
                return False
            if not mentions_distance(req) and not evaluate(req, other_params, {}, other_vectors, {}):
                return False
    except (KeyError, TypeError, ZeroDivisionError):
        return False
    return True
