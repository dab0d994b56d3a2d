"""Where each noise draw's value goes: the contexts alignments are built from.

A draw is usually a summand of an additive chain (`q[i] + lap(b)`), possibly
stored in variables first (`var eta = lap(b); next = next + q[i] + eta;
out = next; output out;`, as ShadowDP's and CheckDP's sources write it). The
draw's value is followed forward through assignments: each variable that
holds ``sign * draw + rest`` is tracked, and every later use (a comparison,
a release, a further assignment) becomes a context whose other summands are
rewritten in terms of the state *at the draw* (variables assigned in between
are replaced by what they were assigned; a variable whose value cannot be
expressed so, e.g. one assigned in a branch or a loop, makes the use
unusable). An alignment is then a function of the state at the draw, as a
randomness alignment must be (LightDP, Zhang & Kifer POPL 2017), whatever
later statement it was derived from: the templates only choose *which*
function, the proof checks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    Call,
    Expr,
    If,
    IfStmt,
    Index,
    Noise,
    Output,
    ReturnStmt,
    Stmt,
    Unary,
    Var,
    VarDecl,
    While,
)
from fuzzpy.support.records import frozen
from fuzzpy.verifier.text import show
from fuzzpy.verifier.walk import (
    additive_terms,
    has_noise,
    statements,
    stmt_expressions,
    sub_expressions,
)

COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}


@frozen
class DrawContext:
    """One place where a draw's value is used: compared with ``other``, released or stored.

    ``rest`` are the other summands (sign, expression over the state at the
    draw) of the additive chain that carries the draw there; ``sign`` is the
    draw's own sign in the chain. ``node`` is the comparison (for "compare")
    or the releasing / assigning statement; ``branch`` the `IfStmt`/`While`
    whose condition holds the comparison, if any.
    """

    kind: str  # "compare" | "release" | "carry"
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
    compared: bool = False  # the draw's value reaches a comparison (usable as a context or not)
    next_guards: tuple[Expr, ...] = ()  # in a loop: the guard's tests as they will read after this trip


def draw_sites(body: tuple[Stmt, ...]) -> list[DrawSite]:
    sites: list[DrawSite] = []
    _collect_draws(body, (), sites, None, declared=set())
    return sites


def _collect_draws(body: tuple[Stmt, ...], after: tuple[Stmt, ...], sites: list[DrawSite], loop: While | None,
                   declared: set[str]) -> None:
    """``after``: the statements that run after ``body`` ends (up to the end of
    the loop's trip, inside a loop)."""
    for position, stmt in enumerate(body):
        following = body[position + 1:] + after
        for top in stmt_expressions(stmt):
            for expr in sub_expressions(top):
                if isinstance(expr, Noise):
                    in_loop = loop is not None or isinstance(stmt, While)  # a guard draws on every trip
                    site = DrawSite(expr, len(sites), in_loop=in_loop, visible=frozenset(declared))
                    _follow_draw(site, stmt, top, following)
                    if loop is not None and not isinstance(stmt, While):
                        site.next_guards = _next_guards(loop, stmt, following)
                    sites.append(site)
        if isinstance(stmt, VarDecl):
            declared.add(stmt.name)
        if isinstance(stmt, IfStmt):
            _collect_draws(stmt.then, following, sites, loop, set(declared))
            _collect_draws(stmt.orelse, following, sites, loop, set(declared))
        elif isinstance(stmt, While):
            _collect_draws(stmt.body, (), sites, stmt, set(declared))


def _next_guards(loop: While, stmt: Stmt, following: tuple[Stmt, ...]) -> tuple[Expr, ...]:
    """The loop guard's noise-free tests, rewritten to the state at the draw as
    they will read at the next guard evaluation: "is there another trip?".

    Only straight-line updates are followed (`count = count + 1` after the
    draw gives `count + 1 < N`); a test over a variable assigned in a branch
    after the draw is dropped. A draw whose value is never used again after
    the last trip (Dwork & Roth's Sparse redraws the threshold after every
    hit, the last included) can be aligned by such a test.
    """
    flow = _Flow()
    if isinstance(stmt, (VarDecl, Assign)):
        flow.forget(stmt.name)
    for later in following:
        if isinstance(later, (VarDecl, Assign)) and (isinstance(later, VarDecl) or later.index is None):
            value = None if has_noise(later.expr) else _rewrite(later.expr, flow)
            flow.values[later.name] = value
        else:
            for name in _assigned((later,)):
                flow.forget(name)
    tests: dict[str, Expr] = {}
    conjuncts = _conjuncts(loop.cond)
    rewritten = [_rewrite(c, flow) for c in conjuncts if not has_noise(c)]
    for test in rewritten:
        if test is not None:
            tests.setdefault(show(test), test)
    if len(tests) > 1 and all(t is not None for t in rewritten) and len(rewritten) == len(conjuncts):
        whole = rewritten[0]
        for test in rewritten[1:]:
            whole = Binary("&&", whole, test, loop.cond.span)  # type: ignore[arg-type]
        tests.setdefault(show(whole), whole)  # type: ignore[arg-type]
    return tuple(tests.values())


def _conjuncts(cond: Expr) -> list[Expr]:
    if isinstance(cond, Binary) and cond.op == "&&":
        return _conjuncts(cond.left) + _conjuncts(cond.right)
    return [cond]


# ---------------------------------------------------------------- following a draw


_UNKNOWN = None  # a variable whose value at this point is no expression over the state at the draw


@dataclass
class _Flow:
    """What is known after the draw: tracked carriers and rewritten variables."""

    tracked: dict[str, tuple[int, tuple[tuple[int, Expr], ...]]] = field(default_factory=dict)
    values: dict[str, Expr | None] = field(default_factory=dict)  # assigned since the draw
    #: variables holding a later draw (`var down = lapplus(b)`): in a chain they
    #: are left out like a draw written in place (its own alignment decides)
    noisy: set[str] = field(default_factory=set)

    def copy(self) -> _Flow:
        return _Flow(dict(self.tracked), dict(self.values), set(self.noisy))

    def forget(self, name: str) -> None:
        self.tracked.pop(name, None)
        self.noisy.discard(name)
        self.values[name] = _UNKNOWN


def _follow_draw(site: DrawSite, stmt: Stmt, top: Expr, following: tuple[Stmt, ...]) -> None:
    flow = _Flow()
    found = _chain_holding(top, site.noise)
    if found is None:
        return
    chain, sign, rest = found
    # another draw in the same chain (`x + lap(b) + lap(b)`): its distance is
    # its own shift, unknown here; a candidate assumes 0 (the other draw's
    # alignment decides) and the proof checks the combination
    rest = [(s, t) for s, t in rest if not has_noise(t)]
    _use(site, flow, stmt, top, chain, sign, tuple(rest), own=True)
    if isinstance(stmt, (IfStmt, While)):
        return  # a draw in a condition: the comparison is its use
    stored = stmt.name if isinstance(stmt, VarDecl) or (isinstance(stmt, Assign) and stmt.index is None) else None
    if stored is not None and chain is top:
        site.carrier_var = stored
        flow.tracked[stored] = (sign, tuple(rest))
    elif stored is not None:
        flow.forget(stored)
    _follow_block(site, flow, following)


def _follow_block(site: DrawSite, flow: _Flow, body: tuple[Stmt, ...]) -> None:
    for stmt in body:
        if not flow.tracked:
            return
        if isinstance(stmt, (VarDecl, Assign)):
            _follow_assignment(site, flow, stmt)
        elif isinstance(stmt, (Output, ReturnStmt)):
            _uses_in(site, flow, stmt, stmt.expr)
        elif isinstance(stmt, IfStmt):
            _uses_in(site, flow, stmt, stmt.cond)
            branches = [flow.copy(), flow.copy()]
            _follow_block(site, branches[0], stmt.then)
            _follow_block(site, branches[1], stmt.orelse)
            for name in _assigned(stmt.then + stmt.orelse):
                flow.forget(name)
        elif isinstance(stmt, While):
            changed = _assigned(stmt.body)
            if any(isinstance(e, Binary) and e.op in COMPARISONS and _mentions(e, set(flow.tracked))
                   for top in (stmt.cond, *(t for s in statements(stmt.body) for t in stmt_expressions(s)))
                   for e in sub_expressions(top)):
                site.compared = True  # at least on the first trip, before any reassignment
            inner = flow.copy()
            for name in changed:
                inner.forget(name)
            _uses_in(site, inner, stmt, stmt.cond)
            _follow_block(site, inner, stmt.body)
            for name in changed:
                flow.forget(name)


def _follow_assignment(site: DrawSite, flow: _Flow, stmt: VarDecl | Assign) -> None:
    expr = stmt.expr
    carried = _carried(flow, expr)
    if carried is not None:
        sign, rest = carried
        site.contexts.append(DrawContext("carry", sign, rest, None, stmt))
    else:
        _uses_in(site, flow, stmt, expr)
    if isinstance(stmt, Assign) and stmt.index is not None:
        return
    if carried is not None:
        flow.tracked[stmt.name] = carried
        flow.values.pop(stmt.name, None)
    elif has_noise(expr) or _mentions(expr, set(flow.tracked)):
        flow.forget(stmt.name)
        if has_noise(expr) and not _mentions(expr, set(flow.tracked)):
            flow.noisy.add(stmt.name)
    else:
        flow.tracked.pop(stmt.name, None)
        flow.values[stmt.name] = _rewrite(expr, flow)


def _carried(flow: _Flow, expr: Expr) -> tuple[int, tuple[tuple[int, Expr], ...]] | None:
    """``expr`` is an additive chain holding one tracked carrier: its (sign, rest)."""
    terms = additive_terms(expr)
    holders = [(s, t) for s, t in terms if isinstance(t, Var) and t.name in flow.tracked]
    if len(holders) != 1 or any(_mentions(t, set(flow.tracked)) for s, t in terms if (s, t) != holders[0]):
        return None
    (sign, var), = holders
    inner_sign, inner_rest = flow.tracked[var.name]
    rest = _rewritten_terms([(s, t) for s, t in terms if t is not var], flow)
    if rest is None:
        return None
    return sign * inner_sign, rest + tuple((sign * s, e) for s, e in inner_rest)


def _uses_in(site: DrawSite, flow: _Flow, stmt: Stmt, top: Expr) -> None:
    """Comparisons and releases of a tracked carrier inside ``top``."""
    for expr in sub_expressions(top):
        if not (isinstance(expr, Var) and expr.name in flow.tracked):
            continue
        found = _chain_holding(top, expr)
        if found is None:
            continue
        chain, sign, rest = found
        if _comparison_with(top, chain) is not None:
            site.compared = True
        inner_sign, inner_rest = flow.tracked[expr.name]
        rewritten = _rewritten_terms(rest, flow)
        if rewritten is None:
            continue
        combined = rewritten + tuple((sign * s, e) for s, e in inner_rest)
        _use(site, flow, stmt, top, chain, sign * inner_sign, combined, own=False)


def _use(site: DrawSite, flow: _Flow, stmt: Stmt, top: Expr, chain: Expr, sign: int,
         rest: tuple[tuple[int, Expr], ...], own: bool) -> None:
    comparison = _comparison_with(top, chain)
    if comparison is not None:
        site.compared = True
        other = comparison[0] if own else _rewrite(comparison[0], flow)
        if other is None or _mentions(other, set(flow.tracked)):
            return
        # a comparison in a branch can select the alignment; elsewhere it is released
        branch = stmt if isinstance(stmt, (IfStmt, While)) else None
        site.contexts.append(DrawContext("compare", sign, rest, other, comparison[2], branch))
    elif isinstance(stmt, (Output, ReturnStmt)) and (chain is top or _post_processed(top, chain)):
        site.contexts.append(DrawContext("release", sign, rest, None, stmt))
    elif own and isinstance(stmt, (VarDecl, Assign)) and chain is top:
        site.contexts.append(DrawContext("carry", sign, rest, None, stmt))


# ---------------------------------------------------------------- rewriting to the state at the draw


def _rewritten_terms(terms: list[tuple[int, Expr]] | tuple[tuple[int, Expr], ...],
                     flow: _Flow) -> tuple[tuple[int, Expr], ...] | None:
    out = []
    for sign, term in terms:
        if isinstance(term, Var) and term.name in flow.noisy:
            continue  # another draw's value: assumed aligned by its own shift (the proof checks it)
        rewritten = _rewrite(term, flow)
        if rewritten is None:
            return None
        out.append((sign, rewritten))
    return tuple(out)


def _rewrite(expr: Expr, flow: _Flow) -> Expr | None:
    """``expr`` with every variable assigned since the draw replaced by its value then."""
    if isinstance(expr, Var):
        if expr.name in flow.values:
            return flow.values[expr.name]
        return expr
    if isinstance(expr, Binary):
        left, right = _rewrite(expr.left, flow), _rewrite(expr.right, flow)
        if left is None or right is None:
            return None
        return expr if (left is expr.left and right is expr.right) else Binary(expr.op, left, right, expr.span)
    if isinstance(expr, Unary):
        inner = _rewrite(expr.operand, flow)
        if inner is None:
            return None
        return expr if inner is expr.operand else Unary(expr.op, inner, expr.span)
    if isinstance(expr, Index):
        index = _rewrite(expr.index, flow)
        if index is None:
            return None
        return expr if index is expr.index else Index(expr.base, index, expr.span)
    if isinstance(expr, Call):
        args = [_rewrite(a, flow) for a in expr.args]
        if any(a is None for a in args):
            return None
        return expr if all(a is b for a, b in zip(args, expr.args, strict=True)) else Call(expr.func, tuple(args), expr.span)
    if isinstance(expr, If):
        parts = [_rewrite(e, flow) for e in (expr.cond, expr.then, expr.orelse)]
        if any(p is None for p in parts):
            return None
        return If(parts[0], parts[1], parts[2], expr.span)  # type: ignore[arg-type]
    if isinstance(expr, Noise):
        return None
    return expr


#: wrappers through which a released chain stays a release: when the chain
#: agrees in both runs, so does the wrapper's value, its other arguments
#: agreeing (post-processing, Dwork & Roth Prop. 2.1; the proof checks it)
_WRAPPERS = {"max", "min", "abs"}


def _post_processed(top: Expr, chain: Expr) -> bool:
    """``chain`` sits in ``top`` under `max`/`min`/`abs`, a negation, a
    conditional expression's arms or arithmetic with a noise-free side only
    (a draw inside a clamp: `max(x + lap(b), 0)`)."""
    if top is chain:
        return True
    if isinstance(top, Call) and top.func in _WRAPPERS:
        return any(_post_processed(a, chain) for a in top.args)
    if isinstance(top, Unary) and top.op == "-":
        return _post_processed(top.operand, chain)
    if isinstance(top, If):
        return _post_processed(top.then, chain) or _post_processed(top.orelse, chain)
    if isinstance(top, Binary) and top.op in ("+", "-", "*", "/"):
        # `c - abs(...)`, `2 * max(...)`: an arithmetic step with a noise-free side
        sides = ((top.left, top.right), (top.right, top.left))
        return any(not has_noise(other) and _post_processed(side, chain) for side, other in sides)
    return False


def _mentions(expr: Expr, names: set[str]) -> bool:
    return any(isinstance(e, Var) and e.name in names for e in sub_expressions(expr))


def _assigned(body: tuple[Stmt, ...]) -> set[str]:
    return {s.name for s in statements(body) if isinstance(s, (VarDecl, Assign))}


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
