"""Rules for variables, literals and data structures.

* A variable is 1-sensitive in itself; a constant in nothing.
* Tensor pairs, tuples and records (metric: sum) add their components'
  contexts; with-pairs `<a, b>` (metric: max) join them; projections are
  1-sensitive.
* A list literal is a tensor of its elements (list metric: sum); checked
  against `vec[p] num` it is read in that metric directly: the elements'
  contexts join for p = inf, add for p = 1, and combine as the root of the sum
  of squares for p = 2 (language design, section 5).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.checker import costs as C
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.typerel import contains_fuzzy, join_types, sqrt_sens
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import ONE, Sens

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Handler, Inferencer


def handlers(ck: Inferencer) -> dict[type, Handler]:
    rules = LiteralRules(ck)
    return {
        S.NumLit: rules.num,
        S.BoolLit: rules.constant,
        S.StringLit: rules.constant,
        S.UnitLit: rules.constant,
        S.InfLit: rules.inf,
        S.Var: rules.var,
        S.ListLit: rules.list_lit,
        S.Tuple: rules.tuple_lit,
        S.RecordLit: rules.record,
        S.WithPair: rules.with_pair,
        S.Field: rules.field,
        S.Cons: rules.cons,
    }


class LiteralRules:
    def __init__(self, ck: Inferencer) -> None:
        self.ck = ck

    def num(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.NumLit)
        ty: T.Type = T.INT if expr.is_int and not isinstance(hint, T.TNum) else T.NUM
        return Judgment(ty, {}, static=expr.value)

    def constant(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        ty = {S.BoolLit: T.BOOL, S.StringLit: T.STRING, S.UnitLit: T.UNIT}[type(expr)]
        return Judgment(ty, {})

    def inf(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        raise CheckError("FZ202", "`inf` may only stand for a sensitivity or a vector norm", expr.span)

    def var(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Var)
        ck = self.ck
        binding = ck.env.lookup(expr.name)
        if binding is not None:
            if binding.cost is not None:
                ck.note(f"`{expr.name}` is a distribution: each use of it runs it again")
                fresh: dict[int, object] = {}  # each use samples it again: a draw of its own (`costs.retag`)
                return Judgment(binding.type, {}, cost={n: C.retag(c, fresh) or c for n, c in binding.cost.items()})
            if binding.static is not None:
                return Judgment(binding.type, {}, static=binding.static)
            if expr.name in ck.index_params and ck.static_params.get(expr.name) is binding and binding.symbolic is not None:
                # a `nat` index: its number at a call, the placeholder 1 in the
                # generic pass (whose results are discarded: checked at each call)
                value = binding.symbolic.value if binding.symbolic.is_const else Fraction(1)
                if not binding.symbolic.is_const and not ck.static_argument:  # read as a number: checked at each call
                    ck.defer(binding.symbolic.symbols(), "a `nat` index read as a number (not as a factor `n * e`)")
                if binding.symbolic.is_const or not ck.static_argument:
                    ck.note(f"`{expr.name}` is a static index: the number {value} here")
                else:
                    ck.note(f"`{expr.name}` is a static index, passed on as the index term {binding.symbolic}")
                return Judgment(binding.type, {}, static=value)
            ck.note(f"variable: 1-sensitive in `{expr.name}`")
            return Judgment(binding.type, U.single(binding.key, expr.span), length=binding.length)
        if expr.name in ck.globals.constants:
            return Judgment(T.NUM, {}, static=ck.globals.constants[expr.name])
        if expr.name in ck.globals.categories:  # a public list: it depends on nothing
            return Judgment(T.TList(T.STRING), {}, length=len(ck.globals.categories[expr.name]))
        from fuzzpy.checker.apply import apply_spine

        return apply_spine(ck, expr, [], expr, hint)

    # ------------------------------------------------------------ lists and vectors

    def list_lit(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.ListLit)
        ck = self.ck
        if isinstance(hint, T.TVec):
            return self._vector(expr, hint)
        elem_hint = hint.elem if isinstance(hint, T.TList) else None
        items = [ck.infer(item, elem_hint) for item in expr.items]
        elem: T.Type | None = elem_hint
        for item_expr, item in zip(expr.items, items, strict=True):
            joined = item.type if elem is None else join_types(elem, item.type, ck.lengths)
            if joined is None:
                why = ("the list's expected type asks for this element type" if elem is elem_hint
                       else "all elements of a list have one type")
                error = ck.mismatch(elem, item.type, item_expr.span, why)  # type: ignore[arg-type]
                raise _with_norm_hint(error, elem, item.type)
            elem = joined
        if elem is None:
            raise CheckError(
                "FZ209",
                "cannot tell the type of the elements of an empty list",
                expr.span,
                hint="annotate it, e.g. `([] : list num)`",
            )
        if contains_fuzzy(elem):
            raise CheckError("FZ213", "a list cannot hold distributions: `sample` them first", expr.span)
        ctx: U.Ctx = {}
        for item in items:
            ctx = U.plus(ctx, item.ctx)
        ck.note("a list is a tensor of its elements: the contexts add")
        return Judgment(T.TList(elem), ctx, length=len(items))

    def _vector(self, expr: S.ListLit, target: T.TVec) -> Judgment:
        ck = self.ck
        items = [ck.check(item, T.NUM, f"the entries of a `{target}` are numbers") for item in expr.items]
        ctx: U.Ctx = {}
        if target.norm == "inf":
            for item in items:
                ctx = U.join_ctx(ctx, item.ctx)
            ck.note("vec[inf] literal: the entries' contexts join (max)")
        elif target.norm == "1":
            for item in items:
                ctx = U.plus(ctx, item.ctx)
            ck.note("vec[1] literal: the entries' contexts add")
        else:
            ctx = self._l2_combine(items, expr)
            ck.note("vec[2] literal: per variable, the root of the sum of squares (rounded up)")
        found = T.TVec(target.norm, T.NUM, len(items))
        if not ck.lengths.unify(target.length, found.length):
            raise ck.mismatch(target, found, expr.span, f"this list literal has {len(items)} entries")
        return Judgment(found, ctx)

    @staticmethod
    def _l2_combine(items: list[Judgment], expr: S.ListLit) -> U.Ctx:
        squares: dict[str, Sens] = {}
        trees: U.Ctx = {}
        for item in items:
            for name, usage in item.ctx.items():
                squares[name] = squares.get(name, Sens.of(0)) + usage.sens * usage.sens
                trees[name] = U.add(trees.get(name), usage)
        ctx: U.Ctx = {}
        for name, square in squares.items():
            if square.is_symbolic:  # no square root of an index term: the L2 norm is at most the L1 sum
                total = trees[name].sens
            else:
                total = square if square.value is None else sqrt_sens(square.value)
            tree = trees[name]
            factor = ONE if tree.sens.value in (None, 0) or total.value is None else Sens(total.value / tree.sens.value)  # type: ignore[operator]
            ctx[name] = U.Usage(total, "scale", expr.span, "L2 norm of the entries", left=tree, factor=factor)
        return ctx

    def cons(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Cons)
        ck = self.ck
        tail = ck.infer(expr.tail, hint if isinstance(hint, T.TList) else None)
        if not isinstance(tail.type, T.TList):
            from fuzzpy.checker.infer import type_mismatch

            raise type_mismatch(T.TList(T.NUM), tail.type, expr.tail.span, "the right side of `::` is a list")
        head = ck.check(expr.head, tail.type.elem, "the head of `::` has the list's element type")
        length = None if tail.length is None else tail.length + 1
        ck.note("`::` is a tensor of head and tail: the contexts add")
        return Judgment(tail.type, U.plus(head.ctx, tail.ctx), length=length)

    # ------------------------------------------------------------ tuples, records, with-pairs

    def tuple_lit(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Tuple)
        hints = hint.items if isinstance(hint, T.TTuple) and len(hint.items) == len(expr.items) else (None,) * len(expr.items)
        items = [self._component(item, h) for item, h in zip(expr.items, hints, strict=True)]
        ctx: U.Ctx = {}
        for item in items:
            ctx = U.plus(ctx, item.ctx)
        self.ck.note("tensor pair: the components' contexts add")
        return Judgment(T.TTuple(tuple(i.type for i in items)), ctx)

    def record(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.RecordLit)
        hints = dict(hint.fields) if isinstance(hint, T.TRecord) else {}
        names = [n for n, _ in expr.fields]
        for name in names:
            if names.count(name) > 1:
                raise CheckError("FZ205", f"the field `{name}` is given twice", expr.span)
        items = [(name, self._component(value, hints.get(name))) for name, value in expr.fields]
        ctx: U.Ctx = {}
        for _, item in items:
            ctx = U.plus(ctx, item.ctx)
        self.ck.note("record: a tensor of its fields, the contexts add")
        alias = hint.alias if isinstance(hint, T.TRecord) and hint == T.TRecord(tuple((n, i.type) for n, i in items)) else None
        return Judgment(T.TRecord(tuple((n, i.type) for n, i in items), alias=alias), ctx)

    def with_pair(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.WithPair)
        lh, rh = (hint.left, hint.right) if isinstance(hint, T.TWith) else (None, None)
        left = self._component(expr.left, lh)
        right = self._component(expr.right, rh)
        self.ck.note("with-pair: only one component is used, the contexts join (max)")
        return Judgment(T.TWith(left.type, right.type), U.join_ctx(left.ctx, right.ctx))

    def _component(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        j = self.ck.infer(expr, hint) if hint is None else self.ck.check(expr, hint, "the component's annotated type")
        if contains_fuzzy(j.type):
            raise CheckError("FZ213", "a distribution cannot be stored in a data structure: `sample` it first", expr.span)
        return j

    def field(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Field)
        ck = self.ck
        record = ck.infer(expr.expr)
        if not isinstance(record.type, T.TRecord):
            raise CheckError(
                "FZ201",
                f"expected a record but found `{record.type}`: `.{expr.name}` selects a record field",
                expr.expr.span,
            )
        ty = record.type.field_type(expr.name)
        if ty is None:
            fields = ", ".join(n for n, _ in record.type.fields)
            raise CheckError("FZ205", f"`{record.type}` has no field `{expr.name}` (it has: {fields})", expr.span)
        ck.note(f"field `.{expr.name}`: a projection, 1-sensitive")
        return Judgment(ty, record.ctx)


def _with_norm_hint(error: CheckError, expected: T.Type | None, found: T.Type) -> CheckError:
    """A list element that is a vector in another norm than the list's (review
    s28d F6: `mat_of_rows [tabulate ...]` under `laplace`): the annotation that
    converts it, at the norm factor (docs/semantics.md, "Norm conversions")."""
    if not (isinstance(expected, T.TVec) and isinstance(found, T.TVec) and expected.norm != found.norm):
        return error
    d = error.diagnostic
    hint = (f"a vector is read in another norm only where an annotation asks for it: write `(e : {expected})` "
            f"around this element (its sensitivity is then multiplied by the norm factor, e.g. n from "
            f"vec[inf] to vec[1] for n entries), or annotate the whole matrix (`(m : mat[{found.norm}] num)`)")
    return CheckError(d.code, d.message, d.span, hint=hint, labels=d.labels, notes=d.notes)
