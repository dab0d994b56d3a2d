"""Data cells to typed values, and which cells do not fit their column's type.

Every cell is parsed on its own, from its own text (or Parquet value) and the
column's public type: whether a cell fits never depends on another row. A
cell that does not fit is not an error here; it is marked with its problem
and the column's policy (`fuzzpy.data.loader`) decides what happens to
its row. Columns are processed whole, with pyarrow compute kernels.

Kinds are the row types a file can hold: `int` (64-bit, see `INT_LIMIT`),
`num` (finite doubles), `bool` (`true`/`false`/`1`/`0`, any case) and
`string` (valid UTF-8). Text is trimmed of surrounding whitespace first, so
`a, b` reads `b`, not ` b`; an empty cell is missing.
"""

from __future__ import annotations

from functools import cache

from fuzzpy.data.columntypes import BINARY, INTEGER, NUMBER, TEXT, ColumnType, column_type
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

pa = lazy("pyarrow")
np = lazy("numpy")

pc = lazy("pyarrow.compute")  # a run whose rows an engine reads parses no cell here

KINDS = ("int", "num", "bool", "string")
#: the order in which a column's type is inferred from its cells: the narrowest first
INFERENCE_ORDER = ("int", "num", "bool")
#: cells that spell a missing value in common exports (R's NA, SQL's NULL, ...): no evidence of a
#: column's type when it is inferred (the row rules still treat them as cells that do not fit)
MISSING_MARKERS = ("NA", "N/A", "n/a", "na", "NaN", "nan", "null", "NULL", "Null", "None", "none", "-", "?", ".")

#: The ints the runtime accepts from data: signed 64-bit (the width of its
#: int columns); a larger value is a cell that does not fit.
INT_LIMIT = 2**63 - 1

OK, MISSING, NOT_UTF8, WRONG_TYPE, OUT_OF_RANGE = 0, 1, 2, 3, 4

_INT_TEXT = r"^[+-]?[0-9]+$"
_NUM_TEXT = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_BOOL_WORDS = {"true": True, "false": False, "1": True, "0": False}
_SAFE_DIGITS = 18  # every integer spelled in at most 18 characters fits in 64 bits


def reason(problem: int, kind: str) -> str:
    """What is wrong with a cell, in words (for the data owner)."""
    if problem == MISSING:
        return "the value is missing"
    if problem == NOT_UTF8:
        return "the value is not valid UTF-8 text"
    if problem == OUT_OF_RANGE:
        return "the number is beyond 64 bits" if kind == "int" else "the number is not finite"
    return f"the value is not {'an' if kind == 'int' else 'a'} {kind}"


@frozen
class Cells:
    """One column's values (a placeholder where a cell does not fit) and each
    cell's problem (`OK` when it fits)."""

    values: np.ndarray
    problems: np.ndarray  # uint8

    @property
    def fits(self) -> np.ndarray:
        return self.problems == OK


def parse_text(column: pa.Array, kind: str) -> Cells:
    """Cells read as text (a CSV column, or a Parquet column of strings).

    What each cell reads as is `parse_text_reference`. Numbers take a fast
    path first (`_fast_numbers`) that gives the same cells: it serves the
    cells spelled only with the characters of a plain number, whose reading
    needs no trimming, no UTF-8 check and no pattern match, and sends every
    other cell to the reference (tested against it, cell for cell)."""
    if FAST_NUMBERS and kind in ("num", "int"):
        fast = _fast_numbers(column, kind)
        if fast is not None:
            return fast
    return parse_text_reference(column, kind)


def parse_text_reference(column: pa.Array, kind: str) -> Cells:
    """The reading of every cell, each from its own text: trimmed of
    whitespace, empty is missing, then matched against the kind's spelling
    and converted (whole columns at a time, with pyarrow kernels)."""
    text, valid_utf8 = _as_text(column)
    text = pc.utf8_trim_whitespace(text)
    problems = np.where(valid_utf8, OK, NOT_UTF8).astype(np.uint8)
    missing = _numpy_bool(pc.equal(pc.utf8_length(text), 0)) & valid_utf8
    problems[missing] = MISSING
    values, fits_kind, range_ok = _typed(text, kind)
    open_cells = problems == OK
    problems[open_cells & ~fits_kind] = WRONG_TYPE
    problems[open_cells & fits_kind & ~range_ok] = OUT_OF_RANGE
    return Cells(values, problems)


