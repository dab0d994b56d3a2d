"""A data owner's validation of a dataset: its schema, and every row that
does not fit it, located (file:line:col) and with what the row rules do.

This is the only place that reports anything about rows, and it reports to
the data owner (`fuzzpy dataset register/check/update`), never to a run. It
reads every column of the file under its registered type (declared, or
inferred from the data here and shown to the owner before it becomes the
public schema), so `refuse` can be checked: a column whose policy is
`refuse` must have no cell that does not fit, or the validation fails and
the dataset cannot be registered (or updated) with this file.
"""

from __future__ import annotations

import csv
import heapq
import itertools
from collections.abc import Iterator
from dataclasses import field

import numpy as np

from fuzzpy.data.cells import (
    INFERENCE_ORDER,
    MISSING,
    MISSING_MARKERS,
    NOT_UTF8,
    OK,
    OUT_OF_RANGE,
    Cells,
    kind_of_arrow,
    parse_value,
    reason,
)
from fuzzpy.data.csvframe import columns_hint, field_column, schema_error
from fuzzpy.data.loader import NO_TYPE, DataFile, Header, Records, read_records
from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.source import Source, Span
from fuzzpy.ledger.datasets import BAD_POLICY, DEFAULT_POLICY, Column, Policy, dataset_error
from fuzzpy.support.records import frozen

_MARKERS = frozenset(MISSING_MARKERS)


@frozen
class DataLines(Source):
    """The lines of a data file that diagnostics show (a data file may be
    large: only these are kept)."""

    lines: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_line_starts", (0,))

    def line_text(self, line: int) -> str:
        return self.lines.get(line, "")


@frozen
class Validation:
    columns: tuple[Column, ...]  # the schema: each column's type and policy
    inferred: tuple[str, ...]  # the columns whose type was inferred from the data
    notes: tuple[str, ...]  # about inferences the owner may want to fix
    records: int  # records with every field (CSV: malformed and ragged lines apart)
    counts: dict[str, object]  # what the row rules do: the owner's report
    problems: tuple[Diagnostic, ...]  # the first `limit`, located
    unlisted: int  # problems beyond `limit`
    refused: int  # cells of `refuse` columns that do not fit
    shown_lines: DataLines


def validate(
    file: DataFile,
    header: Header,
    declared: dict[str, str],
    policies: dict[str, Policy],
    default: Policy = DEFAULT_POLICY,
    limit: int = 20,
) -> Validation:
    """Type every column (declared, else inferred), check the policies, and
    locate every cell that does not fit."""
    names = header.names
    for name in [*declared, *policies]:
        if name not in names:
            raise schema_error("FZ503", f"data file `{file.path}` has no column `{name}`", file.path,
                               hint=columns_hint(names))
    unique = [i for i, n in enumerate(names) if names.count(n) == 1]
    kinds, inferred, notes = _kinds(header, unique, declared)
    columns = tuple(Column(names[i], kinds[i], policies.get(names[i], default)) for i in unique)
    for column in columns:
        if column.policy.kind == "value" and parse_value(column.policy.value or "", _reading(column.kind)) is None:
            raise dataset_error(BAD_POLICY, f"the replacement value `{column.policy.value}` of column "
                                f"`{column.name}` is not {'an' if column.kind == 'int' else 'a'} {column.kind}")
    records = read_records(header, tuple((i, _reading(kinds[i])) for i in unique))
    return _report(file, header, columns, unique, inferred, notes, records, limit)


def _kinds(
    header: Header, unique: list[int], declared: dict[str, str]
) -> tuple[dict[int, str | None], tuple[str, ...], tuple[str, ...]]:
    """Each column's type (declared, a Parquet column's own, else inferred),
    the columns inferred, and notes on inferences the owner may want to fix."""
    kinds: dict[int, str | None] = {}
    for i in unique:
        name = header.names[i]
        if name in declared:
            kinds[i] = declared[name]
        elif header.arrow_types is not None:
            kinds[i] = kind_of_arrow(header.arrow_types[i])
        else:
            kinds[i] = None
    open_columns = [i for i in unique if kinds[i] is None and header.arrow_types is None]
    chosen, notes = _infer(header, open_columns) if open_columns else ([], ())
    kinds.update(zip(open_columns, chosen, strict=True))
    stored = [i for i in unique if header.names[i] not in declared and header.arrow_types is not None]
    kinds.update(stored_without_values(header, stored))
    return kinds, tuple(header.names[i] for i in open_columns), notes


def _reading(kind: str | None) -> str:
    """How the owner's validation reads a column of a registered type: a
    column of no type (None, or `none`: no value in it) as its text."""
    return kind if kind not in (None, NO_TYPE) else "string"


