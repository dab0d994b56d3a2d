"""The content key of a dataset: what links a file and the same rows given
in memory (a14 F1: `pd.read_csv("people.csv")` under a new name was a new
dataset with a fresh budget while the file's own was spent).

A file's SHA-256 and a frame's fingerprint (`fuzzpy.engines.fingerprint`)
are exact: they tell whether the data changed. The content key is looser on
purpose, so that one table read by different libraries gives one key: every
cell is spelled from its value, whatever its type:

* missing: null, empty or blank text, NaN, and the texts pandas or
  pyarrow.csv read as missing (`NA`, `N/A`, `null`, `None`, `nan`,
  `#N/A N/A`, `1.#IND`, `-1.#QNAN`, ...): `N`;
* a duration: `P` and its length in nanoseconds (exact, whatever its unit);
  a cell of a type DuckDB cannot take: its Python value as text;
* a number (any cell whose trimmed text reads as a double or is hex such
  as `0xee`, and every numeric cell): `D` and its nearest double, exactly
  (sign, binary exponent, 53-bit mantissa, as the fingerprint spells it),
  so `3`, `3.0`, ` 3 ` and the integer 3 are one cell, and so are 2^53 + 1
  and the double pandas makes of it; text with `_` is no number; a whole
  number of 8 digits (`20200105`), of 6 (`311299`, also as text with its
  leading zeros) or of 4 (`2020`, a year) is the date pandas' `parse_dates`
  reads (below); an infinity is the date at that end of DuckDB's range;
* a boolean, or `true`/`false`/`t`/`f`/`yes`/`no`/... in any case: the
  number 1 or 0 (a column of booleans exported as 0/1 is the same cells);
* a date, timestamp or time of day, or text that reads as one in any common
  spelling (`01/05/2020`, `5 Jan 2020`, `10:15 PM`): `T`, the sorted
  multiset of its date's fields modulo 100 without 0s and 1s, `|0,0,0` for
  a date (midnight), or `T|` and its hour, minute and second alone for a
  stamp with a time of day (to the nearest second: pandas gives a bare time
  today's date) -- whatever reader typed the column and whichever order of
  day and month it assumed (`_fields`; docs/semantics.md, "one value,
  every reader's type"); month names and quarters are read (`Jan`,
  `2020Q3`), and `infinity` and the instants beyond DuckDB's range are its
  ends, 9999-12-31 and 0001-01-01;
* a stamp tied to a zone (typed with a time zone, or text whose time is
  followed by an offset, `Z`, a zone's name or abbreviation): `Z` and its
  seconds modulo 900, which its wall time in every zone shares (`_zoned`);
* any other text: `S` and the text, trimmed, without one pair of single
  quotes around it, and a field still in its double quotes read as pandas
  reads it (`"z"tail` is `ztail`); text that is not UTF-8 is read as
  cp1252 (an Excel CSV and its UTF-8 copy are one table).

A column with no name is left out of a row where it holds nothing (a
trailing comma on every line is no column).

Spark spells text as DuckDB does except dates and times (a Spark frame's
text that reads as a date or time keys as text: its session time zone and
its casts differ from DuckDB's; typed date and timestamp columns are keyed
by their instant on every engine).

Which rows: those the loader reads (issue 24), never a sniffing reader's
guess. A CSV file is framed and split by the loader's own rules (a record
per well-formed line of the header's width; every cell its text); a
Parquet file's and a frame's rows are their rows; a line the loader drops
whose closed quote is followed by text (`3,"z"tail`) is read as pandas
reads it (`_tails_closed`). A row with a missing cell, or a cell holding a
line break or a double quote, or a text cell holding a comma, is left out
on every form: readers of one CSV file disagree on such rows (`_kept_row`).
A row whose cell in a column typed `int`, `num` or `bool` (the dataset's
row rules, `Rules`) does not fit that type as the loader reads it is left
out too: the loader drops it (review s30b: `6,abc`, a UCI `?`, `1_000`,
`Infinity` in a `num` column; `_fits`). A new dataset is compared with a
registered file by the keys with every row and by the keys under the
file's rules (`fuzzpy.data.datasets.registration_rules`): leaving rows out
can only link more.

Each kept row's cells, in the order of the columns' (trimmed) names, are
hashed together (each cell length-prefixed) with SHA-256; 8 lanes of 28
bits of the hash are summed over the rows (the order of rows does not
matter: Bellare & Micciancio's AdHash, EUROCRYPT 1997); the key is SHA-256
of the version, the row count, the names and the sums, tagged `c9:`. Two
tables key equal exactly when their multisets of rows are equal (each cell
by value, as above). A second dataset with the key of a registered one is
refused (FZ545). It detects accidents, as the rest of the ledger does; data
changed in any way that shows in a cell is new data.

When. Every cell is hashed, which costs a scan as long as a frame's
fingerprint. Data in memory is keyed when its dataset is registered (it
will not be there later). A file is keyed only when it has to be compared:
when a new dataset (file or frame) has the same column names as a
registered file, or a subset or superset of them, both are keyed on the
columns they share (`only`: a copy with an index or id column added, a
projection, issue 24; `fuzzpy.data.identity.shared_columns`), and a file's
full key is recorded in its registration; every key is remembered by the
file's hash and the columns keyed (`filehash`). A file read
by a new run with no such neighbour in the ledger costs nothing more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fuzzpy.data.cells import INT_LIMIT
from fuzzpy.data.identity import (  # noqa: F401 -- their home is data/
    CONTENT_TAG,
    NO_RULES,
    Rules,
    current,
    pandas_index_columns,
    same_columns,
)
from fuzzpy.engines.fingerprint import LANES, _float_text, _lane, _sha
from fuzzpy.engines.sql import DIALECTS, Dialect
from fuzzpy.support.lazy import lazy

if TYPE_CHECKING:
    from fuzzpy.data.loader import Header

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)

VERSION = "fuzzpy-content-9"  # 9: rows the loader's row rules drop under the dataset's types left out (s30b)
# 8: a stamp with a time by its time only, zoned ones modulo 15 minutes, years and
# 6-digit dates, month names, quarters, infinities, cp1252 text, single quotes (s29)
# 7: dates by their fields in any spelling, integers by their nearest double (s28b)
TAG = CONTENT_TAG  # a key of this version
#: Texts keyed as missing, in lower case: every spelling in pandas'
#: read_csv default `na_values` and pyarrow.csv's default `null_values`
#: (both read such a cell as missing), and `nat`, `none`.
_MISSING_WORDS = ("na", "n/a", "nan", "-nan", "null", "none", "<na>", "#n/a", "#na", "nat",
                  "#n/a n/a", "-1.#ind", "1.#ind", "-1.#qnan", "1.#qnan")

Rows = Callable[[str], list[tuple]]


def column_kind(arrow_type: pa.DataType) -> str:
    """How a column's cells are spelled: `int`, `number`, `bool`, `instant`
    (a date or timestamp: its instant), `zoned` (a timestamp with a time
    zone), `clock` (a time of day) or `text`."""
    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_integer(arrow_type):
        return "int"
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return "number"
    if pa.types.is_boolean(arrow_type):
        return "bool"
    if pa.types.is_timestamp(arrow_type) and arrow_type.tz:
        return "zoned"
    if pa.types.is_timestamp(arrow_type) or pa.types.is_date(arrow_type):
        return "instant"
    if pa.types.is_time(arrow_type):
        return "clock"
    return "text"


#: Microseconds per unit of an Arrow temporal column's raw storage.
_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}
_DAY_MICROS = 86_400_000_000
_OFFSET = r"[0-9]:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?\s*(Z|z|UTC|[+-][0-9]{2}(:?[0-9]{2})?)$"
#: Texts read as booleans by some reader (DuckDB's read_csv reads T/F, t/f,
#: yes/no as booleans): spelled as the numbers 1 and 0 (linking more).
_TRUE_WORDS = ("true", "t", "yes", "y", "on")
_FALSE_WORDS = ("false", "f", "no", "n", "off")


#: The largest finite double: beyond it, an infinity.
_DOUBLE_MAX = "1.7976931348623157e308"
#: The date fields `infinity` and `-infinity` are keyed as (s29): DuckDB reads that text as a DATE or
#: TIMESTAMP at the end of its range, which Python and pandas read as 9999-12-31 and 0001-01-01, and
#: pandas and DuckDB read `inf` in a number column as the double infinity: one cell in every form.
_LATEST = ["9999", "12", "31"]
_EARLIEST = ["1", "1", "1"]
#: Seconds from 1970 of 9999-12-31 00:00 and of 0001-01-01 00:00 (UTC): an instant at or after the
#: first is keyed as 9999-12-31 (DuckDB's `infinity`), one before the second as 0001-01-01.
_LATEST_SECONDS = 253_402_214_400
_EARLIEST_SECONDS = -62_135_596_800
#: Every UTC offset in use is a whole number of quarter hours: an instant tied to a zone is keyed by
#: its seconds modulo this, which its wall time in every zone shares (s29).
_ZONE_STEP = 900


def _number(d: Dialect, x: str, text_type: str) -> str:
    """A double's spelling: `N` (null, NaN); a whole number of 8 digits read
    as a date `yyyymmdd` (pandas' `parse_dates` reads `20200105` as
    2020-01-05) spelled as that date's fields (`_fields`), whatever its
    type; else `D` and its bits. Every integer is keyed by its nearest
    double, so an integer beyond 2^53 and the double a reader makes of it
    (pandas' float64 for an int column with a missing cell, pyarrow's double
    for one beyond int64) are one cell (a review, s28b F3)."""
    whole = f"CAST({x} AS BIGINT)"
    groups = [f"(({whole} {_div(d)} 10000) % 100)", f"(({whole} {_div(d)} 100) % 100)", f"({whole} % 100)"]
    date = _fields(d, groups)
    return (f"(CASE WHEN {x} IS NULL OR isnan({x}) THEN 'N' "
            f"WHEN {x} > {_DOUBLE_MAX} THEN {_fields(d, _LATEST)} WHEN {x} < -{_DOUBLE_MAX} THEN {_fields(d, _EARLIEST)} "
            f"WHEN {x} >= 10000101.0 AND {x} <= 99991231.0 AND {x} = floor({x}) THEN {date} "
            # pandas' `parse_dates` reads `2020` as 2020-01-01 and `311299` as 1999-12-31 (s29)
            f"WHEN {x} >= 1000.0 AND {x} <= 9999.0 AND {x} = floor({x}) THEN {_fields(d, [whole])} "
            f"WHEN {x} >= 100000.0 AND {x} <= 999999.0 AND {x} = floor({x}) THEN {date} "
            f"ELSE concat('D', {_float_text(d, x, text_type)}) END)")


def _integer(d: Dialect, i: str, text_type: str) -> str:
    """An integer's spelling: as its nearest double (`_number`)."""
    return f"(CASE WHEN {i} IS NULL THEN 'N' ELSE {_number(d, f'CAST({i} AS DOUBLE)', text_type)} END)"


