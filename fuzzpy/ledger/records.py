"""Ledger rows as values: budgets, charges and history entries, exactly.

Numbers are stored as exact fraction text ('1/10'); a row that does not
decode means a damaged ledger (FZ710), reported, never repaired.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.errors import INVALID_BUDGET, NOT_A_DATABASE, ledger_error
from fuzzpy.ledger.event_codec import EventFormatError, events_from_json
from fuzzpy.ledger.quotes import Entry
from fuzzpy.ledger.rules import Budget, ReleaseCost, Spend
from fuzzpy.ledger.store import read_spend_groups


def budget_of(row: sqlite3.Row) -> Budget:
    return Budget(Fraction(row["epsilon"]), Fraction(row["delta"]), row["rule"])


def capacity_of(row: sqlite3.Row) -> Spend:
    return spend_of(row, "capacity_")


def spend_of(row: sqlite3.Row, prefix: str) -> Spend:
    return Spend(
        Fraction(row[prefix + "epsilon"]),
        Fraction(row[prefix + "delta"]),
        Fraction(row[prefix + "rho"]),
    )


def spent_on(connection: sqlite3.Connection, dataset: str, path: Path) -> Spend:
    """The exact sum of the charges recorded for ``dataset``. Each charge is
    the rule's cost of the stored events, computed in the transaction that
    stored them; summing it here is recomputing without re-running the
    accountant once per past release."""
    total = Spend()
    with decoding(path):
        for row in read_spend_groups(connection, dataset):
            spend = spend_of(row, "spend_")
            times = row["times"]
            total = total + Spend(times * spend.epsilon, times * spend.delta, times * spend.rho)
    return total


@contextmanager
def decoding(path: Path) -> Iterator[None]:
    """Rows that do not decode mean a damaged ledger (FZ710), not a bug."""
    try:
        yield
    except (ValueError, KeyError, IndexError, ZeroDivisionError, EventFormatError, FuzzError) as exc:
        if isinstance(exc, FuzzError) and exc.diagnostics[0].code != INVALID_BUDGET:
            raise
        message = f"the ledger {path} holds a record that cannot be read: {exc}"
        raise ledger_error(NOT_A_DATABASE, message, path) from exc


def spend_columns(cost: ReleaseCost) -> dict[str, str | None]:
    return {
        "spend_epsilon": str(cost.spend.epsilon),
        "spend_delta": str(cost.spend.delta),
        "spend_rho": str(cost.spend.rho),
        "epsilon": str(cost.epsilon),
        "delta": str(cost.delta),
        "method": cost.method,
    }


def entry_of(row: sqlite3.Row, budget: Budget, spend: Spend, remaining: Spend) -> Entry:
    cost = ReleaseCost(spend, Fraction(row["epsilon"]), Fraction(row["delta"]), row["method"])
    seeded = row["seeded"]
    return Entry(
        id=row["id"],
        dataset=row["dataset"],
        time=row["time"],
        program=row["program"],
        program_sha256=row["program_sha256"],
        definition=row["definition"],
        events=events_from_json(row["events"]),
        budget=budget,
        cost=cost,
        remaining=remaining,
        data_sha256=row["data_sha256"],
        seeded=None if seeded is None else bool(seeded),
        status=row["status"],
        released=None if row["released"] is None else json.loads(row["released"]),
        row_rules=None if row["row_rules"] is None else json.loads(row["row_rules"]),
        arguments=None if row["arguments"] is None else json.loads(row["arguments"]),
        assumptions=_assumptions(row["assumptions"]),
    )


def _assumptions(text: str | None) -> tuple[tuple[str, str], ...]:
    """The unchecked `assume def`s a charge rests on, as recorded (version 6)."""
    if text is None:
        return ()
    return tuple((str(a["definition"]), str(a["claim"])) for a in json.loads(text))
