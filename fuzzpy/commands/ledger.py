"""`fuzzpy ledger`: show each dataset's budget and release history; fix a budget.

fuzzpy ledger [--ledger FILE] [--dataset NAME] [--json]
fuzzpy ledger --dataset NAME --set-budget EPS[,DELTA] [--rule basic|zcdp]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fuzzpy.language.figures import NEIGHBOURS, NEIGHBOURS_TEXT
from fuzzpy.ledger.book import DatasetState, Ledger, dataset_key, default_ledger_path
from fuzzpy.ledger.datasets import LEGACY_PREFIX, Registration, name_from_path
from fuzzpy.ledger.errors import NO_BUDGET, ledger_error
from fuzzpy.ledger.quotes import Entry, amount_json, describe_amount
from fuzzpy.ledger.rules import RULES, Budget, ReleaseCost, format_number, rule_named

DESCRIPTION = """\
Show each dataset's privacy budget, its composition rule, and every release
charged to it (time, program, definition, cost, remaining). Every cost and
budget is for the neighbour relation its dataset is charged for, shown with
it: datasets differing by adding or removing one row (the bag metric,
"add-remove-one" in --json, the default) or, for a dataset registered or
first charged with --neighbours replace-one, datasets of one public size
differing in one row's value ("replace-one").

The ledger file is --ledger FILE, else $FUZZPY_LEDGER, else
$XDG_DATA_HOME/fuzzpy/ledger.sqlite (~/.local/share/fuzzpy/ledger.sqlite).

Rules: basic sums epsilons and deltas (exactly); zcdp converts an (eps, delta)
budget once to zCDP rho and sums each release's rho (a privacy filter, valid
for adaptively chosen runs). A budget is fixed by its dataset's first release,
or beforehand with --dataset NAME --set-budget EPS[,DELTA] [--rule RULE], or
by registering the dataset (`fuzzpy dataset register`).

