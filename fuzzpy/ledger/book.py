"""The persistent privacy-budget ledger: one SQLite file, budgets per dataset.

    ledger = Ledger(path)                        # created if absent
    ledger.quote(dataset, events, budget)        # read-only; FZ601 if over budget
    ledger.charge(dataset, events, budget, program=..., definition=...)
    ledger.history(dataset)

A dataset is a name. Its budget (total epsilon, delta and composition rule,
see `ledger_rules`) is fixed by the first charge (or `set_budget`, or its
registration); a later, different budget is refused (FZ602). A registered
dataset (`fuzzpy.ledger.datasets`) also has a data file, whose hash each
charge re-checks under the write lock; a run registers the file it reads on
the dataset's first charge, in the same transaction. Ledgers written before
registration keyed unnamed datasets `sha256:<hex of the file>`
(`dataset_key`); those keys keep their budgets.

Each release is stored with its mechanism events (JSON, exact), the charge in
the rule's currency and its own (epsilon, delta), the time, the program (path
and SHA-256) and the definition. `charge` takes SQLite's write lock
(``BEGIN IMMEDIATE``) *before* reading what was spent, so two processes can
never both spend the last of a budget, and commits before it returns: a crash
after `charge` returns keeps the charge; a crash before it leaves none.

Where the file lives: ``--ledger FILE``; else ``$FUZZPY_LEDGER``; else
``$XDG_DATA_HOME/fuzzpy/ledger.sqlite`` (``~/.local/share/fuzzpy/ledger.sqlite``;
``%LOCALAPPDATA%\\fuzzpy\\ledger.sqlite`` on Windows). See `default_ledger_path`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from fuzzpy.accounting.events import Event
from fuzzpy.ledger.costs import CostUnavailable
from fuzzpy.ledger.errors import (
    BUDGET_MISMATCH,
    COST_UNAVAILABLE,
    INVALID_BUDGET,
    LEDGER_BUSY,
    NO_BUDGET,
    ledger_error,
)
from fuzzpy.ledger.event_codec import events_to_json
from fuzzpy.ledger.neighbours import ADD_REMOVE, recorded, refuse_other
from fuzzpy.ledger.neighbours import fix as fix_neighbours
from fuzzpy.ledger.persons import for_person, rows_per_person, set_rows_per_person
from fuzzpy.ledger.policy import pure_budget_hint, refusal_hint
from fuzzpy.ledger.quotes import Entry, Quote, Receipt, over_budget_error
from fuzzpy.ledger.records import (
    budget_of,
    capacity_of,
    decoding,
    entry_of,
    spend_columns,
    spend_of,
    spent_on,
)
from fuzzpy.ledger.registry import DataUse, Registry, confirm_registration
from fuzzpy.ledger.rules import (
    ZCDP_MEASURE,
    Budget,
    BudgetError,
    Exact,
    ReleaseCost,
    Spend,
    exact_number,
    format_number,
    rule_named,
    zcdp_measure_cost,
)
from fuzzpy.ledger.store import (
    LedgerStore,
    insert_budget_row,
    insert_release_row,
    read_budget_row,
    read_budget_rows,
    read_release_row,
    read_release_rows,
    update_release_row,
    utc_now,
)
from fuzzpy.support.records import frozen

__all__ = [
    "Budget",
    "DataUse",
    "DatasetState",
    "Entry",
    "Ledger",
    "Quote",
    "Receipt",
    "Spend",
    "dataset_key",
    "default_ledger_path",
]

LEDGER_ENV = "FUZZPY_LEDGER"
Request = tuple[str, Sequence[Event], "Budget | None"]


def default_ledger_path() -> Path:
    """``$FUZZPY_LEDGER``, else the per-user data directory's
    ``fuzzpy/ledger.sqlite`` (XDG on Unix, %LOCALAPPDATA% on Windows)."""
    configured = os.environ.get(LEDGER_ENV)
    if configured:
        return Path(configured).expanduser()
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "fuzzpy" / "ledger.sqlite"


def file_sha256(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dataset_key(path: str | os.PathLike[str]) -> str:
    """A dataset key from a file's content: ``sha256:<hex>``."""
    return f"sha256:{file_sha256(path)}"