def stored_without_values(header: Header, indices: list[int]) -> dict[int, str]:
    """The columns of a typed table (Parquet, data in memory) among `indices`
    that hold no value in any of its rows (every cell null; a float column:
    null or NaN): `none` (issue 31, F2). A table without rows types nothing."""
    from fuzzpy.data.columntypes import column_type

    table = header.table
    if table is None or table.num_rows == 0:
        return {}
    found: dict[int, str] = {}
    for i in indices:
        column = table.column(i)
        if column.null_count == table.num_rows:
            found[i] = NO_TYPE
        elif column_type(column.type).family == "float":
            import pyarrow.compute as pc

            if not pc.any(pc.invert(pc.is_nan(column.cast("float64")))).as_py():
                found[i] = NO_TYPE
    return found


def first_run_kinds(file: DataFile, header: Header) -> dict[str, str | None]:
    """The type of every uniquely named column, as `dataset register` infers
    it without declarations (a Parquet column's own type; a CSV column's,
    and a Parquet text column's, from its cells: what at least half of them
    hold), for a dataset a first run registers (issue 31). A column with no
    present cell gets no type (each program's row type says): nothing in it
    could contradict a declaration."""
    unique = [i for i, n in enumerate(header.names) if header.names.count(n) == 1]
    if header.arrow_types is not None:  # a stored int or bool column reads as its readings allow (issue 24)
        kinds: dict[int, str | None] = dict.fromkeys(unique)
        open_columns = _text_columns(header, unique)
    else:
        kinds, open_columns = dict.fromkeys(unique), unique
    if open_columns and ((header.csv is None and header.table is None) or not isinstance(file.data, bytes)):
        from fuzzpy.data.loader import read_data_file, read_header

        if header.arrow_types is not None:  # ParquetFile, not read_table: pyarrow.dataset imports pandas
            import pyarrow.parquet as pq

            header = Header(header.names, header.arrow_types, None, pq.ParquetFile(file.absolute).read())
        else:
            header = read_header(read_data_file(file.absolute))  # a streamed file: its header only was read
    kinds.update(_typed_by_cells(header, open_columns))
    if header.arrow_types is not None:
        if header.table is None:
            import pyarrow.parquet as pq

            header = Header(header.names, header.arrow_types, None, pq.ParquetFile(file.absolute).read())
        kinds.update(stored_without_values(header, [i for i in unique if i not in open_columns]))
    return {header.names[i]: kinds[i] for i in unique}


def text_kinds(header: Header) -> dict[str, str | None]:
    """The first-run types of a table's text columns (`header.table`, data
    in memory), from their cells, as `first_run_kinds` types a file's."""
    unique = [i for i, n in enumerate(header.names) if header.names.count(n) == 1]
    typed = _text_columns(header, unique)
    kinds = _typed_by_cells(header, typed)
    kinds.update(stored_without_values(header, [i for i in unique if i not in typed]))
    return {header.names[i]: kind for i, kind in kinds.items()}


def _text_columns(header: Header, unique: list[int]) -> list[int]:
    """The columns of a typed table (Parquet, data in memory) typed by their
    cells: text (or bytes: a pandas `object` column), and floats (an int
    column with a missing value is float64 in pandas: whole floats read as
    `int`, issue 24)."""
    from fuzzpy.data.columntypes import BINARY, TEXT, column_type

    if header.arrow_types is None:
        return []
    return [i for i in unique if column_type(header.arrow_types[i]).family in (*TEXT, *BINARY, "float")]


def _typed_by_cells(header: Header, indices: list[int]) -> dict[int, str | None]:
    """What most present cells of each column hold; `none` for a column with
    no present cell in a table that has records (issue 31, F2: reading it
    would drop every row), None when there is no record at all."""
    if not indices:
        return {}
    records = read_records(header, tuple((i, "string") for i in indices))
    texts = records.cells
    kinds: dict[int, str | None] = dict(zip(indices, _infer(header, indices, True, texts)[0], strict=True))
    for i, cells in zip(indices, texts, strict=True):
        present = np.asarray(cells.values, dtype=object)[(cells.problems != MISSING) & (cells.problems != NOT_UTF8)]
        if all(v in _MARKERS for v in present):  # stops at the first cell that is not a marker
            kinds[i] = NO_TYPE if records.count else None
        elif kinds[i] == "int" and header.arrow_types is not None and _is_float(header.arrow_types[i]):
            kinds[i] = None  # whole floats: read as int or num (issue 24; never bool, issue 31), as each program says
    return kinds


def _is_float(arrow_type: object) -> bool:
    from fuzzpy.data.columntypes import column_type

    return column_type(arrow_type).family == "float"


