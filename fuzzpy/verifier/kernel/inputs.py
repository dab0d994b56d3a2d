"""The kernel's view of a mechanism's inputs and of its certificate's text.

Everything here is read from the mechanism itself (its parameters, `requires`,
`privacy`, the program's top-level `let`s): the certificate only says which
orientation and which rule it proves, and the kernel compares what it says
about the precondition with what the mechanism says.
"""

from __future__ import annotations

from fractions import Fraction

import z3

from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import (
    Binary,
    BoolLit,
    Call,
    Dist,
    Expr,
    IfStmt,
    LetDecl,
    MechanismDecl,
    Noise,
    NumLit,
    Program,
    ReturnStmt,
    Stmt,
    TyName,
    TyVec,
    Unary,
    Var,
    While,
)


class Reject(Exception):
    """The certificate cannot be checked: something it needs is missing or unsupported."""


def walk(expr: Expr):  # noqa: ANN201 - an iterator of expressions
    yield expr
    for name in ("left", "right", "operand", "cond", "then", "orelse", "base", "index", "scale", "align", "expr", "body"):
        child = getattr(expr, name, None)
        if child is not None and not isinstance(child, tuple) and hasattr(child, "span"):
            yield from walk(child)
    for child in getattr(expr, "args", ()):
        yield from walk(child)


# ---------------------------------------------------------------- parsing certificate text


def parse_shift(text: str) -> Expr:
    """An expression of the `align` language."""
    decl = _parse(f"mechanism k__ () : num privacy 1 {{ return lap(1) align ({text}); }}")
    body = decl.body[0]
    if len(decl.body) != 1 or not (isinstance(body, ReturnStmt) and isinstance(body.expr, Noise)) \
            or body.expr.align is None:
        raise Reject(f"not one expression: {text!r}")
    return body.expr.align


def parse_test(text: str) -> Expr:
    decl = _parse(f"mechanism k__ () : num privacy 1 {{ if ({text}) {{ return 0; }} return 0; }}")
    body = decl.body[0]
    if len(decl.body) != 2 or not isinstance(body, IfStmt) or len(body.then) != 1 or body.orelse:
        raise Reject(f"not one expression: {text!r}")
    return body.cond


def parse_head(requires: tuple[str, ...], claim: str, delta: str = "") -> tuple[tuple[Expr, ...], Expr, Expr | None]:
    clauses = " ".join(f"requires {r}" for r in requires)
    privacy = f"({claim}, {delta})" if delta else claim
    decl = _parse(f"mechanism k__ () : num {clauses} privacy {privacy} {{ return 0; }}")
    return decl.requires, decl.privacy, decl.delta


def _parse(text: str) -> MechanismDecl:
    try:
        decls = parse_program(text, "<certificate>").decls
    except Exception as exc:  # noqa: BLE001 - any parse failure rejects
        raise Reject(f"certificate text does not parse: {text!r}") from exc
    if len(decls) != 1 or not isinstance(decls[0], MechanismDecl):
        raise Reject(f"certificate text is not one expression: {text!r}")
    return decls[0]


# ---------------------------------------------------------------- inputs


def constants(program: Program | None, decl: MechanismDecl) -> dict[str, Fraction]:
    """Top-level numeric `let`s the mechanism may read (a name defined twice is refused)."""
    values: dict[str, Fraction | None] = {}
    for item in program.decls if program is not None else ():
        if isinstance(item, LetDecl):
            if item.name in values:
                raise Reject(f"`{item.name}` is defined twice at the top level")
            values[item.name] = _static(item.expr, values)
    params = {p.name for p in decl.params}
    return {k: v for k, v in values.items() if v is not None and k not in params}


def _static(expr: Expr, env: dict[str, Fraction | None]) -> Fraction | None:
    if isinstance(expr, NumLit):
        return expr.value
    if isinstance(expr, Var):
        return env.get(expr.name)
    if isinstance(expr, Unary) and expr.op == "-":
        inner = _static(expr.operand, env)
        return None if inner is None else -inner
    if isinstance(expr, Binary) and expr.op in ("+", "-", "*", "/"):
        a, b = _static(expr.left, env), _static(expr.right, env)
        if a is None or b is None or (expr.op == "/" and b == 0):
            return None
        return {"+": a + b, "-": a - b, "*": a * b}[expr.op] if expr.op != "/" else a / b
    return None


