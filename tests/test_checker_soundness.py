"""Soundness of inferred sensitivities, tested rather than assumed.

Random well-typed numeric programs f(x, y) are generated as syntax trees,
checked, and evaluated at x and x + d (y fixed): the change of the result must
be at most s * |d| for the sensitivity s inferred in x.
"""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzpy import syntax as S
from fuzzpy.checker import check_program

NUM = S.TyName("num")
CONSTANTS = [Fraction(n, d) for n, d in [(0, 1), (1, 1), (2, 1), (-3, 1), (1, 2), (5, 4), (-7, 3), (10, 1)]]


def _lit(value: Fraction) -> S.Expr:
    text = str(float(value)) if value.denominator != 1 else str(value.numerator)
    if value < 0:
        return S.Unary("-", S.NumLit(text.lstrip("-")))
    return S.NumLit(text)


literals = st.sampled_from(CONSTANTS).map(_lit)
leaves = st.one_of(st.just(S.Var("x")), st.just(S.Var("y")), literals)


def _extend(children: st.SearchStrategy[S.Expr]) -> st.SearchStrategy[S.Expr]:
    nonzero = st.sampled_from([c for c in CONSTANTS if c != 0]).map(_lit)
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*"]), children, children).map(lambda t: S.Binary(*t)),
        st.tuples(children, nonzero).map(lambda t: S.Binary("/", t[0], t[1])),
        st.tuples(literals, children).map(lambda t: S.Binary("*", t[0], t[1])),
        children.map(lambda e: S.Unary("-", e)),
        children.map(lambda e: S.App(S.Var("abs"), e)),
        children.map(lambda e: S.App(S.Var("sigmoid"), e)),
        children.map(lambda e: S.App(S.Prim("clip", (S.NumLit("0"), S.NumLit("3"))), e)),
        st.tuples(children, children).map(lambda t: S.App(S.App(S.Var("max"), t[0]), t[1])),
        st.tuples(st.sampled_from(["<", ">=", "=="]), children, children, children, children).map(
            lambda t: S.If(S.Binary(t[0], t[1], t[2]), t[3], t[4])
        ),
        st.tuples(children, children).map(
            lambda t: S.Block((S.LetStmt("z", None, t[0]),), S.Binary("+", S.Var("z"), t[1]))
        ),
        st.tuples(children, children).map(
            lambda t: S.Block((S.LetStmt("z", None, t[0]),), S.Binary("*", S.NumLit("2"), S.Var("z")))
            if isinstance(t[1], S.NumLit)
            else S.Block((S.LetStmt("z", None, t[0]),), S.Binary("-", t[1], S.Var("z")))
        ),
    )


programs = st.recursive(leaves, _extend, max_leaves=12)


def evaluate(expr: S.Expr, env: dict[str, float]) -> float:
    if isinstance(expr, S.NumLit):
        return float(expr.value)
    if isinstance(expr, S.Var):
        return env[expr.name]
    if isinstance(expr, S.Unary):
        return -evaluate(expr.operand, env)
    if isinstance(expr, S.Binary):
        a, b = evaluate(expr.left, env), evaluate(expr.right, env)
        return {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "/": lambda: a / b,
            "<": lambda: float(a < b),
            ">=": lambda: float(a >= b),
            "==": lambda: float(a == b),
        }[expr.op]()
    if isinstance(expr, S.If):
        return evaluate(expr.then if evaluate(expr.cond, env) else expr.orelse, env)
    if isinstance(expr, S.Block):
        inner = dict(env)
        for stmt in expr.stmts:
            assert isinstance(stmt, S.LetStmt)
            inner[stmt.name] = evaluate(stmt.expr, inner)
        return evaluate(expr.result, inner)
    if isinstance(expr, S.App):
        if isinstance(expr.func, S.App):
            return max(evaluate(expr.func.arg, env), evaluate(expr.arg, env))
        value = evaluate(expr.arg, env)
        if isinstance(expr.func, S.Prim):
            return min(max(value, 0.0), 3.0)
        if expr.func.name == "abs":
            return abs(value)
        return 1 / (1 + math.exp(-value)) if value > -500 else 0.0
    raise AssertionError(expr)


def sensitivity_in_x(expr: S.Expr) -> Fraction | None:
    decl = S.DefDecl("f", (S.Param("x", NUM), S.Param("y", NUM)), NUM, expr)
    checked = check_program(S.Program((decl,)))
    sens = checked.definitions["f"].params[0].sensitivity
    return sens.value


@settings(max_examples=2000, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    programs,
    st.floats(-20, 20, allow_nan=False),
    st.floats(-20, 20, allow_nan=False),
    st.floats(-5, 5, allow_nan=False).filter(lambda d: d != 0),
)
def test_inferred_sensitivity_bounds_the_change(expr: S.Expr, x: float, y: float, d: float) -> None:
    s = sensitivity_in_x(expr)
    if s is None:  # infinitely sensitive: nothing to test
        return
    try:
        before = evaluate(expr, {"x": x, "y": y})
        after = evaluate(expr, {"x": x + d, "y": y})
    except OverflowError:
        return
    if not (math.isfinite(before) and math.isfinite(after)):
        return
    slack = 1e-9 * (1 + abs(before) + abs(after))
    assert abs(after - before) <= float(s) * abs(d) + slack


@settings(max_examples=300, deadline=None, derandomize=True)
@given(programs)
def test_unused_variable_has_sensitivity_zero(expr: S.Expr) -> None:
    renamed = S.Block((S.LetStmt("unused", None, S.Var("y")),), expr)
    decl = S.DefDecl("g", (S.Param("x", NUM), S.Param("w", NUM), S.Param("y", NUM)), NUM, renamed)
    checked = check_program(S.Program((decl,)))
    assert checked.definitions["g"].params[1].sensitivity.is_zero
