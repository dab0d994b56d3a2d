"""Review s29c: a stored float column is typed by its stored type, never by its cells.

The reviewer's neighbours, as files and frames a user would hand over: a
Parquet double column holding 1.0, 2.0, 3.0 next to the same with one more
row of 2.5 (or of 3.5, or of a missing value, or with no row at all). The
program reads the column as `int`. Before the fix the whole-valued file was
typed `int` and released while its neighbour with 2.5 was typed `num` and
refused (FZ542); the file with a null cell was typed `none` and refused
while the empty file released. Now every one of them is `num`, every run
releases, and each says, from the schema and the program alone, that rows
whose value is not whole are dropped.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.cli import main

SOURCE = """
type R = { x : int };
def c (db : bag R) : fuzzy num = laplace[0.1] (size (filter (fun r -> r.x > 1) db));
"""

NEIGHBOURS = {
    "whole": [1.0, 2.0, 3.0],
    "half": [1.0, 2.0, 3.0, 2.5],
    "empty": [],
    "missing": [None],
    "other": [3.5],
}


def _write(folder: Path) -> None:
    (folder / "q.fz").write_text(SOURCE)
    for name, values in NEIGHBOURS.items():
        pq.write_table(pa.table({"x": pa.array(values, pa.float64())}), folder / f"{name}.parquet")


def _run(folder: Path, name: str, engine: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    ledger = folder / f"{name}-{engine}.sqlite"
    code = main(["run", str(folder / "q.fz"), "c", "--data", f"db={folder / name}.parquet", "--dataset",
                 "db=people", "--budget", "1", "--ledger", str(ledger), "--engine", engine, "--seed", "5"])
    return code, capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_every_neighbour_of_a_double_column_ends_alike(tmp_path: Path, engine: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path)
    endings = {}
    for name in NEIGHBOURS:
        code, err = _run(tmp_path, name, engine, capsys)
        endings[name] = code
        assert "people with types x: num" in err, (name, err)
        assert "`x` is read as int: a row whose `x` is not a whole number" in err, (name, err)
    assert set(endings.values()) == {0}, endings


def test_the_half_row_is_dropped_not_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1.0, 2.0, 3.0 and 2.5 read as int keep three rows: the count of x > 1
    is that of the whole-valued neighbour (same seed, same release); the
    neighbour with one null cell releases too, where it was refused."""
    import json

    _write(tmp_path)
    released = []
    for name in ("whole", "half", "missing"):
        ledger = tmp_path / f"{name}.sqlite"
        assert main(["run", str(tmp_path / "q.fz"), "c", "--data", f"db={tmp_path / name}.parquet", "--budget",
                     "1", "--ledger", str(ledger), "--seed", "11", "--json"]) == 0
        captured = capsys.readouterr()
        assert "`x` is read as int: a row whose `x` is not a whole number" in captured.err
        released.append(json.loads(captured.out)["released"])
    assert released[0] == released[1]


def test_dataset_register_records_a_double_as_num(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path)
    ledger = str(tmp_path / "r.sqlite")
    assert main(["dataset", "register", "pp", str(tmp_path / "whole.parquet"), "--budget", "1",
                 "--ledger", ledger]) == 0
    shown = capsys.readouterr().out
    assert "int" not in shown.split("columns", 1)[1].split("\n")[0] and "num" in shown, shown
    code = main(["run", str(tmp_path / "q.fz"), "c", "--data", "db=pp", "--ledger", ledger, "--seed", "1"])
    assert code == 0


@pytest.mark.parametrize("form", ["pandas", pytest.param("polars", marks=pytest.mark.slow),
                                  pytest.param("pyarrow", marks=pytest.mark.slow), "duckdb"])
def test_frames_of_doubles_are_num_whatever_their_values(tmp_path: Path, form: str) -> None:
    import fuzzpy

    (tmp_path / "q.fz").write_text(SOURCE)
    program = fuzzpy.load(str(tmp_path / "q.fz"))

    def frame(values: list[float]) -> object:
        if form == "pandas":
            import pandas as pd

            return pd.DataFrame({"x": values})
        if form == "polars":
            pl = pytest.importorskip("polars")
            return pl.DataFrame({"x": values}, schema={"x": pl.Float64})
        table = pa.table({"x": pa.array(values, pa.float64())})
        if form == "pyarrow":
            return table
        import duckdb

        con = duckdb.connect()
        con.register("t", table)
        return con.table("t")

    for i, values in enumerate(([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 2.5])):
        release = program.run("c", data={"db": frame(values)}, datasets={"db": "people"}, budget=1.0, seed=1,
                              ledger=str(tmp_path / f"{i}.sqlite"))
        assert any("read as int" in w for w in release.warnings), release.warnings


