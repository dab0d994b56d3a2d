"""Each dataset's neighbour relation: every charge to a dataset is for one
relation (docs/semantics.md, "Neighbour relations").

A budget spent under add/remove-one neighbours and one spent under
replace-one are guarantees about different pairs of datasets; summing them
would state neither. So the first charge (or `dataset register
--neighbours`) fixes the dataset's relation, kept in the ledger's ``meta``
table under ``neighbours:<dataset>`` (no schema change: a dataset without
the key, as in every older ledger, is add/remove-one), and a release asking
for the other relation is refused (FZ605) before anything is read or
charged. Nothing is converted silently: an owner who wants the other
relation registers the data under a new dataset name.

Local and shuffled reports give the number of rows away, so their guarantee
holds for replace-one neighbours only (`accounting.local`); a dataset whose
ledger holds releases of one kind refuses a release of the other kind
(FZ603).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from fuzzpy.accounting.events import Event
from fuzzpy.accounting.local import has_local
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.errors import COST_UNAVAILABLE, OTHER_NEIGHBOURS, ledger_error
from fuzzpy.ledger.event_codec import events_from_json

ADD_REMOVE = "add-remove-one"
_PREFIX = "neighbours:"


def recorded(connection: sqlite3.Connection, dataset: str) -> str | None:
    """The relation fixed for ``dataset``: its key, else add/remove-one if it
    has any release (charged before relations were recorded), else None."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (_PREFIX + dataset,)).fetchone()
    if row is not None:
        return str(row[0])
    used = connection.execute("SELECT 1 FROM releases WHERE dataset = ? LIMIT 1", (dataset,)).fetchone()
    return ADD_REMOVE if used is not None else None


def refuse_other(connection: sqlite3.Connection, dataset: str, relation: str, path: Path | str | None) -> None:
    """FZ605 if ``dataset``'s charges are for another relation."""
    fixed = recorded(connection, dataset)
    if fixed is not None and fixed != relation:
        raise _mismatch(dataset, fixed, relation, path)


def fix(connection: sqlite3.Connection, dataset: str, relation: str) -> None:
    """Record ``relation`` for ``dataset`` if none is (inside a write)."""
    connection.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (_PREFIX + dataset, relation))


def _mismatch(dataset: str, fixed: str, relation: str, path: Path | str | None) -> FuzzError:
    return ledger_error(
        OTHER_NEIGHBOURS,
        f"refused: dataset '{dataset}' has its charges for {fixed} neighbours; this release asks for {relation}",
        path,
        notes=("budgets spent for two neighbour relations are guarantees about different pairs of datasets: "
               "they are never summed", "nothing was charged"),
        hint=f"run with --neighbours {fixed}, or register the data as a new dataset for {relation}",
    )


def check_same_neighbours(connection: sqlite3.Connection, dataset: str, events: Sequence[Event], path: Path) -> None:
    local = has_local(tuple(events))
    rows = connection.execute("SELECT DISTINCT events FROM releases WHERE dataset = ?", (dataset,)).fetchall()
    for row in rows:
        if has_local(events_from_json(row[0])) == local:
            continue
        if local:
            message = (
                f"dataset {dataset!r} has central releases charged for add/remove neighbours; a release of "
                "local reports is private only for replace-one neighbours (it gives the number of rows away), "
                "so the two cannot be added in this ledger"
            )
        else:
            message = (
                f"dataset {dataset!r} has releases of local reports, charged for replace-one neighbours; "
                "this central release is charged for add/remove neighbours, so the two cannot be added in this ledger"
            )
        raise ledger_error(COST_UNAVAILABLE, message, path, hint="use another ledger (--ledger FILE) for this kind of release")
