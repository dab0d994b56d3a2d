"""Datasets and their neighbours, built from adversarial values.

A dataset is a tuple of rows; a row is a tuple of cells in the order of the
`Schema`'s columns. Two datasets are neighbours when one is the other with
one row inserted (language design, section 2: `bag` distance 1), so a `Pair`
is a smaller dataset, the row, and where it goes in (order matters to float
summation). The values are the ones that make real arithmetic and IEEE
doubles part ways: zeros, +-1e308, subnormals, integers near 2^53 and 2^63,
values that overflow, cancel, or make `log` and division misbehave, and
strings with spaces, quotes and non-ASCII letters.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from fuzzpy.language import types as T

Cell = float | int | bool | str
Row = tuple[Cell, ...]

#: Floats where the reals and IEEE doubles differ most.
NUM_EDGES: tuple[float, ...] = (
    0.0,
    1.0,
    -1.0,
    1e308,
    -1e308,
    1.7976931348623157e308,
    5e-324,
    2.2250738585072014e-308,
    1e-300,
    -0.0,
    0.5,
    9007199254740992.0,  # 2^53: +1 is lost
    4611686018427387904.0,  # 2^62
    1e15,
    -1e16,
    0.1,
    3.0,
    1e300,
    -2.5,
    1e-15,
)
#: int64 values: the ends of the range, 2^53 (+1), 10^15 (sums wrap after 9223 rows).
INT_EDGES: tuple[int, ...] = (
    0,
    1,
    -1,
    2**63 - 1,
    -(2**63 - 1),  # the loader accepts |n| <= 2^63 - 1 (runtime/cells.py INT_LIMIT)
    2**53,
    2**53 + 1,
    10**15,
    2**62,
    5,
    -7,
    3,
)
BOOL_EDGES: tuple[bool, ...] = (True, False)
STRING_EDGES: tuple[str, ...] = (
    "x",
    # The loader trims cells and reads an empty one as missing (docs/semantics.md,
    # data loading), so the catalogue holds strings that survive it unchanged.
    "a b",
    "inner  two  spaces",
    "héllo wörld",
    "日本語 テキスト",
    'comma, "quote"',
    "x",
    "Ω≈ç√∫",
)
EDGES: dict[str, Sequence[Cell]] = {
    "num": NUM_EDGES,
    "int": INT_EDGES,
    "bool": BOOL_EDGES,
    "string": STRING_EDGES,
}
#: The unremarkable value of each kind (a "typical" row).
PLAIN: dict[str, Cell] = {"num": 1.0, "int": 1, "bool": True, "string": "x"}
_KINDS: dict[type, str] = {T.TNum: "num", T.TInt: "int", T.TBool: "bool", T.TString: "string"}


@dataclass(frozen=True)
class Schema:
    """The columns a `bag` parameter reads: (name, kind) with kind one of
    num, int, bool, string."""

    columns: tuple[tuple[str, str], ...]

    @staticmethod
    def of(bag_type: T.Type, vector_length: int = 2) -> Schema:
        """The schema the loader reads for a `bag` type (language design,
        section 6: record fields by name; a base type from the only column;
        a vector from every column)."""
        if not isinstance(bag_type, T.TBag):
            raise ValueError(f"not a bag type: {bag_type}")
        row = bag_type.elem
        if isinstance(row, T.TRecord):
            return Schema(tuple((name, _kind(t)) for name, t in row.fields))
        if isinstance(row, T.TVec):
            return Schema(tuple((f"x{i}", "num") for i in range(vector_length)))
        return Schema((("v", _kind(row)),))

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(kind for _, kind in self.columns)

    def row(self, fill: Mapping[str, Cell] | None = None) -> Row:
        """A typical row, with the given columns set."""
        fill = fill or {}
        return tuple(fill.get(name, PLAIN[kind]) for name, kind in self.columns)

    def edge_row(self, i: int) -> Row:
        """The i-th adversarial row: each column walks its edge values, the
        columns out of step so that rows mix extremes."""
        return tuple(EDGES[kind][(i + 3 * j) % len(EDGES[kind])] for j, kind in enumerate(self.kinds))

    def edge_rows(self) -> list[Row]:
        return [self.edge_row(i) for i in range(max(len(EDGES[k]) for k in self.kinds))]


def _kind(t: T.Type) -> str:
    if type(t) not in _KINDS:
        raise ValueError(f"a data file cannot hold a column of type {t}")
    return _KINDS[type(t)]


@dataclass(frozen=True)
class Pair:
    """Neighbouring datasets: `smaller`, and `smaller` with `row` inserted at `at`."""

    name: str
    smaller: tuple[Row, ...]
    row: Row
    at: int

    @property
    def larger(self) -> tuple[Row, ...]:
        return (*self.smaller[: self.at], self.row, *self.smaller[self.at :])

    def describe(self) -> str:
        shown = ", ".join(repr(c) for c in self.row)
        return f"{self.name}: {len(self.smaller)} rows vs. the same with ({shown}) inserted at {self.at}"


def added(name: str, rows: Sequence[Row], row: Row, at: int | None = None) -> Pair:
    """`rows` and `rows` with `row` inserted (at the end unless `at` says)."""
    return Pair(name, tuple(rows), row, len(rows) if at is None else at)


def removed(name: str, rows: Sequence[Row], index: int) -> Pair:
    """`rows` and `rows` without row `index`, as a pair."""
    rest = (*rows[:index], *rows[index + 1 :])
    return Pair(name, tuple(rest), rows[index], index)


def catalogue(schema: Schema, many: int = 3000) -> list[Pair]:
    """The adversarial neighbour pairs every hand-written program is run on."""
    plain, edges = schema.row(), schema.edge_rows()
    zero = tuple(EDGES[k][0] if k != "bool" else False for k in schema.kinds)
    pairs = [added("empty", [], plain)]
    pairs += [added(f"empty+edge{i}", [], r) for i, r in enumerate(edges)]
    pairs += [added(f"one+edge{i}", [plain], r) for i, r in enumerate(edges[:8])]
    pairs += [added("zeros", [zero] * 3, zero), added("zeros+edge3", [zero] * 3, edges[3], 0)]
    pairs += [removed("edges-first", edges, 0), removed("edges-middle", edges, len(edges) // 2)]
    pairs += [removed("edges-last", edges, len(edges) - 1)]
    bulk = [edges[i % len(edges)] if i % 7 == 0 else schema.row() for i in range(many)]
    pairs += [added("many+edge", bulk, edges[3], many // 2), removed("many-first", bulk, 0)]
    return pairs


def sized(
    schema: Schema, sizes: Iterable[int], fill: Mapping[str, Cell] | None = None,
    extra: Mapping[str, Cell] | None = None,
) -> list[Pair]:
    """For each n: n typical rows (with `fill`), and the same with one more
    row (the typical row, with `extra`'s values on top)."""
    row = schema.row(fill)
    more = schema.row({**(fill or {}), **(extra or {})})
    return [added(f"{n}-rows", [row] * n, more) for n in sizes]


# ---------------------------------------------------------------- files


def cell_text(cell: Cell) -> str:
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, float):
        return repr(cell)  # shortest text that reads back as the same double
    return str(cell)


