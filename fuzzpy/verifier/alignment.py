"""Alignment templates for noise draws and their enumeration, simplest first.

An alignment maps a draw eta of this run to eta + a in the neighbouring run.
The template (CheckDP, Wang et al. CCS 2020) is ``cond ? A : B`` where ``cond``
is a branch condition that depends on the draw (or, under the pointwise rule,
"this is the draw at the fixed output s") and A, B are affine in the live
distances. We instantiate the coefficients through the draw's syntactic
context: a shift either is a constant, or sets the distance of the
expression that carries the draw to a target (0: the released value agrees;
dist(other side): the comparison is preserved; +1/-1: a margin).
Injectivity: on each selector region the map is a translation, and the
selector is preserved by the coupling (the branch agreement obligation), so the
images of the regions are disjoint.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import replace as rebuild
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    Call,
    Dist,
    Expr,
    Index,
    NumLit,
    ReturnStmt,
    Unary,
    Var,
    VarDecl,
)
from fuzzpy.support.records import frozen
from fuzzpy.verifier import solver as z
from fuzzpy.verifier.draws import DrawContext, DrawSite
from fuzzpy.verifier.model import OUTPUT_NAME, MechanismInfo
from fuzzpy.verifier.solver import Term
from fuzzpy.verifier.text import show, show_signed_sum
from fuzzpy.verifier.walk import has_noise, statements, sub_expressions

if TYPE_CHECKING:
    from fuzzpy.verifier.product import Path, Product


@dataclass
class DrawEnv:
    """What a shift may look at: the product state just before the draw."""

    product: Product
    site: DrawSite
    path: Path

    def dist_of(self, expr: Expr) -> Term:
        value = self.product.eval(expr, self.path)
        return z.to_real(value.two) - z.to_real(value.one)

    def rest_dist(self, context: DrawContext) -> Term:
        total = z.number(0)
        for sign, expr in context.rest:
            total = total + sign * self.dist_of(expr)
        return total


@frozen
class Shift:
    """A shift: constant ``value``, or "carrier distance := target" in a context."""

    kind: str  # "const" | "target" | "hint"
    value: Fraction = Fraction(0)
    #: target "spare": 1 minus the `vec[1]` distances of these entries (the
    #: carrier's own, `spare_reads`), the most any *other* entry of that vector
    #: can move: the `vec[1]` counterpart of the target "one"
    spare: tuple[Expr, ...] = ()
    context: int = 0
    target: str = ""  # "zero" | "one" | "minus_one" | "other"
    hint: Expr | None = None
    #: "positive": only the upward part max(0, t) of the target shift t. One-sided
    #: noise may only move up (Albarghouthi & Hsu 2018); a chain holding two
    #: draws of opposite signs (`x + lapplus(b) - lapplus(b)`) is kept equal by
    #: moving the one that has to go up, each paying its own part.
    part: str = ""

    def term(self, env: DrawEnv) -> Term:
        if self.kind == "const":
            return z.number(self.value)
        if self.kind == "hint":
            assert self.hint is not None
            return z.to_real(_relational_hint(self.hint, env))
        ctx = env.site.contexts[self.context]
        goal = {"zero": z.number(0), "one": z.number(1), "minus_one": z.number(-1)}.get(self.target)
        if self.target == "spare":
            goal = z.sum_of(z.number(1), *(-z.absolute(env.dist_of(e)) for e in self.spare))

        if goal is None:
            assert ctx.other is not None
            goal = env.dist_of(ctx.other)
        # dist(carrier) = rest distance + sign * a; solve dist(carrier) = goal for a
        shift = ctx.sign * (goal - env.rest_dist(ctx))
        return (shift + z.absolute(shift)) / 2 if self.part == "positive" else shift

    def describe(self, site: DrawSite) -> str:
        if self.kind == "const":
            return _fraction_text(self.value)
        if self.kind == "hint":
            assert self.hint is not None
            return show(self.hint)
        ctx = site.contexts[self.context]
        goal = {"zero": "", "one": "1", "minus_one": "1"}.get(self.target)
        toward = -1 if self.target == "minus_one" else 1  # (a signed number, never printed `--1`)
        if self.target == "spare":
            goal = "(" + " - ".join(["1"] + [f"|dist({show(e)})|" for e in self.spare]) + ")"

        if goal is None:
            assert ctx.other is not None
            goal = f"dist({show(ctx.other)})"
        if goal.startswith("dist(") and _constant_text(goal[5:-1]):
            goal = ""
        pieces = [(toward, goal)] if goal else []
        pieces += [(-s, f"dist({show(e)})") for s, e in ctx.rest if not _constant_text(show(e))]
        if ctx.sign < 0:
            pieces = [(-s, p) for s, p in pieces]
        text = show_signed_sum(pieces)
        return f"max(0, {text})" if self.part == "positive" else text


def spare_reads(info: MechanismInfo, context: DrawContext) -> list[Expr]:
    """The `vec[1]` entries among the carrier's other summands (`q[i]` in `q[i] + lap(b)`)."""
    return [e for _, e in context.rest if isinstance(e, Index) and isinstance(e.base, Var)
            and info.vectors.get(e.base.name) == "1"]


