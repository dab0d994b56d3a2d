"""Which neighbours a dataset's charges are for: local reports do not mix
with central releases in one ledger.

A local or shuffled release (`local`, `shuffle`) gives away the number of
rows, so its guarantee holds for replace-one neighbours only
(`accounting.local`); a central release's charge is for add/remove
neighbours. The ledger's sum of charges is a valid total under one relation
only: a dataset whose ledger holds releases of one kind refuses a release of
the other kind (FZ603) rather than add figures measured in different units.
(Declaring a dataset's relation, and converting charges between relations,
is issue 28's item 3.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from fuzzpy.accounting.events import Event
from fuzzpy.accounting.local import has_local
from fuzzpy.ledger.errors import COST_UNAVAILABLE, ledger_error
from fuzzpy.ledger.event_codec import events_from_json


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