class DatasetState(NamedTuple):
    """A dataset's budget, what its releases spent and what remains
    (in the budget rule's currency)."""

    dataset: str
    budget: Budget
    spent: Spend
    remaining: Spend


@frozen
class _Fixed:
    """A dataset's budget with its capacity in the rule's currency."""

    budget: Budget
    capacity: Spend
    stored: bool


class Ledger(Registry):
    """A ledger file; see the module docstring. Usable as a context manager."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        timeout: float = 60.0,
    ) -> None:
        self.path = Path(path) if path is not None else default_ledger_path()
        self._store = LedgerStore(self.path, create=create, timeout=timeout)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------ budgets

    def budget(self, dataset: str) -> Budget | None:
        """The budget fixed for ``dataset``, if any."""
        with self._store.reading() as connection:
            row = read_budget_row(connection, dataset)
        return None if row is None else budget_of(row)

    def set_budget(self, dataset: str, budget: Budget) -> Budget:
        """Fix ``dataset``'s budget (no-op if the same one is already fixed)."""
        _check_dataset(dataset, self.path)
        with self._store.writing() as connection:
            fixed = self._fixed(connection, dataset, budget)
            if not fixed.stored:
                self._store_budget(connection, dataset, fixed)
        return fixed.budget

    # ------------------------------------------------------------ releases

    def quote(
        self,
        dataset: str,
        events: Sequence[Event],
        budget: Budget | None = None,
        *,
        release_delta: Exact | None = None,
        neighbours: str = ADD_REMOVE,
        zcdp: bool = False,
    ) -> Quote:
        """What the release would cost and leave; changes nothing.

        Raises FuzzError FZ601 if it would exceed the remaining budget, FZ605
        if the dataset's charges are for another neighbour relation
        (fuzzpy.ledger.neighbours). ``budget=None`` uses the one fixed for
        the dataset.
        """
        _check_dataset(dataset, self.path)
        with self._store.reading() as connection:
            refuse_other(connection, dataset, neighbours, self.path, events)
            fixed = self._fixed(connection, dataset, budget)
            spent = spent_on(connection, dataset, self.path)
            persons = rows_per_person(connection, dataset)
            events = for_person(events, persons)
        cost = self._cost(events, fixed, release_delta, zcdp)
        return self._checked_quote(dataset, fixed, cost, spent, events, neighbours, persons)

    def charge(
        self,
        dataset: str,
        events: Sequence[Event],
        budget: Budget | None = None,
        *,
        program: str | os.PathLike[str] | None = None,
        definition: str | None = None,
        program_source: str | None = None,
        release_delta: Exact | None = None,
        use: DataUse | None = None,
        seeded: bool | None = None,
        neighbours: str = ADD_REMOVE,
        arguments: dict[str, str] | None = None,
        zcdp: bool = False,
    ) -> Receipt:
        """Re-check and record the release atomically; committed on return."""
        (receipt,) = self.charge_many(
            [(dataset, events, budget)],
            program=program,
            definition=definition,
            program_source=program_source,
            release_delta=release_delta,
            uses=None if use is None else [use],
            seeded=seeded,
            neighbours=neighbours,
            arguments=arguments,
            zcdp=zcdp,
        )
        return receipt

    def charge_many(
        self,
        requests: Sequence[Request],
        *,
        program: str | os.PathLike[str] | None = None,
        definition: str | None = None,
        program_source: str | None = None,
        release_delta: Exact | None = None,
        uses: Sequence[DataUse | None] | None = None,
        seeded: bool | None = None,
        neighbours: str = ADD_REMOVE,
        arguments: dict[str, str] | None = None,
        zcdp: bool = False,
        assumptions: Sequence[tuple[str, str]] = (),
    ) -> list[Receipt]:
        """Charge one release to several datasets (a definition with several
        `bag` parameters): all charges are recorded, or none.

        ``uses[i]`` is the data request i read (its registration is checked,
        or recorded, in the same transaction); ``seeded`` marks a run whose
        noise came from ``--seed`` (not private); ``arguments`` are the
        run's public arguments as given (`--arg`), recorded with each charge;
        ``assumptions`` the unchecked `assume def`s (name, claim) the charge
        rests on, recorded with it. Each release is recorded
        as "charged"; `record_release` marks it released with its value.
        """
        asked = list(requests)
        requests = self._per_person(asked)  # the events as charged under each dataset's policy
        costs = [self._precompute(request, release_delta, zcdp) for request in requests]
        program_text, program_hash = _program_identity(program, program_source)
        time = utc_now()
        receipts = []
        uses = list(uses) if uses is not None else [None] * len(requests)
        with self._store.writing() as connection:
            for (dataset, events, _given), (expected, cost), use, (_, original, _b) in zip(
                requests, costs, uses, asked, strict=True
            ):
                # re-read under the lock: the budget and relation must still be the ones costed
                refuse_other(connection, dataset, neighbours, self.path, events)
                fix_neighbours(connection, dataset, neighbours)
                fixed = self._fixed(connection, dataset, expected)
                persons = rows_per_person(connection, dataset)
                if for_person(original, persons) != tuple(events):
                    raise ledger_error(LEDGER_BUSY, f"the rows-per-person policy of {dataset!r} changed during this charge",
                                       self.path, hint="run again")
                quote = self._checked_quote(
                    dataset, fixed, cost, spent_on(connection, dataset, self.path), events, neighbours, persons
                )
                if not fixed.stored:
                    self._store_budget(connection, dataset, fixed)
                if use is not None:
                    confirm_registration(connection, dataset, use)
                row = {
                    "dataset": dataset,
                    "time": time,
                    "program": program_text,
                    "program_sha256": program_hash,
                    "definition": definition,
                    "events": events_to_json(events),
                    **spend_columns(cost),
                    "data_sha256": None if use is None else use.fingerprint or use.registration.sha256,
                    "seeded": None if seeded is None else int(seeded),
                    "status": "charged",
                    "row_rules": None if use is None or use.row_rules is None else json.dumps(use.row_rules),
                    "arguments": json.dumps(arguments, sort_keys=True) if arguments else None,
                    "assumptions": json.dumps([{"definition": n, "claim": c} for n, c in assumptions])
                    if assumptions else None,
                }
                release_id = insert_release_row(connection, row)
                receipts.append(Receipt(**vars(quote), id=release_id, time=time))
        return receipts

    def _per_person(self, requests: Sequence[Request]) -> list[Request]:
        with self._store.reading() as connection:
            return [(d, for_person(e, rows_per_person(connection, d)), b) for d, e, b in requests]

    def set_rows_per_person(self, dataset: str, k: int) -> None:
        """The dataset policy "at most k rows per person" (`persons`): every
        later release is charged its group-privacy cost over k. Set before
        the dataset's first release."""
        _check_dataset(dataset, self.path)
        with self._store.writing() as connection:
            set_rows_per_person(connection, dataset, k, utc_now(), self.path)

    def rows_per_person(self, dataset: str) -> int:
        with self._store.reading() as connection:
            return rows_per_person(connection, dataset)

    def record_release(
        self, release_ids: Sequence[int], released: object, audit: dict[str, object] | None = None
    ) -> None:
        """Mark charged releases as released, with the value shown (JSON data)
        and any counts the computation adds for the owner (merged into the
        row rules' counts)."""
        text = json.dumps(released)  # as `run --json` shows it: a labelled release keeps its declared order
        with self._store.writing() as connection:
            for release_id in release_ids:
                row = read_release_row(connection, release_id)
                if row is None:
                    continue
                rules = json.loads(row["row_rules"]) if row["row_rules"] else {}
                if audit:
                    rules.update(audit)
                update_release_row(connection, release_id, {
                    "status": "released",
                    "released": text,
                    "row_rules": json.dumps(rules, sort_keys=True) if rules else row["row_rules"],
                })

    def history(self, dataset: str | None = None) -> list[Entry]:
        """Every release (of ``dataset``, or all), oldest first, each with
        what remained of its dataset's budget after it."""
        with self._store.reading() as connection:
            budgets = {row["dataset"]: row for row in read_budget_rows(connection)}
            rows = read_release_rows(connection, dataset)
            relations = {name: recorded(connection, name) or ADD_REMOVE for name in {row["dataset"] for row in rows}}
        spent: dict[str, Spend] = {}
        entries = []
        with decoding(self.path):
            for row in rows:
                budget_row = budgets[row["dataset"]]
                spend = spend_of(row, "spend_")
                total = spent[row["dataset"]] = spent.get(row["dataset"], Spend()) + spend
                remaining = capacity_of(budget_row) - total
                entries.append(replace(entry_of(row, budget_of(budget_row), spend, remaining),
                                       neighbours=relations[row["dataset"]]))
        return entries

    def audit(self, dataset: str | None = None) -> list[tuple[Entry, ReleaseCost | None]]:
        """Recompute every release's charge from its stored events under its
        dataset's rule with today's accountant, beside the stored charge.

        The filter's state is the charges it recorded (the sum of what it
        admitted); this checks that the stored events still justify them.
        A recomputed cost of None means the events can no longer be costed.
        """
        checked = []
        for entry in self.history(dataset):
            rule = rule_named(entry.budget.rule)
            try:
                delta = entry.cost.spend.delta or None
                if entry.cost.method.startswith(ZCDP_MEASURE) and delta is not None:
                    # charged in its definition's declared measure: recomputed in it
                    checked.append((entry, zcdp_measure_cost(entry.events, entry.budget, delta)))
                    continue
                checked.append((entry, rule.cost(entry.events, entry.budget, delta)))
            except CostUnavailable:
                checked.append((entry, None))
        return checked

    def neighbours(self, dataset: str) -> str:
        """The neighbour relation ``dataset``'s charges are for (add/remove-one
        unless a charge or its registration fixed another:
        fuzzpy.ledger.neighbours)."""
        with self._store.reading() as connection:
            return recorded(connection, dataset) or ADD_REMOVE

    def set_neighbours(self, dataset: str, relation: str) -> None:
        """Fix ``dataset``'s neighbour relation (its registration); FZ605 if
        its charges are already for another one."""
        _check_dataset(dataset, self.path)
        with self._store.writing() as connection:
            refuse_other(connection, dataset, relation, self.path)
            fix_neighbours(connection, dataset, relation)

    def datasets(self) -> list[DatasetState]:
        """Each dataset with its budget, what is spent and what remains."""
        with self._store.reading() as connection, decoding(self.path):
            states = []
            for row in read_budget_rows(connection):
                spent = spent_on(connection, row["dataset"], self.path)
                remaining = capacity_of(row) - spent
                states.append(DatasetState(row["dataset"], budget_of(row), spent, remaining))
            return states

    # ------------------------------------------------------------ internals

    def _fixed(self, connection: sqlite3.Connection, dataset: str, budget: Budget | None) -> _Fixed:
        row = read_budget_row(connection, dataset)
        if row is not None:
            with decoding(self.path):
                stored, capacity = budget_of(row), capacity_of(row)
            if budget is not None and budget != stored:
                raise _mismatch(dataset, stored, budget, self.path)
            return _Fixed(stored, capacity, stored=True)
        if budget is None:
            raise ledger_error(
                NO_BUDGET,
                f"no budget is set for dataset {dataset!r}",
                self.path,
                hint="give one with --budget EPS or --budget EPS,DELTA",
            )
        return _Fixed(budget, rule_named(budget.rule).capacity(budget), stored=False)

    def _precompute(
        self, request: Request, release_delta: Exact | None, zcdp: bool = False
    ) -> tuple[Budget, ReleaseCost]:
        """The budget and cost of a request, computed before the write lock
        is taken (the accountant may take a while); re-checked under it."""
        dataset, events, budget = request
        _check_dataset(dataset, self.path)
        with self._store.reading() as connection:
            fixed = self._fixed(connection, dataset, budget)
        return fixed.budget, self._cost(events, fixed, release_delta, zcdp)

    def _cost(
        self, events: Sequence[Event], fixed: _Fixed, release_delta: Exact | None, zcdp: bool = False
    ) -> ReleaseCost:
        """``zcdp``: the definition declares `privacy zcdp[delta]` (``release_delta``):
        a basic budget is charged its rho-zCDP's conversion at that delta,
        the figure `check` reports; a zcdp budget its rho, as always."""
        budget = fixed.budget
        delta = None
        if release_delta is not None:
            try:
                delta = exact_number(release_delta, "the release's delta")
            except BudgetError as exc:
                raise ledger_error(INVALID_BUDGET, str(exc), self.path) from None
            if not 0 < delta < 1:
                message = f"a release's delta must be in (0, 1), not {format_number(delta)}"
                raise ledger_error(INVALID_BUDGET, message, self.path)
        try:
            if zcdp and budget.rule == "basic" and delta is not None:
                return zcdp_measure_cost(tuple(events), budget, delta)
            return rule_named(budget.rule).cost(tuple(events), budget, delta)
        except CostUnavailable as exc:
            message = f"this release cannot be charged to a {budget.rule} budget: {exc}"
            hint = pure_budget_hint(fixed.stored) if budget.rule == "basic" and budget.delta == 0 else None
            raise ledger_error(COST_UNAVAILABLE, message, self.path, hint=hint) from exc

    def _checked_quote(
        self, dataset: str, fixed: _Fixed, cost: ReleaseCost, spent: Spend, events: Sequence[Event],
        neighbours: str = ADD_REMOVE, persons: int = 1,
    ) -> Quote:
        quote = Quote(dataset, fixed.budget, cost, spent, fixed.capacity, neighbours=neighbours,
                      rows_per_person=persons)
        if not rule_named(fixed.budget.rule).fits(spent, cost.spend, fixed.capacity):
            left = fixed.capacity - spent
            hint = refusal_hint(events, fixed.budget, cost, left, fixed.stored)
            raise over_budget_error(quote, self.path, hint, neighbours)
        return quote

    def _store_budget(self, connection: sqlite3.Connection, dataset: str, fixed: _Fixed) -> None:
        budget, capacity = fixed.budget, fixed.capacity
        insert_budget_row(
            connection,
            {
                "dataset": dataset,
                "rule": budget.rule,
                "epsilon": str(budget.epsilon),
                "delta": str(budget.delta),
                "capacity_epsilon": str(capacity.epsilon),
                "capacity_delta": str(capacity.delta),
                "capacity_rho": str(capacity.rho),
                "created": utc_now(),
            },
        )


# ---------------------------------------------------------------- helpers


def _check_dataset(dataset: str, path: Path) -> None:
    if not isinstance(dataset, str) or not dataset.strip():
        raise ledger_error(INVALID_BUDGET, "a dataset needs a non-empty name", path)


def _mismatch(dataset: str, stored: Budget, given: Budget, path: Path) -> Exception:
    return ledger_error(
        BUDGET_MISMATCH,
        f"dataset {dataset!r} has budget {stored.describe()}, not {given.describe()}",
        path,
        notes=("a dataset's budget is fixed by its first release and cannot change",),
        hint=f"run with --budget matching {stored.describe()}, or without --budget",
    )


def _program_identity(
    program: str | os.PathLike[str] | None, source: str | None
) -> tuple[str | None, str | None]:
    if source is not None:
        return (None if program is None else str(program)), hashlib.sha256(
            source.encode("utf-8")
        ).hexdigest()
    if program is None:
        return None, None
    try:
        return str(program), file_sha256(program)
    except OSError:
        return str(program), None
