"""Definite declaration: a mechanism's code reads a local only where every
path to the read has declared it (`var x = ...` in both branches of an `if`,
or before it). A local declared in one branch, or only inside a loop body, has
no value on some path: the verifier cannot give the read a meaning, and the
run would fail there. The rule is the usual definite-assignment analysis
(Java Language Specification, chapter 16), on the statement language of
verifier.md; hints (`invariant`, `align`) are proof text and are not checked."""

from __future__ import annotations

from collections.abc import Iterator

from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.syntax import (
    Assign,
    Expr,
    IfStmt,
    Noise,
    Output,
    ReturnStmt,
    Stmt,
    Var,
    VarDecl,
    While,
)
from fuzzpy.verifier.walk import children


def undeclared_reads(body: tuple[Stmt, ...], parameters: frozenset[str], locals_: frozenset[str]) -> list[Var]:
    """Reads of a local (a name in ``locals_``) on a path that has not declared it."""
    found: list[Var] = []
    _block(body, parameters, locals_, found)
    return found


def _block(body: tuple[Stmt, ...], declared: frozenset[str] | None, locals_: frozenset[str],
           found: list[Var]) -> frozenset[str] | None:
    for stmt in body:
        if declared is None:  # after a `return`: unreachable
            return None
        declared = _statement(stmt, declared, locals_, found)
    return declared


def _statement(stmt: Stmt, declared: frozenset[str], locals_: frozenset[str],
               found: list[Var]) -> frozenset[str] | None:
    if isinstance(stmt, VarDecl):
        found += _reads(stmt.expr, declared, locals_)
        return declared | {stmt.name}
    if isinstance(stmt, Assign):
        found += _reads(stmt.expr, declared, locals_)
        if stmt.index is not None:
            found += _reads(stmt.index, declared, locals_)
        return declared | {stmt.name}
    if isinstance(stmt, (Output, ReturnStmt)):
        found += _reads(stmt.expr, declared, locals_)
        return None if isinstance(stmt, ReturnStmt) else declared
    if isinstance(stmt, IfStmt):
        found += _reads(stmt.cond, declared, locals_)
        then = _block(stmt.then, declared, locals_, found)
        orelse = _block(stmt.orelse, declared, locals_, found)
        if then is None:
            return orelse
        return then if orelse is None else then & orelse
    if isinstance(stmt, While):
        found += _reads(stmt.cond, declared, locals_)
        _block(stmt.body, declared, locals_, found)  # the body may run no time
        return declared
    return declared


def _reads(expr: Expr, declared: frozenset[str], locals_: frozenset[str]) -> Iterator[Var]:
    if isinstance(expr, Var) and expr.name in locals_ and expr.name not in declared:
        yield expr
    if isinstance(expr, Noise):  # the `align` hint is proof text
        yield from _reads(expr.scale, declared, locals_)
        return
    for child in children(expr):
        yield from _reads(child, declared, locals_)


def diagnostics_for(reads: list[Var], mechanism: str) -> list[Diagnostic]:
    seen: set[str] = set()
    out: list[Diagnostic] = []
    for var in reads:
        if var.name in seen:
            continue
        seen.add(var.name)
        out.append(Diagnostic(
            code="FZ401", span=var.span,
            message=f"`{var.name}` may be read before it is declared in mechanism `{mechanism}`: "
                    "some path to this read does not run its `var`",
            hint=f"declare `var {var.name} = ...;` before the `if` or loop that declares it, "
                 "so every path gives it a value",
        ))
    return out
