"""Per-row expressions and exact aggregates as SQL text, for DuckDB and Spark SQL.

One emitter, two dialects (`Dialect`): the node rules are written once, and
a dialect says only how each engine spells a type, a cast or a wide integer.
Why SQL text rather than each engine's relational API or a portable layer:
docs/engines.md.

Exactness, rule by rule (docs/semantics.md; the node ops are `fuzzpy.engines.rows`):

* doubles: + - * / are IEEE in both engines, as in numpy; each result is
  made finite exactly as `rowops.finite` does (NaN reads 0, +/-inf saturates);
  x / 0 = 0; sqrt is correctly rounded everywhere; sigmoid is the same table
  and the same + - * as `runtime.sigmoid.sigmoid_rows`;
* int64: every + - * and negation is computed in a wider exact integer
  (DuckDB HUGEINT, Spark DECIMAL(38,0)) and clamped, which is the
  saturating rule of `rowops`;
* aggregates: every row is mapped to integer units of the static grid with
  the same double operations as `runtime.aggregates`, and the units are
  added as integers (DuckDB: SUM of BIGINT is HUGEINT; Spark: two BIGINT
  sums of 24-bit halves, which cannot wrap below 2^39 rows): never a
  floating-point SUM.

Shared subexpressions are computed once, as columns of successive `WITH`
layers, so the text stays linear in the size of the expression DAG.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fuzzpy.engines.rows import Node
from fuzzpy.runtime.exact import DBL_MAX
from fuzzpy.runtime.rowops import I64_MAX, I64_MIN
from fuzzpy.runtime.sigmoid import NODES, STEP_BITS, VALUE_BITS, _table

SIGMOID_TABLE = "_fz_sigmoid"
_CMP = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_LEAVES = ("col", "lit")


class Dialect(ABC):
    """How one engine spells what the emitter needs."""

    name = "sql"

    def ident(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def string(self, text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    def double(self, x: float) -> str:
        return f"CAST('{x!r}' AS DOUBLE)"

    def bigint(self, i: int) -> str:
        return f"CAST({i} AS BIGINT)"

    @abstractmethod
    def wide(self, expr: str) -> str:
        """An exact integer type wide enough for int64 products."""
        ...

    def to_bigint(self, expr: str) -> str:
        return f"CAST({expr} AS BIGINT)"

    @abstractmethod
    def trunc_to_bigint(self, expr: str) -> str:
        """A double (already within the int64 range) truncated toward zero."""
        ...

    @abstractmethod
    def floor(self, expr: str) -> str:
        ...

    @abstractmethod
    def sigmoid_node(self, index: str) -> str:
        """Node `index` (0-based BIGINT) of the sigmoid table, as a BIGINT:
        read from the one-row table `SIGMOID_TABLE` each backend creates
        once (`sigmoid_table_sql`), through an uncorrelated scalar subquery,
        which the engines evaluate once per query."""
        ...

    @abstractmethod
    def sigmoid_table_sql(self) -> str:
        """The SELECT giving the table's one row: the node values (units of 2^-40)."""
        ...

    @abstractmethod
    def keep(self, row_id: str, secret: str, threshold: int) -> str:
        """The subsample test: the first 60 bits of SHA-256(secret || ':' || id)
        below the threshold (`fuzzpy.engines.subsample`)."""
        ...

    @abstractmethod
    def sum_units(self, units: str, where: str | None) -> list[str]:
        """SQL aggregates whose results `combine_units` adds up exactly."""
        ...

    @abstractmethod
    def combine_units(self, parts: list[object]) -> int:
        ...

    @abstractmethod
    def ordered_sum(self, terms: list[str]) -> str:
        """Doubles added left to right, ((t0 + t1) + t2) + ..., as a fold
        over a list: as shallow as it is long."""
        ...

    def wide_sum_of_squares(self, units: list[str]) -> str:
        """Exact integers: added as a balanced tree, so the expression is only
        log2(width) deep (the engines' parsers refuse deep expressions)."""
        terms = [f"({self.wide(u)} * {self.wide(u)})" for u in units] or [self.bigint(0)]
        while len(terms) > 1:
            pairs = [f"({terms[i]} + {terms[i + 1]})" for i in range(0, len(terms) - 1, 2)]
            terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
        return terms[0]