def _let(d: Dialect, value: str, name: str, body: str) -> str:
    """`body` with `name` bound to `value`, computed once (a one-element
    list mapped by a lambda), not once per mention of `name`."""
    if d.name == "spark":
        return f"(transform(array({value}), {name} -> {body})[0])"
    return f"(list_transform([{value}], lambda {name}: {body})[1])"


def _div(d: Dialect) -> str:
    """Integer division (toward zero) of the dialect."""
    return "div" if d.name == "spark" else "//"


def _floor_div(d: Dialect, a: str, b: int) -> str:
    """`a` divided by the positive `b`, rounded down (also for a negative `a`)."""
    return f"((({a}) - (((({a}) % {b}) + {b}) % {b})) {_div(d)} {b})"


def _fields(d: Dialect, date: list[str] | str, clock: list[str] | None = None) -> str:
    """A date or time's spelling-free fingerprint (a review, s28b F1: `01/05/2020`,
    `05.01.2020`, `Jan 5 2020` and the DATE a reader made of each were other
    cells): `T`, the sorted multiset of its date's fields (year, month, day:
    a list, or a list expression), each taken modulo 100 (a two-digit year)
    and those equal to 0 or 1 left out (a field a spelling omits reads as 1:
    `Jan 2020` is 2020-01-01), then `|` and its time of day, hour, minute and
    second (0 where the spelling has none). The order of the date's fields
    is not kept, so every order of day, month and year a reader may assume
    is the same cell. Coarser than a value: distinct dates may share it,
    which links more, never less."""
    if isinstance(date, list):
        listed = f"array({', '.join(date)})" if d.name == "spark" else f"[{', '.join(date)}]"
    else:
        listed = date
    text_type = "STRING" if d.name == "spark" else "VARCHAR"
    if d.name == "spark":
        kept = f"array_join(array_sort(filter(transform({listed}, v -> pmod(v, 100)), v -> v > 1)), ',')"
    else:
        kept = ("array_to_string(list_sort(list_filter(list_transform("
                f"{listed}, lambda v: ((v % 100) + 100) % 100), lambda v: v > 1)), ',')")
    if not clock:
        return f"concat('T', {kept}, '|0,0,0')"
    time = ", ',', ".join(f"CAST({part} AS {text_type})" for part in clock)
    midnight = " AND ".join(f"({part}) = 0" for part in clock)
    # a stamp with a time of day is keyed by its time alone (s29): pandas' `parse_dates` gives a bare
    # time (`12:30`) the day it runs, and a month name or `10 PM` the year 1; a date (midnight) keeps
    # its fields
    return f"(CASE WHEN {midnight} THEN concat('T', {kept}, '|0,0,0') ELSE concat('T|', {time}) END)"


def _day_clock(d: Dialect, seconds: str) -> list[str]:
    """Hour, minute and second of `seconds` since midnight (0 <= seconds <=
    86400: a time rounded up to midnight is 00:00:00)."""
    s = f"(CAST({seconds} AS BIGINT) % 86400)"
    return [f"({s} {_div(d)} 3600)", f"(({s} {_div(d)} 60) % 60)", f"({s} % 60)"]


def _instant(d: Dialect, seconds: str) -> str:
    """An instant (`seconds` since the epoch, whole: `_typed_seconds`) as its
    fields in UTC: date and time of day, sub-seconds left out (a reader that
    keeps nanoseconds and one that keeps microseconds agree on them)."""
    if d.name == "spark":
        stamp = "timestamp_seconds(CAST(fz_s AS BIGINT))"
    else:
        stamp = "make_timestamp(CAST(fz_s AS BIGINT) * 1000000)"
    date = [f"CAST({f}(fz_t) AS BIGINT)" for f in ("year", "month", "day")]
    clock = [f"CAST({f}(fz_t) AS BIGINT)" for f in ("hour", "minute")] + ["CAST(floor(second(fz_t)) AS BIGINT)"]
    spelled = (f"(CASE WHEN fz_s IS NULL THEN 'N' WHEN fz_s >= {_LATEST_SECONDS} THEN {_fields(d, _LATEST)} "
               f"WHEN fz_s < {_EARLIEST_SECONDS} THEN {_fields(d, _EARLIEST)} "
               f"ELSE {_let(d, stamp, 'fz_t', _fields(d, date, clock))} END)")
    return _let(d, seconds, "fz_s", spelled)


