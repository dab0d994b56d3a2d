"""Calling a verified `mechanism` from a `def` (language design, section 5).

A mechanism is a black box whose claim the coupling verifier has proved for
neighbouring private inputs: `vec[inf] num` moving by at most 1 per entry,
`vec[1] num` by at most 1 in total, scalars within their `requires
abs(dist(x)) <= c`. A call is private in the database when (1) the verifier
proved the claim, (2) every private argument moves within that bound when the
database changes by one row (its sensitivity is at most the bound), (3) the
public arguments do not depend on private data, and those that appear in the
claim or a precondition are static, so that the claim can be evaluated. The
call then costs the claim at those static values: a `Verified` event.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy import syntax as S
from fuzzpy import types as T
from fuzzpy.accounting.events import Verified
from fuzzpy.checker import costs as C
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.static_eval import (
    evaluate,
    free_names,
    length_key,
    mentions_dist,
    private_bound,
)
from fuzzpy.sensitivity import Sens

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Inferencer


def apply_mechanism(ck: Inferencer, head: S.Var, args: list[S.Expr], whole: S.Expr) -> Judgment:
    mech = ck.globals.mechanisms[head.name]
    if len(args) != len(mech.params):
        raise CheckError(
            "FZ208",
            f"`{mech.name}` takes {len(mech.params)} argument(s) ({', '.join(p.name for p in mech.params)}) "
            f"but is given {len(args)}",
            whole.span,
        )
    bounds = _private_bounds(ck, mech)
    needed_static = free_names(mech.privacy) | set().union(*(free_names(r) for r in mech.requires if not mentions_dist(r)))
    statics: dict[str, Fraction] = dict(ck.globals.constants)
    judgments: list[Judgment] = []
    for param, arg in zip(mech.params, args, strict=True):
        ty = ck.elaborate(param.type)
        j = ck.check(arg, ty, f"the parameter `{param.name}` of mechanism `{mech.name}` has type `{ty}`")
        judgments.append(j)
        if j.length is not None:
            statics[length_key(param.name)] = Fraction(j.length)
        if param.name not in bounds and j.static is not None:
            statics[param.name] = j.static
        elif param.name in needed_static and param.name not in bounds:
            raise CheckError(
                "FZ309",
                f"the argument for `{param.name}` must be static: it appears in the privacy claim or a "
                f"precondition of `{mech.name}`, which is evaluated at the call",
                arg.span,
                hint="pass a literal or a top-level `let` constant",
            )
    _check_public_preconditions(ck, mech, statics, whole)
    epsilon, delta = _claim(ck, mech, statics, whole)
    _require_proof(ck, mech, head)
    cost: C.CostCtx = {}
    for param, arg, j in zip(mech.params, args, judgments, strict=True):
        bound = bounds.get(param.name)
        for name, usage in j.ctx.items():
            if usage.sens.is_zero:
                continue
            if bound is None:
                cost[name] = C.infinite(
                    C.Blame("FZ309", arg.span, f"the public argument `{param.name}` of `{mech.name}` depends on `{name}`")
                )
            elif usage.sens > bound:
                cost[name] = C.infinite(_too_sensitive(mech, param, name, usage, bound, arg))
            elif name not in cost:
                cost[name] = C.Cost((Verified(mech.name, epsilon, delta),))
    ck.note(f"call of mechanism `{mech.name}`: its proved claim ({epsilon}) in each variable of its private inputs")
    result = ck.elaborate(mech.result)
    return Judgment(T.TFuzzy(result), {}, cost=cost)


def _private_bounds(ck: Inferencer, mech: S.MechanismDecl) -> dict[str, Sens]:
    """The private parameters and how far each may move between neighbours."""
    bounds: dict[str, Sens] = {}
    for param in mech.params:
        if isinstance(param.type, S.TyVec):
            bounds[param.name] = Sens.of(1)
    for req in mech.requires:
        if not mentions_dist(req):
            continue
        found = private_bound(req, ck.globals.constants)
        if found is None:
            raise CheckError(
                "FZ311",
                f"`{mech.name}` requires a relation between neighbouring inputs that sensitivity "
                "cannot establish (only `abs(dist(x)) <= c` bounds are understood)",
                req.span,
            )
        name, bound = found
        bounds[name] = bound if name not in bounds else min(bounds[name], bound)
    return bounds


def _check_public_preconditions(ck: Inferencer, mech: S.MechanismDecl, statics: dict[str, Fraction], whole: S.Expr) -> None:
    for req in mech.requires:
        if mentions_dist(req):
            continue
        value = evaluate(req, statics)
        if value is not True:
            raise CheckError(
                "FZ309",
                f"the call of `{mech.name}` does not meet its precondition" + ("" if value is False else " (it could not be evaluated)"),
                whole.span,
                notes=(f"precondition at {req.span}",),
            )


def _claim(ck: Inferencer, mech: S.MechanismDecl, statics: dict[str, Fraction], whole: S.Expr) -> tuple[Fraction, Fraction]:
    claim = mech.privacy
    parts = claim.items if isinstance(claim, S.Tuple) else (claim,)
    values = [evaluate(part, statics) for part in parts]
    if any(not isinstance(v, Fraction) for v in values) or len(values) > 2:
        raise CheckError(
            "FZ309",
            f"the privacy claim of `{mech.name}` cannot be evaluated at this call's static arguments",
            whole.span,
            notes=(f"claim at {claim.span}",),
        )
    epsilon = values[0]
    delta = values[1] if len(values) == 2 else Fraction(0)
    assert isinstance(epsilon, Fraction) and isinstance(delta, Fraction)
    if epsilon < 0 or delta < 0:
        raise CheckError("FZ309", f"the privacy claim of `{mech.name}` is negative at this call", whole.span)
    return epsilon, delta


def _require_proof(ck: Inferencer, mech: S.MechanismDecl, head: S.Var) -> None:
    """Ask the verifier, once per mechanism, and only for mechanisms called."""
    verdicts = ck.globals.verdicts
    if mech.name not in verdicts:
        verdicts[mech.name] = _verify(mech, ck.globals.program)
    status, reason = verdicts[mech.name]
    if status == "proved":
        return
    if status == "unavailable":
        message = f"`{mech.name}` cannot be used: the mechanism verifier is not available ({reason})"
    else:
        message = f"`{mech.name}` cannot be used: its privacy claim is {status} by the verifier"
    raise CheckError(
        "FZ310",
        message,
        head.span,
        notes=(reason,) if reason and status != "unavailable" else (),
        hint=f"run `fuzzpy verify` on this file for the details of `{mech.name}`",
    )


def _verify(mech: S.MechanismDecl, program: S.Program | None) -> tuple[str, str]:
    try:
        from fuzzpy.verifier import verify_mechanism  # type: ignore[attr-defined]
    except ImportError as exc:
        return "unavailable", str(exc)
    if program is None:
        return "unavailable", "no program to verify against"
    try:
        verdict = verify_mechanism(mech, program)
    except Exception as exc:  # a verifier failure must not read as a proof
        return "unknown", f"the verifier failed: {type(exc).__name__}: {exc}"
    status = str(getattr(verdict, "status", "unknown"))
    reason = getattr(verdict, "reason", None) or ""
    return status, str(reason)


def _too_sensitive(mech: S.MechanismDecl, param: S.Param, name: str, usage: U.Usage, bound: Sens, arg: S.Expr) -> C.Blame:
    return C.Blame(
        "FZ308",
        arg.span,
        f"the argument for `{param.name}` of `{mech.name}` is {usage.sens}-sensitive in `{name}`, "
        f"but the mechanism is proved private only for inputs that move by at most {bound}",
    )
