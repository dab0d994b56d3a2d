"""A `bag` parameter's data from a CSV or Parquet file, as columns.

What is public and what is private (docs/semantics.md, "Data loading and
the order of a run"):

* public -- the schema: the file's existence and format, its header (column
  names; a Parquet file's column types) and the types the row type reads.
  `read_data_file`, `read_header` and `plan` check these, and refuse with an
  FZ5xx diagnostic (exit 2) naming the file and column, before anything is
  charged;
* private -- the rows. `load` never fails and never reports because of a row:
  a cell that does not fit its column (missing, not a number, beyond 64
  bits, not finite, not a boolean, not UTF-8) is handled by its column's
  policy -- drop the row, or replace the cell by a declared value -- and a
  CSV line that is not one well-formed record (ragged, or with a quote that
  does not close) is dropped. Both are 1-stable row transformations
  (McSherry, PINQ, SIGMOD 2009): one row changes at most one row of the
  result, so they compose with the noisy release at no extra cost. What
  they did is counted for the data owner (`report`), never shown by `run`.

Columns are matched to the row type by name: a `bag { age : num, ... }` reads
the columns `age`, ...; a bag of a base type (`bag num`) reads the file's only
column; a `bag (vec[p] num)` reads every column, in order, as one vector per
row. Extra columns are ignored.
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

from fuzzpy.data.cells import (
    Cells,
    kind_of_arrow,
    parse_text,
    parse_typed,
    parse_value,
    readable_from,
)
from fuzzpy.data.csvframe import (
    CsvFrame,
    columns_hint,
    field_column,
    frame,
    schema_error,
    unreadable_file,
)
from fuzzpy.language.types import (  # noqa: F401 -- UNREAD, Unread: their home is language.types
    UNREAD,
    TBag,
    TBool,
    TInt,
    TNum,
    TRecord,
    TString,
    TVec,
    Type,
    Unread,
)
from fuzzpy.ledger.datasets import DEFAULT_POLICY, SCHEMA_MISMATCH, Policy, Registration
from fuzzpy.runtime.bag import Bag, Column
from fuzzpy.runtime.values import Record
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

np = lazy("numpy")

_KIND_OF_TYPE: dict[type, str] = {TNum: "num", TInt: "int", TBool: "bool", TString: "string"}
_DTYPES = {"num": "float64", "int": "int64", "bool": "bool", "string": object}  # numpy dtypes, by name
_BAD_POLICY = "FZ543"


pa = lazy("pyarrow")
pacsv = lazy("pyarrow.csv")  # a run whose rows an engine reads never parses a file here
pq = lazy("pyarrow.parquet")


# ---------------------------------------------------------------- the file and its header (public)


@frozen
class DataFile:
    """A data file's bytes, read once: they are hashed and parsed as one."""

    path: str  # as given
    absolute: str
    format: str  # csv | parquet
    data: bytes
    sha256: str  # hex digest


def read_data_file(path: str | Path) -> DataFile:
    name = str(path)
    try:
        data = Path(path).read_bytes()
        absolute = str(Path(path).resolve())
    except OSError as exc:
        raise unreadable_file(name, exc) from None
    return DataFile(name, absolute, file_format(name), data, hashlib.sha256(data).hexdigest())


def file_format(path: str) -> str:
    return "parquet" if Path(path).suffix.lower() in (".parquet", ".pq") else "csv"


def content_hash(path: str | Path) -> str:
    """``sha256:<hex>`` of the file's bytes: how ledgers written before
    registration keyed a dataset."""
    return "sha256:" + read_data_file(path).sha256


@frozen
class Header:
    """The public part of a data file: its column names (and, for Parquet,
    their types), with what is needed to read its records."""

    names: tuple[str, ...]
    arrow_types: tuple[pa.DataType, ...] | None  # Parquet only
    csv: CsvFrame | None
    table: pa.Table | None  # Parquet: the whole file, decoded


