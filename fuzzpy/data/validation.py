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
    kind_from_counts,
    parse_value,
    reason,
)
from fuzzpy.data.csvframe import columns_hint, field_column, schema_error
from fuzzpy.data.loader import NO_TYPE, DataFile, Header, Records, read_records
from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.source import Source, Span
from fuzzpy.ledger.datasets import (
    BAD_POLICY,
    DEFAULT_POLICY,
    SCHEMA_MISMATCH,
    Column,
    Policy,
    dataset_error,
)
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
    _refuse_unreadable(file, header, columns, unique, declared, records)
    return _report(file, header, columns, unique, inferred, notes, records, limit)


def _refuse_unreadable(file: DataFile, header: Header, columns: tuple[Column, ...], indices: list[int],
                       declared: dict[str, str], records: Records) -> None:
    """Refuse a declared type that no cell of its column fits (issue 31 item 1,
    review s27c): under it the row rules would drop every row (or replace
    every cell), so every release would be noise alone, and charged. The
    owner's act reads every cell; a run never decides from rows."""
    for column, index, cells in zip(columns, indices, records.cells, strict=True):
        if column.name not in declared or records.count == 0 or bool(cells.fits.any()):
            continue
        all_missing = bool((cells.problems == MISSING).all())
        if all_missing and column.policy.kind == "value":
            continue  # the owner fills an empty column with a declared value
        raise _unreadable_error(file, header, column, index, all_missing)


def _unreadable_error(file: DataFile, header: Header, column: Column, index: int, all_missing: bool) -> Exception:
    found = column_kinds(header, [index])[0].get(index)
    kind = column.kind
    article = "an" if kind == "int" else "a"
    if all_missing or found in (None, NO_TYPE):
        what, hint = ("no cell holds a value (every cell is empty or a missing marker)",
                      f"leave `{column.name}` untyped (drop `--type {column.name}={kind}`), or give its cells a "
                      f"replacement value with `--missing {column.name}=value:V`")
    else:
        spelled = {"int": "integers", "num": "numbers", "bool": "booleans", "string": "text"}[found or "string"]
        what = f"its cells hold {spelled} (`{found}`)"
        hint = (f"declare `--type {column.name}={found}`, the type its cells fit, and read the column as "
                f"`{found}` in the row type")
        if found == "num" and kind == "int":
            hint += (" (a whole number spelled with a decimal point, like `35.0`, is a num, not an int; a "
                     "program reads an int column's values as num too)")
    line, col = (header.csv.header_line, field_column(header.csv.line_bytes(header.csv.header_line), index)) \
        if header.csv is not None else (1, 1)
    message = (f"column `{column.name}` of `{file.path}` is declared `{kind}`, but not one of its cells is "
               f"{article} {kind}: {what}; every row would be dropped and every release would be noise alone")
    return schema_error(SCHEMA_MISMATCH, message, file.path, line=line, col=col, hint=hint)


def _kinds(
    header: Header, unique: list[int], declared: dict[str, str]
) -> tuple[dict[int, str | None], tuple[str, ...], tuple[str, ...]]:
    """Each column's type (declared, else `column_kinds`), the columns
    inferred from their cells, and notes on inferences the owner may want
    to fix."""
    open_columns = [i for i in unique if header.names[i] not in declared]
    kinds, notes = column_kinds(header, open_columns)
    kinds.update({i: declared[header.names[i]] for i in unique if header.names[i] in declared})
    return kinds, tuple(header.names[i] for i in open_columns if _from_cells(header, i)), notes


def column_kinds(header: Header, indices: list[int]) -> tuple[dict[int, str | None], tuple[str, ...]]:
    """The one typing of undeclared columns, `dataset register`'s and a first
    run's on every engine and form (issue 31): a stored column by its stored
    type alone (`cells.stored_kind`: never from its cells), a
    column of text without a type (CSV; bytes) from all its cells
    (`cells.kind_from_counts`)."""
    texts = [i for i in indices if _from_cells(header, i)]
    kinds, notes = _infer(header, texts) if texts else ({}, ())
    kinds.update(stored_kinds(header, [i for i in indices if i not in texts]))
    return kinds, notes


