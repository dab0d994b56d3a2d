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
* `true`/`false` in any case: `B` and the word in lower case;
* any other text: `S` and the text, trimmed.

Per column, as the fingerprint: SHA-256 of each cell's spelling, 8 lanes of
28 bits summed over the rows (the order of rows does not matter: Bellare &
Micciancio's AdHash, EUROCRYPT 1997), then SHA-256 of the row count and
the sums; the key is SHA-256 over the (trimmed) names and digests of all
columns. It is computed by DuckDB (or Spark, where the data lives) when a
dataset is first registered, and a second dataset with the key of a
registered one is refused (FZ545). It detects accidents, as the rest of the
ledger does; data changed in any way that shows in a cell is new data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from fuzzpy.engines.fingerprint import LANES, _float_text, _lane, _sha
from fuzzpy.engines.sql import DIALECTS, Dialect

VERSION = "fuzzpy-content-1"
_MISSING_WORDS = ("na", "n/a", "nan", "-nan", "null", "none", "<na>", "#n/a", "#na", "nat")

Rows = Callable[[str], list[tuple]]


def _cell(d: Dialect, column: str) -> str:
    text_type = "STRING" if d.name == "spark" else "VARCHAR"
    try_cast = "try_cast" if d.name == "spark" else "TRY_CAST"
    text = f"trim(CAST({column} AS {text_type}))"
    number = f"{try_cast}({text} AS DOUBLE)"
    missing = ", ".join(d.string(word) for word in _MISSING_WORDS)
    return (f"(CASE WHEN {column} IS NULL OR {text} = '' OR lower({text}) IN ({missing}) THEN 'N' "
            f"WHEN {number} IS NOT NULL THEN (CASE WHEN isnan({number}) THEN 'N' "
            f"ELSE concat('D', {_float_text(d, number, text_type)}) END) "
            f"WHEN lower({text}) IN ('true', 'false') THEN concat('B', lower({text})) "
            f"ELSE concat('S', {text}) END)")


def content_sql(d: Dialect, source: str, columns: list[str]) -> str:
    """One query over `source`: the row count, then 8 lane sums per column
    (`columns`: quoted names)."""
    parts = ["count(*)"]
    for column in columns:
        digest = _sha(d, _cell(d, column))
        parts.extend(f"CAST(sum({_lane(d, digest, lane)}) AS BIGINT)" for lane in range(LANES))
    return f"SELECT {', '.join(parts)} FROM {source}"


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


def query_content(d: Dialect, rows: Rows, source: str, names: list[str]) -> str:
    """The content key of `source`, whose columns are `names`."""
    (row,) = rows(content_sql(d, source, [d.ident(n) for n in names]))
    return content_key(row, names)


def file_content(path: str, form: str, sha256: str) -> str | None:
    """The content key of a CSV or Parquet file, read by DuckDB (None if it
    cannot read it: such a file is linked by its bytes only). Remembered by
    the file's hash (`filehash`), since it depends on the bytes alone."""
    from fuzzpy.engines.filehash import recall_counts, remember_counts

    remembered = recall_counts(sha256, VERSION)
    if remembered is not None and len(remembered) == 1:
        return f"{remembered[0]:064x}"
    key = _read_file_content(path, form)
    if key is not None:
        remember_counts(sha256, VERSION, (int(key, 16),))
    return key


def _read_file_content(path: str, form: str) -> str | None:
    import duckdb

    d = DIALECTS["duckdb"]
    if form == "parquet":
        source = f"read_parquet({d.string(path)})"
    elif form == "csv":
        source = (f"read_csv({d.string(path)}, all_varchar = true, header = true, delim = ',', quote = '\"', "
                  "escape = '\"', null_padding = true, ignore_errors = true)")
    else:
        return None
    con = duckdb.connect()
    try:
        names = [c[0] for c in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        return query_content(d, lambda sql: con.execute(sql).fetchall(), source, names)
    except duckdb.Error:
        return None
    finally:
        con.close()
