"""The ledger's SQLite file: format marker, schema, transactions, rows.

A ledger file is recognised by its SQLite header (``application_id`` =
``APPLICATION_ID``, ``user_version`` = format version) and by its ``meta``
table. Anything else (random bytes, a damaged file, another program's SQLite
database) is reported and left untouched: only an *empty* database (a new or
zero-length file) is ever initialised, and only under SQLite's write lock, so
concurrent first runs agree on one schema.

Writes run in ``BEGIN IMMEDIATE`` transactions (the write lock is taken before
anything is read) with ``synchronous=FULL``: a commit that returned is on disk.

Format versions: 1 (budgets and releases), 2 (registered datasets, and per
release the data file's hash, whether it was seeded, its status and released
value, and the row rules' counts), 3 (each dataset's content key, which links
a file and the same rows in memory), 4 (each registered version's content key
and column names, in the registrations' log). An older file is migrated in place, in
one write transaction, when it is opened: it keeps every budget and release.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from fuzzpy.ledger.datasets import CONTENT_COLUMN, LOG_CONTENT_COLUMNS
from fuzzpy.ledger.datasets import SCHEMA as DATASETS
from fuzzpy.ledger.errors import (
    CANNOT_OPEN,
    FOREIGN_DATABASE,
    NEWER_FORMAT,
    NOT_A_DATABASE,
    ledger_error,
    sqlite_failure,
    unusable_file_hint,
)
from fuzzpy.support.interrupts import checkpoint

APPLICATION_ID = 0x46757A4C  # "FuzL" in the SQLite header marks a fuzzpy ledger
FORMAT_VERSION = 6
FORMAT_NAME = "fuzzpy-ledger"

#: The columns version 2 added to `releases` (NULL in releases made before).
_RELEASE_COLUMNS_V2 = (
    "data_sha256 TEXT",  # the data file's bytes, for audit
    "seeded INTEGER",  # 1: --seed (not private); 0: private
    "status TEXT",  # charged, then released once the value is shown
    "released TEXT",  # the released value (JSON)
    "row_rules TEXT",  # JSON: what the row rules dropped or replaced (owner only)
)

_SCHEMA_V1 = (
    """CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE budgets (
        dataset TEXT PRIMARY KEY,
        rule TEXT NOT NULL,
        epsilon TEXT NOT NULL,      -- exact fractions, e.g. '1/10'
        delta TEXT NOT NULL,
        capacity_epsilon TEXT NOT NULL,  -- the budget in the rule's currency,
        capacity_delta TEXT NOT NULL,    -- computed once when it is set
        capacity_rho TEXT NOT NULL,
        created TEXT NOT NULL
    )""",
    """CREATE TABLE releases (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dataset TEXT NOT NULL REFERENCES budgets(dataset),
        time TEXT NOT NULL,
        program TEXT,
        program_sha256 TEXT,
        definition TEXT,
        events TEXT NOT NULL,       -- JSON, fuzzpy.ledger.event_codec
        spend_epsilon TEXT NOT NULL,  -- the charge in the rule's currency
        spend_delta TEXT NOT NULL,
        spend_rho TEXT NOT NULL,
        epsilon TEXT NOT NULL,      -- the release's own (epsilon, delta)
        delta TEXT NOT NULL,
        method TEXT NOT NULL
    )""",
    "CREATE INDEX releases_by_dataset ON releases (dataset, id)",
)


#: Version 5: the public arguments of the run (`--arg NAME=VALUE`, the
#: API's ``args``) as given, JSON {name: text}; NULL before, or without any.
ARGUMENTS_COLUMN = ("ALTER TABLE releases ADD COLUMN arguments TEXT",)

#: Version 6: the unchecked `assume def`s the charge rests on (JSON
#: [{"definition": name, "claim": text}]; NULL: none, or recorded before).
ASSUMPTIONS_COLUMN = ("ALTER TABLE releases ADD COLUMN assumptions TEXT",)


def _migration_to_2() -> tuple[str, ...]:
    added = tuple(f"ALTER TABLE releases ADD COLUMN {column}" for column in _RELEASE_COLUMNS_V2)
    return added + DATASETS


#: Version n -> n + 1, applied in order inside one write transaction. A new
#: file is made at version 1 and migrated, so new and migrated files agree.
_MIGRATIONS = {1: _migration_to_2, 2: lambda: CONTENT_COLUMN, 3: lambda: LOG_CONTENT_COLUMNS, 4: lambda: ARGUMENTS_COLUMN,
               5: lambda: ASSUMPTIONS_COLUMN}


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


class LedgerStore:
    """One open connection to a ledger file, checked to be a fuzzpy ledger."""

    def __init__(self, path: Path, *, create: bool, timeout: float) -> None:
        self.path = path
        if not create and not path.exists():
            raise ledger_error(CANNOT_OPEN, f"there is no ledger at {path}", path)
        if create:
            self._make_parent()
        try:
            # isolation_level=None: no implicit transactions; we BEGIN ourselves.
            self.connection = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
            self.connection.row_factory = sqlite3.Row
        except sqlite3.Error as exc:
            raise sqlite_failure(exc, path) from exc
        try:
            with self._translated_errors():
                self.connection.execute("PRAGMA synchronous = FULL")
                self._check_or_initialise()
        except BaseException:
            self.connection.close()
            raise

    def _make_parent(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            message = f"cannot create the ledger's directory {self.path.parent}: {exc.strerror}"
            raise ledger_error(CANNOT_OPEN, message, self.path) from exc

    def close(self) -> None:
        self.connection.close()

    # ------------------------------------------------------------ format

    def _header(self) -> tuple[int, int, int]:
        cursor = self.connection
        application_id = cursor.execute("PRAGMA application_id").fetchone()[0]
        version = cursor.execute("PRAGMA user_version").fetchone()[0]
        objects = cursor.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        return application_id, version, objects

    def _check_or_initialise(self) -> None:
        with self.reading():
            header = self._header()
        if header == (0, 0, 0):
            with self.writing():
                header = self._header()  # again, under the lock: another run may have won
                if header == (0, 0, 0):
                    self._initialise()
                    return
        self._check_format(*header)
        if header[1] < FORMAT_VERSION:
            self._migrate()

    def _migrate(self) -> None:
        """Bring an older ledger to this version, all steps or none."""
        with self.writing():
            version = self._header()[1]  # again, under the lock: another run may have done it
            for step in range(version, FORMAT_VERSION):
                for statement in _MIGRATIONS[step]():
                    self.connection.execute(statement)
            if version < FORMAT_VERSION:
                self._set_version(FORMAT_VERSION)

    def _set_version(self, version: int) -> None:
        self.connection.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(version),))
        self.connection.execute(f"PRAGMA user_version = {version}")

    def _check_format(self, application_id: int, version: int, objects: int) -> None:
        hint = unusable_file_hint(self.path)
        if application_id != APPLICATION_ID:
            message = (
                f"{self.path} is a SQLite database of another application, not a fuzzpy ledger"
            )
            raise ledger_error(FOREIGN_DATABASE, message, self.path, hint=hint)
        if version > FORMAT_VERSION:
            message = (
                f"the ledger {self.path} has format version {version}; this fuzzpy "
                f"reads version {FORMAT_VERSION}"
            )
            raise ledger_error(NEWER_FORMAT, message, self.path, hint="upgrade fuzzpy")
        with self.reading():
            tables = {
                row[0]
                for row in self.connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
            marker = None
            if "meta" in tables:
                row = self.connection.execute(
                    "SELECT value FROM meta WHERE key = 'format'"
                ).fetchone()
                marker = row[0] if row else None
        needed = {"budgets", "releases"} | ({"datasets", "dataset_log"} if version >= 2 else set())
        if version < 1 or marker != FORMAT_NAME or not needed <= tables:
            message = f"{self.path} is marked as a fuzzpy ledger but its tables are damaged"
            raise ledger_error(NOT_A_DATABASE, message, self.path, hint=hint)

    def _initialise(self) -> None:
        for statement in _SCHEMA_V1:
            self.connection.execute(statement)
        for step in range(1, FORMAT_VERSION):
            for statement in _MIGRATIONS[step]():
                self.connection.execute(statement)
        self.connection.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [("format", FORMAT_NAME), ("version", str(FORMAT_VERSION)), ("created", utc_now())],
        )
        self.connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        self.connection.execute(f"PRAGMA user_version = {FORMAT_VERSION}")

    # ------------------------------------------------------------ transactions

    @contextmanager
    def _translated_errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise sqlite_failure(exc, self.path) from exc

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot, no lock held after."""
        with self._transaction("BEGIN"):
            yield self.connection

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """A write transaction holding the write lock from its first statement;
        committed (durably) when the block ends, rolled back if it raises."""
        with self._transaction("BEGIN IMMEDIATE"):
            yield self.connection

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[None]:
        with self._translated_errors():
            self.connection.execute(begin)
            try:
                yield
                checkpoint()  # a signal held until now stops the write here, cleanly
            except BaseException:
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")


