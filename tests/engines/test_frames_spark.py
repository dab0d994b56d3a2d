"""A Spark DataFrame (and a frame held by Python) on the Spark engine
releases what the same data releases as a file in memory; a Spark DataFrame
is refused by another engine (FZ552)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pyarrow.csv as pacsv
import pytest

from tests.test_frames import CSV, PROGRAM, run

pytestmark = pytest.mark.spark


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.fz").write_text(PROGRAM)
    (tmp_path / "rows.csv").write_text(CSV)
    return tmp_path


@pytest.mark.parametrize("definition", ["total", "kept", "ks"])
def test_a_spark_dataframe_releases_what_the_file_releases(spark, folder: Path, definition: str) -> None:
    expected = run(folder, definition, str(folder / "rows.csv"), name=None, ledger="file.sqlite")
    assert isinstance(expected, Fraction)
    table = pacsv.read_csv(folder / "rows.csv")
    frame = spark.createDataFrame(table.to_pandas())
    assert run(folder, definition, frame, "auto", ledger="spark.sqlite") == expected
    assert run(folder, definition, frame, "spark", ledger="spark.sqlite") == expected  # the same fingerprint
    assert run(folder, definition, frame, "memory", ledger="spark-memory.sqlite") == expected
    assert run(folder, definition, table, "spark", ledger="arrow-spark.sqlite") == expected
    assert run(folder, definition, frame, "duckdb", ledger="wrong.sqlite") == "FZ552"


def test_a_spark_dataframe_of_a_files_rows_is_that_dataset(spark, folder: Path) -> None:
    """The content key computed by Spark equals the file's (a14 F1)."""
    assert isinstance(run(folder, "count", str(folder / "rows.csv"), name=None), Fraction)
    frame = spark.createDataFrame(pacsv.read_csv(folder / "rows.csv").to_pandas())
    assert run(folder, "count", frame, "spark", name="copy") == "FZ545"


@pytest.mark.slow
def test_a_spark_first_run_types_as_dataset_register(spark, tmp_path: Path) -> None:
    """rows2: one typing on every engine -- a Spark DataFrame's stored types
    (text is `string` whatever it spells, a double `num`), and a CSV read on
    Spark typed from every cell; `int` against either is refused uncharged."""
    import fuzzpy
    from fuzzpy.ledger.book import Ledger

    (tmp_path / "p.fz").write_text("type R = { d : int, x : num };\n"
                                   "def s (t : bag R) : fuzzy num = laplace[1.0] (sum[0, 10] (map (fun r -> r.d) t));\n")
    (tmp_path / "mixed.csv").write_text("d,x\n1,1.5\nx,2.5\n")
    program = fuzzpy.load(str(tmp_path / "p.fz"))
    count = fuzzpy.loads("type R = { d : string, x : num };\ndef c (t : bag R) : fuzzy num = laplace[1.0] (size t);\n", "c.fz")
    # a double column holding a fraction is `num` (one of whole numbers only would be `int`)
    frame = spark.createDataFrame([("1", 1.5), ("2", 2.0)], "d string, x double")
    for label, data in (("frame", frame), ("csv", str(tmp_path / "mixed.csv"))):
        ledger = tmp_path / f"{label}.sqlite"
        with pytest.raises(fuzzpy.FuzzError) as refused:
            program.run("s", data={"t": data}, datasets={"t": "d"}, budget=100, seed=1, ledger=str(ledger),
                        engine="spark")
        assert [d.code for d in refused.value.diagnostics] == ["FZ542"], label
        with Ledger(ledger) as book:  # a refused first run records nothing (review s30 E)
            assert book.registration("d") is None and not book.history()
        count.run("c", data={"t": data}, datasets={"t": "d"}, budget=100, seed=1, ledger=str(ledger), engine="spark")
        with Ledger(ledger) as book:
            registration = book.registration("d")
        assert registration is not None
        assert {c.name: c.kind for c in registration.columns} == {"d": "string", "x": "num"}, label
