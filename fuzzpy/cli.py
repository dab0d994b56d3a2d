"""The `fuzzpy` command: builds the argument parser from the command modules
(`fuzzpy.commands`) and turns what they raise into exit codes.

Exit codes (language design, section 4): 0 accepted / done, 1 rejected
(syntax, type, privacy or verification failure), 2 usage or I/O error,
3 refused by the budget ledger.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from fuzzpy import __version__
from fuzzpy.commands.common import EXIT_USAGE, ArgumentParser, exit_code_for, print_diagnostics
from fuzzpy.diagnostics import Diagnostic, FuzzError
from fuzzpy.source import NO_SPAN

#: The subcommands, in the order `fuzzpy --help` lists them; each names its
#: module in `fuzzpy.commands`.
COMMANDS = ("parse", "check", "verify", "run", "ledger", "dataset", "budget")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="fuzzpy",
        description="Type-check, verify and run differentially private programs.",
    )
    parser.add_argument("--version", action="version", version=f"fuzzpy {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    sub.required = True
    for name in COMMANDS:
        module = importlib.import_module(f"fuzzpy.commands.{name}")
        description = getattr(module, "DESCRIPTION", None)
        p = sub.add_parser(name, help=module.HELP, description=description or module.HELP)
        module.add_arguments(p)
        p.set_defaults(handler=module.run)
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
        if os.environ.get("FUZZPY_DEBUG"):
            raise
        return EXIT_USAGE
