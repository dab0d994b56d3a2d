"""Data given in memory (`fuzzpy.data`), opened by an engine.

* **In this process** (`MemoryEngine`, and any frame held by Python): the
  frame becomes an Arrow table and is loaded by `loader.load` exactly as a
  decoded Parquet file is (`Header.table`). Its fingerprint is computed by
  DuckDB over that table, registered zero-copy.
* **In DuckDB**: a pandas/polars/Arrow frame is registered zero-copy with a
  position column; a DuckDB relation or table is first copied, in its own
  connection, into a temporary table with a position column (a snapshot:
  the fingerprint, the owner's audit and every query of the run read the
  same rows, whatever happens to the table meanwhile). The row rules are
  compiled into the scan as for a Parquet file (`scan.parquet_select`).
* **In Spark**: a Spark DataFrame is given a position column
  (`monotonically_increasing_id`: unique, which is all `subsample` needs)
  and checkpointed (the same snapshot); a frame held by Python is loaded
  by the loader and handed to Spark as Arrow, as a CSV file is.

Column types that the compiled scan does not handle go through the loader
(the rows are fetched as Arrow), with the same result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from fuzzpy.data.identity import NO_RULES, Rules
from fuzzpy.data.loader import Header
from fuzzpy.data.memory import RESERVED_COLUMN, UNREADABLE_DATA, InMemory, arrow_of, data_error
from fuzzpy.engines.duck import interruptible
from fuzzpy.engines.fingerprint import cell_class, column_digests, fingerprint_sql
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)

POSITION = RESERVED_COLUMN  # the rows' positions, which `subsample` hashes


@frozen
class Placed:
    """Data in an engine: a table or view with the data's columns and a
    position column; `table` when the rows are (also) held by Python."""

    source: str
    position: str
    table: pa.Table | None = None


# ---------------------------------------------------------------- in this process


def local_table(frame: InMemory) -> pa.Table:
    """The rows in this process, as Arrow (fetched from an engine if they live in one)."""
    from fuzzpy.data.memory import distinct_names

    table = _local_table(frame)
    if frame.home is not None:  # a frame held by Python was checked by `arrow_of`
        distinct_names(table.column_names)
    return table


def _local_table(frame: InMemory) -> pa.Table:
    if frame.kind == "duckdb":
        relation = _relation(frame.value)
        if _text_columns(relation):
            relation = relation.project(_projection(relation))
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        from fuzzpy.data.memory import _plain_types

        return _plain_types(fetch())
    if frame.kind == "spark":
        from fuzzpy.data.memory import _plain_types

        if hasattr(frame.value, "toArrow"):
            return _plain_types(frame.value.toArrow())
        return pa.Table.from_pandas(frame.value.toPandas(), preserve_index=False)
    return arrow_of(frame)


#: DuckDB types read as their DuckDB text (VARCHAR), on every engine (rows2, item 5): their Arrow
#: forms are not the same value to every engine (BIT: DuckDB's own bytes; UUID: a string to Arrow but
#: not to DuckDB's string functions; TIME WITH TIME ZONE: no Arrow conversion at all).
DUCKDB_AS_TEXT = ("UUID", "BIT", "TIME WITH TIME ZONE", "TIMETZ")


def _text_columns(relation: Any) -> list[str]:
    """The columns of a DuckDB relation of a type in `DUCKDB_AS_TEXT`."""
    return [name for name, t in zip(relation.columns, relation.types, strict=True)
            if str(t).upper() in DUCKDB_AS_TEXT]


def _projection(relation: Any) -> str:
    """Every column of a DuckDB relation, those of `DUCKDB_AS_TEXT` cast to VARCHAR."""
    texts = set(_text_columns(relation))

    def quoted(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    return ", ".join(f"CAST({quoted(n)} AS VARCHAR) AS {quoted(n)}" if n in texts else quoted(n)
                     for n in relation.columns)


def _relation(value: Any) -> Any:
    from fuzzpy.data import DuckDBTable

    if isinstance(value, DuckDBTable):
        return value.connection.table(value.name)
    return value


def local_digests(table: pa.Table) -> Any:
    """`digests(indices)` for a table in this process, computed by DuckDB."""
    def digests(indices: list[int]) -> dict[str, str]:
        import duckdb

        from fuzzpy.engines.sql import DIALECTS

        d = DIALECTS["duckdb"]
        con = duckdb.connect()
        try:
            con.register("_fz_frame", table)
            return _digests(d, lambda sql: interruptible(con, lambda: con.execute(sql).fetchall()), "_fz_frame",
                            table.schema, indices)
        finally:
            con.close()

    return digests


def _digests(d: Any, rows: Any, source: str, schema: pa.Schema, indices: list[int]) -> dict[str, str]:
    if not indices:
        return {}
    classes = [cell_class(schema.types[i]) or "string" for i in indices]
    columns = [(d.ident(schema.names[i]), kind) for i, kind in zip(indices, classes, strict=True)]
    (row,) = rows(fingerprint_sql(d, source, columns))
    return dict(zip([schema.names[i] for i in indices], column_digests(row, classes), strict=True))


@contextlib.contextmanager
def reading(frame: InMemory) -> Iterator[None]:
    """The caller's object failing as it is read (a DuckDB relation whose own
    SQL fails on a row, a dropped table, a closed connection, a polars
    `Object` column) is refused (FZ553), before anything is charged. The
    library's message is not shown: it may quote a cell."""
    from fuzzpy.language.diagnostics import FuzzError

    try:
        yield
    except (FuzzError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 -- whatever the caller's library raises
        raise data_error(UNREADABLE_DATA, f"{frame.describe()} could not be read: its library raised "
                         f"{type(exc).__module__}.{type(exc).__qualname__}",
                         "read it yourself (e.g. fetch it as Arrow) to see the library's message") from None


def local_content(table: pa.Table, only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
    """The content key (`fuzzpy.engines.content`) of a table in this process
    (restricted to `only`'s columns if given). A pandas `object` column is
    held as bytes: read as the text it is."""
    from fuzzpy.engines.content import table_content

    return table_content(table, only=only, rules=rules)


def open_in_memory(ledger: Any, source: Any, bag_type: Any, register: Any = None) -> Any:
    from functools import partial

    from fuzzpy.data.datasets import open_frame
    from fuzzpy.engines.content import file_content

    with reading(source.frame):
        table = local_table(source.frame)
    header = Header(tuple(table.column_names), tuple(table.schema.types), None, table)
    return open_frame(ledger, source, bag_type, header, local_digests(table), lambda: table.num_rows,
                      partial(local_content, table), file_content=file_content, register=register)


# ---------------------------------------------------------------- in an engine


def open_in_engine(engine: Any, ledger: Any, source: Any, bag_type: Any, register: Any = None) -> Any:
    """Open data in memory where `engine` (a `QueryEngine`) runs."""
    from dataclasses import replace

    from fuzzpy.data.datasets import open_frame
    from fuzzpy.engines.content import file_content

    frame: InMemory = source.frame
    if frame.home is None and engine.name == "spark":  # held by Python: through the loader, as CSV
        opened = open_in_memory(ledger, source, bag_type, register)
        return replace(opened, placed=Placed("", POSITION, opened.header.table))
    with reading(frame):
        placed = _place(engine, frame)
        backend = engine.backend
        schema = _schema(backend, placed.source)
    header = Header(tuple(schema.names), _read_types(placed, schema), None, None)

    def digests(indices: list[int]) -> dict[str, str]:
        return _digests(backend.dialect, backend.rows, placed.source, schema, indices)

    def count() -> int:
        return int(backend.rows(f"SELECT count(*) FROM {placed.source}")[0][0])

    def content(only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
        from fuzzpy.engines.content import query_content

        if placed.table is not None:
            return local_content(placed.table, only, rules)
        return query_content(backend.dialect, backend.rows, placed.source, schema, only=only, rules=rules)

    held = Header(header.names, header.arrow_types, None, placed.table) if placed.table is not None else None
    if held is None and source.registration is None:  # a first run types its cells as the memory engine does
        with reading(frame):
            held = _typing_table(backend, placed.source, schema)
    opened = open_frame(ledger, source, bag_type, header, digests, count, content, file_content=file_content,
                        cells=held, register=register)
    return replace(opened, placed=placed)


def _typing_table(backend: Any, source: str, schema: pa.Schema) -> Header:
    """The rows of data living in an engine (a DuckDB relation or table, a
    Spark DataFrame), fetched as the memory engine fetches them
    (`local_table`: Arrow, in plain types), for a first run to type its
    columns by one function whatever the engine (`validation.text_kinds`,
    issue 31 F3: the engine that ran first used to fix the registration).
    Only a first run does this; the rows fetched are not kept."""
    from fuzzpy.data.memory import _plain_types

    columns = ", ".join(backend.dialect.ident(name) for name in schema.names)
    table = _plain_types(backend.arrow(f"SELECT {columns} FROM {source}"))
    return Header(tuple(table.column_names), tuple(table.schema.types), None, table)


def _read_types(placed: Placed, schema: pa.Schema) -> tuple[pa.DataType, ...]:
    """The columns' types as the run reads them: DuckDB's, except where the
    rows are held by Python and their own type is one no run reads (polars'
    `Object` is fixed-size binary, which DuckDB shows as a BLOB; the loader
    would meet the original): that type, refused as it is in memory (FZ542)."""
    from fuzzpy.engines.fingerprint import cell_class

    if placed.table is None:
        return tuple(schema.types)
    own = placed.table.schema.types
    return tuple(o if cell_class(o) is None else t for o, t in zip(own, schema.types, strict=True))


def _place(engine: Any, frame: InMemory) -> Placed:
    if frame.kind == "spark":
        return _place_spark(engine, frame.value)
    if frame.kind == "duckdb":
        return _place_duckdb(engine, frame.value)
    table = _utf8_or_binary(arrow_of(frame))
    positioned = table.append_column(POSITION, pa.array(np.arange(table.num_rows, dtype=np.int64)))
    return Placed(engine.backend.register_arrow(positioned), POSITION, table)


def _utf8_or_binary(table: pa.Table) -> pa.Table:
    """Arrow strings built without checks may hold invalid UTF-8, which
    DuckDB refuses to read; the loader drops such a row. Such a column is
    seen as binary, which the scan does not compile: the loader reads it."""
    for index, column in enumerate(table.columns):
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            try:
                for chunk in column.chunks:
                    chunk.validate(full=True)
            except pa.ArrowInvalid:
                binary = pa.binary() if pa.types.is_string(column.type) else pa.large_binary()
                viewed = pa.chunked_array([c.view(binary) for c in column.chunks], binary)
                table = table.set_column(index, table.field(index).with_type(binary), viewed)
    return table


def _place_duckdb(engine: Any, value: Any) -> Placed:
    from fuzzpy.data.memory import DuckDBTable, distinct_names

    distinct_names(list(_relation(value).columns))

    connection = value.connection if isinstance(value, DuckDBTable) else getattr(value, "_con", None)
    if connection is None:  # a DuckDB whose relations do not say their connection: read in this process
        table = local_table(InMemory("duckdb", value))
        positioned = table.append_column(POSITION, pa.array(np.arange(table.num_rows, dtype=np.int64)))
        return Placed(engine.use_connection(None).register_arrow(positioned), POSITION, table)
    backend = engine.use_connection(connection)
    name = backend.fresh_name()
    columns = _projection(_relation(value))
    if isinstance(value, DuckDBTable):
        body = f"SELECT {columns} FROM {backend.dialect.ident(value.name)}"
    else:
        view = backend.fresh_name()
        value.create_view(view)
        backend.temporary.append(("VIEW", view))
        body = f"SELECT {columns} FROM {view}"
    interruptible(backend.con, lambda: backend.con.execute(f"CREATE TEMP TABLE {name} AS SELECT *, CAST(row_number() OVER () - 1 "
                                               f"AS BIGINT) AS {POSITION} FROM ({body})").fetchall())
    backend.temporary.append(("TABLE", name))
    return Placed(name, POSITION)


def _place_spark(engine: Any, frame: Any) -> Placed:
    from pyspark.sql import functions as spark_functions

    from fuzzpy.data.memory import distinct_names

    distinct_names(list(frame.columns))
    backend = engine.backend
    if frame.sparkSession is not backend.spark and frame.sparkSession.sparkContext is not backend.spark.sparkContext:
        raise data_error("FZ552", "the Spark DataFrame belongs to another Spark session than the active one")
    positioned = frame.withColumn(POSITION, spark_functions.monotonically_increasing_id())
    return Placed(backend.register_dataframe(positioned.localCheckpoint(eager=True)), POSITION)


def _schema(backend: Any, source: str) -> pa.Schema:
    """The data's columns (without the position) as Arrow types."""
    from fuzzpy.data.memory import _plain_types

    empty = _plain_types(backend.arrow(f"SELECT * FROM {source} LIMIT 0"))
    return pa.schema([f for f in empty.schema if f.name != POSITION])

