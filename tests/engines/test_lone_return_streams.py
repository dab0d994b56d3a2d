"""Review s29c: one CSV line holding a lone carriage return sent the whole
file from DuckDB's streaming reader to the in-memory loader (190 MB against
3.5 GB at 10M rows), so a run's exit code under a memory limit told of one
row. Such a file now streams: the line is dropped there as the loader drops
it, and the loader is never asked for the file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import fuzzpy.data.datasets as datasets
import fuzzpy.engines.engine as engine_module
from fuzzpy.engines.csvscan import without_lone_returns
from fuzzpy.release.run import RunRequest, execute

SOURCE = """
type R = { a : int, b : int };
def s (db : bag R) : fuzzy num = laplace[1.0] (sum[0, 40] (map (fun r -> r.a * 5 + r.b) db));
"""


def _file(folder: Path) -> Path:
    rows = [f"{i % 7},{i % 5}" for i in range(400)]
    rows[10] = "3,3\r4,4"  # DuckDB alone would split it into two good records
    rows[20] = "1\r,2"
    rows[30] = "2,2\r\r"
    rows[40] = '"5\r",1'
    (folder / "d.csv").write_bytes(("a,b\r\n" + "\r\n".join(rows) + "\r\n9,9\r").encode())
    (folder / "p.fz").write_text(SOURCE)
    return folder / "d.csv"


def _release(folder: Path, engine: str, name: str) -> float:
    request = RunRequest(str(folder / "p.fz"), "s", data={"db": str(folder / "d.csv")}, budget="100",
                         ledger=str(folder / f"{name}.sqlite"), seed=9, engine=engine)
    return execute(request, warn=lambda _: None).value  # type: ignore[return-value]


def test_a_lone_return_streams_and_reads_the_loader_s_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _file(tmp_path)
    by_loader = _release(tmp_path, "memory", "m")

    def no_loader(*args: object, **kwargs: object) -> object:
        raise AssertionError("the file went to the in-memory loader")

    monkeypatch.setattr(engine_module, "load", no_loader)
    monkeypatch.setattr(engine_module, "read_header", no_loader)
    monkeypatch.setattr(datasets, "_first_run_kinds", no_loader)
    assert _release(tmp_path, "duckdb", "d") == by_loader


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_the_copy_marks_only_lone_returns_whatever_the_chunks(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fuzzpy.engines.csvscan.CHUNK", size)
    data = b"x\r\ny\rz\r\r\n\r\rw\r"
    out = io.BytesIO()
    without_lone_returns(io.BytesIO(data), out, b"\x02")
    assert out.getvalue() == b"x\r\ny\x02z\x02\r\n\x02\x02w\r"
