"""Registered datasets: a name, its file, its public schema and row rules.

A dataset is a named thing with one budget (the `budgets` row of the same
name). Its registration records the data file (absolute path, format and the
SHA-256 of its bytes when its owner last validated it), its columns -- each
with a type (or none: "as each program's row type says") and the policy for
a cell that does not fit (drop the row, replace the cell by a declared value,
or refuse, which is checked when the owner validates) -- and the counts of
that validation, for the owner.

Everything here is public except `report` (counts about the rows, for the
data owner: `fuzzpy dataset show`, never `fuzzpy run`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import field
from typing import Any

from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN
from fuzzpy.support.records import frozen

KINDS = ("int", "num", "bool", "string")
FORMATS = ("csv", "parquet")
LEGACY_PREFIX = "sha256:"  # the keys of datasets charged before registration existed
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

UNKNOWN_DATASET = "FZ540"
CHANGED_FILE = "FZ541"
SCHEMA_MISMATCH = "FZ542"
BAD_POLICY = "FZ543"
ALREADY_REGISTERED = "FZ544"
OTHER_DATASETS_FILE = "FZ545"
REFUSED_CELLS = "FZ546"
BAD_NAME = "FZ547"


def dataset_error(code: str, message: str, hint: str | None = None, notes: tuple[str, ...] = ()) -> FuzzError:
    return FuzzError((Diagnostic(code, message, NO_SPAN, notes=notes, hint=hint),))


@frozen
class Policy:
    """What a row rule does with a cell that does not fit its column: `drop`
    the row, `value` (replace the cell by a declared value) or `refuse`
    (the owner's validation fails while such a cell exists). Each is a
    1-stable transformation of the rows (McSherry, PINQ, SIGMOD 2009)."""

    kind: str = "drop"
    value: str | None = None

    @classmethod
    def parse(cls, text: str) -> Policy:
        text = text.strip()
        if text in ("drop", "refuse"):
            return cls(text)
        if text.startswith("value:"):
            return cls("value", text.removeprefix("value:"))
        raise dataset_error(BAD_POLICY, f"`{text}` is not a policy for bad cells",
                            hint="a policy is drop, refuse or value:V (replace the cell by V)")

    def __str__(self) -> str:
        return f"value:{self.value}" if self.kind == "value" else self.kind


DEFAULT_POLICY = Policy("drop")


@frozen
class Column:
    """A column of the file: its name, its type (None: as each program reads
    it) and the policy for its cells that do not fit."""

    name: str
    kind: str | None = None
    policy: Policy = DEFAULT_POLICY
    sha256: str | None = None  # data in memory: the column's digest (fuzzpy.engines.fingerprint)

    def to_json(self) -> dict[str, object]:
        shown: dict[str, object] = {"name": self.name, "type": self.kind, "policy": str(self.policy)}
        if self.sha256 is not None:
            shown["sha256"] = self.sha256
        return shown


@frozen
class Registration:
    name: str
    file: str  # absolute path
    format: str  # csv | parquet
    sha256: str  # hex digest of the file's bytes when validated
    size: int
    columns: tuple[Column, ...]
    explicit: bool  # registered by its owner; False: by a first run (`--budget`)
    registered: str = ""
    validated: str = ""
    report: dict[str, Any] = field(default_factory=dict, compare=False)
    content: str | None = None  # the content key (fuzzpy.engines.content): the same rows under any format

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def public_json(self) -> dict[str, object]:
        """What anyone may see: everything but the owner's counts."""
        return {
            "name": self.name,
            "file": self.file,
            "format": self.format,
            "sha256": self.sha256,
            "columns": [c.to_json() for c in self.columns],
            "registered_by": "owner" if self.explicit else "first run",
            "registered": self.registered,
            "validated": self.validated,
        }


def is_name(text: str) -> bool:
    return bool(_NAME.match(text))


def check_name(name: str) -> None:
    if not is_name(name):
        raise dataset_error(
            BAD_NAME, f"`{name}` cannot name a dataset",
            hint="a name is letters, digits, `_`, `.` and `-`, starting with a letter or digit",
        )


def name_from_path(path: str) -> str:
    """The name a file's dataset gets when a run registers it: its file name
    without the extension (so `people.csv` and `people.parquet` are one
    dataset), with any other character made `_`."""
    stem = path.replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).lstrip("_.-")
    return name[:128] or "data"


# ---------------------------------------------------------------- rows

