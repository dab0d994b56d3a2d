"""The interpreter, with bags held by a query engine.

`EngineInterpreter` is `fuzzpy.runtime.interpreter.Interpreter` with one
difference: a bag parameter is a `RelationBag` (rows in an engine, never in
Python). Everything at macro level runs exactly as in memory (the same
code: exact numbers, call by need, recursion budget, `sample`, `loop`...).
When `map`, `filter`, `split` or `group` meet a `RelationBag`, their
function is *traced*: run once, over columns, on a symbolic row, so that
arithmetic, comparisons, `if`, records and vectors build per-row expression
nodes (`fuzzpy.engines.symops`) instead of numpy columns. `size`, `sum`,
`vsum` and `counts` of a relation are computed by the engine
(`fuzzpy.engines.execute`) and come back as the exact values the in-memory
interpreter would compute.

What cannot be traced (a row function with `exp` or `log`, a list built per
row, a `case` on per-row lists, more than 256 per-row branches, a `def rec`
called per row...) is a `NotCompilable`: the
relation's rows are fetched into memory and that primitive, and everything
after it on those rows, runs in the in-memory interpreter, with a warning
on stderr (it says which primitive and why, never anything about the data).
A trace fails exactly where the in-memory column evaluation may fail, so
the fallback keeps the in-memory semantics.

`subsample` of a relation keeps each row whose keyed hash falls below the
rate (`fuzzpy.engines.subsample`), with a fresh secret for every draw.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.engines.execute import Executor
from fuzzpy.engines.plan import Aggregate, Relation, leaves
from fuzzpy.engines.rows import NotCompilable, Sym, SymSum, SymVector, is_symbolic
from fuzzpy.engines.subsample import draw_secret, keep_threshold
from fuzzpy.language import syntax as S
from fuzzpy.runtime import exact as X
from fuzzpy.runtime import rowops as R
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.interpreter import COLUMNS, Interpreter, _Deferred
from fuzzpy.runtime.operations import binary
from fuzzpy.runtime.values import (
    Exhausted,
    Function,
    Fuzzy,
    Inl,
    Inr,
    NotVectorisable,
    Record,
    RuntimeFailure,
    Thunk,
    Transient,
    Value,
    WithPair,
    force,
)
from fuzzpy.runtime.vectors import VectorColumn, is_exact_vector, labelled, vector
from fuzzpy.support.lazy import is_instance, lazy

np = lazy("numpy")

if TYPE_CHECKING:
    from fuzzpy.runtime.vectors import Vector

MAX_TRACED_BRANCHES = 256
#: A relation whose row and predicates need more per-row operations than this
#: is evaluated in memory from there on (the query's text and the engine's
#: plan grow with it: ~150 characters of SQL per operation). It depends only
#: on the program and the width of the rows (public), never on the data.
MAX_QUERY_NODES = 20_000
#: `group["a", ...]` with more categories runs in memory (one SQL `CASE` arm per category)
MAX_SQL_CATEGORIES = 4096
_TRACE_FAILURES = (NotCompilable, NotVectorisable, Exhausted, RuntimeFailure, TypeError, ValueError,
                   AttributeError, IndexError, RecursionError, KeyError)


class RelationBag(Bag):
    """A bag whose rows are in an engine. Anything that reads its rows in
    Python (a primitive the engine does not handle) gets them fetched once."""

    def __init__(self, interp: EngineInterpreter, relation: Relation) -> None:
        self.interp = interp
        self.relation = relation
        self.selection = None
        self._size = None
        self._view = None
        self._rows: Bag | None = None

    def in_memory(self, what: str, reason: str) -> Bag:
        if self.interp._collecting:
            raise _Stop
        if self._rows is None:
            self.interp.warn_once(
                f"engine:{what}:{reason}",
                f"warning: `{what}` cannot run in {self.interp.executor.backend.name} ({reason}); "
                "its rows are evaluated by the in-memory interpreter",
            )
            self._rows = self.interp.executor.materialise(self.relation)
        return self._rows

    @property
    def source(self):  # type: ignore[override]
        return self.in_memory("a bag operation", "it reads the rows in Python").source

    def __len__(self) -> int:
        return self.interp.executor.count(self.relation)

    def view(self):  # type: ignore[override]
        return self.in_memory("a bag operation", "it reads the rows in Python").view()

    def where(self, keep: np.ndarray) -> Bag:
        return self.in_memory("a bag operation", "it reads the rows in Python").where(keep)

    def pick(self, indices: np.ndarray) -> Bag:
        return self.in_memory("a bag operation", "it reads the rows in Python").pick(indices)

    def rows(self) -> Iterator[Value]:
        return self.in_memory("a bag operation", "it reads the rows in Python").rows()

    def __repr__(self) -> str:
        return "RelationBag()"


class RelationGroups(Sequence[Bag]):
    """`group[k] key db` of a relation: k buckets, counted by one query."""

    def __init__(self, interp: EngineInterpreter, relation: Relation, key: Sym, k: int,
                 labels: tuple[str, ...] | None = None) -> None:
        self.interp, self.relation, self.key, self.k = interp, relation, key.node, k
        #: the categories of `group["a", ...]` (None for `group[k]`), as `LazyGroups.labels`
        self.labels = labels
        # Counted with the next query (its rows outside 0..k-1 are the owner's audit).
        interp.executor.pending.append(interp.executor.counts_aggregate(relation, self.key, k, labels))

    def sizes(self) -> np.ndarray:
        return self.interp.executor.counts(self.relation, self.key, self.k, self.labels)

    def __len__(self) -> int:
        return self.k

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.k))]
        j = index + self.k if index < 0 else index
        if not 0 <= j < self.k:
            raise IndexError(index)
        return RelationBag(self.interp, self.interp.executor.bucket(self.relation, self.key, self.k, j, self.labels))


class EngineInterpreter(Interpreter):
    """The interpreter with `RelationBag`s pushed into an engine."""

    def __init__(self, program: S.Program, source, warn: Callable[[str], None] | None, executor: Executor,
                 checked=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(program, source, warn, checked)
        self.executor = executor
        self.ops = executor.ops
        self._collecting = False
        #: outside bindings a speculation needed, computed for it alone (`speculative_value`)
        self._speculated: dict[int, Value] = {}
        self._branches_left = MAX_TRACED_BRANCHES
        self._tracing = 0
        self._wrap_builtins()

    # ------------------------------------------------------------ bag primitives

    def _wrap_builtins(self) -> None:
        b = self._builtins
        plain = {name: b[name].apply for name in b}

        def wrap(name: str, apply: Callable[..., Value]) -> None:
            b[name] = Function(name, b[name].arity, apply)

        wrap("map", lambda f, db: self._map(f, db) if isinstance(db, RelationBag) else plain["map"](f, db))
        wrap("filter", lambda f, db: self._filter(f, db) if isinstance(db, RelationBag) else plain["filter"](f, db))
        wrap("split", lambda f, db: self._split(f, db) if isinstance(db, RelationBag) else plain["split"](f, db))
        wrap("size", lambda db: self._size(db) if isinstance(db, RelationBag) else plain["size"](db))
        wrap("counts", lambda g: self._counts(g) if isinstance(g, RelationGroups) else plain["counts"](g))
        wrap("tabulate", lambda ts, f: self._tabulate(ts, f, plain["tabulate"]))
        wrap("dot", lambda u, v: self.ops.dot(u, v) if _any_symbolic(u, v) else plain["dot"](u, v))
        wrap("abs", lambda x: self.ops.absolute(x) if is_symbolic(x) else plain["abs"](x))
        wrap("not", lambda x: self.ops.logical_not(x) if is_symbolic(x) else plain["not"](x))
        wrap("min", lambda x, y: self.ops.pick("min", x, y) if _any_symbolic(x, y) else plain["min"](x, y))
        wrap("max", lambda x, y: self.ops.pick("max", x, y) if _any_symbolic(x, y) else plain["max"](x, y))
        wrap("len", lambda v: self.ops.length(v) if _any_symbolic(v) else plain["len"](v))
        for name in ("sigmoid", "exp", "log", "sqrt", "floor"):
            wrap(name, self._math(name, plain[name]))

    def _math(self, name: str, plain: Callable[[Value], Value]) -> Callable[[Value], Value]:
        return lambda x: self.ops.math(name, x) if is_symbolic(x) else plain(x)

    def trace(self, func: Value, relation: Relation, what: str) -> object:
        """The symbolic result of `func` on the relation's row (a row shape)."""
        self._branches_left = MAX_TRACED_BRANCHES
        self._tracing += 1
        try:
            with self.per_row(COLUMNS, None), R.quiet_floats():
                shape = self._shape(func(relation.row))
            _not_too_large(leaves(shape) + list(relation.predicates))
            return shape
        except _TRACE_FAILURES as exc:
            raise NotCompilable(_reason(exc)) from None
        finally:
            self._tracing -= 1

    def _lockstep_call(self, decl, call, args):  # type: ignore[no-untyped-def]
        """A `def rec` call per row: each row has its own budget of calls,
        shared by all its recursive calls (docs/semantics.md), which a trace
        does not model: such a function runs in memory."""
        if self._tracing:
            raise NotCompilable(f"the recursive function `{decl.name}` called per row")
        return super()._lockstep_call(decl, call, args)

    def _predicate(self, func: Value, relation: Relation, what: str) -> Sym:
        shape = self.trace(func, relation, what)
        if not (isinstance(shape, Sym) and shape.node.kind == "bool"):
            raise NotCompilable(f"the function given to `{what}` does not return a bool per row")
        return shape

    def _map(self, f: Value, db: RelationBag) -> Bag:
        try:
            return RelationBag(self, db.relation.mapped(self.trace(f, db.relation, "map")))
        except NotCompilable as exc:
            return self._builtins_plain("map")(f, db.in_memory("map", str(exc)))

    def _filter(self, f: Value, db: RelationBag) -> Bag:
        try:
            return RelationBag(self, db.relation.where(self._predicate(f, db.relation, "filter").node))
        except NotCompilable as exc:
            return self._builtins_plain("filter")(f, db.in_memory("filter", str(exc)))

    def _split(self, f: Value, db: RelationBag) -> tuple[Bag, Bag]:
        try:
            keep = self._predicate(f, db.relation, "split").node
        except NotCompilable as exc:
            return self._builtins_plain("split")(f, db.in_memory("split", str(exc)))
        other = self.executor.nodes.make("not", (keep,), "bool")
        return RelationBag(self, db.relation.where(keep)), RelationBag(self, db.relation.where(other))

    def _size(self, db: RelationBag) -> int:
        return self.executor.count(db.relation)

    def _counts(self, groups: RelationGroups) -> Vector:
        return labelled(vector(groups.sizes()), groups.labels)

    def _builtins_plain(self, name: str) -> Callable[..., Value]:
        from fuzzpy.runtime.primitives import builtin_functions

        return builtin_functions(self)[name].apply

    # ------------------------------------------------------------ bracketed primitives

    def _eval_Prim(self, expr: S.Prim, env: dict) -> Value:
        func = super()._eval_Prim(expr, env)
        if expr.name not in ("sum", "vsum", "group", "clip", "clip2", "expmech", "ptr_median", "ptr_quantile", "smooth_median", "smooth_quantile", "wishart", "join"):
            return func
        categories = self.group_categories(expr)
        if categories is not None:
            return Function(expr.name, func.arity, lambda f, db: self._group_categories(categories, func.apply, f, db))
        args = [self.static(a, env) for a in expr.static_args]
        handler = getattr(self, "_prim_" + expr.name)
        return Function(expr.name, func.arity, lambda *xs: handler(args, func.apply, *xs), lazy=func.lazy)

    def _prim_sum(self, args: list[Fraction], plain: Function, db: Value) -> Value:
        if isinstance(db, RelationBag):
            row = db.relation.row
            if isinstance(row, Sym) and row.node.kind in ("int", "num", "bool"):
                lo, hi = args
                if lo <= hi:
                    return self.executor.clamped_sum(db.relation, row.node, lo, hi)
            db = db.in_memory("sum", "its rows are not numbers")
        return plain(db)

    def _prim_ptr_median(self, args: list[Fraction], plain: Function, db: Value, name: str = "ptr_median") -> Value:
        """The engine computes the numbers (one column, filtered and mapped in
        SQL) and sends them; the distance, the test and the release are the
        in-memory interpreter's own (`runtime.ptr`), on the same values."""
        if isinstance(db, RelationBag):
            row = db.relation.row
            if isinstance(row, Sym) and row.node.kind in ("int", "num", "bool"):
                if self._collecting:  # a speculation batches aggregates; it fetches no rows
                    raise _Stop
                db = self.executor.materialise(db.relation)
            else:
                db = db.in_memory(name, "its rows are not numbers")
        return plain(db)

    def _prim_ptr_quantile(self, args: list[Fraction], plain: Function, db: Value) -> Value:
        """As `_prim_ptr_median`: the engine sends the numbers, `runtime.ptr` does the rest."""
        return self._prim_ptr_median(args, plain, db, "ptr_quantile")

    def _prim_smooth_quantile(self, args: list[Fraction], plain: Function, db: Value) -> Value:
        """As `_prim_ptr_median`: the engine sends the numbers, `runtime.smooth` does the rest."""
        return self._prim_ptr_median(args, plain, db, "smooth_quantile")

    def _prim_smooth_median(self, args: list[Fraction], plain: Function, db: Value) -> Value:
        return self._prim_ptr_median(args, plain, db, "smooth_median")

    def _prim_wishart(self, args: list[Fraction], plain: Function, db: Value) -> Value:
        """The rows are read into memory, where X^T X of the clipped rows is
        summed in exact integers and the draws made (`runtime.wishart`): the
        same code, the same values, on every engine; the warning names the
        primitive, never the data."""
        if isinstance(db, RelationBag):
            db = db.in_memory("wishart", "X^T X of the clipped rows is summed exactly in the in-memory interpreter")
        return plain(db)

    def _prim_vsum(self, args: list[Fraction], plain: Function, db: Value) -> Value:
        if isinstance(db, RelationBag):
            row = db.relation.row
            if isinstance(row, SymVector):
                aggregate = (self.executor.vsum_aggregate(db.relation, row.entries, args[0])
                             if row.entries and args[0] != 0 else None)
                try:
                    if aggregate is not None:
                        _not_too_large(list(aggregate.value) + list(db.relation.predicates))
                except NotCompilable as exc:
                    db = db.in_memory("vsum", str(exc))
                else:
                    return vector(self.executor.vector_sum(db.relation, row.entries, args[0]))
            else:
                db = db.in_memory("vsum", "its rows are not vectors")
        return plain(db)

    def _prim_group(self, args: list[Fraction], plain: Function, f: Value, db: Value) -> Value:
        if isinstance(db, RelationBag):
            try:
                key = self.trace(f, db.relation, "group")
                if not (isinstance(key, Sym) and key.node.kind in ("int", "num", "bool")):
                    raise NotCompilable("the key is not a number per row")
                return RelationGroups(self, db.relation, key, int(args[0]))
            except NotCompilable as exc:
                db = db.in_memory("group", str(exc))
        return plain(f, db)

    def _prim_join(self, args: list[Fraction], plain: Function, f: Value, g: Value, db1: Value, db2: Value) -> Value:
        """`join[k]` of relations: both sides' rows are read into memory and
        joined there (`fuzzpy.runtime.joins`), so that the truncation to k
        rows per key, in the canonical order of row values, is the same code
        on every engine; the warning names the primitive, never the data."""
        reason = "its truncation to k rows per key runs in the in-memory interpreter"
        db1 = db1.in_memory("join", reason) if isinstance(db1, RelationBag) else db1
        db2 = db2.in_memory("join", reason) if isinstance(db2, RelationBag) else db2
        return plain(f, g, db1, db2)

    def _group_categories(self, categories: tuple[str, ...], plain: Callable[..., Value], f: Value, db: Value) -> Value:
        """`group["a", ...]` of a relation: the string key mapped to its
        category's position in SQL (`sql.Emitter._group_key`), then counted
        as `group[k]` is."""
        if isinstance(db, RelationBag):
            try:
                key = self.trace(f, db.relation, "group")
                if not (isinstance(key, Sym) and key.node.kind == "string"):
                    raise NotCompilable("the key is not a string per row")
                if len(categories) > MAX_SQL_CATEGORIES:
                    raise NotCompilable(f"more than {MAX_SQL_CATEGORIES} categories")
                return RelationGroups(self, db.relation, key, len(categories), categories)
            except NotCompilable as exc:
                db = db.in_memory("group", str(exc))
        return plain(f, db)

    def subsample_bag(self, bag: Value, q: Fraction) -> Value:
        """`subsample[q]` of a relation: its rows whose keyed hash is below
        the rate, a fresh secret for every draw (`fuzzpy.engines.subsample`);
        drawn, as in memory, when the body first reads the sample."""
        if not isinstance(bag, RelationBag):
            return super().subsample_bag(bag, q)
        relation = bag.relation
        row_id = self.executor.nodes.column(relation.scan.row_id, "int")
        keep = self.executor.nodes.make("keep", (row_id,), "bool", (draw_secret(self.source), keep_threshold(q)))
        return RelationBag(self, relation.where(keep))

    def fixed_sample_bag(self, bag: Value, size: int, replacement: bool) -> Value:
        """`choose[m]` / `bootstrap[m]` of a relation: its rows are read into
        the in-memory interpreter, which draws the sample exactly (an
        in-engine keyed sample is not built: docs/semantics.md)."""
        if isinstance(bag, RelationBag):
            name = "bootstrap" if replacement else "choose"
            bag = bag.in_memory(name, "its sample is drawn exactly in Python")
        return super().fixed_sample_bag(bag, size, replacement)

    def progress(self, message: str) -> None:
        self.executor.progress(message)

    def _prim_clip(self, args: list[Fraction], plain: Function, x: Value) -> Value:
        return self.ops.clip(x, *args) if is_symbolic(x) else plain(x)

    def _prim_clip2(self, args: list[Fraction], plain: Function, v: Value) -> Value:
        if is_symbolic(v) or (isinstance(v, list) and any(is_symbolic(i) for i in v)):
            return self.ops.clip_l2(v, X.to_float(args[0]))
        return plain(v)

    def _prim_expmech(self, args: list[Fraction], plain: Function, cands: Value, score: Value, db: Value) -> Value:
        cands, score = force(cands), force(score)  # as `primitives._expmech` (the data stays a thunk)
        if isinstance(cands, (list, tuple)):
            self.prefetch([lambda c=c: score(c)(db) for c in cands])
        return plain(cands, score, db)

    # ------------------------------------------------------------ batching

    def _tabulate(self, ts: Value, f: Value, plain: Callable[..., Value]) -> Value:
        items = list(ts) if isinstance(ts, (list, tuple)) or is_exact_vector(ts) else None
        if items is not None:
            self.prefetch([lambda t=t: f(t) for t in items])
        return plain(ts, f)

    def prefetch(self, speculations: list[Callable[[], object]]) -> None:
        """Evaluate each speculation with every aggregate of a relation
        deferred, so that the aggregates they ask for are computed together
        by the next query, which the real evaluation then finds cached.

        A speculation has no effect but those requests: it draws no
        randomness (the source refuses), it may not keep a value in a
        binding made outside it (`_GuardedThunk`, `_lookup`), the recursion budget it uses
        is given back, and a row function that would fall back to memory
        stops it instead. It stops at its first error, or at the first use of
        a deferred aggregate's value."""
        if self._collecting or len(speculations) < 2:
            return
        saved = self.macro_calls_left, self.source
        self._collecting, self.executor.deferring, self.source = True, True, _NoRandomness()
        try:
            for speculation in speculations:
                with contextlib.suppress(Exception):  # a stopped speculation only loses its batch
                    speculation()
        finally:
            self._collecting, self.executor.deferring = False, False
            self.macro_calls_left, self.source = saved
            self._speculated = {}

    def speculative_value(self, thunk: Thunk) -> Value:
        """An outside binding's value for the speculations of one `prefetch`
        (the bag a library definition was passed, say), computed afresh and
        kept only for them: never in the binding, whose value would then
        hold aggregates deferred by the speculation."""
        key = id(thunk)
        if key not in self._speculated:
            value = thunk.recompute()
            self._speculated[key] = value.value if isinstance(value, Transient) else value
        return self._speculated[key]

    def _eval_Block(self, expr: S.Block, env: dict) -> Value:
        if not any(isinstance(s, S.SampleStmt) for s in expr.stmts):
            return self.eval(expr.result, self._run_statements(expr.stmts, env))
        from fuzzpy.runtime.interpreter import sample

        def draw() -> Value:
            ahead = _independent_samples(expr)
            self.prefetch([lambda e=e: self.eval(e, env) for e in ahead])
            inner = self._run_statements(expr.stmts, env)
            return sample(self.eval(expr.result, inner))

        return Fuzzy(draw)

    def delay(self, expr: S.Expr, env: dict) -> Value:
        value = super().delay(expr, env)
        if type(value) is Thunk:
            return _GuardedThunk(self, value)
        return value

    # ------------------------------------------------------------ symbolic evaluation

    def _eval_Binary(self, expr: S.Binary, env: dict) -> Value:
        op = expr.op
        if op in ("&&", "||"):
            return self._logical(op, expr, env)
        if op == "*" and self._zero_product(expr):
            return super()._eval_Binary(expr, env)  # the other side is not evaluated: the in-memory rule
        left, right = self.eval(expr.left, env), self.eval(expr.right, env)
        if _any_symbolic(left, right):
            return self.ops.binary(op, left, right)
        return binary(op, left, right)

    def _logical(self, op: str, expr: S.Binary, env: dict) -> Value:
        left = self.eval(expr.left, env)
        if is_symbolic(left):
            return self.ops.logical(op, left, self.eval(expr.right, env))
        if is_instance(left, "numpy", "ndarray"):  # over columns: the in-memory rule (the right side on the rows that need it)
            return super()._logical(op, S.Binary(op, _Quoted(left), expr.right, expr.span), env)
        if (op == "&&" and not left) or (op == "||" and left):
            return bool(left)
        right = self.eval(expr.right, env)
        return right if is_instance(right, "numpy", "ndarray") or is_symbolic(right) else bool(right)

    def _eval_Unary(self, expr: S.Unary, env: dict) -> Value:
        if self.mode == COLUMNS:
            value = self.eval(expr.operand, env)
            if is_symbolic(value) or (isinstance(value, list) and _any_symbolic(*value)):
                return self.ops.negate(value) if expr.op == "-" else self.ops.logical_not(value)
            return super()._eval_Unary(S.Unary(expr.op, _Quoted(value)), env)
        return super()._eval_Unary(expr, env)

    def _eval__Quoted(self, expr: _Quoted, env: dict) -> Value:
        return expr.value

    def _eval_If(self, expr: S.If, env: dict) -> Value:
        cond = self.eval(expr.cond, env)
        if is_symbolic(cond):
            self._spend_split()
            then, orelse = self.eval(expr.then, env), self.eval(expr.orelse, env)
            return self.ops.select(cond, then, orelse)
        return super()._eval_If(S.If(_Quoted(cond), expr.then, expr.orelse, expr.span), env)

    def _spend_split(self) -> None:
        """Both sides of a per-row choice are traced (per-row operations are
        total, so tracing a side no row takes cannot fail where memory would
        not); a bound on them keeps a per-row recursion from unrolling
        forever: past it, the function runs in memory."""
        if self._branches_left <= 0:
            raise NotCompilable(f"more than {MAX_TRACED_BRANCHES} per-row branches")
        self._branches_left -= 1

    def _eval_ListLit(self, expr: S.ListLit, env: dict) -> Value:
        items = [self.eval(item, env) for item in expr.items]
        if _any_symbolic(*items):
            return self.ops.vector(items)
        return super()._eval_ListLit(S.ListLit(tuple(_Quoted(i) for i in items)), env)

    def _eval_CaseSum(self, expr: S.CaseSum, env: dict) -> Value:
        value = self.eval(expr.scrutinee, env)
        if isinstance(value, SymSum):
            if value.left is None or value.right is None:
                raise NotCompilable("a `case` on a sum with one side never taken")
            self._spend_split()
            left = self.eval(expr.left_body, {**env, expr.left_var: value.left})
            right = self.eval(expr.right_body, {**env, expr.right_var: value.right})
            return self.ops.select(Sym(value.is_left), left, right)
        if is_symbolic(value):
            raise NotCompilable("a `case` on a per-row value that is not a sum")
        return super()._eval_CaseSum(S.CaseSum(_Quoted(value), expr.left_var, expr.left_body, expr.right_var,
                                               expr.right_body), env)

    def _eval_CaseList(self, expr: S.CaseList, env: dict) -> Value:
        value = self.eval(expr.scrutinee, env)
        if is_symbolic(value) or (isinstance(value, list) and _any_symbolic(*value)):
            raise NotCompilable("a `case` on a per-row list")
        return super()._eval_CaseList(S.CaseList(_Quoted(value), *_case_list_rest(expr)), env)

    def _eval_Index(self, expr: S.Index, env: dict) -> Value:
        base, index = self.eval(expr.base, env), self.eval(expr.index, env)
        if _any_symbolic(base, index):
            raise NotCompilable("indexing a per-row value")
        return super()._eval_Index(S.Index(_Quoted(base), _Quoted(index)), env)

    def _eval_Cons(self, expr: S.Cons, env: dict) -> Value:
        head, tail = self.eval(expr.head, env), self.eval(expr.tail, env)
        if is_symbolic(head) or is_symbolic(tail) or (isinstance(tail, list) and _any_symbolic(*tail)):
            raise NotCompilable("a list built per row")
        return [head, *list(tail)]

    def _lookup(self, name: str, env: dict) -> Value:
        deferred = self.globals.get(name) if self._collecting and name not in env else None
        if isinstance(deferred, _Deferred) and not deferred._done:
            raise _Stop
        return super()._lookup(name, env)

    def call_definition(self, name: str, arguments: list[Value], frame=None) -> Value:  # type: ignore[no-untyped-def]
        from fuzzpy.engines.engine import ScanBag
        from fuzzpy.engines.scan import scan_row

        relations = [RelationBag(self, Relation(a.scan, (), scan_row(a.scan, self.executor.nodes)))
                     if isinstance(a, ScanBag) else a for a in arguments]
        value = super().call_definition(name, relations, frame)
        self.executor.flush()
        for finish in self.executor.on_finish:
            finish()
        return value

    # ------------------------------------------------------------ shapes

    def _shape(self, value: Value) -> object:
        """A traced result as a row (`bag.as_column` over symbols)."""
        n = self.executor.nodes
        if isinstance(value, (Sym, SymVector)):
            return value
        if isinstance(value, (SymSum, VectorColumn)):
            raise NotCompilable("a sum value per row")
        if is_exact_vector(value):
            return SymVector(self.ops.as_vector(value))
        if isinstance(value, Record):
            return Record({k: self._shape(v) for k, v in value.fields.items()})
        if isinstance(value, tuple):
            return tuple(self._shape(v) for v in value)
        if isinstance(value, list):
            parts = [self._shape(v) for v in value]
            if not all(isinstance(p, Sym) and p.node.kind in ("int", "num", "bool") for p in parts):
                raise NotCompilable("a list per row")
            return SymVector(tuple(n.double(p.node) for p in parts))
        if is_instance(value, "numpy", "ndarray") and value.ndim == 0:
            return Sym(n.literal(value.item()))
        if isinstance(value, (bool, int, Fraction, str)) or is_instance(value, "numpy", "generic"):
            return Sym(n.literal(value))
        raise NotCompilable(f"a per-row result of kind {type(value).__name__}")


