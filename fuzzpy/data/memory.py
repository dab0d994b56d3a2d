"""Data given in memory: pandas and polars DataFrames, pyarrow Tables and
RecordBatchReaders, DuckDB relations and tables, Spark DataFrames.

`RunRequest.data` maps a bag parameter to a path or dataset name (a `str`
or `Path`) or to one of these objects. Their libraries are imported only
when such an object is given: an object is recognised by its type's module
and name, never by importing pandas, polars or pyspark.

What a run does with them (docs/semantics.md, "Data in memory"): the
columns are matched to the row type as a Parquet file's are, and every cell
goes through the loader's rules for a Parquet column of the same Arrow type;
the data must be named (`datasets={"db": "name"}`), and its fingerprint
(`fuzzpy.engines.fingerprint`) identifies it in the ledger as a file's hash
does. Data that lives in an engine (a DuckDB relation or table, a Spark
DataFrame) is scanned there.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from fuzzpy.data.identity import pandas_index_columns
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)
np = lazy("numpy")

UNNAMED_FRAME = "FZ550"
UNSUPPORTED_DATA = "FZ551"
WRONG_ENGINE = "FZ552"
UNREADABLE_DATA = "FZ553"

SUPPORTED = ("a path (CSV, Parquet) or a registered dataset's name", "pandas.DataFrame", "polars.DataFrame",
             "pyarrow.Table", "pyarrow.RecordBatchReader", "duckdb.DuckDBPyRelation",
             "fuzzpy.data.DuckDBTable(connection, name)", "a pyspark DataFrame")


@frozen
class DuckDBTable:
    """A table (or view) of a DuckDB connection, by name: the scan runs in
    that connection."""

    connection: Any
    name: str


@frozen
class InMemory:
    """A bag parameter's data given as an object, recognised."""

    kind: str  # pandas | polars | arrow | duckdb | spark
    value: Any

    @property
    def home(self) -> str | None:
        """The engine the data lives in (None: this process)."""
        return {"duckdb": "duckdb", "spark": "spark"}.get(self.kind)

    def describe(self) -> str:
        return {"pandas": "a pandas DataFrame", "polars": "a polars DataFrame", "arrow": "an Arrow table",
                "duckdb": "a DuckDB relation", "spark": "a Spark DataFrame"}[self.kind]


def data_error(code: str, message: str, hint: str | None = None) -> FuzzError:
    return FuzzError((Diagnostic(code, message, NO_SPAN, hint=hint),))


def recognise(param: str, value: object, read_streams: bool = True) -> str | InMemory:
    """A path or name (as text), or the recognised object; anything else
    is refused (FZ551), naming the kinds supported. A RecordBatchReader is
    read to the end (a run reads its rows several times) unless
    ``read_streams`` is False (a quote reads no rows: the stream is left
    for the run)."""
    if isinstance(value, (str, Path)):
        return str(value)
    if isinstance(value, InMemory):
        return value
    kind = _kind_of(value)
    if kind is None:
        raise data_error(UNSUPPORTED_DATA, f"the data for `{param}` is a {type(value).__module__}."
                         f"{type(value).__qualname__}, which fuzzpy cannot read",
                         "give one of: " + "; ".join(SUPPORTED))
    if kind == "arrow" and isinstance(value, pa.RecordBatchReader) and read_streams:
        value = value.read_all()  # a stream is read once; the run reads the table several times
    return InMemory(kind, value)


def _kind_of(value: object) -> str | None:
    if isinstance(value, DuckDBTable):
        return "duckdb"
    if isinstance(value, (pa.Table, pa.RecordBatchReader)):
        return "arrow"
    kind = type(value)
    root = kind.__module__.split(".")[0]
    if kind.__name__ == "DataFrame" and root in ("pandas", "polars"):
        return root
    if kind.__name__ == "DataFrame" and root == "pyspark":
        return "spark"
    if kind.__name__ == "DuckDBPyRelation" and root in ("duckdb", "_duckdb"):
        return "duckdb"
    return None


