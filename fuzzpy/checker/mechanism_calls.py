"""Calling a verified `mechanism` from a `def` (language design, section 5).

A mechanism is a black box whose claim the coupling verifier has proved for
neighbouring private inputs: `vec[inf] num` moving by at most 1 per entry,
`vec[1] num` by at most 1 in total, scalars within their `requires
abs(dist(x)) <= c` (or `< c`). A call is private in the database when (1) the
verifier proved the claim, (2) every private argument moves within that
bound when the database changes by one row (its sensitivity s meets the
bound: s <= c, or s < c for a strict one), (3) the public arguments do not
depend on private data, and those that appear in the claim, a precondition
or a bound are static, so that these can be evaluated. The call then costs
the claim at those static values: a `Verified` event.

Every expression of the mechanism's interface is evaluated in the scope the
proof used (`static_eval.call_scope`): the mechanism's parameters stand for
this call's arguments and hide top-level constants of the same names.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.accounting.events import Group, SymbolicPure, Verified
from fuzzpy.checker import costs as C
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.static_eval import (
    Bound,
    Value,
    call_scope,
    conjuncts,
    evaluate,
    mentions_dist,
    private_bound_shape,
)
from fuzzpy.checker.terms import free_vars, source_name
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import Sens
from fuzzpy.language.symbolic import Poly
from fuzzpy.verifier.public_lists import is_public_list

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
    statics: dict[str, Fraction] = {}
    symbolic: dict[str, Poly] = {}  # arguments that are a definition's static parameters
    lengths: dict[str, int] = {}
    judgments: list[Judgment] = []
    top_level = {n: v for n, v in ck.globals.constants.items() if n not in {p.name for p in mech.params}}
    # the parameters the claim or a precondition names: only those may be a static parameter of the caller
    interface = _interface(mech)
    for param, arg in zip(mech.params, args, strict=True):
        ty = ck.elaborate(param.type, constants=top_level)  # the mechanism's own scope, not the caller's
        j = ck.check(arg, ty, f"the parameter `{param.name}` of mechanism `{mech.name}` has type `{ty}`")
        judgments.append(j)
        if isinstance(j.type, T.TVec) and (n := ck.lengths.static(j.type.length)) is not None:
            lengths[param.name] = n
        elif isinstance(j.type, T.TList) and (n := _list_length(arg)) is not None:
            lengths[param.name] = n  # a public list (`verifier.public_lists`): `len(T)` at the call
        if j.static is not None:
            statics[param.name] = j.static
        elif (isinstance(j.type, (T.TNum, T.TInt)) and param.name in interface
              and (poly := _static_parameter(ck, arg)) is not None):
            if poly.is_const:  # the definition checked at a call's numbers
                statics[param.name] = poly.value
            else:
                symbolic[param.name] = poly
    scope = call_scope(ck.globals.constants, mech.params, statics, lengths)
    call = _Call(mech, args, scope, whole, symbolic)
    bounds = _private_bounds(call)
    _check_public_preconditions(call)
    claim = _symbolic_claim(call) if symbolic else None
    epsilon, delta = _claim(call) if claim is None else (Fraction(0), Fraction(0))
    _require_proof(ck, mech, head)
    cost: C.CostCtx = {}
    for param, arg in zip(mech.params, args, strict=True):
        _admits_standing_still(mech, param, arg, bounds.get(param.name, []))
    groups: dict[str, int] = {}  # how many proof-sized steps each variable's change takes
    for param, arg, j in zip(mech.params, args, judgments, strict=True):
        bound = bounds.get(param.name)
        for name, usage in j.ctx.items():
            if usage.sens.is_zero or (name in cost and cost[name].is_infinite):
                continue
            if bound is None:
                cost[name] = C.infinite(
                    C.Blame("FZ309", arg.span, f"the public argument `{param.name}` of `{mech.name}` depends on `{source_name(name)}`")
                )
                continue
            steps = group_steps(param, bound, usage.sens)
            if steps is None:
                cost[name] = C.infinite(_too_sensitive(mech, param, name, usage, bound, arg))
                continue
            groups[name] = max(groups.get(name, 1), steps)
    for name, steps in groups.items():
        if name in cost:
            continue
        # group privacy (Dwork & Roth 2014, Thm 2.2): a change of the database
        # moves the inputs by at most `steps` proof-sized steps (`group_steps`);
        # a pure claim over static parameters is then steps * claim
        if claim is not None:
            cost[name] = C.Cost((SymbolicPure(Fraction(steps), claim),))
        else:
            event = Verified(mech.name, epsilon, delta)
            cost[name] = C.Cost((event,) if steps == 1 else (Group(Fraction(steps), (event,)),))
        if steps > 1:
            ck.note(f"call of mechanism `{mech.name}`: its inputs move {steps} proof-sized steps in "
                    f"`{source_name(name)}`: charged its group-privacy bound over {steps}")
    ck.note(f"call of mechanism `{mech.name}`: its proved claim ({epsilon}) in each variable of its private inputs")
    result = ck.elaborate(mech.result, rigid=True, constants=top_level)  # a vector result's length is known only at run time
    return Judgment(T.TFuzzy(result), {}, cost=cost)


def _list_length(arg: S.Expr) -> int | None:
    """The length of a list argument written as a literal; None when only
    the run knows it."""
    return len(arg.items) if isinstance(arg, S.ListLit) else None


class _Call:
    """One call: the mechanism, its arguments and the scope they make."""

    def __init__(self, mech: S.MechanismDecl, args: list[S.Expr], scope: dict[str, Fraction], whole: S.Expr,
                 symbolic: dict[str, Poly] | None = None) -> None:
        self.mech = mech
        self.args = args
        self.scope = scope
        self.whole = whole
        self.symbolic = symbolic or {}

    def value(self, expr: S.Expr, what: str) -> Value:
        """``expr`` evaluated at this call; refused (FZ309) when it needs an
        argument that is not static."""
        value = evaluate(expr, self.scope)
        if value is not None:
            return value
        params = [p.name for p in self.mech.params]
        missing = [n for n in params if n in free_vars(expr) and n not in self.scope]
        if missing:
            name = missing[0]
            arg = self.args[params.index(name)]
            raise CheckError(
                "FZ309",
                f"the argument for `{name}` must be static: it appears in {what} of `{self.mech.name}`, "
                "which is evaluated at the call",
                arg.span,
                notes=(f"{what} at {expr.span}",),
                hint="pass a literal or a top-level `let` constant",
            )
        raise CheckError(
            "FZ309",
            f"{what} of `{self.mech.name}` cannot be evaluated at this call's static arguments",
            self.whole.span,
            notes=(f"{what} at {expr.span}",),
        )


def _interface(mech: S.MechanismDecl) -> set[str]:
    """The parameters the claim, the delta or a precondition reads as numbers.
    A private input named only inside `dist(x)` (`requires abs(dist(x)) <= 1`)
    is not one: it is the value that moves, never a noise scale, so a caller's
    parameter passed for it is an ordinary argument (review s29d: `def h2 (v :
    num) : fuzzy num = thr v 1` made `v` a static parameter, and `h2 (size db
    / 1000)` was refused FZ202). The bound `c` of such a precondition is read."""
    names = set(free_vars(mech.privacy))
    if mech.delta is not None:
        names |= free_vars(mech.delta)
    for part in (part for whole in mech.requires for part in conjuncts(whole)):
        shape = private_bound_shape(part) if mentions_dist(part) else None
        names |= free_vars(part) if shape is None else free_vars(shape[1])
    return names


def _private_bounds(call: _Call) -> dict[str, list[Bound]]:
    """The private parameters and how far each may move between neighbours,
    every bound evaluated at this call."""
    mech = call.mech
    names = {p.name for p in mech.params}
    bounds: dict[str, list[Bound]] = {}
    public_lists = {p.name for p in mech.params if is_public_list(p.type)}
    for param in mech.params:
        if isinstance(param.type, S.TyVec):
            bounds[param.name] = [Bound(Fraction(1))]  # the vector's own neighbour relation
    for req in (part for whole in mech.requires for part in conjuncts(whole)):
        if not mentions_dist(req):
            continue
        shape = private_bound_shape(req)
        if shape is None or shape[0] not in names:
            raise CheckError(
                "FZ311",
                f"`{mech.name}` requires a relation between neighbouring inputs that sensitivity "
                "cannot establish (only bounds `abs(dist(x)) <= c` and `abs(dist(x)) < c` are understood)",
                req.span,
            )
        name, bound_expr, strict = shape
        if name in public_lists:
            # a public list stands still between neighbours (`verifier.public_lists`): the
            # argument must not depend on private data, as for every public argument (FZ309)
            continue
        value = call.value(bound_expr, "a bound on how far a private input moves")
        if not isinstance(value, Fraction):
            raise CheckError("FZ311", f"the distance bound of `{mech.name}` is not a number", req.span)
        bounds.setdefault(name, []).append(Bound(value, strict))
    return bounds


def _admits_standing_still(mech: S.MechanismDecl, param: S.Param, arg: S.Expr, bounds: list[Bound]) -> None:
    """Every private bound must admit a distance of 0 (c >= 0, or c > 0 for `<`).

    Whatever the argument's sensitivity s, two neighbouring databases may give
    it the same value (a constant argument always does): the call's runs are
    in the relation the proof speaks about only when every distance in
    [-s, s] is, 0 included. A bound that excludes 0 (`abs(dist(x)) <= -1`)
    makes the proof say nothing about this call (issue 23: such a call was
    accepted because a sensitivity-0 argument was never compared with it).
    """
    zero = Sens(Fraction(0))
    failed = next((b for b in bounds if not b.admits(zero)), None)
    if failed is None:
        return
    raise CheckError(
        "FZ308",
        f"the argument for `{param.name}` of `{mech.name}` may move by 0 between neighbouring databases, "
        f"but the mechanism is proved private only for inputs that move by {failed}: the proof does not "
        "cover this call",
        arg.span,
        hint=f"a bound on `dist({param.name})` must be at least 0 (more than 0 for `<`) at the call",
    )


def _check_public_preconditions(call: _Call) -> None:
    for req in (part for whole in call.mech.requires for part in conjuncts(whole)):
        if mentions_dist(req):
            continue
        if free_vars(req) & call.symbolic.keys():
            # a definition's static parameter: checked at every call's own
            # numbers, where the definition is checked again (DFuzz's
            # instantiation, Gaboardi et al. POPL 2013); never trusted here
            continue
        value = call.value(req, "a precondition")
        if value is not True:
            raise CheckError(
                "FZ309",
                f"the call of `{call.mech.name}` does not meet its precondition",
                call.whole.span,
                notes=(f"precondition at {req.span}",),
            )


def _static_parameter(ck: Inferencer, arg: S.Expr) -> Poly | None:
    """The argument as a polynomial over the definition's static parameters,
    when it names one (`report_noisy_max q eps` inside `def f (eps : num)`)."""
    return ck.symbolic_value(arg)


def _symbolic_claim(call: _Call) -> Poly | None:
    """The claim as a polynomial over the definition's static parameters,
    for the definition checked once for all its calls (its cost is then
    symbolic, like `laplace[eps]`'s; each call is checked again at its own
    numbers, where the claim, the preconditions and the proof are evaluated
    as for any call). A pure claim only; positive at every positive value of
    the parameters, else FZ309."""
    claim = call.mech.privacy
    if isinstance(claim, S.Tuple) or call.mech.delta is not None or not (free_vars(claim) & call.symbolic.keys()):
        return None
    poly = _poly(claim, call)
    if poly is None or not poly.positive:
        raise CheckError(
            "FZ309",
            f"the privacy claim of `{call.mech.name}` is not a positive polynomial in the static parameters "
            "given at this call",
            call.whole.span,
            notes=(f"claim at {claim.span}",),
            hint="pass a literal or a top-level `let` constant",
        )
    return poly


def _poly(expr: S.Expr, call: _Call) -> Poly | None:
    if isinstance(expr, S.Var) and expr.name in call.symbolic:
        return call.symbolic[expr.name]
    if isinstance(expr, S.Binary) and expr.op in ("+", "-", "*", "/"):
        left, right = _poly(expr.left, call), _poly(expr.right, call)
        if left is None or right is None:
            return None
        if expr.op == "+":
            return left + right
        if expr.op == "-":
            return left - right
        if expr.op == "*":
            return left * right
        return left.scale(1 / right.value) if right.is_const and right.value != 0 else None
    value = evaluate(expr, call.scope)
    return Poly.const(value) if isinstance(value, Fraction) else None


def _claim(call: _Call) -> tuple[Fraction, Fraction]:
    mech = call.mech
    claim = mech.privacy
    parts = claim.items if isinstance(claim, S.Tuple) else (claim,)
    if mech.delta is not None:  # `privacy (eps, delta)`
        parts = (claim, mech.delta)
    values = [call.value(part, "the privacy claim") for part in parts]
    if any(not isinstance(v, Fraction) for v in values) or len(values) > 2:
        raise CheckError(
            "FZ309",
            f"the privacy claim of `{mech.name}` is not one or two numbers at this call",
            call.whole.span,
            notes=(f"claim at {claim.span}",),
        )
    epsilon = values[0]
    delta = values[1] if len(values) == 2 else Fraction(0)
    assert isinstance(epsilon, Fraction) and isinstance(delta, Fraction)
    if epsilon < 0 or delta < 0:
        raise CheckError("FZ309", f"the privacy claim of `{mech.name}` is negative at this call", call.whole.span)
    return epsilon, delta


def _require_proof(ck: Inferencer, mech: S.MechanismDecl, head: S.Var) -> None:
    """Ask the verifier, once per mechanism, and only for mechanisms called."""
    verdicts = ck.globals.verdicts
    if mech.name not in verdicts:
        verdicts[mech.name] = _verify(mech, ck.globals.program, ck.globals.constants)
    status, reason = verdicts[mech.name]
    if status == "proved":
        return
    if status == "vacuous":
        # a proof that holds because no input meets the `requires` says
        # nothing about the inputs a call passes (FZ406 in `verify`)
        raise CheckError(
            "FZ310",
            f"`{mech.name}` cannot be used: its proof is vacuous, because its `requires` admit no "
            "neighbouring inputs, so it says nothing about this call",
            head.span,
            notes=(reason,) if reason else (),
            hint=f"fix the contradictory `requires` of `{mech.name}` (`fuzzpy verify` reports FZ406)",
        )
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


def _verify(mech: S.MechanismDecl, program: S.Program | None,
            constants: dict[str, Fraction]) -> tuple[str, str]:
    """The verdict with the constants this checker collected from the file's
    top level (the scope `verify` reads too: `checker.scope`)."""
    try:
        from fuzzpy.verifier import verify_mechanism  # type: ignore[attr-defined]
    except ImportError as exc:
        return "unavailable", str(exc)
    if program is None:
        return "unavailable", "no program to verify against"
    from fuzzpy.checker.scope import library_home, static_constants

    if (module := library_home(mech)) is not None:  # an imported mechanism: proved in its module's scope
        program, constants = module, static_constants(module)
    try:
        verdict = verify_mechanism(mech, program, constants=constants)
    except Exception as exc:  # a verifier failure must not read as a proof
        return "unknown", f"the verifier failed: {type(exc).__name__}: {exc}"
    status = str(getattr(verdict, "status", "unknown"))
    reason = getattr(verdict, "reason", None) or ""
    if status == "proved" and getattr(verdict, "vacuous", False):
        status = "vacuous"  # never a proof to rely on at a call
    return status, str(reason)


def group_steps(param: S.Param, bounds: list[Bound], sens: Sens) -> int | None:
    """The fewest steps k such that inputs s apart (s the argument's
    sensitivity) are joined by a chain of k inputs each within every bound of
    the proof: then the claim's group-privacy bound over k holds for the call
    (Dwork & Roth 2014, Thm 2.2; Vadhan 2017, Lemma 2.2). Real inputs (`num`,
    `vec[p] num`: every norm ball is convex) take the straight chain v + i
    (v' - v) / k; integer inputs (`int`, `vec[inf|1] int`) integer steps of at
    most floor(c) (ceil(c) - 1 for `< c`), their distance being an integer at
    most floor(s). None when no chain exists (an infinite sensitivity, a bool,
    a `vec[2]` of integers, a bound below one integer step)."""
    if sens.value is None:
        return None
    ty = param.type
    elem = ty.elem if isinstance(ty, S.TyVec) else ty
    if not isinstance(elem, S.TyName) or elem.name not in ("num", "real", "int"):
        return None
    integral = elem.name == "int"
    if integral and isinstance(ty, S.TyVec) and ty.norm == "2":
        return None
    steps = 1
    for bound in bounds:
        c = bound.value
        if integral:
            step = math.ceil(c) - 1 if bound.strict else math.floor(c)
            if step < 1:
                return None
            need = max(1, math.ceil(sens.floor() / step))
        else:
            if c <= 0:
                return None
            # from the true sensitivity: sqrt(n) sqrt(n) is n, not its rounded square (`Sens.ceiling`)
            need = max(1, sens.ceiling(Fraction(c), strict=bound.strict))
        steps = max(steps, need)
    return steps if steps <= MAX_GROUP else None


MAX_GROUP = 10_000


def _too_sensitive(
    mech: S.MechanismDecl, param: S.Param, name: str, usage: U.Usage, bounds: list[Bound], arg: S.Expr
) -> C.Blame:
    failed = next(b for b in bounds if not b.admits(usage.sens))
    return C.Blame(
        "FZ308",
        arg.span,
        f"the argument for `{param.name}` of `{mech.name}` is {usage.sens}-sensitive in `{source_name(name)}`, "
        f"but the mechanism is proved private only for inputs that move by {failed}",
    )
