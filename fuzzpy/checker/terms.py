"""Terms the checker builds itself: fresh names and free variables.

The checker mostly reads the program as written, but a few rules build a
term: `loop[k] x0 f` and `subsample[q] f db` with `f` not a lambda check
`fun x -> f x` (eta-expansion), so that a partially applied definition is
charged its exact events. Every such term is built here, and capture-avoiding
(Barendregt's variable convention): a binder the checker introduces gets a
name no user can write (`state#1`; `#` is not allowed in names) that is also
fresh for the term, so it can never capture a variable of the program: `let
state = size db; loop[1] 0 (emit state)` keeps `state` the outer variable.

The checker substitutes no terms otherwise: a `let` is not inlined (its
static value travels in the binding), and a mechanism's claim is evaluated at
a call in an environment where the mechanism's parameters stand for the
call's arguments and hide the constants of the same names
(`static_eval.call_scope`).

Free variables include the names in static positions (`laplace[eps]`), which
refer to top-level constants: a binder must not hide those either.
"""

from __future__ import annotations

import dataclasses
import itertools

from fuzzpy.language import syntax as S

_counter = itertools.count(1)
_SEPARATOR = "#"  # not a name character: a synthesised name is never a user's


def fresh_name(base: str, avoid: set[str] | frozenset[str] = frozenset()) -> str:
    """A name no user program can contain, not in ``avoid``."""
    stem = base.split(_SEPARATOR, 1)[0] or "x"
    while True:
        name = f"{stem}{_SEPARATOR}{next(_counter)}"
        if name not in avoid:
            return name


def source_name(key: str) -> str:
    """The name a user wrote for a variable recorded under ``key``."""
    return key.split(_SEPARATOR, 1)[0]


def free_vars(expr: object) -> set[str]:
    """The free variables of a term of the functional language (and of the
    static expressions inside it)."""
    if isinstance(expr, S.Var):
        return {expr.name}
    if isinstance(expr, S.Lambda):
        return free_vars(expr.body) - {expr.param}
    if isinstance(expr, S.Block):
        return _block_free(expr.stmts, expr.result)
    if isinstance(expr, S.CaseSum):
        return (
            free_vars(expr.scrutinee)
            | (free_vars(expr.left_body) - {expr.left_var})
            | (free_vars(expr.right_body) - {expr.right_var})
        )
    if isinstance(expr, S.CaseList):
        cons = free_vars(expr.cons_body) - {expr.head_var, expr.tail_var}
        return free_vars(expr.scrutinee) | free_vars(expr.nil_body) | cons
    if isinstance(expr, S.Forall):
        return free_vars(expr.body) - {expr.var}
    found: set[str] = set()
    for child in _children(expr):
        found |= free_vars(child)
    return found


def _block_free(stmts: tuple[S.BlockStmt, ...], result: S.Expr) -> set[str]:
    if not stmts:
        return free_vars(result)
    first, rest = stmts[0], stmts[1:]
    bound = set(first.names) if isinstance(first, S.LetTuple) else {first.name}
    return free_vars(first.expr) | (_block_free(rest, result) - bound)


def _children(node: object) -> list[object]:
    if isinstance(node, tuple):
        return list(node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return [getattr(node, f.name) for f in dataclasses.fields(node) if f.name != "span"]
    return []


def eta_expand(fn: S.Expr, base: str = "state") -> S.Lambda:
    """`fun x -> fn x` with x fresh for ``fn``."""
    name = fresh_name(base, free_vars(fn))
    return S.Lambda(name, None, S.App(fn, S.Var(name, span=fn.span), span=fn.span), span=fn.span)


__all__ = ["eta_expand", "free_vars", "fresh_name", "source_name"]
