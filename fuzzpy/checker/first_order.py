"""First-order primitives: each scales its argument's context by a constant.

Why each constant (x, x' at distance d):
* `size`: adding or removing one row changes the count by 1.
* `sum[lo, hi]`: each row is clamped into [lo, hi], so one row moves the
  sum by at most max(|lo|, |hi|) (Dwork & Roth 2014, section 3.3).
  Without bounds one row can move it arbitrarily: infinite.
* `clip`, `abs`, `min`, `max`, projections, injections: 1-Lipschitz.
* `clip2[c]`: projection onto a convex set is 1-Lipschitz in L2.
* `vsum[c]`: every row is clipped to L2 norm c first, so one row moves the
  sum by at most c in L2 (Abadi et al. 2016, DP-SGD).
* `counts`: a row moves at most one bucket, so the L1 distance of the counts
  is the bag distance.
* `sigmoid`: its derivative is at most 1/4.
* `dot` with a literal of static numbers w: ||w||_q (Hoelder, q the dual
  norm); `dot` of two non-constant vectors, `exp`, `log`, `sqrt`, `floor`:
  not Lipschitz with a constant the checker knows: infinite.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.checker import obligations
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.elaborate import positive_static, require_static, static_value
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.noise import deferred_read, no_static_parameter
from fuzzpy.checker.typerel import sqrt_sens
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import INF, Sens
from fuzzpy.language.symbolic import Poly

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Inferencer
    from fuzzpy.checker.primitives import PrimCall

def _scaled(ck: Inferencer, call: PrimCall, j: Judgment, factor: Sens, result: T.Type, why: str, code: str = "FZ306") -> Judgment:
    ck.note(f"`{call.name}`: {why}; sensitivity x {factor}")
    return Judgment(result, U.scale_ctx(j.ctx, factor, call.span, why, code))


def _bag(ck: Inferencer, call: PrimCall, index: int = 0, elem: T.Type | None = None) -> Judgment:
    arg = call.args[index]
    if elem is not None:
        return ck.check(arg, T.TBag(elem), f"`{call.name}` takes a `bag {elem}`")
    j = ck.infer(arg)
    if not isinstance(j.type, T.TBag):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TBag(T.NUM), j.type, arg.span, f"`{call.name}` takes a bag (a database)")
    return j


def _number(ck: Inferencer, call: PrimCall, index: int = 0) -> Judgment:
    return ck.check(call.args[index], T.NUM, f"`{call.name}` takes a number")


def size(ck: Inferencer, call: PrimCall) -> Judgment:
    j = _bag(ck, call)
    return _scaled(ck, call, j, Sens.of(1), T.INT, "one row more or less changes the count by 1")


def _is_infinite_bound(expr: S.Expr) -> bool:
    if isinstance(expr, S.Unary) and expr.op == "-":
        expr = expr.operand
    return isinstance(expr, S.InfLit) or (isinstance(expr, S.Var) and expr.name == "inf")


def clamped_sum(ck: Inferencer, call: PrimCall) -> Judgment:
    if any(_is_infinite_bound(bound) for bound in call.statics):
        return unclamped_sum(ck, call)
    symbolic = _index_bounds(ck, call)
    bound = None if symbolic is None else _index_sum_bound(ck, *symbolic)
    if symbolic is not None and bound is not None:
        lo_poly, hi_poly = symbolic
        j = _bag(ck, call, elem=T.NUM)
        return _scaled(ck, call, j, bound, T.NUM, f"rows clamped into [{lo_poly}, {hi_poly}] move the sum by at most {bound}")
    lo, hi, deferred = _bounds(ck, call, "`sum`")
    if lo > hi and not deferred:  # with a placeholder, each call decides it at its numbers
        raise CheckError("FZ202", f"`sum[{lo}, {hi}]`: the lower bound is above the upper bound", call.statics[0].span)
    j, result = _summed_bag(ck, call, lo, hi, deferred)
    bound = Sens(max(abs(lo), abs(hi)))
    if bound.is_zero:
        ck.zero_from_parameters(call.statics, "the bound of `sum`", call.statics[0].span)
    return _scaled(ck, call, j, bound, result, f"rows clamped into [{lo}, {hi}] move the sum by at most {bound}")


def _summed_bag(ck: Inferencer, call: PrimCall, lo: Fraction, hi: Fraction, deferred: bool) -> tuple[Judgment, T.Type]:
    """The bag of `sum[lo, hi]` and the sum's type: `int` for a `bag int`
    clamped into whole bounds (an integer query, for `geometric` / `dgauss`),
    else `num` (the bag read as `bag num`)."""
    if not deferred and lo.denominator == 1 and hi.denominator == 1:
        point = ck.checkpoint()
        try:
            j = ck.infer(call.args[0])
        except CheckError:
            j = None  # the `bag num` reading below reports it
        if j is not None and isinstance(j.type, T.TBag) and isinstance(j.type.elem, T.TInt):
            return j, T.INT
        ck.rollback(point)
    return _bag(ck, call, elem=T.NUM), T.NUM


def unclamped_sum(ck: Inferencer, call: PrimCall) -> Judgment:
    j = _bag(ck, call, elem=T.NUM)
    return _scaled(
        ck,
        call,
        j,
        INF,
        T.NUM,
        "`sum` with an infinite bound: one row can move the sum arbitrarily far (clamp the rows with finite bounds)",
        "FZ304",
    )


def _bounds(ck: Inferencer, call: PrimCall, prim: str) -> tuple[Fraction, Fraction, bool]:
    """The static bounds of `sum`/`clip`, and whether one names a static
    parameter read as a placeholder (`noise.no_static_parameter`)."""
    deferred = no_static_parameter(ck, call.statics[0], f"the lower bound of {prim}")
    lo = require_static(call.statics[0], ck.visible_constants(), f"the lower bound of {prim}")
    deferred = no_static_parameter(ck, call.statics[1], f"the upper bound of {prim}") or deferred
    hi = require_static(call.statics[1], ck.visible_constants(), f"the upper bound of {prim}")
    return lo, hi, deferred


def _index_bounds(ck: Inferencer, call: PrimCall) -> tuple[Poly, Poly] | None:
    """Bounds `[lo, hi]` written over the definition's `nat` indices (as
    symbols here), lo <= hi shown for every whole value >= 1 (term by term,
    else z3 over the naturals; DFuzz's index terms, Gaboardi et al. POPL
    2013). None when the bounds are numbers or not of this form (the other
    rules, or the check at each call's numbers, apply)."""
    named = [n for e in call.statics for n in ck.static_parameters_in(e)]
    if not named or not set(named) <= ck.index_params or set(named) & ck.deferred.keys():
        return None
    lo, hi = ck.symbolic_value(call.statics[0]), ck.symbolic_value(call.statics[1])
    if lo is None or hi is None or (lo.is_const and hi.is_const):
        return None
    if obligations.at_most(lo, hi, ck.index_symbols()).status != "proved":
        return None
    return lo, hi


def _index_sum_bound(ck: Inferencer, lo: Poly, hi: Poly) -> Sens | None:
    """max(|lo|, |hi|) for ordered bounds over `nat` indices, as an index
    term (Dwork & Roth 2014, section 3.3: a clamped row moves the sum by at
    most it), or None when no index term is shown to bound it."""
    naturals = ck.index_symbols()
    for big in (hi, -lo):
        # |lo|, |hi| <= big when -big <= lo <= hi <= big (lo <= hi is known)
        if obligations.at_most(-big, lo, naturals).status == "proved" and obligations.at_most(hi, big, naturals).status == "proved":
            bound = Sens.symbolic(big)
            if bound.is_symbolic or not bound.is_inf:
                return bound
    return None


def clip(ck: Inferencer, call: PrimCall) -> Judgment:
    symbolic = _index_bounds(ck, call)
    if symbolic is not None:  # clamping is 1-Lipschitz whatever its (ordered) bounds
        return _scaled(ck, call, _number(ck, call), Sens.of(1), T.NUM, "clamping is 1-Lipschitz")
    lo, hi, deferred = _bounds(ck, call, "`clip`")
    if lo > hi and not deferred:  # with a placeholder, each call decides it at its numbers
        raise CheckError("FZ202", f"`clip[{lo}, {hi}]`: the lower bound is above the upper bound", call.statics[0].span)
    j = _number(ck, call)
    return _scaled(ck, call, j, Sens.of(1), T.NUM, "clamping is 1-Lipschitz")


def abs_(ck: Inferencer, call: PrimCall) -> Judgment:
    j = _number(ck, call)
    return _scaled(ck, call, j, Sens.of(1), T.NUM, "|x| is 1-Lipschitz")


def sigmoid(ck: Inferencer, call: PrimCall) -> Judgment:
    j = _number(ck, call)
    return _scaled(ck, call, j, Sens.of(Fraction(1, 4)), T.NUM, "the logistic function's slope is at most 1/4")


def unbounded_math(ck: Inferencer, call: PrimCall) -> Judgment:
    j = _number(ck, call)
    return _scaled(ck, call, j, INF, T.NUM, f"`{call.name}` has no Lipschitz constant the checker knows")


def min_max(ck: Inferencer, call: PrimCall) -> Judgment:
    left, right = _number(ck, call, 0), _number(ck, call, 1)
    ck.note(f"`{call.name}` is 1-sensitive in each argument")
    return Judgment(T.NUM, U.plus(left.ctx, right.ctx))


def counts(ck: Inferencer, call: PrimCall) -> Judgment:
    arg = call.args[0]
    j = ck.infer(arg)
    if not (isinstance(j.type, T.TList) and isinstance(j.type.elem, T.TBag)):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TList(T.TBag(T.NUM)), j.type, arg.span, "`counts` takes the buckets made by `group`")
    length = static_length(j, arg, "`counts` makes one entry per bucket")
    ck.note("`counts`: a row moves at most one bucket, so the counts move by 1 in L1")
    return Judgment(T.TVec("1", T.NUM, length), j.ctx)


