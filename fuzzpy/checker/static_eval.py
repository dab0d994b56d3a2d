"""Evaluating the static parts of a mechanism's interface at a call:
its privacy claim and preconditions, given the call's static arguments; and
recognising the preconditions that bound how far private inputs move.

Scope (the one the verifier proves in): inside a mechanism's `requires` and
`privacy`, a parameter's name means the parameter, never a top-level
constant of the same name. At a call the parameters stand for the call's
arguments: `call_scope` maps each parameter to its argument's static value
and leaves out a parameter whose argument is not static, so that an
expression needing it cannot be evaluated (and the call is refused), instead
of silently reading a constant the parameter hides.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from fuzzpy.checker.elaborate import in_range, static_arith
from fuzzpy.checker.terms import free_vars
from fuzzpy.language import syntax as S
from fuzzpy.language.sensitivity import Sens
from fuzzpy.support.records import frozen

Value = Fraction | bool | None

_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def call_scope(
    constants: Mapping[str, Fraction],
    params: tuple[S.Param, ...],
    statics: Mapping[str, Fraction],
    lengths: Mapping[str, int],
) -> dict[str, Fraction]:
    """The names a mechanism's claim and preconditions see at one call: the
    constants its parameters do not hide, the parameters whose arguments are
    static, and `len(q)` for vector arguments of static length."""
    hidden = {p.name for p in params}
    scope = {name: value for name, value in constants.items() if name not in hidden}
    scope.update({name: value for name, value in statics.items() if name in hidden})
    scope.update({length_key(name): Fraction(n) for name, n in lengths.items() if name in hidden})
    return scope


def evaluate(expr: S.Expr, env: Mapping[str, Fraction]) -> Value:
    """The exact value of ``expr`` over static numbers, or None."""
    if isinstance(expr, S.NumLit):
        return in_range(expr.value, expr.span)
    if isinstance(expr, S.BoolLit):
        return expr.value
    if isinstance(expr, S.Var):
        return env.get(expr.name)
    if isinstance(expr, S.Unary):
        inner = evaluate(expr.operand, env)
        if expr.op == "-" and isinstance(inner, Fraction):
            return -inner
        if expr.op in ("not", "!") and isinstance(inner, bool):
            return not inner
        return None
    if isinstance(expr, S.Call) and expr.func == "len" and len(expr.args) == 1 and isinstance(expr.args[0], S.Var):
        return env.get(length_key(expr.args[0].name))
    if isinstance(expr, S.Call) and expr.func == "abs" and len(expr.args) == 1:
        inner = evaluate(expr.args[0], env)
        return abs(inner) if isinstance(inner, Fraction) else None
    if isinstance(expr, S.Binary):
        return _binary(expr, env)
    return None


def length_key(name: str) -> str:
    """Where a vector argument's static length is kept in the environment."""
    return f"len({name})"


def _binary(expr: S.Binary, env: Mapping[str, Fraction]) -> Value:
    left, right = evaluate(expr.left, env), evaluate(expr.right, env)
    if expr.op in ("&&", "||"):
        if isinstance(left, bool) and isinstance(right, bool):
            return (left and right) if expr.op == "&&" else (left or right)
        return None
    if not isinstance(left, Fraction) or not isinstance(right, Fraction):
        return None
    if expr.op in _COMPARE:
        return bool(_COMPARE[expr.op](left, right))
    if expr.op == "/" and right == 0:
        return None
    if expr.op in ("+", "-", "*", "/"):
        return static_arith(expr.op, left, right, expr)
    return None


def mentions_dist(expr: S.Expr) -> bool:
    stack: list[object] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, S.Dist):
            return True
        if isinstance(node, tuple):
            stack.extend(node)
        elif hasattr(node, "__dataclass_fields__"):
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__ if f != "span")
    return False


def conjuncts(req: S.Expr) -> list[S.Expr]:
    """`a && b` as its parts (each precondition is read on its own)."""
    if isinstance(req, S.Binary) and req.op == "&&":
        return conjuncts(req.left) + conjuncts(req.right)
    return [req]


@frozen
class Bound:
    """How far a private input may move: `abs(dist(x)) <= value`, or `<`
    when ``strict``. A sensitivity s meets `<= c` when s <= c and `< c` only
    when s < c (an infinite sensitivity meets neither)."""

    value: Fraction
    strict: bool = False

    def admits(self, sens: Sens) -> bool:
        if sens.value is None:
            return False
        return sens.value < self.value if self.strict else sens.value <= self.value

    def __str__(self) -> str:
        shown = str(Sens(self.value)) if self.value >= 0 else str(self.value)
        return f"less than {shown}" if self.strict else f"at most {shown}"


#: `abs(dist(x)) OP c` read as a bound, and `c OP abs(dist(x))` mirrored.
_UPPER = {"<=": False, "<": True}
_MIRRORED = {">=": False, ">": True}


def private_bound_shape(req: S.Expr) -> tuple[str, S.Expr, bool] | None:
    """Recognise `abs(dist(x)) <= c`, `abs(dist(x)) < c`, their mirrors
    `c >= abs(dist(x))`, `c > abs(dist(x))`, and the same under
    `forall i.` with `q[i]` for x. Returns (x, c, strict); c is evaluated at
    each call, in the call's scope."""
    index = None
    if isinstance(req, S.Forall):
        index, req = req.var, req.body
    if not isinstance(req, S.Binary):
        return None
    if req.op in _UPPER:
        target, bound, strict = req.left, req.right, _UPPER[req.op]
    elif req.op in _MIRRORED:
        target, bound, strict = req.right, req.left, _MIRRORED[req.op]
    else:
        return None
    if isinstance(target, S.Call) and target.func == "abs" and len(target.args) == 1:
        target = target.args[0]
    elif isinstance(target, S.App) and isinstance(target.func, S.Var) and target.func.name == "abs":
        target = target.arg
    else:
        return None
    if not isinstance(target, S.Dist) or mentions_dist(bound):
        return None
    if index is not None and index in free_vars(bound):
        return None  # a bound that varies with the entry: not one sensitivity bound
    inner = target.expr
    if isinstance(inner, S.Index):
        inner = inner.base
    if not isinstance(inner, S.Var):
        return None
    return inner.name, bound, strict
