"""The step of `iterate[k] f x` with what does not depend on the round taken out.

`iterate[k] (fun y -> y / 2 + sum[0, 1] db) x` would evaluate `sum[0, 1] db`
in each of its k rounds (review s30c: 10^6 rounds, each summing the bag, ran
for more than 290 s after the charge). The step is deterministic (a
distribution-valued step is refused, FZ201) and evaluation is pure, so a
subexpression that reads neither the step's parameter nor any name bound
inside the step has the same value in every round: `hoisted` replaces each
largest such subexpression with a fresh variable, which the interpreter binds
once, lazily (call by need), in the closure's environment -- as if the
program had written `let h = sum[0, 1] db` before the loop. Laziness is kept:
a hoisted expression in a branch the rounds never take is never evaluated.

Not taken out: literals and variables (nothing to save), functions, static
numbers and zero vectors (the interpreter recognises those by node, to leave
unevaluated what the checker scaled by 0), and anything that calls a
`def rec` (its calls draw on the run's recursion budget per evaluation).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from fuzzpy.language import syntax as S

#: Hoisted values live under names no program can write.
PREFIX = "#round-invariant-"

_TRIVIAL = (S.NumLit, S.InfLit, S.BoolLit, S.StringLit, S.UnitLit, S.Var, S.Prim, S.Lambda)


@dataclasses.dataclass(frozen=True)
class Hoisted:
    """``step`` reads each ``bindings`` name, to be bound to its expression
    evaluated in the environment where the original step was made."""

    step: S.Lambda
    bindings: tuple[tuple[str, S.Expr], ...]


def hoisted(step: S.Lambda, keep: Callable[[object], bool], recursive: frozenset[str]) -> Hoisted:
    """``keep(node)``: a node the interpreter must see as written (a static number, a zero vector)."""
    inner = _bound_inside(step)
    bindings: list[tuple[str, S.Expr]] = []

    def invariant(node: object) -> bool:
        names = free_names(node)
        return not names & inner and not names & recursive

    def rewrite(node: object) -> object:
        if isinstance(node, tuple):
            items = tuple(rewrite(item) for item in node)
            return node if all(a is b for a, b in zip(items, node, strict=True)) else items
        if not hasattr(node, "__dataclass_fields__") or keep(node) or isinstance(node, S.Lambda):
            return node
        if not isinstance(node, _TRIVIAL) and _is_expr(node) and invariant(node):
            name = f"{PREFIX}{len(bindings)}"
            bindings.append((name, node))  # type: ignore[arg-type]
            return S.Var(name, node.span)  # type: ignore[attr-defined]
        changes = {}
        for field in node.__dataclass_fields__:
            if field == "span":
                continue
            old = getattr(node, field)
            new = rewrite(old)
            if new is not old:
                changes[field] = new
        return dataclasses.replace(node, **changes) if changes else node  # type: ignore[type-var]

    body = rewrite(step.body)
    return Hoisted(dataclasses.replace(step, body=body) if bindings else step, tuple(bindings))  # type: ignore[arg-type]


def _is_expr(node: object) -> bool:
    return not isinstance(node, (S.LetStmt, S.LetTuple, S.SampleStmt)) and type(node).__module__ == S.__name__ \
        and type(node).__name__ in _EXPR_NAMES


_EXPR_NAMES = frozenset(t.__name__ for t in S.Expr.__args__)


def _bound_inside(step: S.Lambda) -> set[str]:
    """The step's parameter and every name bound anywhere inside it (a
    subexpression reading one may change from round to round)."""
    found = {step.param}
    for node in S.subtrees(step.body):
        if isinstance(node, S.Lambda):
            found.add(node.param)
        elif isinstance(node, (S.LetStmt, S.SampleStmt)):
            found.add(node.name)
        elif isinstance(node, S.LetTuple):
            found.update(node.names)
        elif isinstance(node, S.CaseSum):
            found.update((node.left_var, node.right_var))
        elif isinstance(node, S.CaseList):
            found.update((node.head_var, node.tail_var))
        elif isinstance(node, S.Forall):
            found.add(node.var)
    return found


def reaching_recursion(program: S.Program) -> frozenset[str]:
    """The definitions that are, or call (directly or not), a `def rec`."""
    defs = {d.name: d for d in program.decls if isinstance(d, S.DefDecl)}
    calls = {name: {n.name for n in S.subtrees(d.body) if isinstance(n, S.Var)} & set(defs) for name, d in defs.items()}
    found = {name for name, d in defs.items() if d.recursive}
    changed = True
    while changed:
        changed = False
        for name, callees in calls.items():
            if name not in found and callees & found:
                found.add(name)
                changed = True
    return frozenset(found)


def free_names(node: object) -> set[str]:
    """The names ``node`` reads from outside itself (a function's parameter,
    a block's `let`s and a case's variables are bound inside)."""
    if isinstance(node, tuple):
        return set().union(*(free_names(item) for item in node)) if node else set()
    if isinstance(node, S.Var):
        return {node.name}
    if isinstance(node, S.Call):
        return {node.func} | free_names(node.args)
    if isinstance(node, S.Lambda):
        return free_names(node.body) - {node.param}
    if isinstance(node, S.Block):
        return _block_free(node.stmts, node.result)
    if isinstance(node, S.CaseSum):
        return (free_names(node.scrutinee) | (free_names(node.left_body) - {node.left_var})
                | (free_names(node.right_body) - {node.right_var}))
    if isinstance(node, S.CaseList):
        return (free_names(node.scrutinee) | free_names(node.nil_body)
                | (free_names(node.cons_body) - {node.head_var, node.tail_var}))
    if isinstance(node, S.Forall):
        return free_names(node.body) - {node.var}
    if not hasattr(node, "__dataclass_fields__"):
        return set()
    return set().union(*(free_names(getattr(node, f)) for f in node.__dataclass_fields__ if f != "span"))


def _block_free(stmts: tuple[S.BlockStmt, ...], result: S.Expr) -> set[str]:
    if not stmts:
        return free_names(result)
    first, rest = stmts[0], stmts[1:]
    bound = set(first.names) if isinstance(first, S.LetTuple) else {first.name}
    return free_names(first.expr) | (_block_free(rest, result) - bound)
