"""`fuzzpy dataset`: a data owner registers, validates and audits datasets.

    fuzzpy dataset register NAME FILE --budget EPS[,DELTA] [--rule basic|zcdp]
                            [--neighbours add-remove-one|replace-one]
                            [--type COL=KIND]... [--missing [COL=]POLICY]...
    fuzzpy dataset check NAME|FILE [--type ...] [--missing ...]
    fuzzpy dataset update NAME [FILE] [--type ...] [--missing ...]
    fuzzpy dataset list
    fuzzpy dataset show NAME

These are the owner's commands: they show rows that do not fit the schema
(file:line:col) and what the row rules did in each release. `fuzzpy run`
never shows either.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fuzzpy.commands.common import EXIT_OK, EXIT_REJECTED, print_diagnostics, print_json
from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.source import NO_SPAN
from fuzzpy.ledger.book import Ledger, default_ledger_path
from fuzzpy.ledger.datasets import (
    BAD_POLICY,
    KINDS,
    REFUSED_CELLS,
    UNKNOWN_DATASET,
    Column,
    Policy,
    Registration,
    check_name,
    dataset_error,
)
from fuzzpy.ledger.quotes import describe_amount
from fuzzpy.ledger.registry import SameRows
from fuzzpy.ledger.rules import RULES, Budget
from fuzzpy.ledger.store import utc_now

DESCRIPTION = """\
A dataset is a name with a data file (CSV or Parquet), a total privacy budget,
a composition rule, and a public schema: each column's type and the policy for
a cell that does not fit it (missing, not a number, not finite, beyond 64 bits,
not a boolean, not UTF-8):

  drop      drop the row (the default)
  value:V   replace the cell by V
  refuse    the file is not accepted while such a cell exists

Each is a 1-stable row transformation, so it composes with every release at no
extra cost. `register` and `update` validate the file and record its SHA-256:
a run refuses a file that has changed since (exit 2) until its owner accepts
it with `update`; the dataset, its budget and history stay the same.