def _constant_text(text: str) -> bool:
    """A literal never differs between the runs: its dist() is left out of the text."""
    try:
        Fraction(text)
    except ValueError:
        return False
    return True


@frozen
class Selector:
    """What chooses between an alignment's two shifts.

    "branch": a comparison evaluated later in this run (it must agree in both
    runs, so each region is translated into itself); "pointwise": "this draw
    is the one at the output s"; "state": a test of this run's state at the
    draw (a function of the past, so the alignment stays injective).
    """

    kind: str  # "branch" | "pointwise" | "state"
    node: object | None = None
    variable: str = ""  # pointwise: the index expression's text (`i`, `0`)
    index: Expr | None = None  # pointwise: the index; state: the test

    def now(self, env: DrawEnv) -> Term | None:
        """The selector's value at the draw, or None when it is decided later."""
        if self.kind == "branch":
            return None
        assert self.index is not None
        value = env.product.eval(self.index, env.path).one
        if self.kind == "state":
            return value
        return value == env.product.inputs.output

    def describe(self) -> str:
        if self.kind == "pointwise":
            return f"{self.variable} == s"
        if self.kind == "state":
            return show(self.index)  # type: ignore[arg-type]
        return show(self.node)  # type: ignore[arg-type]


@frozen
class Alignment:
    then: Shift
    selector: Selector | None = None
    orelse: Shift | None = None
    #: Laplace only: where the runs disagree on this test (of the inputs), the
    #: neighbour's value is -eta + shift (the density is symmetric)
    mirror: Expr | None = None

    def describe(self, site: DrawSite) -> str:
        if self.mirror is not None:
            return f"{self.then.describe(site)}, negated where the runs disagree on {show(self.mirror)}"
        if self.selector is None:
            return self.then.describe(site)
        other = self.orelse.describe(site) if self.orelse is not None else "0"
        return f"{self.selector.describe()} ? {self.then.describe(site)} : {other}"


def hinted(info: MechanismInfo, hint: Expr) -> Alignment:
    """A student's `align` hint. `X == s ? A : B` under the pointwise rule is the
    pointwise selector (the draw at index s gets A, every other draw B: a
    translation per s, Barthe et al. LICS 2016), so the proof and the kernel
    treat it as they treat a found one; any other hint is one shift."""
    from fuzzpy.language.syntax import Binary, If, Noise

    if isinstance(hint, If) and isinstance(hint.cond, Binary) and hint.cond.op == "==" and info.pointwise \
            and info.sort_of(OUTPUT_NAME) is None:
        sides = (hint.cond.left, hint.cond.right)
        names_s = [isinstance(e, Var) and e.name == OUTPUT_NAME for e in sides]
        if names_s.count(True) == 1:
            index = sides[names_s.index(False)]
            if not any(isinstance(e, (Dist, Noise)) or (isinstance(e, Var) and e.name == OUTPUT_NAME)
                       for e in sub_expressions(index)):
                point = Selector("pointwise", variable=show(index), index=index)
                return Alignment(Shift("hint", hint=hint.then), point, Shift("hint", hint=hint.orelse))
    return Alignment(Shift("hint", hint=hint))


