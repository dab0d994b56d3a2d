"""Public lists as mechanism parameters (issue 29, item 7).

A mechanism parameter of type `list num` (or `list int`) is a public list:
per-query thresholds T_1, T_2, ... as Lyu, Su & Li print SVT (PVLDB 2017,
Alg. 1). Both runs of the relational proof see the same list. The verifier
proves the mechanism as if the parameter were the private vector
`vec[inf] num` with the precondition `forall i. dist(T[i]) == 0`: the same
statement (a vector that moves by 0 is the public list), in the form the
prover, the refuter and the proof kernel already read. A `def` calling the
mechanism passes a list that may not depend on private data (the call's
public-argument rule, `checker.mechanism_calls`: FZ309 otherwise).
"""

from __future__ import annotations

from dataclasses import replace

from fuzzpy.language import syntax as S
from fuzzpy.verifier.walk import statements, stmt_expressions, sub_expressions

PUBLIC_ELEMENTS = ("num", "int")


def is_public_list(ty: S.TypeExpr) -> bool:
    return isinstance(ty, S.TyList) and isinstance(ty.elem, S.TyName) and ty.elem.name in PUBLIC_ELEMENTS


def as_vectors(decl: S.MechanismDecl) -> S.MechanismDecl:
    """``decl`` with each public list parameter a `vec[inf] num` that moves by 0."""
    lists = [p for p in decl.params if is_public_list(p.type)]
    if not lists:
        return decl
    params = tuple(
        replace(p, type=S.TyVec("inf", S.TyName("num", p.type.span), p.type.span)) if p in lists else p
        for p in decl.params
    )
    index = _fresh_index(decl)
    return replace(decl, params=params, requires=(*decl.requires, *(_stands_still(p, index) for p in lists)))


def _stands_still(param: S.Param, index: str) -> S.Expr:
    """`forall i. dist(T[i]) == 0`, located at the parameter."""
    span = param.span
    entry = S.Index(S.Var(param.name, span), S.Var(index, span), span)
    return S.Forall(index, S.Binary("==", S.Dist(entry, span), S.NumLit("0", span), span), span)


def _fresh_index(decl: S.MechanismDecl) -> str:
    """A bound name no parameter, local or expression of ``decl`` uses."""
    names = {p.name for p in decl.params}
    names |= {s.name for s in statements(decl.body) if isinstance(s, S.VarDecl)}
    tops = [e for s in statements(decl.body) for e in stmt_expressions(s)] + [*decl.requires, decl.privacy]
    names |= {e.name for top in tops for e in sub_expressions(top) if isinstance(e, S.Var)}
    names |= {e.var for top in tops for e in sub_expressions(top) if isinstance(e, S.Forall)}
    return next(name for name in ("i", "j", "k", *(f"i{n}" for n in range(1, 10**6))) if name not in names)


def standing_vectors(decl: S.MechanismDecl) -> set[str]:
    """The vector parameters a `requires forall i. dist(T[i]) == 0` keeps
    equal in both runs (a public list, or the same written by hand)."""
    found = set()
    for req in decl.requires:
        if not (isinstance(req, S.Forall) and isinstance(req.body, S.Binary) and req.body.op == "=="):
            continue
        dist, zero = req.body.left, req.body.right
        if (isinstance(dist, S.Dist) and isinstance(dist.expr, S.Index) and isinstance(dist.expr.base, S.Var)
                and isinstance(dist.expr.index, S.Var) and dist.expr.index.name == req.var
                and isinstance(zero, S.NumLit) and zero.value == 0):
            found.add(dist.expr.base.name)
    return found
