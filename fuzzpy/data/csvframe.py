"""A CSV file's bytes as a header and one record per line.

Why a record is one physical line: in CSV a quoted value may span lines, so a
row whose quote never closes swallows every row after it. The rows of the
file would then not be each individual's own: one person's bad value could
remove or merge the rows of others, and dropping a bad row would no longer be
a 1-stable transformation (McSherry, "Privacy Integrated Queries", SIGMOD
2009, section 4). So a line on which a quoted value does not close, or which
holds a carriage return other than the one before its newline, is malformed:
it is dropped on its own and everything else is framed as before. Blank
lines are not records (pyarrow skips them too).

Only the header is public (the schema); the records are private and never
make loading fail.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from dataclasses import field

from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import Span
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

pa = lazy("pyarrow")
np = lazy("numpy")

pc = lazy("pyarrow.compute")

UTF8_BOM = b"\xef\xbb\xbf"
_FIELD = r'(?:"(?:[^"\r\n]|"")*"|[^",\r\n][^,\r\n]*|)'
#: One well-formed CSV line (RFC 4180 fields, quotes closed on the line),
#: with its line end. Unquoted fields may hold quotes after their first
#: character (`5'11"`), as pyarrow reads them.
WELL_FORMED_LINE = rf"^{_FIELD}(?:,{_FIELD})*\r?\n?$"
_QUOTED_FIELD = r'(^|,)"(?:[^"]|"")*"'  # in a well-formed line, a quoted value starts a field
#: `WELL_FORMED_LINE` in Python's `re`, for the one header line (RE2 through
#: pyarrow would import pyarrow and pandas for it, issue 24); the pattern has
#: no construct the two engines read apart (tests: the same verdicts).
_WELL_FORMED_HEADER = re.compile(WELL_FORMED_LINE.encode("ascii"))


def schema_error(
    code: str, message: str, path: str, line: int = 1, hint: str | None = None, col: int = 1
) -> FuzzError:
    return FuzzError((Diagnostic(code, message, Span(path, line, col, line, col), hint=hint),))


def unreadable_file(name: str, exc: OSError) -> FuzzError:
    """FZ501 for a data file that cannot be read; for one that does not
    exist, the closest name in its folder (issue 31: did you mean)."""
    hint = _close_file(name) if isinstance(exc, FileNotFoundError) else None
    return schema_error("FZ501", f"cannot read data file `{name}`: {exc.strerror or exc}", name, hint=hint)


def _close_file(name: str) -> str | None:
    import difflib
    import os

    folder, base = os.path.split(name)
    try:
        here = [entry for entry in os.listdir(folder or ".") if entry.lower().endswith((".csv", ".parquet", ".pq"))]
    except OSError:
        return None
    close = difflib.get_close_matches(base, here, n=1, cutoff=0.6)
    return f"did you mean `{os.path.join(folder, close[0])}`?" if close else None


#: A delimiter other than the comma, and its name, as a header written with
#: it reads: one column whose name holds it.
_OTHER_DELIMITERS = ((";", "semicolons"), ("\t", "tabs"), ("|", "vertical bars"))


def columns_hint(names: tuple[str, ...] | list[str]) -> str:
    """The file's columns, for a diagnostic that a column is missing; a
    header that is one column holding `;`, tabs or `|` is said to be
    separated by them (fuzzpy reads comma-separated files; issue 31)."""
    listed = "the file's columns are: " + ", ".join(f"`{n}`" for n in names)
    if len(names) == 1:
        for delimiter, word in _OTHER_DELIMITERS:
            if delimiter in names[0]:
                return (f"{listed}; its header looks separated by {word}, and fuzzpy reads comma-separated "
                        "files: save it with commas (e.g. pandas.read_csv(path, sep=...).to_csv(new, index=False))")
    return listed


@frozen
class CsvFrame:
    """The header and the well-formed data lines of a CSV file.

    `frame` leaves in `body` the lines with another number of fields than
    the header (ragged), which the reader of the records finds at once when
    there are none; `without_ragged` drops them (and says which they were)."""

    names: tuple[str, ...]  # the header's column names, whitespace trimmed
    header_line: int
    body: bytes  # the records' lines, in order (blank lines may remain)
    record_lines: np.ndarray  # 1-based line of each record of `body`
    malformed_lines: np.ndarray  # 1-based lines dropped as malformed
    ragged_lines: np.ndarray  # 1-based lines dropped for another number of fields than the header's
    ragged_fields: np.ndarray  # the number of fields of each
    _data: bytes = field(repr=False)
    _starts: np.ndarray = field(repr=False)
    _stops: np.ndarray = field(repr=False)
    _ends: np.ndarray = field(repr=False)
    _suspect: np.ndarray = field(repr=False)

    @property
    def longest_record(self) -> int:
        """The length in bytes of the longest record's line (with its line end)."""
        if self.record_lines.size == 0:
            return 0
        rows = self.record_lines - 1
        return int((self._ends[rows] - self._starts[rows]).max())

    def line_bytes(self, line: int) -> bytes:
        """The text of a 1-based line, without its line end."""
        return self._data[int(self._starts[line - 1]) : int(self._stops[line - 1])]

    def without_ragged(self) -> CsvFrame:
        """The frame with its ragged lines dropped from the records."""
        rows = self.record_lines - 1
        fields = _field_counts(self._data, self._starts, self._ends, rows, self._suspect)
        ragged = fields != len(self.names)
        if not ragged.any():
            return self
        dropped = np.sort(np.concatenate((self.malformed_lines - 1, rows[ragged])))
        body = _without(self._data, int(self._ends[self.header_line - 1]), self._starts[dropped], self._ends[dropped])
        return dataclasses.replace(
            self, body=body, record_lines=rows[~ragged] + 1,
            ragged_lines=np.concatenate((self.ragged_lines, rows[ragged] + 1)),
            ragged_fields=np.concatenate((self.ragged_fields, fields[ragged])),
        )