def _fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _relational_hint(expr: Expr, env: DrawEnv) -> Term:
    """An `align E` hint: plain variables are this run's values, dist(e) the difference."""
    from fuzzpy.language.syntax import Binary, Call, If, Unary
    from fuzzpy.verifier.product import BINARY

    if isinstance(expr, Dist):
        return env.dist_of(expr.expr)
    if isinstance(expr, Binary):
        return BINARY[expr.op](_relational_hint(expr.left, env), _relational_hint(expr.right, env))
    if isinstance(expr, Unary):
        inner = _relational_hint(expr.operand, env)
        return -inner if expr.op == "-" else z.neg(inner)
    if isinstance(expr, If):
        cond, then, orelse = (_relational_hint(e, env) for e in (expr.cond, expr.then, expr.orelse))
        return z.ite(cond, then, orelse)
    if isinstance(expr, Call) and expr.func == "abs" and len(expr.args) == 1:
        return z.absolute(_relational_hint(expr.args[0], env))
    output = env.product.inputs.output
    if isinstance(expr, Var) and expr.name == OUTPUT_NAME and output is not None and OUTPUT_NAME not in env.path.values:
        return output  # the pointwise rule's fixed output (a hint may name it)
    return env.product.eval(expr, env.path).one


# ---------------------------------------------------------------- candidates


