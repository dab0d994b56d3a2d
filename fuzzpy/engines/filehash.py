"""A data file's SHA-256 (and what the CSV scan needs to know of its bytes),
remembered per version of the file, so that a query engine does not read
a large file once more only to hash it.

The rule. An entry is keyed by the file's absolute path and its version as
the file system records it: device, inode, size, modification time and
change time (`st_ctime_ns`), all in nanoseconds. Any write to the file, a
rename over it, a truncation or a `utime` sets the change time to the
current clock, and user space cannot set it back. An entry is used only if
every field is equal; after computing, the engine checks the file still has
that version (FZ541 otherwise: nothing released). Like git's index ("racy
git"), an entry is written only when the change time is at least
`SETTLED_SECONDS` in the past when the hashing ends, so a file written twice
within one tick of a coarse file-system clock is never remembered with the
first content.

Its limits: it trusts the file system's clock and metadata. Someone who can
reset the system clock, or edit the file system underneath it (root, a
network file system that fakes change times), can change the bytes without
changing the key; and the entries live in the user's cache directory
(`fuzzpy.support.usercache`: read only if owned by the user and not writable by
others), which the user can edit. The ledger guards against accidents, not
against its owner (docs/semantics.md); `FUZZPY_CACHE=off` turns this off.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict

from fuzzpy.engines.csvscan import CsvFacts
from fuzzpy.support.usercache import cache_dir, trusted, write_atomic

SETTLED_SECONDS = 2.0
_KIND = "hashes"


def _entry(absolute: str, stat: tuple[int, ...]):  # type: ignore[no-untyped-def]
    folder = cache_dir(_KIND)
    if folder is None:
        return None
    key = json.dumps([absolute, *stat])
    return folder / hashlib.sha256(key.encode()).hexdigest(), key


def recall(absolute: str, stat: tuple[int, ...]) -> tuple[str, CsvFacts | None] | None:
    """The remembered hash (and CSV facts) of this version of the file."""
    found = _entry(absolute, stat)
    if found is None or not trusted(found[0]):
        return None
    path, key = found
    try:
        entry = json.loads(path.read_text())
        if entry["key"] != key or len(entry["sha256"]) != 64:
            return None
        facts = entry["facts"]
        if facts is not None:
            facts = CsvFacts(**{**facts, **{name: bytes.fromhex(facts[name]) if facts.get(name) is not None else None
                                            for name in ("delimiter", "spare", "spare_text")}})
        return str(entry["sha256"]), facts
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(absolute: str, stat: tuple[int, ...], sha256: str, facts: CsvFacts | None) -> None:
    """Remember a version's hash if its change time has settled."""
    if time.time_ns() - stat[-1] < SETTLED_SECONDS * 1e9:
        return
    found = _entry(absolute, stat)
    if found is None:
        return
    path, key = found
    saved = None
    if facts is not None:
        saved = asdict(facts)
        saved["delimiter"] = facts.delimiter.hex() if facts.delimiter is not None else None
        saved["spare"] = facts.spare.hex() if facts.spare is not None else None
        saved["spare_text"] = facts.spare_text.hex() if facts.spare_text is not None else None
    write_atomic(path, json.dumps({"key": key, "sha256": sha256, "facts": saved}).encode())


def recall_counts(sha256: str, query: str) -> tuple[int, ...] | None:
    """The remembered result of an audit query (the owner's counts of what
    the row rules do) over the file with this hash: the counts depend only
    on the file's bytes and the query's text, which holds the plan."""
    folder = cache_dir(_KIND)
    path = None if folder is None else folder / _counts_key(sha256, query)
    if path is None or not trusted(path):
        return None
    try:
        entry = json.loads(path.read_text())
        if entry["sha256"] != sha256 or entry["query"] != _query_key(query):
            return None
        return tuple(int(c) for c in entry["counts"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember_counts(sha256: str, query: str, counts: tuple[int, ...]) -> None:
    folder = cache_dir(_KIND)
    if folder is not None:
        entry = {"sha256": sha256, "query": _query_key(query), "counts": list(counts)}
        write_atomic(folder / _counts_key(sha256, query), json.dumps(entry).encode())


def _query_key(query: str) -> str:
    return hashlib.sha256(query.encode()).hexdigest()


def _counts_key(sha256: str, query: str) -> str:
    return "audit-" + hashlib.sha256(f"{sha256}:{_query_key(query)}".encode()).hexdigest()


def recall_schema(sha256: str, reader: str) -> list[object] | None:
    """The remembered schema (`engine.parquet_columns`) of the Parquet file
    with this hash, as the Parquet reader `reader` (its version) read it."""
    path = _schema_path(sha256, reader)
    if path is None or not trusted(path):
        return None
    try:
        entry = json.loads(path.read_text())
        if entry["sha256"] != sha256 or entry["reader"] != reader or not isinstance(entry["columns"], list):
            return None
        return entry["columns"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember_schema(sha256: str, reader: str, stat: tuple[int, ...], columns: list[object]) -> None:
    """Remember a schema read from the version `stat` of the file hashed
    `sha256`, if that version has settled (as `remember`)."""
    if time.time_ns() - stat[-1] < SETTLED_SECONDS * 1e9:
        return
    path = _schema_path(sha256, reader)
    if path is not None:
        write_atomic(path, json.dumps({"sha256": sha256, "reader": reader, "columns": columns}).encode())


def _schema_path(sha256: str, reader: str):  # type: ignore[no-untyped-def]
    folder = cache_dir(_KIND)
    return None if folder is None else folder / ("schema-" + hashlib.sha256(f"{sha256}:{reader}".encode()).hexdigest())
