"""A predicate that reads only the scan's columns (the subsample's keyed
hash, a `filter` on a column) is applied to the scan, before the layers that
compute each row's values: DuckDB would otherwise compute every layer for
every row and filter after. The release is the in-memory interpreter's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .conftest import release, release_with_queries

PROGRAM = """
type Row = { x1 : num, x2 : num, y : num };
def features (r : Row) : vec[2] num = [1, r.x1, r.x2];
def gradient (theta : vec[2] num) (r : Row) : vec[2] num = (sigmoid (dot theta (features r)) - r.y) * features r;
def sgd (db : bag Row) : fuzzy (vec[2] num) =
  subsample[0.3] (fun batch -> gauss[2] (vsum[1] (map (gradient [0.1, 0.2, -0.3]) batch))) db;
def positive (db : bag Row) : fuzzy (vec[2] num) =
  gauss[2] (vsum[1] (map (gradient [0.1, 0.2, -0.3]) (filter (fun r -> r.x1 > 0) db)));
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("filters")
    (path / "p.fz").write_text(PROGRAM)
    gen = np.random.default_rng(5)
    x1, x2 = gen.normal(size=200), gen.normal(size=200)
    pq.write_table(pa.table({"x1": x1, "x2": x2, "y": (gen.random(200) < 0.5).astype(float)}), path / "d.parquet")
    return path


@pytest.mark.parametrize("definition", ["sgd", "positive"])
def test_scan_level_predicates_run_before_the_layers(folder: Path, monkeypatch, definition: str) -> None:  # type: ignore[no-untyped-def]
    ending, seen = release_with_queries(monkeypatch, folder / "p.fz", definition, folder / "d.parquet")
    (sql,) = seen
    first_layer = sql[sql.index("_l1 AS (") : sql.index("), _l2 AS (")]
    assert "AS _fz_scan WHERE" in first_layer  # the predicate filters the scan the first layer reads
    assert " WHERE " not in sql[sql.rindex("FROM _l"):]  # and is not tested again after the layers
    memory = release(folder / "p.fz", definition, folder / "d.parquet", "memory", hashed_memory=True)
    assert ending.kind == "released" and ending == memory