class DuckDBDialect(Dialect):
    name = "duckdb"

    def wide(self, expr: str) -> str:
        return f"CAST({expr} AS HUGEINT)"

    def trunc_to_bigint(self, expr: str) -> str:
        return f"CAST(trunc({expr}) AS BIGINT)"  # DuckDB's cast rounds; trunc first

    def floor(self, expr: str) -> str:
        return f"floor({expr})"

    def sigmoid_node(self, index: str) -> str:
        return f"(SELECT _fz_t FROM {SIGMOID_TABLE})[{index} + 1]"

    def sigmoid_table_sql(self) -> str:
        return f"SELECT [{', '.join(map(str, _table()))}]::BIGINT[] AS _fz_t"

    def keep(self, row_id: str, secret: str, threshold: int) -> str:
        digest = f"sha256({self.string(secret + ':')} || CAST({row_id} AS VARCHAR))"
        return f"(CAST('0x' || substr({digest}, 1, 15) AS BIGINT) < {self.bigint(threshold)})"

    def sum_units(self, units: str, where: str | None) -> list[str]:
        return [f"sum({_only_where(units, where, self)})"]  # BIGINT sums are HUGEINT: exact

    def combine_units(self, parts: list[object]) -> int:
        return int(parts[0] or 0)

    def ordered_sum(self, terms: list[str]) -> str:
        # `list_reduce` with no initial value starts from the first element
        # and applies the lambda to the running result and the next element
        return f"list_reduce([{', '.join(terms)}], {_duckdb_lambda()})"


class SparkDialect(Dialect):
    name = "spark"

    def ident(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def string(self, text: str) -> str:
        out = []
        for ch in text:
            if ch in "'\\" or ord(ch) < 32 or ord(ch) > 126:
                out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else ch)
            else:
                out.append(ch)
        return "'" + "".join(out) + "'"

    def wide(self, expr: str) -> str:
        return f"CAST({expr} AS DECIMAL(38,0))"

    def trunc_to_bigint(self, expr: str) -> str:
        return f"CAST({expr} AS BIGINT)"  # Java's conversion truncates toward zero

    def floor(self, expr: str) -> str:
        # Spark's floor of a double is a BIGINT: only below 2^52 is that exact
        # (above it every double is already an integer).
        return f"(CASE WHEN abs({expr}) >= {self.double(2.0**52)} THEN {expr} ELSE CAST(floor({expr}) AS DOUBLE) END)"

    def sigmoid_node(self, index: str) -> str:
        return f"element_at((SELECT _fz_t FROM {SIGMOID_TABLE}), CAST({index} AS INT) + 1)"

    def sigmoid_table_sql(self) -> str:
        return f"SELECT array({', '.join(f'{v}L' for v in _table())}) AS _fz_t"

    def keep(self, row_id: str, secret: str, threshold: int) -> str:
        digest = f"sha2(concat({self.string(secret + ':')}, CAST({row_id} AS STRING)), 256)"
        return f"(CAST(conv(substr({digest}, 1, 15), 16, 10) AS BIGINT) < {self.bigint(threshold)})"

    def sum_units(self, units: str, where: str | None) -> list[str]:
        units = _only_where(units, where, self)
        # Units are below 2^49 (`sum`) or 2^31 (`vsum`, rows that pass the
        # norm check) in size: the high halves are below 2^25, the low ones
        # below 2^24, so neither BIGINT sum can wrap below 2^38 rows.
        high = f"shiftright({units}, 24)"
        low = f"({units} - shiftleft(shiftright({units}, 24), 24))"
        return [f"sum({high})", f"sum({low})"]

    def combine_units(self, parts: list[object]) -> int:
        high, low = (int(p or 0) for p in parts)
        return (high << 24) + low

    def ordered_sum(self, terms: list[str]) -> str:
        # `aggregate(array, start, merge)` folds left to right from `start`:
        # the first term (starting from 0.0 would turn a -0.0 total into 0.0)
        if len(terms) == 1:
            return terms[0]
        return f"aggregate(array({', '.join(terms[1:])}), {terms[0]}, (_fz_acc, _fz_x) -> _fz_acc + _fz_x)"


def _duckdb_lambda() -> str:
    """`(acc, x) -> acc + x` in the syntax of the DuckDB installed: the
    arrow is refused from 2.0, `lambda` unknown before 1.3."""
    import duckdb

    version = tuple(int(p) for p in duckdb.__version__.split(".")[:2] if p.isdigit())
    return "lambda _fz_acc, _fz_x: _fz_acc + _fz_x" if version >= (1, 3) else "(_fz_acc, _fz_x) -> _fz_acc + _fz_x"


def _only_where(units: str, where: str | None, d: Dialect) -> str:
    """The units of the rows where `where` holds, 0 elsewhere: the same sum
    as `sum(..) FILTER (WHERE ..)`, which DuckDB evaluates in time quadratic
    in the number of filtered aggregates of a query (one per entry of a
    `vsum`)."""
    return f"(CASE WHEN {where} THEN {units} ELSE {d.bigint(0)} END)" if where else units


