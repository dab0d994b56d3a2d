"""The content key of a dataset: what links a file and the same rows given
in memory (a14 F1: `pd.read_csv("people.csv")` under a new name was a new
dataset with a fresh budget while the file's own was spent).

A file's SHA-256 and a frame's fingerprint (`fuzzpy.engines.fingerprint`)
are exact: they tell whether the data changed. The content key is looser on
purpose, so that one table read by different libraries gives one key: every
cell is spelled from its value, whatever its type:

* missing: null, empty or blank text, NaN, and the texts pandas reads as
  missing (`NA`, `N/A`, `null`, `None`, `nan`, ...): `N`;
* a number (any cell whose trimmed text reads as a double, and every
  numeric cell): `D` and the double, exactly (sign, binary exponent,
  53-bit mantissa, as the fingerprint spells it), so `3`, `3.0`, ` 3 ` and
  the integer 3 are one cell;
* a boolean, or `true`/`false` in any case: the number 1 or 0 (a column
  of booleans exported as 0/1 is the same cells);
* any other text: `S` and the text, trimmed.

Per column, as the fingerprint: SHA-256 of each cell's spelling, 8 lanes of
28 bits summed over the rows (the order of rows does not matter: Bellare &
Micciancio's AdHash, EUROCRYPT 1997), then SHA-256 of the row count and
the sums; the key is SHA-256 over the (trimmed) names and digests of all
columns. A second dataset with the key of a registered one is refused
(FZ545). It detects accidents, as the rest of the ledger does; data changed
in any way that shows in a cell is new data.

When. Every cell is hashed, which costs a scan as long as a frame's
fingerprint. Data in memory is keyed when its dataset is registered (it
will not be there later). A file is keyed only when it has to be compared:
when a new dataset (file or frame) has the same column names as a
registered file, both are keyed, and the key is recorded in the file's
registration and remembered by the file's hash (`filehash`). A file read
by a new run with no such neighbour in the ledger costs nothing more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from fuzzpy.engines.fingerprint import LANES, _float_text, _lane, _sha
from fuzzpy.engines.sql import DIALECTS, Dialect
from fuzzpy.lazy import lazy

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)

VERSION = "fuzzpy-content-3"
_MISSING_WORDS = ("na", "n/a", "nan", "-nan", "null", "none", "<na>", "#n/a", "#na", "nat")

Rows = Callable[[str], list[tuple]]


def column_kind(arrow_type: pa.DataType) -> str:
    """How a column's cells are spelled: `number`, `bool` or `text`."""
    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return "number"
    if pa.types.is_boolean(arrow_type):
        return "bool"
    return "text"


def _number(d: Dialect, x: str, text_type: str) -> str:
    return (f"(CASE WHEN {x} IS NULL OR isnan({x}) THEN 'N' "
            f"ELSE concat('D', {_float_text(d, x, text_type)}) END)")


#: Trimmed around a cell: every character the loader trims (Unicode
#: White_Space, as Arrow's utf8_trim_whitespace) and Python's other
#: str.isspace characters; SQL's trim() alone removes only spaces, so a
#: tab around `true` made other rows of the same cells (a20 F4). Trimming
#: more than the loader only links more.
_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
               + "\u2028\u2029\u202f\u205f\u3000")


def _trimmed(d: Dialect, text: str) -> str:
    if d.name == "spark":
        return f"trim(BOTH {d.string(_WHITESPACE)} FROM {text})"
    return f"trim({text}, {d.string(_WHITESPACE)})"


def _cell(d: Dialect, column: str, kind: str) -> str:
    """A cell's spelling. Text that reads as a number is that number (a
    column of numbers with a word among them is text in one library and
    numbers in another)."""
    text_type = "STRING" if d.name == "spark" else "VARCHAR"
    if kind == "number":
        return _number(d, f"CAST({column} AS DOUBLE)", text_type)
    if kind == "bool":  # as the numbers 1 and 0 (a16/a18: booleans exported as 0/1 are the same cells)
        return _number(d, f"(CASE WHEN {column} IS NULL THEN NULL WHEN {column} THEN 1.0 ELSE 0.0 END)", text_type)
    try_cast = "try_cast" if d.name == "spark" else "TRY_CAST"
    text = _trimmed(d, f"CAST({column} AS {text_type})")
    missing = ", ".join(d.string(word) for word in _MISSING_WORDS)
    return (f"(CASE WHEN {column} IS NULL OR {text} = '' OR lower({text}) IN ({missing}) THEN 'N' "
            f"WHEN {try_cast}({text} AS DOUBLE) IS NOT NULL THEN "
            f"{_number(d, f'{try_cast}({text} AS DOUBLE)', text_type)} "
            f"WHEN lower({text}) IN ('true', 'false') THEN "
            f"{_number(d, f'(CASE WHEN lower({text}) = {chr(39)}true{chr(39)} THEN 1.0 ELSE 0.0 END)', text_type)} "
            f"ELSE concat('S', {text}) END)")


