"""The prover's proof as a certificate for the kernel (fuzzpy.verifier.kernel).

Only translation: what the search already found (each draw's alignment, each
loop's invariant, which `if`s it merged) is written in the certificate's
vocabulary (docs/verifier-kernel.md); nothing here is trusted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import z3

from fuzzpy.language.syntax import While
from fuzzpy.verifier.kernel.certificate import (
    BranchRule,
    Certificate,
    DrawAlignment,
    LoopInvariant,
    Side,
    Where,
    numbering,
)
from fuzzpy.verifier.text import show

if TYPE_CHECKING:
    from fuzzpy.verifier.alignment import Alignment, Shift
    from fuzzpy.verifier.draws import DrawSite
    from fuzzpy.verifier.invariants import Atom
    from fuzzpy.verifier.model import MechanismInfo
    from fuzzpy.verifier.product import Inputs, Path, Product


def shift_text(shift: Shift | None, site: DrawSite) -> str:
    """A shift in the `align` language: sign * (goal - sum of the other summands' distances)."""
    if shift is None:
        return "0"
    if shift.kind == "const":
        value = shift.value
        return f"({value.numerator} / {value.denominator})" if value.denominator != 1 else f"({value.numerator})"
    if shift.kind == "hint":
        assert shift.hint is not None
        return f"({show(shift.hint)})"
    ctx = site.contexts[shift.context]
    goal = {"zero": "0", "one": "1", "minus_one": "(0 - 1)"}.get(shift.target)
    if shift.target == "spare":
        goal = "(1" + "".join(f" - abs(dist({show(e)}))" for e in shift.spare) + ")"

    if goal is None:
        assert ctx.other is not None
        goal = f"dist({show(ctx.other)})"
    rest = "".join(f" {'-' if sign > 0 else '+'} dist({show(e)})" for sign, e in ctx.rest)
    text = f"({ctx.sign} * ({goal}{rest}))"
    if shift.part == "positive":  # max(0, t), written with the kernel's `abs`
        return f"(({text} + abs({text})) / 2)"
    return text


def draw_alignment(site: DrawSite, alignment: Alignment, numbers: dict[int, int]) -> DrawAlignment:
    at = Where.of(site.noise, numbers)
    then = shift_text(alignment.then, site)
    selector = alignment.selector
    if selector is None:
        mirror = show(alignment.mirror) if alignment.mirror is not None else ""
        return DrawAlignment(at, site.noise.kind, then, mirror=mirror)
    otherwise = shift_text(alignment.orelse, site)
    if selector.kind == "branch":
        node = selector.node
        return DrawAlignment(at, site.noise.kind, then, "branch", show(node), Where.of(node, numbers), otherwise)  # type: ignore[arg-type, union-attr]
    assert selector.index is not None
    return DrawAlignment(at, site.noise.kind, then, selector.kind, show(selector.index), None, otherwise)


def loop_invariant(info: MechanismInfo, inputs: Inputs, product: Product, loop: While, atoms: list[Atom],
                   head: Path, extra: list, counters: list[str]) -> LoopInvariant:
    """The conjunction of the kept atoms, built over placeholders named as the vocabulary says."""
    from fuzzpy.verifier.houdini import loop_view
    from fuzzpy.verifier.product import Budget, Pair, Path

    values = {n: Pair(z3.Const(f"{n}.1", p.one.sort()), z3.Const(f"{n}.2", p.two.sort()))
              for n, p in head.values.items()}
    budgets = {q: Budget(z3.Real(f"%remaining.{q}"), z3.Int(f"%last.{q}"), z3.Real(f"%lastd.{q}"),
                         z3.Int(f"%low.{q}"), z3.Int(f"%high.{q}")) for q in head.budgets}
    canonical = Path(values, z3.Real("%cost"), budgets=budgets)
    ghosts = {c: z3.Const(f"{c}.entry", head.values[c].one.sort()) for c in counters}
    view = loop_view(product, loop, canonical, z3.Real("%cost.entry"), ghosts, extra)
    kept, labels = [], []
    seen: dict[int, frozenset[str]] = {}  # the atoms share most subterms: each is walked once
    alive: list[z3.ExprRef] = []
    names = _names(inputs)
    for atom in atoms:
        term = atom.build(view)
        alive.append(term)  # z3 reuses the ids of freed terms: keep the walked ones alive
        # an atom over a draw in the guard names a fresh noise value at each
        # use: vacuous as an assumption, so it is left out (nothing else is)
        if all("!" not in n or n in names for n in _symbols(term, seen)):
            kept.append(_rename(term.sexpr(), names))
            labels.append(atom.label)
    body = f"(and {' '.join(kept)})" if kept else "true"
    return LoopInvariant(Where.of(loop, numbering(info.decl)), body, tuple(labels))


def _symbols(term: z3.ExprRef, seen: dict[int, frozenset[str]]) -> frozenset[str]:
    """The uninterpreted names in ``term``; ``seen`` keeps those of every subterm walked."""
    stack: list[tuple[z3.ExprRef, list | None]] = [(term, None)]
    while stack:
        node, children = stack.pop()
        key = node.get_id()
        if key in seen:
            continue
        if children is None:
            children = node.children()
            stack.append((node, children))
            stack.extend((c, None) for c in children if c.get_id() not in seen)
            continue
        own = frozenset((node.decl().name(),)) if z3.is_app(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED \
            else frozenset()
        seen[key] = own.union(*(seen[c.get_id()] for c in children))
    return seen[term.get_id()]


_TOKEN = re.compile(r"[^\s()|]+")


def _rename(text: str, names: dict[str, str]) -> str:
    return _TOKEN.sub(lambda m: names.get(m.group(0), m.group(0)), text)


def _names(inputs: Inputs) -> dict[str, str]:
    """The prover's input constants to the vocabulary's names."""
    names: dict[str, str] = {}
    for name, pair in inputs.scalars.items():
        if z3.is_const(pair.one) and not z3.is_rational_value(pair.one) and not z3.is_int_value(pair.one):
            names[str(pair.one)] = f"{name}.1"
            if not pair.two.eq(pair.one):
                names[str(pair.two.arg(1))] = f"(- {name}.2 {name}.1)"
    for q, n in inputs.lengths.items():
        names[str(n)] = f"%len.{q}"
    for q, (values, dists) in inputs.vectors.items():
        names[values.name()] = f"%val.{q}"  # type: ignore[attr-defined]
        names[dists.name()] = f"%dist.{q}"  # type: ignore[attr-defined]
    if inputs.output is not None:
        names[str(inputs.output)] = "%s"
    return names


def side(orientation: str, info: MechanismInfo, alignments: dict[int, Alignment], loops: list[LoopInvariant],
         merged: list[object]) -> Side:
    numbers = numbering(info.decl)
    draws = tuple(draw_alignment(site, alignments[site.index], numbers) for site in info.draws)
    nodes = {id(s): s for s in merged}
    branches = tuple(BranchRule(Where.of(s, numbers), "either") for s in nodes.values())
    return Side(orientation, draws, tuple(loops), branches)


def certificate(info: MechanismInfo, sides: list[Side], whole: frozenset[str]) -> Certificate:
    decl = info.decl
    kinds = []
    private = {n for r in decl.requires for n in _dist_names(r)}
    for p in decl.params:
        norm = info.vectors.get(p.name)
        kinds.append((p.name, f"vec[{norm}]" if norm is not None else "private" if p.name in private else "public"))
    rule = "pointwise" if info.pointwise else "alignment"
    return Certificate(decl.name, show(decl.privacy), rule, tuple(show(r) for r in decl.requires), tuple(kinds),
                       tuple(sorted(whole)), tuple(sides))


def _dist_names(expr: object) -> set[str]:
    from fuzzpy.language.syntax import Dist, Var
    from fuzzpy.verifier.walk import sub_expressions

    return {e.expr.name for e in sub_expressions(expr) if isinstance(e, Dist) and isinstance(e.expr, Var)}  # type: ignore[arg-type]