DIALECTS: dict[str, Dialect] = {"duckdb": DuckDBDialect(), "spark": SparkDialect()}


# ---------------------------------------------------------------- expressions


@dataclass
class Layers:
    """Shared subexpressions named as columns `_n<id>` of successive layers."""

    levels: dict[int, int]  # named node id -> layer (1-based)
    nodes: dict[int, Node]
    roots: tuple[Node, ...] = ()  # what the query's last SELECT writes

    def outlives(self) -> dict[int, int]:
        """For each named node and scan column (by node id): the last layer
        whose text refers to it (the query's last SELECT: depth + 1). A layer
        passes on only what a later one reads: `SELECT *` through every layer
        makes the engines plan layers x columns (quadratic in a wide
        vector's width: each link of `symops.CHAIN` is one layer)."""
        final = max(self.levels.values(), default=0) + 1
        last: dict[int, int] = {}

        def refers(node: Node) -> set[int]:
            """The named nodes and columns the inline text of `node` reads (an
            unnamed node is written once: each is walked once)."""
            found: set[int] = set()
            todo = list(node.args)
            while todo:
                child = todo.pop()
                if child.id in self.levels or child.op == "col":
                    found.add(child.id)
                else:
                    todo.extend(child.args)
            return found

        for ident, level in self.levels.items():
            for used in refers(self.nodes[ident]):
                last[used] = max(last.get(used, 0), level)
        for root in self.roots:
            for used in ({root.id} if root.id in self.levels or root.op == "col" else refers(root)):
                last[used] = final
        return last

    def by_layer(self) -> list[list[Node]]:
        depth = max(self.levels.values(), default=0)
        layers: list[list[Node]] = [[] for _ in range(depth)]
        for ident, level in sorted(self.levels.items()):
            layers[level - 1].append(self.nodes[ident])
        return layers


def plan_layers(roots: Iterable[Node], dialect: Dialect, shared: Iterable[Node] = ()) -> Layers:
    """Which nodes to name: every non-leaf node whose text would otherwise
    appear more than once in the query. A node's uses are counted as the
    emitter writes them (`Emitter.references`: `finite` writes its operand
    four times, `norm` each entry twice...), and the ``shared`` roots are
    written more than once by the caller (a `vsum`'s norm check guards each
    of its sums). Inlining any of these would make the text, or the
    engine's plan, grow with the product of the repetitions (quadratically
    in a vector's width, exponentially in an expression's depth)."""
    counter = Emitter(dialect, Layers({}, {}), {})
    uses: dict[int, int] = {}
    nodes: dict[int, Node] = {}
    roots, shared = list(roots), list(shared)
    stack = roots + shared
    for root in stack:
        uses[root.id] = uses.get(root.id, 0) + 1
    for node in shared:
        uses[node.id] = uses.get(node.id, 0) + 1
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        nodes[node.id] = node
        for child, count in counter.references(node).items():
            uses[child.id] = uses.get(child.id, 0) + count
            stack.append(child)
    named = {i for i, n in nodes.items() if uses.get(i, 0) >= 2 and n.op not in _LEAVES}
    levels: dict[int, int] = {}
    need: dict[int, int] = {}

    def needed(node: Node) -> int:
        """The deepest layer the inline text of `node` refers to."""
        if node.id in need:
            return need[node.id]
        todo = [node]
        while todo:  # iterative post-order (expressions may be deep)
            current = todo[-1]
            pending = [c for c in current.args if c.id not in need]
            if pending:
                todo.extend(pending)
                continue
            todo.pop()
            level = 0
            for child in current.args:
                level = max(level, levels[child.id] if child.id in named else need[child.id])
            need[current.id] = level
            if current.id in named:
                levels[current.id] = level + 1
        return need[node.id]

    for node in nodes.values():
        needed(node)
    return Layers({i: levels[i] for i in named}, nodes, tuple(roots))