def static_length(j: Judgment, expr: S.Expr, what: str) -> int:
    """The static length of a list, which a vector built from it takes as
    its length in the type (FZ214 when it is not known)."""
    if j.length is None:
        raise CheckError(
            "FZ214",
            f"{what}, so the vector's length is this list's, which is not known statically",
            expr.span,
            hint="use a list literal (or `group[k]`), so that the vector's length is part of its type",
        )
    return j.length


def clip2(ck: Inferencer, call: PrimCall) -> Judgment:
    what = "the radius of `clip2`"
    deferred_read(ck, call.statics[0], what, lambda: positive_static(call.statics[0], ck.visible_constants(), what), Fraction(1))
    j = ck.check(call.args[0], ck.lengths.vec("2"), "`clip2` clips a vector in the L2 norm")
    return _scaled(ck, call, j, Sens.of(1), j.type, "projection onto an L2 ball is 1-Lipschitz")


def vsum(ck: Inferencer, call: PrimCall) -> Judgment:
    """The sum's length is its rows' (part of their type), so that the sum
    of an empty bag is the zero vector of that length: `run` reads it from
    `CheckedProgram.vector_lengths` (see `driver`)."""
    what = "the clipping norm of `vsum`"
    c = deferred_read(ck, call.statics[0], what, lambda: positive_static(call.statics[0], ck.visible_constants(), what), Fraction(1))
    row = ck.lengths.vec("2")
    j = ck.check(call.args[0], T.TBag(row), "`vsum` sums rows that are L2 vectors")
    ck.vector_sites[call.head.span] = row.length
    result = Judgment(row, j.ctx)
    return _scaled(ck, call, result, Sens(c), row, f"rows clipped to L2 norm {c}: one row moves the sum by at most {c}")