SCHEMA = (
    """CREATE TABLE datasets (
        name TEXT PRIMARY KEY REFERENCES budgets(dataset),
        file TEXT NOT NULL,         -- absolute path of the data file
        format TEXT NOT NULL,       -- csv | parquet
        sha256 TEXT NOT NULL,       -- of the file's bytes when last validated
        size INTEGER NOT NULL,
        columns TEXT NOT NULL,      -- JSON: [{name, type, policy}], the public schema
        explicit INTEGER NOT NULL,  -- 1: registered by its owner; 0: by a first run
        registered TEXT NOT NULL,
        validated TEXT NOT NULL,
        report TEXT NOT NULL        -- JSON: the owner's validation counts
    )""",
    "CREATE INDEX datasets_by_file ON datasets (file)",
    "CREATE INDEX datasets_by_sha256 ON datasets (sha256)",
    """CREATE TABLE dataset_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        time TEXT NOT NULL,
        action TEXT NOT NULL,       -- registered | updated
        file TEXT NOT NULL,
        sha256 TEXT NOT NULL
    )""",
)


def read_registration(connection: sqlite3.Connection, name: str) -> Registration | None:
    row = connection.execute("SELECT * FROM datasets WHERE name = ?", (name,)).fetchone()
    return None if row is None else _registration_of(row)


def read_registrations(connection: sqlite3.Connection) -> list[Registration]:
    return [_registration_of(r) for r in connection.execute("SELECT * FROM datasets ORDER BY name")]


#: Format 3: the content key that links one table's file and frames (a14 F1).
CONTENT_COLUMN = (
    "ALTER TABLE datasets ADD COLUMN content TEXT",
    "CREATE INDEX datasets_by_content ON datasets (content)",
)

#: Format 4: each registered version's content key and column names, so that
#: an earlier version in another form stays its dataset's (a18 F2).
LOG_CONTENT_COLUMNS = (
    "ALTER TABLE dataset_log ADD COLUMN content TEXT",
    "ALTER TABLE dataset_log ADD COLUMN names TEXT",  # JSON: the version's column names
    "CREATE INDEX dataset_log_by_content ON dataset_log (content)",
)


def registrations_holding(
    connection: sqlite3.Connection, file: str, sha256: str | None = None, content: str | None = None
) -> list[Registration]:
    """The datasets registered with this file: by path, or (if given) by its
    bytes' hash or by its content key."""
    rows = connection.execute(
        "SELECT * FROM datasets WHERE file = ? OR sha256 = ? OR content = ? ORDER BY name",
        (file, sha256 or "-", content or "-"),
    ).fetchall()
    return [_registration_of(r) for r in rows]


def changed_file_error(registration: Registration, param: str = "PARAM", given: str | None = None) -> FuzzError:
    """A registered dataset's file is not the one its owner validated. The
    message names only the registration, never anything read from the file;
    the hint names the command that runs on the validated file (issue 31:
    a Parquet copy of a used CSV was refused without it)."""
    other = f" {given}" if given is not None and given != registration.file else ""
    accept = f"`fuzzpy dataset update {registration.name}{other}`"
    return dataset_error(
        CHANGED_FILE,
        f"the file of dataset `{registration.name}` ({registration.file}) is not the file its "
        "owner validated: it has changed, or another file was given",
        notes=("nothing was charged; a changed file stays the same dataset, with the same budget",),
        hint=f"to run on the file its owner validated: --data {param}={registration.name}; its owner can "
        f"review this file with `fuzzpy dataset check {registration.name}` and accept it with {accept}; "
        f"other data (not these rows in another form, which stay this dataset) is a dataset of its own: "
        f"--dataset {param}=NAME",
    )


