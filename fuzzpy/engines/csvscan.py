"""A CSV file read by DuckDB itself, with exactly the loader's row rules.

The loader (`fuzzpy.data.csvframe`, `loader`, `cells`) frames a record
per physical line, drops a line that is not one well-formed CSV record or
has another number of fields than the header, and reads each cell on its
own from its bytes. Here DuckDB does the same, streaming, in SQL:

* **Lines.** `read_csv` is asked for one VARCHAR per line: the delimiter is
  a byte the file does not hold, quoting, escaping and comments are off.
  DuckDB refuses bytes that are not UTF-8 and splits lines on a carriage
  return too, which the loader does not: a file that is not valid UTF-8
  throughout, or holds a carriage return that is not just before a newline,
  is streamed from a copy in which each such return and each byte that is
  not UTF-8 is replaced by a byte the file does not hold
  (`without_lone_returns`): a line holding the first mark is not a record,
  a field holding the second reads as empty, as the loader reads them. `skip` leaves out every line up to the header (and so a
  byte-order mark); blank lines come out NULL and are not records, as in
  the loader.
* **Records.** A line without a quote is well formed (the file holds no lone
  carriage return); one with a quote is matched against the loader's own
  pattern (`csvframe.WELL_FORMED_LINE`) and its fields counted with the
  loader's rule (quoted values emptied, commas counted). Fields are
  `split_part` of a line without quotes, else the n-th field of the
  loader's grammar, unquoted (`""` reads `"`), as pyarrow reads them.
* **Cells.** Each field's text goes through the same cell tests as a
  Parquet text column (`scan._text_cell`: trimming, the kind's spelling).
* **Rows.** The records that keep every drop-policy cell are written, in
  the file's order, to a DuckDB table (its pages spill to DuckDB's temp
  directory past its memory limit), so each row's id is its position among
  the loaded rows, as for a file the loader loads (`scan`). One query
  before it counts what the rules did, for the owner's report.

What decides whether a file streams (`CsvFacts.obstacle`) is found while
the file is hashed (`Scanner`), so it costs no extra pass. A file that
cannot stream is loaded by the loader, with a warning: the same rows.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from fuzzpy.data.csvframe import _FIELD, _QUOTED_FIELD
from fuzzpy.data.loader import Plan
from fuzzpy.engines.scan import _text_cell, count_where, row_rule_value
from fuzzpy.engines.sql import Dialect
from fuzzpy.support.records import frozen

#: A line (or run of bytes without a newline) longer than this is not
#: streamed: DuckDB refuses lines past its `max_line_size` (2 MiB, counted
#: after decoding, when each byte above 0x7F takes two).
LINE_LIMIT = 1 << 19
CHUNK = 1 << 19  # how the file is read while hashing: no line inside a chunk is longer
DELIMITERS = (b"\x01", b"\x02", b"\x03", b"\x1f")
#: RE2 repeats a group at most 1000 times: the n-th field of a quoted line
#: is found for narrower files only.
MAX_WIDTH = 1000
LINE = "_fz_line"
#: `kind_counts` per column: records, cells with text, present cells (not a missing marker), those spelling each of cells.INFERENCE_ORDER,
#: those that are finite numbers, and those that are integers within 64 bits
KIND_COUNTS = 8

_FIELD_VALUE = r'("(?:[^"]|"")*"|[^",][^,]*|)'
_FIELD_SKIPPED = r'(?:"(?:[^"]|"")*"|[^",][^,]*|),'
@frozen
class CsvFacts:
    """What the bytes of a CSV file say about how DuckDB can read it."""

    delimiter: bytes | None  # a byte the file does not hold
    carriage_returns: bool  # it holds a carriage return
    lone_carriage_return: bool  # ... one that is not just before a newline
    long_line: bool  # a line may be longer than LINE_LIMIT
    utf8: bool  # the whole file is valid UTF-8
    spare: bytes | None = None  # a second byte the file does not hold (`without_lone_returns`' mark)
    spare_text: bytes | None = None  # a third one: the mark of bytes that are not UTF-8 (`without_lone_returns`)

    def obstacle(self, width: int) -> str | None:
        """Why DuckDB cannot read the file with the loader's rules, if so."""
        if width > MAX_WIDTH:
            return f"more than {MAX_WIDTH} columns"
        if self.delimiter is None or self.lone_carriage_return or self.long_line or not self.utf8:
            return "its lines are not all ones DuckDB splits as the loader does"
        return None


