"""Dataset identity, the part that needs no engine: how a column's cells are
spelled for its fingerprint, the fingerprint of the columns a run reads, and
whether two tables could hold the same rows. The digests themselves are
computed where the data lives (`fuzzpy.engines.fingerprint`, `content`);
docs/semantics.md, "Data in memory", defines them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from fuzzpy.data.columntypes import ColumnType, column_type

if TYPE_CHECKING:
    import pyarrow as pa


def cell_class(arrow_type: pa.DataType | ColumnType) -> str | None:
    """How a column's cells are spelled; None for a type no run can read."""
    family = column_type(arrow_type).family
    if family in ("int", "uint"):
        return "int"
    if family in ("float", "bool", "decimal"):
        return family
    if family in ("string", "large_string"):
        return "string"
    if family in ("binary", "large_binary"):
        return "binary"
    return None


def data_fingerprint(digests: dict[str, str]) -> str:
    """The fingerprint of the columns a run reads (name -> digest)."""
    text = "fuzzpy-data-1\n" + "".join(f"{name}\t{digests[name]}\n" for name in sorted(digests))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


#: the tag of a content key of this version (`fuzzpy.engines.content.VERSION`)
CONTENT_TAG = "c9:"

#: A dataset's row rules as the content key reads them (issue 24, review s30b): the trimmed names of
#: its columns typed `int`, `num` or `bool`, each with its type. A row whose cell in such a column
#: does not fit the type is dropped by the loader, and left out of the key.
Rules = frozenset[tuple[str, str]]
NO_RULES: Rules = frozenset()


def rules_of(columns: Iterable[tuple[str, str | None]], only: frozenset[str] | None = None) -> Rules:
    """The row rules of columns (name, type): those typed `int`, `num` or
    `bool` (a `string` column fits every cell), among `only` if given."""
    return frozenset((name.strip(), kind) for name, kind in columns
                     if kind in ("int", "num", "bool") and (only is None or name.strip() in only))


def current(key: str | None) -> bool:
    """Whether a recorded content key was computed by this version (an older
    one, keyed otherwise, is never compared: a file's is computed again)."""
    return key is not None and key.startswith(CONTENT_TAG)


def same_columns(names: list[str], other: list[str]) -> bool:
    """Whether two tables could hold the same rows: the same column names (a
    column with no name, e.g. of a trailing comma on every line, may hold
    no value: not counted, and the content key tells)."""
    return sorted(data_names(names)) == sorted(data_names(other))


def shared_columns(names: list[str], other: list[str]) -> frozenset[str] | None:
    """The columns two tables are compared on (their content keys restricted
    to these columns, `fuzzpy.engines.content.kept_column`), or None when
    they are not compared: when one table's column names are a subset of the
    other's (equal, a projection, or a copy with columns added: the unnamed
    index column `df.to_csv` writes, an id column), the names they share. A
    table's other columns cannot make other people of the same rows: the
    rows restricted to the shared columns are theirs (a black-box review,
    issue 24). Tables whose names merely overlap, or renamed columns, are
    not compared (docs/semantics.md, "What the content key does not link")."""
    mine, theirs = frozenset(data_names(names)), frozenset(data_names(other))
    if not mine or not theirs or not (mine <= theirs or theirs <= mine):
        return None
    return mine & theirs


def plain_names(names: list[str]) -> bool:
    """Whether every column of a table is a data column (`data_names`): then
    its key restricted to all of them is its full key."""
    return sorted(n.strip() for n in names) == sorted(data_names(names))


#: the names pandas gives the columns it stores an unnamed index in
_PANDAS_INDEX = re.compile(r"__index_level_\d+__\Z")


def data_names(names: list[str]) -> list[str]:
    """The names that may hold rows' data: not blank, and not the columns
    pandas writes a frame's unnamed index to (keyed without them when the
    file's metadata says so: `content.pandas_index_columns`). Comparing
    more tables only links more."""
    return [n.strip() for n in names if n.strip() and not _PANDAS_INDEX.match(n.strip())]


def pandas_index_columns(schema: pa.Schema) -> frozenset[str]:
    """The columns in which pandas stored a frame's index (the `pandas`
    metadata's `index_columns`, e.g. `__index_level_0__` after a sort): not
    keyed, since pandas reads them back as the index and a frame given
    directly is keyed without its index (a review of v6, F1: a sorted frame
    saved as Parquet got a new budget). Leaving a column out of the key can
    only link more tables, never fewer."""
    import json

    raw = (schema.metadata or {}).get(b"pandas")
    if raw is None:
        return frozenset()
    try:
        document = json.loads(raw)
    except ValueError:
        return frozenset()
    columns = document.get("index_columns") if isinstance(document, dict) else None
    return frozenset(c for c in columns if isinstance(c, str)) if isinstance(columns, list) else frozenset()
