"""What every command shares: exit codes, the argument parser's error
behaviour, the delta policy, and printing diagnostics and JSON.

Exit codes (language design, section 4): 0 accepted / done, 1 rejected
(syntax, type, privacy or verification failure), 2 usage or I/O error,
3 refused by the budget ledger; 128 + the signal's number when stopped by
SIGINT (130) or SIGTERM (143).

This module is imported while the argument parser is built, before any
command runs: it imports only the standard library and the diagnostics.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.language.diagnostics import (  # noqa: F401 - the exit codes are every command's
    EXIT_BUDGET,
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_USAGE,
    Diagnostic,
    exit_code_for,
    render_all,
)
from fuzzpy.language.source import NO_SPAN, Source

if TYPE_CHECKING:
    from fuzzpy.support.interrupts import Interrupted

#: The one delta of every approximate (eps, delta) figure that `check`,
#: `budget` and `run` give or charge unless `--delta` says otherwise (the
#: language design's default, section 7). Pure releases stay at delta 0.
DEFAULT_DELTA = Fraction(1, 10**6)
DEFAULT_DELTA_TEXT = "1e-6"

DELTA_POLICY = (
    "Delta policy: a pure release costs (eps, 0). An approximate one is reported by `check` and "
    f"`budget`, and charged by `run`, at delta = {DEFAULT_DELTA_TEXT} unless --delta D says "
    "otherwise (the same option for all three); the ledger records the delta each release was "
    "charged at. A refusal says which --delta or budget would work."
)

USAGE_CODE = "FZ703"
INTERRUPTED_CODE = "FZ720"


class UsageError(Exception):
    """The command line is not valid: reported as one FZ703 diagnostic
    (with the command's usage as its hint), exit code 2."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def usage_error(message: str, hint: str | None = None) -> UsageError:
    return UsageError(Diagnostic(USAGE_CODE, message, NO_SPAN, hint=hint))


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are diagnostics (FZ703) naming this (sub)command's
    usage, with a suggestion for a mistyped option."""

    def error(self, message: str) -> None:  # type: ignore[override]
        usage = " ".join(self.format_usage().split())
        hint = _suggestion(self, message) or f"`{self.prog} --help` describes every option"
        raise UsageError(Diagnostic(USAGE_CODE, f"{self.prog}: {message}", NO_SPAN, notes=(usage,), hint=hint))


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str | None:
    """`did you mean --budget?` for an unrecognised option close to a known one."""
    if not message.startswith("unrecognized arguments:"):
        return None
    known = [s for action in parser._actions for s in action.option_strings]
    for word in message.split(":", 1)[1].split():
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=")[0], known, n=1)
            if close:
                return f"did you mean {close[0]}?"
    return None


def delta_arg(text: str) -> float:
    """--delta D: a number strictly between 0 and 1."""
    try:
        value = float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"--delta takes a number, got {text!r}") from None
    if value == 0:  # the help's "0 for pure ones" is the default, not a value to type
        raise argparse.ArgumentTypeError("--delta must be strictly between 0 and 1, got 0; leave --delta out "
                                         "for pure figures: pure releases are reported at delta 0 by default")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"--delta must be strictly between 0 and 1, got {text}")
    return value


def add_delta_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--delta", type=delta_arg, default=None, metavar="D",
        help=f"{what}: a number strictly between 0 and 1 (when omitted: {DEFAULT_DELTA_TEXT} for approximate "
             "releases, and pure ones are reported at delta 0)",
    )


# ---------------------------------------------------------------- output


def print_diagnostics(
    diagnostics: Sequence[Diagnostic], sources: dict[str, Source] | None = None
) -> None:
    if diagnostics:
        sys.stderr.write(render_all(diagnostics, sources) + "\n")


def print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2, default=str) + "\n")


def failure_json(diagnostics: Sequence[Diagnostic], **extra: object) -> dict[str, object]:
    """The JSON document of a command that failed: `ok: false` and its diagnostics."""
    return {"ok": False, **extra, "diagnostics": [d.to_json() for d in diagnostics]}


def report_failure(
    as_json: bool, diagnostics: Sequence[Diagnostic], sources: dict[str, Source] | None = None
) -> None:
    """A failure as a JSON document on stdout (--json), else as text on stderr."""
    if as_json:
        print_json(failure_json(diagnostics))
    else:
        print_diagnostics(diagnostics, sources)


def interrupted_diagnostic(stop: Interrupted) -> Diagnostic:
    """FZ720: stopped by a signal; what had happened already, in one line."""
    what = "Ctrl-C (SIGINT)" if stop.signal_name == "SIGINT" else stop.signal_name
    note = stop.note or "the command stopped"
    return Diagnostic(INTERRUPTED_CODE, f"interrupted by {what}: {note}", NO_SPAN)
