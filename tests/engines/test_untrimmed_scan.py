"""A Parquet text column read as strings is trimmed cell by cell (the
loader's rule); when the owner's audit counted no cell that trimming
changes (and every cell fits), the scan reads the column as it is -- the
same values. Releases equal the in-memory interpreter's either way, and
the count of such cells is a function of the bytes (a file with one
padded cell among clean ones is trimmed)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fuzzpy.engines.duck as duck

from .conftest import release

PROGRAM = ('type R = { w : string, n : int };\n'
           'def by_word (db : bag R) : fuzzy (vec[1] num) =\n'
           '  laplace[1] (counts (group["oak", "elm", "yew"] (fun r -> r.w) db));\n')


@pytest.fixture
def views(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = duck.DuckDBBackend.register_view

    def register_view(self, select: str) -> str:  # type: ignore[no-untyped-def]
        seen.append(select)
        return original(self, select)

    monkeypatch.setattr(duck.DuckDBBackend, "register_view", register_view)
    return seen


@pytest.mark.parametrize("words", [
    ["oak", "elm", "yew", "oak", "ash"],                          # nothing to trim: read as it is
    ["oak", "elm ", "\u3000yew", "oak", "ash"],                   # padded cells: trimmed
    ["oak", "elm", "yew", "oak\u0301", "\u00a0ash\u2028"],       # a mark is no space; others are
    ["oak", "", "yew", None, "elm"],                              # cells that do not fit: rows dropped
])
def test_the_scan_releases_what_memory_releases(tmp_path: Path, views: list[str], words: list[str | None]) -> None:
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM)
    data = tmp_path / "words.parquet"
    pq.write_table(pa.table({"n": list(range(len(words))), "w": pa.array(words, pa.string())}), data)
    on_duckdb = release(program, "by_word", data, "duckdb", seed=5)
    assert on_duckdb.kind == "released"
    assert on_duckdb == release(program, "by_word", data, "memory", seed=5)
    clean = all(w is not None and w.strip() == w and w for w in words)
    assert ("trim(" not in views[-1]) == clean
