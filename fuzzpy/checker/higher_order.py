"""Primitives that take a function: `map`, `filter`, `split`, `group`, `tabulate`.

The function given to `map`, `filter`, `split` or `group` runs once per row,
an unbounded number of times, so whatever it captures is scaled by infinity
(Fuzz: `map : !(A -o B) -o bag A -o bag B`, the function under the `!`).
Capturing a database there is an error of its own: the database would be
read once per row of another.

`tabulate ts f` builds one entry per element of the public list `ts`; in the
L-infinity metric the vector moves by the largest entry's move, so what `f`
captures keeps its sensitivity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fuzzpy import syntax as S
from fuzzpy import types as T
from fuzzpy.checker import usage as U
from fuzzpy.checker.blocks import BinderRules
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.elaborate import static_count
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.first_order import static_length
from fuzzpy.checker.terms import source_name
from fuzzpy.checker.typerel import is_numeric
from fuzzpy.diagnostics import Diagnostic, Label
from fuzzpy.sensitivity import INF

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Inferencer
    from fuzzpy.checker.primitives import PrimCall


def function_arg(
    ck: Inferencer, fn: S.Expr, param_type: T.Type, result_hint: T.Type | None, what: str
) -> tuple[T.Type, U.Ctx]:
    """Check the function argument of a primitive, its parameter type known.
    Returns its result type and the context it captures."""
    if isinstance(fn, S.Lambda):
        lam = BinderRules(ck).with_param(fn, param_type, result_hint)
        if lam.body.is_fuzzy:
            raise CheckError("FZ213", f"the function given to {what} must not return a distribution", fn.span)
        return lam.body.type, lam.body.ctx
    j = ck.infer(fn, T.TFun(param_type, INF, result_hint) if result_hint else None)
    if not isinstance(j.type, T.TFun):
        raise CheckError("FZ201", f"expected a function but found `{j.type}`: {what} takes a function", fn.span)
    ck.coerce(Judgment(param_type), j.type.param, fn.span, f"{what} passes it values of type `{param_type}`")
    return j.type.result, j.ctx


def capture_infinitely(ck: Inferencer, captured: U.Ctx, fn: S.Expr, what: str) -> U.Ctx:
    """Scale a closure's captured context by infinity; a captured database
    is reported at once."""
    for key, usage in captured.items():
        binding, name = ck.env.by_key(key), source_name(key)
        if binding is not None and isinstance(binding.type, T.TBag) and not usage.sens.is_zero:
            uses = [Label(span, f"`{name}` used here") for span, _ in U.contributions(usage)]
            ck.soft_error(
                Diagnostic(
                    "FZ303",
                    f"the function given to {what} captures the database `{name}`: it runs once per row, "
                    f"so `{name}` would be used an unbounded number of times",
                    fn.span,
                    labels=tuple(uses),
                    hint=f"pass `{name}` through the primitive's bag argument instead of capturing it",
                )
            )
    reason = f"captured by the function given to {what}, which runs once per row"
    return U.scale_ctx(captured, INF, fn.span, reason, "FZ303")


def _bag_arg(ck: Inferencer, call: PrimCall, index: int) -> tuple[Judgment, T.TBag]:
    arg = call.args[index]
    j = ck.infer(arg)
    if not isinstance(j.type, T.TBag):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TBag(T.NUM), j.type, arg.span, f"`{call.name}` works on a bag (a database)")
    return j, j.type


def map_(ck: Inferencer, call: PrimCall) -> Judgment:
    bag, bag_type = _bag_arg(ck, call, 1)
    row_hint = call.hint.elem if isinstance(call.hint, T.TBag) else None
    result, captured = function_arg(ck, call.args[0], bag_type.elem, row_hint, "`map`")
    if row_hint is not None:
        ck.coerce(Judgment(result), row_hint, call.args[0].span, "the rows must have the expected type")
        result = row_hint
    captured = capture_infinitely(ck, captured, call.args[0], "`map`")
    if isinstance(result, T.TVec):  # `run` needs the rows' length when the bag is empty
        ck.vector_sites[call.head.span] = result.length
    ck.note("`map`: 1-sensitive in the bag; the function's captures scaled by inf")
    return Judgment(T.TBag(result), U.plus(bag.ctx, captured))


def _predicate(ck: Inferencer, call: PrimCall, bag_type: T.TBag) -> U.Ctx:
    what = f"`{call.name}`"
    result, captured = function_arg(ck, call.args[0], bag_type.elem, T.BOOL, what)
    ck.coerce(Judgment(result), T.BOOL, call.args[0].span, f"the function given to {what} decides each row")
    return capture_infinitely(ck, captured, call.args[0], what)


def filter_(ck: Inferencer, call: PrimCall) -> Judgment:
    bag, bag_type = _bag_arg(ck, call, 1)
    captured = _predicate(ck, call, bag_type)
    ck.note("`filter`: 1-sensitive in the bag; the predicate's captures scaled by inf")
    return Judgment(bag_type, U.plus(bag.ctx, captured))


def split(ck: Inferencer, call: PrimCall) -> Judgment:
    """A row lands in exactly one half: the pair moves by 1 in the tensor
    metric, so noise on both halves costs once (parallel composition)."""
    bag, bag_type = _bag_arg(ck, call, 1)
    captured = _predicate(ck, call, bag_type)
    ck.note("`split`: the two halves together are 1-sensitive in the bag")
    return Judgment(T.TTuple((bag_type, bag_type)), U.plus(bag.ctx, captured))


def group(ck: Inferencer, call: PrimCall) -> Judgment:
    k = static_count(call.statics[0], ck.visible_constants(), "the number of buckets of `group`", 1)
    bag, bag_type = _bag_arg(ck, call, 1)
    what = "`group`"
    result, captured = function_arg(ck, call.args[0], bag_type.elem, T.INT, what)
    if not is_numeric(result):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.INT, result, call.args[0].span, "the function given to `group` computes a bucket number")
    captured = capture_infinitely(ck, captured, call.args[0], what)
    ck.note("`group`: a row moves at most one bucket, 1-sensitive in the bag (list metric: sum)")
    return Judgment(T.TList(bag_type), U.plus(bag.ctx, captured), length=int(k))


def tabulate(ck: Inferencer, call: PrimCall) -> Judgment:
    keys = ck.infer(call.args[0])
    if not isinstance(keys.type, T.TList):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TList(T.NUM), keys.type, call.args[0].span, "`tabulate` takes a public list of keys")
    length = static_length(keys, call.args[0], "`tabulate` makes one entry per key")
    result, captured = function_arg(ck, call.args[1], keys.type.elem, T.NUM, "`tabulate`")
    ck.coerce(Judgment(result), T.NUM, call.args[1].span, "`tabulate` builds a vector of numbers")
    public = U.scale_ctx(keys.ctx, INF, call.args[0].span, "the keys of `tabulate` are public: each picks an entry")
    ck.note("`tabulate`: in the L-inf metric the entries' contexts join, so captures keep their sensitivity")
    return Judgment(T.TVec("inf", T.NUM, length), U.plus(captured, public))