def neighbours(decl: MechanismDecl) -> dict[str, str]:
    """How each input may differ: a vector's norm, a scalar named in a `dist(x)` of
    the `requires` is private, any other scalar is the same in both runs."""
    named = {e.expr.name for r in decl.requires for e in walk(r) if isinstance(e, Dist) and isinstance(e.expr, Var)}
    found = {}
    for p in decl.params:
        if isinstance(p.type, TyVec):
            found[p.name] = f"vec[{p.type.norm}]"
        elif isinstance(p.type, TyName) and p.type.name in ("num", "int", "bool"):
            found[p.name] = "private" if p.name in named else "public"
        else:
            raise Reject(f"parameter `{p.name}` has a type the kernel does not model")
    return found


def scalar_sort(decl: MechanismDecl, name: str) -> str:
    ty = next(p.type for p in decl.params if p.name == name)
    assert isinstance(ty, TyName)
    return ty.name


def fresh(name: str, sort: str) -> z3.ExprRef:
    return {"int": z3.Int, "bool": z3.Bool}.get(sort, z3.Real)(name)


def number(value: Fraction, integral: bool) -> z3.ExprRef:
    if integral and value.denominator == 1:
        return z3.IntVal(value.numerator)
    return z3.RealVal(value)


def local_sorts(decl: MechanismDecl, consts: dict[str, Fraction]) -> dict[str, str]:
    """`int` when every value a local receives is an integer; `bool`; else `num` (a fixpoint)."""
    from fuzzpy.language.syntax import Assign, VarDecl, While

    def stmts(body):  # noqa: ANN001, ANN202
        for s in body:
            yield s
            yield from stmts(getattr(s, "then", ()) + getattr(s, "orelse", ()) + (s.body if isinstance(s, While) else ()))

    known = {p.name: (scalar_sort(decl, p.name) if isinstance(p.type, TyName) else "vec") for p in decl.params}
    known.update({k: ("int" if v.denominator == 1 else "num") for k, v in consts.items() if k not in known})
    assigned = [s for s in stmts(decl.body) if isinstance(s, (VarDecl, Assign))]
    sorts: dict[str, str] = {}
    for _ in range(len(assigned) + 2):
        before = dict(sorts)
        for s in assigned:
            got = sort_of(s.expr, {**known, **sorts})
            old = sorts.get(s.name)
            sorts[s.name] = got if old in (None, got) else ("bool" if "bool" in (old, got) else "num")
        if sorts == before:
            break
    return sorts


def sort_of(e: Expr, env: dict[str, str]) -> str:
    if isinstance(e, NumLit):
        return "int" if e.is_int else "num"
    if isinstance(e, BoolLit):
        return "bool"
    if isinstance(e, Var):
        return env.get(e.name, "int")
    if isinstance(e, Binary):
        if e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||", "==>"):
            return "bool"
        both = {sort_of(e.left, env), sort_of(e.right, env)}
        return "int" if both == {"int"} and e.op != "/" else "num"
    if isinstance(e, Unary):
        return "bool" if e.op != "-" else sort_of(e.operand, env)
    if isinstance(e, Call):
        if e.func == "len":
            return "int"
        return "int" if all(sort_of(a, env) == "int" for a in e.args) else "num"
    if hasattr(e, "then") and hasattr(e, "orelse"):
        sides = {sort_of(e.then, env), sort_of(e.orelse, env)}  # type: ignore[attr-defined]
        return sides.pop() if len(sides) == 1 else "num"
    return "num"  # a vector entry, a draw


def statements(body: tuple[Stmt, ...]):  # noqa: ANN201
    """Every statement of ``body``, nested ones after their `if` or loop."""
    for s in body:
        yield s
        if isinstance(s, IfStmt):
            yield from statements(s.then + s.orelse)
        elif isinstance(s, While):
            yield from statements(s.body)