def _infer(header: Header, indices: list[int], majority: bool = False,
           texts: tuple[Cells, ...] | None = None) -> tuple[list[str], tuple[str, ...]]:
    """The narrowest of int, num, bool that every present cell of a column
    fits, else string; the owner sees the result and may declare another.
    A column inferred as string though most of its cells are numbers gets a
    note naming the first cell that is not."""
    chosen = ["string"] * len(indices)
    notes = []
    undecided = list(range(len(indices)))
    if texts is None:
        texts = read_records(header, tuple((i, "string") for i in indices)).cells
    marks: dict[int, np.ndarray] = {}

    def marked(j: int, cells: Cells) -> np.ndarray:
        """The column's cells spelled as missing (`NA`, ...), found once,
        and only for a column with a cell its kind does not fit."""
        if j not in marks:
            fits = (cells.problems == OK) | (cells.problems == OUT_OF_RANGE)
            if fits.all():
                return np.zeros(cells.problems.shape, dtype=bool)
            marks[j] = np.isin(np.asarray(texts[j].values, dtype=object), MISSING_MARKERS)
        return marks[j]

    for kind in INFERENCE_ORDER:
        records = read_records(header, tuple((indices[j], kind) for j in undecided))
        still = []
        for j, cells in zip(undecided, records.cells, strict=True):
            present = (cells.problems != MISSING) & (cells.problems != NOT_UTF8) & ~marked(j, cells)
            # a number beyond the kind's range (nan, inf, 1e400; an int beyond 64 bits) is of the kind: dropped
            fitting = int(((cells.problems[present] == OK) | (cells.problems[present] == OUT_OF_RANGE)).sum())
            # a first run's typing (`majority`): what at least half the present cells hold, so that
            # one row (a neighbour's) does not retype a column with another cell of the kind
            if present.any() and (2 * fitting >= int(present.sum()) if majority else fitting == int(present.sum())):
                chosen[j] = kind
                continue
            still.append(j)
            if kind == "num" and 2 * fitting >= int(present.sum()) > 0:
                first = int(np.flatnonzero(present & (cells.problems != OK) & (cells.problems != OUT_OF_RANGE))[0])
                where = f"line {records.lines[first]}" if records.lines is not None else f"row {first + 1}"
                name = header.names[indices[j]]
                notes.append(f"column `{name}` is inferred as string though {fitting} of its "
                             f"{int(present.sum())} cells are numbers (the first that is not: {where}); "
                             f"declare --type {name}=num (or int) to read it as numbers and apply its "
                             "policy to the others")
        undecided = still
        if not undecided:
            break
    return _without_values(header, indices, chosen, texts), tuple(notes)


def _without_values(header: Header, indices: list[int], chosen: list[str], texts: tuple[Cells, ...]) -> list[str]:
    """The types chosen, where a column with records but no value of any
    type becomes `none` (issue 31, F2): no present cell (every one empty,
    not UTF-8 or a missing marker), or numbers none of which is finite
    (`inf`, `1e999`); and an `int` column none of whose integers fits in 64
    bits becomes `num` if some are finite numbers. Counted as
    `csvscan.kinds_of` counts them (the DuckDB engine's typing)."""
    chosen = list(chosen)

    def stored_float(i: int) -> bool:  # whole floats stay untyped (`_typed_by_cells`, issue 24)
        return header.arrow_types is not None and _is_float(header.arrow_types[i])

    numeric = [j for j, kind in enumerate(chosen) if kind in ("int", "num")]
    as_num = read_records(header, tuple((indices[j], "num") for j in numeric)).cells if numeric else ()
    as_int = dict(zip(numeric, read_records(header, tuple((indices[j], "int") for j in numeric)).cells
                      if numeric else (), strict=True))
    finite = {j: int((cells.problems == OK).sum()) for j, cells in zip(numeric, as_num, strict=True)}
    for j, cells in enumerate(texts):
        if not cells.problems.size:
            continue  # no record: nothing to type by
        present = (cells.problems != MISSING) & (cells.problems != NOT_UTF8)
        present &= ~np.isin(np.asarray(cells.values, dtype=object), MISSING_MARKERS)
        if not present.any() or (j in finite and finite[j] == 0):
            chosen[j] = NO_TYPE
        elif chosen[j] == "int" and not (as_int[j].problems == OK).any() and not stored_float(indices[j]):
            chosen[j] = "num"
    return chosen


