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
holds for replace-one neighbours only: a release of them IS a replace-one
release (`accounting.neighbours`). It fixes an unused dataset's relation to
replace-one like any replace-one release; a dataset for replace-one holds
local, shuffled and central releases alike (the central ones charged their
replace-one cost, `accounting.neighbours.resolve`); a dataset for
add/remove-one refuses it with the same FZ605, whose hint says local
reports need `--neighbours replace-one`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from fuzzpy.accounting.events import Event
from fuzzpy.accounting.local import has_local
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.errors import OTHER_NEIGHBOURS, ledger_error

ADD_REMOVE = "add-remove-one"
REPLACE_ONE = "replace-one"
_PREFIX = "neighbours:"


def recorded(connection: sqlite3.Connection, dataset: str) -> str | None:
    """The relation fixed for ``dataset``: its key, else add/remove-one if it
    has any release (charged before relations were recorded), else None."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (_PREFIX + dataset,)).fetchone()
    if row is not None:
        return str(row[0])
    used = connection.execute("SELECT 1 FROM releases WHERE dataset = ? LIMIT 1", (dataset,)).fetchone()
    return ADD_REMOVE if used is not None else None


def refuse_other(connection: sqlite3.Connection, dataset: str, relation: str, path: Path | str | None,
                 events: Sequence[Event] = ()) -> None:
    """FZ605 if ``dataset``'s charges are for another relation, or if
    ``events`` release local reports for a relation other than replace-one."""
    local = has_local(tuple(events))
    if local and relation != REPLACE_ONE:
        raise _mismatch(dataset, REPLACE_ONE, relation, path, local=True, of_release=True)
    fixed = recorded(connection, dataset)
    if fixed is not None and fixed != relation:
        raise _mismatch(dataset, fixed, relation, path, local=local)


def fix(connection: sqlite3.Connection, dataset: str, relation: str) -> None:
    """Record ``relation`` for ``dataset`` if none is (inside a write)."""
    connection.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (_PREFIX + dataset, relation))


def _mismatch(dataset: str, fixed: str, relation: str, path: Path | str | None,
              local: bool = False, of_release: bool = False) -> FuzzError:
    notes = ("budgets spent for two neighbour relations are guarantees about different pairs of datasets: "
             "they are never summed", "nothing was charged")
    if of_release:  # local reports asked for under add/remove: no finite cost exists
        return ledger_error(
            OTHER_NEIGHBOURS,
            f"refused: this release of local reports is private only for replace-one neighbours, "
            f"not for {relation} (one report per row: the number of reports gives a row added or removed away)",
            path, notes=("nothing was charged",),
            hint=f"local reports need --neighbours replace-one, on a dataset for replace-one (dataset '{dataset}')",
        )
    if local:
        return ledger_error(
            OTHER_NEIGHBOURS,
            f"refused: dataset '{dataset}' has its charges for {fixed} neighbours; this release of local reports "
            f"is private only for {relation} neighbours",
            path, notes=notes,
            hint="local reports need --neighbours replace-one: register the data as a new dataset with "
                 "`dataset register NAME FILE --neighbours replace-one`",
        )
    return ledger_error(
        OTHER_NEIGHBOURS,
        f"refused: dataset '{dataset}' has its charges for {fixed} neighbours; this release asks for {relation}",
        path,
        notes=notes,
        hint=f"run with --neighbours {fixed}, or register the data as a new dataset for {relation}",
    )

