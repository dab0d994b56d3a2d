"""Both orientations of a neighbour relation.

Differential privacy bounds the ratio both ways: P[o | q] <= e^eps P[o | q']
and P[o | q'] <= e^eps P[o | q] for every neighbouring pair (Dwork & Roth,
Def. 2.4). A proof by alignment shows only the first inequality, for pairs with
q' = q + dq where dq satisfies the `requires`. When the `requires` constrain
distances one-sidedly (`dist(x) >= 0`, monotone queries `forall i.
dist(q[i]) >= 0`; Lyu, Su & Li 2017 take monotone to mean "all up, or all
down"), the second inequality is the first one for the mirrored relation
dq -> -dq, which must be proved (or refuted) as well. Whether a relation is
symmetric is decided by z3 on its meaning, not on its spelling
(`abs(2 * dist(x) - 1) <= 1` is 0 <= dist(x) <= 1: one-sided).
"""

from __future__ import annotations

import dataclasses

from fuzzpy.language.syntax import Dist, Expr, Forall, MechanismDecl, Unary
from fuzzpy.verifier import solver as z
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.walk import sub_expressions


def mirrored(decl: MechanismDecl, info: MechanismInfo) -> MechanismDecl | None:
    """The mechanism with every `dist(e)` of its `requires` negated, or None
    when the set of allowed distances is symmetric."""
    if not any(isinstance(e, Dist) for r in decl.requires for e in sub_expressions(r)):
        return None
    if symmetric(info):
        return None
    return dataclasses.replace(decl, requires=tuple(_negate_dists(r) for r in decl.requires))


def negated(decl: MechanismDecl) -> MechanismDecl | None:
    """The mechanism with every `dist(e)` of its `requires` negated, whether or
    not the relation is symmetric (None without any `dist`): the reversed
    orientation the kernel asks for when it cannot see the symmetry itself."""
    if not any(isinstance(e, Dist) for r in decl.requires for e in sub_expressions(r)):
        return None
    return dataclasses.replace(decl, requires=tuple(_negate_dists(r) for r in decl.requires))


def symmetric(info: MechanismInfo) -> bool:
    """Does every distance vector the `requires` allow stay allowed when negated?

    z3 must show it valid (`unknown` or an error means "not symmetric": then
    both orientations are proved, which is always sound). Each `forall` is
    assumed at one arbitrary in-range index and required there negated;
    assuming fewer instances can only make the answer "not symmetric".
    """
    from fuzzpy.verifier.product import relational
    from fuzzpy.verifier.prover import make_inputs

    try:
        inputs = make_inputs(info)
        assumed, goal = list(inputs.background), []
        for req in info.decl.requires:
            if not any(isinstance(e, Dist) for e in sub_expressions(req)):
                continue
            if isinstance(req, Forall):
                for name, n in inputs.lengths.items():
                    k = z.fresh_int(f"index_{name}")
                    assumed += [k >= 0, k < n, relational(req.body, {req.var: k}, inputs)]
                    goal.append(relational(req.body, {req.var: k}, inputs, sign=-1))
            else:
                goal.append(relational(req, {}, inputs, sign=-1))
        return z.check_valid(assumed, z.conj(*goal)).status == "valid"
    except Exception:  # noqa: BLE001 - undecided: prove both orientations
        return False


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


def _is_expr(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type) and type(value).__module__ == "fuzzpy.language.syntax" \
        and not hasattr(value, "line")  # a Span is not an expression
