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

from fuzzpy.checker import check_program
from fuzzpy.language import syntax as S

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


# ---------------------------------------------------------------- alpha-equivalence (issue 9)
#
# Checking must not depend on the names of bound variables: a block whose
# binders reuse the names of parameters and of each other (shadowing) gets
# exactly the sensitivities and privacy events of the same block with every
# binder renamed apart. This catches capture (an eta-expansion's binder, a
# cost replayed under a name that an inner binder has taken over).

POOL = ["db", "other", "x", "m", "a", "state"]
PARAMS = {"db": "bag", "other": "bag", "x": "num"}
EMIT = "def emit (t : num) (s : num) : fuzzy num = laplace[1] t;\n"
HEADER = "type Row = { age : num };\n" + EMIT


class _Block:
    """One generated block, rendered with colliding or with distinct names."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.scope: list[tuple[int, str, str]] = [(i, n, t) for i, (n, t) in enumerate(PARAMS.items())]
        self.colliding: dict[int, str] = {i: n for i, n, _ in self.scope}
        self.statements: list[tuple[str, int, object]] = []

    def visible(self, kind: str) -> list[int]:
        latest: dict[str, tuple[int, str]] = {}
        for ident, name, ty in self.scope:
            latest[name] = (ident, ty)
        return [ident for ident, ty in latest.values() if ty == kind]

    def num(self, depth: int = 0) -> object:
        nums, bags = self.visible("num"), self.visible("bag")
        options = ["lit"] + (["var"] if nums else []) + (["size"] if bags else []) + (["add", "scale"] if depth < 2 else [])
        kind = self.data.draw(st.sampled_from(options))
        if kind == "var":
            return ("var", self.data.draw(st.sampled_from(nums)))
        if kind == "size":
            return ("size", self.data.draw(st.sampled_from(bags)))
        if kind == "add":
            return ("add", self.num(depth + 1), self.num(depth + 1))
        if kind == "scale":
            return ("scale", self.num(depth + 1))
        return ("lit",)

    def generate(self) -> _Block:
        for _ in range(self.data.draw(st.integers(1, 6))):
            kinds = ["num", "dist", "loop"] + (["sample"] if self.visible("dist") else []) + (["bag"] if self.visible("bag") else [])
            kind = self.data.draw(st.sampled_from(kinds))
            if kind == "bag":
                payload: object = (self.data.draw(st.sampled_from(self.visible("bag"))), self.data.draw(st.booleans()))
            elif kind == "sample":
                payload = self.data.draw(st.sampled_from(self.visible("dist")))
            else:
                payload = self.num()
            ident = len(self.scope)
            self.colliding[ident] = self.data.draw(st.sampled_from(POOL))
            self.statements.append((kind, ident, payload))
            ty = {"num": "num", "bag": "bag", "dist": "dist", "sample": "num", "loop": "num"}[kind]
            self.scope.append((ident, self.colliding[ident], ty))
        self.result = self.num()
        return self

    def render(self, names: dict[int, str]) -> str:
        def expr(e: object) -> str:
            assert isinstance(e, tuple)
            if e[0] == "var":
                return names[e[1]]
            if e[0] == "size":
                return f"size {names[e[1]]}"
            if e[0] == "add":
                return f"({expr(e[1])} + {expr(e[2])})"
            if e[0] == "scale":
                return f"(3 * {expr(e[1])})"
            return "2"

        lines = []
        for kind, ident, payload in self.statements:
            name = names[ident]
            if kind == "num":
                lines.append(f"let {name} = {expr(payload)};")
            elif kind == "bag":
                bag, filtered = payload  # type: ignore[misc]
                lines.append(f"let {name} = filter (fun r -> r.age > 3) {names[bag]};" if filtered else f"let {name} = {names[bag]};")
            elif kind == "dist":
                lines.append(f"let {name} = laplace[1] ({expr(payload)});")
            elif kind == "sample":
                lines.append(f"sample {name} = {names[payload]};")  # type: ignore[index]
            else:
                lines.append(f"sample {name} = loop[2] 0 (emit {expr(payload)});")
        body = " ".join(lines) + f" laplace[1] ({expr(self.result)})"
        return HEADER + f"def f (db : bag Row) (other : bag Row) (x : num) : fuzzy num = {{ {body} }};"


def _outcome(text: str) -> object:
    from fuzzpy.frontend.parser import parse_program
    from fuzzpy.language.diagnostics import FuzzError

    try:
        checked = check_program(parse_program(text, "alpha.fz")).definitions["f"]
    except FuzzError as error:
        return sorted(d.code for d in error.diagnostics)
    return [(p.name, p.sensitivity) for p in checked.params], checked.privacy


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_checking_is_invariant_under_renaming_bound_variables(data: st.DataObject) -> None:
    block = _Block(data).generate()
    apart = {ident: name if ident < len(PARAMS) else f"v{ident}" for ident, name in block.colliding.items()}
    assert _outcome(block.render(block.colliding)) == _outcome(block.render(apart))


# ---------------------------------------------------------------- vectors (issue 9)
#
# Vector expressions of length 3 in one of the three norms, built from
# literals of scalar programs, `+`, `-`, scaling and negation, read through
# `dot` with static weights and `len` (static, since the length is part of
# the type): the change of f(x, y) must again be at most s * |d|.

small_programs = st.recursive(leaves, _extend, max_leaves=4)
WEIGHTS = st.lists(st.sampled_from(CONSTANTS), min_size=3, max_size=3)


def _vectors(children: st.SearchStrategy[S.Expr]) -> st.SearchStrategy[S.Expr]:
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-"]), children, children).map(lambda t: S.Binary(*t)),
        st.tuples(literals, children).map(lambda t: S.Binary("*", t[0], t[1])),
        children.map(lambda e: S.Unary("-", e)),
    )


vector_exprs = st.recursive(st.lists(small_programs, min_size=3, max_size=3).map(lambda items: S.ListLit(tuple(items))), _vectors, max_leaves=4)


def evaluate_vector(expr: S.Expr, env: dict[str, float]) -> list[float]:
    if isinstance(expr, S.ListLit):
        return [evaluate(item, env) for item in expr.items]
    if isinstance(expr, S.Unary):
        return [-v for v in evaluate_vector(expr.operand, env)]
    assert isinstance(expr, S.Binary)
    if expr.op == "*":
        c = evaluate(expr.left, env)
        return [c * v for v in evaluate_vector(expr.right, env)]
    a, b = evaluate_vector(expr.left, env), evaluate_vector(expr.right, env)
    return [u + v if expr.op == "+" else u - v for u, v in zip(a, b, strict=True)]


@settings(max_examples=500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["1", "2", "inf"]),
    vector_exprs,
    WEIGHTS,
    st.floats(-20, 20, allow_nan=False),
    st.floats(-20, 20, allow_nan=False),
    st.floats(-5, 5, allow_nan=False).filter(lambda d: d != 0),
)
def test_vector_sensitivities_bound_the_change(norm: str, vector: S.Expr, weights: list[Fraction], x: float, y: float, d: float) -> None:
    typed = S.Ann(vector, S.TyVec(norm, NUM))
    dotted = S.App(S.App(S.Var("dot"), S.ListLit(tuple(_lit(w) for w in weights))), typed)
    expr = S.Binary("+", dotted, S.Binary("*", S.App(S.Var("len"), typed), S.Var("x")))
    s = sensitivity_in_x(expr)
    if s is None:
        return

    def f(at: float) -> float:
        env = {"x": at, "y": y}
        values = evaluate_vector(vector, env)
        return sum(float(w) * v for w, v in zip(weights, values, strict=True)) + 3 * at

    try:
        before, after = f(x), f(x + d)
    except OverflowError:
        return
    if not (math.isfinite(before) and math.isfinite(after)):
        return
    assert abs(after - before) <= float(s) * abs(d) + 1e-9 * (1 + abs(before) + abs(after))