def other_datasets_file_error(name: str, holder: Registration, same_rows: bool = False,
                              earlier: bool = False, shared: tuple[str, ...] | None = None,
                              param: str = "PARAM") -> FuzzError:
    """FZ545; the hint names the run's parameter when it is known (review s27c)."""
    if same_rows and shared is not None:  # a projection or a copy with columns added (issue 24)
        which = "an earlier version of dataset" if earlier else "dataset"
        columns = ", ".join(f"`{c}`" for c in shared)
        return dataset_error(
            OTHER_DATASETS_FILE,
            f"this data holds the same rows as {which} `{holder.name}` in the columns they share "
            f"({columns}), with columns added or left out; it cannot also be dataset `{name}`",
            notes=("the same people have one budget: a copy with an index, an id or other columns added, or "
                   "with columns removed, is the same rows",),
            hint=f"if this is dataset `{holder.name}` in a new form, make it its file with `fuzzpy dataset update "
            f"{holder.name} FILE` and run on it by name (--data {param}={holder.name}); if one program reads both, "
            "split it: one program on the dataset alone",
        )
    if earlier and same_rows:
        return dataset_error(
            OTHER_DATASETS_FILE,
            f"this data holds the same rows as an earlier version of dataset `{holder.name}`, in another "
            f"form; it cannot be dataset `{name}`",
            notes=("a dataset's data keeps its budget when its file is updated, whatever form it comes in",),
            hint=f"run on the dataset's current file by its name: --data {param}={holder.name}, or ask its owner",
        )
    if earlier:
        return dataset_error(
            OTHER_DATASETS_FILE,
            f"this file is an earlier version of the file of dataset `{holder.name}`; it cannot be "
            f"dataset `{name}`",
            notes=("a dataset's data keeps its budget when its file is updated",),
            hint=f"use the dataset by its name: --data {param}={holder.name}",
        )
    if same_rows:  # linked by the content key, not the bytes
        return dataset_error(
            OTHER_DATASETS_FILE,
            f"this data holds the same rows as dataset `{holder.name}` ({holder.file}), in another form; "
            f"it cannot also be dataset `{name}`",
            notes=("the same rows have one budget, whatever file or frame they come in",),
            hint=f"run on the dataset by its name (its own file): --data {param}={holder.name}; or, if this "
            f"file is its new form, its owner makes it the dataset's file with `fuzzpy dataset update "
            f"{holder.name} FILE`",
        )
    return dataset_error(
        OTHER_DATASETS_FILE,
        f"this file is the file of dataset `{holder.name}` ({holder.file}); it cannot also be "
        f"dataset `{name}`",
        notes=("a file's data has one budget, whatever it is called",),
        hint=f"use the dataset by its name: --data {param}={holder.name}",
    )


def earlier_contents(connection: sqlite3.Connection) -> list[tuple[str, list[str], str]]:
    """(dataset, column names, content key) of every registered version whose
    key is known (`dataset_log`)."""
    rows = connection.execute(
        "SELECT DISTINCT name, names, content FROM dataset_log WHERE content IS NOT NULL ORDER BY name")
    return [(row[0], json.loads(row[1] or "[]"), row[2]) for row in rows]


def datasets_once_holding(connection: sqlite3.Connection, sha256: str) -> list[str]:
    """The datasets whose file had these bytes at some registration or
    update (`dataset_log`): an earlier version of a dataset's file stays
    that dataset's (a16 F2), it does not start a budget of its own."""
    rows = connection.execute("SELECT DISTINCT name FROM dataset_log WHERE sha256 = ? ORDER BY name", (sha256,))
    return [row[0] for row in rows]


def write_registration(connection: sqlite3.Connection, registration: Registration, action: str) -> None:
    values = {
        "name": registration.name,
        "file": registration.file,
        "format": registration.format,
        "sha256": registration.sha256,
        "size": registration.size,
        "columns": json.dumps([c.to_json() for c in registration.columns]),
        "explicit": int(registration.explicit),
        "registered": registration.registered,
        "validated": registration.validated,
        "report": json.dumps(registration.report, sort_keys=True),
        "content": registration.content,
    }
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    connection.execute(f"INSERT OR REPLACE INTO datasets ({columns}) VALUES ({marks})", tuple(values.values()))
    connection.execute(
        "INSERT INTO dataset_log (name, time, action, file, sha256, content, names) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (registration.name, registration.validated, action, registration.file, registration.sha256,
         registration.content, json.dumps([c.name for c in registration.columns])),
    )


def read_log(connection: sqlite3.Connection, name: str) -> list[sqlite3.Row]:
    return connection.execute("SELECT * FROM dataset_log WHERE name = ? ORDER BY id", (name,)).fetchall()


def _registration_of(row: sqlite3.Row) -> Registration:
    columns = tuple(
        Column(c["name"], c["type"], Policy.parse(c["policy"]), c.get("sha256"))
        for c in json.loads(row["columns"])
    )
    return Registration(
        name=row["name"],
        file=row["file"],
        format=row["format"],
        sha256=row["sha256"],
        size=int(row["size"]),
        columns=columns,
        explicit=bool(row["explicit"]),
        registered=row["registered"],
        validated=row["validated"],
        report=json.loads(row["report"]),
        content=row["content"],
    )