def content_sql(d: Dialect, source: str, columns: list[tuple[str, str]]) -> str:
    """One query over `source`: the row count, then 8 lane sums per column
    (`columns`: (quoted name, kind)). Each cell is spelled once, in an
    inner query, then hashed."""
    spelled = ", ".join(f"{_cell(d, column, kind)} AS c{i}" for i, (column, kind) in enumerate(columns))
    parts = ["count(*)"]
    for i in range(len(columns)):
        digest = _sha(d, f"c{i}")
        parts.extend(f"CAST(sum({_lane(d, digest, lane)}) AS BIGINT)" for lane in range(LANES))
    inner = f"SELECT {spelled} FROM {source}" if columns else f"SELECT 1 FROM {source}"
    return f"SELECT {', '.join(parts)} FROM ({inner}) AS spelled"


def content_key(row: tuple, names: list[str]) -> str:
    """The key from `content_sql`'s row, for columns named `names`."""
    count = int(row[0])
    digests = []
    for index, name in enumerate(names):
        lanes = [int(v or 0) for v in row[1 + LANES * index: 1 + LANES * (index + 1)]]
        column = f"{VERSION}\n{count}\n" + " ".join(map(str, lanes))
        digests.append((name.strip(), hashlib.sha256(column.encode()).hexdigest()))
    text = VERSION + "\n" + "".join(f"{n}\t{h}\n" for n, h in sorted(digests))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def query_content(d: Dialect, rows: Rows, source: str, schema: pa.Schema) -> str:
    """The content key of `source`, whose columns are `schema`'s."""
    columns = [(d.ident(f.name), column_kind(f.type)) for f in schema]
    (row,) = rows(content_sql(d, source, columns))
    return content_key(row, list(schema.names))


def same_columns(names: list[str], other: list[str]) -> bool:
    """Whether two tables could hold the same rows: the same column names."""
    return sorted(n.strip() for n in names) == sorted(n.strip() for n in other)


def file_content(path: str, form: str, sha256: str) -> str | None:
    """The content key of a CSV or Parquet file, read by DuckDB (None if it
    cannot read it, or it is no longer the file of this hash: such a file is
    linked by its bytes only). Remembered by the file's hash (`filehash`)."""
    from fuzzpy.engines.filehash import recall_counts, remember_counts

    remembered = recall_counts(sha256, VERSION)
    if remembered is not None and len(remembered) == 1:
        return f"{remembered[0]:064x}"
    key = _read_file_content(path, form, sha256)
    if key is not None:
        remember_counts(sha256, VERSION, (int(key, 16),))
    return key


def _read_file_content(path: str, form: str, sha256: str | None = None) -> str | None:
    import duckdb

    d = DIALECTS["duckdb"]
    if form == "parquet":
        source = f"read_parquet({d.string(path)}, hive_partitioning = false)"
    elif form == "csv":
        source = (f"read_csv({d.string(path)}, header = true, delim = ',', quote = '\"', escape = '\"', "
                  "null_padding = true, ignore_errors = true, compression = 'none', hive_partitioning = false)")
    else:
        return None
    con = duckdb.connect()
    try:
        con.execute("SET enable_progress_bar = false")
        relation = con.sql(f"SELECT * FROM {source} LIMIT 0")
        schema = (getattr(relation, "to_arrow_table", None) or relation.arrow)().schema  # DuckDB 2 / 1
        key = query_content(d, lambda sql: con.execute(sql).fetchall(), source, schema)
    except duckdb.Error:
        return None
    finally:
        con.close()
    if sha256 is not None and _current_sha256(path) != sha256:  # the file changed under us: not this file's key
        return None
    return key


def _current_sha256(path: str) -> str | None:
    from fuzzpy.diagnostics import FuzzError
    from fuzzpy.engines.engine import streamed_data_file

    try:
        return streamed_data_file(path).sha256
    except FuzzError:  # unreadable now
        return None