def dot(ck: Inferencer, call: PrimCall) -> Judgment:
    """`dot u v`. A list literal may stand for either vector (it takes the
    other's norm). With one side a literal of static numbers w, the product
    is Lipschitz in the other by Hoelder's inequality, |w . (v - v')| <=
    ||w||_q ||v - v'||_p with 1/p + 1/q = 1; otherwise it multiplies two
    non-constant values and is infinitely sensitive in both."""
    first, second = call.args
    same = "both vectors of `dot` use the same norm and have the same length"
    if isinstance(first, S.ListLit) and not isinstance(second, S.ListLit):
        right = _vector_operand(ck, ck.infer(second), second)
        left = ck.check(first, right.type, same)
    else:
        literal = "`dot` of two literals reads them as L2 vectors"
        first_j = ck.check(first, ck.lengths.vec("2"), literal) if isinstance(first, S.ListLit) else ck.infer(first)
        left = _vector_operand(ck, first_j, first)
        right = ck.check(second, left.type, same)
    assert isinstance(left.type, T.TVec)
    norm = left.type.norm
    for weights, other in ((first, right), (second, left)):
        factor = _dual_norm(_static_entries(weights, ck.visible_constants()), norm)
        if factor is not None and factor.is_zero and isinstance(weights, S.ListLit):
            ck.zero_from_parameters(tuple(weights.items), "the weights of `dot`", weights.span)
        if factor is not None:
            ck.note(f"`dot` with a constant vector: Lipschitz with its dual norm, sensitivity x {factor}")
            return Judgment(T.NUM, U.scale_ctx(other.ctx, factor, call.span, "`dot` with a constant vector"))
    why = "`dot` multiplies two non-constant vectors: not Lipschitz"
    ck.note("`dot`: a product of non-constants, infinitely sensitive in both")
    ctx = U.plus(U.scale_ctx(left.ctx, INF, call.span, why), U.scale_ctx(right.ctx, INF, call.span, why))
    return Judgment(T.NUM, ctx)