def parse_typed(column: pa.Array, kind: str) -> Cells:
    """Cells of a Parquet column with a non-text type (`readable_from` allowed it)."""
    column = _decoded(column)
    if pa.types.is_null(column.type):  # every cell missing (`readable_from`)
        column = pa.nulls(len(column), pa.float64())
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or _is_binary(column.type):
        return parse_text(column, kind)
    if pa.types.is_decimal(column.type) or (kind == "string" and not pa.types.is_boolean(column.type)):
        return parse_text(column.cast(pa.string()), kind)
    missing = _numpy_bool(column.is_null())
    if kind == "string":  # a boolean column read as text
        text = pc.if_else(column, "true", "false")
        return _with_missing(parse_text(text.fill_null(""), kind), missing)
    if pa.types.is_boolean(column.type):
        values = _numpy_bool(column.fill_null(False))
        return _with_missing(Cells(values, np.zeros(len(column), dtype=np.uint8)), missing)
    if pa.types.is_floating(column.type):
        return _with_missing(_from_floats(column.fill_null(0).cast(pa.float64()), kind), missing)
    return _with_missing(_from_integers(column.fill_null(0), kind), missing)


def readable_from(arrow_type: pa.DataType | ColumnType, kind: str) -> bool:
    """Whether a Parquet column of `arrow_type` can be read as `kind` (public)."""
    described = column_type(arrow_type)
    if described.text == "null":  # every cell missing: a row that reads it is dropped (review s29f)
        return True
    family = described.family
    text = family in TEXT or family in BINARY
    number = family in NUMBER
    if kind in ("int", "num"):
        return text or number
    if kind == "bool":  # a stored number is never a bool, 0 and 1 included: one rule on every form (issue 31, F8)
        return text or family == "bool"
    return text or number or family == "bool"


def kind_of_arrow(arrow_type: pa.DataType | ColumnType) -> str | None:
    """The kind a stored column's type says it holds (Parquet, Arrow, a
    DuckDB table, a frame), decided by the type alone, never by its cells
    (issue 31): an int is `int`, except a `uint64` (values up to 2^64 - 1,
    beyond the runtime's 64-bit ints: `num`); a float is `num`; a decimal of
    scale 0 whose precision fits in 64 bits (18 digits) is `int`, every
    other decimal `num`; a bool `bool`; text `string`; the `null` type (every
    cell missing) `num`, as a float column. None for bytes (typed
    from their cells, as a CSV column is) and for every type no run reads
    (`readable_from` refuses each reading of those)."""
    described = column_type(arrow_type)
    family = described.family
    if described.text == "null":
        # pandas writes an all-missing column as `null` and the same column with one number as a
        # float: typed alike, as numbers with every cell missing (review s29f)
        return "num"
    if family in INTEGER:
        return "num" if family == "uint" and described.bit_width == 64 else "int"
    if family == "decimal":
        precision, scale = decimal_shape(described)
        return "int" if scale == 0 and precision <= 18 else "num"
    if family == "float":
        return "num"
    if family == "bool":
        return "bool"
    if family in TEXT:
        return "string"
    return None


def decimal_shape(described: ColumnType) -> tuple[int, int]:
    """A decimal type's precision and scale, from its spelling
    (`decimal128(10, 2)`); (38, 1) if it cannot be read (a `num`)."""
    import re

    found = re.search(r"decimal\d*\((\d+),\s*(-?\d+)\)", described.text)
    return (int(found.group(1)), int(found.group(2))) if found else (38, 1)


def kind_from_counts(rows: int, nonempty: int, present: int, fit_int: int, fit_num: int, fit_bool: int,
                     finite: int, whole_ints: int) -> str | None:
    """The type of a column of text (a CSV column, bytes), from counts over
    all its records -- the one rule of `dataset register` and of a first run,
    on every engine (issue 31): `nonempty` cells hold text (not empty, valid
    UTF-8), `present` ones of them are not a missing marker (`NA`, `?`, ...),
    `fit_*` of those spell the kind (a number beyond the kind's range too),
    `finite` spell a finite number and `whole_ints` an int within 64 bits.

    The narrowest of `int`, `num`, `bool` that *every* present cell spells,
    else `string` (never a majority: a column half ints, half words is text).
    No record: no type. No text in any record (every cell empty or not
    UTF-8): `none`, which every reading refuses (each would drop every row).
    Text but no present cell (only markers), or numbers none of which is
    finite (`inf`, `1e999`): `string` -- readable as its text, and refused
    as a number. An `int` column none of whose integers fits in 64 bits:
    `num`."""
    if rows == 0:
        return None
    if nonempty == 0:
        return "none"
    if present == 0:
        return "string"
    fitting = {"int": fit_int, "num": fit_num, "bool": fit_bool}
    chosen = next((k for k in INFERENCE_ORDER if fitting[k] == present), "string")
    if chosen in ("int", "num") and finite == 0:
        return "string"
    if chosen == "int" and whole_ints == 0:
        return "num"
    return chosen


