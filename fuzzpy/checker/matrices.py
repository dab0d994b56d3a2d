"""Matrices (`mat[p] num`) and entry-wise maps, after Duet's matrix types.

A `mat[p] num` is the list of its rows, `list (vec[p] num)`: the list
metric, the sum of the rows' distances, is Duet's metric on M_Lp[m, n]
(Near et al., "Duet: An Expressive Higher-Order Language and Linear Type
System for Statically Enforcing Differential Privacy", OOPSLA 2019, sec. 4:
the Lp norm on each row, the rows' norms added). Two matrices of different
shapes are infinitely far apart, so the shape is public. Each rule below
states its inequality; d is that metric, A, A' two matrices.

* `mat_of_rows : list (vec[p] num) -o mat[p] num`: the identity (it only
  names the type).
* `mrow m i : vec[p] num`: ||A_i - A'_i||_p <= d(A, A'): 1-sensitive in m.
* `mentry m i j : num`: |A_ij - A'_ij| <= ||A_i - A'_i||_inf <= ||A_i - A'_i||_p
  <= d: 1-sensitive in m. Indices choose an entry (not Lipschitz): what
  they depend on is scaled by infinity, so they are public (static, a
  parameter, a loop counter...).
* `mmap f m` (f : num -[s]-> num) and `vmap f v`: |f(a) - f(b)| <= s |a - b|
  entry by entry and every Lp norm is monotone in the entries' absolute
  values, so each row, and the sum of rows, moves at most s times as far:
  s-sensitive in m (Duet's `mmap`). f runs once per entry: what it
  captures is scaled by infinity.
* `mtranspose : mat[1] num -o mat[1] num`: the entrywise L1 distance does not
  depend on the orientation. Refused for `mat[2]` / `mat[inf]`: the sum of
  the columns' L2 norms can be sqrt(n) times the rows' (one row of n equal
  entries), so the transpose is not 1-sensitive there.
* `vsums[c] f groups : (A -> vec[2] num) -> list (bag A) -[c]-> mat[2] num`:
  one row per bucket, `vsum[c] (map f bucket)`, the sum of f of its rows,
  each clipped to L2 norm c: each bucket's
  sum moves by at most c per row added or removed in it, so the matrix moves
  by at most c times the list-of-bags distance (the sum of the buckets' own
  distances, in which `group` is 1-sensitive: Reed & Pierce, ICFP 2010).
* Norm conversions (`Inferencer.conversion_factor`): a matrix read in another
  norm converts every row by the vector factor of `typerel.norm_factor` with
  n the number of columns: ||x||_inf <= ||x||_2 <= ||x||_1 (free),
  ||x||_2 <= sqrt(n) ||x||_inf, ||x||_1 <= sqrt(n) ||x||_2, ||x||_1 <= n ||x||_inf
  (Cauchy-Schwarz); a sum of rows keeps each factor. A factor that needs n
  when n is not known is refused (FZ214).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.checker import usage as U
from fuzzpy.checker.blocks import BinderRules
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.elaborate import positive_static
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.higher_order import capture_infinitely, function_arg
from fuzzpy.checker.noise import deferred_read
from fuzzpy.checker.terms import eta_expand
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import INF, ONE, Sens

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Inferencer
    from fuzzpy.checker.primitives import PrimCall


def _matrix_type(t: T.Type) -> T.TList | None:
    if isinstance(t, T.TList) and isinstance(t.elem, T.TVec):
        return T.TList(t.elem, matrix=True)
    return None


def matrix_arg(ck: Inferencer, expr: S.Expr, why: str, hint: T.Type | None = None) -> Judgment:
    """A matrix argument. A literal list of rows is read in the hint's norm,
    else as `mat[2]` (like `dot` of two literals)."""
    if isinstance(expr, S.ListLit):
        wanted = _matrix_type(hint) if hint is not None else None
        j = ck.check(expr, wanted or T.TList(ck.lengths.vec("2"), matrix=True), why)
    else:
        j = ck.infer(expr, hint)
    found = _matrix_type(j.type)
    if found is None:
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TList(T.TVec("2", T.NUM), matrix=True), j.type, expr.span, why)
    return Judgment(found, j.ctx, length=j.length)


def _index(ck: Inferencer, expr: S.Expr, what: str) -> U.Ctx:
    j = ck.check(expr, T.INT, f"{what} is an `int`")
    why = f"{what} chooses an entry: not Lipschitz, so it must be public"
    return U.scale_ctx(j.ctx, INF, expr.span, why)


def mat_of_rows(ck: Inferencer, call: PrimCall) -> Judgment:
    j = matrix_arg(ck, call.args[0], "`mat_of_rows` takes a list of vectors (the rows)", call.hint)
    ck.note("`mat_of_rows`: a matrix is the list of its rows (Duet's M_Lp metric is the list metric): 1-sensitive")
    return j


def mrow(ck: Inferencer, call: PrimCall) -> Judgment:
    m = matrix_arg(ck, call.args[0], "`mrow m i` takes a row of a matrix")
    assert isinstance(m.type, T.TList) and isinstance(m.type.elem, T.TVec)
    index = _index(ck, call.args[1], "the row index of `mrow`")
    ck.note("`mrow`: one row moves by at most the sum of the rows' distances: 1-sensitive")
    return Judgment(m.type.elem, U.plus(m.ctx, index))


def mentry(ck: Inferencer, call: PrimCall) -> Judgment:
    m = matrix_arg(ck, call.args[0], "`mentry m i j` reads an entry of a matrix")
    row = _index(ck, call.args[1], "the row index of `mentry`")
    column = _index(ck, call.args[2], "the column index of `mentry`")
    ck.note("`mentry`: |a_ij - b_ij| <= ||a_i - b_i||_p <= the matrix distance: 1-sensitive")
    return Judgment(T.NUM, U.plus(U.plus(m.ctx, row), column))


def _entry_function(ck: Inferencer, call: PrimCall) -> tuple[Sens, U.Ctx]:
    """The function given to `mmap` / `vmap`: num -[s]-> num; (s, its captures)."""
    fn = call.args[0]
    lam = BinderRules(ck).with_param(fn if isinstance(fn, S.Lambda) else eta_expand(fn, "x"), T.NUM, T.NUM)
    if lam.body.is_fuzzy:
        raise CheckError("FZ213", f"the function given to `{call.name}` must not return a distribution", fn.span)
    ck.coerce(lam.body, T.NUM, fn.span, f"`{call.name}` maps numbers to numbers")
    captured = capture_infinitely(ck, dict(lam.body.ctx), fn, f"`{call.name}` (once per entry)")
    if lam.param_sens.is_zero:
        # a constant function still reads the shape, and `run` evaluates the
        # matrix to find it: never scaled by 0 (which would clear what an
        # infinite move -- another shape, an index out of range -- costs), but
        # by the positive floor 1, as `len` and a `case` on a list are
        ck.note(f"`{call.name}` of a constant function: scaled by the positive floor 1, not 0")
        return ONE, captured
    return lam.param_sens, captured


def mmap(ck: Inferencer, call: PrimCall) -> Judgment:
    s, captured = _entry_function(ck, call)
    m = matrix_arg(ck, call.args[1], "`mmap f m` maps every entry of a matrix", call.hint)
    why = f"`mmap` of a {s}-sensitive function: every entry, so every row's norm, moves at most {s} times as far"
    ck.note(f"`mmap`: {s}-sensitive in the matrix (Duet's mmap); the function's captures scaled by inf")
    ctx = U.scale_ctx(m.ctx, s, call.args[1].span, why) if s != ONE else m.ctx
    return Judgment(m.type, U.plus(ctx, captured), length=m.length)


def vmap(ck: Inferencer, call: PrimCall) -> Judgment:
    s, captured = _entry_function(ck, call)
    hint = call.hint if isinstance(call.hint, T.TVec) else None
    arg = call.args[1]
    j = ck.check(arg, hint or ck.lengths.vec("2"), "`vmap f v` maps every entry of a vector") if isinstance(arg, S.ListLit) \
        else ck.infer(arg, hint)
    if not isinstance(j.type, T.TVec):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TVec("2", T.NUM), j.type, arg.span, "`vmap f v` maps every entry of a vector")
    why = f"`vmap` of a {s}-sensitive function: every entry moves at most {s} times as far"
    ck.note(f"`vmap`: {s}-sensitive in the vector; the function's captures scaled by inf")
    ctx = U.scale_ctx(j.ctx, s, arg.span, why) if s != ONE else j.ctx
    return Judgment(j.type, U.plus(ctx, captured))


def mtranspose(ck: Inferencer, call: PrimCall) -> Judgment:
    arg = call.args[0]
    m = matrix_arg(ck, arg, "`mtranspose` transposes a matrix", T.TList(ck.lengths.vec("1"), matrix=True))
    assert isinstance(m.type, T.TList) and isinstance(m.type.elem, T.TVec)
    if m.type.elem.norm != "1":
        raise CheckError(
            "FZ222",
            f"`mtranspose` of a `{m.type}` is not 1-sensitive: the sum of the columns' norms can be "
            f"{'sqrt(n)' if m.type.elem.norm == '2' else 'n'} times the sum of the rows' (one row of n equal entries)",
            arg.span,
            hint="read it as a `mat[1] num` first (`(m : mat[1] num)`, a conversion by the number of columns): "
                 "the entrywise L1 distance does not depend on the orientation",
        )
    # the result's rows have as many entries as m has rows: a number when m
    # is built from a literal or `group[k]`, else known only at run time
    # (a rigid length: a conversion that needs it is refused, FZ214)
    rows: T.Length = m.length if m.length is not None else ck.lengths.fresh(rigid=True)
    columns = ck.lengths.static(m.type.elem.length)
    ck.note("`mtranspose` of a `mat[1]`: the entrywise L1 distance is the same: 1-sensitive")
    return Judgment(T.TList(T.TVec("1", T.NUM, rows), matrix=True), m.ctx, length=columns)


def vsums(ck: Inferencer, call: PrimCall) -> Judgment:
    what = "the clipping norm of `vsums`"
    c = deferred_read(
        ck, call.statics[0], what, lambda: positive_static(call.statics[0], ck.visible_constants(), what), Fraction(1))
    fn, arg = call.args
    j = ck.infer(arg)
    if not (isinstance(j.type, T.TList) and isinstance(j.type.elem, T.TBag)):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TList(T.TBag(T.NUM)), j.type, arg.span, "`vsums` sums each bucket made by `group`")
    row = ck.lengths.vec("2")
    result, captured = function_arg(ck, fn, j.type.elem.elem, row, "`vsums`")
    ck.coerce(Judgment(result), row, fn.span, "`vsums` sums one L2 vector per row")
    captured = capture_infinitely(ck, captured, fn, "`vsums`")
    ck.vector_sites[call.head.span] = row.length
    why = f"rows clipped to L2 norm {c}: a row added to or removed from a bucket moves its row of the matrix by at most {c}"
    ck.note(f"`vsums[{c}]`: {c}-sensitive from the buckets (the list-of-bags metric) to `mat[2]`")
    ctx = U.plus(U.scale_ctx(j.ctx, Sens(c), call.span, why), captured)
    return Judgment(T.TList(row, matrix=True), ctx, length=j.length)
