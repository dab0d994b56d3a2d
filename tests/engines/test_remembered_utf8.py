"""Whether a Parquet file's text columns are valid UTF-8 is a function of
its bytes: read once, remembered with the file's hash (issue 24), never
read again for the same bytes -- and never carried to other bytes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fuzzpy.engines.engine as engine_module

from .conftest import release

# the definition reads `s` (a column it does not read is not validated: issue 31, columns read)
PROGRAM = ('type R = { n : num, s : string };\n'
           'def c (db : bag R) : fuzzy num =\n'
           '  laplace[1] (sum[0, 10] (map (fun r -> r.n) (filter (fun r -> r.s != "q") db)));\n')


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM)
    bad = tmp_path / "bad.parquet"
    strings = pa.array([b"x", b"\xc3\x28", b"y", b"z"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"n": [1.5, 2.5, 3.5, 4.5], "s": strings}), bad)
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"n": [1.5, 2.5, 3.5, 4.5], "s": ["x", "é", "y", "z"]}), good)
    return program, bad, good


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("FUZZPY_CACHE", str(folder))
    return folder


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    original = engine_module._read_utf8

    def counted(path: str, names: list[str]) -> bool:
        reads.append(path)
        return original(path, names)

    monkeypatch.setattr(engine_module, "_read_utf8", counted)
    return reads


def test_a_second_run_of_the_same_bytes_reads_no_column_and_releases_the_same(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program, bad, good = _files(tmp_path)
    reads = _counting(monkeypatch)
    for data in (bad, good):
        first = release(program, "c", data, "duckdb", seed=11)
        second = release(program, "c", data, "duckdb", seed=11)
        assert first.kind == "released" and second == first
        assert second == release(program, "c", data, "memory", seed=11)
    assert reads == [str(bad.resolve()), str(good.resolve())]  # once per file's bytes


def test_what_is_remembered_of_one_file_is_not_another_files(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The valid file's answer, remembered, does not make the invalid one's
    row read (its bytes hash otherwise): the invalid row is still dropped."""
    program, bad, good = _files(tmp_path)
    release(program, "c", good, "duckdb")
    valid_copy = tmp_path / "copy.parquet"
    valid_copy.write_bytes(bad.read_bytes())
    dropped = release(program, "c", valid_copy, "duckdb", seed=3)
    assert dropped == release(program, "c", bad, "memory", seed=3)
    without = tmp_path / "without.parquet"
    pq.write_table(pa.table({"n": [1.5, 3.5, 4.5], "s": ["x", "y", "z"]}), without)
    assert dropped.detail == release(program, "c", without, "memory", seed=3).detail


def test_an_answer_read_from_a_changed_file_is_not_remembered(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program, _, good = _files(tmp_path)
    reads = _counting(monkeypatch)
    stat = engine_module._stat
    monkeypatch.setattr(engine_module, "_stat", lambda p: (0, *stat(p)[1:]) if "good" in str(p) else stat(p))
    assert release(program, "c", good, "duckdb").detail == "FZ541"  # the file is not the one hashed
    monkeypatch.setattr(engine_module, "_stat", stat)
    assert release(program, "c", good, "duckdb").kind == "released"
    assert len(reads) == 2  # read again: the first answer was not kept
