"""One CSV line holding bytes that are not UTF-8 sent the whole file from
DuckDB's streaming reader to the in-memory loader (memory proportional to
the file), so a run under a memory limit told of one row. Such a file now
streams from a copy whose bad bytes are marked: a cell holding one reads as
the loader reads it (no text, fitting no kind), and a bad byte in a column
the program does not read drops nothing, as in the loader."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import fuzzpy.data.datasets as datasets
import fuzzpy.engines.engine as engine_module
from fuzzpy.engines.csvscan import without_lone_returns
from fuzzpy.release.run import RunRequest, execute

PROGRAM = """
type T = { x : int, note : string, y : int };
def total (rows : bag T) : fuzzy num = laplace[1.0] (sum[0, 50] (map (fun t -> t.x * 3 + t.y) rows));
"""


def _write(folder: Path, lone_return: bool) -> None:
    lines = [b"x,note,y"] + [f"{k % 11},n{k},{k % 4}".encode() for k in range(300)]
    lines[5] = b"\xff7,bad,1"  # a bad byte in a read column: the row goes
    lines[6] = b"8,caf\xe9,2"  # Latin-1 in a column not read: the row stays
    lines[7] = b'"9",\x80\x80,"3"'
    lines[8] = b"4,\xed\xa0\x80,5"  # an encoded surrogate is not UTF-8 either
    lines[9] = b"6,\xe2\x82,\xc3"  # truncated sequences, two fields
    lines[10] = "7,ünïcode,1".encode()
    if lone_return:
        lines[12] = b"1,\xfe\r2,2"
    (folder / "t.csv").write_bytes(b"\n".join(lines) + b"\n")
    (folder / "t.fz").write_text(PROGRAM)


def _value(folder: Path, engine: str) -> float:
    request = RunRequest(str(folder / "t.fz"), "total", data={"rows": str(folder / "t.csv")}, budget="50",
                         ledger=str(folder / f"{engine}.sqlite"), seed=4, engine=engine)
    return execute(request, warn=lambda _: None).value  # type: ignore[return-value]


@pytest.mark.parametrize("lone_return", [False, True])
def test_bad_bytes_stream_and_read_the_loader_s_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     lone_return: bool) -> None:
    _write(tmp_path, lone_return)
    expected = _value(tmp_path, "memory")

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the in-memory loader was asked for the file")

    for module, name in ((engine_module, "load"), (engine_module, "read_header"), (datasets, "_first_run_kinds")):
        monkeypatch.setattr(module, name, refuse)
    assert _value(tmp_path, "duckdb") == expected


@pytest.mark.parametrize("size", [1, 2, 5, 64])
def test_only_bad_bytes_are_marked_wherever_the_chunks_end(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fuzzpy.engines.csvscan.CHUNK", size)
    data = "é,€\n".encode() + b"a\xffb,\xc3\n\xe2\x82\xacz\r"
    out = io.BytesIO()
    without_lone_returns(io.BytesIO(data), out, None, b"\x03")
    assert out.getvalue() == "é,€\n".encode() + b"a\x03b,\x03\n" + "€z".encode() + b"\r"


STRINGS = """
type P = { k : int, tag : string };
def tags (rows : bag P) : fuzzy num = laplace[1.0] (sum[0, 20] (map (fun p -> if p.tag == "b" then p.k else 0) rows));
"""


def test_a_parquet_string_that_is_not_utf8_is_scanned_as_the_loader_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cells = [b"a", b" b ", b"b\xff", None, b"\xc3", b"b", "é".encode(), b"\xed\xa0\x80"] * 40
    tags = pa.array(cells, pa.binary()).view(pa.string())  # as a careless writer stores them
    pq.write_table(pa.table({"k": pa.array([i % 9 for i in range(len(cells))], pa.int32()), "tag": tags}),
                   tmp_path / "p.parquet", row_group_size=64)
    (tmp_path / "p.fz").write_text(STRINGS)

    def value(engine: str) -> float:
        request = RunRequest(str(tmp_path / "p.fz"), "tags", data={"rows": str(tmp_path / "p.parquet")},
                             budget="50", ledger=str(tmp_path / f"{engine}.sqlite"), seed=2, engine=engine)
        return execute(request, warn=lambda _: None).value  # type: ignore[return-value]

    expected = value("memory")

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the in-memory loader was asked for the file")

    monkeypatch.setattr(engine_module, "load", refuse)
    monkeypatch.setattr(engine_module, "read_header", refuse)
    assert value("duckdb") == expected


@pytest.mark.parametrize("rules", ["drop", "values"])
def test_a_parquet_file_s_bad_cells_give_the_loader_s_rows_and_report(tmp_path: Path, rules: str) -> None:
    """Every column stored as text, one bad cell in each at another row,
    under both row rules: the rows (in order) and the owner's report."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .test_csv_stream import POLICIES, _engine, _memory, _registration

    def text(*cells: bytes | None) -> pa.Array:
        return pa.array(list(cells), pa.binary()).view(pa.string())

    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"s": text(b"a", b"b", b"c\xff", b"d", None),
                             "ok": text(b"true", b"\x80", b"0", b" 1 ", b"false"),
                             "x": text(b"2.5", b"1e3", b"-1", b"\xc3", b"7"),
                             "n": text(b"\xed\xa0\x80", b"4", b"5", b"6", b"")}), path)
    registration = _registration(path, POLICIES[rules])
    expected, expected_report = _memory(path, registration)
    got, report, _ = _engine(path, registration)
    assert "loaded_by" not in report
    assert (got, report) == (expected, expected_report)


def test_a_dictionary_of_text_holding_a_bad_string_releases_as_the_loader_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB refused such a file outright (FZ505) where the memory engine
    released: the run's outcome told of one row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tags = pa.array([b"b", b"b\xff", b"a", b"b"] * 5, pa.binary()).view(pa.string()).dictionary_encode()
    pq.write_table(pa.table({"k": pa.array(range(20), pa.int16()), "tag": tags}), tmp_path / "p.parquet")
    (tmp_path / "p.fz").write_text(STRINGS)
    got = []

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the in-memory loader was asked for the file")

    for engine in ("memory", "duckdb"):
        if engine == "duckdb":
            monkeypatch.setattr(engine_module, "load", refuse)
            monkeypatch.setattr(engine_module, "read_header", refuse)
        request = RunRequest(str(tmp_path / "p.fz"), "tags", data={"rows": str(tmp_path / "p.parquet")},
                             budget="50", ledger=str(tmp_path / f"{engine}.sqlite"), seed=5, engine=engine)
        got.append(execute(request, warn=lambda _: None).value)
    assert got[0] == got[1]
