"""The `fuzzpy check` subcommand's work: load, parse, check, print.

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
    from fuzzpy.diagnostics import Diagnostic
    from fuzzpy.source import Source

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


def run(args: argparse.Namespace) -> int:
    from fuzzpy.verifier import proof_cache

    with proof_cache.enabled():
        return _check(args)


def _check(args: argparse.Namespace) -> int:
    from fuzzpy.checker.driver import check_program, explain_definition
    from fuzzpy.checker.report import (
        infinite_at_delta,
        json_definitions,
        json_mechanisms,
        text_report,
    )
    from fuzzpy.diagnostics import FuzzError, render_all
    from fuzzpy.pipeline import load_source, parse

    delta: float | None = args.delta
    diagnostics: list[Diagnostic] = []
    sources: dict[str, Source] = {}
    definitions: list[dict[str, object]] = []
    mechanisms: list[dict[str, object]] = []
    texts: list[str] = []
    explanations: list[str] = []
    for path in args.files:
        try:
            source = load_source(path)
            sources[source.name] = source
            program = parse(source)
            if args.explain:  # shown also for a rejected definition: it helps to see why
                explanations.append(explain_definition(program, args.explain, source.text))
            checked = check_program(program)
        except FuzzError as err:
            diagnostics.extend(err.diagnostics)
            continue
        diagnostics.extend(infinite_at_delta(checked, delta))
        file_defs = json_definitions(checked, delta)
        if len(args.files) > 1:
            for d in file_defs:
                d["file"] = source.name
        definitions.extend(file_defs)
        mechanisms.extend(json_mechanisms(checked))
        report = text_report(checked, delta)
        texts.append(f"{source.name}:\n{_indent(report)}" if len(args.files) > 1 else report)
    code = exit_code_for(diagnostics)
    if args.json:
        document: dict[str, object] = {
            "ok": code == 0,
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
        if diagnostics:
            sys.stderr.write(render_all(diagnostics, sources) + "\n")
    return code


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