def csv_text(schema: Schema, rows: Iterable[Row]) -> str:
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([name for name, _ in schema.columns])
    for row in rows:
        writer.writerow([cell_text(c) for c in row])
    return out.getvalue()


def write_csv(schema: Schema, rows: Iterable[Row], folder: Path) -> Path:
    """The rows as a CSV file in `folder`, named by its content (written once)."""
    text = csv_text(schema, rows)
    path = folder / (hashlib.sha256(text.encode()).hexdigest()[:20] + ".csv")
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- generated data (hypothesis)


def _cells(kind: str) -> st.SearchStrategy[Any]:
    edges = EDGES[kind]
    plain = {
        "num": st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        "int": st.integers(-1000, 1000),
        "bool": st.booleans(),
        "string": st.sampled_from(["x", "a b", ""]),
    }[kind]
    return st.one_of(st.sampled_from(list(edges)), plain)


def rows(schema: Schema) -> st.SearchStrategy[Row]:
    return st.tuples(*(_cells(kind) for kind in schema.kinds))


@st.composite
def neighbour_pairs(draw: Any, schema: Schema) -> Pair:
    """A dataset (usually small; sometimes hundreds or thousands of rows for
    rounding effects) and a neighbour: one row inserted at some position."""
    row_of = rows(schema)
    size = draw(st.sampled_from([0, 0, 1, 1, 2, 3, 4, 5, 8, 700, 3000]))
    if size <= 8:
        base = draw(st.lists(row_of, min_size=size, max_size=size))
    else:
        pattern = draw(st.lists(row_of, min_size=1, max_size=4))
        base = [pattern[i % len(pattern)] for i in range(size)]
    row = draw(row_of)
    at = draw(st.integers(0, len(base)))
    return Pair(f"generated-{size}", tuple(base), row, at)
