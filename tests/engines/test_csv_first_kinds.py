"""A first run on DuckDB types a CSV file's columns in one DuckDB pass
(`csvscan.streamed_csv_kinds`; the audit query's, on the DuckDB engine) and
a Parquet file's in one query (`streamed_parquet_kinds`, issue 31): the same types as the loader's
typing (`validation.first_run_kinds`) on cells of every odd spelling."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fuzzpy.data.datasets import _first_run_kinds
from fuzzpy.data.loader import plan, read_data_file, read_header
from fuzzpy.data.validation import first_run_kinds
from fuzzpy.engines.csvscan import (
    csv_selects,
    csv_source,
    streamed_csv_kinds,
    streamed_parquet_kinds,
)
from fuzzpy.engines.engine import QueryEngine, csv_header, streamed_data_file
from fuzzpy.language.types import STRING, TBag, TRecord

CASES = {
    "missing and markers": "a,b,c,d,e\n1,2.5,true,x,\n2,NA,false,y,NA\n2.5,3,1,z,\n",
    "padding, signs, not finite": "a,b,c\n 1 ,+2,inf\n1,2.0,nan\n-,1e400,NaN\n99999999999999999999,.5,-inf\n",
    "ties and bools": "a,b\n1,0\n2.5,1\n2.5,true\n,\n",
    "a duplicated name": "a,b,a\n1,x,2\n",
    "quoted fields": 'a,b\n"1",TRUE\n"2, 3",False\n',
    "only markers": "a,b\nnull,?\nN/A,.\n",
    "words outvote numbers": "a\nx\ny\n3\n",
    "crlf lines": "a,b\r\n1,t\r\n2,f\r\n",
    # issue 31, F2: no value (`none`), and integers none of which fits in 64 bits (`num`)
    "no value of any type": "a,b,c,d,e\n,inf,9223372036854775808,1,+99999999999999999999\n"
                            ",-inf,-9223372036854775809,x,1.5\n,1e999,9223372036854775808,NA,\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_duckdb_types_a_csv_as_the_loader_does(tmp_path: Path, text: str) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(text.encode())
    streamed = streamed_data_file(str(path))
    duck = streamed_csv_kinds(streamed, csv_header(streamed))
    loaded = read_data_file(str(path))
    assert duck is not None and duck == first_run_kinds(loaded, read_header(loaded))


def test_a_file_duckdb_cannot_split_is_left_to_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"a,b\n1,\xff\n")  # not UTF-8
    streamed = streamed_data_file(str(path))
    assert streamed_csv_kinds(streamed, csv_header(streamed)) is None


@pytest.mark.parametrize("text", [t for k, t in CASES.items() if k != "a duplicated name"],
                         ids=[k for k in CASES if k != "a duplicated name"])
def test_the_audit_pass_types_a_csv_as_the_loader_does_and_keeps_its_counts(tmp_path: Path, text: str) -> None:
    """The DuckDB engine counts the types in its audit query's pass (one
    pass over the records, not two): the same types, and the audit counts
    `load` then takes without reading the file again."""
    path = tmp_path / "d.csv"
    path.write_bytes(text.encode())
    streamed = streamed_data_file(str(path))
    header = csv_header(streamed)
    engine = QueryEngine("duckdb", lambda _: None)
    try:
        row = TBag(TRecord(((header.names[0], STRING),)))
        kinds = engine._first_kinds(streamed, header, row)
        loaded = read_data_file(str(path))
        assert kinds == first_run_kinds(loaded, read_header(loaded))
        (key, counts), = engine._audits.items()
        planned = plan(header, row, str(path))
        source = csv_source(os.path.realpath(path), streamed.data.facts, header.csv.header_line)
        _, audit = csv_selects(engine.backend.dialect, source, planned, len(header.names))
        (alone,) = engine.backend.rows(audit)
        assert key == (streamed.sha256, audit.replace(source, "<file>")) and counts == tuple(alone)
    finally:
        engine.close()


TABLES = {
    "text of every spelling": {"a": [" 1 ", "2", None, "NA", "x"], "b": ["1.5", "inf", "nan", "", "3"],
                               "c": ["TRUE", "false", "0", "1", "?"], "d": ["p", "q", "r", "1", "2"]},
    "floats": {"w": [1.0, 2.0, None, float("nan"), 3.5], "f": [0.5, 1.5, 2.0, float("inf"), None],
               "t": [float("nan"), None, float("nan"), None, None]},
    "ties": {"a": ["1", "2.5", "x", "y", None], "b": ["true", "2", None, None, None]},
    "only markers and nulls": {"a": ["null", "N/A", None, ".", "-"], "n": [1, 2, 3, None, 5]},
    "no value of any type": {"a": ["inf", "-inf", None, "1e999", "NA"], "f": [float("inf"), None, float("nan"),
                             float("-inf"), None], "z": [None] * 5, "b": ["9223372036854775808"] * 5},
}


@pytest.mark.parametrize("dictionary", [False, True])
@pytest.mark.parametrize("columns", TABLES.values(), ids=TABLES.keys())
def test_duckdb_types_a_parquet_file_as_the_loader_does(tmp_path: Path, columns: dict[str, list[object]],
                                                        dictionary: bool) -> None:
    """A Parquet file's text and float columns typed in one DuckDB query
    (no pyarrow compute: it imported pandas), as the loader types them."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    table = pa.table({n: pa.array(v, pa.large_string() if n == "d" else None) for n, v in columns.items()})
    if dictionary:
        table = pa.table({n: c.dictionary_encode() if pa.types.is_string(c.type) else c
                          for n, c in zip(table.column_names, table.columns, strict=True)})
    pq.write_table(table, path)
    loaded = read_data_file(str(path))
    header = read_header(loaded)
    duck = streamed_parquet_kinds(str(path), header)
    assert duck is not None and duck == _first_run_kinds(loaded, header)


def test_a_parquet_file_of_bytes_is_left_to_the_loader(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"a": pa.array([b"1", b"\xff"], pa.binary())}), path)
    loaded = read_data_file(str(path))
    assert streamed_parquet_kinds(str(path), read_header(loaded)) is None


def test_a_parquet_text_column_that_is_not_utf8_is_typed_by_its_stored_type(tmp_path: Path) -> None:
    """A stored text column is `string` by its type (rows2, item 3): its cells,
    valid UTF-8 or not, are not read to type it, by DuckDB as by the loader."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"a": pa.array([b"1", b"\xff", b"2"], pa.binary()).view(pa.string())}), path)
    loaded = read_data_file(str(path))
    streamed = streamed_parquet_kinds(str(path), read_header(loaded))
    assert streamed in (None, {"a": "string"})
    assert first_run_kinds(loaded, read_header(loaded)) == {"a": "string"}