def read_header(file: DataFile) -> Header:
    """The file's header; refused (FZ502, FZ505) if it has none. A Parquet
    file is decoded whole here: a file that does not decode is a format
    problem (a Parquet writer makes a decodable file of any rows)."""
    if not file.data:
        raise schema_error("FZ502", f"data file `{file.path}` is empty", file.path,
                           hint="the first line must name the columns")
    if file.format == "csv":
        framed = frame(file.data, file.path)
        return Header(framed.names, None, framed, None)
    try:
        # a native buffer, not a Python file object: after a decoding error a
        # reader thread may still run at exit and abort the process (Arrow's
        # apache/arrow#34314, open); ~1 run in 20 with a Python file, ~1 in
        # 150 with a buffer (a20 F3; the refusal is printed first, nothing charged)
        table = pq.read_table(pa.BufferReader(file.data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        message = f"data file `{file.path}` is not a readable Parquet file: {_first_line(exc)}"
        raise schema_error("FZ505", message, file.path) from None
    return Header(tuple(table.column_names), tuple(table.schema.types), None, table)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# ---------------------------------------------------------------- the plan (public)


@frozen
class ColumnRead:
    """How a run reads one column: as which kind, under which policy."""

    name: str
    index: int  # position in the header
    kind: str  # int | num | bool | string
    policy: Policy
    replacement: object = None  # the parsed `value:` replacement


@frozen
class Plan:
    shape: str  # "record" | "single" | "vector"
    fields: tuple[str, ...]  # the record's field names (shape "record")
    columns: tuple[ColumnRead, ...]


def plan(header: Header, bag_type: Type, path: str, registration: Registration | None = None,
         first: bool = False) -> Plan:
    """Which columns the row type reads, checked against the header and the
    registered schema: every refusal here depends only on public things.
    ``first``: the registration is the one this run just recorded (its
    messages say so, not "the type its first run recorded")."""
    if not isinstance(bag_type, TBag):
        raise schema_error("FZ507", f"only `bag` parameters read data files, not `{bag_type}`", path)
    row = bag_type.elem
    if isinstance(row, TRecord):
        indices = [_column_index(header, name, path) for name, _ in row.fields]  # every declared column exists
        read = [(name, i, t) for (name, t), i in zip(row.fields, indices, strict=True) if t is not UNREAD]
        if not read and row.fields:
            return _no_field_plan(header, row, indices, path, registration)
        columns = tuple(_read(header, i, _kind(t, name, path), path, registration, first) for name, i, t in read)
        return Plan("record", tuple(name for name, _, _ in read), columns)
    if isinstance(row, TVec):
        columns = tuple(_read(header, i, "num", path, registration, first) for i in range(len(header.names)))
        return Plan("vector", (), columns)
    if len(header.names) != 1:
        raise schema_error(
            "FZ503", f"a bag of `{row}` reads a file with exactly one column; `{path}` has {len(header.names)}",
            path, hint=columns_hint(header.names),
        )
    return Plan("single", (), (_read(header, 0, _kind(row, header.names[0], path), path, registration, first),))


def _no_field_plan(header: Header, row: TRecord, indices: list[int], path: str,
                   registration: Registration | None) -> Plan:
    """The rows of a definition that reads no field (a count): one declared
    column is read as text under a rule that replaces every cell that does
    not fit by "" -- no row is dropped for a column nobody reads (issue 31);
    the column only carries the number of rows."""
    readable = [i for i in indices if header.arrow_types is None or readable_from(header.arrow_types[i], "string")]
    if not readable:  # no declared column holds values a run reads as text: every field is read, as declared
        raise schema_error("FZ507", "no column of the row type can be read as text to count the rows of "
                           f"`{path}`", path, hint="declare one of the file's text or number columns in the row type")
    index = readable[0]
    column = ColumnRead(header.names[index], index, "string", Policy("value", ""), "")
    return Plan("record", (header.names[index],), (column,))


def _kind(kind: Type, column: str, path: str) -> str:
    if type(kind) not in _KIND_OF_TYPE:
        raise schema_error("FZ507", f"column `{column}` has type `{kind}`, which cannot be read from a data file",
                           path)
    return _KIND_OF_TYPE[type(kind)]


def _column_index(header: Header, name: str, path: str) -> int:
    count = header.names.count(name)
    if count == 0:
        import difflib

        hint = columns_hint(header.names)
        if path.startswith("frame:"):  # data in memory has no file (review s29c)
            hint = hint.replace("the file's columns", "its columns", 1)
        close = difflib.get_close_matches(name, header.names, n=1)
        if close:
            hint = f"did you mean `{close[0]}`? {hint}"
        holder = f"the data `{path[6:]}` (in memory)" if path.startswith("frame:") else f"data file `{path}`"
        raise schema_error("FZ503", f"{holder} has no column `{name}` (the row type needs it)", path,
                           hint=hint)
    if count > 1:
        second = header.names.index(name, header.names.index(name) + 1)
        raise schema_error(
            "FZ505", f"data file `{path}` has {count} columns named `{name}`: which one the row type means "
            "is ambiguous", path, hint="rename or drop the duplicates", **_where(header, second),
        )
    index = header.names.index(name)
    # SQL engines (DuckDB, Spark) match names ignoring case: `x` beside `X` would be
    # a different column there than here (a14 F5), so such a pair is ambiguous everywhere
    alike = next((i for i, other in enumerate(header.names) if i != index and other.casefold() == name.casefold()),
                 None)
    if alike is not None:
        raise schema_error(
            "FZ505", f"data file `{path}` has columns `{name}` and `{header.names[alike]}`, whose names differ "
            "only in case: which one the row type means is ambiguous to a query engine", path,
            hint="rename one of them", **_where(header, alike),
        )
    return index


def _where(header: Header, index: int) -> dict[str, int]:
    """Where a column's name is in a CSV header (a Parquet file has no lines)."""
    if header.csv is None:
        return {}
    line = header.csv.header_line
    return {"line": line, "col": field_column(header.csv.line_bytes(line), index)}


def _read(header: Header, index: int, kind: str, path: str, registration: Registration | None,
          first: bool = False) -> ColumnRead:
    name = header.names[index]
    registered = registration.column(name) if registration is not None else None
    policy = registered.policy if registered is not None else DEFAULT_POLICY
    if registered is not None and registered.kind == NO_TYPE and policy.kind != "value":
        # no row holds a value here (issue 31, F2): reading it would drop every row and release noise
        assert registration is not None
        message, hint = _no_values(name, kind, registration, first)
        raise schema_error(SCHEMA_MISMATCH, message, path, hint=hint, **_where(header, index))
    if registered is not None and registered.kind not in (None, NO_TYPE) and not compatible(kind, registered.kind) \
            and not (kind == "int" and registered.kind == "num" and stored_number(header, index)):
        # decided from the public schema alone, never from the rows (issue 31): the same on every neighbour
        assert registration is not None and registered.kind is not None
        message, hint = _mismatch(name, kind, registered.kind, registration, first)
        raise schema_error(SCHEMA_MISMATCH, message, path, hint=hint, **_where(header, index))
    if header.arrow_types is not None and not readable_from(header.arrow_types[index], kind):
        raise schema_error(SCHEMA_MISMATCH, f"column `{name}` of `{path}` holds {header.arrow_types[index]} "
                           f"values, which cannot be read as `{kind}`", path,
                           hint=_stored_hint(header.arrow_types[index], kind))  # Parquet: no header line
    replacement = None
    if policy.kind == "value":
        replacement = parse_value(policy.value or "", kind)
        if replacement is None:
            raise schema_error(_BAD_POLICY, f"the replacement value `{policy.value}` declared for column "
                               f"`{name}` is not {'an' if kind == 'int' else 'a'} {kind}", path,
                               **_where(header, index))
    return ColumnRead(name, index, kind, policy, replacement)


def _no_values(name: str, kind: str, registration: Registration, first: bool) -> tuple[str, str]:
    """The message and hint of a read of a column registered with no type
    (`none`: no row held a value of any type in it when it was typed)."""
    when = "this run registered it" if first else "it was registered"
    message = (f"column `{name}` of dataset `{registration.name}` has no type (`none`): when {when}, no row held "
               f"a value in it (every cell empty or null; in a float column, NaN or infinite); read as `{kind}`, every row would be dropped and the release would be noise alone")
    hint = "leave the column out of what the definition reads"
    if registration.format != "frame":  # never a type: with no value in the column, any type drops every row
        hint += (f"; or, as the data's holder, give its cells a replacement value (`fuzzpy dataset update "
                 f"{registration.name} --missing {name}=value:V`)")
    return message, hint


def _stored_hint(arrow_type: object, kind: str) -> str | None:
    """A stored number column read as `bool` (issue 31, F8: one rule on every
    form: an int column is not a bool column, whatever values it holds)."""
    from fuzzpy.data.columntypes import INTEGER, column_type

    family = column_type(arrow_type).family
    if kind == "bool" and (family in INTEGER or family == "float"):
        return "a column stored as numbers is read as `int` or `num` (a column of 0 and 1 too: test `x == 1`)"
    if family == "other":  # dates, times, lists, ...: no reading of every engine alike (docs/semantics.md)
        return ("a run reads columns stored as integers, floats, decimals, booleans and text; convert this one "
                "before the run (a date to its ISO text or its year, say), or leave it out of what the "
                "definition reads")
    return None


def _mismatch(name: str, kind: str, registered: str, registration: Registration,
              first: bool = False) -> tuple[str, str]:
    """The message and hint of a column read as a type its schema refuses."""
    if registration.explicit:
        return (f"column `{name}` of dataset `{registration.name}` is registered as `{registered}`; the row type "
                f"reads it as `{kind}`",
                "a column is read as its registered type, an int column also as num, any column as string"
                + (" (a column of 0 and 1 registered as int is not read as bool: declare it int and test "
                   f"`{name} == 1`)" if (kind, registered) == ("bool", "int") else ""))
    what = {"int": "integers", "num": "numbers", "bool": "booleans", "string": "text"}[registered]
    article = "an" if kind == "int" else "a"
    recorded = ("the type this run read it as (a refused run registers nothing)" if first else "the type its first run recorded")
    message = (f"column `{name}` of dataset `{registration.name}` holds {what} (`{registered}`: {recorded}, "
               f"as `fuzzpy dataset register` types it); the row type reads it as `{kind}`, "
               f"which its schema does not allow (a row whose cell is not {article} {kind} would be dropped)")
    declare = f"declare `{name} : {registered}`{' (or num)' if registered == 'int' else ''}"
    declare += ", or `string`" if registered != "string" else ""
    if (kind, registered) == ("bool", "int"):
        declare += (f" (a column of 0 and 1 is typed int, never bool, on every engine and form: declare "
                    f"`{name} : int` and test `{name} == 1`)")
    if registration.format == "csv":  # never `dataset update --type` blind: it may fit no cell (review s27c)
        hint = (f"{declare}; as the data's holder, `fuzzpy dataset check {registration.name} --type {name}={kind}` "
                f"lists the cells that are not {article} {kind} (and refuses the type if none is one) before a "
                "`dataset update` retypes it")
    else:
        hint = declare
    return message, hint


#: The type of a column no row held a value in when it was typed (issue 31, F2): not readable.
NO_TYPE = "none"


def stored_number(header: Header, index: int) -> bool:
    """Whether a column is stored as numbers (an int or a float type: Parquet,
    Arrow, a frame, a DuckDB table). Such a column registered `num` may be
    read as `int` under the row rules -- a finite whole value is that int, a
    row with any other cell is dropped -- decided by its stored type alone,
    never by its cells (issue 31, review s29c): the same on every neighbour."""
    from fuzzpy.data.columntypes import NUMBER, column_type

    if header.arrow_types is None:
        return False
    stored = column_type(header.arrow_types[index])
    return stored.family in NUMBER or stored.text == "null"


def numbers_as_int(header: Header, plan: Plan) -> tuple[str, ...]:
    """The columns of a typed source (Parquet, a frame, a table) that `plan`
    reads as `int`: a run notes each, whatever its stored type, because the
    type a writer picks is a function of the values (pandas: an int column
    with a missing cell is float64, one holding 2^63 uint64, one of missing
    cells null, one holding 2^70 object; review s29f); a stored number that
    is not a whole number of 64 bits fails the row rules (`stored_number`)."""
    if header.arrow_types is None or plan.shape != "record":
        return ()
    # every `int` column of a typed source, whatever its stored type (a frame's object column too):
    # which types the writer picked is a function of the values, so the note may not be
    return tuple(c.name for c in plan.columns if c.kind == "int")


def numbers_as_int_note(column: str) -> str:
    """The note of a column of stored numbers read as `int` (`numbers_as_int`)."""
    return (f"note: `{column}` is read as int: a row whose `{column}` is not a whole number of at most 64 bits "
            f"is dropped (declare `{column} : num` to keep it)")


def compatible(read: str, registered: str) -> bool:
    """Whether a column registered as `registered` may be read as `read`."""
    return read == registered or (read, registered) == ("num", "int") or read == "string"


# ---------------------------------------------------------------- the records (private)


@frozen
class Records:
    """The cells of the columns read, over the records that have every field
    (a CSV line that is not one is dropped before any column is read)."""

    cells: tuple[Cells, ...]
    count: int
    lines: np.ndarray | None  # CSV: the line of each record
    malformed_lines: np.ndarray  # CSV: lines that are not one CSV record (dropped)
    ragged_lines: np.ndarray  # CSV: records with another number of fields than the header (dropped)
    ragged_fields: np.ndarray  # how many fields each of those has

    @property
    def dropped_lines(self) -> np.ndarray:
        return np.sort(np.concatenate((self.malformed_lines, self.ragged_lines)))


def read_records(header: Header, reads: tuple[tuple[int, str], ...]) -> Records:
    """Every record's cells in the given (column index, kind) pairs; total:
    no record can make this fail."""
    if header.table is not None:
        cells = tuple(parse_typed(header.table.column(i), kind) for i, kind in reads)
        none = np.zeros(0, dtype=np.int64)
        return Records(cells, header.table.num_rows, None, none, none, none)
    assert header.csv is not None
    return _csv_records(header.csv, reads)


def _csv_records(framed: CsvFrame, reads: tuple[tuple[int, str], ...]) -> Records:
    names = [f"c{i}" for i in range(len(framed.names))]
    wanted = sorted({names[i] for i, _ in reads})
    table, framed, unexpected = _record_table(framed, names, wanted)
    lines = np.delete(framed.record_lines, unexpected)
    ragged = np.concatenate((framed.ragged_lines, framed.record_lines[unexpected]))
    fields = np.concatenate((framed.ragged_fields, np.full(unexpected.size, -1, dtype=np.int64)))
    cells = tuple(parse_text(table.column(names[i]), kind) for i, kind in reads)
    return Records(cells, int(lines.size), lines, framed.malformed_lines, ragged, fields)


def _record_table(framed: CsvFrame, names: list[str], wanted: list[str]) -> tuple[pa.Table, CsvFrame, np.ndarray]:
    """The wanted columns of the records as bytes, the frame they were read
    from, and the positions of its records pyarrow did not take."""
    table = _plain_csv_table(framed, names, wanted)
    if table is not None:
        return table, framed, np.zeros(0, dtype=np.int64)
    # a ragged line, or a line pyarrow reads otherwise: each line framed on its own
    framed = framed.without_ragged()
    table, unexpected = _csv_table(framed, names, wanted)
    return table, framed, unexpected


def csv_text_table(framed: CsvFrame) -> pa.Table:
    """Every column of the records the loader reads from a CSV file (blank,
    malformed and ragged lines left out), each cell as its bytes, in the
    header's order (columns named `c0`, `c1`, ...): the rows a run reads,
    before any cell is typed (the content key's reading, issue 24)."""
    names = [f"c{i}" for i in range(len(framed.names))]
    table, _, _ = _record_table(framed, names, names)
    return table.select(names)


def _plain_csv_table(framed: CsvFrame, names: list[str], wanted: list[str]) -> pa.Table | None:
    """The framed records' wanted columns as bytes when pyarrow reads every
    framed line as one record of the header's width (no ragged line: the
    common case, read at pyarrow's speed); None otherwise."""
    if framed.record_lines.size == 0:
        return None
    try:
        table = pacsv.read_csv(_unmarked(framed.body),
                               read_options=_READ(names, threads=True, longest=framed.longest_record),
                               convert_options=_AS_BYTES(names, wanted))
    except (pa.ArrowException, UnicodeDecodeError):
        return None
    return table if table.num_rows == framed.record_lines.size else None


class _Unnumbered(Exception):
    """pyarrow skipped a record without saying which."""


def _unmarked(body: bytes) -> io.BytesIO:
    """The records for pyarrow, which drops a UTF-8 byte order mark at the
    start of what it reads: only the file's first bytes can be one, so a
    first record starting with U+FEFF is preceded by an empty line (which
    pyarrow skips), and keeps it as every other record does (a15 F1: one
    added line changed how the next was read)."""
    from fuzzpy.data.csvframe import UTF8_BOM

    return io.BytesIO(b"\n" + body if body.startswith(UTF8_BOM) else body)


def _READ(names: list[str], threads: bool = False, longest: int = 0) -> pacsv.ReadOptions:  # noqa: N802
    """Threads only where no row is handled one by one (the order of the
    records is kept either way). Blocks hold the longest record: pyarrow
    skips a record longer than its block (1 MiB by default) as an invalid
    row, and a line of 2 MiB was dropped without a word (s29)."""
    block = min(max(1 << 20, 2 * longest + 2), 2**31 - 1)
    return pacsv.ReadOptions(column_names=names, use_threads=threads, block_size=block)


def _AS_BYTES(names: list[str], wanted: list[str]) -> pacsv.ConvertOptions:  # noqa: N802
    return pacsv.ConvertOptions(
        column_types=dict.fromkeys(names, pa.binary()), include_columns=wanted,
        strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[],
    )


def _csv_table(framed: CsvFrame, names: list[str], wanted: list[str]) -> tuple[pa.Table, np.ndarray]:
    """The framed records' wanted columns as bytes, and the positions of any
    records pyarrow did not take (none, when the framing and pyarrow agree,
    as the tests check). If pyarrow fails anyway, every record is split on
    its own (`_split_each_line`): loading stays total."""
    if framed.record_lines.size == 0:
        return pa.table({name: pa.array([], pa.binary()) for name in wanted}), np.zeros(0, dtype=np.int64)
    skipped: list[int] = []

    def skip(row: pacsv.InvalidRow) -> str:
        if row.number is None:  # pyarrow may not know where the record was
            raise _Unnumbered
        skipped.append(row.number - 1)  # pyarrow numbers the records from 1
        return "skip"

    try:
        table = pacsv.read_csv(
            _unmarked(framed.body), read_options=_READ(names, longest=framed.longest_record),
            parse_options=pacsv.ParseOptions(invalid_row_handler=skip), convert_options=_AS_BYTES(names, wanted),
        )
    except (pa.ArrowException, UnicodeDecodeError, _Unnumbered):
        return _split_each_line(framed, names, wanted)
    return table, np.asarray(skipped, dtype=np.int64)


def _split_each_line(framed: CsvFrame, names: list[str], wanted: list[str]) -> tuple[pa.Table, np.ndarray]:
    """Each record's line split by Python's csv module on its own; a line
    that does not give the header's number of fields is dropped."""
    columns: dict[str, list[bytes]] = {name: [] for name in wanted}
    dropped = []
    for position, line in enumerate(framed.record_lines.tolist()):
        try:
            fields = next(csv.reader([framed.line_bytes(line).decode("utf-8", "surrogateescape")]), [])
        except csv.Error:
            fields = []
        if len(fields) != len(names):
            dropped.append(position)
            continue
        for name in wanted:
            columns[name].append(fields[names.index(name)].encode("utf-8", "surrogateescape"))
    return pa.table({n: pa.array(v, pa.binary()) for n, v in columns.items()}), np.asarray(dropped, dtype=np.int64)


def load(header: Header, plan: Plan) -> tuple[Bag, dict[str, object]]:
    """The bag the plan reads, after the row rules, and what they did (for
    the data owner's audit, never for the analyst). Total: it cannot fail
    because of what a row holds."""
    records = read_records(header, tuple((c.index, c.kind) for c in plan.columns))
    keep = np.ones(records.count, dtype=bool)
    columns: list[np.ndarray] = []
    counts: dict[str, dict[str, object]] = {}
    replaced_total = 0
    for read, cells in zip(plan.columns, records.cells, strict=True):
        bad = ~cells.fits
        values = np.asarray(cells.values, dtype=_DTYPES[read.kind])
        if read.policy.kind == "value":
            values = values.copy()
            values[bad] = read.replacement
            replaced_total += int(bad.sum())
        else:  # drop; `refuse` was checked when the owner validated, and drops here
            keep &= ~bad
        columns.append(values)
        if bad.any():
            counts[read.name] = {"policy": str(read.policy), "cells": int(bad.sum())}
    kept = columns if keep.all() else [values[keep] for values in columns]
    report = {
        "rows_dropped": int((~keep).sum()) + int(records.dropped_lines.size),
        "malformed_lines": int(records.dropped_lines.size),
        "cells_replaced": replaced_total,
        "columns": counts,
    }
    return Bag(_column(plan, kept)), report


def _column(plan: Plan, kept: list[np.ndarray]) -> Column:
    if plan.shape == "record":
        return Record(dict(zip(plan.fields, kept, strict=True)))
    if plan.shape == "vector":
        n = kept[0].shape[0] if kept else 0
        return np.column_stack(kept).astype(np.float64) if kept else np.zeros((n, 0))
    return kept[0]


def load_bag(path: str | Path, bag_type: Type, registration: Registration | None = None) -> Bag:
    """The file's rows as a `Bag` (the default row rules unless a
    registration gives others): for tests and benchmarks."""
    file = read_data_file(path)
    header = read_header(file)
    bag, _ = load(header, plan(header, bag_type, file.path, registration))
    return bag


def kind_of_parquet_column(header: Header, index: int) -> str | None:
    """The kind a Parquet column holds as stored (None for CSV or other types)."""
    return None if header.arrow_types is None else kind_of_arrow(header.arrow_types[index])


