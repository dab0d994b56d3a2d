"""The content fingerprint of data given in memory (a frame, a DuckDB
relation or table, a Spark DataFrame): what a file's SHA-256 is for a file.

Definition (docs/semantics.md, "Data in memory"), per column:

* each cell has a canonical text: a null is `N`; any other cell is `V`
  followed by its value, spelled the same whatever the engine and the Arrow
  width: an integer in decimal; a boolean `true`/`false`; a string as it
  is; binary as upper-case hex; a decimal as its engine's text; a floating
  point number exactly, as `nan`, `inf`, `-inf`, `0` (either zero), or
  sign, binary exponent e and 53-bit integer mantissa m (|x| = m 2^(e-52)),
  computed with exact double operations (division by a power of two);
* the cell's digest is SHA-256 of that text; its first 224 bits, cut into
  8 lanes of 28 bits, are added over the column's rows (integers, exact);
* the column's digest is SHA-256 of `fuzzpy-column-1`, the cell class, the
  number of rows and the 8 lane sums.

The order of the rows does not matter (a sum is order-independent, so an
engine computes it in parallel, where the data lives, as one query). A
multiset hash by addition (Bellare & Micciancio, "A New Paradigm for
Collision-Free Hashing", EUROCRYPT 1997): it detects changed data by
accident, which is what the ledger guards against (a ledger's owner can
always start another one). The data's fingerprint, recorded with each
charge, is SHA-256 over the names and digests of the columns a run reads.
"""

from __future__ import annotations

import hashlib

from fuzzpy.data.identity import cell_class, data_fingerprint  # noqa: F401 -- their home is data/
from fuzzpy.engines.sql import Dialect
from fuzzpy.support.lazy import lazy

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)

LANES, LANE_HEX = 8, 7




def _text(d: Dialect, column: str, kind: str) -> str:
    text_type = "STRING" if d.name == "spark" else "VARCHAR"
    if kind == "int" or kind == "decimal":
        return f"CAST({column} AS {text_type})"
    if kind == "bool":
        return f"(CASE WHEN {column} THEN 'true' ELSE 'false' END)"
    if kind == "string":
        return column
    if kind == "binary":
        return f"upper(hex({column}))"
    return _float_text(d, f"CAST({column} AS DOUBLE)", text_type)


def _float_text(d: Dialect, x: str, text_type: str) -> str:
    a = f"abs({x})"
    guess = f"CAST(floor(log2({a})) AS INTEGER)"
    # log2 may be off by one near a power of two: corrected by exact comparisons
    low = f"(CASE WHEN {a} < power(2.0, {guess}) THEN {guess} - 1 ELSE {guess} END)"
    exponent = f"(CASE WHEN {a} >= power(2.0, {low} + 1) THEN {low} + 1 ELSE {low} END)"
    exponent = f"greatest({exponent}, -1022)"  # subnormals: the smallest normal exponent
    mantissa = f"CAST(({a} / power(2.0, {exponent})) * power(2.0, 52) AS BIGINT)"
    sign = f"(CASE WHEN {x} < 0 THEN '-' ELSE '+' END)"
    finite = (f"concat({sign}, CAST({exponent} AS {text_type}), ':', "
              f"CAST({mantissa} AS {text_type}))")
    return (f"(CASE WHEN isnan({x}) THEN 'nan' WHEN {x} = {d.double(float('inf'))} THEN 'inf' "
            f"WHEN {x} = {d.double(float('-inf'))} THEN '-inf' WHEN {x} = 0 THEN '0' ELSE {finite} END)")


def _sha(d: Dialect, text: str) -> str:
    return f"sha2({text}, 256)" if d.name == "spark" else f"sha256({text})"


def _lane(d: Dialect, digest: str, lane: int) -> str:
    part = f"substr({digest}, {1 + LANE_HEX * lane}, {LANE_HEX})"
    if d.name == "spark":
        return f"CAST(conv({part}, 16, 10) AS BIGINT)"
    return f"CAST(concat('0x', {part}) AS BIGINT)"


def fingerprint_sql(d: Dialect, source: str, columns: list[tuple[str, str]]) -> str:
    """One query over `source`: the row count, then 8 lane sums per column
    (`columns`: (quoted column, cell class))."""
    parts = ["count(*)"]
    for column, kind in columns:
        text = f"(CASE WHEN {column} IS NULL THEN 'N' ELSE concat('V', {_text(d, column, kind)}) END)"
        digest = _sha(d, text)
        parts.extend(f"CAST(sum({_lane(d, digest, lane)}) AS BIGINT)" for lane in range(LANES))
    return f"SELECT {', '.join(parts)} FROM {source}"


def column_digests(row: tuple, classes: list[str]) -> list[str]:
    """The columns' digests from the query's row (`fingerprint_sql`)."""
    count = int(row[0])
    digests = []
    for index, kind in enumerate(classes):
        lanes = [int(v or 0) for v in row[1 + LANES * index: 1 + LANES * (index + 1)]]
        text = f"fuzzpy-column-1\n{kind}\n{count}\n" + " ".join(map(str, lanes))
        digests.append(hashlib.sha256(text.encode()).hexdigest())
    return digests
