"""The `fuzzpy check` subcommand: load, parse and check each file through the
Python API (`fuzzpy.api`), then print.

Exit codes (cli.py): 0 every file accepted, 1 a file rejected, 2 a usage or
I/O problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from fuzzpy.commands.common import DELTA_POLICY, add_delta_option, exit_code_for

if TYPE_CHECKING:
    from fuzzpy.language.diagnostics import Diagnostic
    from fuzzpy.language.source import Source

DESCRIPTION = (
    "Type-check fuzzpy programs: infer every definition's type with the sensitivity of each "
    "parameter, and the privacy cost of each `fuzzy` result in each database. "
    "A mechanism called by a definition must be proved by the coupling verifier (proofs are "
    "cached on disk, see `fuzzpy verify --help`). "
    "Exit 0 if every file is accepted, 1 if one is rejected, 2 on a usage or I/O error."
)
EPILOG = DELTA_POLICY


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="fuzzpy source files (.fz)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    add_delta_option(p, "report every approximate definition's smallest epsilon at this delta")
    p.add_argument("--explain", metavar="DEF", help="print the derivation of one definition, rule by rule")
    p.add_argument(
        "--group", metavar="K", type=int, default=1,
        help="report every cost for a person holding up to K rows (group privacy: neighbours that differ in K rows)",
    )
    p.add_argument("--neighbours", choices=("add-remove-one", "replace-one"), default="add-remove-one",
                   help="the neighbour relation every figure is for (default: add-remove-one)")
    p.add_argument("--rows", action="append", metavar="N|PARAM=N",
                   help="with --neighbours replace-one: the dataset's public number of rows, N where no "
                        "definition has two bag parameters, else PARAM=N per bag parameter (repeatable; "
                        "`choose[m]` and `bootstrap[m]` of that dataset are then amplified)")


def run(args: argparse.Namespace) -> int:
    from fuzzpy.accounting.row_counts import RowsError, parse
    from fuzzpy.api.errors import Rejected
    from fuzzpy.api.program import load
    from fuzzpy.api.reports import CheckReport
    from fuzzpy.commands.common import usage_error
    from fuzzpy.language.diagnostics import FuzzError, render_all

    try:
        rows = parse(args.rows)  # N, or {PARAM: N}; fitted to the bag parameters by `Program.check`
    except RowsError as exc:
        raise usage_error(str(exc)) from None
    delta: float | None = args.delta
    diagnostics: list[Diagnostic] = []
    sources: dict[str, Source] = {}
    definitions: list[dict[str, object]] = []
    mechanisms: list[dict[str, object]] = []
    texts: list[str] = []
    explanations: list[str] = []
    for path in args.files:
        try:
            program = load(path)
            sources[program.name] = program.source
            if args.explain:  # shown also for a rejected definition: it helps to see why
                explanations.append(program.explain(args.explain))
            report = program.check(delta, group=args.group, neighbours=args.neighbours, rows=rows)
        except Rejected as err:
            sources.update(err.sources)
            if not isinstance(err.report, CheckReport):
                diagnostics.extend(err.diagnostics)
                continue
            report = err.report  # checked, but rejected at this delta: its figures are shown too
        except FuzzError as err:
            sources.update(getattr(err, "sources", {}))
            diagnostics.extend(err.diagnostics)
            continue
        diagnostics.extend(report.diagnostics)
        found = report.to_json()
        if args.explain and explanations:
            explanations[-1] += _restated(found, args.explain, args.neighbours, args.group)
        file_defs: list[dict[str, object]] = found["definitions"]  # type: ignore[assignment]
        if len(args.files) > 1:
            for d in file_defs:
                d["file"] = report.name
        definitions.extend(file_defs)
        mechanisms.extend(found["mechanisms"])  # type: ignore[arg-type]
        texts.append(f"{report.name}:\n{_indent(report.text)}" if len(args.files) > 1 else report.text)
    code = exit_code_for(diagnostics)
    if args.json:
        document: dict[str, object] = {
            "ok": code == 0,
            "neighbours": args.neighbours,  # the relation every cost is for
            "rows": rows,
            **({"group": args.group} if args.group != 1 else {}),  # ... of one person's up to K rows
            "definitions": definitions,
            "mechanisms": mechanisms,
            "diagnostics": [d.to_json() for d in diagnostics],
        }
        if explanations:
            document["explanation"] = "\n\n".join(explanations)
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        out = explanations if args.explain else texts
        if out:
            sys.stdout.write("\n\n".join(out) + "\n")
        if out and args.group != 1 and not args.explain:
            sys.stdout.write(
                f"group: every cost above is for one person holding up to {args.group} rows "
                f"(neighbours that differ in {args.group} rows; group privacy, Dwork & Roth 2014, Thm 2.2)\n"
            )
        if diagnostics:
            sys.stderr.write(render_all(diagnostics, sources) + "\n")
    return code


def _restated(found: dict[str, object], name: str, neighbours: str, group: int) -> str:
    """The derivation is in the checker's metric (add/remove one row); under
    another relation or a group, the figure `check` prints for it (a review
    found `--explain` showing the add/remove figure, below the replace-one
    or group one, as if it were the answer)."""
    if neighbours == "add-remove-one" and group == 1:
        return ""
    listed = found.get("definitions")
    entry = next((d for d in listed if isinstance(d, dict) and d.get("name") == name), None) \
        if isinstance(listed, list) else None
    privacy = entry.get("privacy") if isinstance(entry, dict) else None
    if not isinstance(privacy, dict) or not privacy:
        return ""
    parts = []
    for param, figure in privacy.items():
        if isinstance(figure, dict):
            delta = figure.get("delta")
            shown = f"({figure.get('epsilon')}, {delta})" if delta else f"{figure.get('epsilon')}"
            parts.append(f"{shown}-DP in {param}")
    what = f"{neighbours} neighbours" + (f", a person's up to {group} rows" if group != 1 else "")
    return ("\n  the derivation above is for add/remove-one neighbours and one row; under " + what +
            " the events are restated by the neighbour and group rules (docs/semantics.md) and cost: " +
            "; ".join(parts))


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
