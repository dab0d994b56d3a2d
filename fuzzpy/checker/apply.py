"""Applications: `f a b` is taken as a spine (head and arguments) so that
primitives, definitions and mechanisms see all their arguments at once.

* A primitive (`size`, `map`, `laplace[eps]`...) is checked by its rule in the
  table of `primitives.py`.
* A definition's call scales each argument's context by the definition's
  sensitivity in that parameter (Fuzz's application rule: Γ + s·Δ); a call of
  a definition returning a distribution re-expresses its cost in each
  parameter in the arguments' variables (`costs.scale_cost`).
* A mechanism call goes to `mechanism_calls.py`.
* Any other function value `f : A -[s]-> B` is applied by the same rule.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.accounting.events import Group, Verified
from fuzzpy.accounting.local import has_local
from fuzzpy.checker import costs as C
from fuzzpy.checker import obligations
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import DefSig, Judgment
from fuzzpy.checker.errors import ZERO_STATIC_HINT, CheckError
from fuzzpy.checker.terms import source_name
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import INF, Sens
from fuzzpy.language.source import Span
from fuzzpy.language.symbolic import Poly

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Handler, Inferencer


def handlers(ck: Inferencer) -> dict[type, Handler]:
    def app(expr: S.Expr, hint: T.Type | None) -> Judgment:
        head, args = spine(expr)
        return apply_spine(ck, head, args, expr, hint)

    def prim(expr: S.Expr, hint: T.Type | None) -> Judgment:
        return apply_spine(ck, expr, [], expr, hint)

    return {S.App: app, S.Prim: prim}


def spine(expr: S.Expr) -> tuple[S.Expr, list[S.Expr]]:
    args: list[S.Expr] = []
    while isinstance(expr, S.App):
        args.append(expr.arg)
        expr = expr.func
    args.reverse()
    return expr, args


def apply_spine(ck: Inferencer, head: S.Expr, args: list[S.Expr], whole: S.Expr, hint: T.Type | None) -> Judgment:
    from fuzzpy.checker.primitives import PRIMITIVES, apply_primitive

    if isinstance(head, S.Prim):
        return apply_primitive(ck, head.name, head, head.static_args, args, whole, hint)
    if isinstance(head, S.Var) and ck.env.lookup(head.name) is None:
        name = head.name
        if name in ck.globals.constants and args:  # names resolve as `run` resolves them: constants first
            raise CheckError(
                "FZ208",
                f"`{name}` is the constant {ck.globals.constants[name]}, not a function, but it is applied to an argument",
                head.span,
                hint=f"rename the constant if `{name}` is meant to be the primitive",
            )
        if name in ck.globals.defs:
            return apply_def(ck, head, args, whole)
        if name in ck.globals.mechanisms:
            from fuzzpy.checker.mechanism_calls import apply_mechanism

            return apply_mechanism(ck, head, args, whole)
        if name in PRIMITIVES:
            return apply_primitive(ck, name, head, (), args, whole, hint)
        raise CheckError("FZ207", f"unknown variable `{name}`", head.span, hint=_did_you_mean(ck, name))
    if isinstance(head, S.Lambda) and head.param_type is None and args:
        return _apply_lambda(ck, head, args, whole)
    return apply_value(ck, ck.infer(head), head, args, whole)


def _apply_lambda(ck: Inferencer, head: S.Lambda, args: list[S.Expr], whole: S.Expr) -> Judgment:
    """`(fun x y -> e) a b`: the unannotated parameters take the types of the
    arguments, which are inferred first (once), as ML infers them."""
    judgments = [ck.infer(arg) for arg in args]
    hint: T.Type | None = None
    for j in reversed(judgments):
        hint = T.TFun(j.type, INF, hint)  # type: ignore[arg-type]  # the innermost result is unknown
    return apply_value(ck, ck.infer(head, hint), head, args, whole, judgments)


def apply_def(ck: Inferencer, head: S.Var, args: list[S.Expr], whole: S.Expr) -> Judgment:
    generic = ck.signature_of(head.name, head.span)
    if generic.symbolic:
        generic = static_instance(ck, generic, args, whole)
    sig = instantiate(ck, generic, head.span)
    n = len(sig.params)
    given = args[:n]
    judgments = [
        _check_arg(ck, arg, ty, f"the parameter `{pname}` of `{sig.name}` has type `{ty}`", pname in sig.symbolic)
        for (pname, ty), arg in zip(sig.params, given, strict=False)
    ]
    _labels_fit(ck, sig, judgments, given)
    if len(given) < n and sig.is_fuzzy:
        _whole_calls_only(sig, whole)
    if len(given) < n or not sig.is_fuzzy:
        ctx: U.Ctx = {}
        for (pname, _), sens, j in zip(sig.params, sig.sens, judgments, strict=False):
            ctx = U.plus(ctx, _scale_arg(sig, pname, sens, j, whole))
        length = sig.length if len(given) == n else None
        result: Judgment = Judgment(sig.curried(len(given)), ctx, length=length)
        if given:
            ck.note(f"call of `{sig.name}`: each argument's context scaled by its parameter's sensitivity")
    else:
        result = Judgment(sig.result, {}, cost=_call_cost(ck, sig, judgments, whole, given))
        ck.note(f"call of `{sig.name}`: its cost in each parameter, re-expressed in the arguments' variables")
    rest = args[n:]
    return apply_value(ck, result, head, rest, whole) if rest else result


def _check_arg(ck: Inferencer, arg: S.Expr, ty: T.Type, why: str, static: bool) -> Judgment:
    """An argument; one for a static parameter (read by `static_instance`
    as an index term) does not read the caller's `nat` indices as numbers."""
    if not static:
        return ck.check(arg, ty, why)
    ck.static_argument += 1
    try:
        return ck.check(arg, ty, why)
    finally:
        ck.static_argument -= 1