@pytest.mark.slow
@pytest.mark.spark
def test_spark_reads_the_double_neighbours_alike(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    _write(tmp_path)
    codes = []
    for name in ("whole", "half", "missing"):
        done = subprocess.run([sys.executable, "-m", "fuzzpy", "run", str(tmp_path / "q.fz"), "c", "--data",
                               f"db={tmp_path / name}.parquet", "--budget", "1", "--engine", "spark",
                               "--ledger", str(tmp_path / f"{name}.sqlite"), "--seed", "1"],
                              capture_output=True, text=True, timeout=600)
        codes.append(done.returncode)
        assert "read as int" in done.stderr
    assert codes == [0, 0, 0]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_misspelled_column_writes_nothing_to_the_ledger(tmp_path: Path, engine: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Review s29c: the memory engine registered the dataset before refusing
    a column the file does not have (FZ503); no engine writes first now."""
    (tmp_path / "a.csv").write_text("name,score\nann,3\nbob,4\n")
    (tmp_path / "p.fz").write_text("type R = { scroe : int };\n"
                                   "def s (db : bag R) : fuzzy num = laplace[1.0] (size (filter (fun r -> "
                                   "r.scroe > 1) db));\n")
    ledger = tmp_path / "l.sqlite"
    code = main(["run", str(tmp_path / "p.fz"), "s", "--data", f"db={tmp_path / 'a.csv'}", "--budget", "1",
                 "--ledger", str(ledger), "--engine", engine])
    err = capsys.readouterr().err
    assert code == 2 and "FZ503" in err and "registered" not in err
    from fuzzpy.ledger.book import Ledger

    if ledger.exists():
        with Ledger(ledger) as book:
            assert book.registrations() == []


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_misspelled_column_of_a_frame_writes_nothing_either(tmp_path: Path, engine: str) -> None:
    import pandas as pd

    import fuzzpy

    (tmp_path / "p.fz").write_text("type R = { scroe : int };\n"
                                   "def s (db : bag R) : fuzzy num = laplace[1.0] (size (filter (fun r -> "
                                   "r.scroe > 1) db));\n")
    ledger = tmp_path / "l.sqlite"
    with pytest.raises(fuzzpy.FuzzError) as refused:
        fuzzpy.load(str(tmp_path / "p.fz")).run("s", data={"db": pd.DataFrame({"score": [1, 2]})},
                                                datasets={"db": "marks"}, budget=1, ledger=str(ledger),
                                                engine=engine)
    assert [d.code for d in refused.value.diagnostics] == ["FZ503"]
    assert not ledger.exists() or fuzzpy.Ledger(str(ledger)).datasets() == []


#: Review s29f: the type a writer picks is a function of the values -- pandas
#: writes [1, 2, 3] as int64, the same plus 2**63 as uint64, plus a missing
#: value as float64, [None] as the `null` type. Every one of them releases, and
#: every one says the same note (the note names no stored type).
WRITER_NEIGHBOURS = {
    "int64": pa.array([1, 2, 3], pa.int64()),
    "uint64": pa.array([1, 2, 3, 2**63], pa.uint64()),
    "float64": pa.array([1.0, 2.0, 3.0, None], pa.float64()),
    "null": pa.nulls(1),
    "null_and_one": pa.array([None, 1.0], pa.float64()),
}


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_the_types_a_writer_picks_from_the_values_end_alike(tmp_path: Path, engine: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.fz").write_text(SOURCE)
    notes = {}
    for name, column in WRITER_NEIGHBOURS.items():
        pq.write_table(pa.table({"x": column}), tmp_path / f"{name}.parquet")
        code, err = _run(tmp_path, name, engine, capsys)
        assert code == 0, (name, err)
        notes[name] = [line for line in err.splitlines() if line.startswith("note: `x`")]
    assert len({tuple(n) for n in notes.values()}) == 1, notes
    assert notes["int64"], "the note is said for every int column of a typed source"
