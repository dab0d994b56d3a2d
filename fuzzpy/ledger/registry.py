"""The ledger's registry of datasets: register, update, look up.

`Registry` is a part of `fuzzpy.ledger.book.Ledger` (its datasets' names,
files and schemas live in the same SQLite file as their budgets, so a
registration and its budget, or a first run's registration and its charge,
are written in one transaction). `confirm_registration` is the check a
charge makes under the write lock.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fuzzpy.ledger.datasets import (
    ALREADY_REGISTERED,
    UNKNOWN_DATASET,
    Registration,
    changed_file_error,
    dataset_error,
    datasets_once_holding,
    earlier_contents,
    other_datasets_file_error,
    read_log,
    read_registration,
    read_registrations,
    registrations_holding,
    write_registration,
)
from fuzzpy.ledger.errors import INVALID_BUDGET, ledger_error
from fuzzpy.ledger.records import decoding
from fuzzpy.support.records import frozen

if TYPE_CHECKING:
    from fuzzpy.ledger.rules import Budget
    from fuzzpy.ledger.store import LedgerStore


#: A first run's check for the same rows under the write lock, given the
#: registered datasets and the earlier versions' keys (`earlier_contents`):
#: raises FZ545 if one holds them, else returns the new dataset's content
#: key (None if not needed).
SameRows = Callable[[list[Registration], list[tuple[str, list[str], str]]], "str | None"]


@frozen
class DataUse:
    """What one charge read: the dataset's registration as the run saw it
    (a first run's own when `implicit`: recorded with the charge unless the
    dataset was registered meanwhile with the same file), and what the row
    rules dropped or replaced (kept for the data owner)."""

    registration: Registration
    implicit: bool = False
    row_rules: dict[str, object] | None = None
    fingerprint: str | None = None  # data in memory: of the columns read (else the file's hash)
    same_rows: SameRows | None = None  # a first run's: checked again with its registration


class Registry(ABC):
    """The registered datasets of a ledger (the base of `Ledger`, which
    supplies how a dataset's budget is fixed and stored)."""

    path: Path
    _store: LedgerStore

    @abstractmethod
    def _fixed(self, connection: sqlite3.Connection, dataset: str, budget: Budget | None) -> Any:
        """The dataset's budget as the ledger fixes it (given, or read back)."""

    @abstractmethod
    def _store_budget(self, connection: sqlite3.Connection, dataset: str, fixed: Any) -> None:
        """Record the fixed budget of a dataset being registered."""

    def registration(self, name: str) -> Registration | None:
        with self._store.reading() as connection, decoding(self.path):
            return read_registration(connection, name)

    def registrations(self) -> list[Registration]:
        with self._store.reading() as connection, decoding(self.path):
            return read_registrations(connection)

    def registrations_holding(self, file: str, sha256: str | None = None,
                              content: str | None = None) -> list[Registration]:
        """The datasets registered with this file (by path, bytes or content key)."""
        with self._store.reading() as connection, decoding(self.path):
            return registrations_holding(connection, file, sha256, content)

    def datasets_once_holding(self, sha256: str) -> list[str]:
        """The datasets a file with these bytes was ever registered for."""
        with self._store.reading() as connection:
            return datasets_once_holding(connection, sha256)

    def record_content(self, name: str, sha256: str, content: str) -> None:
        """Record a registered file's content key, computed when it was first
        compared (`fuzzpy.engines.content`), if the file is still the one
        registered."""
        with self._store.writing() as connection:
            connection.execute("UPDATE datasets SET content = ? WHERE name = ? AND sha256 = ?",
                               (content, name, sha256))
            # the same bytes: this key replaces none, or one an older version computed
            connection.execute("UPDATE dataset_log SET content = ? WHERE name = ? AND sha256 = ?",
                               (content, name, sha256))

    def earlier_contents(self) -> list[tuple[str, list[str], str]]:
        """(dataset, column names, content key) of every registered version
        whose key is known: an earlier version in another form stays its
        dataset's."""
        with self._store.reading() as connection:
            return earlier_contents(connection)

    def register(self, registration: Registration, budget: Budget | None,
                 same_rows: SameRows | None = None) -> Budget:
        """Register a dataset with its budget (or the one already fixed for
        its name), atomically. Refused if the name is registered, or the
        file is another dataset's, or (`same_rows`, checked again under the
        write lock) a dataset registered meanwhile holds the same rows."""
        name = registration.name
        if not name.strip():
            raise ledger_error(INVALID_BUDGET, "a dataset needs a non-empty name", self.path)
        with self._store.writing() as connection:
            if read_registration(connection, name) is not None:
                raise dataset_error(ALREADY_REGISTERED, f"dataset `{name}` is already registered",
                                    hint=f"change it with `fuzzpy dataset update {name}`")
            if same_rows is not None:
                same_rows(read_registrations(connection), earlier_contents(connection))
            holders = registrations_holding(connection, registration.file, registration.sha256,
                                            registration.content)
            if holders:
                raise other_datasets_file_error(name, holders[0])
            _refuse_earlier_file(connection, name, registration.sha256)
            fixed = self._fixed(connection, name, budget)
            if not fixed.stored:
                self._store_budget(connection, name, fixed)
            write_registration(connection, registration, "registered")
        return fixed.budget

    def update_registration(self, registration: Registration) -> None:
        """Record a registered dataset's new file, hash, schema or policies
        (its budget and history stay)."""
        name = registration.name
        with self._store.writing() as connection:
            if read_registration(connection, name) is None:
                raise dataset_error(UNKNOWN_DATASET, f"no dataset `{name}` is registered",
                                    hint=f"register it with `fuzzpy dataset register {name} FILE --budget EPS`")
            for holder in registrations_holding(connection, registration.file, registration.sha256,
                                                registration.content):
                if holder.name != name:
                    raise other_datasets_file_error(name, holder)
            write_registration(connection, registration, "updated")

    def dataset_log(self, name: str) -> list[dict[str, object]]:
        """When the dataset was registered and updated, with which file."""
        with self._store.reading() as connection:
            return [dict(row) for row in read_log(connection, name)]


def confirm_registration(connection: sqlite3.Connection, dataset: str, use: DataUse) -> None:
    """Under the write lock: the data read is still the dataset's registered
    file, or (a first run) becomes it."""
    seen = use.registration
    current = read_registration(connection, dataset)
    if current is None and use.implicit:
        if use.same_rows is not None:
            # the check for the same rows again, in the transaction that registers: two first runs of
            # one table in two forms, checked before either registered, both got a budget (issue 24)
            key = use.same_rows(read_registrations(connection), earlier_contents(connection))
            if key is not None and seen.content is None:
                seen = replace(seen, content=key)
        holders = registrations_holding(connection, seen.file, seen.sha256, seen.content)
        if holders:
            raise other_datasets_file_error(dataset, holders[0])
        _refuse_earlier_file(connection, dataset, seen.sha256)
        write_registration(connection, seen, "registered")
    elif current is None:
        raise dataset_error(UNKNOWN_DATASET, f"no dataset `{dataset}` is registered")
    elif (current.sha256, current.file) != (seen.sha256, seen.file):
        raise changed_file_error(current)


def _refuse_earlier_file(connection: sqlite3.Connection, name: str, sha256: str) -> None:
    """A file that was once another dataset's (before `dataset update`) is
    still its data: not a new dataset (FZ545, a16 F2)."""
    earlier = [n for n in datasets_once_holding(connection, sha256) if n != name]
    if earlier:
        holder = read_registration(connection, earlier[0])
        if holder is not None:
            raise other_datasets_file_error(name, holder, earlier=True)
