"""What a parameterised run leaves behind (issue 27, item 4): the ledger
records each run's public arguments (`--arg`, the API's ``args``), shown by
`ledger` and `ledger --json`; `budget --json` lists the definitions with
static parameters, their cost over them, and each call's cost."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import fuzzpy
from fuzzpy.ledger.book import Ledger
from fuzzpy.ledger.store import FORMAT_VERSION

ROOT = Path(__file__).resolve().parent.parent
PEOPLE = str(ROOT / "examples" / "data" / "people.csv")
MEAN = str(ROOT / "examples" / "parameterised_mean.fz")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuzzpy", *args], capture_output=True, text=True, cwd=ROOT, check=False)


def test_each_run_records_its_arguments(tmp_path: Path) -> None:
    ledger = str(tmp_path / "l.sqlite")
    for eps in ("0.05", "1/8"):
        done = cli("run", MEAN, "noisy_mean", "--arg", f"eps={eps}", "--data", f"db={PEOPLE}", "--budget", "1", "--ledger", ledger)
        assert done.returncode == 0, done.stdout + done.stderr
    table = cli("ledger", "--ledger", ledger)
    assert "noisy_mean eps=0.05" in table.stdout and "noisy_mean eps=1/8" in table.stdout
    doc = json.loads(cli("ledger", "--ledger", ledger, "--json").stdout)
    found = json.dumps(doc)
    assert '"arguments": {"eps": "0.05"}' in found and '"arguments": {"eps": "1/8"}' in found


def test_the_api_records_its_keyword_arguments(tmp_path: Path) -> None:
    ledger = tmp_path / "api.sqlite"
    program = fuzzpy.load(MEAN)
    program.run("noisy_mean", data={"db": PEOPLE}, args={"eps": 0.2}, ledger=ledger, budget=1.0)
    with Ledger(ledger) as book:
        (entry,) = book.history()
    assert entry.arguments == {"eps": "0.2"} and entry.to_json()["arguments"] == {"eps": "0.2"}


def test_a_run_without_arguments_records_none(tmp_path: Path) -> None:
    ledger = tmp_path / "plain.sqlite"
    done = cli("run", str(ROOT / "examples" / "noisy_count.fz"), "noisy_count", "--data", f"db={PEOPLE}",
               "--budget", "1", "--ledger", str(ledger))
    assert done.returncode == 0, done.stderr
    with Ledger(ledger) as book:
        (entry,) = book.history()
    assert entry.arguments is None


def test_a_version_4_ledger_is_migrated_and_keeps_its_releases(tmp_path: Path) -> None:
    ledger = tmp_path / "old.sqlite"
    done = cli("run", MEAN, "noisy_mean", "--arg", "eps=0.1", "--data", f"db={PEOPLE}", "--budget", "1", "--ledger", str(ledger))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(ledger) as connection:  # as fuzzpy with ledger format 4 left it
        connection.execute("ALTER TABLE releases DROP COLUMN arguments")
        connection.execute("ALTER TABLE releases DROP COLUMN assumptions")  # format 6's
        connection.execute("UPDATE meta SET value = '4' WHERE key = 'version'")
        connection.execute("PRAGMA user_version = 4")
    connection.close()
    with Ledger(ledger) as book:
        (entry,) = book.history()
    assert entry.arguments is None and entry.definition == "noisy_mean"
    with sqlite3.connect(ledger) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION
    connection.close()


def test_budget_json_lists_parameterised_definitions() -> None:
    done = cli("budget", MEAN, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    by_name = {d["name"]: d for d in doc["parameterised"]}
    assert by_name["repeated_counts"]["symbolic_privacy"] == {"db": "3 * eps"}
    assert by_name["repeated_counts"]["static_params"] == ["eps"]
    (call,) = by_name["repeated_counts"]["instances"]
    assert call["exact_values"] == {"eps": "1/20"} and abs(call["privacy"]["db"]["epsilon"] - 0.15) < 1e-12
    assert {d["name"] for d in doc["definitions"]} == {"report"}


def test_budget_json_says_why_a_definition_is_checked_at_each_call() -> None:
    doc = json.loads(cli("budget", str(ROOT / "examples" / "static_positions.fz"), "--json").stdout)
    by_name = {d["name"]: d for d in doc["parameterised"]}
    assert by_name["noisy_sum"]["symbolic_privacy"] == {"rides": None}
    assert by_name["noisy_sum"]["checked_at_each_call"]["sigma"] == "the sigma of `gauss`"
    assert "checked at each call" in by_name["noisy_sum"]["cost"]