def _report(
    file: DataFile, header: Header, columns: tuple[Column, ...], indices: list[int],
    inferred: tuple[str, ...], notes: tuple[str, ...], records: Records, limit: int,
) -> Validation:
    keep = np.ones(records.count, dtype=bool)
    per_column: dict[str, object] = {}
    refused = replaced = 0
    for column, cells in zip(columns, records.cells, strict=True):
        bad = ~cells.fits
        count = int(bad.sum())
        if column.policy.kind == "value":
            replaced += count
        else:
            keep &= ~bad
        refused += count if column.policy.kind == "refuse" else 0
        if count:
            reasons = np.bincount(cells.problems[bad], minlength=5)
            per_column[column.name] = {
                "policy": str(column.policy), "cells": count,
                "missing": int(reasons[MISSING]), "not_utf8": int(reasons[NOT_UTF8]),
                "wrong_type": int(reasons[3]), "out_of_range": int(reasons[4]),
            }
    counts = {
        "records": records.count,
        "rows_dropped": int((~keep).sum()) + int(records.dropped_lines.size),
        "malformed_lines": int(records.dropped_lines.size),
        "cells_replaced": replaced,
        "cells_refused": refused,
        "columns": per_column,
    }
    total = int(records.dropped_lines.size) + sum(int((~c.fits).sum()) for c in records.cells)
    shown = DataLines(file.path, "", {})
    first = itertools.islice(_problems(file, header, columns, indices, records), limit)
    listed = tuple(_located(diagnostic, header, shown) for diagnostic in first)
    return Validation(columns, inferred, notes, records.count, counts, listed, total - len(listed), refused,
                      shown)


def _problems(
    file: DataFile, header: Header, columns: tuple[Column, ...], indices: list[int], records: Records
) -> Iterator[Diagnostic]:
    """Every problem, in file order."""
    return heapq.merge(_line_problems(file, header, records), _cell_problems(file, columns, indices, records),
                       key=lambda diagnostic: diagnostic.span.line)


def _line_problems(file: DataFile, header: Header, records: Records) -> Iterator[Diagnostic]:
    malformed = [(line, "a quoted value does not close on the line, or a carriage return is inside it")
                 for line in records.malformed_lines.tolist()]
    ragged = [(line, _fields_text(fields, len(header.names)))
              for line, fields in zip(records.ragged_lines.tolist(), records.ragged_fields.tolist(), strict=True)]
    for line, why in sorted(malformed + ragged):
        yield Diagnostic("FZ505", f"line {line} is not one record: {why}: the line is dropped",
                         Span(file.path, line, 1, line, 1), severity="warning")


def _fields_text(fields: int, wanted: int) -> str:
    if fields < 0:  # a line the CSV reader would not take (see `loader._csv_table`)
        return f"it does not split into the header's {wanted} fields"
    return f"it has {fields} field{'s' if fields != 1 else ''}; the header has {wanted}"


def _cell_problems(
    file: DataFile, columns: tuple[Column, ...], indices: list[int], records: Records
) -> Iterator[Diagnostic]:
    bad_rows = np.zeros(records.count, dtype=bool)
    for cells in records.cells:
        bad_rows |= ~cells.fits
    for row in np.flatnonzero(bad_rows).tolist():
        for column, index, cells in zip(columns, indices, records.cells, strict=True):
            problem = int(cells.problems[row])
            if problem == OK:
                continue
            outcome = {"drop": "the row is dropped", "refuse": "refused: the policy is `refuse`",
                       "value": f"the cell is replaced by `{column.policy.value}`"}[column.policy.kind]
            code = "FZ506" if problem == MISSING else "FZ504"
            where = f"row {row + 1}, " if records.lines is None else ""
            line = row + 1 if records.lines is None else int(records.lines[row])
            yield Diagnostic(
                code, f"{where}column `{column.name}`: {reason(problem, _reading(column.kind))}: {outcome}",
                Span(file.path, line, index + 1, line, index + 2),
                severity="error" if column.policy.kind == "refuse" else "warning",
            )


def _located(diagnostic: Diagnostic, header: Header, shown: DataLines) -> Diagnostic:
    """Point a CSV problem at its cell's character column and keep its line
    to show (a Parquet file has no lines: its spans are row, column)."""
    if header.csv is None:
        return diagnostic
    span = diagnostic.span
    text = header.csv.line_bytes(span.line)
    if diagnostic.code == "FZ505":
        index, width = 0, len(text)
    else:
        index = span.col - 1
        width = max(_field_width(text, index), 1)
    col = field_column(text, index) if index else 1
    shown.lines[span.line] = text.decode("utf-8", errors="replace")
    return Diagnostic(diagnostic.code, diagnostic.message, Span(span.file, span.line, col, span.line, col + width),
                      severity=diagnostic.severity)


def _field_width(line: bytes, index: int) -> int:
    fields = next(csv.reader([line.decode("utf-8", errors="replace")]), [])
    return len(fields[index]) if index < len(fields) else 1