class Scanner:
    """Finds a file's `CsvFacts` from its chunks, in order (at C speed:
    `find` and `count` over each chunk)."""

    def __init__(self) -> None:
        self.absent = list(DELIMITERS)
        self.returns = self.lone = self.long = self.pending_return = False
        self.since_newline = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.utf8 = True

    def update(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.absent = [b for b in self.absent if chunk.find(b) < 0]
        if self.utf8:
            try:
                self.decoder.decode(chunk)
            except UnicodeDecodeError:
                self.utf8 = False
        if self.pending_return and not chunk.startswith(b"\n"):
            self.lone = True
        self.pending_return = False
        if chunk.find(b"\r") >= 0:
            self.returns = True
            ends = chunk.endswith(b"\r")
            if chunk.count(b"\r") - chunk.count(b"\r\n") - ends:
                self.lone = True
            self.pending_return = ends
        first = chunk.find(b"\n")
        if first < 0:
            self.since_newline += len(chunk)
        else:
            self.long |= self.since_newline + first > LINE_LIMIT
            self.since_newline = len(chunk) - 1 - chunk.rfind(b"\n")
        self.long |= len(chunk) > CHUNK or self.since_newline > LINE_LIMIT

    def facts(self) -> CsvFacts:
        lone = self.lone or self.pending_return  # a final carriage return: not streamed
        utf8 = self.utf8
        if utf8:
            try:
                self.decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                utf8 = False
        return CsvFacts(self.absent[0] if self.absent else None, self.returns, lone, self.long, utf8,
                        self.absent[1] if len(self.absent) > 1 else None,
                        self.absent[2] if len(self.absent) > 2 else None)


def streams_once_marked(facts: CsvFacts, width: int) -> bool:
    """Whether a file DuckDB cannot split as the loader does only because of
    lone carriage returns or bytes that are not UTF-8 streams once each is
    marked (`without_lone_returns`): one row must not send a file to the
    loader, which holds it whole in memory (review s29c: 190 MB streamed,
    3.5 GB loaded at 10M rows, so the exit code under a memory limit told
    the row)."""
    if not facts.lone_carriage_return and facts.utf8:
        return False
    if (facts.lone_carriage_return and facts.spare is None) or (not facts.utf8 and facts.spare_text is None):
        return False
    return marked_source(facts).obstacle(width) is None


def without_lone_returns(source: Any, target: Any, mark: bytes | None, text_mark: bytes | None = None) -> str:
    """Copy the bytes of `source` to `target` (binary files); the sha256 of
    the bytes read. Given `mark` (the spare byte), each carriage return that
    is neither just before a newline nor the file's last byte is replaced by
    it: the loader drops every line holding such a return (no field holds
    one: `csvframe.WELL_FORMED_LINE`), and the streamed reading drops every
    line holding the mark (`csv_selects`' `marked`). Given `text_mark`, each
    byte that is not part of valid UTF-8 is replaced by it (never a quote,
    comma or line end: those are ASCII, so the framing is the loader's):
    the loader reads a cell that is not UTF-8 as not fitting and as holding
    no text (`cells.parse_text`, `kind_from_counts`), and the streamed
    reading reads a field holding the mark as empty (`csv_selects`'
    `bad_text`), which fits no kind either: the same rows."""
    import hashlib

    digest = hashlib.sha256()
    lone = re.compile(rb"\r(?!\n)")
    held = b""  # the bytes after the last newline read: a line not yet whole
    while True:
        chunk = source.read(CHUNK)
        digest.update(chunk)
        if not chunk:
            final = held.endswith(b"\r")  # the file's last byte, a return: kept
            body = held[:-1] if final else held
            target.write(_marked(body, lone, mark, text_mark) + (b"\r" if final else b""))
            return digest.hexdigest()
        text = held + chunk
        end = text.rfind(b"\n") + 1
        held = text[end:]
        if end:
            target.write(_marked(text[:end], lone, mark, text_mark))


def _marked(lines: bytes, lone: Any, mark: bytes | None, text_mark: bytes | None) -> bytes:
    """Whole lines (or the file's tail), their lone returns and bytes that
    are not UTF-8 marked (`without_lone_returns`)."""
    if mark is not None:
        lines = lone.sub(mark, lines)
    if text_mark is not None:
        try:
            lines.decode("utf-8")
        except UnicodeDecodeError:
            decoded = lines.decode("utf-8", "surrogateescape")  # each bad byte, U+DC80..U+DCFF
            lines = _BAD_BYTE.sub(text_mark.decode("ascii"), decoded).encode("utf-8")
    return lines


_BAD_BYTE = __import__("re").compile("[\udc80-\udcff]")


def marked_source(facts: CsvFacts) -> CsvFacts:
    """The facts of `without_lone_returns`' copy: no lone return left, and
    valid UTF-8 throughout."""
    return CsvFacts(facts.delimiter, facts.carriage_returns, False, facts.long_line, True, facts.spare,
                    facts.spare_text)


def csv_source(path: str, facts: CsvFacts, header_line: int) -> str:
    """DuckDB's FROM text: one Latin-1 VARCHAR per line after the header."""
    assert facts.delimiter is not None
    quoted = path.replace("'", "''")
    newline = "\\r\\n" if facts.carriage_returns else "\\n"
    return (f"read_csv('{quoted}', columns = {{'{LINE}': 'VARCHAR'}}, delim = chr({facts.delimiter[0]}), "
            f"quote = '', escape = '', comment = '', header = false, auto_detect = false, "
            f"new_line = '{newline}', strict_mode = false, skip = {header_line}, "
            # the bytes as they are, whatever the name says (`x.csv.gz` is not
            # decompressed: review a26 F2), and no column from a folder's name (F3)
            "compression = 'none', hive_partitioning = false, parallel = true)")


def _commas(text: str) -> str:
    return f"(strlen({text}) - strlen(replace({text}, ',', '')))"


def _field(d: Dialect, index: int, bad_text: bytes | None = None) -> str:
    """Field `index` (0-based) of the line `l`, as pyarrow reads it; empty
    where it holds `bad_text` (bytes that are not UTF-8, marked)."""
    pattern = f"^(?:{_FIELD_SKIPPED}){{{index}}}{_FIELD_VALUE}"
    quoted = _unquote(f"regexp_extract(l, {d.string(pattern)}, 1)")
    field = f"(CASE WHEN q THEN {quoted} ELSE split_part(l, ',', {index + 1}) END)"
    if bad_text is None:
        return field
    return f"(CASE WHEN contains({field}, chr({bad_text[0]})) THEN '' ELSE {field} END)"


def _unquote(field: str) -> str:
    return (f"(CASE WHEN starts_with({field}, '\"') THEN replace(substr({field}, 2, length({field}) - 2), "
            f"'\"\"', '\"') ELSE {field} END)")


def csv_selects(d: Dialect, source: str, plan: Plan, width: int, typed: list[int] | None = None,
                marked: bytes | None = None, bad_text: bytes | None = None) -> tuple[str, str]:
    """The SELECT of the loaded rows (in the file's order) and that of the
    owner's audit counts: total records, lines dropped, bad cells per
    column read, rows kept (`csv_report`). `typed`: the audit also counts
    what the records of these columns spell (`kind_counts`, after the
    audit's counts): a first run's typing in the same pass (issue 31).
    `marked`: a line holding this byte is not a record (a lone carriage
    return's mark: `without_lone_returns`). `bad_text`: a field holding
    this byte held bytes that are not UTF-8 and reads as empty, as the
    loader reads it (no text, fitting no kind: `without_lone_returns`)."""
    indexes = sorted({c.index for c in plan.columns} | set(typed or ()))
    cells_from = f"({_records(d, source, indexes, width, marked, bad_text)})"
    values, keep, audit = [], ["record"], ["count(*)", "count(*) FILTER (WHERE NOT record)"]
    for position, read in enumerate(plan.columns):
        kind = "num" if plan.shape == "vector" else read.kind
        cell = _text_cell(d, f"f{read.index}", kind)
        value = row_rule_value(d, read, cell, keep)
        values.append(f"{value} AS {d.ident(f'_fz_c{position}')}")
        audit.append(count_where(f"record AND NOT {cell.fits}"))
    where = " AND ".join(keep)
    audit.append(f"count(*) FILTER (WHERE {where})")
    select = f"SELECT {', '.join(values)} FROM {cells_from} WHERE {where}"
    if typed:
        audit.extend(kind_counts(d, [f"f{i}" for i in typed], "record"))
        return select, f"SELECT {', '.join(audit)} FROM {kind_coded(d, cells_from, [f'f{i}' for i in typed])}"
    return select, f"SELECT {', '.join(audit)} FROM {cells_from}"


def _records(d: Dialect, source: str, indexes: list[int], width: int, marked: bytes | None = None,
             bad_text: bytes | None = None) -> str:
    """Every non-blank line: whether it is a record (well formed, of the
    header's width) and its fields `f{i}` at `indexes`."""
    body = f"{_FIELD}(?:,{_FIELD})*"
    emptied = f"regexp_replace(l, {d.string(_QUOTED_FIELD)}, '\\1', 'g')"  # each quoted value emptied
    count = f"(CASE WHEN q THEN {_commas(emptied)} ELSE {_commas('l')} END + 1)"
    lines = f"SELECT {LINE} AS l, contains({LINE}, '\"') AS q FROM {source} WHERE {LINE} IS NOT NULL"
    fields = ", ".join(f"{_field(d, i, bad_text)} AS f{i}" for i in indexes)
    record = f"((NOT q OR regexp_full_match(l, {d.string(body)})) AND {count} = {width})"
    if marked is not None:
        record = f"({record} AND NOT contains(l, chr({marked[0]})))"
    return f"SELECT {record} AS record{', ' if fields else ''}{fields} FROM ({lines})"


def csv_fields(d: Dialect, source: str, width: int) -> str:
    """The records the loader reads (`csvframe`), every field `f0`, `f1`,
    ... as its text: the content key's reading of a CSV file (issue 24)."""
    fields = ", ".join(f"f{i}" for i in range(width))
    return f"SELECT {fields} FROM ({_records(d, source, list(range(width)), width)}) WHERE record"


def csv_report(plan: Plan, counts: tuple[int, ...]) -> dict[str, object]:
    """The loader's report (`loader.load`) from the audit query's counts."""
    total, dropped_lines, *bad, kept = counts
    columns: dict[str, object] = {}
    replaced = 0
    for read, cells in zip(plan.columns, bad, strict=True):
        if cells:
            columns[read.name] = {"policy": str(read.policy), "cells": int(cells)}
        if read.policy.kind == "value":
            replaced += int(cells)
    return {"rows_dropped": int(total) - int(kept), "malformed_lines": int(dropped_lines),
            "cells_replaced": replaced, "columns": columns}


def streamed_csv_kinds(file: Any, header: Any) -> dict[str, str | None] | None:
    """A first run's column types of a streamed CSV file (issue 31), as
    `validation.first_run_kinds` infers them from the loader's cells, in one
    DuckDB pass over the records the loader reads (`csv_fields`, the content
    key's reading: no file held in memory, no pyarrow). The DuckDB engine
    counts them in its audit query instead (`csv_selects`' `typed`: one
    pass); this is for the other engines. None where DuckDB cannot read the
    file by the loader's rules (the loader types it then)."""
    facts = getattr(file.data, "facts", None)
    names = list(header.names)
    if facts is None or header.csv is None or facts.obstacle(len(names)) is not None:
        return None  # checked before any import: a Parquet file's run imports no numpy (issue 11)
    import duckdb

    from fuzzpy.engines.scan import pattern_obstacle
    from fuzzpy.engines.sql import DIALECTS

    if pattern_obstacle(file.absolute, "DuckDB"):
        return None
    d = DIALECTS["duckdb"]
    unique = unique_columns(names)
    if not unique:
        return {}
    source = csv_source(file.absolute, facts, header.csv.header_line)
    texts = [f"f{i}" for i in unique]
    counts = kind_counts(d, texts)
    con = duckdb.connect()
    try:
        rows = kind_coded(d, f"({csv_fields(d, source, len(names))})", texts)
        (row,) = con.execute(f"SELECT {', '.join(counts)} FROM {rows}").fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()
    return kinds_of(names, unique, row)


def unique_columns(names: list[str] | tuple[str, ...]) -> list[int]:
    """The columns a first run types: those whose name is not repeated."""
    return [i for i, n in enumerate(names) if names.count(n) == 1]


def kind_coded(d: Dialect, rows: str, texts: list[str]) -> str:
    """`rows` (a FROM item) with, for each of `texts` (SQL text of its
    columns, NULL read as empty), its trimmed text and what that spells
    (`kind_code`) as columns `_fz_k0`, `_fz_k1`, ...: each cell is trimmed
    and tested once, whatever number of counts read it (`kind_counts`)."""
    from fuzzpy.engines.scan import _trim

    trimmed = ", ".join(f"{_trim(d, text)} AS _fz_t{j}" for j, text in enumerate(texts))
    coded = ", ".join(f"{kind_code(d, f'_fz_t{j}')} AS _fz_k{j}" for j in range(len(texts)))
    return f"(SELECT *, {coded} FROM (SELECT *, {trimmed} FROM {rows}))"


def kind_code(d: Dialect, t: str) -> str:
    """What a trimmed cell `t` spells, as `cells.parse_text` reads it: 0 no
    value (empty, or a missing marker), 1 `0` or `1` (an int, a num and a
    bool), 2 another int (any size), 3 another num (inf and nan too), 4
    `true` or `false` (any case), 5 only a string. The tests run in turn,
    each on the cells the earlier ones left (every int spelling is a num
    spelling; no other num spelling is a bool one)."""
    from fuzzpy.data.cells import _INT_TEXT, _NUM_TEXT, MISSING_MARKERS
    from fuzzpy.engines.scan import _matches

    markers = ", ".join(d.string(m) for m in MISSING_MARKERS)
    return (f"(CASE WHEN {t} = '' OR {t} IN ({markers}) THEN 0 WHEN {t} IN ('0', '1') THEN 1 "
            f"WHEN {_matches(d, t, _INT_TEXT)} THEN 2 "
            f"WHEN {_matches(d, t, _NUM_TEXT)} OR lower(ltrim({t}, '+-')) IN ('inf', 'infinity', 'nan') THEN 3 "
            f"WHEN lower({t}) IN ('true', 'false') THEN 4 ELSE 5 END)")


def kind_counts(d: Dialect, texts: list[str], where: str = "TRUE") -> list[str]:
    """Per column of `texts` (read from `kind_coded`'s columns `_fz_k{j}`),
    the counts `kinds_of` types it by, over the rows where `where` holds:
    its present cells (trimmed, not empty, not a missing marker) and how
    many spell an `int`, a `num`, a `bool` (`cells.INFERENCE_ORDER`)."""
    counts = []
    limit = 2**63 - 1  # cells.INT_LIMIT
    for j in range(len(texts)):
        k, t = f"_fz_k{j}", f"_fz_t{j}"
        counts += [f"count(*) FILTER (WHERE {where})",
                   f"count(*) FILTER (WHERE {where} AND {t} <> '')",
                   f"count(*) FILTER (WHERE {where} AND {k} > 0)",
                   f"count(*) FILTER (WHERE {where} AND {k} IN (1, 2))",
                   f"count(*) FILTER (WHERE {where} AND {k} IN (1, 2, 3))",
                   f"count(*) FILTER (WHERE {where} AND {k} IN (1, 4))",
                   f"count(*) FILTER (WHERE {where} AND {k} IN (1, 2, 3) AND isfinite(TRY_CAST({t} AS DOUBLE)))",
                   f"count(*) FILTER (WHERE {where} AND {k} IN (1, 2) "
                   f"AND TRY_CAST({t} AS HUGEINT) BETWEEN -{limit} AND {limit})"]
    return counts


def kinds_of(names: list[str] | tuple[str, ...], typed: list[int], row: tuple | list) -> dict[str, str | None]:
    """The types `kind_counts`' counts give (`row`, in the order of
    `typed`): `cells.kind_from_counts`, `dataset register`'s rule."""
    from fuzzpy.data.cells import kind_from_counts

    kinds: dict[str, str | None] = {}
    step = KIND_COUNTS
    for j, i in enumerate(typed):
        rows_n, nonempty, present_n, fit_int, fit_num, fit_bool, finite, whole_ints = (
            int(c or 0) for c in row[j * step:(j + 1) * step])
        kinds[names[i]] = kind_from_counts(rows_n, nonempty, present_n, fit_int, fit_num, fit_bool, finite,
                                           whole_ints)
    return kinds


def streamed_parquet_kinds(path: str, header: Any) -> dict[str, str | None] | None:
    """A first run's column types of a Parquet file (issue 31), as
    `validation.column_kinds` types them (`dataset register`'s typing): each
    column by its stored type alone (`cells.stored_kind`), no cell read (no
    pyarrow, numpy nor pandas: issue 11). None where a column is typed from
    its cells (bytes) or DuckDB cannot read the file: the loader types the
    file then."""
    from fuzzpy.data.cells import stored_kind
    from fuzzpy.data.columntypes import BINARY, column_type
    from fuzzpy.engines.scan import pattern_obstacle

    names = list(header.names)
    unique = unique_columns(names)
    if any(column_type(header.arrow_types[i]).family in BINARY for i in unique) or pattern_obstacle(path, "DuckDB"):
        return None
    return {names[i]: stored_kind(header.arrow_types[i]) for i in unique}
