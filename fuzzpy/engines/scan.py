"""A bag parameter's rows inside an engine, under the dataset's row rules.

Two ways in, both with the loader's semantics (docs/semantics.md, "Data
loading and the order of a run"):

* **Parquet, compiled** (`parquet_select`): the engine reads the file itself,
  streaming, and the row rules are compiled into its scan, cell by cell as
  `fuzzpy.data.cells.parse_typed` reads them: a null is missing; text is
  trimmed of the same Unicode whitespace as Arrow's `utf8_trim_whitespace`
  (`TRIMMED`) and parsed with the same regular expressions (RE2 in DuckDB,
  the same simple patterns in Java); strings become doubles by correctly
  rounded conversion in all three (fast_float in Arrow and DuckDB, Java's
  `Double.parseDouble`); a non-finite double, a fractional double read as an
  int, an int beyond 64 bits are cells that do not fit; each column's
  policy drops the row or replaces the cell by its constant. Column types
  whose text form the engines spell differently from Arrow (decimals,
  binary, a float read as a string...) are not compiled: `compilable`
  says so and the file goes the other way.
* **Through fuzzpy's loader** (`arrow_table`): the file is loaded by
  `fuzzpy.data.loader` exactly as in memory (CSV always: records framed
  by physical line, ragged and unclosed lines dropped), and the loaded
  columns are handed to the engine as an Arrow table.

Each row has an id, unique within the bag, that `subsample` hashes: a
Parquet row's position in the file, a loaded row's position among the
loaded rows.
"""

from __future__ import annotations

import os

from fuzzpy.data.cells import _INT_TEXT, _NUM_TEXT, INT_LIMIT
from fuzzpy.data.columntypes import INTEGER, TEXT, ColumnType, column_type
from fuzzpy.data.loader import ColumnRead, Plan
from fuzzpy.engines.sql import Dialect, literal_sql
from fuzzpy.language.categories import TRIMMED
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.values import Record
from fuzzpy.support.lazy import lazy

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)
np = lazy("numpy")

#: Characters an engine reads in a file's path as a pattern of file names
#: (DuckDB's glob: * ? [ ]; Hadoop's, under Spark: also { } and the escape \):
#: given the path of a file named with them, the engine would read other
#: files than the one hashed (`d[12].parquet` reads `d1.parquet`).
PATTERN_CHARACTERS = frozenset("*?[]{}" + ("\\" if os.sep == "/" else ""))


def pattern_obstacle(path: str, engine: str) -> str | None:
    """Why `engine` cannot be given `path` to read (None: it can)."""
    if PATTERN_CHARACTERS.intersection(path):
        return f"{engine} reads its path as a pattern of file names (it has one of * ? [ ] {{ }} \\)"
    return None


ROW_ID = "_fz_row"


def column_name(index: int) -> str:
    return f"_fz_c{index}"


# ---------------------------------------------------------------- through the loader


def arrow_table(bag: Bag, plan: Plan) -> pa.Table:
    """A loaded bag's columns (`fuzzpy.data.loader.load`) as an Arrow
    table with the scan's column names and a row id."""
    view = bag.view()
    if plan.shape == "record":
        arrays = [view.get(name) for name in plan.fields]
    elif plan.shape == "vector":
        arrays = [view[:, i] for i in range(view.shape[1])]
    else:
        arrays = [view]
    columns = {}
    for index, (read, values) in enumerate(zip(plan.columns, arrays, strict=True)):
        kind = "num" if plan.shape == "vector" else read.kind
        data = values.tolist() if kind == "string" else values
        columns[column_name(index)] = pa.array(data, _arrow_type(kind))
    count = len(bag)
    columns[ROW_ID] = pa.array(np.arange(count, dtype=np.int64))
    return pa.table(columns)


def _arrow_type(kind: str) -> pa.DataType:
    return {"int": pa.int64, "num": pa.float64, "bool": pa.bool_, "string": pa.string}[kind]()


# ---------------------------------------------------------------- Parquet, compiled


def compilable(arrow_type: pa.DataType | ColumnType, kind: str) -> bool:
    """Whether the engine can read a Parquet column of this type as `kind`
    with exactly the loader's semantics."""
    family = column_type(arrow_type).family
    if family in TEXT:
        return True
    if family in INTEGER:
        return True  # a decimal integer's text is the same everywhere
    if family == "float":
        return kind in ("num", "int", "bool")
    if family == "bool":
        return kind in ("bool", "string")
    return False


class Cell:
    """One column's value and whether its cell fits, as SQL over the raw file."""

    def __init__(self, value: str, fits: str) -> None:
        self.value = value
        self.fits = fits