These commands show the rows that do not fit (file:line:col) and what the row
rules did in each release. `fuzzpy run` never shows either.
"""

ACTIONS = ("register", "check", "update", "list", "show")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    register = _action(actions, "register", "register a dataset: its file, budget, schema and row rules")
    register.add_argument("name", metavar="NAME", help="the dataset's name (letters, digits, _ . -)")
    register.add_argument("file", metavar="FILE", help="its data file (.csv, or .parquet / .pq)")
    register.add_argument("--budget", metavar="EPS[,DELTA]",
                          help="its total privacy budget (needed unless one is already fixed for NAME)")
    register.add_argument("--neighbours", choices=("add-remove-one", "replace-one"), default=None,
                          help="the neighbour relation every charge to it is for (default: fixed by its first "
                          "release, add-remove-one unless that asks for replace-one)")
    register.add_argument("--rule", choices=sorted(RULES), default="basic",
                          help="how releases spend the budget (default: basic)")
    register.add_argument("--rows-per-person", type=int, metavar="K", default=None,
                          help="one person may hold up to K rows: every release is charged its group-privacy "
                               "cost over K (set before the first release)")
    _schema_options(register)
    check = _action(actions, "check", "validate a dataset's file (or any file) and list the rows that do not fit")
    check.add_argument("target", metavar="NAME|FILE", help="a registered dataset, or a data file")
    _schema_options(check)
    update = _action(actions, "update", "accept a registered dataset's changed or new file, or change its schema")
    update.add_argument("name", metavar="NAME")
    update.add_argument("file", metavar="FILE", nargs="?", help="its new data file (default: the registered one)")
    _schema_options(update)
    _action(actions, "list", "every dataset: its file, budget and whether its file changed")
    show = _action(actions, "show", "a dataset's registration, history and each release's row-rule counts")
    show.add_argument("name", metavar="NAME")


def _action(actions: Any, name: str, text: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(name, help=text, description=text)
    parser.add_argument("--ledger", metavar="FILE",
                        help="the ledger file (default: $FUZZPY_LEDGER, else ~/.local/share/fuzzpy/ledger.sqlite)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    return parser


def _schema_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", action="append", metavar="COL=KIND", default=[],
                        help=f"declare a column's type ({', '.join(KINDS)}); undeclared CSV columns "
                        "are inferred and shown")
    parser.add_argument("--missing", action="append", metavar="[COL=]POLICY", default=[],
                        help="policy for a column's cells that do not fit: drop, refuse or value:V; "
                        "without COL=, for every column not named")
    parser.add_argument("--limit", type=int, default=20, metavar="N",
                        help="list at most N rows that do not fit (default 20)")


def run(args: argparse.Namespace) -> int:
    path = Path(args.ledger).expanduser() if args.ledger else default_ledger_path()
    handler = {"register": _register, "check": _check, "update": _update, "list": _list, "show": _show}
    return handler[args.action](args, path)


# ---------------------------------------------------------------- register / check / update


def _register(args: argparse.Namespace, path: Path) -> int:
    check_name(args.name)
    budget = Budget.parse(args.budget, args.rule) if args.budget else None
    file, validation = _validate(args, args.file, None)
    registration = _registration(args.name, file, validation, None)
    accepted = validation.refused == 0
    if accepted:
        with Ledger(path) as ledger:
            registration = _with_content(ledger, registration)
            if args.neighbours is not None:  # before the budget: a refusal (FZ605) registers nothing new
                ledger.set_neighbours(args.name, args.neighbours)
            if args.rows_per_person is not None:  # checked (and refused) before anything is written
                ledger.set_rows_per_person(args.name, args.rows_per_person)
            budget = ledger.register(registration, budget, _same_rows(registration))
    _print_validation(args, registration, validation, "registered" if accepted else "not registered", budget)
    return EXIT_OK if accepted else EXIT_REJECTED


def _check(args: argparse.Namespace, path: Path) -> int:
    registered = None
    if path.exists():
        with Ledger(path, create=False) as ledger:
            registered = ledger.registration(args.target)
            if registered is None and Path(args.target).exists():  # a registered dataset's file, by its path
                held = ledger.registrations_holding(str(Path(args.target).resolve()))
                registered = held[0] if held else None
    if registered is None and not Path(args.target).exists():
        raise dataset_error(UNKNOWN_DATASET, f"`{args.target}` is neither a registered dataset nor a file",
                            hint="register a dataset with `fuzzpy dataset register NAME FILE --budget EPS`")
    file, validation = _validate(args, registered.file if registered else args.target, registered)
    candidate = _registration(registered.name if registered else "-", file, validation, registered)
    changed = registered is not None and file.sha256 != registered.sha256
    usable = validation.refused == 0 and not changed
    status = "changed since it was validated" if changed else "unchanged" if registered else "not registered"
    _print_validation(args, candidate, validation, status, None)
    return EXIT_OK if usable else EXIT_REJECTED


def _update(args: argparse.Namespace, path: Path) -> int:
    with Ledger(path, create=False) as ledger:
        previous = ledger.registration(args.name)
        if previous is None:
            raise dataset_error(UNKNOWN_DATASET, f"no dataset `{args.name}` is registered",
                                hint=f"register it with `fuzzpy dataset register {args.name} FILE --budget EPS`")
        file, validation = _validate(args, args.file or previous.file, previous)
        registration = _registration(previous.name, file, validation, previous)
        accepted = validation.refused == 0
        if accepted:
            _key_previous_version(ledger, previous)
            ledger.update_registration(_with_content(ledger, registration))
    _print_validation(args, registration, validation, "updated" if accepted else "not updated", None)
    return EXIT_OK if accepted else EXIT_REJECTED


def _key_previous_version(ledger: Ledger, previous: Registration) -> None:
    """A first run's dataset was never keyed (a file is keyed lazily): key
    the version being replaced while its bytes can still be read, from its
    file or the hash's remembered key, so that its rows in another form stay
    this dataset's after the update (a20 F1)."""
    from fuzzpy.engines.content import current, file_content

    if not current(previous.content) and previous.format != "frame":
        key = file_content(previous.file, previous.format, previous.sha256)
        if key is not None:
            ledger.record_content(previous.name, previous.sha256, key)


def _same_rows(registration: Registration) -> SameRows:
    """The check for the same rows, made again under the ledger's write lock."""
    from fuzzpy.data.datasets import file_keys, same_rows_check
    from fuzzpy.engines.content import file_content

    keys = file_keys(file_content, registration.file, registration.format, registration.sha256, registration.content)
    return same_rows_check(registration.name, [c.name for c in registration.columns], keys, file_content)


def _with_content(ledger: Ledger, registration: Registration) -> Registration:
    """The same rows in another form cannot be a second dataset (FZ545), as
    for a first run (`runtime.datasets.refuse_same_rows`)."""
    from dataclasses import replace

    from fuzzpy.data.datasets import file_keys, refuse_same_rows
    from fuzzpy.engines.content import file_content

    # Keyed eagerly (the owner's validation read every row anyway): once the
    # file is updated its old bytes are gone, and the log keeps each version's
    # key, so an earlier version in another form stays this dataset's (a18 F2).
    content = refuse_same_rows(ledger, registration.name, [c.name for c in registration.columns],
                               file_keys(file_content, registration.file, registration.format, registration.sha256),
                               eager=True, file_content=file_content)
    return replace(registration, content=content)


