"""`fuzzpy verify FILE...`: a verdict per mechanism; exit 0 only when all are proved."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from fuzzpy.commands.common import EXIT_OK, EXIT_REJECTED, exit_code_for
from fuzzpy.diagnostics import Diagnostic, FuzzError, render_all
from fuzzpy.source import Source
from fuzzpy.syntax import MechanismDecl

if TYPE_CHECKING:
    from fuzzpy.verifier.verdict import Verdict

HELP = "prove or refute the privacy claims of mechanisms"
DESCRIPTION = (
    "Prove each `mechanism`'s privacy claim by randomness alignments (approximate couplings) "
    "solved with z3, or refute it with a concrete counterexample and its exact probabilities. "
    "Exit 0 only when every mechanism is proved, 1 otherwise."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="fuzzpy source files (.fz)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--explain", action="store_true",
                   help="show each proof: alignments, invariants, cost per path")


def run(args: argparse.Namespace) -> int:
    from fuzzpy.pipeline import load_source, parse
    from fuzzpy.verifier import verify_mechanism
    from fuzzpy.verifier.report import render

    verdicts: list[Verdict] = []
    diagnostics: list[Diagnostic] = []
    sources: dict[str, Source] = {}
    for path in args.files:
        try:
            source = load_source(path)
            sources[source.name] = source
            program = parse(source)
        except FuzzError as error:
            diagnostics.extend(error.diagnostics)
            continue
        mechanisms = [d for d in program.decls if isinstance(d, MechanismDecl)]
        if not mechanisms and not args.json:
            sys.stdout.write(f"{path}: no mechanisms\n")
        for decl in mechanisms:
            try:
                verdict = verify_mechanism(decl, program)
            except FuzzError as error:
                diagnostics.extend(error.diagnostics)
                continue
            verdicts.append(verdict)
            if verdict.vacuous:
                diagnostics.append(Diagnostic(
                    "FZ406", f"the proof of `{decl.name}` is {verdict.reason}", decl.name_span, severity="warning",
                    hint="check the preconditions: a mechanism proved for no inputs tells nothing"))
            if not args.json:
                sys.stdout.write(render(verdict, args.explain) + "\n")
    errors = [d for d in diagnostics if d.severity == "error"]
    ok = not errors and all(v.proved for v in verdicts)
    if args.json:
        document = {
            "ok": ok,
            "mechanisms": [v.to_json() for v in verdicts],
            "diagnostics": [d.to_json() for d in diagnostics],
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif diagnostics:
        sys.stderr.write(render_all(diagnostics, sources) + "\n")
    if errors:
        return max(exit_code_for(errors), EXIT_REJECTED)
    return EXIT_OK if ok else EXIT_REJECTED
