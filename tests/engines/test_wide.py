"""Wide rows: a bag of vectors read from a file of hundreds of columns
(a11 F5). The SQL an engine is given grows linearly with the width (measured
as text length, never as time), it runs (no expression deeper than the
engines' parsers accept), and the release is the in-memory interpreter's,
bit for bit. Past the limits (`engine.MAX_QUERY_COLUMNS`, public: the
header; `trace.MAX_QUERY_NODES`, the program and the width) the rows are
evaluated in memory, with a warning that names no data, the first one
before the budget is charged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .conftest import release, release_with_queries

PROGRAM = """
def w (db : bag (vec[2] num)) : fuzzy (vec[2] num) = gauss[0.1] (vsum[1] db);
def w2 (db : bag (vec[2] num)) : fuzzy (vec[2] num) = gauss[0.1] (vsum[1] (map (fun v -> clip2[0.5] (v + v)) db));
def d (db : bag (vec[2] num)) : fuzzy num = gauss[0.1] (sum[-1, 1] (map (fun v -> clip[-1, 1] (dot v v / 1000)) db));
"""


def wide_file(folder: Path, width: int, rows: int = 20, seed: int = 11) -> Path:
    """`width` float64 columns of mixed magnitudes (tiny, ordinary, huge,
    zeros, a NaN and an infinity dropped by the row rules)."""
    gen = np.random.default_rng(seed)
    values = gen.normal(size=(rows, width)) * gen.choice([1e-300, 1e-3, 1.0, 7.0, 1e150], size=(rows, width))
    values[0, :] = 0.0
    values[1, 0] = np.nan
    values[2, width // 2] = np.inf
    path = folder / f"wide{width}.parquet"
    pq.write_table(pa.table({f"c{i}": values[:, i] for i in range(width)}), path)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("wide")
    (path / "wide.fz").write_text(PROGRAM)
    return path


@pytest.mark.parametrize("definition", [pytest.param("w", marks=pytest.mark.slow),
                                        pytest.param("w2", marks=pytest.mark.slow), "d"])
def test_the_sql_grows_linearly_with_the_width_and_the_release_is_memorys(folder, monkeypatch, definition) -> None:  # type: ignore[no-untyped-def]
    sizes = {}
    for width in (150, 300, 600):  # past `symops.CHAIN`: the folds
        data = wide_file(folder, width)
        ending, queries = release_with_queries(monkeypatch, folder / "wide.fz", definition, data)
        memory = release(folder / "wide.fz", definition, data, "memory")
        assert ending.kind == "released" and ending.detail == memory.detail
        assert not ending.warnings  # nothing fell back to memory
        assert len(queries) == 1
        sizes[width] = len(queries[0])
    # linear: the text per added column does not grow with the width (but
    # for the digits of longer names); a11 F5's quadratic text grew ~3.4x
    # from 300 to 600 columns
    assert (sizes[600] - sizes[300]) / 300 <= 1.1 * (sizes[300] - sizes[150]) / 150
    assert sizes[600] <= 2.2 * sizes[300]
    assert sizes[600] / 600 < 1500  # characters per column (a11 F5: 6000 per column at 100)


def test_a_file_wider_than_the_engines_limit_is_evaluated_in_memory_before_the_charge(folder, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import fuzzpy.engines.engine as engine
    from fuzzpy.engines.execute import Executor
    from fuzzpy.ledger.book import Ledger

    monkeypatch.setattr(engine, "MAX_QUERY_COLUMNS", 64)
    data = wide_file(folder, 65)
    order: list[str] = []
    charge = Ledger.charge_many
    monkeypatch.setattr(Ledger, "charge_many", lambda self, *a, **k: (order.append("charge"), charge(self, *a, **k))[1])
    monkeypatch.setattr(Executor, "_query", lambda *a: order.append("query"))
    start = engine.QueryEngine.__init__

    def recording(self, name, warn, *args, **kwargs):  # type: ignore[no-untyped-def]
        start(self, name, lambda m: (order.append("warning"), warn(m)), *args, **kwargs)

    monkeypatch.setattr(engine.QueryEngine, "__init__", recording)
    ending = release(folder / "wide.fz", "w2", data, "duckdb")
    assert order == ["warning", "charge"]  # said before the charge; no query on the rows
    memory = release(folder / "wide.fz", "w2", data, "memory")
    assert ending.kind == "released" and ending.detail == memory.detail
    (warning,) = ending.warnings
    assert "65 columns" in warning


@pytest.mark.parametrize("definition", ["w", "w2"])
def test_a_query_past_the_node_limit_runs_in_memory(folder, monkeypatch, definition) -> None:  # type: ignore[no-untyped-def]
    import fuzzpy.engines.trace as trace

    monkeypatch.setattr(trace, "MAX_QUERY_NODES", 500)
    data = wide_file(folder, 150)
    ending = release(folder / "wide.fz", definition, data, "duckdb")
    memory = release(folder / "wide.fz", definition, data, "memory")
    assert ending.kind == "released" and ending.detail == memory.detail
    assert len(ending.warnings) == 1 and "500 operations" in ending.warnings[0]


@pytest.mark.spark
@pytest.mark.slow  # tens of seconds (the default suite's budget)
def test_wide_rows_release_the_same_on_spark(spark, folder) -> None:  # type: ignore[no-untyped-def]
    data = wide_file(folder, 150)  # past `symops.CHAIN`: the folds
    for definition in ("w2", "d"):
        memory = release(folder / "wide.fz", definition, data, "memory")
        assert release(folder / "wide.fz", definition, data, "spark").detail == memory.detail