class _Quoted:
    """An already evaluated value passed back to the base interpreter."""

    def __init__(self, value: Value) -> None:
        self.value = value


def _case_list_rest(expr: S.CaseList) -> tuple:
    return (expr.nil_body, expr.head_var, expr.tail_var, expr.cons_body)


def _any_symbolic(*values: Value) -> bool:
    for v in values:
        if is_symbolic(v):
            return True
        if isinstance(v, (list, tuple)) and _any_symbolic(*v):
            return True
        if isinstance(v, Record) and _any_symbolic(*v.fields.values()):
            return True  # a record of columns: `r == {...}` is per row, never Python's `==` of two records
        if isinstance(v, (Inl, Inr)) and _any_symbolic(v.value):
            return True
        if isinstance(v, WithPair) and _any_symbolic(v.left, v.right):
            return True
    return False


def _not_too_large(roots: list) -> None:
    """`MAX_QUERY_NODES`: the per-row operations a query would compute."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.id not in seen:
            seen.add(node.id)
            if len(seen) > MAX_QUERY_NODES:
                raise NotCompilable(f"its rows need more than {MAX_QUERY_NODES} operations in one query")
            stack.extend(node.args)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, NotCompilable) and str(exc):
        return str(exc)
    if isinstance(exc, RuntimeFailure):
        return exc.message
    return "the function does not run over whole columns"


class _Stop(Exception):
    """Ends a speculation (`EngineInterpreter.prefetch`)."""


class _NoRandomness:
    """The source of randomness while speculating: none may be drawn."""

    private = True

    def __getattr__(self, name: str) -> object:
        raise _Stop


class _GuardedThunk(Thunk):
    """A call-by-need binding that keeps no value a speculation computed
    unless the speculation made it (so nothing outside it caches a deferred
    value): forced by one, it is computed for the speculations alone."""

    __slots__ = ("_interp", "_inner", "_speculative")

    def __init__(self, interp: EngineInterpreter, inner: Thunk) -> None:
        super().__init__(inner.force)
        self._interp = interp
        self._inner = inner
        self._speculative = interp._collecting

    def force(self) -> Value:
        # the inner thunk keeps its value or not (a value computed for one row
        # is not kept: `values.Transient`); this wrapper never keeps one itself
        if not self._inner._done and self._interp._collecting and not self._speculative:
            return self._interp.speculative_value(self._inner)
        return self._inner.force()


def _independent_samples(block: S.Block) -> list[S.Expr]:
    """The `sample` statements of a block whose expressions mention nothing
    the block binds before them: they can be evaluated ahead."""
    bound: set[str] = set()
    found = []
    for stmt in block.stmts:
        if isinstance(stmt, S.SampleStmt) and not (_free_names(stmt.expr) & bound):
            found.append(stmt.expr)
        names = getattr(stmt, "names", None) or [getattr(stmt, "name", None)]
        bound.update(n for n in names if n)
    return found


def _free_names(expr: object) -> set[str]:
    """Every variable name an expression mentions (an over-approximation of
    its free variables, which is what independence needs)."""
    names: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, S.Var):
            names.add(node.name)
        elif isinstance(node, S.Call):
            names.add(node.func)
        if hasattr(node, "__dataclass_fields__"):
            for field in node.__dataclass_fields__:
                child = getattr(node, field)
                if isinstance(child, tuple):
                    stack.extend(c for c in child if hasattr(c, "__dataclass_fields__") or isinstance(c, tuple))
                    for c in child:
                        if isinstance(c, tuple):
                            stack.extend(x for x in c if hasattr(x, "__dataclass_fields__"))
                elif hasattr(child, "__dataclass_fields__"):
                    stack.append(child)
    return names


__all__ = ["EngineInterpreter", "RelationBag", "RelationGroups", "Aggregate", "Inl", "Inr"]