def candidates(info: MechanismInfo, site: DrawSite) -> list[tuple[int, Alignment]]:
    """Scored alignments for one draw, lowest score (simplest) first."""
    if site.noise.align is not None:
        return [(0, hinted(info, site.noise.align))]
    scored: list[tuple[int, Alignment]] = []
    known = site.visible | set(info.scalars) | set(info.vectors)
    usable = [i for i, c in enumerate(site.contexts) if _evaluable(c, known)]
    releases = [i for i in usable if site.contexts[i].kind == "release"]
    compares = [i for i in usable if site.contexts[i].kind == "compare"]
    carries = [i for i in usable if site.contexts[i].kind == "carry"]
    zero = Shift("const")
    guarded = {i for i in releases if any(_inside(site.contexts[i].node, site.contexts[c].branch)
                                          for c in compares if site.contexts[c].branch is not None)}
    # a threshold (drawn once, only compared, never released) is shifted by 1 in
    # every SVT proof (Lyu, Su & Li 2017): try that first
    threshold = site.compared and not site.in_loop and not releases and not compares
    scored.append((3 if releases else 1 if threshold else 0, Alignment(zero)))
    scored += [(0 if threshold else 1, Alignment(Shift("const", Fraction(1)))),
               (2, Alignment(Shift("const", Fraction(-1))))]
    for i in releases:
        # a release under a branch on the same draw is better served by a selector
        scored.append((2 if i in guarded else 0, Alignment(Shift("target", context=i, target="zero"))))
    if site.noise.kind == "lapplus":
        # one-sided noise moves only up: the upward part of "the carrier agrees"
        for i in releases + carries:
            if not _public(site.contexts[i], info):
                scored.append((1, Alignment(Shift("target", context=i, target="zero", part="positive"))))
    for i in carries:
        if _public(site.contexts[i], info):
            continue  # the carrier's other summands never differ: same as the constants
        scored.append((2, Alignment(Shift("target", context=i, target="zero"))))
        scored.append((3, Alignment(Shift("target", context=i, target="one"))))
    for i in compares:
        scored.append((2, Alignment(Shift("target", context=i, target="other"))))
        scored.append((3, Alignment(Shift("target", context=i, target="one"))))
    for i in compares:
        branch = Selector("branch", node=site.contexts[i].node)
        scored.append((1, Alignment(Shift("target", context=i, target="other"), branch, zero)))
        scored.append((2, Alignment(Shift("target", context=i, target="one"), branch, zero)))
        scored.append((4, Alignment(Shift("target", context=i, target="other"), branch,
                                    Shift("target", context=i, target="zero"))))
        scored.append((4, Alignment(Shift("const", Fraction(1)), branch, zero)))
        # the comparison's false side is the one that pays (`while (... && q[i] + lap(b) < tt)`)
        scored.append((1, Alignment(zero, branch, Shift("target", context=i, target="other"))))
        scored.append((2, Alignment(zero, branch, Shift("target", context=i, target="one"))))
    for test in _sign_tests(info, site):
        # `x = e` in one arm, `x = 0 - e` in the other (a sign chosen by private
        # data): run 2 takes -eta where the runs take different arms
        scored.append((2, Alignment(zero, mirror=test)))
    for test in site.next_guards:
        # a draw that matters only if the loop runs another trip (a redrawn threshold);
        # a budget test (`count < N`) first, running out of input second
        ahead = Selector("state", index=test)
        simple = not any(isinstance(e, Call) and e.func == "len" for e in sub_expressions(test))
        scored.append((1 if simple else 2, Alignment(Shift("const", Fraction(1)), ahead, zero)))
    if info.result_sort == "int":
        for index in _indices(info, site, usable):
            point = Selector("pointwise", variable=show(index), index=index)
            for i in compares + carries:
                scored.append((1, Alignment(Shift("target", context=i, target="one"), point, zero)))
            for i in compares + carries:
                # "the draw at s is the smallest" (argmin): its carrier moves down by 1
                scored.append((2, Alignment(Shift("target", context=i, target="minus_one"), point, zero)))
                # monotone queries: holding the draw at s in place can be enough
                scored.append((3, Alignment(Shift("target", context=i, target="zero"), point, zero)))
            for i in compares:
                scored.append((3, Alignment(Shift("target", context=i, target="other"), point, zero)))
            scored.append((3, Alignment(Shift("const", Fraction(1)), point, zero)))
            for i in compares + carries:
                # `vec[1]`: no other entry moves by more than 1 - |dist(q[s])|; one-sided
                # noise takes that shift only when it is >= 0 (Ding et al. 2021's
                # exponential-noise noisy max, the sensitivity counted in L1)
                spare = tuple(spare_reads(info, site.contexts[i]))
                if spare:
                    one_sided = site.noise.kind == "lapplus"
                    part = "positive" if one_sided else ""
                    # one-sided noise over vec[1]: this is the proof's own shift (the
                    # plain `1 - dist` may cost 2), ranked with the simplest so that the
                    # other one-sided candidates (`part="positive"` of a carrier) do
                    # not push it past the screening budget (MAX_SCREENED)
                    shift = Shift("target", context=i, target="spare", spare=spare, part=part)
                    scored.append((1 if one_sided else 2, Alignment(shift, point, zero)))
    scored.sort(key=lambda pair: pair[0])
    return _distinct(scored, site)


def _distinct(scored: list[tuple[int, Alignment]], site: DrawSite) -> list[tuple[int, Alignment]]:
    """One entry per alignment (two contexts of a draw often give the same
    shift): a repeated one could only fail again, at the price of a proof attempt."""
    seen: set[tuple] = set()
    kept = []
    for score, alignment in scored:
        mirror = show(alignment.mirror) if alignment.mirror is not None else None
        key = (_shift_key(alignment.then, site), _shift_key(alignment.orelse, site), _selector_key(alignment.selector),
               mirror)
        if key not in seen:
            seen.add(key)
            kept.append((score, alignment))
    return kept