def _whole_calls_only(sig: DefSig, whole: S.Expr) -> None:
    """A function value's type keeps one pure epsilon per parameter (Reed &
    Pierce 2010, Thm 3.3: sensitivity in max divergence). A definition whose
    cost has no pure epsilon -- local reports (a replace-one guarantee, fourth
    review U3: `(if c then rep else rep) db`) or approximate noise (a
    Gaussian's (eps, delta), which the type would read as infinitely
    sensitive, FZ306, while the Laplace version was accepted: review s28) --
    must be called with all its arguments; the refusal says so, alike."""
    for cost in sig.costs:
        if cost is None or cost.is_infinite:
            continue
        events = cost.events()
        if has_local(events):
            what = "releases local or shuffled reports"
            why = "whose type cannot carry their replace-one guarantee"
        elif not C.is_symbolic(events) and C.pure_epsilon(events) is None:
            what = "has an approximate (eps, delta) cost (Gaussian noise, or a mechanism proved (eps, delta))"
            why = "whose type carries only a pure epsilon per parameter"
        else:
            continue
        raise CheckError(
            "FZ301",
            f"`{sig.name}` {what}: it must be called with all its arguments, not used as a function value, {why}",
            whole.span,
            hint=f"call `{sig.name}` directly on the database: `{sig.name} ... db`",
        )


def _labels_fit(ck: Inferencer, sig: DefSig, judgments: list[Judgment], given: list[S.Expr]) -> None:
    """A `labels : list string` parameter names the entries of the
    definition's vector parameters (std.noisy_max's `noisy_max_label`,
    std.sparse_vector's `first_above_label`): when both lengths are static
    at a call, they must be equal, or an index without a label would be
    released as "" (review s27c: 2 labels for 3 counts)."""
    params = dict(zip((p for p, _ in sig.params), zip(judgments, given, strict=False), strict=False))
    labelled = params.get("labels")
    if labelled is None or labelled[0].length is None:
        return
    for (pname, _), judgment in zip(sig.params, judgments, strict=False):
        if not isinstance(judgment.type, T.TVec):
            continue
        length = ck.lengths.static(judgment.type.length)
        if length is not None and length != labelled[0].length:
            raise CheckError(
                "FZ201", f"`{sig.name}` is given {labelled[0].length} label{'s' if labelled[0].length != 1 else ''} "
                f"for a vector `{pname}` of {length} entries: each entry needs its label, or the release of an "
                "entry without one would be \"\"", labelled[1].span,
                hint=f"give the list the vector was built over (`tabulate labels ...`), of {length} labels",
            )


