"""The ledger's diagnostics (codes in fuzzpy/messages.py).

FZ6xx are refusals by the budget (the CLI exits 3); FZ71x are unusable
ledger files and bad budget arguments (the CLI exits 2).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN, Span

OVER_BUDGET = "FZ601"
BUDGET_MISMATCH = "FZ602"
COST_UNAVAILABLE = "FZ603"
LOOSE_CHARGE = "FZ604"  # a warning
OTHER_NEIGHBOURS = "FZ605"
NOT_A_DATABASE = "FZ710"
FOREIGN_DATABASE = "FZ711"
NEWER_FORMAT = "FZ712"
CANNOT_OPEN = "FZ713"
INVALID_BUDGET = "FZ714"
NO_BUDGET = "FZ715"
LEDGER_BUSY = "FZ716"


def ledger_span(path: Path | str | None) -> Span:
    """Ledger diagnostics point at the ledger file itself."""
    return NO_SPAN if path is None else Span(str(path), 1, 1, 1, 1)


def ledger_error(
    code: str,
    message: str,
    path: Path | str | None,
    notes: tuple[str, ...] = (),
    hint: str | None = None,
) -> FuzzError:
    return FuzzError((Diagnostic(code, message, ledger_span(path), notes=notes, hint=hint),))


def unusable_file_hint(path: Path) -> str:
    return f"fuzzpy never overwrites {path}; pass another file with --ledger or set FUZZPY_LEDGER"


def sqlite_failure(exc: sqlite3.Error, path: Path) -> FuzzError:
    """Translate an SQLite error into the ledger diagnostic a user can act on."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    if (
        name in ("SQLITE_NOTADB", "SQLITE_CORRUPT")
        or "not a database" in text
        or "malformed" in text
    ):
        return ledger_error(
            NOT_A_DATABASE,
            f"{path} is not a fuzzpy ledger: it is not a SQLite database or it is damaged ({text})",
            path,
            hint=unusable_file_hint(path),
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return ledger_error(
            LEDGER_BUSY,
            f"the ledger {path} stayed locked by another process ({text})",
            path,
            hint="another fuzzpy run may be stuck; retry when it has finished",
        )
    return ledger_error(CANNOT_OPEN, f"cannot use the ledger file {path}: {text}", path)