def _from_cells(header: Header, index: int) -> bool:
    """Whether a column is typed from its cells: text with no stored type."""
    from fuzzpy.data.columntypes import BINARY, column_type

    return header.arrow_types is None or column_type(header.arrow_types[index]).family in BINARY


def _reading(kind: str | None) -> str:
    """How the owner's validation reads a column of a registered type: a
    column of no type (None, or `none`: no value in it) as its text."""
    return kind if kind not in (None, NO_TYPE) else "string"


def stored_kinds(header: Header, indices: list[int]) -> dict[int, str | None]:
    """The types of a typed table's columns among `indices` (Parquet, data in
    memory): `cells.stored_kind` of each, from the stored type alone."""
    from fuzzpy.data.cells import stored_kind

    if not indices or header.arrow_types is None:
        return {}
    return {i: stored_kind(header.arrow_types[i]) for i in indices}


def first_run_kinds(file: DataFile, header: Header) -> dict[str, str | None]:
    """The type of every uniquely named column, exactly as `dataset register`
    types it without declarations (`column_kinds`), for a dataset a first run
    registers (issue 31)."""
    unique = [i for i, n in enumerate(header.names) if header.names.count(n) == 1]
    if (header.csv is None and header.table is None) or not isinstance(file.data, bytes):
        from fuzzpy.data.loader import read_data_file, read_header

        if header.arrow_types is not None:  # ParquetFile, not read_table: pyarrow.dataset imports pandas
            import pyarrow.parquet as pq

            header = Header(header.names, header.arrow_types, None, pq.ParquetFile(file.absolute).read())
        else:
            header = read_header(read_data_file(file.absolute))  # a streamed file: its header only was read
    kinds = column_kinds(header, unique)[0]
    return {header.names[i]: kinds[i] for i in unique}


def text_kinds(header: Header) -> dict[str, str | None]:
    """The first-run types of a table's columns (`header.table`, data in
    memory), as `first_run_kinds` types a file's (`column_kinds`)."""
    unique = [i for i, n in enumerate(header.names) if header.names.count(n) == 1]
    kinds = column_kinds(header, unique)[0]
    return {header.names[i]: kinds[i] for i in unique}


def _infer(header: Header, indices: list[int]) -> tuple[dict[int, str | None], tuple[str, ...]]:
    """The types of columns of text, from all their cells
    (`cells.kind_from_counts`); the owner sees the result and may declare
    another. A column inferred as string though most of its cells are
    numbers gets a note naming the first cell that is not."""
    reads = {kind: read_records(header, tuple((i, kind) for i in indices)) for kind in ("string", *INFERENCE_ORDER)}
    texts = reads["string"]
    kinds: dict[int, str | None] = {}
    notes = []
    for j, i in enumerate(indices):
        cells = texts.cells[j]
        nonempty = cells.problems == OK
        present = nonempty & ~np.isin(np.asarray(cells.values, dtype=object), MISSING_MARKERS)
        fit = {k: int((present & ((reads[k].cells[j].problems == OK)
                                  | (reads[k].cells[j].problems == OUT_OF_RANGE))).sum())
               for k in INFERENCE_ORDER}
        finite = int((present & (reads["num"].cells[j].problems == OK)).sum())
        whole = int((present & (reads["int"].cells[j].problems == OK)).sum())
        n_present = int(present.sum())
        kinds[i] = kind_from_counts(texts.count, int(nonempty.sum()), n_present, fit["int"], fit["num"],
                                    fit["bool"], finite, whole)
        wrong = reads["num"].cells[j].problems
        others = np.flatnonzero(present & (wrong != OK) & (wrong != OUT_OF_RANGE))
        if kinds[i] == "string" and 2 * fit["num"] >= n_present > 0 and others.size:
            first = int(others[0])
            where = f"line {texts.lines[first]}" if texts.lines is not None else f"row {first + 1}"
            name = header.names[i]
            notes.append(f"column `{name}` is inferred as string though {fit['num']} of its "
                         f"{n_present} cells are numbers (the first that is not: {where}); "
                         f"declare --type {name}=num (or int) to read it as numbers and apply its "
                         "policy to the others")
    return kinds, tuple(notes)


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