def _shift_key(shift: Shift | None, site: DrawSite) -> tuple:
    """What a shift's value depends on (the same key, the same term at every draw)."""
    if shift is None:
        return ("const", Fraction(0))
    if shift.kind == "const":
        return ("const", shift.value)
    if shift.kind == "hint":
        return ("hint", show(shift.hint))  # type: ignore[arg-type]
    ctx = site.contexts[shift.context]
    other = show(ctx.other) if shift.target == "other" and ctx.other is not None else ""
    return ("target", shift.target, ctx.sign, tuple((sign, show(e)) for sign, e in ctx.rest), other,
            tuple(show(e) for e in shift.spare), shift.part)


def _selector_key(selector: Selector | None) -> tuple:
    if selector is None:
        return ()
    if selector.kind == "branch":
        return ("branch", id(selector.node))
    return (selector.kind, show(selector.index))  # type: ignore[arg-type]


def _sign_tests(info: MechanismInfo, site: DrawSite) -> list[Expr]:
    """Conditions of the `if`s whose two arms both assign from the variable
    holding a Laplace draw, when they read only the inputs (so that they can
    be evaluated at the draw)."""
    from fuzzpy.language.syntax import Assign, IfStmt, VarDecl
    from fuzzpy.verifier.walk import statements

    if site.noise.kind != "lap" or site.carrier_var is None:
        return []
    inputs = set(info.scalars) | set(info.vectors)
    carrier = site.carrier_var

    def reads_carrier(body: tuple) -> bool:  # noqa: ANN001 - statements
        return any(isinstance(s, (Assign, VarDecl)) and any(isinstance(e, Var) and e.name == carrier
                                                              for e in sub_expressions(s.expr))
                   for s in statements(body))

    found: dict[str, Expr] = {}
    for stmt in statements(info.decl.body):
        if not isinstance(stmt, IfStmt) or has_noise(stmt.cond):
            continue
        names = {e.name for e in sub_expressions(stmt.cond) if isinstance(e, Var)}
        if names <= inputs and reads_carrier(stmt.then) and reads_carrier(stmt.orelse):
            found.setdefault(show(stmt.cond), stmt.cond)
    return list(found.values())


def _inside(stmt: object, branch: object) -> bool:
    """Whether ``stmt`` is one of the statements of ``branch`` (an `IfStmt`)."""
    from fuzzpy.verifier.walk import statements

    body = getattr(branch, "then", ()) + getattr(branch, "orelse", ())
    return any(s is stmt for s in statements(body))


def _public(context: DrawContext, info: MechanismInfo) -> bool:
    """Every summand next to the draw is a literal or a public scalar parameter."""
    from fuzzpy.verifier.prover import private_scalars

    private = private_scalars(info)
    for _, expr in context.rest:
        for sub in sub_expressions(expr):
            if isinstance(sub, Var) and (sub.name in private or sub.name not in info.scalars):
                return False
            if isinstance(sub, Index):
                return False
    return True


def _evaluable(context: DrawContext, known: frozenset[str] | set[str]) -> bool:
    """The context's other summands and other side can be computed at the draw."""
    exprs = [e for _, e in context.rest] + ([context.other] if context.other is not None else [])
    for expr in exprs:
        if has_noise(expr):
            return False
        if any(isinstance(e, Var) and e.name not in known for e in sub_expressions(expr)):
            return False
    return True