def frame(data: bytes, path: str) -> CsvFrame:
    """Split `data` into lines; refuse (FZ502, FZ505) only for the header."""
    starts, ends, stops = _lines(data)
    nonblank = np.flatnonzero(stops > starts)
    if nonblank.size == 0:
        raise schema_error("FZ502", f"data file `{path}` is empty", path,
                           hint="the first line must name the columns")
    header = int(nonblank[0])
    names = _header_names(data[starts[header] : ends[header]], path, header + 1)
    rows = nonblank[1:]
    suspect = _has_quote_or_inner_cr(data, starts, ends, int(ends[header]))
    well_formed = _well_formed(data, starts, ends, rows, suspect)
    malformed = rows[~well_formed]
    kept = rows[well_formed]
    body_start = int(ends[header])
    body = data[body_start:] if malformed.size == 0 else _without(data, body_start, starts[malformed], ends[malformed])
    none = np.zeros(0, dtype=np.int64)
    return CsvFrame(names, header + 1, body, kept + 1, malformed + 1, none, none, data, starts, stops, ends, suspect)


def _lines(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each line's start, its end (past its newline) and the end of its text
    (before a CR LF or LF)."""
    first = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    raw = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(raw == 10)
    newlines = newlines[newlines >= first]
    starts = np.concatenate(([first], newlines + 1)).astype(np.int64)
    ends = np.concatenate((newlines + 1, [len(data)])).astype(np.int64)
    if starts[-1] == len(data) and starts.size > 1:  # nothing after the last newline
        starts, ends = starts[:-1], ends[:-1]
    stops = ends.copy()
    has_newline = (stops > starts) & (raw[np.maximum(stops - 1, 0)] == 10) if raw.size else stops > starts
    stops -= has_newline
    has_cr = (stops > starts) & (raw[np.maximum(stops - 1, 0)] == 13) if raw.size else stops > starts
    stops -= has_cr
    return starts, ends, stops


def _header_names(line: bytes, path: str, number: int) -> tuple[str, ...]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise schema_error("FZ505", f"the header of `{path}` (line {number}) is not UTF-8 text", path,
                           number) from None
    if _WELL_FORMED_HEADER.fullmatch(line) is None:
        raise schema_error("FZ505", f"the header of `{path}` (line {number}) is not a CSV line "
                           "(a quote does not close, or a carriage return is inside it)", path, number)
    row = next(csv.reader([text.rstrip("\r\n")]), [])
    return tuple(name.strip() for name in row) or ("",)


def _line_array(data: bytes, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray) -> pa.Array:
    """The chosen lines as a binary array. Every line runs from its start to
    the next line's start, so all lines are the elements of one array over
    `data` itself (no copy), from which the chosen ones are taken."""
    offsets = np.concatenate((starts, ends[-1:])).astype(np.int64)
    lines = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), starts.size, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    return lines.take(pa.array(rows))


def _well_formed(
    data: bytes, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray, suspect: np.ndarray
) -> np.ndarray:
    """Whether each chosen line is a well-formed CSV line. A line without a
    quote or an inner carriage return is one; the others are matched
    against `WELL_FORMED_LINE`."""
    result = np.ones(rows.size, dtype=bool)
    checked = rows[suspect[rows]]
    if checked.size:
        matches = pc.match_substring_regex(_line_array(data, starts, ends, checked), WELL_FORMED_LINE)
        result[np.searchsorted(rows, checked)] = np.asarray(matches.to_numpy(zero_copy_only=False), dtype=bool)
    return result


def _field_counts(
    data: bytes, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray, suspect: np.ndarray
) -> np.ndarray:
    """The number of fields of each chosen well-formed line: its commas plus
    one, not counting the commas inside quoted values."""
    counts = _per_line(np.frombuffer(data, dtype=np.uint8) == 44, starts[rows], ends[rows]) + 1
    quoted = np.flatnonzero(suspect[rows])
    if quoted.size:
        lines = _line_array(data, starts, ends, rows[quoted])
        unquoted = pc.replace_substring_regex(lines, _QUOTED_FIELD, r"\1")  # each quoted value emptied
        counts[quoted] = np.asarray(pc.count_substring(unquoted, ",").to_numpy(zero_copy_only=False)) + 1
    return counts


def _has_quote_or_inner_cr(data: bytes, starts: np.ndarray, ends: np.ndarray, body: int = 0) -> np.ndarray:
    """Per line: does it hold a quote, or a carriage return not just before
    its newline? (Lines before the byte `body` are not asked about.)"""
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size == 0 or starts.size == 0 or (data.find(b'"', body) < 0 and data.find(b"\r", body) < 0):
        return np.zeros(starts.size, dtype=bool)
    quotes = _per_line(raw == 34, starts, ends)
    returns = _per_line(raw == 13, starts, ends)
    last = raw[ends - 1]
    before_last = raw[np.maximum(ends - 2, starts)]
    final_return = (last == 13) | ((last == 10) & (ends - 2 >= starts) & (before_last == 13))
    return (quotes > 0) | (returns > final_return)


def _per_line(mask: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many bytes of each line [start, end) the mask marks."""
    marked = np.flatnonzero(mask)
    return np.searchsorted(marked, ends) - np.searchsorted(marked, starts)


def _without(data: bytes, begin: int, starts: np.ndarray, ends: np.ndarray) -> bytes:
    """`data[begin:]` with the byte ranges [starts, ends) removed."""
    marks = np.zeros(len(data) + 1, dtype=np.int64)
    np.add.at(marks, starts, 1)
    np.add.at(marks, ends, -1)
    removed = np.cumsum(marks[:-1]) > 0
    keep = ~removed
    keep[:begin] = False
    return np.frombuffer(data, dtype=np.uint8)[keep].tobytes()


def field_column(line: bytes, index: int) -> int:
    """1-based character column where field `index` of a line starts (1 if
    the line has fewer fields)."""
    text = line.decode("utf-8", errors="replace")
    position = 0
    for _ in range(index):
        if text.startswith('"', position):  # a quoted field: skip to its closing quote
            position += 1
            while position < len(text):
                if text[position] == '"' and not text.startswith('"', position + 1):
                    break
                position += 2 if text[position] == '"' else 1
        comma = text.find(",", position)
        if comma < 0:
            return 1
        position = comma + 1
    return position + 1
