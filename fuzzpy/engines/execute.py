"""Aggregates of relations, computed in an engine and returned exactly.

`Executor` turns `Aggregate`s into SQL (`fuzzpy.engines.sql`), runs them on a
`Backend`, and decodes the integers that come back into the exact values the
in-memory interpreter computes (`fuzzpy.runtime.aggregates`): the same grid,
the same units per row, the same integer total. Aggregates requested
together (a batch: see `prefetch` in `fuzzpy.engines.trace`) over one scan
run as one query; results are cached by their plan.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from fuzzpy.engines.cuts import Cells, cell_sql, plan_cells
from fuzzpy.engines.plan import Aggregate, Relation, leaves
from fuzzpy.engines.rows import Node, Nodes, Sym, SymVector
from fuzzpy.engines.sql import (
    Dialect,
    Emitter,
    Layers,
    category_position,
    key_in_range,
    plan_layers,
    with_layers,
)
from fuzzpy.engines.symops import SymOps
from fuzzpy.runtime.aggregates import (
    SUM_UNIT_BITS,
    VSUM_UNIT_BITS,
    _enforce_norm,
    _scale_factors,
    _trunc_units,
    grid_exponent,
)
from fuzzpy.runtime.bag import _GROUP_AUDIT, Bag
from fuzzpy.runtime.exact import DBL_MAX
from fuzzpy.runtime.values import Record
from fuzzpy.support.lazy import lazy

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)
np = lazy("numpy")

_SCALARS = ("count", "sum", "vsum")


class Backend(Protocol):
    dialect: Dialect
    name: str

    def rows(self, sql: str, meanwhile: Callable[[], object] | None = None) -> list[tuple]: ...

    def arrow(self, sql: str) -> pa.Table: ...


class _Pending:
    """The value of an aggregate a speculation asked for: any use of it is
    an error, which ends the speculation."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<pending aggregate>"


PENDING = _Pending()


