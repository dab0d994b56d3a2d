"""Loading a `bag` parameter's data from CSV or Parquet (pyarrow), as columns.

Columns are matched to the row type by name: a `bag { age : num, ... }` reads
the columns `age`, ...; a bag of a base type (`bag num`) reads the file's
only column; a `bag (vec[p] num)` reads every column, in order, as one
vector per row. Extra columns are ignored. Every problem is a `FuzzError`
with an FZ5xx code (exit 2), raised before anything is charged: an
unreadable or empty file, a missing column (named, with the file's columns
listed), a missing value or a value of the wrong type (row and column named).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from fuzzpy.diagnostics import Diagnostic, FuzzError
from fuzzpy.runtime.bag import Bag, Column
from fuzzpy.runtime.values import Record
from fuzzpy.source import Span
from fuzzpy.types import TBag, TBool, TInt, TNum, TString, TVec, Type

_ARROW_TYPES: dict[type, pa.DataType] = {
    TNum: pa.float64(),
    TInt: pa.int64(),
    TBool: pa.bool_(),
    TString: pa.string(),
}
_TYPE_NAMES = {TNum: "num", TInt: "int", TBool: "bool", TString: "string"}
_INT_TEXT = re.compile(r"^\s*[+-]?\d+\s*$")
_NUM_TEXT = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$|^\s*[+-]?(inf|nan)\s*$", re.I)
_BOOL_TEXT = re.compile(r"^\s*(true|false|1|0)\s*$", re.I)
_PATTERNS = {TInt: _INT_TEXT, TNum: _NUM_TEXT, TBool: _BOOL_TEXT}


def data_error(code: str, message: str, path: str, hint: str | None = None) -> FuzzError:
    return FuzzError((Diagnostic(code, message, Span(str(path), 1, 1, 1, 1), hint=hint),))


def content_hash(path: str | Path) -> str:
    """sha256 of the file's bytes: the dataset's default ledger key."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise data_error("FZ501", f"cannot read data file `{path}`: {exc.strerror or exc}", str(path)) from None
    return "sha256:" + digest.hexdigest()


def load_bag(path: str | Path, bag_type: Type) -> Bag:
    """The file's rows as a columnar `Bag` of the given `bag` type."""
    if not isinstance(bag_type, TBag):
        raise data_error("FZ507", f"only `bag` parameters read data files, not `{bag_type}`", str(path))
    table, header = _read_table(Path(path), _wanted_columns(bag_type.elem))
    return Bag(_columns(table, header, bag_type.elem, str(path)))


def _wanted_columns(row: Type) -> dict[str, pa.DataType] | None:
    from fuzzpy.types import TRecord

    if isinstance(row, TRecord):
        return {name: _ARROW_TYPES[type(t)] for name, t in row.fields if type(t) in _ARROW_TYPES}
    return None


def _read_table(path: Path, wanted: dict[str, pa.DataType] | None) -> tuple[pa.Table, list[str]]:
    """The table (only the wanted columns, typed when possible) and the file's column names."""
    name = str(path)
    try:
        if path.stat().st_size == 0:
            raise _empty(name)
        if _is_parquet(path):
            table = pq.read_table(path)
            return table, table.column_names
        header = pacsv.open_csv(path).schema.names
        try:
            return _read_csv(path, wanted, header), header
        except pa.ArrowInvalid as exc:
            if wanted is None or "conversion error" not in str(exc).lower():
                raise
            return _read_csv(path, None, header), header  # read as text to name the bad cell
    except pa.ArrowInvalid as exc:
        if "empty csv" in str(exc).lower():
            raise _empty(name) from None
        raise data_error("FZ505", f"cannot parse data file `{name}`: {_first_line(exc)}", name) from None
    except (OSError, pa.ArrowException) as exc:
        reason = getattr(exc, "strerror", None) or _first_line(exc)
        raise data_error("FZ501", f"cannot read data file `{name}`: {reason}", name) from None


def _empty(name: str) -> FuzzError:
    return data_error("FZ502", f"data file `{name}` is empty", name, hint="the first line must name the columns")


