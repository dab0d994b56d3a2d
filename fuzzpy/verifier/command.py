"""`fuzzpy verify FILE...`: a verdict per mechanism; exit 0 only when all are proved."""

from __future__ import annotations

import argparse
import json
import sys

from fuzzpy.diagnostics import Diagnostic, FuzzError, render_all
from fuzzpy.source import Source
from fuzzpy.syntax import MechanismDecl
from fuzzpy.verifier import verify_mechanism
from fuzzpy.verifier.report import render
from fuzzpy.verifier.verdict import Verdict


def run_verify(args: argparse.Namespace) -> int:
    from fuzzpy.cli import EXIT_OK, EXIT_REJECTED, exit_code_for
    from fuzzpy.pipeline import load_source, parse

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
            if not args.json:
                sys.stdout.write(render(verdict, args.explain) + "\n")
    ok = not diagnostics and all(v.proved for v in verdicts)
    if args.json:
        document = {
            "ok": ok,
            "mechanisms": [v.to_json() for v in verdicts],
            "diagnostics": [d.to_json() for d in diagnostics],
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif diagnostics:
        sys.stderr.write(render_all(diagnostics, sources) + "\n")
    if diagnostics:
        return max(exit_code_for(diagnostics), EXIT_REJECTED)
    return EXIT_OK if ok else EXIT_REJECTED
