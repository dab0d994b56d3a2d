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

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.checker import usage as U
from fuzzpy.checker.blocks import BinderRules
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.elaborate import static_count
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.first_order import static_length
from fuzzpy.checker.noise import deferred_read
from fuzzpy.checker.terms import source_name
from fuzzpy.checker.typerel import is_numeric
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.categories import categories_of, is_categorical, trimmed
from fuzzpy.language.diagnostics import Diagnostic, Label
from fuzzpy.language.limits import MAX_STATIC_COUNT
from fuzzpy.language.sensitivity import INF, Sens
from fuzzpy.language.source import Span

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


def _unstorable(ty: T.Type) -> T.Type | None:
    """The part of a row type that a bag's columns cannot store, if any:
    columns hold numbers, bools, strings, vectors and lists of them, in
    records and tuples."""
    if isinstance(ty, (T.TUnit, T.TSum, T.TFun, T.TFuzzy, T.TBag, T.TWith)):
        return ty
    parts: tuple[T.Type, ...] = ()
    if isinstance(ty, T.TTuple):
        parts = ty.items
    elif isinstance(ty, T.TRecord):
        parts = tuple(t for _, t in ty.fields)
    elif isinstance(ty, T.TList):
        parts = (ty.elem,)
    return next((bad for bad in map(_unstorable, parts) if bad is not None), None)


def refuse_unstorable_rows(row: T.Type, span: Span, what: str) -> None:
    """Refuse, at check time, a row type the run could not store. Refused
    at run time instead, the failure came only when the bag had rows, after
    the charge, and named the first row's kind (`inl` or `inr`: a private
    bit) -- a failure that depends on the data (review s28d, F1)."""
    bad = _unstorable(row)
    if bad is not None:
        raise CheckError(
            "FZ223",
            f"the rows made by {what} would be of type `{row}`, and a bag cannot hold `{bad}` in a row: "
            "use a number, a bool, a string or a vector (e.g. an `int` tag instead of `inl`/`inr`, 0 instead of `()`)",
            span,
        )


def map_(ck: Inferencer, call: PrimCall) -> Judgment:
    bag, bag_type = _bag_arg(ck, call, 1)
    row_hint = call.hint.elem if isinstance(call.hint, T.TBag) else None
    result, captured = function_arg(ck, call.args[0], bag_type.elem, row_hint, "`map`")
    if row_hint is not None:
        ck.coerce(Judgment(result), row_hint, call.args[0].span, "the rows must have the expected type")
        result = row_hint
    captured = capture_infinitely(ck, captured, call.args[0], "`map`")
    refuse_unstorable_rows(result, call.args[0].span, "`map`")
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
    """`group[k]` (int keys) or `group["a", "b", ...]` (string keys, one
    bucket per public category, `fuzzpy.language.categories`). Both are typed alike:
    a row lands in at most one bucket, so the list of buckets moves by at
    most 1 in the list's sum metric (Reed & Pierce, ICFP 2010; language
    design, section 3): the categorical form is the int form composed with
    the row-wise, public map from a category to its position."""
    named = ck.visible_categories()
    categories = _categories(ck, call, named) if is_categorical(call.statics, named) else None
    if categories is None:
        _refuse_dynamic_categories(ck, call)
        what = "the number of buckets of `group`"
        # a length in the type: the generic pass's placeholder gives a type
        # that is discarded (the definition is checked at each call's numbers)
        k = deferred_read(ck, call.statics[0], what, lambda: static_count(call.statics[0], ck.visible_constants(), what, 1), 1)
        if any(ck.static_params[n].symbolic is None or not ck.static_params[n].symbolic.is_const  # type: ignore[union-attr]
               for n in ck.static_parameters_in(call.statics[0])):
            ck.placeholder_length = call.statics[0].span  # a vector length read as the placeholder
    else:
        k = len(categories)
    bag, bag_type = _bag_arg(ck, call, 1)
    what = "`group`"
    key_type = T.INT if categories is None else T.STRING
    result, captured = function_arg(ck, call.args[0], bag_type.elem, key_type, what)
    if categories is not None and not isinstance(result, T.TString):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(
            T.STRING, result, call.args[0].span, "the function given to `group` with categories computes a category"
        )
    if categories is None and not is_numeric(result):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.INT, result, call.args[0].span, "the function given to `group` computes a bucket number")
    captured = capture_infinitely(ck, captured, call.args[0], what)
    ck.note("`group`: a row moves at most one bucket, 1-sensitive in the bag (list metric: sum)")
    return Judgment(T.TList(bag_type), U.plus(bag.ctx, captured), length=int(k))


