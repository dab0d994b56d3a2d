"""The `fuzzpy` command: builds the argument parser from the command modules
(`fuzzpy.commands`) and turns what they raise into exit codes.

Exit codes (language design, section 4): 0 accepted / done, 1 rejected
(syntax, type, privacy or verification failure), 2 usage or I/O error,
3 refused by the budget ledger; 130 (SIGINT, Ctrl-C) or 143 (SIGTERM) when
stopped by a signal.

Start-up is kept short: this module and the command modules import only
the standard library and `fuzzpy.commands.common` at the top; each command
imports its phases (parser, checker, verifier, accountant, ledger) when it
runs. Signals are handled from the first line of `main`
(`fuzzpy.support.interrupts`), so an interrupt at any point ends in a one-line
message, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fuzzpy.support import interrupts

if TYPE_CHECKING:
    import argparse


def build_parser(command: str | None = None) -> argparse.ArgumentParser:  # argparse imported lazily
    """The argument parser. Only ``command``'s module is imported and its
    options added (the others are listed with their summaries): `fuzzpy
    --help` imports no command, `fuzzpy run ...` only `fuzzpy.commands.run`.
    ``command=None`` builds every command (for documentation and tests)."""
    import importlib

    from fuzzpy import __version__
    from fuzzpy.commands import SUMMARIES
    from fuzzpy.commands.common import DELTA_POLICY, ArgumentParser

    parser = ArgumentParser(
        prog="fuzzpy",
        description="Type-check, verify and run differentially private programs.",
        epilog=DELTA_POLICY,
    )
    parser.add_argument("--version", action="version", version=f"fuzzpy {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    sub.required = True
    for name, summary in SUMMARIES.items():
        if command is not None and name != command:
            sub.add_parser(name, help=summary)
            continue
        module = importlib.import_module(f"fuzzpy.commands.{name}")
        p = sub.add_parser(name, help=summary, description=getattr(module, "DESCRIPTION", summary),
                           epilog=getattr(module, "EPILOG", None))
        module.add_arguments(p)
        p.set_defaults(handler=module.run, parser=p)
    return parser


def chosen_command(arguments: Sequence[str]) -> str:
    """The subcommand named on the command line ("" if none): the first
    argument that is not an option of `fuzzpy` itself."""
    from fuzzpy.commands import SUMMARIES

    for argument in arguments:
        if not argument.startswith("-"):
            return argument if argument in SUMMARIES else ""
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit code. Signals raise `Interrupted` from here on."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    wants_json = "--json" in arguments
    with interrupts.handled():
        try:
            return _main(arguments, wants_json)
        except interrupts.Interrupted as stop:
            return _interrupted(stop, wants_json)


def entry() -> None:
    """The console script. After an interrupt the process ends at once:
    a computation still running on another thread (the large stack of
    `fuzzpy.runtime.stack`) must not keep it alive. A signal that comes
    once the command has finished is ignored (the process is exiting)."""
    code = main()
    for signum in interrupts.SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if code in (128 + signal.SIGINT, 128 + signal.SIGTERM):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    sys.exit(code)


def _main(arguments: list[str], wants_json: bool) -> int:
    from fuzzpy.commands.common import EXIT_USAGE, UsageError, exit_code_for, report_failure
    from fuzzpy.language.diagnostics import FuzzError

    try:
        parser = build_parser(chosen_command(arguments))
        args, extra = parser.parse_known_args(arguments)
        if extra:
            args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return int(args.handler(args))
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except UsageError as error:
        report_failure(wants_json, (error.diagnostic,))
        return EXIT_USAGE
    except FuzzError as exc:
        report_failure(wants_json, exc.diagnostics)
        return exit_code_for(exc.diagnostics)
    except BrokenPipeError:  # `fuzzpy ... | head`: the reader has gone
        _silence_stdout()
        return 141
    except interrupts.Interrupted:
        raise
    except Exception as exc:  # a bug in fuzzpy: say so without a traceback
        return _internal_error(exc, wants_json)


def _interrupted(stop: interrupts.Interrupted, wants_json: bool) -> int:
    from fuzzpy.commands.common import interrupted_diagnostic, report_failure

    with contextlib.suppress(OSError, ValueError):
        report_failure(wants_json, (interrupted_diagnostic(stop),))
    return stop.exit_code


def _internal_error(exc: Exception, wants_json: bool) -> int:
    from fuzzpy.commands.common import EXIT_USAGE, report_failure
    from fuzzpy.language.diagnostics import Diagnostic
    from fuzzpy.language.source import NO_SPAN

    diagnostic = Diagnostic(
        "FZ799", f"internal error: {type(exc).__name__}: {exc}", NO_SPAN,
        hint="this is a bug in fuzzpy; set FUZZPY_DEBUG=1 for the traceback",
    )
    report_failure(wants_json, (diagnostic,))
    if os.environ.get("FUZZPY_DEBUG"):
        raise exc
    return EXIT_USAGE


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that Python's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
