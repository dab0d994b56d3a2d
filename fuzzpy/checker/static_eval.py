"""Evaluating the static parts of a mechanism's interface at a call:
its privacy claim and public preconditions, given the call's static
arguments; and recognising the preconditions that bound private inputs."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from fuzzpy import syntax as S
from fuzzpy.checker.elaborate import static_sens
from fuzzpy.checker.errors import CheckError
from fuzzpy.sensitivity import Sens

Value = Fraction | bool | None

_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def evaluate(expr: S.Expr, env: Mapping[str, Fraction]) -> Value:
    """The exact value of ``expr`` over static numbers, or None."""
    if isinstance(expr, S.NumLit):
        return expr.value
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
    if expr.op == "+":
        return left + right
    if expr.op == "-":
        return left - right
    if expr.op == "*":
        return left * right
    if expr.op == "/":
        return None if right == 0 else left / right
    return None


def free_names(expr: S.Expr) -> set[str]:
    names: set[str] = set()
    stack: list[object] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, S.Var):
            names.add(node.name)
        elif isinstance(node, tuple):
            stack.extend(node)
        elif hasattr(node, "__dataclass_fields__"):
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__ if f != "span")
    return names


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


def private_bound(req: S.Expr, constants: Mapping[str, Fraction]) -> tuple[str, Sens] | None:
    """Recognise `abs(dist(x)) <= c` and `forall i. abs(dist(q[i])) <= c`."""
    if isinstance(req, S.Forall):
        req = req.body
    if not (isinstance(req, S.Binary) and req.op in ("<=", "<")):
        return None
    target = req.left
    if isinstance(target, S.Call) and target.func == "abs" and len(target.args) == 1:
        target = target.args[0]
    elif isinstance(target, S.App) and isinstance(target.func, S.Var) and target.func.name == "abs":
        target = target.arg
    else:
        return None
    if not isinstance(target, S.Dist):
        return None
    inner = target.expr
    if isinstance(inner, S.Index):
        inner = inner.base
    if not isinstance(inner, S.Var):
        return None
    try:
        bound = static_sens(req.right, constants, "a distance bound")
    except CheckError:
        return None
    return inner.name, bound