def _validate(args: argparse.Namespace, file_path: str, previous: Registration | None) -> tuple[Any, Any]:
    """Validate a file under the schema given on the command line, over what
    `previous` registered for the columns the file still has."""
    from fuzzpy.data.loader import read_data_file, read_header
    from fuzzpy.data.validation import validate

    given_types = _pairs(args.type, "--type", _kind)
    default = Policy()
    given_policies: dict[str, Policy] = {}
    for item in args.missing:
        if item.strip() in ("drop", "refuse") or item.strip().startswith("value:"):
            default = Policy.parse(item)
        else:
            given_policies.update(_pairs([item], "--missing", Policy.parse))
    file = read_data_file(file_path)
    header = read_header(file)
    kept = [c for c in previous.columns if c.name in header.names] if previous else []
    declared = {**{c.name: c.kind for c in kept if c.kind and c.kind != "none"}, **given_types}  # none: typed again
    policies = {**{c.name: c.policy for c in kept}, **given_policies}
    return file, validate(file, header, declared, policies, default, max(args.limit, 0))


def _registration(name: str, file: Any, validation: Any, previous: Registration | None) -> Registration:
    now = utc_now()
    return Registration(
        name=name, file=file.absolute, format=file.format, sha256=file.sha256, size=len(file.data),
        columns=validation.columns, explicit=True,
        registered=previous.registered if previous else now, validated=now, report=validation.counts,
    )


def _pairs(items: list[str], option: str, convert: Any) -> dict[str, Any]:
    pairs = {}
    for item in items:
        column, sep, value = item.partition("=")
        if not sep or not column.strip():
            raise dataset_error(BAD_POLICY, f"{option} expects COL=VALUE, not `{item}`")
        pairs[column.strip()] = convert(value)
    return pairs


def _kind(text: str) -> str:
    if text.strip() not in KINDS:
        raise dataset_error(BAD_POLICY, f"`{text}` is not a column type", hint="a type is " + ", ".join(KINDS))
    return text.strip()


def _print_validation(
    args: argparse.Namespace, registration: Registration, validation: Any, status: str, budget: Budget | None
) -> None:
    if args.json:
        print_json({
            "dataset": registration.public_json(),
            "status": status,
            "budget": budget.to_json() if budget else None,
            "inferred": list(validation.inferred),
            "notes": list(validation.notes),
            "counts": validation.counts,
            "problems": [d.to_json() for d in _with_refusal(validation)],
            "unlisted": validation.unlisted,
        })
        return
    lines = [f"dataset {registration.name}: {status}"]
    lines.append(f"  file     {registration.file} ({registration.format}, sha256 {registration.sha256[:16]}…)")
    if budget is not None:
        lines.append(f"  budget   {budget.describe()}")
    lines.extend(_column_lines(registration.columns, validation.inferred))
    lines.append("  rows     " + _counts_text(validation.counts))
    lines.extend(f"  note: {note}" for note in validation.notes)
    sys.stdout.write("\n".join(lines) + "\n")
    print_diagnostics(_with_refusal(validation), {registration.file: validation.shown_lines,
                                                  validation.shown_lines.name: validation.shown_lines})
    if validation.unlisted:
        sys.stderr.write(f"... and {validation.unlisted} more (--limit N lists more)\n")


def _with_refusal(validation: Any) -> tuple[Diagnostic, ...]:
    if not validation.refused:
        return validation.problems
    refusal = Diagnostic(
        REFUSED_CELLS, f"{validation.refused} cell(s) of `refuse` columns do not fit: the file is not accepted",
        NO_SPAN, hint="fix the file, or choose another policy (--missing COL=drop or COL=value:V)",
    )
    return (*validation.problems, refusal)


def _column_lines(columns: tuple[Column, ...], inferred: tuple[str, ...]) -> list[str]:
    width = max((len(c.name) for c in columns), default=0)
    lines = []
    for i, column in enumerate(columns):
        label = "columns  " if i == 0 else "         "
        note = "  (inferred)" if column.name in inferred else ""
        lines.append(f"  {label}{column.name.ljust(width)}  {(column.kind or 'any').ljust(6)}  {column.policy}{note}")
    return lines


def _counts_text(counts: dict[str, Any]) -> str:
    text = f"{counts.get('records', '?')} records; {counts.get('rows_dropped', 0)} dropped"
    if counts.get("malformed_lines"):
        text += f" ({counts['malformed_lines']} malformed or ragged lines)"
    return text + f"; {counts.get('cells_replaced', 0)} cells replaced"


# ---------------------------------------------------------------- list / show


