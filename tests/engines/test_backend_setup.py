"""What a DuckDB backend makes in a connection, and when: the sigmoid table
only for a query that reads it (most never do), with the runtime's nodes."""

from __future__ import annotations

import duckdb

from fuzzpy.engines.duck import DuckDBBackend
from fuzzpy.engines.sql import SIGMOID_TABLE
from fuzzpy.runtime.sigmoid import _table


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def test_the_sigmoid_table_is_made_by_the_first_query_that_reads_it() -> None:
    con = duckdb.connect()
    backend = DuckDBBackend(connection=con)
    assert backend.rows("SELECT 41 + 1") == [(42,)]
    assert SIGMOID_TABLE not in _tables(con)
    nodes = backend.rows(f"SELECT _fz_t FROM {SIGMOID_TABLE}")[0][0]
    assert tuple(nodes) == _table()  # BIGINT nodes, exactly the runtime's
    assert backend.rows(f"SELECT (SELECT _fz_t FROM {SIGMOID_TABLE})[2]") == [(_table()[1],)]
    backend.close()  # a caller's connection is left as it was
    assert SIGMOID_TABLE not in _tables(con)


def test_a_backend_that_never_read_the_table_leaves_a_callers_table_alone() -> None:
    con = duckdb.connect()
    con.execute(f"CREATE TEMP TABLE {SIGMOID_TABLE} AS SELECT 1 AS mine")
    backend = DuckDBBackend(connection=con)
    backend.rows("SELECT 1")
    backend.close()
    assert con.execute(f"SELECT mine FROM {SIGMOID_TABLE}").fetchall() == [(1,)]
