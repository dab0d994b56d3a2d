"""Review s29c, smaller items: hints a Python user can paste, a misspelled
dataset named as such, the data in memory not called a file, the command that
accepts a new file named with its FILE, and a range of mixed bounds all num."""

from __future__ import annotations

from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.api.errors import _AS_KEYWORDS
from fuzzpy.cli import main


def _python(text: str) -> str:
    for pattern, replacement in _AS_KEYWORDS:
        text = pattern.sub(replacement, text)
    return text


def test_budget_hints_are_python() -> None:
    assert "budget=(2.255, 1e-05)" in _python("raise --budget (e.g. --budget 2.255,1e-05)")
    fixed = _python("--budget EPS,1e-6 (the release is charged at --delta, default 1e-6)")
    assert "budget=(EPS, 1e-6)" in fixed and "delta=," not in fixed
    assert "--ledger" not in _python("fuzzpy never overwrites x; pass another file with --ledger or set FUZZPY_LEDGER")


def test_entries_of_an_unknown_dataset_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("x\n1\n2\n")
    (tmp_path / "p.fz").write_text("type R = { x : int };\ndef n (db : bag R) : fuzzy num = laplace[1.0] (size db);\n")
    ledger = tmp_path / "l.sqlite"
    fuzzpy.load(str(tmp_path / "p.fz")).run("n", data={"db": str(tmp_path / "d.csv")}, budget=5, ledger=str(ledger))
    book = fuzzpy.Ledger(str(ledger))
    assert len(book.entries("d")) == 1
    with pytest.raises(fuzzpy.FuzzError) as refused:
        book.entries("nope")
    assert "`nope`" in str(refused.value) and "its datasets: d" in str(refused.value)


def test_a_missing_column_of_a_frame_is_not_a_file(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    (tmp_path / "p.fz").write_text("type R = { scroe : int };\n"
                                   "def n (db : bag R) : fuzzy num = laplace[1.0] (size (filter (fun r -> "
                                   "r.scroe > 0) db));\n")
    with pytest.raises(fuzzpy.FuzzError) as refused:
        fuzzpy.load(str(tmp_path / "p.fz")).run("n", data={"db": pd.DataFrame({"score": [1]})},
                                                datasets={"db": "marks"}, budget=5,
                                                ledger=str(tmp_path / "l.sqlite"))
    text = str(refused.value)
    assert "data file" not in text and "`marks`" in text and "did you mean `score`" in text


def test_an_unknown_name_given_as_data_lists_the_datasets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.fz").write_text("type R = { x : int };\ndef n (db : bag R) : fuzzy num = laplace[1.0] (size db);\n")
    (tmp_path / "people.csv").write_text("x\n1\n")
    ledger = str(tmp_path / "l.sqlite")
    assert main(["dataset", "register", "people", str(tmp_path / "people.csv"), "--budget", "3",
                 "--ledger", ledger]) == 0
    capsys.readouterr()
    assert main(["run", str(tmp_path / "p.fz"), "n", "--data", "db=peple", "--ledger", ledger]) != 0
    err = capsys.readouterr().err
    assert "no dataset named `peple`" in err and "did you mean `people`" in err


def test_a_new_form_of_a_dataset_is_accepted_by_naming_its_file(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.fz").write_text("type R = { x : int };\ndef n (db : bag R) : fuzzy num = laplace[1.0] (size db);\n")
    (tmp_path / "folk.csv").write_text("x\n1\n2\n")
    (tmp_path / "other.csv").write_text("x\n5\n")
    ledger = str(tmp_path / "l.sqlite")
    assert main(["run", str(tmp_path / "p.fz"), "n", "--data", f"db={tmp_path / 'folk.csv'}", "--budget", "3",
                 "--ledger", ledger]) == 0
    capsys.readouterr()
    main(["run", str(tmp_path / "p.fz"), "n", "--data", f"db={tmp_path / 'other.csv'}", "--dataset", "db=folk",
          "--ledger", ledger])
    assert f"fuzzpy dataset update folk {tmp_path / 'other.csv'}" in capsys.readouterr().err


def test_a_range_with_a_decimal_bound_is_all_num(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.fz").write_text("def r : list num = [1 .. 3.5];\n")
    assert main(["run", str(tmp_path / "r.fz"), "r"]) == 0
    assert "[1.0, 2.0, 3.0]" in capsys.readouterr().out