class Emitter:
    """SQL text for nodes, given the named shared subexpressions."""

    def __init__(self, dialect: Dialect, layers: Layers, column_names: dict[str, str]) -> None:
        self.d = dialect
        self.layers = layers
        self.columns = column_names  # a scan column's name -> the engine's

    def name_of(self, node: Node) -> str:
        return f"_n{node.id}"

    def expr(self, node: Node, defining: bool = False) -> str:
        if not defining and node.id in self.layers.levels:
            return self.d.ident(self.name_of(node))
        return self._emit(node)

    def references(self, node: Node) -> dict[Node, int]:
        """How many times the text of `node` writes each of its operands."""
        if not node.args:
            return {}
        marks = [f"\x00{i}\x00" for i in range(len(node.args))]
        text = self._rule(node, marks)
        counts: dict[Node, int] = {}
        for child, mark in zip(node.args, marks, strict=True):
            counts[child] = counts.get(child, 0) + text.count(mark)
        return counts

    def _emit(self, node: Node) -> str:
        return self._rule(node, [self.expr(x) for x in node.args])

    def _rule(self, node: Node, a: list[str]) -> str:
        d, op = self.d, node.op
        if op == "col":
            return d.ident(self.columns[node.param])
        if op == "lit":
            return self._literal(node)
        if op == "double":
            return f"CAST({a[0]} AS DOUBLE)"
        if op in ("add", "sub", "mul"):
            sign = {"add": "+", "sub": "-", "mul": "*"}[op]
            if node.kind == "int":
                return self._saturate(f"({d.wide(a[0])} {sign} {d.wide(a[1])})")
            return self.finite(f"({a[0]} {sign} {a[1]})")
        if op in ("rawadd", "rawsub", "rawmul"):
            sign = {"rawadd": "+", "rawsub": "-", "rawmul": "*"}[op]
            return f"({a[0]} {sign} {a[1]})"
        if op == "div":
            return f"(CASE WHEN {a[1]} = 0 THEN {d.double(0.0)} ELSE {self.finite(f'({a[0]} / {a[1]})')} END)"
        if op == "neg":
            return self._saturate(f"(-{d.wide(a[0])})") if node.kind == "int" else f"(-{a[0]})"
        if op == "abs":
            return self._saturate(f"abs({d.wide(a[0])})") if node.kind == "int" else f"abs({a[0]})"
        if op == "cmp":
            return f"({a[0]} {_CMP[node.param]} {a[1]})"
        if op in ("and", "or"):
            return f"({a[0]} {op.upper()} {a[1]})"
        if op == "not":
            return f"(NOT {a[0]})"
        if op == "if":
            return f"(CASE WHEN {a[0]} THEN {a[1]} ELSE {a[2]} END)"
        if op in ("min", "max"):
            return f"{'least' if op == 'min' else 'greatest'}({a[0]}, {a[1]})"
        if op == "clip":
            return f"least(greatest({a[0]}, {a[1]}), {a[2]})"
        if op == "floor":
            return d.floor(a[0])
        if op == "sqrt":
            return f"(CASE WHEN {a[0]} > 0 THEN sqrt({a[0]}) ELSE {d.double(0.0)} END)"
        if op == "sigscaled":
            return f"least(abs({a[0]}) * {d.double(float(1 << STEP_BITS))}, {d.double(float(NODES))})"
        if op == "sigindex":
            return f"least({d.trunc_to_bigint(d.floor(a[0]))}, {d.bigint(NODES - 1)})"
        if op == "sigtable":
            return f"(CAST({d.sigmoid_node(f'({a[0]} + {node.param})')} AS DOUBLE) * {d.double(2.0 ** -VALUE_BITS)})"
        if op == "dot":
            terms = [f"({a[i]} * {a[i + 1]})" for i in range(0, len(a), 2)]
            total = terms[0]
            for term in terms[1:]:
                total = f"({total} + {term})"
            return self.finite(total)
        if op == "foldprod":  # `symops.SymOps._ordered_products`: raw, made finite by its user
            return d.ordered_sum([f"({a[i]} * {a[i + 1]})" for i in range(0, len(a), 2)])
        if op == "finite":
            return self.finite(a[0])
        if op == "rawsqrt":  # `norm`'s sqrt, of a sum of squares
            return f"sqrt({a[0]})"
        if op == "maxabs":
            return f"greatest({', '.join(f'abs({x})' for x in a)})" if len(a) > 1 else f"abs({a[0]})"
        if op == "unit":
            return f"(CASE WHEN {a[1]} > 0 THEN {a[0]} / {a[1]} ELSE {d.double(0.0)} END)"
        if op == "norm":
            total = f"({a[0]} * {a[0]})"
            for x in a[1:]:
                total = f"({total} + ({x} * {x}))"
            return f"sqrt({total})"
        if op == "l2scale":
            return f"(CASE WHEN {a[1]} > 0 THEN least({a[0]}, {a[2]} / {a[1]}) ELSE {a[0]} END)"
        if op == "units":
            return self._units(a[0], node.param)
        if op == "groupkey":
            return self._group_key(node.args[0], a[0], node.param)
        if op == "vpass":
            return f"({d.wide_sum_of_squares(a)} <= {d.wide(d.bigint(node.param))})"
        if op == "keep":
            secret, threshold = node.param
            return d.keep(a[0], secret, threshold)
        raise ValueError(f"no SQL for node `{op}`")

    def _literal(self, node: Node) -> str:
        return literal_sql(self.d, node.kind, node.param)

    def finite(self, expr: str) -> str:
        """`rowops.finite`: NaN reads 0, infinities saturate."""
        top, bottom = self.d.double(DBL_MAX), self.d.double(-DBL_MAX)
        return (f"(CASE WHEN isnan({expr}) THEN {self.d.double(0.0)} WHEN {expr} > {top} THEN {top} "
                f"WHEN {expr} < {bottom} THEN {bottom} ELSE {expr} END)")

    def _saturate(self, wide_expr: str) -> str:
        d = self.d
        return d.to_bigint(f"least(greatest({wide_expr}, {d.wide(d.bigint(I64_MIN))}), {d.wide(d.bigint(I64_MAX))})")

    def _units(self, x: str, param: tuple) -> str:
        """`aggregates._chunk_units` / `vector_sum` for one row: scaled by
        powers of two, clipped to [low, high], truncated toward zero."""
        factors, low, high = param
        scaled = x
        for factor in factors:
            scaled = f"({scaled} * {self.d.double(factor)})"
        clipped = f"least(greatest({scaled}, {self.d.double(low)}), {self.d.double(high)})"
        return self.d.trunc_to_bigint(clipped)

    def _group_key(self, key: Node, text: str, k: int | tuple[str, ...]) -> str:
        """`primitives._group`: int keys as they are, doubles truncated;
        -1 for a key outside 0..k-1. A string key (``k`` the categories of
        `group["a", ...]`, `primitives.group_by_category`): its category's
        position, -1 for a key equal to none (SQL `=` on strings compares
        them exactly in both engines, as Python's `==`)."""
        d = self.d
        if isinstance(k, tuple):
            return category_position(d, text, k)
        if key.kind == "bool":
            return f"(CASE WHEN {text} THEN {d.bigint(1)} ELSE {d.bigint(0)} END)"
        inside, bucket = key_in_range(d, key.kind, text, k)
        return f"(CASE WHEN {inside} THEN {bucket} ELSE {d.bigint(-1)} END)"


