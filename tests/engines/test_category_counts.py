"""`counts (group["a", ...] f db)` of a string key in DuckDB: the query of a
whole scan filters by `IN` and groups by the key itself (`Executor.
_counts_of_categories`); every cell -- missing, padded, another case, another
normalisation, a quote -- lands in the bucket the
in-memory interpreter gives it, and the rows in none are audited alike."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.ledger.book import Ledger
from fuzzpy.release.run import RunRequest, execute

from .conftest import release_with_queries

PROGRAM = """\
type Row = { s : string, n : int };
let names = ["b", "a", "O'Hare", "", "Zo\u00eb"];
def whole (db : bag Row) : fuzzy (vec[1] num) = laplace[1] (counts (group[names] (fun r -> r.s) db));
def some (db : bag Row) : fuzzy (vec[1] num) =
  laplace[1] (counts (group[names] (fun r -> r.s) (filter (fun r -> r.n > 2) db)));
"""

# "Zoe\u0308" is the decomposed twin of "Zo\u00eb": another string, in no bucket
S = ["a", "b", "a", None, "", " c", "c", "A", "O'Hare", "Zoe\u0308", "Zo\u00eb", "a ", "zz", "b"]
N = list(range(len(S)))


def _data(tmp_path: Path, form: str) -> Path:
    if form == "parquet":
        path = tmp_path / "d.parquet"
        pq.write_table(pa.table({"s": pa.array(S, pa.string()), "n": pa.array(N, pa.int64())}), path)
        return path
    path = tmp_path / "d.csv"
    cells = ["" if s is None else '"' + s.replace('"', '""') + '"' for s in S]
    path.write_text("s,n\n" + "".join(f"{c},{n}\n" for c, n in zip(cells, N, strict=True)), encoding="utf-8")
    return path


def _release(tmp_path: Path, data: Path, definition: str, engine: str) -> tuple[str, int]:
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM, encoding="utf-8")
    ledger = tmp_path / f"{engine}-{definition}.sqlite"
    request = RunRequest(str(program), definition, data={"db": str(data)}, budget="1e9", ledger=str(ledger),
                         seed=11, engine=engine)
    value = execute(request, warn=lambda _: None).value
    (entry,) = Ledger(str(ledger)).history()
    return repr(value), (entry.row_rules or {}).get("group_keys_outside", 0)


@pytest.mark.parametrize("form", ["parquet", "csv"])
@pytest.mark.parametrize("definition", ["whole", "some"])
def test_duckdb_places_every_cell_as_memory_does(tmp_path: Path, form: str, definition: str) -> None:
    data = _data(tmp_path, form)
    in_memory = _release(tmp_path, data, definition, "memory")
    assert in_memory[1] > 0  # some rows fall in no bucket
    assert _release(tmp_path, data, definition, "duckdb") == in_memory


def test_a_whole_scan_is_filtered_by_the_categories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM, encoding="utf-8")
    ending, queries = release_with_queries(monkeypatch, program, "whole", _data(tmp_path, "parquet"))
    assert ending.kind == "released"
    (query,) = queries
    assert " IN (" in query and "GROUP BY" in query
