"""Dataset identity, the part that needs no engine: how a column's cells are
spelled for its fingerprint, the fingerprint of the columns a run reads, and
whether two tables could hold the same rows. The digests themselves are
computed where the data lives (`fuzzpy.engines.fingerprint`, `content`);
docs/semantics.md, "Data in memory", defines them."""

from __future__ import annotations

import hashlib
import re
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
CONTENT_TAG = "c6:"


def current(key: str | None) -> bool:
    """Whether a recorded content key was computed by this version (an older
    one, keyed otherwise, is never compared: a file's is computed again)."""
    return key is not None and key.startswith(CONTENT_TAG)


def same_columns(names: list[str], other: list[str]) -> bool:
    """Whether two tables could hold the same rows: the same column names (a
    column with no name, e.g. of a trailing comma on every line, may hold
    no value: not counted, and the content key tells)."""
    return sorted(_data_names(names)) == sorted(_data_names(other))


#: the names pandas gives the columns it stores an unnamed index in
_PANDAS_INDEX = re.compile(r"__index_level_\d+__\Z")


def _data_names(names: list[str]) -> list[str]:
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