def _indices(info: MechanismInfo, site: DrawSite, usable: list[int]) -> list[Expr]:
    """Integer expressions naming "the draw at s" under the pointwise rule.

    The indices of the vector entries next to the draw (`q[i]` gives i,
    `q[0]` gives 0, `q[i - 1]` gives i - 1: a 1-based loop), and the labels
    the mechanism returns for the entry: when it returns `best` and assigns
    `best = i`, the draw whose index variable is i at s (a 1-based label
    `best = i` next to `q[i - 1]`, or `return best - 1` with `best = i`:
    the returned expression with the assigned value put in). Any integer
    test of the state at the draw is an injective selector (a translation
    for each fixed past); these only choose which one the proof tries.
    """
    known = site.visible | set(info.scalars)
    found: dict[str, Expr] = {}
    for i in usable:
        for _, expr in site.contexts[i].rest:
            for sub in sub_expressions(expr):
                if isinstance(sub, Index) and _integral(info, sub.index, known):
                    found.setdefault(show(sub.index), sub.index)
    if site.in_loop:
        for label in _labels(info, known):
            found.setdefault(show(label), label)
    return list(found.values())


def _integral(info: MechanismInfo, expr: Expr, known: frozenset[str] | set[str]) -> bool:
    """An integer expression over integer variables readable at the draw, `len` and literals."""
    if isinstance(expr, NumLit):
        return expr.is_int
    if isinstance(expr, Var):
        return expr.name in known and info.sort_of(expr.name) == "int"
    if isinstance(expr, Call):
        return expr.func == "len" and len(expr.args) == 1 and isinstance(expr.args[0], Var) \
            and expr.args[0].name in info.vectors
    if isinstance(expr, Binary) and expr.op in ("+", "-", "*"):
        return _integral(info, expr.left, known) and _integral(info, expr.right, known)
    if isinstance(expr, Unary) and expr.op == "-":
        return _integral(info, expr.operand, known)
    return False


def _labels(info: MechanismInfo, known: frozenset[str] | set[str]) -> list[Expr]:
    """The returned expression with a returned local replaced by a value assigned to it
    (`return best` and `best = i` give i); only values that vary (a literal is
    already an index when it is one)."""
    body = info.decl.body
    found: list[Expr] = []
    for ret in (s for s in statements(body) if isinstance(s, ReturnStmt)):
        names = {e.name for e in sub_expressions(ret.expr) if isinstance(e, Var) and e.name in info.locals}
        if len(names) != 1 or has_noise(ret.expr):
            continue
        (name,) = names
        for stmt in statements(body):
            if isinstance(stmt, (VarDecl, Assign)) and stmt.name == name and getattr(stmt, "index", None) is None \
                    and _integral(info, stmt.expr, known) \
                    and any(isinstance(e, Var) and e.name in info.locals for e in sub_expressions(stmt.expr)):
                label = _substitute(ret.expr, name, stmt.expr)
                if _integral(info, label, known):
                    found.append(label)
    return found


def _substitute(expr: Expr, name: str, value: Expr) -> Expr:
    if isinstance(expr, Var) and expr.name == name:
        return value
    if isinstance(expr, Binary):
        return rebuild(expr, left=_substitute(expr.left, name, value), right=_substitute(expr.right, name, value))
    if isinstance(expr, Unary):
        return rebuild(expr, operand=_substitute(expr.operand, name, value))
    return expr


def combinations(options: list[list[tuple[int, Alignment]]]) -> Iterator[tuple[int, tuple[Alignment, ...]]]:
    """All choices of one alignment per draw, in order of increasing total score."""
    if not options:
        yield 0, ()
        return
    start = (0,) * len(options)
    heap = [(sum(o[0][0] for o in options), start)]
    seen = {start}
    while heap:
        score, indices = heapq.heappop(heap)
        yield score, tuple(options[d][k][1] for d, k in enumerate(indices))
        for d in range(len(options)):
            if indices[d] + 1 < len(options[d]):
                nxt = indices[:d] + (indices[d] + 1,) + indices[d + 1 :]
                if nxt not in seen:
                    seen.add(nxt)
                    delta = options[d][indices[d] + 1][0] - options[d][indices[d]][0]
                    heapq.heappush(heap, (score + delta, nxt))