# ---------------------------------------------------------------- rows


def read_budget_row(connection: sqlite3.Connection, dataset: str) -> sqlite3.Row | None:
    return connection.execute("SELECT * FROM budgets WHERE dataset = ?", (dataset,)).fetchone()


def read_budget_rows(connection: sqlite3.Connection) -> list[sqlite3.Row]:
    return connection.execute("SELECT * FROM budgets ORDER BY dataset").fetchall()


def insert_budget_row(connection: sqlite3.Connection, values: dict[str, str]) -> None:
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    connection.execute(f"INSERT INTO budgets ({columns}) VALUES ({marks})", tuple(values.values()))


def read_release_rows(connection: sqlite3.Connection, dataset: str | None) -> list[sqlite3.Row]:
    if dataset is None:
        return connection.execute("SELECT * FROM releases ORDER BY id").fetchall()
    return connection.execute(
        "SELECT * FROM releases WHERE dataset = ? ORDER BY id", (dataset,)
    ).fetchall()


def read_spend_groups(connection: sqlite3.Connection, dataset: str) -> list[sqlite3.Row]:
    """The distinct charges recorded for ``dataset``, each with its count
    (SQL groups the text; the caller adds the exact fractions)."""
    return connection.execute(
        "SELECT spend_epsilon, spend_delta, spend_rho, count(*) AS times FROM releases"
        " WHERE dataset = ? GROUP BY spend_epsilon, spend_delta, spend_rho",
        (dataset,),
    ).fetchall()


def insert_release_row(connection: sqlite3.Connection, values: dict[str, str | None]) -> int:
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    cursor = connection.execute(
        f"INSERT INTO releases ({columns}) VALUES ({marks})", tuple(values.values())
    )
    return int(cursor.lastrowid or 0)


def update_release_row(connection: sqlite3.Connection, release_id: int, values: dict[str, str | None]) -> None:
    assignments = ", ".join(f"{column} = ?" for column in values)
    connection.execute(
        f"UPDATE releases SET {assignments} WHERE id = ?", (*values.values(), release_id)
    )


def read_release_row(connection: sqlite3.Connection, release_id: int) -> sqlite3.Row | None:
    return connection.execute("SELECT * FROM releases WHERE id = ?", (release_id,)).fetchone()
