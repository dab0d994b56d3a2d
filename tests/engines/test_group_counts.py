"""`counts (group[k] f db)` in an engine: the same released counts and the
same audit of rows outside the buckets as in memory, whichever query the
engine runs (a number key of a whole scan is grouped only where it falls in
a bucket, the rest counted from the scan's size)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.ledger.book import Ledger
from fuzzpy.release.run import RunRequest, execute

from .conftest import release_with_queries

PROGRAM = """\
type Row = { w : int, x : num };
def by_int (db : bag Row) : fuzzy (vec[1] num) = laplace[1] (counts (group[5] (fun r -> r.w) db));
def by_num (db : bag Row) : fuzzy (vec[1] num) = laplace[1] (counts (group[5] (fun r -> r.x) db));
def by_int_filtered (db : bag Row) : fuzzy (vec[1] num) =
  laplace[1] (counts (group[5] (fun r -> r.w) (filter (fun r -> r.x < 3) db)));
def by_sum (db : bag Row) : fuzzy (vec[1] num) = laplace[1] (counts (group[5] (fun r -> r.w + 1) db));
"""

# keys inside 0..4, and outside: negative, k, far above; the num key
# truncates (-0.5 and 4.999 fall in a bucket, -1 and 5 do not)
W = [0, 1, 1, 4, -1, 5, 99, 2, -7, 3]
X = [0.0, -0.5, 4.999, -1.0, 5.0, 2.5, 1e300, -1e300, 3.0, 0.25]
OUTSIDE = {"by_int": 4, "by_num": 4, "by_int_filtered": 1, "by_sum": 4}


def _data(tmp_path: Path, form: str) -> Path:
    table = pa.table({"w": pa.array(W, pa.int64()), "x": pa.array(X, pa.float64())})
    if form == "parquet":
        path = tmp_path / "d.parquet"
        pq.write_table(table, path)
    else:
        path = tmp_path / "d.csv"
        path.write_text("w,x\n" + "".join(f"{w},{x!r}\n" for w, x in zip(W, X, strict=True)))
    return path


def _release(tmp_path: Path, data: Path, definition: str, engine: str) -> tuple[str, int]:
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM)
    ledger = tmp_path / f"{engine}-{definition}.sqlite"
    request = RunRequest(str(program), definition, data={"db": str(data)}, budget="1e9,0.5",
                         ledger=str(ledger), seed=3, engine=engine)
    value = execute(request, warn=lambda _: None).value
    (entry,) = Ledger(str(ledger)).history()
    return repr(value), (entry.row_rules or {}).get("group_keys_outside", 0)


@pytest.mark.parametrize("form", ["parquet", "csv"])
@pytest.mark.parametrize("definition", sorted(OUTSIDE))
def test_duckdb_counts_and_audits_the_buckets_as_memory_does(tmp_path: Path, form: str, definition: str) -> None:
    data = _data(tmp_path, form)
    in_memory = _release(tmp_path, data, definition, "memory")
    assert in_memory[1] == OUTSIDE[definition]
    assert _release(tmp_path, data, definition, "duckdb") == in_memory


def test_spark_counts_and_audits_the_buckets_as_memory_does(tmp_path: Path, spark: object) -> None:
    data = _data(tmp_path, "parquet")
    for definition in ("by_int", "by_num"):
        assert _release(tmp_path, data, definition, "spark") == _release(tmp_path, data, definition, "memory")


@pytest.mark.parametrize("form", ["parquet", "csv"])
def test_a_number_key_of_a_whole_scan_is_grouped_where_it_falls_in_a_bucket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM)
    for definition in ("by_int", "by_num"):
        ending, queries = release_with_queries(monkeypatch, program, definition, _data(tmp_path, form))
        assert ending.kind == "released"
        (query,) = queries
        assert "CASE" not in query and "GROUP BY" in query and " WHERE " in query


def test_a_file_replaced_by_another_schema_during_the_query_is_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB opens the file again for the query: replaced (after its hash
    and audit) by a file whose column has another type, the query fails to
    bind -- reported as FZ541 (the file changed), not an internal error (a22 F2)."""
    import os

    from fuzzpy.engines.execute import Executor
    from fuzzpy.language.diagnostics import FuzzError

    program = tmp_path / "p.fz"
    program.write_text("type Row = { w : int };\n"
                       "def c (db : bag Row) : fuzzy num = laplace[1] (size (filter (fun r -> r.w > 1) db));\n")
    path, other = tmp_path / "d.parquet", tmp_path / "other.parquet"
    pq.write_table(pa.table({"w": pa.array([1, 2, 3])}), path)
    pq.write_table(pa.table({"w": pa.array([[1], [2], [3]])}), other)
    original = Executor._query

    def swapped(self, sql: str, what: str, meanwhile=None):  # type: ignore[no-untyped-def]
        if other.exists():
            os.replace(other, path)
        return original(self, sql, what, meanwhile)

    monkeypatch.setattr(Executor, "_query", swapped)
    request = RunRequest(str(program), "c", data={"db": str(path)}, budget="10",
                         ledger=str(tmp_path / "l.sqlite"), seed=1, engine="duckdb")
    with pytest.raises(FuzzError) as raised:
        execute(request, warn=lambda _: None)
    assert [d.code for d in raised.value.diagnostics] == ["FZ541"]
