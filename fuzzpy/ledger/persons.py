"""A dataset policy: at most k rows per person.

When one person may contribute up to k rows (a user's several sessions, a
patient's visits), privacy for the person is privacy for neighbours that
differ in up to k rows. A dataset registered with `--rows-per-person K` has
every release charged its group-privacy cost over k (`Group(k, events)`:
Dwork & Roth 2014, Thm 2.2; Laplace and Gaussian scaled exactly by the
accountant, `accounting.atoms`), and the events stored are the grouped ones.

The policy is set once, before the dataset's first release: charges already
made for a smaller group would not cover a larger one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from fuzzpy.accounting.events import Event, person_group
from fuzzpy.ledger.errors import INVALID_BUDGET, ledger_error

MAX_ROWS_PER_PERSON = 1_000_000

_TABLE = (
    "CREATE TABLE IF NOT EXISTS person_rows ("
    "dataset TEXT PRIMARY KEY, rows_per_person INTEGER NOT NULL CHECK (rows_per_person >= 1), created TEXT)"
)


def rows_per_person(connection: sqlite3.Connection, dataset: str) -> int:
    """The dataset's policy, 1 when it has none (one row per person)."""
    try:
        row = connection.execute("SELECT rows_per_person FROM person_rows WHERE dataset = ?", (dataset,)).fetchone()
    except sqlite3.OperationalError:  # a ledger from before this policy existed
        return 1
    return 1 if row is None else int(row[0])


def set_rows_per_person(connection: sqlite3.Connection, dataset: str, k: int, time: str, path: Path) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_ROWS_PER_PERSON:
        raise ledger_error(INVALID_BUDGET, f"rows per person must be a whole number from 1 to {MAX_ROWS_PER_PERSON}, not {k!r}", path)
    current = rows_per_person(connection, dataset)
    if current == k:
        return
    released = connection.execute("SELECT count(*) FROM releases WHERE dataset = ?", (dataset,)).fetchone()[0]
    if released:
        raise ledger_error(
            INVALID_BUDGET,
            f"dataset {dataset!r} already has releases charged for {current} row(s) per person; "
            "the policy is fixed before the first release",
            path,
            hint="register the data under a new dataset name",
        )
    connection.execute(_TABLE)
    connection.execute(
        "INSERT INTO person_rows (dataset, rows_per_person, created) VALUES (?, ?, ?) "
        "ON CONFLICT(dataset) DO UPDATE SET rows_per_person = excluded.rows_per_person, created = excluded.created",
        (dataset, k, time),
    )


def for_person(events: Sequence[Event], k: int) -> tuple[Event, ...]:
    """A release's events as charged under the policy."""
    return person_group(k, tuple(events))  # a central rr/krr stays outside the group (its docstring)