def _zoned(d: Dialect, seconds: str) -> str:
    """An instant tied to a zone (a typed stamp with a time zone, text with
    an offset or a zone's name): its seconds modulo a quarter hour, which its
    wall time in every zone shares (s29: DuckDB reads `10:00 EST` or
    `America/New_York` as a TIMESTAMPTZ, in UTC; pandas keeps the offset and
    other readers the text). Beyond DuckDB's range: as `_instant`."""
    step = _ZONE_STEP
    spelled = (f"(CASE WHEN fz_s IS NULL THEN 'N' WHEN fz_s >= {_LATEST_SECONDS} OR fz_s < {_EARLIEST_SECONDS} "
               f"THEN {_instant(d, 'fz_s')} "
               f"ELSE concat('Z', CAST(((fz_s % {step}) + {step}) % {step} AS {'STRING' if d.name == 'spark' else 'VARCHAR'})) END)")
    return _let(d, seconds, "fz_s", spelled)


def _clock(d: Dialect, seconds: str) -> str:
    """A time of day (`seconds` since midnight) as its fields: no date, its hour, minute, second."""
    return f"(CASE WHEN {seconds} IS NULL THEN 'N' ELSE {_fields(d, [], _day_clock(d, seconds))} END)"


def _temporal(prefix: str, micros: str, text_type: str) -> str:
    return f"(CASE WHEN {micros} IS NULL THEN 'N' ELSE concat('{prefix}', CAST({micros} AS {text_type})) END)"


def _typed_seconds(d: Dialect, column: str, kind: str) -> str:
    """A date, timestamp or time column's value in whole seconds (since the
    epoch, or since midnight), rounded to the nearest (half up): readers keep
    a stamp's digits below the microsecond otherwise (pyarrow's cast to
    microseconds truncates toward zero, DuckDB's text cast drops the digits:
    before 1970 one is a second later than the other), and differ by less
    than a microsecond, which moves the nearest second only for a value
    within a microsecond of a half second (a review, s28b F1).
    `instant:M:D`/`clock:M:D` is a column of raw Arrow storage (integers,
    `table_content`): times M, divided by D, in microseconds, which no cell
    can make fail."""
    if ":" in kind:
        _, times, divided = kind.split(":")
        unit = 1_000_000 * int(divided)
        return _floor_div(d, f"(CAST({column} AS HUGEINT) * {times} + {unit // 2})", unit)
    if d.name == "spark" and kind == "instant-date":  # its midnight in UTC, whatever the session's zone
        return f"(CAST(unix_date({column}) AS BIGINT) * 86400)"
    if d.name == "spark":
        return _micros_to_seconds(d, f"unix_micros(CAST({column} AS TIMESTAMP))")
    seconds = _micros_to_seconds(d, f"epoch_us({column})")
    if kind == "clock":
        return seconds
    # DuckDB's `infinity` dates and stamps have no epoch: the ends of the range (`_instant`, s29)
    return (f"(CASE WHEN {column} IS NULL OR NOT isinf(CAST({column} AS TIMESTAMP)) THEN {seconds} "
            f"WHEN starts_with(CAST({column} AS VARCHAR), '-') THEN {_EARLIEST_SECONDS - 1} "
            f"ELSE {_LATEST_SECONDS} END)")


def _micros_to_seconds(d: Dialect, micros: str) -> str:
    """Microseconds as whole seconds, rounded to the nearest (half up)."""
    return _floor_div(d, f"({micros} + 500000)", 1_000_000)


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


def _unquoted(d: Dialect, text: str) -> str:
    """Text without one pair of single quotes around it (s29: DuckDB's
    sniffer takes `'` for a file's quote when its cells are single-quoted,
    and reads `'x'` as `x`; pandas with `quotechar="'"` too), and a closed
    double-quoted value followed by text read as pandas reads it
    (`"z"tail` is `ztail`)."""
    back = "$1" if d.name == "spark" else "\\1"
    single = f"regexp_replace({text}, '^''(.*)''$', '{back}')"
    # a field still in its double quotes (DuckDB reads a file with a bad line with no quote character:
    # `"Ann"`, `"z"tail`): its value as pandas and pyarrow read it, `Ann`, `ztail` (s29)
    quoted = "'^\"((?:[^\"]|\"\")*)\"([^\"]*)$'"
    value = f"concat(replace(regexp_extract(fz_u, {quoted}, 1), '\"\"', '\"'), regexp_extract(fz_u, {quoted}, 2))"
    body = f"(CASE WHEN {'fz_u RLIKE' if d.name == 'spark' else 'regexp_matches(fz_u,'} {quoted}{'' if d.name == 'spark' else ')'} THEN {value} ELSE fz_u END)"
    return _let(d, single, "fz_u", body)


#: The kinds of `_layers` whose cell is a typed value `x{i}` (any other is text, `t{i}`).
_TYPED_KINDS = ("int", "number", "bool", "span:", "instant", "clock", "zoned")


def _layers(d: Dialect, columns: list[tuple[str, str]]) -> tuple[list[str], list[str], list[str]]:
    """A cell's spelling, in three layers of one query so that each
    expression is computed once per cell: (1) the cell as a number (`x`,
    an integer `i`) or its trimmed text (`t`); (2) a text's values: as an
    integer, a double, its lower case, an instant, a time of day; (3) the
    spelling (`c`). Text that reads as a number is that number (a column of
    numbers with a word among them is text in one library and numbers in
    another); text that reads as a date or timestamp is its instant, as a
    time its time of day (a reader that types them keys the same)."""
    text_type = "STRING" if d.name == "spark" else "VARCHAR"
    first: list[str] = []
    second: list[str] = []
    third: list[str] = []
    for i, (column, kind) in enumerate(columns):
        x = f"x{i}"
        if kind == "int":
            first.append(f"CAST({column} AS DECIMAL(38, 0)) AS {x}")
            second.append(x)
            third.append(f"{_integer(d, x, text_type)} AS c{i}")
        elif kind == "number":
            first.append(f"CAST({column} AS DOUBLE) AS {x}")
            second.append(x)
            third.append(f"{_number(d, x, text_type)} AS c{i}")
        elif kind == "bool":  # as the numbers 1 and 0 (a16/a18: booleans exported as 0/1 are the same cells)
            first.append(f"(CASE WHEN {column} IS NULL THEN NULL WHEN {column} THEN 1.0 ELSE 0.0 END) AS {x}")
            second.append(x)
            third.append(f"{_number(d, x, text_type)} AS c{i}")
        elif kind.startswith("span:"):  # a duration: `P` and its length in nanoseconds, exactly
            first.append(f"(CAST({column} AS HUGEINT) * {kind.split(':')[1]}) AS {x}")
            second.append(x)
            third.append(f"{_temporal('P', x, text_type)} AS c{i}")
        elif kind.startswith(("instant", "clock", "zoned")):
            first.append(f"{_typed_seconds(d, column, kind)} AS {x}")
            second.append(x)
            spell = _instant if kind.startswith("instant") else _zoned if kind.startswith("zoned") else _clock
            third.append(f"{spell(d, x)} AS c{i}")
        else:
            first.append(f"{_trimmed(d, f'CAST({column} AS {text_type})')} AS t{i}")
            second.extend(_text_values(d, i))
            third.append(f"{_text_spelling(d, i, text_type)} AS c{i}")
    return first, second, third


