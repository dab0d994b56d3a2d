"""Dataset identity, the part that needs no engine: how a column's cells are
spelled for its fingerprint, the fingerprint of the columns a run reads, and
whether two tables could hold the same rows. The digests themselves are
computed where the data lives (`fuzzpy.engines.fingerprint`, `content`);
docs/semantics.md, "Data in memory", defines them."""

from __future__ import annotations

import hashlib
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
    return (sorted(n.strip() for n in names if n.strip())
            == sorted(n.strip() for n in other if n.strip()))
