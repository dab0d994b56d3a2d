"""Issue 31, item 6: a misspelt data path gets "did you mean", and a header
separated by `;`, tabs or `|` is named as such (fuzzpy reads commas)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = """type V = { age : num, ward : int, minutes : num };
def n (db : bag V) : fuzzy num = laplace[0.5] (size db);
"""


def _run(tmp_path: Path, data: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "p.fz").write_text(PROGRAM)
    return subprocess.run(
        [sys.executable, "-m", "fuzzpy", "run", "p.fz", "n", "--data", f"db={data}", "--budget", "1",
         "--ledger", "l.sqlite", *extra],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={"PYTHONPATH": str(ROOT), "FUZZPY_CACHE": "off", "PATH": ""},
    )


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_misspelt_path_names_the_close_file(tmp_path: Path, engine: str) -> None:
    (tmp_path / "Visits_2024.csv").write_text("age,ward,minutes\n30,1,20\n")
    done = _run(tmp_path, "visits_2024.csv", "--engine", engine)
    assert done.returncode == 2 and "FZ501" in done.stderr
    assert "did you mean `Visits_2024.csv`?" in done.stderr
    assert "Traceback" not in done.stderr


def test_nothing_close_gives_no_guess(tmp_path: Path) -> None:
    (tmp_path / "weather.parquet").write_bytes(b"")
    done = _run(tmp_path, "visits.csv")
    assert done.returncode == 2 and "FZ501" in done.stderr and "did you mean" not in done.stderr


@pytest.mark.parametrize(("delimiter", "word"), [(";", "semicolons"), ("\t", "tabs"), ("|", "vertical bars")])
def test_a_header_with_another_delimiter_is_named(tmp_path: Path, delimiter: str, word: str) -> None:
    rows = ["age", "ward", "minutes"], ["30", "1", "20"], ["40", "2", "35"]
    (tmp_path / "v.csv").write_text("".join(delimiter.join(r) + "\n" for r in rows))
    done = _run(tmp_path, "v.csv")
    assert done.returncode == 2 and "FZ503" in done.stderr
    assert f"separated by {word}" in done.stderr and "comma-separated" in done.stderr


def test_a_comma_header_missing_a_column_is_not_called_another_delimiter(tmp_path: Path) -> None:
    (tmp_path / "v.csv").write_text("age,ward\n30,1\n")
    done = _run(tmp_path, "v.csv")
    assert done.returncode == 2 and "FZ503" in done.stderr and "separated by" not in done.stderr