def _text_values(d: Dialect, i: str | int) -> list[str]:
    t = f"t{i}"
    try_cast = "try_cast" if d.name == "spark" else "TRY_CAST"
    # `3_78` is no number to the loader (its row is dropped): text here (DuckDB's cast reads 378)
    values = [t, f"(CASE WHEN instr({t}, '_') > 0 THEN NULL ELSE {try_cast}({t} AS DOUBLE) END) AS x{i}",
              f"lower({t}) AS l{i}"]
    if d.name == "spark":  # integers and hex as DuckDB reads them; no temporal text (see the module's notes)
        return values + [
            f"(CASE WHEN {t} RLIKE '^[+-]?[0-9]+$' THEN try_cast({t} AS DECIMAL(38, 0)) "
            f"WHEN {t} RLIKE '^0[xX][0-9a-fA-F]{{1,31}}$' THEN try_cast(conv(substr({t}, 3), 16, 10) "
            f"AS DECIMAL(38, 0)) END) AS i{i}"]
    integer = r"[+-]?([0-9]+|0[xX][0-9a-fA-F]+)"  # hex: pyarrow's and DuckDB's readers read 0xee as 238
    return values + [
        f"(CASE WHEN regexp_full_match({t}, '{integer}') THEN TRY_CAST({t} AS HUGEINT) END) AS i{i}",
        # an offset is read as one (the instant); without, the wall time read as UTC, as Arrow stores it
        # DuckDB's cast ignores a trailing AM/PM (`10:15 PM` read as 10:15): such text is read by its fields
        f"(CASE WHEN regexp_matches({t}, '[aApP]\\.?[mM]\\.?$') THEN NULL "
        f"WHEN regexp_matches({t}, '{_OFFSET}') THEN epoch_us(TRY_CAST({t} AS TIMESTAMPTZ)) "
        f"ELSE epoch_us(TRY_CAST({t} AS TIMESTAMP)) END) AS m{i}",
        f"(CASE WHEN regexp_matches({t}, '[aApP]\\.?[mM]\\.?$') THEN NULL "
        f"ELSE epoch_us(TRY_CAST({t} AS TIME)) END) AS h{i}",
        f"(CASE WHEN regexp_matches({t}, '{_ZONE}') THEN {_zone_seconds(t)} END) AS z{i}",
        f"(CASE WHEN length({t}) > 64 OR NOT regexp_matches(lower({t}), '[0-9]|{_MONTH_WORD}') THEN NULL "
        f"WHEN NOT regexp_matches({t}, '[a-zA-Z]') THEN {t} "  # no month name to read: as it is
        f"WHEN regexp_full_match(lower({t}), '{_DATE_WORDS}') THEN {_date_words(f'lower({t})')} END) AS g{i}"]


#: Text that names a zone after a time of day (an offset, `Z`, `UTC`, an IANA name such as
#: `America/New_York`, an abbreviation such as `EST`): keyed as a zoned instant (`_zoned`), from its
#: wall time, in any spelling of its date (s29).
_ZONE = (r"[0-9]:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?\s*([aApP]\.?[mM]\.?\s*)?"
         r"(Z|z|UTC|GMT|[+-][0-9]{2}(:?[0-9]{2})?|[A-Za-z]+/[A-Za-z_]+(/[A-Za-z_]+)?|[A-Z]{3,5})$")
#: A time of day in text: hour, minute, second, the first digit of its fraction.
_WALL = r"([0-9]{1,2}):([0-9]{2})(:([0-9]{2})([.,]([0-9]))?)?"
#: A month's name or abbreviation somewhere in a text (a text without a digit may still be a date).
_MONTH_WORD = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"


def _zone_seconds(t: str) -> str:
    """A zoned text's wall time in seconds modulo a quarter hour (`_zoned`):
    its minute and second, the second rounded half up as a typed stamp's is."""
    minute = f"TRY_CAST(regexp_extract({t}, '{_WALL}', 2) AS INTEGER)"
    second = f"coalesce(TRY_CAST(regexp_extract({t}, '{_WALL}', 4) AS INTEGER), 0)"
    up = f"(CASE WHEN regexp_extract({t}, '{_WALL}', 6) >= '5' THEN 1 ELSE 0 END)"
    return f"(({minute} * 60 + {second} + {up}) % {_ZONE_STEP})"


#: Text that is a plain number (keyed as one): no date's fields are read from it.
_PLAIN_NUMBER = r"[+-]?[0-9]*\.?[0-9]*([eE][+-]?[0-9]+)?"
#: Month names as some reader reads them (pandas' `parse_dates`, dateutil):
#: replaced by their numbers before a text's fields are read.
_MONTHS = ("jan(uary)?", "feb(ruary)?", "mar(ch)?", "apr(il)?", "may", "june?", "july?", "aug(ust)?",
           "sep(t(ember)?)?", "oct(ober)?", "nov(ember)?", "dec(ember)?")
_WEEKDAYS = r"\b(mon(day)?|tue(s(day)?)?|wed(nesday)?|thu(r(s(day)?)?)?|fri(day)?|sat(urday)?|sun(day)?)\b\.?"
#: The spelling of a date or time with words: digits, separators, month
#: and weekday names, ordinal suffixes, AM/PM (a text with other words, such
#: as `id123x`, is read no further).
_DATE_WORDS = (r"([0-9 ,/.:-]|t|q|[ap]\.?m\.?|st|nd|rd|th|" + "|".join(_MONTHS) + "|"
               + _WEEKDAYS.replace(r"\b", "").removesuffix(r"\.?") + ")*")
#: What is left of a date or time in any common spelling once month names
#: are numbers and weekdays gone: digit groups, separators, `t` (ISO's),
#: and an AM/PM mark.
_LOOSE_DATE = r"[0-9 ,/.:t-]*[0-9][0-9 ,/.:t-]*([ap]\.?m\.?)?"


def _date_words(lowered: str) -> str:
    """Lower-cased text with month names as numbers, weekdays and ordinal
    suffixes (`5th`) removed: what
    `_loose_fields` reads a date's fields from."""
    text = lowered
    for quarter in range(1, 5):  # `2020Q2`: pandas reads its first day, 2020-04-01 (s29)
        text = f"regexp_replace({text}, '([0-9]) ?q{quarter}\\b', '\\1 {3 * quarter - 2} ', 'g')"
    for number, month in enumerate(_MONTHS, start=1):
        text = f"regexp_replace({text}, '\\b{month}\\b\\.?', ' {number} ', 'g')"
    text = f"regexp_replace({text}, '{_WEEKDAYS}', ' ', 'g')"
    text = f"regexp_replace({text}, '([0-9])(st|nd|rd|th)\\b', '\\1', 'g')"
    return f"trim({text})"


def _loose_fields(d: Dialect, g: str) -> str:
    """A text's date and time fields (`_fields`): its time, the groups joined
    by `:` (`10:15`, `10:15:30`) or before AM/PM (`10 PM`, `10:15 pm`: the
    hour moved to the afternoon, 12 AM to 0); its date, every other digit
    group (`01/05/2020`, `05.01.2020`, `5 January 2020`), in any order."""
    ampm, pm = "fz_a", "fz_m"  # bound once (`_let`, below)
    seconds = "(:[0-9]{2}([.,][0-9]+)?)?"
    part = (f"(CASE WHEN {ampm} THEN regexp_extract({g}, '[0-9]{{1,2}}(:[0-9]{{2}}{seconds})? ?[ap]\\.?m\\.?$', 0) "
            f"ELSE regexp_extract({g}, '[0-9]{{1,2}}:[0-9]{{2}}{seconds}', 0) END)")
    # a fraction of a second of .5 or more rounds the second up, as `_typed_seconds` rounds a typed stamp
    rounded = "(CASE WHEN regexp_matches(fz_p, '[.,][5-9]') THEN 1 ELSE 0 END)"
    hour = (f"(CASE WHEN {pm} AND fz_h < 12 THEN fz_h + 12 WHEN {ampm} AND NOT {pm} AND fz_h = 12 THEN 0 "
            f"ELSE fz_h END)")
    clock = [hour, "coalesce(TRY_CAST(fz_g[2] AS INTEGER), 0)",
             f"(coalesce(TRY_CAST(fz_g[3] AS INTEGER), 0) + {rounded})"]
    rest = f"(CASE WHEN fz_p = '' THEN {g} ELSE replace({g}, fz_p, ' ') END)"
    date = f"list_transform(regexp_extract_all({rest}, '[0-9]+'), lambda v: CAST(right(v, 2) AS INTEGER))"
    spelled = _let(d, "coalesce(TRY_CAST(fz_g[1] AS INTEGER), 0)", "fz_h", _fields(d, date, clock))
    spelled = _let(d, part, "fz_p", _let(d, "regexp_extract_all(fz_p, '[0-9]+')", "fz_g", spelled))
    spelled = _let(d, f"regexp_matches({g}, 'p\\.?m\\.?$')", "fz_m", spelled)
    return _let(d, f"regexp_matches({g}, '[ap]\\.?m\\.?$')", "fz_a", spelled)


