"""The `fuzzpy` command: subcommands and exit codes, nothing else.

Exit codes (language design, section 4): 0 accepted / done, 1 rejected
(syntax, type, privacy or verification failure), 2 usage or I/O error,
3 refused by the budget ledger.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from fuzzpy import __version__
from fuzzpy.diagnostics import Diagnostic, FuzzError, render_all
from fuzzpy.source import NO_SPAN, Source

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_BUDGET = 3


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that exits with our usage code (2) and a one-line message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"fuzzpy: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def print_diagnostics(
    diagnostics: Sequence[Diagnostic], sources: dict[str, Source] | None = None
) -> None:
    if diagnostics:
        sys.stderr.write(render_all(diagnostics, sources) + "\n")


def print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2, default=str) + "\n")


def exit_code_for(diagnostics: Sequence[Diagnostic]) -> int:
    """Usage/I-O codes (FZ5xx data, FZ7xx usage) exit 2; budget (FZ6xx) 3; else 1."""
    codes = {d.code for d in diagnostics if d.severity == "error"}
    if not codes:
        return EXIT_OK
    if any(c.startswith("FZ6") for c in codes):
        return EXIT_BUDGET
    if any(c.startswith(("FZ5", "FZ7")) or c == "FZ701" for c in codes):
        return EXIT_USAGE
    return EXIT_REJECTED


def _not_built(phase: str) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        sys.stderr.write(f"fuzzpy {phase}: this phase is not built yet.\n")
        return EXIT_USAGE

    return handler


# ---------------------------------------------------------------- parse


def _add_parse(sub: argparse._SubParsersAction) -> None:
    from fuzzpy.parse_command import run_parse

    p = sub.add_parser(
        "parse", help="parse files and print them back (pretty-printed)",
        description="Parse fuzzpy programs and print them back, pretty-printed. "
        "Exit 0 if every file parses, 1 on a syntax error, 2 if a file cannot be read.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="fuzzpy source files (.fz)")
    p.add_argument("--json", action="store_true",
                   help='print one JSON document: {"ok", "diagnostics", "files"}')
    p.set_defaults(handler=run_parse)


# ---------------------------------------------------------------- check


def _add_check(sub: argparse._SubParsersAction) -> None:
    from fuzzpy.checker.cli_check import delta_arg, run_check

    p = sub.add_parser("check", help="type-check programs; report sensitivities and privacy")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument(
        "--delta", type=delta_arg, default=None, metavar="D",
        help="report every definition's smallest epsilon at this delta",
    )
    p.add_argument("--explain", metavar="DEF", help="print the derivation of one definition, rule by rule")
    p.set_defaults(handler=run_check)


# ---------------------------------------------------------------- verify


def _add_verify(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="prove or refute the privacy claims of mechanisms")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--explain", action="store_true",
                   help="show each proof: alignments, invariants, cost per path")
    p.set_defaults(handler=_run_verify)


def _run_verify(args: argparse.Namespace) -> int:
    from fuzzpy.verifier.command import run_verify

    return run_verify(args)


# ---------------------------------------------------------------- run


def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a checked definition on data under a budget")
    p.add_argument("file", metavar="FILE")
    p.add_argument("definition", metavar="DEF")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    from fuzzpy.runtime.run import add_arguments, run_command

    add_arguments(p)
    p.set_defaults(handler=run_command)


# ---------------------------------------------------------------- ledger


def _add_ledger(sub: argparse._SubParsersAction) -> None:
    from fuzzpy.accounting.ledger_cli import add_ledger_arguments, run_ledger_command

    p = sub.add_parser("ledger", help="show privacy budgets and the history of releases")
    add_ledger_arguments(p)
    p.set_defaults(handler=run_ledger_command)


# ---------------------------------------------------------------- budget


def _add_budget(sub: argparse._SubParsersAction) -> None:
    from fuzzpy.accounting.budget_command import add_arguments, run

    p = sub.add_parser(
        "budget", help="what a program or a series of releases costs; calibrate noise; plot"
    )
    add_arguments(p)
    p.set_defaults(handler=run)


# ---------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="fuzzpy",
        description="Type-check, verify and run differentially private programs.",
    )
    parser.add_argument("--version", action="version", version=f"fuzzpy {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    sub.required = True
    for add in (_add_parse, _add_check, _add_verify, _add_run, _add_ledger, _add_budget):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.handler(args))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except FuzzError as exc:
        print_diagnostics(exc.diagnostics)
        return exit_code_for(exc.diagnostics)
    except KeyboardInterrupt:
        sys.stderr.write("fuzzpy: interrupted\n")
        return 130
    except Exception as exc:  # a bug in fuzzpy: say so without a traceback
        diagnostic = Diagnostic("FZ799", f"internal error: {type(exc).__name__}: {exc}", NO_SPAN)
        print_diagnostics([diagnostic])
        sys.stderr.write("This is a bug in fuzzpy; set FUZZPY_DEBUG=1 for the traceback.\n")
        import os

        if os.environ.get("FUZZPY_DEBUG"):
            raise
        return EXIT_USAGE
