"""An exponential mechanism over an empty, public candidate list is refused
before the ledger is touched (a black-box review: `median [] ...` was charged
0.5 and then failed with "`expmech` needs at least one candidate")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fuzzpy.cli import main

PROGRAM = """import std.stats (median);
type R = { x : num };
def through_library (db : bag R) : fuzzy num = median [] (map (fun r -> r.x) db) 0.5;
def pick (cs : list num) (db : bag R) : fuzzy num =
  expmech[0.25] cs (fun c ys -> - abs (size ys - c)) db;
def through_two (db : bag R) : fuzzy num = pick ([] : list num) db;
def direct (db : bag R) : fuzzy num = expmech[1] ([] : list num) (fun c ys -> c) (map (fun r -> r.x) db);
def fine (db : bag R) : fuzzy num = pick [3] db;
"""


def _charges(ledger: Path) -> int:
    if not ledger.exists():
        return 0
    with sqlite3.connect(ledger) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type = 'table'")]
        return sum(db.execute(f'select count(*) from "{t}"').fetchone()[0]  # noqa: S608 -- own table names
                   for t in tables if "charge" in t or "entr" in t or "release" in t)


@pytest.mark.parametrize("definition", ["through_library", "through_two", "direct"])
def test_refused_before_any_charge(capsys: pytest.CaptureFixture[str], tmp_path: Path, definition: str) -> None:
    program, data, ledger = tmp_path / "m.fz", tmp_path / "rows.csv", tmp_path / "l.sqlite"
    program.write_text(PROGRAM)
    data.write_text("x\n1\n2\n3\n")
    code = main(["run", str(program), definition, "--data", f"db={data}", "--budget", "1",
                 "--ledger", str(ledger), "--seed", "5"])
    err = capsys.readouterr().err
    assert code == 1 and "FZ517" in err and "empty list of candidates" in err, err
    assert _charges(ledger) == 0
    assert main(["ledger", "--ledger", str(ledger)]) in (0, 1)
    assert "spent" not in capsys.readouterr().out


def test_a_non_empty_list_still_runs_and_is_charged(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program, data, ledger = tmp_path / "m.fz", tmp_path / "rows.csv", tmp_path / "l.sqlite"
    program.write_text(PROGRAM)
    data.write_text("x\n1\n2\n3\n")
    code = main(["run", str(program), "fine", "--data", f"db={data}", "--budget", "1",
                 "--ledger", str(ledger), "--seed", "5"])
    assert code == 0, capsys.readouterr().err
    assert _charges(ledger) > 0


@pytest.mark.parametrize("spelling", ["cs=[]", "cs=[ ]"])
def test_an_empty_list_given_on_the_command_line_is_refused_before_any_charge(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, spelling: str) -> None:
    # third review, F3: `--arg cs=[]` was charged, then failed with FZ517
    program, data, ledger = tmp_path / "m.fz", tmp_path / "rows.csv", tmp_path / "l.sqlite"
    program.write_text(PROGRAM + "def library_arg (cs : list num) (db : bag R) : fuzzy num = median cs (map (fun r -> r.x) db) 1;\n")
    data.write_text("x\n1\n2\n3\n")
    for definition in ("pick", "library_arg"):
        code = main(["run", str(program), definition, "--data", f"db={data}", "--arg", spelling, "--budget", "1",
                     "--ledger", str(ledger)])
        err = capsys.readouterr().err
        assert code == 1 and "FZ517" in err and "the argument `cs` is empty" in err, err
    assert _charges(ledger) == 0