def _text_spelling(d: Dialect, i: int, text_type: str) -> str:
    t, x, low = f"t{i}", f"x{i}", f"l{i}"
    missing = ", ".join(d.string(word) for word in _MISSING_WORDS)
    true = ", ".join(d.string(word) for word in _TRUE_WORDS)
    false = ", ".join(d.string(word) for word in _FALSE_WORDS)
    six = f"{t} RLIKE '^[0-9]{{6}}$'" if d.name == "spark" else f"regexp_full_match({t}, '[0-9]{{6}}')"
    pairs = [f"CAST(substr({t}, {k}, 2) AS INTEGER)" for k in (1, 3, 5)]
    branches = [f"WHEN {t} IS NULL OR {t} = '' OR {low} IN ({missing}) THEN 'N'",
                # six digits, leading zeros kept (`010203`): pandas reads a date of three pairs (s29)
                f"WHEN {six} THEN {_fields(d, pairs)}",
                f"WHEN {x} IS NOT NULL THEN {_number(d, x, text_type)}",
                f"WHEN i{i} IS NOT NULL THEN {_integer(d, f'i{i}', text_type)}",
                f"WHEN {low} IN ({true}) THEN {_number(d, '1.0', text_type)}",
                f"WHEN {low} IN ({false}) THEN {_number(d, '0.0', text_type)}"]
    if d.name != "spark":
        branches.append(f"WHEN z{i} IS NOT NULL THEN concat('Z', CAST(z{i} AS {text_type}))")
        branches.append(f"WHEN m{i} IS NOT NULL THEN {_instant(d, _micros_to_seconds(d, f'm{i}'))}")
        branches.append(f"WHEN h{i} IS NOT NULL THEN {_clock(d, _micros_to_seconds(d, f'h{i}'))}")
        g = f"g{i}"
        # one group is a date with a word (`Jan`, `5th`, `10 PM`: pandas reads the year 1, s29)
        loose = (f"regexp_full_match({g}, '{_LOOSE_DATE}') "
                 f"AND (length(regexp_extract_all({g}, '[0-9]+')) >= 2 OR regexp_matches({t}, '[a-zA-Z]'))")
        branches.append(f"WHEN {g} IS NOT NULL AND {loose} THEN {_loose_fields(d, g)}")
    return f"(CASE {' '.join(branches)} ELSE concat('S', {t}) END)"


def _length_prefixed(d: Dialect, cells: list[str], blank: frozenset[int] = frozenset()) -> str:
    """A row's cells as one text that no other row spells: each cell's
    length, a colon, the cell. A cell of a column with no name (`blank`: a
    trailing comma on every line) is left out when missing and marked `E`
    otherwise: such a column with no value is no column."""
    text_type = "STRING" if d.name == "spark" else "VARCHAR"
    parts = []
    for i, c in enumerate(cells):
        spelled = f"concat(CAST(length({c}) AS {text_type}), ':', {c})"
        parts.append(f"(CASE WHEN {c} = 'N' THEN '' ELSE concat('E', {spelled}) END)" if i in blank else spelled)
    return f"concat({', '.join(parts)})"


#: Of two types given one column, the stricter (whose cells fit the other too, or fit neither).
_STRICTER = ("int", "bool", "num")


def rule_positions(rules: Rules, ordered: list[str]) -> dict[int, str]:
    """The positions, in the key's order (`ordered`: the names keyed), of the
    columns `rules` types, with the type (the stricter of two)."""
    typed: dict[str, str] = {}
    for name, kind in sorted(rules, key=lambda rule: _STRICTER.index(rule[1])):
        typed.setdefault(name, kind)
    return {k: typed[name.strip()] for k, name in enumerate(ordered) if name.strip() in typed}


def blank_positions(names: list[str], order: list[int]) -> frozenset[int]:
    """The positions, in the key's order, of the columns with no name."""
    return frozenset(k for k, i in enumerate(order) if not names[i].strip())


def content_sql(d: Dialect, source: str, columns: list[tuple[str, str]],
                blank: frozenset[int] = frozenset(), rules: dict[int, str] | None = None) -> str:
    """One query over `source`: the number of rows keyed, then 8 lane sums of
    the rows' hashes (`columns`: (quoted name, kind), in the key's order;
    `blank`: the positions of those with no name).
    Each cell is spelled once, in inner queries (`_layers`); the rows
    that readers of one CSV file disagree on are left out (`_kept_row`);
    every other row is hashed whole, its cells in order. `rules`: the
    positions of the columns typed `int`, `num` or `bool`, with the type: a
    row whose cell there does not fit it is left out too (`_fits`)."""
    rules = rules or {}
    if not columns:
        return f"SELECT count(*) FROM {source}"
    first, second, third = _layers(d, columns)
    # text in quotes (`_unquoted`), read in a layer of its own: only cells starting with a quote
    quotes = [f"(CASE WHEN substr(t{i}, 1, 1) IN ('\"', '''') THEN {_unquoted(d, f't{i}')} ELSE t{i} END) AS t{i}"
              if not kind.startswith(_TYPED_KINDS) else f"x{i}" for i, (_, kind) in enumerate(columns)]
    # whether a cell fits its column's type, judged before quotes are read (`'3'` fits no number)
    fits = [f"{_fits(d, i, kind, rules[i])} AS ok{i}" for i, (_, kind) in enumerate(columns) if i in rules]
    first = [f"{', '.join(quotes + fits)} FROM (SELECT {', '.join(first)}"]
    second = second + [f"ok{i}" for i in sorted(rules)]
    third = third + [f"ok{i}" for i in sorted(rules)]
    cells = [f"c{i}" for i in range(len(columns))]
    present = _kept_row(cells, blank)
    if rules:
        present = f"({present}) AND {' AND '.join(f'coalesce(ok{i}, false)' for i in sorted(rules))}"
    spelled = (f"SELECT {', '.join(third)} FROM (SELECT {', '.join(second)} FROM "
               f"(SELECT {', '.join(first)} FROM {source}) AS cells) AS unquoted) AS valued")
    rows = (f"SELECT {_length_prefixed(d, cells, blank)} AS r, CASE WHEN {present} THEN 1 ELSE 0 END AS k "
            f"FROM ({spelled}) AS spelled")
    digest = _sha(d, "r")
    hashed = ", ".join(f"{_lane(d, digest, lane)} AS l{lane}" for lane in range(LANES))
    kept = ", ".join(f"CAST(sum(CASE WHEN k = 1 THEN l{lane} ELSE 0 END) AS BIGINT)" for lane in range(LANES))
    every = ", ".join(f"CAST(sum(l{lane}) AS BIGINT)" for lane in range(LANES))
    # the kept rows' count and lanes, then every row's (`content_key` picks)
    return (f"SELECT CAST(sum(k) AS BIGINT), {kept}, count(*), {every} "
            f"FROM (SELECT k, {hashed} FROM ({rows}) AS marked) AS lanes")


#: The loader's spellings of a number and an integer (`fuzzpy.data.cells`).
_NUM_SPELLING = "[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?"
_INT_SPELLING = "[+-]?[0-9]+"
_INT_MAX = INT_LIMIT  # the loader's int range (`data.cells`)
#: The characters Python trims that the loader does not: a cell holding one fits no number.
_UNTRIMMED = "concat('[', chr(28), '-', chr(31), ']')"