class Executor:
    """Runs the aggregates of one program run on one backend."""

    def __init__(self, backend: Backend, progress: Callable[[str], None] | None = None) -> None:
        self.backend = backend
        self.nodes = Nodes()
        self.ops = SymOps(self.nodes)
        self.progress = progress or (lambda message: None)
        self.pending: list[Aggregate] = []
        self._cache: dict[tuple, object] = {}
        self.queries = 0
        #: While the interpreter speculates (`EngineInterpreter.prefetch`),
        #: requests are only recorded, and answered with `PENDING`.
        self.deferring = False
        #: Called when the run's value is computed (before it is released).
        self.on_finish: list[Callable[[], None]] = []

    # ------------------------------------------------------------ requests

    def count(self, relation: Relation) -> int:
        return self._get(Aggregate("count", relation))

    def clamped_sum(self, relation: Relation, value: Node, lo: Fraction, hi: Fraction) -> Fraction:
        if max(abs(lo), abs(hi)) == 0:
            return Fraction(0)
        return self._get(self.sum_aggregate(relation, value, lo, hi))

    def sum_aggregate(self, relation: Relation, value: Node, lo: Fraction, hi: Fraction) -> Aggregate:
        e = grid_exponent(max(abs(lo), abs(hi)), SUM_UNIT_BITS)
        low, high = float(_trunc_units(lo, e)), float(_trunc_units(hi, e))
        units = self.nodes.make("units", (self.nodes.double(value),), "int", (_scale_factors(e), low, high))
        return Aggregate("sum", relation, (units,), (lo, hi))

    def vector_sum(self, relation: Relation, entries: tuple[Node, ...], c: Fraction) -> list[Fraction]:
        if c == 0 or not entries:
            return [Fraction(0)] * len(entries)
        return self._get(self.vsum_aggregate(relation, entries, c))

    def vsum_aggregate(self, relation: Relation, entries: tuple[Node, ...], c: Fraction) -> Aggregate:
        e = grid_exponent(c, VSUM_UNIT_BITS)
        target = float(min(c, Fraction(DBL_MAX))) * (1 - 2.0**-30)  # as `aggregates.vector_sum`
        clipped = self.ops.clip_l2(SymVector(entries), target).entries
        param = (_scale_factors(e), -(2.0**62), 2.0**62)
        units = tuple(self.nodes.make("units", (x,), "int", param) for x in clipped)
        return Aggregate("vsum", relation, units, (c,))

    def counts(self, relation: Relation, key: Node, k: int, labels: tuple[str, ...] | None = None) -> np.ndarray:
        return self._get(self.counts_aggregate(relation, key, k, labels))

    def counts_aggregate(self, relation: Relation, key: Node, k: int, labels: tuple[str, ...] | None = None) -> Aggregate:
        """Bucket sizes of `group[k]`, or of `group["a", ...]` when ``labels``
        holds its categories (the key node is then a string)."""
        group = self.nodes.make("groupkey", (key,), "int", k if labels is None else labels)
        return Aggregate("counts", relation, (group,), (Fraction(k),))

    def bucket(self, relation: Relation, key: Node, k: int, j: int, labels: tuple[str, ...] | None = None) -> Relation:
        group = self.nodes.make("groupkey", (key,), "int", k if labels is None else labels)
        return relation.where(self.nodes.make("cmp", (group, self.nodes.literal(j)), "bool", "=="))

    def flush(self) -> None:
        """Run what was prefetched and never asked for (the audit of `group`)."""
        waiting = [a for a in self.pending if a.key() not in self._cache and a.kind == "counts"]
        self.pending = []
        if waiting:
            self._run(waiting)

    def _get(self, aggregate: Aggregate) -> object:
        key = aggregate.key()
        if self.deferring:
            if key not in self._cache:
                self.pending.append(aggregate)
            return PENDING
        if key not in self._cache:
            batch = [aggregate] + [a for a in self.pending if a.key() not in self._cache and a.key() != key]
            self.pending = []
            self._run(batch)
        return self._cache[key]

    # ------------------------------------------------------------ running

    def _run(self, batch: list[Aggregate]) -> None:
        unique: dict[tuple, Aggregate] = {}
        for aggregate in batch:
            unique.setdefault(aggregate.key(), aggregate)
        by_scan: dict[int, list[Aggregate]] = {}
        for aggregate in unique.values():
            by_scan.setdefault(id(aggregate.relation.scan), []).append(aggregate)
        for aggregates in by_scan.values():
            scalars = [a for a in aggregates if a.kind in _SCALARS]
            if scalars:
                self._run_scalars(scalars)
            for aggregate in aggregates:
                if aggregate.kind == "counts":
                    self._run_counts(aggregate)

    def _query(self, sql: str, what: str, meanwhile: Callable[[], object] | None = None) -> list[tuple]:
        self.queries += 1
        started = time.monotonic()
        self.progress(f"{self.backend.name}: computing {what}...")
        rows = self.backend.rows(sql, meanwhile)
        self.progress(f"{self.backend.name}: {what} done in {time.monotonic() - started:.1f} s")
        return rows

    def _emitter(self, relation: Relation, roots: list[Node], shared: list[Node] | None = None,
                 filters: list[Node] | None = None) -> tuple[Emitter, str, str, set[int]]:
        """``shared``: roots the query writes more than once (named once).
        ``filters``: predicates every row the query reads must meet; those
        whose text reads only the scan's columns (the subsample's hash test,
        a `filter` on a column) are applied to the scan itself, before any
        layer, and their ids returned (the caller leaves them out of its
        WHERE). Otherwise DuckDB computes every layer (a gradient per row)
        for all the rows and filters after; the rows and values are the same
        either way (the layers are per-row functions), as in memory, where
        `subsample` samples before the map."""
        d, scan = self.backend.dialect, relation.scan
        columns = {name: name for name, _ in scan.columns} | {scan.row_id: scan.row_id}
        shared = shared or []
        early = _scan_level(filters or [], plan_layers(roots, d, shared))
        applied = {p.id for p in early}
        layers = plan_layers([r for r in roots if r.id not in applied], d, shared)
        emitter = Emitter(d, layers, columns)
        table = scan.table
        if early:
            inline = Emitter(d, plan_layers([], d), columns)
            table = f"(SELECT * FROM {scan.table} AS _fz_scan WHERE {_conjunction([inline.expr(p) for p in early])})"
        prefix, source = with_layers(emitter, table)
        # aliased: Spark's parser reads `FROM t WHERE (c)` as t aliased `WHERE` with column list (c)
        return emitter, prefix, f"{source} AS _fz_rows", applied

    def _run_scalars(self, aggregates: list[Aggregate]) -> None:
        families, rest = _threshold_families(aggregates)
        for family in families:
            self._run_thresholds(family)
        if rest:
            self._run_filtered(rest)

    def _run_thresholds(self, family: list[tuple[Aggregate, _Threshold]]) -> None:
        """Counts of one relation cut by comparisons of one per-row value
        with many constants (an exponential mechanism's candidates: `split
        (fun p -> p.x <= c)` for every c), from ONE grouped pass instead of
        two filtered counts per candidate: each row gets the index of the
        first of the ordered tests ``x < t0, x <= t0, x < t1, x <= t1, ...``
        it passes (a binary search written as nested `CASE`s, with the same
        comparison text as the filters), and every count is a cumulative
        sum of those buckets. The tests are monotone (a total order on the
        engine's numbers), so each count equals its filtered count; a row
        whose value is NULL passes no test nor its negation, as a `FILTER`."""
        relation = family[0][0].relation
        base = list(relation.predicates[:-1])
        value = family[0][1].value
        cuts = sorted({t.limit.param: t.limit for _, t in family}.values(), key=lambda n: n.param)
        tests = [self.nodes.make("cmp", (value, limit), "bool", op) for limit in cuts for op in ("<", "<=")]
        emitter, prefix, source, applied = self._emitter(relation, base + [value], [value], base)
        where = _conjunction([emitter.expr(p) for p in base if p.id not in applied])
        plan = plan_cells([float(c.param) for c in cuts]) if self.backend.name == "duckdb" else None
        if plan is None:
            bucket = f"(CASE WHEN {emitter.expr(value)} IS NULL THEN NULL ELSE {_search(emitter, tests, 0, len(tests))} END)"
            inner = f"SELECT {bucket} AS _fz_b FROM {source}" + (f" WHERE {where}" if where else "")
            sql = f"{prefix}SELECT _fz_b, count(*) FROM ({inner}) AS _fz_cuts GROUP BY _fz_b"
        else:
            sql = prefix + self._cells_query(plan, emitter, value, cuts, source, where)
        rows = self._query(sql, f"{len(family)} counts in one pass over {len(cuts)} cuts")
        sizes = [0] * (len(tests) + 1)
        for b, count in rows:
            if b is not None:
                sizes[int(b)] += int(count)
        below = [0]
        for size in sizes:
            below.append(below[-1] + size)
        position = {limit.param: j for j, limit in enumerate(cuts)}  # -0.0 and 0.0 are one cut, as in SQL
        for aggregate, test in family:
            self._cache[aggregate.key()] = test.count(below, position[test.limit.param])

    def _cells_query(self, plan: Cells, emitter: Emitter, value: Node, cuts: list[Node], source: str, where: str) -> str:
        """`_run_thresholds`'s buckets by cells (`fuzzpy.engines.cuts`): a
        row's bucket is twice the cuts surely below its cell plus its own
        comparisons with the cell's few other cuts, the cuts written as the
        filters write them (a cell with fewer cuts pads with NULLs, which
        compare to nothing)."""
        d = self.backend.dialect
        width = plan.columns
        null = f"CAST(NULL AS {'BIGINT' if value.kind == 'int' else 'DOUBLE'})"
        literal = [emitter.expr(c) for c in cuts]
        table = ", ".join(
            "(" + ", ".join([d.bigint(k), d.bigint(first)] + literal[first:last] + [null] * (width - (last - first))) + ")"
            for k, (first, last) in enumerate(plan.spans))
        names = ", ".join(["_fz_k", "_fz_f"] + [f"_fz_c{i}" for i in range(width)])
        fails = " + ".join(f"coalesce(CAST(_fz_x >= _fz_c{i} AS BIGINT), 0) + coalesce(CAST(_fz_x > _fz_c{i} AS BIGINT), 0)"
                           for i in range(width))
        values = f"SELECT {emitter.expr(value)} AS _fz_x FROM {source}" + (f" WHERE {where}" if where else "")
        located = f"SELECT _fz_x, {cell_sql(plan, '_fz_x', d.double)} AS _fz_k FROM ({values}) AS _fz_values WHERE _fz_x IS NOT NULL"
        return (f"SELECT 2 * _fz_f + {fails} AS _fz_b, count(*) FROM ({located}) AS _fz_located "
                f"JOIN (VALUES {table}) AS _fz_cells({names}) USING (_fz_k) GROUP BY _fz_b")

    def _run_filtered(self, aggregates: list[Aggregate]) -> None:
        d = self.backend.dialect
        passes = {id(a): self._vsum_pass(a) for a in aggregates if a.kind == "vsum"}
        roots = [p for a in aggregates for p in a.relation.predicates]
        roots += [v for a in aggregates for v in a.value] + list(passes.values())
        common = _common_predicates([a.relation for a in aggregates])
        # written in each of an aggregate's sums (FILTER clauses): the norm
        # checks and the predicates not shared by every aggregate
        shared = list(passes.values()) + [p for a in aggregates for p in a.relation.predicates
                                          if p.id not in {c.id for c in common}]
        emitter, prefix, source, applied = self._emitter(aggregates[0].relation, roots, shared, common)
        selects: list[str] = []
        slices: list[tuple[Aggregate, int, int]] = []
        for aggregate in aggregates:
            rest = [p for p in aggregate.relation.predicates if p.id not in {c.id for c in common}]
            where = _conjunction([emitter.expr(p) for p in rest])
            start = len(selects)
            if aggregate.kind == "count":
                selects.append(f"count(*) FILTER (WHERE {where})" if where else "count(*)")
            elif aggregate.kind == "sum":
                selects += d.sum_units(emitter.expr(aggregate.value[0]), where)
            else:
                ok = emitter.expr(passes[id(aggregate)])
                inside = _conjunction([where, ok])
                for unit in aggregate.value:
                    selects += d.sum_units(emitter.expr(unit), inside)
                selects.append(f"count(*) FILTER (WHERE {_conjunction([where, f'NOT {ok}'])})")
            slices.append((aggregate, start, len(selects)))
        where = _conjunction([emitter.expr(p) for p in common if p.id not in applied])
        sql = f"{prefix}SELECT {', '.join(selects)} FROM {source}" + (f" WHERE {where}" if where else "")
        (row,) = self._query(sql, _describe(aggregates))
        for aggregate, start, stop in slices:
            self._cache[aggregate.key()] = self._decode(aggregate, list(row[start:stop]), passes.get(id(aggregate)))

    def _vsum_pass(self, aggregate: Aggregate) -> Node:
        c = aggregate.bounds[0]
        e = grid_exponent(c, VSUM_UNIT_BITS)
        limit = (c / Fraction(2) ** e) ** 2
        max_square = limit.numerator // limit.denominator
        return self.nodes.make("vpass", aggregate.value, "bool", max_square)

    def _decode(self, aggregate: Aggregate, parts: list[object], passed: Node | None) -> object:
        d = self.backend.dialect
        if aggregate.kind == "count":
            return int(parts[0] or 0)
        if aggregate.kind == "sum":
            lo, hi = aggregate.bounds
            e = grid_exponent(max(abs(lo), abs(hi)), SUM_UNIT_BITS)
            return d.combine_units(parts) * Fraction(2) ** e
        width = len(aggregate.value)
        step = (len(parts) - 1) // width
        totals = [d.combine_units(parts[i * step : (i + 1) * step]) for i in range(width)]
        if int(parts[-1] or 0):
            totals = [t + s for t, s in zip(totals, self._failing_rows(aggregate, passed), strict=True)]
        e = grid_exponent(aggregate.bounds[0], VSUM_UNIT_BITS)
        return [t * Fraction(2) ** e for t in totals]

    def _failing_rows(self, aggregate: Aggregate, passed: Node) -> list[int]:
        """Rows whose units fail the exact norm check (float error of the
        clipping; almost never): shrunk in Python by `_enforce_norm`."""
        relation = aggregate.relation
        predicates = list(relation.predicates)
        emitter, prefix, source, applied = self._emitter(relation, predicates + list(aggregate.value) + [passed],
                                                         filters=predicates)
        where = _conjunction([emitter.expr(p) for p in predicates if p.id not in applied]
                             + [f"NOT {emitter.expr(passed)}"])
        columns = ", ".join(emitter.expr(u) for u in aggregate.value)
        rows = self._query(f"{prefix}SELECT {columns} FROM {source} WHERE {where}", "rows to re-clip")
        units = np.array(rows, dtype=np.int64).reshape(len(rows), len(aggregate.value))
        fixed = _enforce_norm(units, passed.param)
        return [int(x) for x in fixed.sum(axis=0, dtype=object)] if len(rows) else [0] * len(aggregate.value)

    def _run_counts(self, aggregate: Aggregate) -> None:
        relation, (group,) = aggregate.relation, aggregate.value
        k = int(aggregate.bounds[0])
        (key,) = group.args
        size = relation.scan.size
        if size is not None and not relation.predicates and isinstance(group.param, int) and key.kind in ("int", "num"):
            rows = self._counts_in_range(relation, key, k, size)
        elif size is not None and not relation.predicates and isinstance(group.param, tuple):
            rows = self._counts_of_categories(relation, key, group.param, size)
        else:
            rows = self._counts_by_key(relation, group, k)
        sizes = np.zeros(k, dtype=np.int64)
        outside = 0
        for bucket, count in rows:
            if 0 <= int(bucket) < k:
                sizes[int(bucket)] = int(count)
            else:
                outside += int(count)
        audit = _GROUP_AUDIT.get()
        if audit is not None:
            audit[0] += outside
        self._cache[aggregate.key()] = sizes

    def _counts_by_key(self, relation: Relation, group: Node, k: int) -> list[tuple]:
        """(bucket, rows) for every bucket met, -1 for the rows outside."""
        predicates = list(relation.predicates)
        emitter, prefix, source, applied = self._emitter(relation, predicates + [group], filters=predicates)
        where = _conjunction([emitter.expr(p) for p in predicates if p.id not in applied])
        inner = f"SELECT {emitter.expr(group)} AS _fz_g FROM {source}" + (f" WHERE {where}" if where else "")
        return self._query(f"{prefix}SELECT _fz_g, count(*) FROM ({inner}) AS _fz_groups GROUP BY _fz_g",
                           f"a histogram of {k} buckets", _import_numpy)

    def _counts_in_range(self, relation: Relation, key: Node, k: int, size: int) -> list[tuple]:
        """The same for a number key of a whole scan of ``size`` rows,
        faster: only the rows in a bucket are grouped, by the key itself as
        a hand-written query does (a `CASE` mapping the rest to -1 makes the
        engine group by a computed column, ~50% slower at 100M rows); the
        rest are the scan's size, known from its audit, less those."""
        emitter, prefix, source, _ = self._emitter(relation, [key])
        inside, bucket = key_in_range(self.backend.dialect, key.kind, emitter.expr(key), k)
        rows = self._query(f"{prefix}SELECT _fz_g, count(*) FROM (SELECT {bucket} AS _fz_g FROM {source} "
                           f"WHERE {inside}) AS _fz_groups GROUP BY _fz_g", f"a histogram of {k} buckets",
                           _import_numpy)
        return [*rows, (-1, size - sum(int(count) for _, count in rows))]

    def _counts_of_categories(self, relation: Relation, key: Node, categories: tuple[str, ...],
                              size: int) -> list[tuple]:
        """The same for a string key of `group["a", ...]` over a whole scan:
        only the rows whose key is one of the categories are grouped, by the
        key itself (`IN` lets DuckDB filter a Parquet column by its
        dictionary; a `CASE` naming each category, evaluated on every row,
        takes ~2.5x the CPU at 10M rows). Each group's key is then placed by
        that same `CASE` (`category_position`, on a few rows): `IN` and the
        `CASE` both compare by SQL `=`, so a row is counted in the bucket of
        `Emitter._group_key`'s query, and a NULL key, equal to none, in
        neither. The rest are the scan's size less those."""
        emitter, prefix, source, _ = self._emitter(relation, [key])
        text, d = emitter.expr(key), self.backend.dialect
        if not categories:
            return [(-1, size)]
        listed = ", ".join(d.string(c) for c in categories)
        placed = category_position(d, "_fz_k", categories)
        rows = self._query(f"{prefix}SELECT {placed} AS _fz_g, sum(_fz_n) FROM (SELECT {text} AS _fz_k, count(*) "
                           f"AS _fz_n FROM {source} WHERE {text} IN ({listed}) GROUP BY {text}) AS _fz_keys "
                           f"GROUP BY {placed}", f"a histogram of {len(categories)} buckets", _import_numpy)
        return [*rows, (-1, size - sum(int(count) for _, count in rows))]

    # ------------------------------------------------------------ rows, for the in-memory interpreter

    def materialise(self, relation: Relation) -> Bag:
        """The relation's rows as an in-memory bag (a function the engine
        cannot run goes on in memory from here)."""
        nodes = leaves(relation.row)
        predicates = list(relation.predicates)
        emitter, prefix, source, applied = self._emitter(relation, predicates + nodes, filters=predicates)
        where = _conjunction([emitter.expr(p) for p in predicates if p.id not in applied])
        columns = ", ".join(f"{emitter.expr(n)} AS _fz_o{i}" for i, n in enumerate(nodes)) or "1 AS _fz_none"
        sql = f"{prefix}SELECT {columns} FROM {source}" + (f" WHERE {where}" if where else "")
        self.queries += 1
        self.progress(f"{self.backend.name}: fetching rows for the in-memory interpreter...")
        table = self.backend.arrow(sql)
        arrays = [_numpy(table.column(i), n.kind) for i, n in enumerate(nodes)]
        column, _ = _rebuild(relation.row, arrays, table.num_rows)
        return Bag(column)


