"""End to end: `fuzzpy run` charges the ledger; an over-budget run exits 3
and prints nothing on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main
from fuzzpy.ledger.book import Ledger

checker = pytest.importorskip("fuzzpy.checker")
if not hasattr(checker, "check_program"):
    pytest.skip("the checker has not landed", allow_module_level=True)

PROGRAM = """\
type Row = { age : num, income : num };

def over (t : num) (r : Row) : bool = r.age > t;

def noisy_count (db : bag Row) : fuzzy num =
  laplace[0.25] (size (filter (over 40) db));
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    program = tmp_path / "count.fz"
    program.write_text(PROGRAM)
    data = tmp_path / "people.csv"
    data.write_text("age,income\n30,100\n50,200\n60,300\n")
    return program, data, tmp_path / "ledger.sqlite"


def run(files: tuple[Path, Path, Path], *extra: str) -> list[str]:
    program, data, ledger = files
    return [
        "run",
        str(program),
        "noisy_count",
        "--data",
        f"db={data}",
        "--ledger",
        str(ledger),
        "--budget",
        "0.5",
        *extra,
    ]


def test_runs_are_charged_until_the_budget_refuses(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(run(files, "--json")) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["charged"]["epsilon"] == pytest.approx(0.25)
    assert first["remaining"]["epsilon"] == pytest.approx(0.25)
    assert main(run(files)) == 0
    capsys.readouterr()
    before = files[2].read_bytes()
    assert main(run(files)) == 3
    refused = capsys.readouterr()
    assert refused.out == ""
    assert "FZ601" in refused.err
    assert files[2].read_bytes() == before
    with Ledger(files[2]) as ledger:
        history = ledger.history()
    assert [e.definition for e in history] == ["noisy_count", "noisy_count"]
    assert history[0].program == str(files[0]) and history[0].program_sha256
    assert main(["ledger", "--ledger", str(files[2]), "--json"]) == 0
    (dataset,) = json.loads(capsys.readouterr().out)["datasets"]
    assert dataset["spent"]["exact"]["epsilon"] == "1/2"


def test_a_different_budget_for_the_same_data_is_refused(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(run(files)) == 0
    arguments = run(files)
    arguments[-1] = "0.75"
    assert main(arguments) == 3
    assert capsys.readouterr().out.count("released") == 1