def _fits(d: Dialect, i: int, kind: str, rule: str) -> str:
    """Whether the cell of column `i` (of `_layers`' `kind`) fits the type
    `rule` (`int`, `num`, `bool`) as the loader reads it
    (`fuzzpy.data.cells`): a row whose cell does not is dropped by the
    loader's row rules, and left out of the key (review s30b: `6,abc` or a
    UCI `?` in a `num` column). Judged at least as strictly as the loader
    (a row the loader reads may be left out, never one it drops kept):
    leaving a row out can only link more. A missing cell is keyed `N` and
    its row left out already."""
    x = f"x{i}"
    if kind.startswith(_TYPED_KINDS):
        if kind not in ("int", "number", "bool"):
            return "false"  # a date, time or duration is no number to the loader
        if rule == "bool":
            return f"({x} IN (0, 1))" if kind in ("int", "bool") else "false"
        finite = f"({x} BETWEEN -{_DOUBLE_MAX} AND {_DOUBLE_MAX})"
        if rule == "num":
            return finite
        whole = f"({x} = floor({x}))" if kind == "number" else "true"
        return f"({finite} AND {whole} AND {x} BETWEEN -{_INT_MAX} AND {_INT_MAX})"
    t = f"t{i}"
    if d.name == "spark":
        def matches(pattern: str) -> str:
            return f"({t} RLIKE '^{pattern}$')"
        plain = f"NOT ({t} RLIKE {_UNTRIMMED})"
    else:
        def matches(pattern: str) -> str:
            return f"regexp_full_match({t}, '{pattern}')"
        plain = f"NOT regexp_matches({t}, {_UNTRIMMED})"
    if rule == "bool":
        return f"({plain} AND lower({t}) IN ('true', 'false', '1', '0'))"
    try_cast = "try_cast" if d.name == "spark" else "TRY_CAST"
    if rule == "num":
        value = f"{try_cast}({t} AS DOUBLE)"
        return f"({plain} AND {matches(_NUM_SPELLING)} AND {value} BETWEEN -{_DOUBLE_MAX} AND {_DOUBLE_MAX})"
    value = f"{try_cast}({t} AS DECIMAL(38, 0))"
    return (f"({plain} AND {matches(_INT_SPELLING)} AND length({t}) <= 30 "
            f"AND {value} BETWEEN -{_INT_MAX} AND {_INT_MAX})")


def _kept_row(cells: list[str], blank: frozenset[int]) -> str:
    """Which rows are keyed: those with a value in every named column, no
    cell holding a line break or a double quote, and no text cell holding a
    comma (s29: a single-quoted `'y, z'`). The others are rows that
    the readers of one CSV file read differently (a review, s28b F2): the
    loader drops a line whose quoted value spans lines (`3,"multi` and the
    line after it) and a short line (`3` under `a,b`), while pandas, polars,
    pyarrow and DuckDB read the first as one row holding a line break and
    pandas and polars the second as a row with a missing cell; a quote left
    in a cell (`line"`, DuckDB's `"z"tail`) marks what is left of such a
    line. Leaving them out on every form (file, Parquet, frame) links the
    forms; tables that differ only in such rows link too (more links, never
    fewer). With no named column, a row with any value is kept."""
    named = [c for i, c in enumerate(cells) if i not in blank]
    if not named:
        return " OR ".join(f"{c} <> 'N'" for c in cells)
    # text with a comma: a single-quoted `'y, z'` is a ragged line to the loader and a cell to a reader
    # that takes `'` for the quote (s29); only text (`S`) is spelled with the cell's own commas
    clean = " AND ".join(f"instr({c}, chr(10)) = 0 AND instr({c}, chr(13)) = 0 AND instr({c}, '\"') = 0 "
                         f"AND NOT (substr({c}, 1, 1) = 'S' AND instr({c}, ',') > 0)" for c in cells)
    present = " AND ".join(f"{c} <> 'N'" for c in named)
    return f"({present}) AND {clean}"


def content_key(row: tuple, names: list[str]) -> str:
    """The key from `content_sql`'s row, for columns named `names` (in the
    order the query spelled them; a column with no name is not named)."""
    count, lanes = int(row[0] or 0), [int(v or 0) for v in row[1: 1 + LANES]]
    if count == 0 and len(row) >= 2 + 2 * LANES and int(row[1 + LANES] or 0) > 0:
        # no row is kept (every row has a missing cell, a line break or a quote): keyed
        # by every row, so that two such tables do not both key as the empty table (a
        # review, s28g: different sparse surveys refused FZ545, their owner unable to
        # register the second; whether a file was refused told whether a row was complete)
        count, lanes = int(row[1 + LANES]), [int(v or 0) for v in row[2 + LANES: 2 + 2 * LANES]]
    text = (f"{VERSION}\n{count}\n" + "".join(f"{n.strip()}\n" for n in names if n.strip())
            + " ".join(map(str, lanes)))
    return TAG + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def key_order(names: list[str]) -> list[int]:
    """The positions of the columns in the key's order: by trimmed name, so
    that the order of a table's columns does not matter."""
    return sorted(range(len(names)), key=lambda i: (names[i].strip(), i))


def kept_column(name: str, only: frozenset[str] | None) -> bool:
    """Whether a column is keyed: every column (`only` None, the full key),
    or one of the named columns `only` (trimmed names: the key restricted to
    the columns two tables share, `fuzzpy.data.identity.shared_columns`;
    a column with no name is then never keyed)."""
    return only is None or name.strip() in only


def query_content(d: Dialect, rows: Rows, source: str, schema: pa.Schema,
                  index: frozenset[str] = frozenset(), only: frozenset[str] | None = None,
                  rules: Rules = NO_RULES) -> str:
    """The content key of `source`, whose columns are `schema`'s, less the
    columns that hold a pandas frame's index (`index`, and those `schema`'s
    own metadata names: `pandas_index_columns`); restricted to `only`'s
    columns when given (`kept_column`)."""
    dropped = index | pandas_index_columns(schema)
    order = [i for i in key_order(list(schema.names))
             if schema.names[i] not in dropped and kept_column(schema.names[i], only)]
    columns = [(d.ident(schema.names[i]), _sql_kind(schema.types[i])) for i in order]
    (row,) = rows(content_sql(d, source, columns, blank_positions(list(schema.names), order),
                              rule_positions(rules, [schema.names[i] for i in order])))
    return content_key(row, [schema.names[i] for i in order])


def _sql_kind(arrow_type: pa.DataType) -> str:
    """`column_kind`, a date told apart (Spark reads it otherwise)."""
    kind = column_kind(arrow_type)
    return "instant-date" if kind == "instant" and pa.types.is_date(arrow_type) else kind


def table_content(table: pa.Table, names: list[str] | None = None, only: frozenset[str] | None = None,
                  rules: Rules = NO_RULES) -> str:
    """The content key of an Arrow table held here (a frame, a Parquet
    file's or a CSV file's records as the loader reads them), its columns
    named `names` (default: the table's own); restricted to `only`'s columns
    when given (`kept_column`). Text and bytes are read as the loader reads
    a text cell: a cell that is not UTF-8 fits no column type, and is
    missing here. No cell makes it fail (`_table_row`)."""
    import duckdb

    names = list(table.column_names) if names is None else names
    index = pandas_index_columns(table.schema)
    if index or only is not None:
        kept = [i for i, name in enumerate(names) if name not in index and kept_column(name, only)]
        table, names = table.select(kept), [names[i] for i in kept]
    con = duckdb.connect()
    try:
        _quiet(con)
        row = _table_row(con, table, names, rules)
    finally:
        con.close()
    order = key_order(names)
    return content_key(row, [names[i] for i in order])