def stored_kind(arrow_type: pa.DataType | ColumnType) -> str | None:
    """A stored column's registered type: its stored type's (`kind_of_arrow`),
    never its cells' (issue 31, review s29c): a float column is `num` whatever
    values it holds -- all whole, one 2.5, none at all (no row, or every cell
    null or NaN) -- so a neighbour one row away is typed alike. A program
    that declares `int` for it reads it under the row rules (a finite whole
    value is that int; a row with any other cell is dropped, as a cell that
    does not fit: `loader.numbers_as_int`), so a pandas int column with a
    missing cell (stored float64) reads as its neighbour without it (int64)
    does, bar the missing cell's row (issue 24)."""
    return kind_of_arrow(arrow_type)


def parse_value(text: str, kind: str) -> object | None:
    """One value spelled as a data file would spell it (a declared
    replacement value), or None if it is not a `kind`. A replacement for a
    string column may be empty."""
    if kind == "string":
        return text.strip()
    cells = parse_text(pa.array([text.encode("utf-8")], pa.binary()), kind)
    if cells.problems[0] != OK:
        return None
    value = cells.values[0]
    return value.item() if isinstance(value, np.generic) else value


# ---------------------------------------------------------------- kinds


def _typed(text: pa.Array, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values, whether each cell spells a `kind`, and whether it is in range."""
    n = len(text)
    everywhere = np.ones(n, dtype=bool)
    if kind == "string":
        return text.to_numpy(zero_copy_only=False).astype(object), everywhere, everywhere
    if kind == "bool":
        lowered = pc.utf8_lower(text)
        values = _numpy_bool(pc.is_in(lowered, value_set=pa.array(["true", "1"])))
        fits = _numpy_bool(pc.is_in(lowered, value_set=pa.array(list(_BOOL_WORDS))))
        return values, fits, everywhere
    if kind == "int":
        return _ints(text)
    return _nums(text)


def _ints(text: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fits = _numpy_bool(pc.match_substring_regex(text, _INT_TEXT))
    lengths = np.asarray(pc.utf8_length(text).to_numpy(zero_copy_only=False))
    in_range = ~fits | (lengths <= _SAFE_DIGITS)  # a sign and 17 digits, or 18 digits, always fit
    for row in np.flatnonzero(~in_range):  # the rare long ones (leading zeros, or too big), one by one
        in_range[row] = _within_int_limit(text[row].as_py())
    usable = fits & in_range
    cleaned = pc.if_else(pa.array(usable), _without_plus(text), "0")
    return cleaned.cast(pa.int64()).to_numpy(zero_copy_only=False), fits, in_range


def _within_int_limit(spelled: str) -> bool:
    """|n| <= 2^63 - 1 for a cell matching `_INT_TEXT`, compared as digits:
    Python's `int()` refuses more than 4,300 digits, and one such cell must
    drop its row, never fail the run (a11/a12: an error on one neighbour)."""
    digits = spelled.lstrip("+-").lstrip("0") or "0"
    limit = str(INT_LIMIT)
    return len(digits) < len(limit) or (len(digits) == len(limit) and digits <= limit)


def _nums(text: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    spelled = _numpy_bool(pc.match_substring_regex(text, _NUM_TEXT))
    not_finite = np.zeros(len(text), dtype=bool)
    if not spelled.all():
        words = pc.utf8_lower(pc.utf8_ltrim(text, characters="+-"))
        not_finite = _numpy_bool(pc.is_in(words, value_set=pa.array(["inf", "infinity", "nan"])))
    cleaned = pc.if_else(pa.array(spelled), _without_plus(text), "0")
    values = cleaned.cast(pa.float64()).to_numpy(zero_copy_only=False) + 0.0  # -0 reads as 0
    finite = np.isfinite(values) & ~not_finite  # 1e400 overflows to inf: not finite either
    return np.where(finite, values, 0.0), spelled | not_finite, finite


def _without_plus(text: pa.Array) -> pa.Array:
    """Arrow's integer cast rejects a leading `+`; the data may have one."""
    plus = pc.starts_with(text, "+")
    if not pc.any(plus).as_py():
        return text
    return pc.if_else(plus, pc.utf8_slice_codeunits(text, 1), text)


def _from_floats(column: pa.Array, kind: str) -> Cells:
    values = column.to_numpy(zero_copy_only=False).astype(np.float64)
    finite = np.isfinite(values)
    problems = np.zeros(values.size, dtype=np.uint8)
    if kind == "num":
        problems[~finite] = OUT_OF_RANGE
        return Cells(np.where(finite, values, 0.0) + 0.0, problems)
    if kind == "bool":  # 0.0 and 1.0 as an int column's 0 and 1; any other value does not fit
        problems[~((values == 0.0) | (values == 1.0))] = WRONG_TYPE
        return Cells(values == 1.0, problems)
    whole = finite & (np.floor(np.where(finite, values, 0.0)) == np.where(finite, values, 0.0))
    in_range = whole & (np.abs(np.where(whole, values, 0.0)) < 2.0**63)
    problems[~whole] = WRONG_TYPE
    problems[whole & ~in_range] = OUT_OF_RANGE
    return Cells(np.where(in_range, values, 0.0).astype(np.int64), problems)


def _from_integers(column: pa.Array, kind: str) -> Cells:
    problems = np.zeros(len(column), dtype=np.uint8)
    if kind == "num" and pa.types.is_unsigned_integer(column.type) and column.type.bit_width == 64:
        return Cells(column.cast(pa.float64(), safe=False).to_numpy(zero_copy_only=False), problems)  # a uint64: a num
    if pa.types.is_unsigned_integer(column.type) and column.type.bit_width == 64:
        too_big = _numpy_bool(pc.greater(column, pa.scalar(INT_LIMIT, pa.uint64())))
        problems[too_big] = OUT_OF_RANGE
        column = pc.if_else(pa.array(too_big), pa.scalar(0, pa.uint64()), column)
    values = column.cast(pa.int64()).to_numpy(zero_copy_only=False)
    if kind == "int":  # -2^63 lies beyond the runtime's range (|n| > 2^63 - 1), as in a CSV cell
        lowest = (values == -INT_LIMIT - 1) & (problems == OK)
        problems[lowest] = OUT_OF_RANGE
        values = np.where(lowest, 0, values)
    if kind == "num":
        return Cells(values.astype(np.float64), problems)
    if kind == "bool":
        problems[(problems == OK) & (values != 0) & (values != 1)] = WRONG_TYPE
        return Cells(values == 1, problems)
    return Cells(values, problems)


# ---------------------------------------------------------------- the fast path for numbers

#: Whether `parse_text` may take the fast path (tests turn it off to compare).
FAST_NUMBERS = True
#: The characters of a plain number of each kind. A cell spelled only with
#: them needs no trimming (no whitespace), is ASCII (valid UTF-8), and is a
#: number exactly when pyarrow's cast accepts it: within these characters
#: the cast's grammar (fast_float's) is the reference's pattern,
#: [+-]?(d+.?d*|.d+)([eE][+-]?d+)? for `num` and -?d+ for `int` (a `+`
#: before an int goes to the reference, which strips it). The values are
#: the same cast's.
_PLAIN = {"num": b"0123456789.eE+-", "int": b"0123456789-"}


@cache
def _plain_bytes(kind: str) -> np.ndarray:
    """Which byte values are the kind's plain characters (a 256-entry mask)."""
    return np.isin(np.arange(256), np.frombuffer(_PLAIN[kind], dtype=np.uint8))

_INT64_MIN = -(2**63)


def _fast_numbers(column: pa.Array, kind: str) -> Cells | None:
    """The cells of a text column of numbers; None when the reference must
    read the whole column (nulls, or a plain-looking cell the cast refuses)."""
    column = _decoded(column)
    if column.null_count or not (_is_binary(column.type) or pa.types.is_string(column.type)
                                 or pa.types.is_large_string(column.type)):
        return None
    plain = _plain_cells(column, kind)
    if plain.all():
        return _cast_plain(column, kind)
    chosen = np.flatnonzero(plain)
    others = np.flatnonzero(~plain)
    fast = _cast_plain(column.take(pa.array(chosen)), kind) if chosen.size else None
    if chosen.size and fast is None:
        return None
    slow = parse_text_reference(column.take(pa.array(others)), kind)
    values = np.empty(len(column), dtype=slow.values.dtype)
    problems = np.empty(len(column), dtype=np.uint8)
    values[others], problems[others] = slow.values, slow.problems
    if fast is not None:
        values[chosen], problems[chosen] = fast.values, fast.problems
    return Cells(values, problems)


def _plain_cells(column: pa.Array, kind: str) -> np.ndarray:
    """Which cells are non-empty and spelled with the kind's characters only."""
    if len(column) == 0:
        return np.zeros(0, dtype=bool)
    offsets = np.frombuffer(column.buffers()[1], dtype=_offset_type(column))[column.offset : column.offset + len(column) + 1]
    plain = offsets[1:] > offsets[:-1]
    data = column.buffers()[2]
    first, last = int(offsets[0]), int(offsets[-1])
    if data is None or not bytes(memoryview(data)[first:last]).translate(None, _PLAIN[kind]):
        return plain  # every character is a plain one (bytes.translate deletes them at C speed)
    outside = ~_plain_bytes(kind)[np.frombuffer(data, dtype=np.uint8)[first:last]]
    where = np.flatnonzero(outside) + first  # the cells holding another character
    return plain & ((np.searchsorted(where, offsets[1:]) - np.searchsorted(where, offsets[:-1])) == 0)


def _offset_type(column: pa.Array) -> type:
    wide = pa.types.is_large_binary(column.type) or pa.types.is_large_string(column.type)
    return np.int64 if wide else np.int32


def _cast_plain(column: pa.Array, kind: str) -> Cells | None:
    """Plain cells, converted by the reference's own cast; None if the cast
    refuses one of them (the reference then reads the column)."""
    wide = _offset_type(column) is np.int64
    text = column.view(pa.large_string() if wide else pa.string())  # ASCII: valid UTF-8
    try:
        values = text.cast(pa.float64() if kind == "num" else pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    problems = np.zeros(len(values), dtype=np.uint8)
    if kind == "num":
        finite = np.isfinite(values)
        if not finite.all():
            problems[~finite] = OUT_OF_RANGE  # 1e400 overflows: not finite
            values = np.where(finite, values, 0.0)
        return Cells(values + 0.0, problems)  # -0 reads as 0
    too_big = values == _INT64_MIN  # |n| > 2^63 - 1: beyond what the runtime accepts
    if too_big.any():
        problems[too_big] = OUT_OF_RANGE
        values = np.where(too_big, 0, values)
    return Cells(values, problems)


# ---------------------------------------------------------------- helpers


def as_text(column: pa.Array, legacy: str | None = None) -> pa.Array:
    """A text or binary column as UTF-8 strings, every cell that is null
    emptied, and so is every cell that is not UTF-8 -- or, given a `legacy`
    encoding (`cp1252`, Excel's), such a cell decoded from it (a byte it
    does not define as Latin-1): how the content key reads text (s29: a
    cp1252 CSV and its copy re-saved as UTF-8 are the same rows)."""
    text, valid = _as_text(column)
    if legacy is None or valid.all():
        return text
    raw = _decoded(column)
    if not _is_binary(raw.type):
        raw = raw.view(pa.binary() if pa.types.is_string(raw.type) else pa.large_binary())
    cells = text.to_pylist()
    for row in np.flatnonzero(~valid):
        cells[row] = _legacy_text(raw[int(row)].as_py() or b"", legacy)
    return pa.array(cells, pa.large_string())


def _legacy_text(cell: bytes, encoding: str) -> str:
    """Bytes decoded from a legacy single-byte encoding; a byte it leaves
    undefined (cp1252's 0x81, 0x8D, ...) read as Latin-1."""
    return "".join(cell[i:i + 1].decode(encoding, errors="replace").replace("\ufffd", chr(cell[i]))
                   for i in range(len(cell)))


def _as_text(column: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The column as UTF-8 strings (null and invalid cells emptied: a null
    is then missing) and which cells were valid UTF-8."""
    column = _decoded(column)
    everywhere = np.ones(len(column), dtype=bool)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        try:  # a Parquet writer need not have checked its strings
            column.validate(full=True)
            return column.fill_null(""), everywhere
        except pa.ArrowInvalid:
            column = column.view(pa.binary() if pa.types.is_string(column.type) else pa.large_binary())
    binary = column.cast(pa.large_binary()) if not pa.types.is_large_binary(column.type) else column
    try:
        return binary.cast(pa.large_string()).fill_null(""), everywhere
    except pa.ArrowInvalid:  # some cell is not UTF-8: find which, one by one
        cells = [cell or b"" for cell in binary.to_pylist()]
        valid = np.array([_utf8(cell) for cell in cells], dtype=bool)
        cleaned = pa.array([cell if ok else b"" for cell, ok in zip(cells, valid, strict=True)], pa.large_binary())
        return cleaned.cast(pa.large_string()), valid


def _utf8(cell: bytes) -> bool:
    try:
        cell.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _decoded(column: pa.Array) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    return column


def _is_binary(arrow_type: pa.DataType) -> bool:
    return pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)


def _numpy_bool(array: pa.Array) -> np.ndarray:
    return np.asarray(array.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _with_missing(cells: Cells, missing: np.ndarray) -> Cells:
    problems = cells.problems.copy()
    problems[missing] = MISSING
    return Cells(cells.values, problems)