def cell_sql(d: Dialect, raw: str, arrow_type: pa.DataType | ColumnType, kind: str) -> Cell:
    described = column_type(arrow_type)
    family = described.family
    if family in TEXT:
        return _text_cell(d, raw, kind)
    present = f"({raw} IS NOT NULL)"
    if family in INTEGER:
        fits = present
        if family == "uint" and described.bit_width == 64 and kind != "num":  # a uint64 read as num: every value
            fits = f"({present} AND {raw} <= {INT_LIMIT})"
        if kind == "int":
            if family == "int" and described.bit_width == 64:
                fits = f"({present} AND {raw} >= -{INT_LIMIT})"  # -2^63: |n| > 2^63 - 1, as in a CSV
            return Cell(f"CAST({raw} AS BIGINT)", fits)
        if kind == "num":
            return Cell(f"CAST({raw} AS DOUBLE)", fits)
        if kind == "bool":
            return Cell(f"({raw} = 1)", f"({fits} AND {raw} IN (0, 1))")
        return _text_cell(d, f"CAST({raw} AS {_text_type(d)})", "string")
    if family == "float":
        x = f"CAST({raw} AS DOUBLE)"
        finite = f"({present} AND NOT isnan({x}) AND abs({x}) <= {d.double(1.7976931348623157e308)})"
        if kind == "num":
            return Cell(f"({x} + {d.double(0.0)})", finite)  # -0 reads as 0, as the loader reads it
        if kind == "bool":  # 0.0 and 1.0, as an int column's 0 and 1 (an int column with a missing cell, in pandas)
            return Cell(f"({x} = {d.double(1.0)})", f"({finite} AND ({x} = {d.double(0.0)} OR {x} = {d.double(1.0)}))")
        # Whole and within 64 bits, tested in doubles only: Spark's floor() of a double is a
        # BIGINT, which overflows under ANSI mode beyond 2^63, so a test with it failed the
        # run on the neighbour holding such a cell (issue 24); `%` is exact on doubles
        whole = f"({finite} AND abs({x}) < {d.double(2.0 ** 63)} AND {x} % {d.double(1.0)} = {d.double(0.0)})"
        return Cell(f"(CASE WHEN {whole} THEN CAST({x} AS BIGINT) ELSE {d.bigint(0)} END)", whole)
    if kind == "string":  # a boolean column read as text
        return _text_cell(d, f"(CASE WHEN {raw} THEN 'true' WHEN NOT {raw} THEN 'false' END)", "string")
    return Cell(f"coalesce({raw}, FALSE)", present)


def _text_type(d: Dialect) -> str:
    return "STRING" if d.name == "spark" else "VARCHAR"


def _trim(d: Dialect, text: str) -> str:
    chars = d.string(TRIMMED)
    if d.name == "spark":
        return f"trim(BOTH {chars} FROM coalesce({text}, ''))"
    return fast_trim(f"coalesce({text}, '')", chars)


def may_trim(d: Dialect, text: str) -> str:
    """Whether trimming `text` (not NULL) may change it: its first or last
    code point is one trimmed, or it is empty (`fast_trim`'s test)."""
    chars = d.string(TRIMMED)
    if d.name == "spark":
        return f"(trim(BOTH {chars} FROM {text}) <> {text} OR {text} = '')"
    return f"(contains({chars}, left({text}, 1)) OR contains({chars}, right({text}, 1)))"


def fast_trim(text: str, chars: str) -> str:
    """DuckDB's `trim(text, chars)`, called only where it can remove
    something: when the first or the last code point (`left`, `right`: code
    points, not grapheme clusters) is one of `chars`; an empty text is
    trimmed too. DuckDB's trim with a set of characters costs ten times a
    scan of the column (issue 24); most cells have nothing to trim. The
    same value for every text (tests/engines/test_fast_trim.py)."""
    return (f"(CASE WHEN contains({chars}, left({text}, 1)) OR contains({chars}, right({text}, 1)) "
            f"THEN trim({text}, {chars}) ELSE {text} END)")


def _matches(d: Dialect, text: str, pattern: str) -> str:
    if d.name == "spark":
        return f"({text} RLIKE {d.string(pattern)})"
    return f"regexp_matches({text}, {d.string(pattern)})"


def _text_cell(d: Dialect, raw: str, kind: str) -> Cell:
    """`cells.parse_text`: trimmed; empty is missing; then the kind's spelling."""
    text = _trim(d, raw)
    present = f"({text} <> '')"
    if kind == "string":
        return Cell(text, present)
    if kind == "bool":
        lowered = f"lower({text})"
        return Cell(f"({lowered} IN ('true', '1'))", f"({lowered} IN ('true', '1', 'false', '0'))")
    unsigned = f"(CASE WHEN substr({text}, 1, 1) = '+' THEN substr({text}, 2) ELSE {text} END)"
    if kind == "num":
        value = f"try_cast({unsigned} AS DOUBLE)"
        spelled = _matches(d, text, _NUM_TEXT)
        fits = f"({spelled} AND NOT isnan({value}) AND abs({value}) <= {d.double(1.7976931348623157e308)})"
        return Cell(f"(CASE WHEN {fits} THEN {value} + {d.double(0.0)} ELSE {d.double(0.0)} END)", fits)
    digits = f"regexp_replace({text}, '^[+-]?0*', '')"
    negative = f"(substr({text}, 1, 1) = '-')"
    in_range = f"(length({digits}) < 19 OR (length({digits}) = 19 AND {digits} <= '{INT_LIMIT}'))"
    fits = f"({_matches(d, text, _INT_TEXT)} AND {in_range})"
    magnitude = f"coalesce(try_cast({digits} AS BIGINT), {d.bigint(0)})"
    value = f"(CASE WHEN {fits} THEN (CASE WHEN {negative} THEN -{magnitude} ELSE {magnitude} END) ELSE {d.bigint(0)} END)"
    return Cell(value, fits)