def _vector_operand(ck: Inferencer, j: Judgment, expr: S.Expr) -> Judgment:
    if not isinstance(j.type, T.TVec):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TVec("2", T.NUM), j.type, expr.span, "`dot` takes two vectors")
    return j


def _static_entries(expr: S.Expr, constants: Mapping[str, Fraction]) -> list[Fraction] | None:
    if not isinstance(expr, S.ListLit):
        return None
    values = [static_value(item, constants) for item in expr.items]
    return None if any(v is None for v in values) else [v for v in values if v is not None]


def _dual_norm(weights: list[Fraction] | None, norm: str) -> Sens | None:
    """||w||_q for the norm q dual to the vector's p (1 <-> inf, 2 <-> 2),
    rounded up when irrational."""
    if weights is None:
        return None
    sizes = [abs(w) for w in weights]
    if norm == "1":
        return Sens(max(sizes, default=Fraction(0)))
    if norm == "inf":
        return Sens(sum(sizes, Fraction(0)))
    return sqrt_sens(sum((w * w for w in sizes), Fraction(0)))


def _projection(ck: Inferencer, call: PrimCall, first: bool) -> Judgment:
    j = ck.infer(call.args[0])
    if isinstance(j.type, T.TWith):
        ty = j.type.left if first else j.type.right
    elif isinstance(j.type, T.TTuple) and len(j.type.items) == 2:
        ty = j.type.items[0 if first else 1]
    else:
        raise CheckError(
            "FZ201",
            f"expected a pair `<A & B>` but found `{j.type}`: `{call.name}` takes a component of a pair",
            call.args[0].span,
        )
    ck.note(f"`{call.name}` is a projection: 1-sensitive")
    return Judgment(ty, j.ctx)


def fst(ck: Inferencer, call: PrimCall) -> Judgment:
    return _projection(ck, call, True)


def snd(ck: Inferencer, call: PrimCall) -> Judgment:
    return _projection(ck, call, False)


def _inject(ck: Inferencer, call: PrimCall, left: bool) -> Judgment:
    hint = call.hint
    if not isinstance(hint, T.TSum):
        raise CheckError(
            "FZ209",
            f"cannot infer the other side of the sum type built by `{call.name}`",
            call.span,
            hint=f"annotate it, e.g. `({call.name} e : num + bool)`",
        )
    side = hint.left if left else hint.right
    j = ck.check(call.args[0], side, f"`{call.name}` builds the {'left' if left else 'right'} side of `{hint}`")
    if j.is_fuzzy:
        raise CheckError("FZ213", "a distribution cannot be stored in a data structure: `sample` it first", call.span)
    ck.note(f"`{call.name}` is 1-sensitive")
    return Judgment(hint, j.ctx)


def inl(ck: Inferencer, call: PrimCall) -> Judgment:
    return _inject(ck, call, True)


def inr(ck: Inferencer, call: PrimCall) -> Judgment:
    return _inject(ck, call, False)



def length(ck: Inferencer, call: PrimCall) -> Judgment:
    """`len` of a vector: its length is part of its type, so two values of
    the type (neighbours among them) have the same length and `len` depends
    on no variable; a static length makes it a static number. A length
    known only at run time (a mechanism's result), and `len` of a list, keep
    the old rule: lists at finite distance have equal lengths (the list
    metric is infinite across lengths), so the length moves only when the
    list moves infinitely far; like a case on the list it is scaled by the
    positive floor 1 (never by 0, so that an infinite move stays infinite)."""
    j = ck.infer(call.args[0])
    if not isinstance(j.type, (T.TList, T.TVec)):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TList(T.NUM), j.type, call.args[0].span, "`len` measures a list or a vector")
    if isinstance(j.type, T.TVec):
        # `run` reads the length off the type too and never evaluates the
        # vector (`CheckedProgram.length_reads`), so nothing depends on it
        n = ck.lengths.resolve(j.type.length)
        if isinstance(n, int):
            ck.len_sites[call.span] = n
            ck.note(f"`len`: the vector's length {n} is part of its type: a static number")
            return Judgment(T.INT, {}, static=Fraction(n))
        if isinstance(n, T.LenVar) and not n.rigid:
            ck.len_sites[call.span] = j.type.length
            ck.note("`len`: the vector's length is part of its type (fixed before the data is read): public")
            return Judgment(T.INT, {})
    ck.note("`len`: constant at finite distance; 1-sensitive (the positive floor of a case)")
    return Judgment(T.INT, j.ctx)
