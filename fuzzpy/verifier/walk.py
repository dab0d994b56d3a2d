"""Walking mechanism syntax: sub-expressions, nested statements, additive chains."""

from __future__ import annotations

from collections.abc import Iterator

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    Call,
    Dist,
    Expr,
    Forall,
    If,
    IfStmt,
    Index,
    Noise,
    Output,
    ReturnStmt,
    Stmt,
    Unary,
    VarDecl,
    While,
)


def sub_expressions(expr: Expr) -> Iterator[Expr]:
    """Every sub-expression of a mechanism expression, the expression first."""
    yield expr
    for child in children(expr):
        yield from sub_expressions(child)


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``expr`` (a draw's `align` hint included)."""
    if isinstance(expr, Binary):
        return (expr.left, expr.right)
    if isinstance(expr, Unary):
        return (expr.operand,)
    if isinstance(expr, If):
        return (expr.cond, expr.then, expr.orelse)
    if isinstance(expr, Call):
        return tuple(expr.args)
    if isinstance(expr, Index):
        return (expr.base, expr.index)
    if isinstance(expr, Noise):
        return (expr.scale,) + ((expr.align,) if expr.align is not None else ())
    if isinstance(expr, Dist):
        return (expr.expr,)
    if isinstance(expr, Forall):
        return (expr.body,)
    return ()


def statements(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, IfStmt):
            yield from statements(stmt.then)
            yield from statements(stmt.orelse)
        elif isinstance(stmt, While):
            yield from statements(stmt.body)


def stmt_expressions(stmt: Stmt) -> tuple[Expr, ...]:
    if isinstance(stmt, (VarDecl, Output, ReturnStmt)):
        return (stmt.expr,)
    if isinstance(stmt, Assign):
        return (stmt.expr,) + ((stmt.index,) if stmt.index is not None else ())
    if isinstance(stmt, IfStmt):
        return (stmt.cond,)
    if isinstance(stmt, While):
        return (stmt.cond,) + stmt.invariants
    return ()


def has_noise(expr: Expr) -> bool:
    return any(isinstance(e, Noise) for e in sub_expressions(expr))


def block_is_pure(body: tuple[Stmt, ...], draws: bool = False) -> bool:
    """No release, no loop (and no noise, unless ``draws``): branches like this
    may differ between runs."""
    for stmt in statements(body):
        if isinstance(stmt, (Output, ReturnStmt, While)):
            return False
        if not draws and any(has_noise(e) for e in stmt_expressions(stmt)):
            return False
    return True




def additive_terms(expr: Expr, sign: int = 1) -> list[tuple[int, Expr]]:
    """Flatten a chain of `+`/`-` into signed summands."""
    if isinstance(expr, Binary) and expr.op in ("+", "-"):
        right_sign = sign if expr.op == "+" else -sign
        return additive_terms(expr.left, sign) + additive_terms(expr.right, right_sign)
    if isinstance(expr, Unary) and expr.op == "-":
        return additive_terms(expr.operand, -sign)
    return [(sign, expr)]