Each release shows its released value, and is marked when it was seeded
(--seed: reproducible noise, not differentially private) or charged but not
released (the run stopped before showing it).
"""




def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--ledger",
        metavar="FILE",
        help="the ledger file (default: $FUZZPY_LEDGER, else ~/.local/share/fuzzpy/ledger.sqlite)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--dataset", metavar="NAME", help="show only this dataset")
    which.add_argument(
        "--data",
        metavar="FILE",
        help="show only the dataset of this data file (the one `run --data PARAM=FILE` would charge)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--set-budget",
        metavar="EPS[,DELTA]",
        help="fix the dataset's total budget before its first release (needs --dataset)",
    )
    parser.add_argument(
        "--audit",
        action="store_true",
        help="recompute each release's charge from its stored events; exit 1 if one "
        "now costs more than was charged",
    )
    parser.add_argument(
        "--rule",
        choices=sorted(RULES),
        default="basic",
        help="how releases spend a budget set with --set-budget (default: basic)",
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.ledger).expanduser() if args.ledger else default_ledger_path()
    dataset = _chosen_dataset(args, path)
    if args.set_budget is not None:
        if dataset is None:
            raise ledger_error("FZ714", "--set-budget needs --dataset NAME or --data FILE", None)
        budget = Budget.parse(args.set_budget, args.rule)
        with Ledger(path) as ledger:
            ledger.set_budget(dataset, budget)
    if not path.exists():
        _print_missing(path, args.json)
        return 0
    with Ledger(path, create=False) as ledger:
        if args.audit:
            return _print_audit(ledger.audit(dataset), args.json)
        datasets = ledger.datasets()
        history = ledger.history(dataset)
        files = {r.name: r for r in ledger.registrations()}
        relations = {d.dataset: ledger.neighbours(d.dataset) for d in datasets}
        persons = {d.dataset: ledger.rows_per_person(d.dataset) for d in datasets}
    if dataset is not None:
        datasets = [d for d in datasets if d.dataset == dataset]
        if not datasets:
            raise ledger_error(NO_BUDGET, f"the ledger has no dataset {dataset!r}", path)
    if args.json:
        sys.stdout.write(json.dumps(_document(path, datasets, history, files, relations, persons), indent=2) + "\n")
    else:
        sys.stdout.write(_text(path, datasets, history, files, relations, persons))
    return 0


def _chosen_dataset(args: argparse.Namespace, path: Path) -> str | None:
    """--dataset NAME, or the dataset a run would charge for --data FILE: the
    one registered with the file, else one keyed by its hash by an older
    fuzzpy, else the name a first run would give it."""
    if args.data is None:
        return args.dataset
    try:
        absolute = str(Path(args.data).resolve())
        legacy = dataset_key(args.data)
    except OSError as exc:
        message = f"cannot read data file {args.data}: {exc.strerror or exc}"
        raise ledger_error("FZ701", message, args.data) from exc
    if path.exists():
        with Ledger(path, create=False) as ledger:
            holders = ledger.registrations_holding(absolute, legacy.removeprefix(LEGACY_PREFIX))
            if holders:
                return holders[0].name
            if ledger.budget(legacy) is not None:
                return legacy
    return name_from_path(args.data)


def _print_audit(checked: list[tuple[Entry, ReleaseCost | None]], as_json: bool) -> int:
    """Each release's stored charge against its recomputation, under the
    relation its dataset is charged for (each entry's own: issue 28, the
    header said add/remove-one on a replace-one ledger)."""
    from fuzzpy.accounting.neighbours import TEXTS

    undercharged = [entry.id for entry, cost in checked if not _covers(entry.cost, cost)]
    relations = sorted({entry.neighbours for entry, _ in checked}) or [NEIGHBOURS]
    if as_json:
        releases = [
            {
                "id": entry.id,
                "dataset": entry.dataset,
                "charged": amount_json(entry.cost.spend, entry.budget),
                "recomputed": None if cost is None else amount_json(cost.spend, entry.budget),
                "ok": entry.id not in undercharged,
                "neighbours": entry.neighbours,
            }
            for entry, cost in checked
        ]
        relation = relations[0] if len(relations) == 1 else None  # None: see each release's
        sys.stdout.write(
            json.dumps(
                {"ok": not undercharged, "releases": releases, "neighbours": relation}, indent=2
            )
            + "\n"
        )
    else:
        if checked and len(relations) == 1:
            sys.stdout.write(TEXTS.get(relations[0], NEIGHBOURS_TEXT) + "\n")
        for entry, cost in checked:
            now = "cannot be costed" if cost is None else describe_amount(cost.spend, entry.budget)
            verdict = "UNDERCHARGED" if entry.id in undercharged else "ok"
            charged = describe_amount(entry.cost.spend, entry.budget)
            which = f" ({entry.neighbours} neighbours)" if len(relations) > 1 else ""
            sys.stdout.write(
                f"#{entry.id} {entry.dataset}{which}: charged {charged}, now {now}: {verdict}\n"
            )
    return 1 if undercharged else 0


def _covers(stored: ReleaseCost, recomputed: ReleaseCost | None) -> bool:
    if recomputed is None:
        return False
    now, then = recomputed.spend, stored.spend
    return now.epsilon <= then.epsilon and now.delta <= then.delta and now.rho <= then.rho


def _print_missing(path: Path, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps({"ledger": str(path), "exists": False, "datasets": []}) + "\n")
    else:
        sys.stdout.write(f"no ledger at {path} yet: nothing has been charged\n")


def _document(
    path: Path, datasets: list[DatasetState], history: list[Entry], files: dict[str, Registration],
    relations: dict[str, str] | None = None, persons: dict[str, int] | None = None,
) -> dict[str, object]:
    relations = relations or {}
    persons = persons or {}
    return {
        "ledger": str(path),
        "exists": True,
        "neighbours": _common(relations),  # the relation of every dataset's costs, or "per dataset"
        "datasets": [
            {
                "dataset": name,
                "neighbours": relations.get(name, NEIGHBOURS),
                "rows_per_person": persons.get(name, 1),
                "registration": files[name].public_json() if name in files else None,
                "budget": {**budget.to_json(), "rule_summary": rule_named(budget.rule).summary},
                "spent": amount_json(spent, budget),
                "remaining": amount_json(remaining, budget, up=False),
                "releases": [e.to_json() for e in history if e.dataset == name],
            }
            for name, budget, spent, remaining in datasets
        ],
    }


def _common(relations: dict[str, str]) -> str:
    found = set(relations.values()) or {NEIGHBOURS}
    return found.pop() if len(found) == 1 else "per dataset"


def _text(
    path: Path, datasets: list[DatasetState], history: list[Entry], files: dict[str, Registration],
    relations: dict[str, str] | None = None, persons: dict[str, int] | None = None,
) -> str:
    from fuzzpy.accounting.neighbours import TEXTS

    relations = relations or {}
    common = _common(relations)
    shown = TEXTS.get(common, "neighbours: each dataset's own relation (below); a budget is never shared by two")
    lines = [f"ledger {path}", f"  {shown}"]
    if not datasets:
        lines.append("  (no datasets yet)")
    for name, budget, spent, remaining in datasets:
        lines.append("")
        lines.append(f"dataset {name}")
        if name in files:
            lines.append(f"  file       {files[name].file} ({files[name].format}, sha256 {files[name].sha256[:16]}…)")
        lines.append(f"  budget     {_budget_text(budget)}")
        lines.append(f"  rule       {budget.rule}: {rule_named(budget.rule).summary}")
        lines.append(f"  neighbours {relations.get(name, NEIGHBOURS)}")
        if (persons or {}).get(name, 1) > 1:
            lines.append(f"  persons    up to {(persons or {})[name]} rows per person (each release charged its "
                         "group cost)")
        lines.append(f"  spent      {describe_amount(spent, budget)}")
        lines.append(f"  remaining  {describe_amount(remaining, budget, up=False)}")
        entries = [e for e in history if e.dataset == name]
        lines.extend(_table(entries) if entries else ["  (no releases yet)"])
    return "\n".join(lines) + "\n"


def _budget_text(budget: Budget) -> str:
    text = f"eps={format_number(budget.epsilon, up=False)}"  # a limit: never shown larger
    return text + (f", delta={format_number(budget.delta, up=False)}" if budget.delta else "")


def _table(entries: list[Entry]) -> list[str]:
    header = ("#", "time (UTC)", "program", "definition", "released", "cost", "remaining")
    rows = [header] + [
        (
            str(e.id),
            e.time,
            _program_text(e),
            _definition_text(e),
            _released_text(e),
            describe_amount(e.cost.spend, e.budget),
            describe_amount(e.remaining, e.budget, up=False),
        )
        for e in entries
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _definition_text(entry: Entry) -> str:
    """The definition, with the run's public arguments when there were any
    (`noisy_mean eps=0.1`): a parameterised definition's cost depends on them."""
    name = entry.definition or "-"
    if entry.arguments:
        name += " " + " ".join(f"{key}={value}" for key, value in sorted(entry.arguments.items()))
    if entry.assumptions:  # FZ318: the charge rests on what z3 could not check
        name += " [UNCHECKED ASSUMPTION: " + ", ".join(n for n, _ in entry.assumptions) + "]"
    return name


def _released_text(entry: Entry, width: int = 32) -> str:
    """The released value, marked when seeded (not private); a release
    charged but never shown says so."""
    if entry.status is None:
        text = "-"  # recorded before the ledger kept values
    elif entry.status != "released":
        text = "(charged, not released)"
    else:
        text = json.dumps(entry.released)
        text = text if len(text) <= width else text[: width - 1] + "…"
    return text + (" [seeded: not private]" if entry.seeded else "")


def _program_text(entry: Entry) -> str:
    program = entry.program or "-"
    return f"{program} ({entry.program_sha256[:8]})" if entry.program_sha256 else program