def _table_row(con: Any, table: pa.Table, names: list[str], rules: Rules = NO_RULES) -> tuple:
    """`content_sql`'s row for an Arrow table. A column DuckDB cannot take
    (a nested type holding a duration beyond its INTERVAL, a type it does
    not know) is keyed by each cell's Python value instead, so that a run's
    success never depends on one cell (a review of v5, F2: a duration of
    10^13 s failed every run on its table, one bit about a row)."""
    columns, kinds = [], []
    for column in table.columns:
        keyable, kind = _keyable(column)
        columns.append(keyable)
        kinds.append(kind)
    try:
        return _duckdb_row(con, columns, kinds, names, rules)
    except Exception:  # noqa: BLE001 -- duckdb.Error, pyarrow's ArrowNotImplementedError, ...: a type, never a failure
        for i, (column, kind) in enumerate(zip(columns, kinds, strict=True)):
            if kind == "text" and not _is_text(column.type):
                columns[i] = _python_texts(column)
        return _duckdb_row(con, columns, kinds, names, rules)


def _duckdb_row(con: Any, columns: list[pa.Array], kinds: list[str], names: list[str],
                rules: Rules = NO_RULES) -> tuple:
    positional = pa.table(columns, names=[f"c{i}" for i in range(len(columns))])
    # in chunks: DuckDB scans an Arrow table's batches in parallel
    con.register("_fz_rows", pa.Table.from_batches(positional.to_batches(max_chunksize=_CHUNK_ROWS), positional.schema))
    try:
        d = DIALECTS["duckdb"]
        order = key_order(names)
        spelled = [(f"c{i}", kinds[i]) for i in order]
        (row,) = con.execute(content_sql(d, "_fz_rows", spelled, blank_positions(names, order),
                                         rule_positions(rules, [names[i] for i in order]))).fetchall()
        return tuple(row)
    finally:
        con.unregister("_fz_rows")


def _keyable(column: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, str]:
    """A column as DuckDB can take every cell of it, and its kind: text as
    the loader reads it, temporal columns as their raw storage, a duration
    as its count (in nanoseconds, `span:`), a half float or a wide decimal
    as a double (a decimal is keyed as a double), nested durations as their
    counts."""
    from fuzzpy.data.cells import as_text

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if pa.types.is_duration(column.type):
        return column.view(pa.int64()), f"span:{_NANOS[column.type.unit]}"
    if pa.types.is_float16(column.type) or (pa.types.is_decimal(column.type) and column.type.bit_width != 128):
        column = column.cast(pa.float64(), safe=False)
    elif column_kind(column.type) == "text" and _is_text(column.type):
        column = as_text(column, legacy="cp1252")
    elif column_kind(column.type) == "text":
        plain = _plain_type(column.type)
        if plain != column.type:
            try:
                column = column.cast(plain)
            except pa.ArrowException:  # pyarrow's ArrowNotImplementedError included
                return _python_texts(column), "text"
    return _raw_storage(column), _kind(column.type)


#: Nanoseconds per unit of a duration.
_NANOS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _plain_type(arrow_type: pa.DataType) -> pa.DataType:
    """A nested type with every duration inside it an int64 (its count)."""
    if pa.types.is_duration(arrow_type):
        return pa.int64()
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        make = pa.list_ if pa.types.is_list(arrow_type) else pa.large_list
        return make(arrow_type.value_field.with_type(_plain_type(arrow_type.value_type)))
    if pa.types.is_struct(arrow_type):
        return pa.struct([arrow_type.field(i).with_type(_plain_type(arrow_type.field(i).type))
                          for i in range(arrow_type.num_fields)])
    return arrow_type


def _python_texts(column: pa.Array) -> pa.Array:
    """Each cell as the text of its Python value (`R` and its repr); a cell
    Python cannot hold either is keyed by its type alone (never a failure)."""
    texts: list[str | None] = []
    for i in range(len(column)):
        try:
            value = column[i].as_py()
            texts.append(None if value is None else "R" + repr(value))
        except Exception:  # noqa: BLE001 -- a stable spelling for a cell nothing here can type
            texts.append("X" + str(column.type))
    return pa.array(texts, pa.string())


def _raw_storage(column: pa.Array) -> pa.Array:
    """A date, timestamp or time column as its raw integers (which DuckDB
    reads whatever they hold: a timestamp[s] of 10^13 s is beyond DuckDB's
    TIMESTAMP and made keying fail, one bit about another dataset's row)."""
    if column_kind(column.type) in ("instant", "clock", "zoned"):
        return column.view(pa.int32() if column.type.bit_width == 32 else pa.int64())
    return column


def _kind(arrow_type: pa.DataType) -> str:
    """`column_kind`, and for a temporal column the factors that turn its raw
    storage into microseconds (`_typed_micros`)."""
    kind = column_kind(arrow_type)
    if kind not in ("instant", "clock", "zoned"):
        return kind
    if pa.types.is_date32(arrow_type):
        return f"instant:{_DAY_MICROS}:1"
    unit = "ms" if pa.types.is_date64(arrow_type) else arrow_type.unit
    times = _MICROS[unit]
    return f"{kind}:1:1000" if times is None else f"{kind}:{times}:1"


def _is_text(arrow_type: pa.DataType) -> bool:
    return (pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
            or pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type))




def file_content(path: str, form: str, sha256: str, only: frozenset[str] | None = None,
                 rules: Rules = NO_RULES) -> str | None:
    """The content key of a CSV or Parquet file, as the loader reads it
    (None if it cannot be read, or it is no longer the file of this hash:
    such a file is linked by its bytes only); restricted to `only`'s
    columns when given (`kept_column`). Remembered by the file's hash and
    the columns keyed (`filehash`)."""
    from fuzzpy.engines.filehash import recall_counts, remember_counts

    query = VERSION if only is None else VERSION + "\nonly\t" + "\t".join(sorted(only))
    if rules:
        query += "\nrules\t" + "\t".join(f"{name}={kind}" for name, kind in sorted(rules))
    remembered = recall_counts(sha256, query)
    if remembered is not None and len(remembered) == 1:
        return f"{TAG}{remembered[0]:064x}"
    key = _read_file_content(path, form, sha256, only, rules)
    if key is not None:
        remember_counts(sha256, query, (int(key[len(TAG):], 16),))
    return key