def home_engine(data: dict[str, object], chosen: str) -> str:
    """The engine a run uses: `chosen`, or with "auto" the one the data lives
    in (DuckDB for files and frames in this process). Data living in one
    engine cannot be read by another (FZ552): a Spark DataFrame with
    `--engine duckdb`, or two parameters living in different engines.
    `memory` reads any data into this process."""
    homes = {p: v.home for p, v in data.items() if isinstance(v, InMemory) and v.home}
    engines = set(homes.values())
    if len(engines) > 1:
        raise data_error(WRONG_ENGINE, "the data lives in more than one engine ("
                         + ", ".join(f"`{p}` in {e}" for p, e in sorted(homes.items())) + ")",
                         "give every bag parameter's data in one engine, or in this process")
    home = next(iter(engines), None)
    if chosen == "auto":
        return home or "duckdb"
    if home is not None and chosen not in (home, "memory"):
        param = next(p for p, e in homes.items() if e == home)
        raise data_error(WRONG_ENGINE, f"the data for `{param}` lives in {home}, and --engine {chosen} "
                         "cannot read it", f"run with --engine {home} (or auto), or memory to read it "
                         "into this process")
    return chosen


# ---------------------------------------------------------------- frames in this process, as Arrow


def arrow_of(data: InMemory) -> pa.Table:
    """A frame held in this process as an Arrow table, each column of the
    Arrow type its library gives it (zero-copy where the library allows).
    A pandas `object` column has no type of its own: pyarrow would infer
    one from all its values (one float among ints makes every int a double,
    so one row would change the others), so it is read as text, cell by
    cell (`_object_text`)."""
    value = data.value
    if data.kind == "arrow":  # without the columns pandas stored its index in, as a pandas frame is read
        index = pandas_index_columns(value.schema)
        table = value.drop_columns(list(index)) if index else value
    elif data.kind == "polars":
        table = _polars_arrow(value)
    elif data.kind == "pandas":
        table = _pandas_arrow(value)
    else:
        raise AssertionError(data.kind)
    distinct_names(table.column_names)
    return _plain_types(_snapshot(table))


RESERVED_COLUMN = "_fz_pos"  # the position column an engine adds (`engines.frames.POSITION`)


def distinct_names(names: list[str]) -> None:
    """Refuse (FZ505) a frame with two columns whose names are equal ignoring
    case: a query engine renames or confuses them (DuckDB reads `x`, `x` as
    `x`, `x_1`), so a run on DuckDB would read other columns than one in
    memory (a14 F5). A file's header is checked for the columns read. Nor
    may a column be named as the position column an engine adds, which
    `subsample` hashes (a16 F3: rows sharing a value were kept or dropped
    together), or have an empty name (no query can name it)."""
    for name in names:
        if not name.strip() or name.casefold() == RESERVED_COLUMN:
            why = "an empty name" if not name.strip() else "a name fuzzpy keeps for the rows' positions"
            raise data_error("FZ505", f"the data has a column named `{name}`: {why}",
                             "rename the column")
    firsts: dict[str, int] = {}
    for index, name in enumerate(names):
        first = firsts.setdefault(name.casefold(), index)
        if first != index:
            other = names[first]
            same = "the same name" if other == name else "names that differ only in case"
            raise data_error("FZ505", f"the data has two columns `{other}` and `{name}` ({same}): which one a "
                             "row type means would depend on the engine", "rename or drop one of them")