def _import_numpy() -> None:
    """The counts are an array: numpy (~40 ms to import) is imported while
    the engine counts, not after."""
    np.int64  # noqa: B018 -- the lazy module's first read imports numpy


def _numpy(column: pa.ChunkedArray, kind: str) -> np.ndarray:
    values = column.to_numpy(zero_copy_only=False) if len(column) else np.zeros(0)
    if kind == "string":
        return np.array(values.tolist() if len(column) else [], dtype=object)
    dtype = {"int": np.int64, "num": np.float64, "bool": np.bool_}[kind]
    return np.asarray(values, dtype=dtype)


def _rebuild(shape: object, arrays: list[np.ndarray], n: int, start: int = 0) -> tuple[object, int]:
    if isinstance(shape, Sym):
        return arrays[start], start + 1
    if isinstance(shape, SymVector):
        width = len(shape.entries)
        parts = arrays[start : start + width]
        return (np.column_stack(parts).astype(np.float64) if parts else np.zeros((n, 0))), start + width
    if isinstance(shape, Record):
        fields = {}
        for name, value in shape.fields.items():
            fields[name], start = _rebuild(value, arrays, n, start)
        return Record(fields), start
    items = []
    for value in shape:
        item, start = _rebuild(value, arrays, n, start)
        items.append(item)
    return tuple(items), start


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
#: fewer counts than this of one family run as filtered counts (no gain)
MIN_FAMILY = 3