def _read_csv(path: Path, wanted: dict[str, pa.DataType] | None, header: list[str]) -> pa.Table:
    if wanted is None:
        types = dict.fromkeys(header, pa.string())
        convert = pacsv.ConvertOptions(column_types=types, strings_can_be_null=True)
        return pacsv.read_csv(path, convert_options=convert)
    types = {k: v for k, v in wanted.items() if k in header}
    convert = pacsv.ConvertOptions(column_types=types, include_columns=list(types), strings_can_be_null=False)
    return pacsv.read_csv(path, convert_options=convert)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _columns(table: pa.Table, header: list[str], row: Type, path: str) -> Column:
    from fuzzpy.types import TRecord

    names = table.column_names
    if isinstance(row, TRecord):
        fields = {}
        for field_name, field_type in row.fields:
            if field_name not in names:
                raise data_error(
                    "FZ503",
                    f"data file `{path}` has no column `{field_name}` (the row type needs it)",
                    path,
                    hint="the file's columns are: " + ", ".join(f"`{n}`" for n in header),
                )
            if header.count(field_name) > 1:
                raise data_error(
                    "FZ505",
                    f"data file `{path}` has {header.count(field_name)} columns named `{field_name}`: "
                    "which one the row type means is ambiguous",
                    path,
                    hint="rename or drop the duplicates",
                )
            fields[field_name] = _column(table, field_name, field_type, path)
        return Record(fields)
    if isinstance(row, TVec):
        parts = [_column(table, n, TNum(), path) for n in names]
        return np.column_stack(parts) if parts else np.zeros((table.num_rows, 0))
    if len(names) != 1:
        raise data_error(
            "FZ503",
            f"a bag of `{row}` reads a file with exactly one column; `{path}` has {len(names)}",
            path,
            hint="the file's columns are: " + ", ".join(f"`{n}`" for n in names),
        )
    return _column(table, names[0], row, path)


def _column(table: pa.Table, name: str, kind: Type, path: str) -> np.ndarray:
    if type(kind) not in _ARROW_TYPES:
        raise data_error("FZ507", f"column `{name}` has type `{kind}`, which cannot be read from a data file", path)
    column = table.column(name)
    target = _ARROW_TYPES[type(kind)]
    if column.null_count and isinstance(kind, TString):
        column = pc.fill_null(column, "")
    if column.null_count:
        row = _first_index(pc.is_null(column))
        raise data_error("FZ506", f"{_where(path, row, name)}: the value is missing", path)
    if not column.type.equals(target):
        column = _cast(column, kind, target, name, path)
    if isinstance(kind, TString):
        return column.to_numpy(zero_copy_only=False).astype(object)
    values = column.to_numpy()
    if isinstance(kind, TNum) and not np.isfinite(values).all():
        row = int(np.flatnonzero(~np.isfinite(values))[0])
        raise data_error("FZ504", f"{_where(path, row, name)}: `{values[row]}` is not a finite number", path)
    return values


def _cast(column: pa.ChunkedArray, kind: Type, target: pa.DataType, name: str, path: str) -> pa.ChunkedArray:
    """Convert a column read as text (or of another type) and name the first bad cell."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        pattern = _PATTERNS.get(type(kind))
        if pattern is not None:
            valid = pc.match_substring_regex(column, pattern.pattern, ignore_case=True)
            if not pc.all(valid, min_count=0).as_py():
                row = _first_index(pc.invert(valid))
                value = column[row].as_py()
                raise data_error(
                    "FZ504",
                    f"{_where(path, row, name)}: `{value}` is not {_article(_TYPE_NAMES[type(kind)])}",
                    path,
                )
        if isinstance(kind, TBool):
            column = pc.is_in(pc.utf8_lower(pc.utf8_trim_whitespace(column)), value_set=pa.array(["true", "1"]))
        elif isinstance(kind, (TInt, TNum)):  # the patterns allow ` 7 ` and `+5`; Arrow's cast does not
            column = pc.replace_substring_regex(pc.utf8_trim_whitespace(column), r"^\+", "")
    try:
        return column.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        row = _first_uncastable(column, target)
        if row is not None:  # e.g. an int beyond 64 bits: name the cell
            value = column[row].as_py()
            raise data_error(
                "FZ504",
                f"{_where(path, row, name)}: `{value}` does not fit {_article(_TYPE_NAMES[type(kind)])}",
                path,
            ) from None
        raise data_error(
            "FZ504",
            f"data file `{path}`, column `{name}`: values of type {column.type} are not {_TYPE_NAMES[type(kind)]}s",
            path,
        ) from None


def _first_uncastable(column: pa.ChunkedArray, target: pa.DataType) -> int | None:
    """The first cell that will not convert (only on the error path, cell by cell)."""
    for row, cell in enumerate(column):
        try:
            cell.cast(target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return row
    return None


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _first_index(mask: pa.ChunkedArray | pa.Array) -> int:
    return int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))[0])


def _where(path: str, row: int, column: str) -> str:
    """Row numbers count data rows from 1; the header is line 1 of a CSV file
    (a Parquet file has no lines to count)."""
    line = "" if _is_parquet(Path(path)) else f" (line {row + 2})"
    return f"data file `{path}`, row {row + 1}{line}, column `{column}`"


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")