def _snapshot(table: pa.Table) -> pa.Table:
    """A copy of the table's buffers that the caller cannot reach: a frame
    converted zero-copy still shares its arrays with the caller's pandas or
    numpy objects, which another thread may change while the run reads
    them (a14 F4: the fingerprint checked one content, the release read
    another). One Arrow IPC round trip copies every buffer once."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


def _polars_arrow(frame: Any) -> pa.Table:
    """polars' 128-bit integers have no Arrow type pyarrow reads: they are
    given as their exact decimal text (read by the cell rules as a file's
    text would be)."""
    import polars as pl

    wide = [name for name, dtype in frame.schema.items() if str(dtype) in ("Int128", "UInt128")]
    if wide:
        frame = frame.with_columns([pl.col(name).cast(pl.String) for name in wide])
    return frame.to_arrow()


def _pandas_arrow(frame: Any) -> pa.Table:
    names = [str(c) for c in frame.columns]
    arrays = []
    for position in range(frame.shape[1]):
        column = frame.iloc[:, position]
        if column.dtype == object:
            arrays.append(_object_text(column.tolist()))
        else:
            try:
                arrays.append(pa.Array.from_pandas(column))
            except (pa.ArrowException, TypeError, ValueError):
                arrays.append(_object_text(column.astype(object).tolist()))
    return pa.table(arrays, names=names) if arrays else pa.table({})


def _object_text(values: list[object]) -> pa.Array:
    """An untyped column's cells as text, each from its own value: missing
    (None, NaN, pandas NA/NaT) is null, a bool `true`/`false`, a number its
    exact shortest spelling (Python's repr reads back as the same double),
    bytes as they are (UTF-8 or not: the loader checks), anything else str()."""
    cells: list[bytes | None] = []
    for value in values:
        if value is None or _is_missing(value):
            cells.append(None)
        elif isinstance(value, (bool, np.bool_)):
            cells.append(b"true" if value else b"false")
        elif isinstance(value, (bytes, bytearray)):
            cells.append(bytes(value))
        elif isinstance(value, (float, np.floating)):
            cells.append(repr(float(value)).encode())
        else:
            cells.append(_spelling(value))
    return pa.array(cells, pa.large_binary())


_UNSPELLABLE = b"\xff"  # not UTF-8: a cell that fits no kind, as the loader reads it


def _spelling(value: object) -> bytes:
    """str() of a cell, total: an integer of any size is spelled in full (past
    Python's 4,300-digit limit for int -> str), and a value whose str() fails
    is a cell that does not fit, never an error (an error on the one
    neighbour holding it would tell the analyst which one: a12)."""
    try:
        if isinstance(value, (int, np.integer)):
            return _integer_text(int(value)).encode()
        text = str(value)
        if not isinstance(text, str):
            return _UNSPELLABLE
        return text.encode("utf-8", "surrogatepass")
    except Exception:  # noqa: BLE001 -- any failure of a user's object is a bad cell
        return _UNSPELLABLE


def _integer_text(value: int) -> str:
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit == 0:
        return str(value)
    sys.set_int_max_str_digits(0)
    try:
        return str(value)
    finally:
        sys.set_int_max_str_digits(limit)


def _is_missing(value: object) -> bool:
    if isinstance(value, float):
        return value != value
    return type(value).__name__ in ("NAType", "NaTType")


def _plain_types(table: pa.Table) -> pa.Table:
    """Types every engine reads, each cast exact: view types (polars'
    strings) as plain ones, float16 as float32, a decimal of negative scale
    (an integer) with scale 0, and a decimal DuckDB cannot hold (256-bit) as
    its text, which is how the loader reads every decimal
    (`cells.parse_typed`; a12: these escaped as DuckDB errors)."""
    columns = [_plain_column(column) for column in table.columns]
    return pa.table(columns, names=table.column_names)


def _plain_column(column: pa.ChunkedArray) -> pa.ChunkedArray:
    arrow_type = column.type
    if pa.types.is_dictionary(arrow_type) and _plain_type_needed(arrow_type.value_type):
        column = column.cast(arrow_type.value_type)
        arrow_type = column.type
    if str(arrow_type) in ("string_view", "binary_view"):
        return column.cast(pa.large_string() if str(arrow_type) == "string_view" else pa.large_binary())
    if pa.types.is_float16(arrow_type):
        return column.cast(pa.float32())
    if pa.types.is_decimal(arrow_type) and arrow_type.scale < 0:
        digits = arrow_type.precision - arrow_type.scale
        column = column.cast(pa.decimal128(digits, 0) if digits <= 38 else pa.decimal256(digits, 0))
        arrow_type = column.type
    if pa.types.is_decimal(arrow_type) and arrow_type.bit_width > 128:
        if arrow_type.precision <= 38:
            return column.cast(pa.decimal128(arrow_type.precision, arrow_type.scale))
        return column.cast(pa.large_string())
    return column


def _plain_type_needed(arrow_type: pa.DataType) -> bool:
    return (str(arrow_type) in ("string_view", "binary_view") or pa.types.is_float16(arrow_type)
            or (pa.types.is_decimal(arrow_type) and (arrow_type.scale < 0 or arrow_type.bit_width > 128)))