def static_instance(ck: Inferencer, sig: DefSig, args: list[S.Expr], whole: S.Expr) -> DefSig:
    """A call of a definition with static parameters (noise scales over its
    parameters): each such argument must be a static number -- a literal, a
    top-level constant, arithmetic over them, or a polynomial over the
    caller's own static parameters -- and positive; the callee is then
    checked at those values (`ProgramChecker.instance`). An argument that
    depends on data is refused: a noise scale chosen from the data is not
    differentially private (DFuzz's index terms are static, Gaboardi et al.
    POPL 2013)."""
    names = [name for name, _ in sig.params]
    values: list[Poly] = []
    for pname in sig.symbolic:
        index = names.index(pname)
        if index >= len(args):
            raise CheckError(
                "FZ202",
                f"`{sig.name}` is used without a value for its parameter `{pname}`, which sets a noise scale: "
                "give it a static number at this use",
                whole.span,
                hint=f"apply `{sig.name}` to a literal or a top-level constant for `{pname}` (e.g. `{sig.name} 0.1 ...`)",
            )
        arg = args[index]
        value = ck.symbolic_value(arg)
        if value is None:
            role = dict(sig.roles).get(pname, "a static parameter (a noise scale, bound, count or rate)")
            raise CheckError(
                "FZ202",
                f"the argument for `{pname}` of `{sig.name}` is {role}, so it must be a static number "
                f"(a literal, a top-level constant or arithmetic over them){_depends(ck, arg)}",
                arg.span,
                hint=f"`{sig.name}` is checked at the value of `{pname}`: a value computed at run time could depend "
                     "on the data",
            )
        if not value.positive and (value.is_const or obligations.positive(value).status != "proved"):  # z3 for the rest
            shown = f"got {value}" if value.is_const else f"`{value}` is not shown positive for every positive value of its parameters"
            raise CheckError(
                "FZ202",
                f"the argument for `{pname}` of `{sig.name}` is a static parameter, and a definition's static parameters "
                f"must be positive (its cost is checked for positive values only): {shown}",
                arg.span,
                hint=ZERO_STATIC_HINT if not value.terms else None,
            )
        values.append(value)
    assert ck.instance_of is not None
    return ck.instance_of(sig.name, tuple(values), whole.span)


def _depends(ck: Inferencer, arg: S.Expr) -> str:
    from fuzzpy.checker.terms import free_vars

    local = sorted(name for name in free_vars(arg) if ck.env.lookup(name) is not None)
    if not local:
        return ""
    names = ", ".join(f"`{name}`" for name in local)
    bindings = [ck.env.lookup(name) for name in local]
    if all(b is not None and b.static is not None for b in bindings):
        return f": {names} is a local name (a noise scale takes a top-level `let`, not one inside a body)"
    return f": this one depends on {names}"


def instantiate(ck: Inferencer, sig: DefSig, use: Span) -> DefSig:
    """A definition's signature with fresh length variables (each call may
    use other lengths); a `def rec` calls itself at its own lengths. The
    instantiation is recorded at the use (`Inferencer.call_sites`): `run`
    passes the callee the lengths its body needs."""
    if sig.recursive_stub:
        own = {n: n for _, ty in sig.params for n in T.vector_lengths(ty) if isinstance(n, T.LenVar)}
        ck.call_sites[use] = (sig.name, dict(own))
        return sig
    mapping: dict[T.LenVar, T.LenVar] = {}
    types = ck.lengths.instantiate([ty for _, ty in sig.params] + [sig.result], mapping)
    ck.call_sites[use] = (sig.name, dict(mapping))
    params = tuple((name, ty) for (name, _), ty in zip(sig.params, types, strict=False))
    return dataclasses.replace(sig, params=params, result=types[-1])


def _scale_arg(sig: DefSig, pname: str, sens: object, j: Judgment, whole: S.Expr) -> U.Ctx:
    assert isinstance(sens, Sens)
    if sens.is_inf:
        code = "FZ307" if sig.recursive_stub else "FZ306"
        why = (
            f"passed to the recursive call of `{sig.name}`, which may use it an unbounded number of times"
            if sig.recursive_stub
            else f"`{sig.name}` is infinitely sensitive in its parameter `{pname}`"
        )
    else:
        code, why = "FZ306", f"`{sig.name}` is {sens}-sensitive in `{pname}`"
    return U.scale_ctx(j.ctx, sens, whole.span, why, code)


def _call_cost(ck: Inferencer, sig: DefSig, judgments: list[Judgment], whole: S.Expr,
               args: list[S.Expr]) -> C.CostCtx:
    """The call's cost in each variable of its arguments. A variable behind
    several parameters (`g2 db db`) moves all of them at once: the
    parameters' costs are one mechanism's, not independent releases, so they
    are chained (`_one_mechanism`), never composed."""
    per_param: dict[str, list[C.Cost]] = {}
    fresh: dict[int, object] = {}  # this call's draws: the definition's costs are shared by all its calls
    for (pname, _), param_cost, j, arg in zip(sig.params, sig.costs, judgments, args, strict=True):
        if sig.recursive_stub:
            param_cost = C.infinite(
                C.Blame(
                    "FZ307",
                    whole.span,
                    f"the recursive call of `{sig.name}` may release its argument `{pname}` an unbounded number of times",
                    hint="recursion may only pass public data along; use `loop[k]` for a bounded number of releases",
                )
            )
        if param_cost is None:
            continue
        for var, usage in j.ctx.items():
            blame = ck.blame_for(var, usage, whole.span, f"the argument for `{pname}` of `{sig.name}`")
            # a bag passed as it is (a variable) is the parameter's bag: a sample
            # of it is still of the variable's own rows (`events.Sample.direct`)
            same_bag = isinstance(arg, S.Var) and arg.name == var
            scaled = C.retag(C.scale_cost(param_cost, usage.sens, blame, keep_direct=same_bag), fresh)
            if scaled is not None:
                per_param.setdefault(var, []).append(scaled)
    return {var: _one_mechanism(ck, var, costs) for var, costs in per_param.items()}


