"""Every diagnostic code with a one-line description.

Ranges: FZ1xx syntax, FZ2xx types, FZ3xx sensitivity and privacy,
FZ4xx mechanism verification, FZ5xx running and data, FZ6xx budget ledger,
FZ7xx command-line usage. Tests check codes, not wording.
Each phase adds its codes to its own section below.
"""

from __future__ import annotations

CODES: dict[str, str] = {
    # --- FZ1xx: syntax (parser) ---
    "FZ100": "the file could not be read as UTF-8 text",
    "FZ101": "unexpected character",
    "FZ102": "unexpected token",
    "FZ103": "unexpected end of file",
    "FZ104": "unclosed bracket",
    "FZ105": "unmatched closing bracket",
    "FZ106": "unterminated comment or string",
    # --- FZ2xx: types (checker) ---
    # --- FZ3xx: sensitivity and privacy (checker) ---
    # --- FZ4xx: mechanism verification (verifier) ---
    # --- FZ5xx: running and data (runtime) ---
    # --- FZ6xx: budget ledger (accounting) ---
    # --- FZ7xx: command-line usage (cli) ---
    "FZ700": "this phase is not built yet",
    "FZ701": "file not found or unreadable",
}


def describe(code: str) -> str:
    return CODES.get(code, "")