@dataclass(frozen=True)
class _Threshold:
    """A count's last predicate, ``value op limit`` (or its negation)."""

    value: Node
    op: str
    limit: Node
    negated: bool

    def count(self, below: list[int], j: int) -> int:
        """From ``below[k]``: the rows whose bucket is < k (`_run_thresholds`):
        ``value < t_j`` is bucket <= 2j, ``value <= t_j`` bucket <= 2j+1."""
        total = below[-1]
        lt, le = below[2 * j + 1], below[2 * j + 2]
        found = {"<": lt, "<=": le, ">": total - le, ">=": total - lt, "==": le - lt, "!=": total - (le - lt)}[self.op]
        return total - found if self.negated else found


def _threshold(predicate: Node) -> _Threshold | None:
    negated = predicate.op == "not"
    test = predicate.args[0] if negated else predicate
    if test.op != "cmp" or len(test.args) != 2 or test.param not in _FLIP:
        return None
    a, b, written = *test.args, str(test.param)
    if b.op == "lit" and a.op != "lit":
        value, limit, op = a, b, written
    elif a.op == "lit" and b.op != "lit":
        value, limit, op = b, a, _FLIP[written]
    else:
        return None
    # numbers only: the engine orders strings by its collation, not as Python does
    if value.kind not in ("int", "num") or limit.kind != value.kind:
        return None
    return _Threshold(value, op, limit, negated)