def category_position(d: Dialect, text: str, categories: tuple[str, ...]) -> str:
    """A string key's position among the categories of `group["a", ...]`
    (the first that equals it by SQL `=`), -1 for a key equal to none."""
    arms = " ".join(f"WHEN {d.string(c)} THEN {d.bigint(i)}" for i, c in enumerate(categories))
    return f"(CASE {text} {arms} ELSE {d.bigint(-1)} END)"


def key_in_range(d: Dialect, kind: str, text: str, k: int) -> tuple[str, str]:
    """For a number key (``kind`` "int" or "num") of `group[k]`: the SQL
    condition that it falls in a bucket, and the bucket (int keys as they
    are, doubles truncated; `primitives._group`). A NULL or NaN key meets
    no condition: it falls outside, as in the `CASE` of `_group_key`."""
    if kind == "int":
        return f"{text} >= 0 AND {text} < {d.bigint(k)}", text
    return f"{text} > {d.double(-1.0)} AND {text} < {d.double(float(k))}", d.trunc_to_bigint(text)


def with_layers(emitter: Emitter, table: str) -> tuple[str, str]:
    """The `WITH` clause computing the shared subexpressions, and the name of
    its last layer (the table to select from)."""
    d, layers = emitter.d, emitter.layers
    parts, source = [], table
    last = layers.outlives()
    carried = sorted((i for i in last if i not in layers.levels), key=lambda i: layers.nodes[i].param)  # columns
    for index, nodes in enumerate(layers.by_layer()):
        level = index + 1
        kept = [emitter.expr(layers.nodes[i]) for i in carried if last[i] > level]
        columns = kept + [f"{emitter.expr(n, defining=True)} AS {d.ident(emitter.name_of(n))}" for n in nodes]
        name = f"_l{level}"
        parts.append(f"{name} AS (SELECT {', '.join(columns)} FROM {source})")
        carried = [i for i in carried if last[i] > level] + [n.id for n in nodes]
        source = name
    return ("WITH " + ", ".join(parts) + " ") if parts else "", source


def literal_sql(d: Dialect, kind: str, value: Any) -> str:
    """A value of a row kind (`bool`, `int`, `num`, `string`) as a literal."""
    if kind == "bool":
        return "TRUE" if value else "FALSE"
    if kind == "int":
        return d.bigint(int(value))
    if kind == "num":
        return d.double(float(value))
    return d.string(str(value))
