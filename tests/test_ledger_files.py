"""Ledger files that are not ledgers are reported and left byte-for-byte alone."""

from __future__ import annotations

import random
import sqlite3
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.accounting.events import Laplace
from fuzzpy.cli import main
from fuzzpy.commands.common import exit_code_for
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.book import Budget, Ledger
from fuzzpy.ledger.store import APPLICATION_ID

TENTH = (Laplace(Fraction(1), Fraction(10)),)


def refused_code(path: Path) -> str:
    with pytest.raises(FuzzError) as error:
        Ledger(path)
    assert exit_code_for(error.value.diagnostics) == 2
    (diagnostic,) = error.value.diagnostics
    return diagnostic.code


def sqlite_file(path: Path, *statements: str) -> Path:
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
    return path


@pytest.mark.parametrize("size", [10, 100, 4096, 20000])
def test_random_bytes_are_reported_not_overwritten(tmp_path: Path, size: int) -> None:
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(random.Random(size).randbytes(size))
    before = path.read_bytes()
    assert refused_code(path) == "FZ710"
    assert main(["ledger", "--ledger", str(path)]) == 2
    assert path.read_bytes() == before


def test_a_damaged_ledger_is_reported_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ledger.charge("d", TENTH, Budget(1))
    data = bytearray(path.read_bytes())
    data[100:4096] = random.Random(1).randbytes(3996)  # scramble the schema page
    path.write_bytes(bytes(data))
    assert refused_code(path) == "FZ710"
    assert path.read_bytes() == bytes(data)


def test_foreign_sqlite_database_is_reported_not_overwritten(tmp_path: Path) -> None:
    path = sqlite_file(
        tmp_path / "app.db",
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",
        "INSERT INTO notes (body) VALUES ('keep me')",
    )
    before = path.read_bytes()
    assert refused_code(path) == "FZ711"
    assert main(["ledger", "--ledger", str(path), "--json"]) == 2
    assert path.read_bytes() == before


def test_sqlite_file_of_another_application_id_is_foreign(tmp_path: Path) -> None:
    path = sqlite_file(tmp_path / "other.db", "PRAGMA application_id = 1234")
    before = path.read_bytes()
    assert refused_code(path) == "FZ711"
    assert path.read_bytes() == before


def test_ledger_marker_without_its_tables_is_damaged(tmp_path: Path) -> None:
    path = sqlite_file(
        tmp_path / "half.db",
        f"PRAGMA application_id = {APPLICATION_ID}",
        "PRAGMA user_version = 1",
        "CREATE TABLE meta (key TEXT, value TEXT)",
    )
    before = path.read_bytes()
    assert refused_code(path) == "FZ710"
    assert path.read_bytes() == before


def test_newer_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    Ledger(path).close()
    sqlite_file(path, "PRAGMA user_version = 99")
    assert refused_code(path) == "FZ712"


def test_empty_files_become_ledgers(tmp_path: Path) -> None:
    zero = tmp_path / "zero.sqlite"
    zero.write_bytes(b"")
    empty_db = sqlite_file(tmp_path / "empty.db")
    for path in (zero, empty_db):
        with Ledger(path) as ledger:
            ledger.charge("d", TENTH, Budget(1))
        with Ledger(path) as ledger:
            assert len(ledger.history()) == 1


def test_unwritable_location_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert refused_code(blocker / "ledger.sqlite") == "FZ713"
    assert refused_code(tmp_path) in {"FZ713", "FZ710"}  # a directory


def test_damaged_record_is_reported_by_history(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ledger.charge("d", TENTH, Budget(1))
    sqlite_file(path, 'UPDATE releases SET events = \'[{"kind": "Nope"}]\'')
    with Ledger(path) as ledger, pytest.raises(FuzzError) as error:
        ledger.history()
    assert [d.code for d in error.value.diagnostics] == ["FZ710"]


def test_a_ledger_locked_too_long_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    Ledger(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Ledger(path, timeout=0.05) as ledger, pytest.raises(FuzzError) as error:
            ledger.charge("d", TENTH, Budget(1))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [d.code for d in error.value.diagnostics] == ["FZ716"]
    assert exit_code_for(error.value.diagnostics) == 2