def _threshold_families(aggregates: list[Aggregate]) -> tuple[list[list[tuple[Aggregate, _Threshold]]], list[Aggregate]]:
    """The counts that differ only by a last predicate comparing one value
    with a constant, grouped (`Executor._run_thresholds`), and the rest."""
    groups: dict[tuple, list[tuple[Aggregate, _Threshold]]] = {}
    rest: list[Aggregate] = []
    for aggregate in aggregates:
        predicates = aggregate.relation.predicates
        test = _threshold(predicates[-1]) if aggregate.kind == "count" and predicates else None
        if test is None:
            rest.append(aggregate)
            continue
        groups.setdefault((tuple(p.id for p in predicates[:-1]), test.value.id), []).append((aggregate, test))
    families = []
    for members in groups.values():
        if len(members) >= MIN_FAMILY:
            families.append(members)
        else:
            rest.extend(a for a, _ in members)
    return families, rest


def _search(emitter: Emitter, tests: list[Node], lo: int, hi: int) -> str:
    """The first of ``tests[lo:hi]`` a row passes (``hi`` if none), known to
    fail those before ``lo``: a binary search over monotone tests."""
    if lo == hi:
        return str(lo)
    mid = (lo + hi) // 2
    return f"(CASE WHEN {emitter.expr(tests[mid])} THEN {_search(emitter, tests, lo, mid)} ELSE {_search(emitter, tests, mid + 1, hi)} END)"


def _scan_level(predicates: list[Node], layers: Layers) -> list[Node]:
    """The predicates whose text reads no named subexpression: only the
    scan's columns (and literals), so the scan can apply them."""
    found = []
    for predicate in predicates:
        todo, seen, reads_named = [predicate], set(), False
        while todo and not reads_named:
            node = todo.pop()
            if node.id not in seen:
                seen.add(node.id)
                reads_named = node.id in layers.levels
                todo.extend(node.args)
        if not reads_named:
            found.append(predicate)
    return found


def _common_predicates(relations: list[Relation]) -> list[Node]:
    first = relations[0].predicates
    shared = set.intersection(*({p.id for p in r.predicates} for r in relations))
    return [p for p in first if p.id in shared]


def _conjunction(parts: list[str | None]) -> str | None:
    parts = [p for p in parts if p]
    return " AND ".join(f"({p})" for p in parts) if parts else None


def _describe(aggregates: list[Aggregate]) -> str:
    kinds = [a.kind for a in aggregates]
    return ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
