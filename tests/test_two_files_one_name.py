"""A CSV and its Parquet copy bound to two parameters in one first run: both
are dataset `visits` by their file names. The second was refused FZ544
"dataset `visits` is already registered" (true, but not what went wrong;
review s28); it is FZ545, naming both files and what to do."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.cli import main


@pytest.mark.slow  # a CLI run through the engine
def test_the_refusal_names_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prog.fz").write_text("type V = { n : int };\n"
                                      "def pair (x : bag V) (y : bag V) : fuzzy num = laplace[1] (size x - size y);\n")
    (tmp_path / "visits.csv").write_text("n\n4\n9\n1\n")
    pq.write_table(pa.table({"n": [4, 9, 1]}), tmp_path / "visits.parquet")
    code = main(["run", str(tmp_path / "prog.fz"), "pair", "--data", f"x={tmp_path / 'visits.csv'}",
                 "--data", f"y={tmp_path / 'visits.parquet'}", "--budget", "3",
                 "--ledger", str(tmp_path / "book.sqlite")])
    err = capsys.readouterr().err
    assert code != 0
    assert "FZ545" in err and "FZ544" not in err
    assert "visits.parquet" in err and "visits.csv" in err and "same rows" in err
