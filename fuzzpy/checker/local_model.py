"""The local model in the checker: randomisers, local releases, shuffling.

* `rr[eps] b : bool -> fuzzy bool` -- randomized response (Warner 1965): the
  bit is kept with probability e^eps / (e^eps + 1). Its output distributions
  for ANY two inputs are within e^eps, so its cost in every variable the bit
  depends on is eps whatever the sensitivity (a `RandomizedResponse` event,
  not scaled by the sensitivity: comparisons make a bit infinitely sensitive,
  and that is exactly what randomized response tolerates).
* `krr[eps, k] i : int -> fuzzy int` -- k-ary randomized response (Wang,
  Blocki, Li & Jha 2017) over 0..k-1 (values outside are clamped into the
  range first, a deterministic step): the value is kept with probability
  e^eps / (e^eps + k - 1), each other value reported with 1 / (e^eps + k - 1).
* `local (fun r -> m) db : fuzzy (bag B)` -- every row randomised once by the
  randomiser (a function `Row -> fuzzy B` whose cost in its row is built of
  randomized-response events only: private for ANY two rows, i.e. eps-LDP,
  Kasiviswanathan et al. 2011), the bag of reports released. Central cost:
  eps for replace-one neighbours (parallel composition over rows, the number
  of reports public), a `LocalReports` event; the local guarantee eps is
  reported beside it.
* `shuffle[n] (fun r -> m) db : fuzzy (bag B)` -- the same reports in random
  order, at least n of them (fewer: `run` refuses): amplified by shuffling
  (Feldman, McMillan & Talwar 2021), a `ShuffledReports` event.
* `rr_estimate[eps] reports : bag bool -> num` and
  `krr_estimate[eps, k] reports : bag int -> list num` -- unbiased estimates
  of the true counts from released reports: post-processing, free on
  released values (unbounded sensitivity otherwise).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.accounting.events import (
    Event,
    Group,
    LocalReports,
    RandomizedResponse,
    Repeat,
    ShuffledReports,
)
from fuzzpy.checker import costs as C
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.elaborate import positive_static, static_count
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.higher_order import capture_infinitely
from fuzzpy.checker.noise import _function, no_static_parameter
from fuzzpy.checker.terms import source_name
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import INF, Sens

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Inferencer
    from fuzzpy.checker.primitives import PrimCall

MAX_CATEGORIES = 1_000_000


def _epsilon(ck: Inferencer, call: PrimCall) -> Fraction:
    no_static_parameter(ck, call.statics[0], f"the epsilon of `{call.name}`")
    return positive_static(call.statics[0], ck.visible_constants(), f"the epsilon of `{call.name}`")


def _categories(ck: Inferencer, call: PrimCall) -> int:
    no_static_parameter(ck, call.statics[1], f"the number of categories of `{call.name}`")
    k = static_count(call.statics[1], ck.visible_constants(), f"the number of categories of `{call.name}`", 2)
    return int(k)


def _any_pair_cost(ctx: U.Ctx, event: Event) -> C.CostCtx:
    """The randomiser's cost: its event in every variable its input depends
    on, at any sensitivity (private for any two inputs)."""
    return {name: C.Cost((event,)) for name, usage in ctx.items() if not usage.sens.is_zero}


def rr(ck: Inferencer, call: PrimCall) -> Judgment:
    eps = _epsilon(ck, call)
    j = ck.check(call.args[0], T.BOOL, "`rr` randomises a bit")
    ck.note(f"`rr[{Sens(eps)}]`: randomized response, {Sens(eps)}-DP for any two inputs (Warner 1965)")
    return Judgment(T.TFuzzy(T.BOOL), {}, cost=_any_pair_cost(j.ctx, RandomizedResponse(eps, 2)))


def krr(ck: Inferencer, call: PrimCall) -> Judgment:
    eps = _epsilon(ck, call)
    k = _categories(ck, call)
    j = ck.check(call.args[0], T.INT, f"`krr` randomises a category in 0..{k - 1}")
    ck.note(f"`krr[{Sens(eps)}, {k}]`: k-ary randomized response, {Sens(eps)}-DP for any two inputs (Wang et al. 2017)")
    return Judgment(T.TFuzzy(T.INT), {}, cost=_any_pair_cost(j.ctx, RandomizedResponse(eps, k)))


def local_epsilon(events: tuple[Event, ...]) -> Fraction | None:
    """The local epsilon of a randomiser's events: the sum of its randomized
    responses (basic composition of pure DP); None if some event is not
    private for any two rows."""
    total = Fraction(0)
    for event in events:
        if isinstance(event, RandomizedResponse):
            total += Fraction(event.epsilon)
        elif isinstance(event, Repeat):
            inner = local_epsilon(event.body)
            if inner is None:
                return None
            total += inner * event.count
        elif isinstance(event, Group):  # any-pair events do not grow with distance
            inner = local_epsilon(event.body)
            if inner is None:
                return None
            total += inner
        else:
            return None
    return total


def _release(ck: Inferencer, call: PrimCall, make: type[LocalReports] | None, reports: int = 0) -> Judgment:
    what = f"`{call.name}`"
    fn, data_expr = call.args
    data = ck.infer(data_expr)
    if not isinstance(data.type, T.TBag):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TBag(T.NUM), data.type, data_expr.span, f"{what} randomises the rows of a bag")
    hint = T.TFuzzy(call.hint.inner.elem) if isinstance(call.hint, T.TFuzzy) and isinstance(call.hint.inner, T.TBag) else None
    lam = _function(ck, fn, data.type.elem, hint)
    assert isinstance(lam.body.type, T.TFuzzy) and lam.body.cost is not None
    for name, captured in lam.body.cost.items():
        if captured.is_infinite or captured.events():
            raise CheckError(
                "FZ303",
                f"the randomiser given to {what} releases something about `{source_name(name)}`, which it captures: "
                "it runs once per row, so that would be released an unbounded number of times",
                fn.span,
                hint="a local randomiser may read only its own row",
            )
    capture_infinitely(ck, lam.body.ctx, fn, what)
    row_cost = lam.param_cost
    if row_cost is not None and row_cost.is_infinite:
        raise CheckError(
            "FZ301",
            f"the randomiser given to {what} is not private for its row: {row_cost.blame.message if row_cost.blame else ''}",
            fn.span,
            hint="randomise each field with `rr[eps]` (bits) or `krr[eps, k]` (categories)",
        )
    events = row_cost.events() if row_cost is not None else ()
    eps = local_epsilon(events)
    if eps is None:
        raise CheckError(
            "FZ301",
            f"the randomiser given to {what} must be private for ANY two rows (local DP): "
            f"only `rr` and `krr` are, not {C.describe_events(events)}",
            fn.span,
            hint="randomise each field with `rr[eps]` (bits) or `krr[eps, k]` (categories)",
        )
    _row_preserving(ck, data_expr, what)
    event: Event = ShuffledReports(eps, reports) if make is None else LocalReports(eps)
    # the bag is a variable (or its rows mapped): a change of one row's value
    # there is a change of one report, and the variable is 1-sensitive in itself
    cost: C.CostCtx = {name: C.Cost((event,)) for name, usage in data.ctx.items() if not usage.sens.is_zero}
    ck.note(
        f"{what}: each row randomised once, {Sens(eps)}-LDP for every person; centrally "
        + ("amplified by shuffling (replace-one neighbours)" if make is None else f"{Sens(eps)}-DP for replace-one neighbours")
    )
    return Judgment(T.TFuzzy(T.TBag(lam.body.type.inner)), {}, cost=cost)


def _row_preserving(ck: Inferencer, expr: S.Expr, what: str) -> None:
    """The bag of `local` / `shuffle` must be a `def`'s own parameter or
    `map f` of one: then replacing one row of the database replaces one
    report. A filter, a split or a subsample would let one row add or remove
    a report, and the number of reports is released exactly (FZ301); costs
    through a call of the `def` with such a bag are refused where they are
    substituted (`costs.scale_cost`). A lambda's parameter or a `let`-bound
    variable is refused too: a lambda's cost in its parameter becomes a
    sensitivity in its function type, where the replace-one guarantee of the
    reports would be lost, so `(fun b -> local f b) (filter p db)` would
    release the number of matching rows exactly (adversarial review)."""
    inner = expr
    while True:
        if isinstance(inner, S.Var):
            binding = ck.env.lookup(inner.name)
            if binding is not None and binding.def_param:
                return
            raise CheckError(
                "FZ301",
                f"the bag given to {what} must be a parameter of the enclosing `def` (its database), or `map f` "
                f"of one: `{inner.name}` is bound by a lambda or a `let`, through which the reports' replace-one "
                "guarantee is not tracked",
                expr.span,
                hint=f"write a `def` whose parameter is the database and call {what} on it directly",
            )
        if isinstance(inner, S.App) and isinstance(inner.func, S.App) and isinstance(inner.func.func, S.Var) \
                and inner.func.func.name == "map":
            inner = inner.arg
            continue
        raise CheckError(
            "FZ301",
            f"the bag given to {what} must be a database variable, or `map f` of one: its reports are released "
            "with their number, which a filter or a split lets one row change",
            expr.span,
            hint=f"randomise every row: {what} (fun r -> ...) db, answering `false` for rows outside the question",
        )


def local(ck: Inferencer, call: PrimCall) -> Judgment:
    return _release(ck, call, LocalReports)


def shuffle(ck: Inferencer, call: PrimCall) -> Judgment:
    what = "the least number of reports of `shuffle`"
    if no_static_parameter(ck, call.statics[0], what):
        # a static parameter: checked at each call's number (at least 2 there); the generic pass reads
        # the placeholder 1, which must not be refused as if a call had given it (review s30c)
        return _release(ck, call, None, 2)
    n = static_count(call.statics[0], ck.visible_constants(), what, 2)
    return _release(ck, call, None, int(n))


def _reports(ck: Inferencer, call: PrimCall, elem: T.Type) -> Judgment:
    j = ck.check(call.args[0], T.TBag(elem), f"`{call.name}` reads released reports")
    return Judgment(j.type, U.scale_ctx(j.ctx, INF, call.args[0].span, f"`{call.name}` is post-processing of released reports"))


def rr_estimate(ck: Inferencer, call: PrimCall) -> Judgment:
    _epsilon(ck, call)
    j = _reports(ck, call, T.BOOL)
    return Judgment(T.NUM, j.ctx)


def krr_estimate(ck: Inferencer, call: PrimCall) -> Judgment:
    _epsilon(ck, call)
    _categories(ck, call)
    j = _reports(ck, call, T.INT)
    return Judgment(T.TList(T.NUM), j.ctx)

