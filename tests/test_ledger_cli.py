"""`fuzzpy ledger`: history per dataset, JSON, fixing a budget."""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.accounting.events import Gaussian, Laplace
from fuzzpy.cli import main
from fuzzpy.ledger.book import Budget, Ledger


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.sqlite"
    program = tmp_path / "count.fz"
    program.write_text("def noisy_count ...\n")
    with Ledger(path) as ledger:
        for _ in range(3):
            ledger.charge(
                "people",
                (Laplace(Fraction(1), Fraction(10)),),
                Budget(1),
                program=program,
                definition="noisy_count",
            )
        ledger.charge("visits", (Gaussian(Fraction(1), Fraction(10)),), Budget(1, 1e-6, "zcdp"))
    return path


def test_json_history_per_dataset(filled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "--ledger", str(filled), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    people, visits = document["datasets"]
    assert people["dataset"] == "people" and people["budget"]["rule"] == "basic"
    assert [r["remaining"]["exact"]["epsilon"] for r in people["releases"]] == [
        "9/10",
        "4/5",
        "7/10",
    ]
    assert people["spent"]["exact"]["epsilon"] == "3/10"
    assert people["releases"][0]["definition"] == "noisy_count"
    assert people["releases"][0]["program"].endswith("count.fz")
    assert len(people["releases"][0]["program_sha256"]) == 64
    assert visits["budget"]["rule"] == "zcdp"
    assert visits["releases"][0]["charged"]["exact"]["rho"] == "1/200"


def test_text_history_shows_time_program_definition_cost_remaining(
    filled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ledger", "--ledger", str(filled), "--dataset", "people"]) == 0
    out = capsys.readouterr().out
    assert "visits" not in out
    rows = [line for line in out.splitlines() if "noisy_count" in line]
    assert len(rows) == 3
    assert "count.fz" in rows[0] and "eps=0.1" in rows[0] and rows[0].endswith("eps=0.9")


def test_unknown_dataset_and_missing_ledger(
    filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ledger", "--ledger", str(filled), "--dataset", "nobody"]) == 2
    missing = tmp_path / "none.sqlite"
    assert main(["ledger", "--ledger", str(missing), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["datasets"] == []
    assert not missing.exists()  # showing never creates a ledger


def test_set_budget_then_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "l.sqlite")
    args = ["ledger", "--ledger", path, "--dataset", "d"]
    assert main([*args, "--set-budget", "1,1e-6", "--rule", "zcdp"]) == 0
    assert main([*args, "--set-budget", "1,1e-6", "--rule", "zcdp"]) == 0  # same: fine
    assert main([*args, "--set-budget", "2"]) == 3
    assert main([*args, "--set-budget", "oops"]) == 2
    assert main(["ledger", "--ledger", path, "--set-budget", "1"]) == 2
    with Ledger(path) as ledger:
        assert ledger.budget("d") == Budget(1, Fraction(1, 10**6), "zcdp")
    assert "FZ602" in capsys.readouterr().err


def test_environment_variable_names_the_default_ledger(
    filled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FUZZPY_LEDGER", str(filled))
    assert main(["ledger", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ledger"] == str(filled)


def test_data_file_selects_its_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "people.csv"
    data.write_text("age\n30\n")
    path = str(tmp_path / "l.sqlite")
    assert main(["ledger", "--ledger", path, "--data", str(data), "--set-budget", "2"]) == 0
    capsys.readouterr()
    assert main(["ledger", "--ledger", path, "--data", str(data), "--json"]) == 0
    (dataset,) = json.loads(capsys.readouterr().out)["datasets"]
    assert dataset["dataset"] == "people"  # was its hash: now the name a first run gives the file
    assert main(["ledger", "--ledger", path, "--data", str(tmp_path / "missing.csv")]) == 2


def test_audit_recomputes_charges_from_stored_events(
    filled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ledger", "--ledger", str(filled), "--audit", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] and len(document["releases"]) == 4
    first = document["releases"][0]
    assert first["recomputed"]["exact"] == first["charged"]["exact"]
    connection = sqlite3.connect(filled)  # make release 2 look undercharged
    connection.execute("UPDATE releases SET spend_epsilon = '1/20' WHERE id = 2")
    connection.commit()
    connection.close()
    assert main(["ledger", "--ledger", str(filled), "--audit"]) == 1
    assert "UNDERCHARGED" in capsys.readouterr().out
