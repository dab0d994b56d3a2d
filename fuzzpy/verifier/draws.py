"""Where each noise draw's value goes: the contexts alignments are built from.

A draw is usually a summand of an additive chain (`q[i] + lap(b)`), possibly
stored in a variable first (`var v = q[i] + lap(b); if (v > best) ...`). Its
contexts record the other summands, what the chain is compared with (and the
branch that comparison decides), or the release (`output`/`return`) it flows
into. `alignment.candidates` turns these into shift templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzzpy.syntax import (
    Assign,
    Binary,
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
from fuzzpy.verifier.walk import additive_terms, statements, stmt_expressions, sub_expressions

COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}


@dataclass(frozen=True)
class DrawContext:
    """One place where a draw's value is used: compared with ``other`` or released.

    ``rest`` are the other summands (sign, expression) of the additive chain
    that carries the draw there; ``sign`` is the draw's own sign in the chain.
    ``node`` is the comparison (for "compare") or the releasing statement;
    ``branch`` the `IfStmt`/`While` whose condition holds the comparison, if any.
    """

    kind: str  # "compare" | "release"
    sign: int
    rest: tuple[tuple[int, Expr], ...]
    other: Expr | None
    node: object | None
    branch: object | None = None


@dataclass
class DrawSite:
    noise: Noise
    index: int
    contexts: list[DrawContext] = field(default_factory=list)
    in_loop: bool = False
    carrier_var: str | None = None
    visible: frozenset[str] = frozenset()  # locals declared before the draw


def draw_sites(body: tuple[Stmt, ...]) -> list[DrawSite]:
    sites: list[DrawSite] = []
    _collect_draws(body, sites, in_loop=False, declared=set())
    return sites


def _collect_draws(body: tuple[Stmt, ...], sites: list[DrawSite], in_loop: bool, declared: set[str]) -> None:
    for position, stmt in enumerate(body):
        for top in stmt_expressions(stmt):
            for expr in sub_expressions(top):
                if isinstance(expr, Noise):
                    site = DrawSite(expr, len(sites), in_loop=in_loop, visible=frozenset(declared))
                    _contexts_in_statement(site, stmt, top)
                    _contexts_after_assignment(site, stmt, top, body[position + 1 :])
                    sites.append(site)
        if isinstance(stmt, VarDecl):
            declared.add(stmt.name)
        if isinstance(stmt, IfStmt):
            _collect_draws(stmt.then, sites, in_loop, set(declared))
            _collect_draws(stmt.orelse, sites, in_loop, set(declared))
        elif isinstance(stmt, While):
            _collect_draws(stmt.body, sites, True, set(declared))


def _chain_holding(expr: Expr, target: Expr) -> tuple[Expr, int, list[tuple[int, Expr]]] | None:
    """The maximal additive chain inside ``expr`` that has ``target`` as a summand."""
    for candidate in sub_expressions(expr):
        terms = additive_terms(candidate)
        hits = [(s, t) for s, t in terms if t is target]
        if hits:
            sign = hits[0][0]
            rest = [(s, t) for s, t in terms if t is not target]
            return candidate, sign, rest
    return None


def _comparison_with(expr: Expr, chain: Expr) -> tuple[Expr, int, Binary] | None:
    """If ``chain`` is one side of a comparison in ``expr``: (other side, orientation, comparison)."""
    for candidate in sub_expressions(expr):
        if isinstance(candidate, Binary) and candidate.op in COMPARISONS:
            if candidate.left is chain:
                return candidate.right, 1, candidate
            if candidate.right is chain:
                return candidate.left, -1, candidate
    return None


def _contexts_in_statement(site: DrawSite, stmt: Stmt, top: Expr) -> None:
    found = _chain_holding(top, site.noise)
    if found is None:
        return
    chain, sign, rest = found
    comparison = _comparison_with(top, chain)
    if comparison is not None:
        # a comparison in a branch can select the alignment; elsewhere it is released
        branch = stmt if isinstance(stmt, (IfStmt, While)) else None
        site.contexts.append(DrawContext("compare", sign, tuple(rest), comparison[0], comparison[2], branch))
    elif isinstance(stmt, (Output, ReturnStmt)) and chain is top:
        site.contexts.append(DrawContext("release", sign, tuple(rest), None, stmt))
    elif isinstance(stmt, (VarDecl, Assign)) and chain is top:
        site.carrier_var = stmt.name
        site.contexts.append(DrawContext("carry", sign, tuple(rest), None, stmt))


def _contexts_after_assignment(site: DrawSite, stmt: Stmt, top: Expr, following: tuple[Stmt, ...]) -> None:
    """`var v = q[i] + lap(b); if (v > best) ...`: follow v into later comparisons."""
    if site.carrier_var is None or not isinstance(stmt, (VarDecl, Assign)) or top is not stmt.expr:
        return
    carry = site.contexts[-1]
    for later in following:
        for inner in statements((later,)):
            for expr in stmt_expressions(inner):
                _context_through_var(site, carry, inner, expr)
        if isinstance(later, (VarDecl, Assign)) and later.name == site.carrier_var:
            break


def _context_through_var(site: DrawSite, carry: DrawContext, stmt: Stmt, top: Expr) -> None:
    for expr in sub_expressions(top):
        if not (isinstance(expr, Var) and expr.name == site.carrier_var):
            continue
        found = _chain_holding(top, expr)
        if found is None:
            continue
        chain, sign, rest = found
        combined = tuple(rest) + tuple((sign * s, e) for s, e in carry.rest)
        comparison = _comparison_with(top, chain)
        if comparison is not None:
            branch = stmt if isinstance(stmt, (IfStmt, While)) else None
            site.contexts.append(
                DrawContext("compare", sign * carry.sign, combined, comparison[0], comparison[2], branch)
            )
        elif isinstance(stmt, (Output, ReturnStmt)) and chain is top:
            site.contexts.append(DrawContext("release", sign * carry.sign, combined, None, stmt))
        return