def _list(args: argparse.Namespace, path: Path) -> int:
    if not path.exists():
        _print_nothing(args, path)
        return EXIT_OK
    with Ledger(path, create=False) as ledger:
        registrations = {r.name: r for r in ledger.registrations()}
        states = {s.dataset: s for s in ledger.datasets()}
    rows = []
    for name in sorted(set(registrations) | set(states)):
        registration, state = registrations.get(name), states.get(name)
        rows.append({
            "name": name,
            "file": registration.file if registration else None,
            "format": registration.format if registration else None,
            "file_status": _file_status(registration),
            "registered_by": ("owner" if registration.explicit else "first run") if registration else None,
            "budget": state.budget.to_json() if state else None,
            "remaining": describe_amount(state.remaining, state.budget, up=False) if state else None,
        })
    if args.json:
        print_json({"ledger": str(path), "datasets": rows})
    else:
        lines = [f"ledger {path}"] + [
            f"  {row['name']}  {row['file'] or '(no file registered)'}  [{row['file_status']}]  "
            f"remaining {row['remaining']}" for row in rows
        ]
        sys.stdout.write("\n".join(lines if rows else [*lines, "  (no datasets yet)"]) + "\n")
    return EXIT_OK


def _file_status(registration: Registration | None) -> str:
    from fuzzpy.data.loader import read_data_file

    if registration is None:
        return "no file"
    try:
        digest = read_data_file(registration.file).sha256
    except Exception:  # noqa: BLE001 - any unreadable file is "missing" here
        return "missing"
    return "unchanged" if digest == registration.sha256 else "changed"


def _show(args: argparse.Namespace, path: Path) -> int:
    if not path.exists():
        raise dataset_error(UNKNOWN_DATASET, f"the ledger {path} does not exist yet")
    with Ledger(path, create=False) as ledger:
        registration = ledger.registration(args.name)
        state = next((s for s in ledger.datasets() if s.dataset == args.name), None)
        if registration is None and state is None:
            raise dataset_error(UNKNOWN_DATASET, f"the ledger has no dataset `{args.name}`")
        history = ledger.history(args.name)
        log = ledger.dataset_log(args.name)
    releases = [{**entry.to_json(), "row_rules": entry.row_rules} for entry in history]
    document = {
        "dataset": registration.public_json() if registration else {"name": args.name},
        "file_status": _file_status(registration),
        "validation": registration.report if registration else None,
        "budget": state.budget.to_json() if state else None,
        "budget_text": state.budget.describe() if state else None,
        "spent": describe_amount(state.spent, state.budget) if state else None,
        "remaining": describe_amount(state.remaining, state.budget, up=False) if state else None,
        "log": log,
        "releases": releases,
    }
    if args.json:
        print_json(document)
    else:
        sys.stdout.write(_show_text(document))
    return EXIT_OK


def _show_text(document: dict[str, Any]) -> str:
    dataset = document["dataset"]
    lines = [f"dataset {dataset['name']}"]
    if "file" in dataset:
        lines.append(f"  file        {dataset['file']} ({dataset['format']}, sha256 {dataset['sha256'][:16]}…): "
                     f"{document['file_status']}")
        by = "its owner" if dataset["registered_by"] == "owner" else "a first run (not validated by its owner)"
        lines.append(f"  registered  {dataset['registered']} by {by}; validated {dataset['validated']}")
        columns = tuple(Column(c["name"], c["type"], Policy.parse(c["policy"])) for c in dataset["columns"])
        lines.extend(_column_lines(columns, ()))
        if document["validation"]:
            lines.append("  validation  " + _counts_text(document["validation"]))
    if document["budget"]:
        lines.append(f"  budget      {document['budget_text']}; "
                     f"spent {document['spent']}; remaining {document['remaining']}")
    for event in document["log"]:
        lines.append(f"  {event['time']}  {event['action']} {event['file']} (sha256 {event['sha256'][:16]}…)")
    for release in document["releases"]:
        rules = release["row_rules"] or {}
        seeded = " [seeded: not private]" if release["seeded"] else ""
        lines.append(
            f"  #{release['id']} {release['time']} {release['definition'] or '-'}: {release['status'] or '-'}"
            f"{seeded}; rows dropped {rules.get('rows_dropped', '-')}, cells replaced "
            f"{rules.get('cells_replaced', '-')}, group keys outside {rules.get('group_keys_outside', 0)}"
        )
    return "\n".join(lines) + "\n"


def _print_nothing(args: argparse.Namespace, path: Path) -> None:
    if args.json:
        sys.stdout.write(json.dumps({"ledger": str(path), "datasets": []}) + "\n")
    else:
        sys.stdout.write(f"no ledger at {path} yet: no datasets\n")


