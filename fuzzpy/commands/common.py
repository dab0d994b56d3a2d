"""What every command shares: exit codes, the argument parser's error
behaviour, and printing diagnostics and JSON.

Exit codes (language design, section 4): 0 accepted / done, 1 rejected
(syntax, type, privacy or verification failure), 2 usage or I/O error,
3 refused by the budget ledger.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from fuzzpy.diagnostics import Diagnostic, render_all
from fuzzpy.source import Source

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_BUDGET = 3


class ArgumentParser(argparse.ArgumentParser):
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
    if any(c.startswith(("FZ5", "FZ7")) for c in codes):
        return EXIT_USAGE
    return EXIT_REJECTED