def _read_file_content(path: str, form: str, sha256: str | None = None,
                       only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
    """A CSV file is framed and split by the loader's own rules
    (`loader.csv_text_table`: one record per well-formed line of the
    header's width, every cell its text), never by a sniffing reader's
    guess of its lines and types (issue 24). A Parquet file is read by
    pyarrow in batches, as the Arrow table it holds (`_parquet_content`),
    or by the loader when pyarrow cannot read it so."""
    if form == "csv":
        return _csv_content(path, sha256, only, rules)
    if form != "parquet":
        return None
    key = _parquet_content(path, only, rules)
    if key is None:  # neither DuckDB nor pyarrow can read it in batches: the loader's reading
        return _loaded_content(path, sha256, only, rules)
    if sha256 is not None and _current_sha256(path) != sha256:  # the file changed under us: not this file's key
        return None
    return key


def _parquet_content(path: str, only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
    """A Parquet file keyed as the Arrow table it holds, batch by batch (no
    file held in memory; the lane sums of the batches add up): the types
    pyarrow reads back are the table's that was written, so the file and
    that table key equal whatever a cell holds (a review of v5, F3: DuckDB
    read a non-UTF-8 binary cell or an extreme date otherwise than the
    Arrow table was keyed)."""
    import duckdb
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
        index = pandas_index_columns(file.schema_arrow)
        if all(_plain_in_duckdb(t) for t in file.schema_arrow.types):
            return _duckdb_parquet_content(path, index, only, rules)
        kept = [i for i, name in enumerate(file.schema_arrow.names) if name not in index and kept_column(name, only)]
        names = [file.schema_arrow.names[i] for i in kept]
        total = [0] * (2 + 2 * LANES)  # `content_sql`'s row: kept rows, then every row
        con = duckdb.connect()
        try:
            _quiet(con)
            for batch in file.iter_batches(batch_size=_BATCH_ROWS):
                row = _table_row(con, pa.Table.from_batches([batch]).select(kept), names, rules)
                total = [t + int(v or 0) for t, v in zip(total, row, strict=True)]
        finally:
            con.close()
    except (pa.ArrowException, OSError):
        return None
    order = key_order(names)
    return content_key(tuple(total), [names[i] for i in order])


def _plain_in_duckdb(arrow_type: pa.DataType) -> bool:
    """Whether DuckDB reads every cell of a Parquet column of this type as
    pyarrow does (numbers, booleans, UTF-8 text): such a file is keyed by
    DuckDB straight from the file, faster. Chosen by the file's schema,
    never by its cells."""
    return (pa.types.is_integer(arrow_type) or pa.types.is_float32(arrow_type) or pa.types.is_float64(arrow_type)
            or pa.types.is_boolean(arrow_type) or pa.types.is_string(arrow_type)
            or pa.types.is_large_string(arrow_type)
            or (pa.types.is_decimal(arrow_type) and arrow_type.bit_width == 128))


def _duckdb_parquet_content(path: str, index: frozenset[str], only: frozenset[str] | None = None,
                            rules: Rules = NO_RULES) -> str | None:
    import duckdb

    d = DIALECTS["duckdb"]
    source = f"read_parquet({d.string(path)}, hive_partitioning = false)"
    con = duckdb.connect()
    try:
        _quiet(con)
        relation = con.sql(f"SELECT * FROM {source} LIMIT 0")
        schema = (getattr(relation, "to_arrow_table", None) or relation.arrow)().schema  # DuckDB 2 / 1
        return query_content(d, lambda sql: con.execute(sql).fetchall(), source, schema, index, only, rules)
    except duckdb.Error:  # e.g. a string that is not UTF-8: the loader's reading
        return None
    finally:
        con.close()


#: Rows of a Parquet file keyed at a time, and of an Arrow table scanned by
#: one of DuckDB's threads.
_BATCH_ROWS = 1 << 20
_CHUNK_ROWS = 1 << 16


def _csv_content(path: str, sha256: str | None, only: frozenset[str] | None = None,
                 rules: Rules = NO_RULES) -> str | None:
    """Streamed by DuckDB with the loader's rules (`csvscan`, as a run on the
    DuckDB engine reads it: no file held in memory) where it can, else from
    the loader's own records."""
    from fuzzpy.data.loader import csv_text_table

    streamed = _streamed_csv_content(path, sha256, only, rules)
    if streamed is not None:
        return streamed
    header = _header(path, sha256)
    if header is None or header.csv is None:
        return None
    return table_content(csv_text_table(_tails_closed_bytes(header.csv)), list(header.names), only, rules)


def _streamed_csv_content(path: str, sha256: str | None, only: frozenset[str] | None = None,
                          rules: Rules = NO_RULES) -> str | None:
    import duckdb

    from fuzzpy.engines.csvscan import csv_fields, csv_source
    from fuzzpy.engines.engine import csv_header, streamed_data_file
    from fuzzpy.engines.scan import pattern_obstacle
    from fuzzpy.language.diagnostics import FuzzError

    try:
        file = streamed_data_file(path)
        facts = getattr(file.data, "facts", None)
        if (sha256 is not None and file.sha256 != sha256) or facts is None:
            return None
        header = csv_header(file)
    except FuzzError:
        return None
    names = list(header.names)
    if header.csv is None or facts.obstacle(len(names)) is not None or pattern_obstacle(path, "DuckDB"):
        return None
    d = DIALECTS["duckdb"]
    lines = _tails_closed(d, csv_source(path, facts, header.csv.header_line))
    source = f"({csv_fields(d, lines, len(names))}) AS records"
    order = [i for i in key_order(names) if kept_column(names[i], only)]
    con = duckdb.connect()
    try:
        _quiet(con)
        (row,) = con.execute(content_sql(d, source, [(f"f{i}", "text") for i in order],
                                         blank_positions(names, order),
                                         rule_positions(rules, [names[i] for i in order]))).fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()
    if _current_sha256(path) != file.sha256:  # the file changed while it was read
        return None
    return content_key(row, [names[i] for i in order])


#: A closed quoted value followed by other text in its field (`3,"z"tail`): pandas and pyarrow
#: read the field as `ztail`; the loader drops the line. The content key reads such a line as
#: pandas does (s29): the value and its tail quoted together.
_QUOTE_TAIL = r'(^|,)"((?:[^"]|"")*)"([^,"\r\n]+)'


def _tails_closed(d: Dialect, source: str) -> str:
    """`source`'s lines (`csvscan.LINE`), a line that is not well formed
    with each quoted value's tail moved inside its quotes (`_QUOTE_TAIL`)."""
    from fuzzpy.data.csvframe import _FIELD
    from fuzzpy.engines.csvscan import LINE

    body = f"{_FIELD}(?:,{_FIELD})*"
    return (f"(SELECT CASE WHEN contains({LINE}, '\"') AND NOT regexp_full_match({LINE}, {d.string(body)}) "
            f"THEN regexp_replace({LINE}, {d.string(_QUOTE_TAIL)}, '\\1\"\\2\\3\"', 'g') ELSE {LINE} END "
            f"AS {LINE} FROM {source}) AS tails_closed")


def _tails_closed_bytes(framed: Any) -> Any:
    """A CSV frame's malformed lines read as `_tails_closed` reads them (the
    file framed again), or the frame itself when none has such a tail."""
    import re

    from fuzzpy.data.csvframe import frame

    if framed.malformed_lines.size == 0:
        return framed
    data = bytearray(framed._data)
    pattern = re.compile(_QUOTE_TAIL.encode("ascii"))
    changed = False
    for line in sorted(map(int, framed.malformed_lines), reverse=True):
        start, stop = int(framed._starts[line - 1]), int(framed._stops[line - 1])
        fixed = pattern.sub(rb'\1"\2\3"', bytes(data[start:stop]))
        if fixed != data[start:stop]:
            data[start:stop], changed = fixed, True
    return frame(bytes(data), "") if changed else framed


def _loaded_content(path: str, sha256: str | None, only: frozenset[str] | None = None,
                    rules: Rules = NO_RULES) -> str | None:
    header = _header(path, sha256)
    if header is None or header.table is None:
        return None
    return table_content(header.table, list(header.names), only, rules)


def _header(path: str, sha256: str | None) -> Header | None:
    """The file's header as the loader reads it (its bytes read once, so the
    bytes keyed are the bytes hashed), or None."""
    from fuzzpy.data.loader import read_data_file, read_header
    from fuzzpy.language.diagnostics import FuzzError

    try:
        file = read_data_file(path)
        if sha256 is not None and file.sha256 != sha256:
            return None
        return read_header(file)
    except FuzzError:
        return None


def _current_sha256(path: str) -> str | None:
    from fuzzpy.engines.engine import streamed_data_file
    from fuzzpy.language.diagnostics import FuzzError

    try:
        return streamed_data_file(path).sha256
    except FuzzError:  # unreadable now
        return None


def _quiet(con: Any) -> None:
    """No progress bar on a connection of our own: switched off only where it
    is on (in Jupyter it is off, and setting it at all needs ipywidgets)."""
    ((on,),) = con.execute("SELECT current_setting('enable_progress_bar')").fetchall()
    if on:
        con.execute("SET enable_progress_bar = false")
