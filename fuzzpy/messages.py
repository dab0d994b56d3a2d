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
    "FZ107": "missing `;` at the end of a declaration or statement",
    "FZ108": "a reserved word is used as a name",
    "FZ109": "an expression or type is nested too deeply",
    "FZ110": "the arms of a `case` do not fit together",
    "FZ111": "a record field is named twice",
    "FZ112": "a vector norm other than 1, 2 or inf",
    "FZ113": "comparisons written as a chain (`a < b < c`)",
    "FZ114": "the file contains no declarations",
    # --- FZ2xx: types (checker) ---
    # --- FZ3xx: sensitivity and privacy (checker) ---
    # --- FZ4xx: mechanism verification (verifier) ---
    # --- FZ5xx: running and data (runtime) ---
    "FZ501": "a data file could not be read",
    "FZ502": "a data file is empty",
    "FZ503": "a data file lacks a column the row type needs",
    "FZ504": "a data value has the wrong type (row and column named)",
    "FZ505": "a data file could not be parsed",
    "FZ506": "a data value is missing (row and column named)",
    "FZ507": "a parameter's type cannot be read from a data file",
    "FZ508": "`run` is missing a --data / --arg for a parameter, or names an unknown one",
    "FZ509": "a --arg value does not have the parameter's type",
    "FZ510": "a record has no such field",
    "FZ511": "a value cannot be stored in a bag",
    "FZ512": "division by zero in a static number",
    "FZ513": "a static number was expected",
    "FZ514": "a value was used in a way its type does not allow at run time",
    "FZ515": "an index is out of range",
    "FZ516": "a primitive was given a value of the wrong kind",
    "FZ517": "a primitive's static argument is out of its range",
    "FZ518": "expmech scores must be finite",
    "FZ519": "a mechanism's precondition failed, or a loop or recursion ran away",
    "FZ520": "a release is too small for the exact noise grid",
    "FZ521": "`run` names a definition the program does not have",
    "FZ522": "the definition's result is not `fuzzy` but depends on a database",
    "FZ524": "noise was to be added to a value that is not a finite number",
    # --- FZ6xx: budget ledger (accounting) ---
    "FZ601": "the release would exceed the dataset's remaining privacy budget",
    "FZ602": "the budget given differs from the one fixed for this dataset",
    "FZ603": "the release's cost cannot be accounted under the dataset's composition rule",
    # --- FZ7xx: command-line usage (cli) ---
    "FZ700": "this phase is not built yet",
    "FZ701": "file not found or unreadable",
    # ledger file and budget arguments (accounting/ledger*; exit 2)
    "FZ710": "the ledger file is not a SQLite database, or is damaged",
    "FZ711": "the file is a SQLite database of another application, not a fuzzpy ledger",
    "FZ712": "the ledger was written by a newer fuzzpy (unknown format version)",
    "FZ713": "the ledger file cannot be opened or created",
    "FZ714": "invalid privacy budget",
    "FZ715": "no budget is set for this dataset",
    "FZ716": "the ledger stayed locked by another process for too long",
}


def describe(code: str) -> str:
    return CODES.get(code, "")