def _one_mechanism(ck: Inferencer, var: str, costs: list[C.Cost]) -> C.Cost:
    """One variable through k parameters of one call. Moving it moves the k
    arguments together: a chain of k steps, the i-th bounded by the i-th
    parameter's guarantee. Pure costs add along the chain (Dwork & Roth 2014,
    Thm 2.2's argument). Otherwise the k costs are one mechanism's (the same
    noise may read all k arguments: `gauss[s] (sum a + sum b)`), and their
    composition as independent releases would be too small (a fourth
    adversarial review found a Gaussian charged mu sqrt(2) below its true
    2 mu); each step is bounded by the composed guarantee of all k, so group
    privacy over k steps of it bounds the chain. When every parameter's
    whole cost is the same single draw, the variable reaches that draw by k
    routes: one draw at the summed sensitivity (`costs.merge_draw`: the
    application rule is a substitution, Reed & Pierce 2010)."""
    if len(costs) == 1:
        return costs[0]
    merged = C.merge_draw(costs)
    if merged is not None:
        parts = " + ".join(str(Sens.of(p)) for p in merged[1])
        ck.note(f"`{source_name(var)}` is passed to {len(costs)} parameters read by one draw: one draw, sensitivity "
                f"{parts} = {Sens.of(sum(merged[1], Fraction(0)))}")
        return merged[0]
    infinite = next((c for c in costs if c.is_infinite), None)
    if infinite is not None:
        return infinite
    separate = C.compose_draws(costs)
    if separate is not None:
        ck.note(f"`{source_name(var)}` is passed to {len(costs)} parameters, each read by its own draw: "
                "the draws compose")
        return separate
    events = tuple(e for c in costs for e in c.events())
    if C.pure_epsilon(events) is not None and not has_local(events):
        return C.Cost((C.pure_routes(events),))  # the sum, never the curve of independent releases
    return C.Cost((Group(Fraction(len(costs)), events),))


def apply_value(
    ck: Inferencer,
    fn: Judgment,
    head: S.Expr,
    args: list[S.Expr],
    whole: S.Expr,
    inferred: list[Judgment] | None = None,
) -> Judgment:
    """Fuzz's application rule for a function value: Γ_f + s·Γ_arg.
    ``inferred`` holds the arguments' judgments when they are already known."""
    result = fn
    for index, arg in enumerate(args):
        if not isinstance(result.type, T.TFun):
            raise CheckError(
                "FZ208",
                f"this is applied to an argument, but it is `{result.type}`, not a function",
                head.span,
            )
        fun_type = result.type
        why = f"the function takes `{fun_type.param}`"
        if inferred is None:
            j = ck.check(arg, fun_type.param, why)
        else:
            j = ck.coerce(inferred[index], fun_type.param, arg.span, why)
        scaled = U.scale_ctx(j.ctx, fun_type.sens, arg.span, f"passed to a {fun_type.sens}-sensitive function")
        if isinstance(fun_type.result, T.TFuzzy):
            result = Judgment(fun_type.result, {}, cost=_generic_cost(ck, U.plus(result.ctx, scaled), arg))
        else:
            result = Judgment(fun_type.result, U.plus(result.ctx, scaled))
    if args:
        ck.note("application: the function's context plus s times the argument's")
    return result


def _generic_cost(ck: Inferencer, ctx: U.Ctx, where: S.Expr) -> C.CostCtx:
    """Calling a function value that returns a distribution: s-sensitivity in
    max divergence is pure (s)-DP (Reed & Pierce 2010, Thm 3.3), a black-box
    pure mechanism for the accountant."""
    return ck.noise_cost(
        ctx,
        where.span,
        "the call of a function returning a distribution",
        lambda s: Verified("function value", Fraction(s)),
    )


def _did_you_mean(ck: Inferencer, name: str) -> str | None:
    """`did you mean `laplace`?` for a name close to a known one (issue 31)."""
    import difflib

    from fuzzpy.checker.primitives import PRIMITIVES

    known = [*ck.globals.defs, *ck.globals.mechanisms, *ck.globals.constants, *PRIMITIVES]
    # a misspelling is a few edits away: `lit` is not `split` (two letters added to three; issue 31, F8)
    close = [c for c in difflib.get_close_matches(name, known, n=5, cutoff=0.75)
             if _edits(name, c) <= max(1, len(name) // 3)]
    return f"did you mean `{close[0]}`?" if close else None


def _edits(a: str, b: str) -> int:
    """The Levenshtein distance between two names."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]