def _categories(ck: Inferencer, call: PrimCall, named: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The public categories of `group[...]`, refused when they are not
    static (FZ220), repeat (FZ219), have whitespace the loader would trim
    (FZ221) or are too many (FZ217)."""
    categories = categories_of(call.statics, named)
    where = call.statics[0].span.merge(call.statics[-1].span)
    if categories is None:
        raise CheckError(
            "FZ220",
            "the categories of `group[...]` must be string literals, or the name of one top-level `let` list of them",
            where,
            hint='write `group["north", "south"]`, or `let regions = ["north", "south"];` and `group[regions]`',
        )
    spans = [a.span for a in call.statics] if len(call.statics) == len(categories) else [where] * len(categories)
    seen: dict[str, int] = {}
    for index, category in enumerate(categories):
        if category in seen:
            raise CheckError(
                "FZ219",
                f"the category {_quoted(category)} is listed twice: each category is one bucket",
                spans[index],
                labels=(Label(spans[seen[category]], "first listed here"),) if spans[index] != where else (),
            )
        seen[category] = index
    for index, category in enumerate(categories):
        if trimmed(category) != category:
            raise CheckError(
                "FZ221",
                f"the category {_quoted(category)} has surrounding whitespace: the loader trims it from every cell, "
                "so no row could be in this bucket",
                spans[index],
                hint="write the category without the surrounding whitespace",
            )
    if len(categories) > MAX_STATIC_COUNT:
        raise CheckError("FZ217", f"`group` has {len(categories):,} categories, more than {MAX_STATIC_COUNT:,}", where)
    return categories


def _refuse_dynamic_categories(ck: Inferencer, call: PrimCall) -> None:
    """`group[xs]` with `xs` a list that is not a top-level category list
    (a parameter, a local `let`, a hidden constant): FZ220, not a number."""
    arg = call.statics[0]
    if len(call.statics) != 1 or not isinstance(arg, S.Var):
        return
    binding = ck.env.lookup(arg.name)
    local_list = binding is not None and isinstance(binding.type, T.TList)
    if local_list or (binding is not None and arg.name in ck.globals.categories):
        raise CheckError(
            "FZ220",
            f"`{arg.name}` is not a static list of categories: `group[...]`'s buckets must be known before the data is read",
            arg.span,
            hint='write the categories in the brackets, or bind them by a top-level `let regions = ["north", "south"];`',
        )


def _quoted(category: str) -> str:
    return '"' + category.replace("\\", "\\\\").replace('"', '\\"') + '"'


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


#: the key types a join compares for equality (exactly, on every engine)
_JOIN_KEYS = (T.INT, T.STRING, T.BOOL)


def join(ck: Inferencer, call: PrimCall) -> Judgment:
    """`join[k] f g db1 db2 : bag (R, S)`: the pairs (r, s) with f r == g s,
    after each input keeps, for each key, only its k first rows in the
    canonical order of the row values (docs/semantics.md, "`join`").

    Stability (the bounded-contribution join of McSherry, PINQ, SIGMOD 2009,
    section 4.3, and the per-key bound of Johnson, Near & Song, "Towards
    practical differential privacy for SQL queries", VLDB 2018, elastic
    sensitivity of a join is max-frequency times the other side's change):
    adding one row r with key x to db1 changes the truncated db1 by at most
    2 rows (r enters the k first rows of x; if x had k rows already, the
    k-th leaves; the other rows' order is unchanged, as the order is on row
    values), and each truncated row of db1 meets at most k truncated rows of
    db2: the output moves by at most 2k rows. So the join is 2k-sensitive in
    db1 and in db2 (symmetric-difference metric). Fuzz's application rule
    adds the two when db1 and db2 are one database (a self-join: 4k), by the
    triangle inequality through J(db1', db2)."""
    what = "the number of rows kept per key by `join`"
    k = deferred_read(ck, call.statics[0], what, lambda: static_count(call.statics[0], ck.visible_constants(), what, 1), 1)
    left, left_type = _bag_arg(ck, call, 2)
    right, right_type = _bag_arg(ck, call, 3)
    left_key, left_captured = function_arg(ck, call.args[0], left_type.elem, None, "`join`")
    right_key, right_captured = function_arg(ck, call.args[1], right_type.elem, None, "`join`")
    _join_key(ck, call.args[0], left_key, None)
    _join_key(ck, call.args[1], right_key, left_key)
    captured = U.plus(
        capture_infinitely(ck, left_captured, call.args[0], "`join`"),
        capture_infinitely(ck, right_captured, call.args[1], "`join`"),
    )
    factor = Sens(Fraction(2 * int(k)))
    reason = f"`join[{k}]`: one row moves at most 2 truncated rows, each meeting at most {k} of the other side"
    ctx = U.plus(U.scale_ctx(left.ctx, factor, call.args[2].span, reason), U.scale_ctx(right.ctx, factor, call.args[3].span, reason))
    ck.note(f"`join[{k}]`: {factor}-sensitive in each bag (k rows per key, canonical order; PINQ's bounded join)")
    return Judgment(T.TBag(T.TTuple((left_type.elem, right_type.elem))), U.plus(ctx, captured))


def _join_key(ck: Inferencer, fn: S.Expr, found: T.Type, other: T.Type | None) -> None:
    """A join key is an int, a string or a bool (compared exactly), the same
    type on both sides."""
    from fuzzpy.checker.infer import type_mismatch

    if not any(found == key for key in _JOIN_KEYS):
        raise type_mismatch(T.INT, found, fn.span, "the key functions of `join` compute an int, a string or a bool")
    if other is not None and found != other:
        raise type_mismatch(other, found, fn.span, "both key functions of `join` compute the same type of key")
