"""Every primitive with its sensitivity signature, in one table.

The `signature` column is the primitive's type in the notation of the
language design (section 3): `-o` is 1-sensitive, `-[s]->` s-sensitive, `->`
unrestricted (a closure applied many times: what it captures is scaled by
infinity). The rule beside it implements exactly that signature; rules live
in `first_order.py`, `higher_order.py` and `noise.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fuzzpy.checker import first_order as F
from fuzzpy.checker import higher_order as H
from fuzzpy.checker import local_model as L
from fuzzpy.checker import matrices as M
from fuzzpy.checker import noise as N
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.errors import CheckError
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.categories import is_categorical
from fuzzpy.language.source import Span
from fuzzpy.support.records import frozen

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Inferencer


@dataclass
class PrimCall:
    """One use of a primitive: its static (bracketed) and ordinary arguments."""

    name: str
    statics: tuple[S.Expr, ...]
    args: list[S.Expr]
    whole: S.Expr
    hint: T.Type | None
    head: S.Expr  # the primitive's own node (`vsum[c]`), whose span keys `vector_lengths`

    @property
    def span(self) -> Span:
        return self.whole.span


Rule = Callable[["Inferencer", PrimCall], Judgment]


@frozen
class Primitive:
    name: str
    statics: tuple[str, ...]  # names of the bracketed static arguments
    arity: int  # ordinary arguments
    signature: str
    rule: Rule


_TABLE = [
    # data: bags, lists, vectors
    Primitive("size", (), 1, "bag A -o num", F.size),
    Primitive("sum", ("lo", "hi"), 1, "bag num -[max(|lo|, |hi|)]-> num  (clamps every row)", F.clamped_sum),
    Primitive("clip", ("lo", "hi"), 1, "num -o num", F.clip),
    Primitive("abs", (), 1, "num -o num", F.abs_),
    Primitive("counts", (), 1, "list (bag A) -o vec[1] num", F.counts),
    Primitive("clip2", ("c",), 1, "vec[2] num -o vec[2] num  (projects onto the L2 ball of radius c)", F.clip2),
    Primitive("vsum", ("c",), 1, "bag (vec[2] num) -[c]-> vec[2] num  (rows clipped to L2 norm c)", F.vsum),
    Primitive("len", (), 1, "list A -o int  (also vec[p] num; constant at finite distance)", F.length),
    Primitive("dot", (), 2, "vec[p] num -> vec[p] num -> num", F.dot),
    Primitive("fst", (), 1, "<A & B> -o A  (also (A, B) -o A)", F.fst),
    Primitive("snd", (), 1, "<A & B> -o B  (also (A, B) -o B)", F.snd),
    Primitive("inl", (), 1, "A -o A + B", F.inl),
    Primitive("inr", (), 1, "B -o A + B", F.inr),
    Primitive("min", (), 2, "num -o num -o num", F.min_max),
    Primitive("max", (), 2, "num -o num -o num", F.min_max),
    Primitive("sigmoid", (), 1, "num -[1/4]-> num", F.sigmoid),
    Primitive("exp", (), 1, "num -> num", F.unbounded_math),
    Primitive("log", (), 1, "num -> num", F.unbounded_math),
    Primitive("sqrt", (), 1, "num -> num", F.unbounded_math),
    Primitive("floor", (), 1, "num -> num", F.unbounded_math),
    # matrices: `mat[p] num` is the list of its rows (Duet's M_Lp; `matrices`)
    Primitive("mat_of_rows", (), 1, "list (vec[p] num) -o mat[p] num", M.mat_of_rows),
    Primitive("mrow", (), 2, "mat[p] num -o int -> vec[p] num  (row i)", M.mrow),
    Primitive("mentry", (), 3, "mat[p] num -o int -> int -> num  (row i, column j)", M.mentry),
    Primitive("mmap", (), 2, "(num -[s]-> num) -> mat[p] num -[s]-> mat[p] num", M.mmap),
    Primitive("vmap", (), 2, "(num -[s]-> num) -> vec[p] num -[s]-> vec[p] num", M.vmap),
    Primitive("mtranspose", (), 1, "mat[1] num -o mat[1] num", M.mtranspose),
    Primitive("vsums", ("c",), 2, "(A -> vec[2] num) -> list (bag A) -[c]-> mat[2] num  (per bucket: f of each row clipped to L2 norm c, summed)", M.vsums),
    # higher order: closures applied once per row are scaled by infinity
    Primitive("map", (), 2, "(A -> B) -> bag A -o bag B", H.map_),
    Primitive("filter", (), 2, "(A -> bool) -> bag A -o bag A", H.filter_),
    Primitive("split", (), 2, "(A -> bool) -> bag A -o (bag A, bag A)", H.split),
    Primitive("group", ("k",), 2, "(A -> int) -> bag A -o list (bag A)  (k buckets; or group[\"a\", ..]: A -> string)", H.group),
    Primitive("join", ("k",), 4, "(R -> K) -> (S -> K) -> bag R -[2k]-> bag S -[2k]-> bag (R, S)  (k rows per key kept)", H.join),
    Primitive("tabulate", (), 2, "list T -> (T -> num) -o vec[inf] num", H.tabulate),
    # distributions
    Primitive("laplace", ("eps",), 1, "num -[eps]-> fuzzy num  (also vec[1] num)", N.laplace),
    Primitive("gauss", ("sigma",), 1, "num -> fuzzy num  (rho = s^2 / 2 sigma^2; also vec[2] num)", N.gauss),
    Primitive("gauss_dp", ("s", "eps", "delta"), 1, "num -> fuzzy num  (Gaussian calibrated to (eps, delta) for L2 sensitivity <= s; also vec[2] num)", N.gauss_dp),
    Primitive("geometric", ("eps",), 1, "int -[eps]-> fuzzy int  (two-sided geometric noise; an integer release)", N.geometric),
    Primitive("staircase", ("eps", "gamma"), 1, "num -> fuzzy num  (staircase noise, steps of width 1: eps ceil(s); gamma optional)", N.staircase),
    Primitive("dgauss", ("sigma",), 1, "int -> fuzzy int  (discrete Gaussian; rho = s^2 / 2 sigma^2)", N.dgauss),
    Primitive("ptr_median", ("eps", "delta", "b"), 1, "bag num -> fuzzy (num + unit)  (propose-test-release: (2 eps, delta) per row; inr () is no answer)", N.ptr_median),
    Primitive("ptr_quantile", ("eps", "delta", "b", "p"), 1, "bag num -> fuzzy (num + unit)  (propose-test-release for the lower p-quantile, 0 < p < 1: (2 eps, delta) per row; inr () is no answer)", N.ptr_quantile),
    Primitive("smooth_quantile", ("eps", "delta", "lo", "hi", "p"), 1, "bag num -> fuzzy num  (smooth sensitivity for the lower p-quantile of the rows clamped to [lo, hi]: (eps, delta) per row)", N.smooth_quantile),
    Primitive("smooth_median", ("eps", "delta", "lo", "hi"), 1, "bag num -> fuzzy num  (smooth sensitivity for the lower median of the rows clamped to [lo, hi]: (eps, delta) per row)", N.smooth_quantile),
    Primitive("wishart", ("eps", "delta", "b", "k"), 1, "bag (vec[2] num) -> fuzzy (mat[2] num)  (S / k - w^2 I, S ~ W_d(k, X^T X + w^2 I), rows clipped to L2 norm b: (eps, delta) per row)", N.wishart),
    Primitive("expmech", ("eps",), 3, "list C -> (C -> D -[s]-> num) -> D -[eps*s]-> fuzzy C", N.expmech),
    Primitive("loop", ("k",), 2, "A -> (A -> fuzzy A) -> fuzzy A  (cost: k times the body's)", N.loop),
    Primitive("iterate", ("k",), 2, "(A -> A) -> A -> A  (s^k-sensitive in the start for an s-sensitive step)", N.iterate),
    Primitive("subsample", ("q",), 2, "(bag A -> fuzzy B) -> bag A -> fuzzy B  (amplified)", N.subsample),
    # the local model (`local_model`): randomisers private for any two inputs
    Primitive("rr", ("eps",), 1, "bool -> fuzzy bool  (randomized response: eps for any two inputs)", L.rr),
    Primitive("krr", ("eps", "k"), 1, "int -> fuzzy int  (k-ary randomized response over 0..k-1)", L.krr),
    Primitive("local", (), 2, "(A -> fuzzy B) -> bag A -> fuzzy (bag B)  (eps-LDP; replace-one)", L.local),
    Primitive("shuffle", ("n",), 2, "(A -> fuzzy B) -> bag A -> fuzzy (bag B)  (shuffled; FMT 2021)", L.shuffle),
    Primitive("rr_estimate", ("eps",), 1, "bag bool -> num  (debiased count of true reports)", L.rr_estimate),
    Primitive("krr_estimate", ("eps", "k"), 1, "bag int -> list num  (debiased category counts)", L.krr_estimate),
    Primitive("choose", ("m",), 2, "(bag A -> fuzzy B) -> bag A -> fuzzy B  (m rows without replacement)", N.choose),
    Primitive("bootstrap", ("m",), 2, "(bag A -> fuzzy B) -> bag A -> fuzzy B  (m rows with replacement)", N.bootstrap),
]

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in _TABLE}


def apply_primitive(
    ck: Inferencer,
    name: str,
    head: S.Expr,
    statics: tuple[S.Expr, ...],
    args: list[S.Expr],
    whole: S.Expr,
    hint: T.Type | None,
) -> Judgment:
    prim = PRIMITIVES.get(name)
    if prim is None:
        raise CheckError("FZ207", f"unknown primitive `{name}`", head.span)
    if name == "sum" and not statics and args:
        return F.unclamped_sum(ck, PrimCall(name, statics, args[:1], _rebuild(head, args[:1], whole), hint, head))
    categorical = name == "group" and len(statics) >= 1 and is_categorical(statics, ck.visible_categories())
    optional = name == "staircase" and len(statics) == 1  # gamma left out: the optimal gamma*
    if len(statics) != len(prim.statics) and not categorical and not optional:
        wanted = f"`{name}[{', '.join(prim.statics)}]`" if prim.statics else f"`{name}` (no brackets)"
        count = f"{len(prim.statics)}"
        if name == "staircase":
            count, wanted = "1 or 2", f"`staircase[eps]` or {wanted}"
        raise CheckError("FZ208", f"`{name}` takes {count} static argument(s): write {wanted}", head.span)
    if len(args) < prim.arity:
        raise CheckError(
            "FZ208",
            f"`{name}` takes {prim.arity} argument(s) but is given {len(args)}: {prim.signature}",
            whole.span,
            hint="primitives must be applied to all their arguments (wrap in `fun x -> ...` to pass one as a function)",
        )
    own, rest = args[: prim.arity], args[prim.arity :]
    call = PrimCall(name, statics, own, _rebuild(head, own, whole) if rest else whole, hint if not rest else None, head)
    result = prim.rule(ck, call)
    if rest:
        from fuzzpy.checker.apply import apply_value

        return apply_value(ck, result, head, rest, whole)
    return result


def _rebuild(head: S.Expr, args: list[S.Expr], whole: S.Expr) -> S.Expr:
    """The sub-application covering ``head`` and ``args`` (for spans)."""
    expr = head
    for arg in args:
        span = head.span.merge(arg.span) if head.span.file == arg.span.file else whole.span
        expr = S.App(expr, arg, span=span)
    return expr
