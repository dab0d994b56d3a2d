"""`fuzzpy ledger`: show each dataset's budget and release history; fix a budget.

fuzzpy ledger [--ledger FILE] [--dataset NAME] [--json]
fuzzpy ledger --dataset NAME --set-budget EPS[,DELTA] [--rule basic|zcdp]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fuzzpy.accounting.ledger import Ledger, default_ledger_path
from fuzzpy.accounting.ledger_errors import NO_BUDGET, ledger_error
from fuzzpy.accounting.ledger_quotes import Entry, amount_json, describe_amount
from fuzzpy.accounting.ledger_rules import RULES, Budget, Spend, format_number, rule_named


def add_ledger_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ledger",
        metavar="FILE",
        help="the ledger file (default: $FUZZPY_LEDGER, else ~/.local/share/fuzzpy/ledger.sqlite)",
    )
    parser.add_argument("--dataset", metavar="NAME", help="show only this dataset")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--set-budget",
        metavar="EPS[,DELTA]",
        help="fix the dataset's total budget before its first release (needs --dataset)",
    )
    parser.add_argument(
        "--rule",
        choices=sorted(RULES),
        default="basic",
        help="how releases spend a budget set with --set-budget (default: basic)",
    )


def run_ledger_command(args: argparse.Namespace) -> int:
    path = Path(args.ledger).expanduser() if args.ledger else default_ledger_path()
    if args.set_budget is not None:
        if not args.dataset:
            raise ledger_error("FZ714", "--set-budget needs --dataset NAME", None)
        budget = Budget.parse(args.set_budget, args.rule)
        with Ledger(path) as ledger:
            ledger.set_budget(args.dataset, budget)
    if not path.exists():
        _print_missing(path, args.json)
        return 0
    with Ledger(path, create=False) as ledger:
        datasets = ledger.datasets()
        history = ledger.history(args.dataset)
    if args.dataset is not None:
        datasets = [d for d in datasets if d[0] == args.dataset]
        if not datasets:
            raise ledger_error(NO_BUDGET, f"the ledger has no dataset {args.dataset!r}", path)
    if args.json:
        sys.stdout.write(json.dumps(_document(path, datasets, history), indent=2) + "\n")
    else:
        sys.stdout.write(_text(path, datasets, history))
    return 0


def _print_missing(path: Path, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps({"ledger": str(path), "exists": False, "datasets": []}) + "\n")
    else:
        sys.stdout.write(f"no ledger at {path} yet: nothing has been charged\n")


Dataset = tuple[str, Budget, Spend, Spend]


def _document(path: Path, datasets: list[Dataset], history: list[Entry]) -> dict[str, object]:
    return {
        "ledger": str(path),
        "exists": True,
        "datasets": [
            {
                "dataset": name,
                "budget": {**budget.to_json(), "rule_summary": rule_named(budget.rule).summary},
                "spent": amount_json(spent, budget),
                "remaining": amount_json(remaining, budget),
                "releases": [e.to_json() for e in history if e.dataset == name],
            }
            for name, budget, spent, remaining in datasets
        ],
    }


def _text(path: Path, datasets: list[Dataset], history: list[Entry]) -> str:
    lines = [f"ledger {path}"]
    if not datasets:
        lines.append("  (no datasets yet)")
    for name, budget, spent, remaining in datasets:
        lines.append("")
        lines.append(f"dataset {name}")
        lines.append(f"  budget     {_budget_text(budget)}")
        lines.append(f"  rule       {budget.rule}: {rule_named(budget.rule).summary}")
        lines.append(f"  spent      {describe_amount(spent, budget)}")
        lines.append(f"  remaining  {describe_amount(remaining, budget)}")
        entries = [e for e in history if e.dataset == name]
        lines.extend(_table(entries) if entries else ["  (no releases yet)"])
    return "\n".join(lines) + "\n"


def _budget_text(budget: Budget) -> str:
    text = f"eps={format_number(budget.epsilon)}"
    return text + (f", delta={format_number(budget.delta)}" if budget.delta else "")


def _table(entries: list[Entry]) -> list[str]:
    header = ("#", "time (UTC)", "program", "definition", "cost", "remaining")
    rows = [header] + [
        (
            str(e.id),
            e.time,
            _program_text(e),
            e.definition or "-",
            describe_amount(e.cost.spend, e.budget),
            describe_amount(e.remaining, e.budget),
        )
        for e in entries
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _program_text(entry: Entry) -> str:
    program = entry.program or "-"
    return f"{program} ({entry.program_sha256[:8]})" if entry.program_sha256 else program
