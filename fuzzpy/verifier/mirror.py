"""Both orientations of a neighbour relation.

Differential privacy bounds the ratio both ways: P[o | q] <= e^eps P[o | q']
and P[o | q'] <= e^eps P[o | q] for every neighbouring pair (Dwork & Roth,
Def. 2.4). A proof by alignment shows only the first inequality, for pairs with
q' = q + dq where dq satisfies the `requires`. When the `requires` constrain
distances one-sidedly (`dist(x) >= 0`, monotone queries `forall i.
dist(q[i]) >= 0`; Lyu, Su & Li 2017 take monotone to mean "all up, or all
down"), the second inequality is the first one for the mirrored relation
dq -> -dq, which must be proved (or refuted) as well.
"""

from __future__ import annotations

import dataclasses

from fuzzpy.syntax import Call, Dist, Expr, MechanismDecl, Unary


def mirrored(decl: MechanismDecl) -> MechanismDecl | None:
    """The mechanism with every `dist(e)` of its `requires` negated, or None
    when the relation is symmetric as written (every `dist` under `abs`)."""
    if all(_symmetric(r) for r in decl.requires):
        return None
    return dataclasses.replace(decl, requires=tuple(_negate_dists(r) for r in decl.requires))


def _symmetric(expr: object) -> bool:
    if isinstance(expr, Dist):
        return False
    if isinstance(expr, Call) and expr.func == "abs":
        return True
    return all(_symmetric(child) for child in _expr_children(expr))


def _negate_dists(expr: Expr) -> Expr:
    if isinstance(expr, Dist):
        return Unary("-", expr, expr.span)
    if not dataclasses.is_dataclass(expr):
        return expr
    changes = {}
    for f in dataclasses.fields(expr):
        value = getattr(expr, f.name)
        if _is_expr(value):
            changes[f.name] = _negate_dists(value)
        elif isinstance(value, tuple) and any(_is_expr(v) for v in value):
            changes[f.name] = tuple(_negate_dists(v) if _is_expr(v) else v for v in value)
    return dataclasses.replace(expr, **changes)  # type: ignore[arg-type]


def _expr_children(expr: object) -> list[object]:
    if not dataclasses.is_dataclass(expr):
        return []
    found: list[object] = []
    for f in dataclasses.fields(expr):
        value = getattr(expr, f.name)
        if _is_expr(value):
            found.append(value)
        elif isinstance(value, tuple):
            found += [v for v in value if _is_expr(v)]
    return found


def _is_expr(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type) and type(value).__module__ == "fuzzpy.syntax" \
        and not hasattr(value, "line")  # a Span is not an expression
