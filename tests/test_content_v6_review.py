"""A black-box review of content key v6 (issue 24, item 1), F1: pandas
stores a reordered frame's index as a column (`__index_level_0__`) when it
writes Parquet or converts to Arrow, and reads it back as the index. The
same rows saved that way got a fresh budget (the column names differed, so
the tables were never compared), while the frame itself was linked.

Written against the public API only: a first run registers `first`, then
the same rows in another form run under `second` and must be refused
(FZ545).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fuzzpy

pd = pytest.importorskip("pandas")

SOURCE = "def cnt (db : bag { x : num, s : string }) : fuzzy num = laplace[0.1] (size db);"
ROWS = "x,s\n1,alpha\n2.5,beta\n3,gamma\n4,delta\n"


def _outcome(ledger: fuzzpy.Ledger, data: Any, name: str, engine: str = "auto") -> str:
    program = fuzzpy.loads(SOURCE, name="review.fz")
    try:
        program.run("cnt", data={"db": data}, datasets={"db": name}, ledger=ledger, budget=1, seed=7, engine=engine)
    except fuzzpy.FuzzError as error:
        return ",".join(d.code for d in error.diagnostics)
    return "released"


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text(ROWS)
    return path


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_sorted_frame_saved_as_parquet_is_the_csv_it_came_from(tmp_path: Path, engine: str) -> None:
    csv = _csv(tmp_path)
    parquet = tmp_path / "people_by_s.parquet"
    pd.read_csv(csv).sort_values("s").to_parquet(parquet)
    assert "__index_level_0__" in pq.read_schema(parquet).names  # pandas kept the index as a column
    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    assert _outcome(ledger, str(csv), "first", engine) == "released"
    assert "FZ545" in _outcome(ledger, str(parquet), "second", engine)


def test_an_arrow_table_of_a_shuffled_frame_is_the_csv_it_came_from(tmp_path: Path) -> None:
    csv = _csv(tmp_path)
    table = pa.Table.from_pandas(pd.read_csv(csv).sample(frac=1.0, random_state=3))
    assert "__index_level_0__" in table.column_names
    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    assert _outcome(ledger, str(csv), "first") == "released"
    assert "FZ545" in _outcome(ledger, table, "second")


def test_a_parquet_file_with_an_index_named_by_its_author_keys_as_its_rows(tmp_path: Path) -> None:
    # the index column is left out of the key; with the frame's own name it
    # is a column like another, so the tables are compared only by name
    csv = _csv(tmp_path)
    first = tmp_path / "sorted_a.parquet"
    second = tmp_path / "sorted_b.parquet"
    frame = pd.read_csv(csv)
    frame.sort_values("s").to_parquet(first)
    frame.sort_values("x", ascending=False).iloc[[1, 0, 3, 2]].to_parquet(second)
    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    assert _outcome(ledger, str(first), "first") == "released"
    assert "FZ545" in _outcome(ledger, str(second), "second")
