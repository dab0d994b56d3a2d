"""`fuzzpy verify FILE...`: a verdict per mechanism (through the Python API,
`fuzzpy.api`); exit 0 only when all are proved."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from fuzzpy.commands.common import EXIT_OK, EXIT_REJECTED, exit_code_for

if TYPE_CHECKING:
    from fuzzpy.language.diagnostics import Diagnostic
    from fuzzpy.language.source import Source
    from fuzzpy.support.interrupts import Interrupted
    from fuzzpy.verifier.verdict import Verdict

DESCRIPTION = (
    "Prove each `mechanism`'s privacy claim by randomness alignments (approximate couplings) "
    "solved with z3, or refute it with a concrete counterexample and its exact probabilities. "
    "Exit 0 only when every mechanism is proved, 1 otherwise; Ctrl-C stops the verification "
    "and prints what was decided so far (exit 130)."
)
EPILOG = (
    "Proofs are cached on disk ($FUZZPY_CACHE, else $XDG_CACHE_HOME/fuzzpy, else ~/.cache/fuzzpy; "
    "FUZZPY_CACHE=off turns the cache off), keyed by the mechanism's syntax tree, the constants "
    "it can read, the fuzzpy version and the verifier's own source: an unchanged mechanism is "
    "proved once, and `check` and `run` reuse the proof. --explain always proves afresh."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE", help="fuzzpy source files (.fz)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (each proof as data under `proof`; with --explain its "
                        "invariants reduced to the clauses the kernel needs)")
    p.add_argument("--explain", nargs="?", const="game", default=None, metavar="game|summary",
                   help="show each proof as the verification game (the precondition, each statement's "
                        "assertion, the coupling rule at each draw, the loop invariants the kernel needs, the "
                        "cost); --explain=summary: the short form (alignments, invariants, cost per path)")
    p.add_argument("--certificate", action="store_true",
                   help="print each proof's certificate as JSON (what the proof kernel checked; "
                        "docs/verifier-kernel.md); `--json` carries it too")


EXPLAIN_MODES = ("game", "summary")


class _Progress:
    """What was decided so far, for the final report or an interrupt."""

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []
        self.diagnostics: list[Diagnostic] = []
        self.sources: dict[str, Source] = {}
        self.documents: list[dict[str, object]] = []


def run(args: argparse.Namespace) -> int:
    from fuzzpy.support.interrupts import Interrupted

    if args.explain is not None and args.explain not in EXPLAIN_MODES:  # `--explain FILE`: a file, not a mode
        args.files.insert(0, args.explain)
        args.explain = "game"
    if not args.files:
        args.parser.error("the following arguments are required: FILE")
    progress = _Progress()
    try:
        _verify_files(args, progress)
    except Interrupted as stop:
        return _interrupted(args, progress, stop)
    return _finish(args, progress)


def _verify_files(args: argparse.Namespace, progress: _Progress) -> None:
    from fuzzpy.api.errors import ProgramError
    from fuzzpy.api.program import load
    from fuzzpy.language.diagnostics import FuzzError

    for path in args.files:
        try:
            program = load(path)
        except FuzzError as error:
            progress.sources.update(getattr(error, "sources", {}))
            progress.diagnostics.extend(error.diagnostics)
            continue
        progress.sources[program.name] = program.source
        if not program.mechanisms and not args.json:
            sys.stdout.write(f"{path}: no mechanisms\n")
        explain = args.explain is not None
        for outcome in program.verify_each(fresh=explain):  # --explain always proves afresh
            if isinstance(outcome, ProgramError):
                progress.diagnostics.extend(outcome.diagnostics)
                continue
            progress.verdicts.append(outcome.verdict)
            if args.json:  # the proof as data is built only when asked for (a cached proof loads no z3)
                progress.documents.append(outcome.to_json(minimise=explain))
            progress.diagnostics.extend(outcome.warnings)
            if not args.json:  # the same text whether the proof was cached or not
                sys.stdout.write(outcome.text(args.explain or False) + "\n")
                certificate = outcome.verdict.certificate
                if args.certificate and outcome.verdict.proved and certificate is not None:
                    sys.stdout.write(json.dumps(certificate.to_json(), indent=2) + "\n")
                sys.stdout.flush()


def _finish(args: argparse.Namespace, progress: _Progress) -> int:
    from fuzzpy.language.diagnostics import render_all

    errors = [d for d in progress.diagnostics if d.severity == "error"]
    ok = not errors and all(v.proved for v in progress.verdicts)
    if args.json:
        document = {
            "ok": ok,
            "mechanisms": progress.documents,
            "diagnostics": [d.to_json() for d in progress.diagnostics],
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif progress.diagnostics:
        sys.stderr.write(render_all(progress.diagnostics, progress.sources) + "\n")
    if errors:
        return max(exit_code_for(errors), EXIT_REJECTED)
    return EXIT_OK if ok else EXIT_REJECTED


def _interrupted(args: argparse.Namespace, progress: _Progress, stop: Interrupted) -> int:
    """Stopped by a signal: the verdicts decided so far (text mode has printed
    them already), and FZ720 saying so; nothing is read as proved that was not."""
    from fuzzpy.commands.common import interrupted_diagnostic
    from fuzzpy.language.diagnostics import render_all

    decided = len(progress.verdicts)
    stop.note = f"verification stopped; {decided} mechanism(s) decided before it"
    diagnostic = interrupted_diagnostic(stop)
    if args.json:
        document = {
            "ok": False,
            "interrupted": True,
            "mechanisms": progress.documents,
            "diagnostics": [d.to_json() for d in [*progress.diagnostics, diagnostic]],
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stderr.write(render_all([*progress.diagnostics, diagnostic], progress.sources) + "\n")
    return stop.exit_code
