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
    "FZ201": "type mismatch: the expected type, what was found, and why it was expected",
    "FZ202": "a static number is required here (or a static bound is invalid)",
    "FZ203": "division by zero in a static expression",
    "FZ204": "unknown type name",
    "FZ205": "record field missing, unknown or duplicated",
    "FZ206": "malformed vector type (norm 1, 2 or inf over numbers)",
    "FZ207": "unknown variable",
    "FZ208": "wrong number of arguments, or applying something that is not a function",
    "FZ209": "cannot infer a type here: add an annotation",
    "FZ210": "a name is defined twice (or two parameters share a name)",
    "FZ211": "recursion needs `def rec` with a declared signature (no mutual recursion)",
    "FZ212": "a top-level `let` must be a static number",
    "FZ213": "a distribution (`fuzzy`) used where a value is needed, or the reverse",
    "FZ214": "a vector norm conversion needs the vector's static length",
    "FZ215": "mechanism-only syntax used in a `def`",
    "FZ216": "unknown operator",
    "FZ218": "a definition nested too deeply to check",
    # --- FZ3xx: sensitivity and privacy (checker) ---
    "FZ301": "`return` releases private data without noise (infinite privacy cost)",
    "FZ302": "a release chosen by a branch on private data (infinite privacy cost)",
    "FZ303": "a closure applied once per row (map, filter, split, group) captures a database",
    "FZ304": "a sum without finite clamping bounds is infinitely sensitive",
    "FZ305": "inferred sensitivity exceeds the declared bound",
    "FZ306": "noise added to an infinitely sensitive value (infinite privacy cost)",
    "FZ307": "a recursive call may release private data an unbounded number of times",
    "FZ308": "a mechanism's private argument moves more than its proof allows",
    "FZ309": "a mechanism's public argument is not static or depends on private data",
    "FZ310": "a mechanism is called whose privacy claim is not proved by the verifier",
    "FZ311": "a mechanism precondition on neighbouring inputs that sensitivity cannot establish",
    "FZ312": "inferred privacy cost exceeds the declared bound",
    "FZ313": "a function returning a distribution captures private data",
    # --- FZ4xx: mechanism verification (verifier) ---
    "FZ401": "unknown variable or function in a mechanism",
    "FZ402": "a noise scale that is not positive",
    "FZ403": "the released values do not match the mechanism's result type",
    "FZ404": "a construct the verifier does not support in mechanisms",
    "FZ405": "a mechanism parameter is redeclared as a local variable",
    "FZ406": "a mechanism's preconditions contradict each other: its proof is vacuous (warning)",
    "FZ410": "the mechanism's privacy claim was refuted by a counterexample",
    "FZ411": "the mechanism's privacy claim could not be proved",
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
    "FZ523": "an option of `run` has a value it cannot use (--seed)",
    "FZ524": "noise was to be added to a value that is not a finite number",
    # --- FZ6xx: budget ledger (accounting) ---
    "FZ601": "the release would exceed the dataset's remaining privacy budget",
    "FZ602": "the budget given differs from the one fixed for this dataset",
    "FZ603": "the release's cost cannot be accounted under the dataset's composition rule",
    # --- FZ7xx: command-line usage (cli) ---
    "FZ700": "this phase is not built yet",
    "FZ701": "file not found or unreadable",
    "FZ702": "no definition with the name given on the command line",
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
