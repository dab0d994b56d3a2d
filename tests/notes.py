"""What a run writes on stderr apart from its release: a first run's note of
the registration it recorded (`note: registered NAME with types ...`, issue
31 F1), which tests comparing a run's stderr leave out."""

from __future__ import annotations


def without_registration(err: str) -> str:
    """``err`` without the registration notes (whole lines)."""
    lines = err.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("note: registered "))