def row_rule_value(d: Dialect, read: ColumnRead, cell: Cell, keep: list[str]) -> str:
    """A column's value under its row rule: the cell, or the declared
    replacement where the cell does not fit (`value:V`); under `drop` the
    cell's test is added to `keep`, the conditions a kept row meets."""
    if read.policy.kind == "value":
        replacement = literal_sql(d, read.kind, read.replacement)
        return f"(CASE WHEN {cell.fits} THEN {cell.value} ELSE {replacement} END)"
    keep.append(cell.fits)
    return cell.value


def parquet_select(d: Dialect, source: str, row_index: str, plan: Plan,
                   arrow_types: tuple[pa.DataType | ColumnType, ...], names: tuple[str, ...],
                   all_fit: bool = False, count_trims: bool = False, untrimmed: bool = False) -> tuple[str, str]:
    """The scan's SELECT over the raw file (`source`, with `row_index` its
    position column), and the SELECT of the owner's audit counts.
    `all_fit`: the audit found every cell fits, so the per-cell tests are
    left out of the scan (they would keep every row and replace nothing;
    the file is checked to be unchanged after computing).
    `count_trims`: the audit ends with one more count, of the text cells
    read as strings that trimming changes (`audit_trims`); `untrimmed`
    (with `all_fit`): it found none, so those cells are read as they are
    (the trim would return each unchanged; issue 24: it costs more than
    the scan)."""
    values, keep, audit, trims = [], [], ["count(*)"], []
    for index, read in enumerate(plan.columns):
        kind = "num" if plan.shape == "vector" else read.kind
        raw = d.ident(names[read.index])
        cell = cell_sql(d, raw, arrow_types[read.index], kind)
        as_text = kind == "string" and column_type(arrow_types[read.index]).family in TEXT
        if as_text:  # trimming may change it: `fast_trim`'s test (an empty cell counts: it does not fit)
            trims.append(f"({raw} IS NULL OR {may_trim(d, raw)})")
        if all_fit and untrimmed and as_text:
            value = raw
        else:
            value = cell.value if all_fit else row_rule_value(d, read, cell, keep)
        values.append(f"{value} AS {d.ident(column_name(index))}")
        audit.append(count_where(f"NOT {cell.fits}"))
    where = " AND ".join(keep) or "TRUE"
    audit.append(f"count(*) FILTER (WHERE {where})")
    if count_trims:
        audit.append(count_where(" OR ".join(trims)) if trims else "0")
    if all_fit:
        where = "TRUE"
    select = f"SELECT {', '.join(values)}, {row_index} AS {d.ident(ROW_ID)} FROM {source} WHERE {where}"
    return select, f"SELECT {', '.join(audit)} FROM {source}"


def count_where(condition: str) -> str:
    """The number of rows where `condition` holds, as `count(*) FILTER (WHERE
    ..)` counts them, without a FILTER: DuckDB evaluates the filtered
    aggregates of one query in time quadratic in their number (one per
    column here). NULL when there are no rows."""
    return f"sum(CASE WHEN {condition} THEN 1 ELSE 0 END)"


def parquet_report(plan: Plan, counts: tuple[int, ...]) -> dict[str, object]:
    """The loader's report (`loader.load`) from the audit query's counts."""
    total, *bad, kept = counts
    columns: dict[str, object] = {}
    replaced = 0
    for read, cells in zip(plan.columns, bad, strict=True):
        if cells:
            columns[read.name] = {"policy": str(read.policy), "cells": int(cells)}
        if read.policy.kind == "value":
            replaced += int(cells)
    return {"rows_dropped": int(total) - int(kept), "malformed_lines": 0, "cells_replaced": replaced,
            "columns": columns}


def scan_row(scan, nodes) -> object:  # type: ignore[no-untyped-def]
    """The row a per-row function is traced on: the scan's columns."""
    from fuzzpy.engines.rows import Sym, SymVector

    leaves = [nodes.column(name, kind) for name, kind in scan.columns]
    if scan.shape == "record":
        return Record({f: Sym(n) for f, n in zip(scan.fields, leaves, strict=True)})
    if scan.shape == "vector":
        return SymVector(tuple(leaves))
    return Sym(leaves[0])
