"""What a run needs to know of a Parquet column's Arrow type, without pyarrow.

A Parquet file's schema is public and decides which columns a row type may
read and how (`cells.readable_from`, `scan.compilable`, ...). pyarrow's
reading of the schema is the reference; importing pyarrow costs a short
DuckDB run a tenth of its time (issue 11), so a file's schema, as pyarrow
read it, is remembered by the file's hash (`fuzzpy.engines.filehash`) as
these descriptions, and a later run classifies its columns from them.
DuckDB's own types cannot stand in for pyarrow's: it reads a decimal256 as
DOUBLE, a duration as BIGINT, a fixed-size binary as BLOB, which pyarrow
types refuse or read otherwise (docs/engines.md).
"""

from __future__ import annotations

from typing import Any

from fuzzpy.support.records import frozen

#: The families of Arrow types the runtime tells apart (`pyarrow.types`'
#: predicates); every other type is `other`.
FAMILIES = ("int", "uint", "float", "bool", "string", "large_string", "binary", "large_binary", "decimal",
            "other")
TEXT = ("string", "large_string")
BINARY = ("binary", "large_binary")
INTEGER = ("int", "uint")
NUMBER = ("int", "uint", "float", "decimal")


@frozen
class ColumnType:
    """An Arrow type's family (a dictionary's: its values'), bit width (of
    integers), whether it is dictionary-encoded, and its spelling
    (`str()` of the pyarrow type, which messages quote)."""

    family: str
    bit_width: int
    dictionary: bool
    text: str

    def __str__(self) -> str:
        return self.text


def column_type(arrow_type: Any) -> ColumnType:
    """The description of a pyarrow type (a description is its own)."""
    if isinstance(arrow_type, ColumnType):
        return arrow_type
    import pyarrow as pa  # loaded already: `arrow_type` is one of its types

    dictionary = pa.types.is_dictionary(arrow_type)
    values = arrow_type.value_type if dictionary else arrow_type
    width = values.bit_width if pa.types.is_integer(values) else 0
    return ColumnType(_family(pa, values), width, dictionary, str(arrow_type))


def _family(pa: Any, t: Any) -> str:
    tests = (("int", pa.types.is_signed_integer), ("uint", pa.types.is_unsigned_integer),
             ("float", pa.types.is_floating), ("bool", pa.types.is_boolean), ("string", pa.types.is_string),
             ("large_string", pa.types.is_large_string), ("binary", pa.types.is_binary),
             ("large_binary", pa.types.is_large_binary), ("decimal", pa.types.is_decimal))
    return next((family for family, test in tests if test(t)), "other")


def to_json(t: ColumnType) -> list[object]:
    return [t.family, t.bit_width, t.dictionary, t.text]


def from_json(entry: object) -> ColumnType | None:
    """A remembered description, or None if it is not one."""
    if not isinstance(entry, list) or len(entry) != 4:
        return None
    family, width, dictionary, text = entry
    if family not in FAMILIES or type(width) is not int or type(dictionary) is not bool or type(text) is not str:
        return None
    return ColumnType(family, width, dictionary, text)
