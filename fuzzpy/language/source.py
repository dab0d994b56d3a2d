"""Source text, spans, and line/column lookup."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from fuzzpy.support.records import frozen


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open region of a source file; lines and columns count from 1.

    `end_col` is the column just past the last character (exclusive), so a
    one-character span at column 5 has ``col == 5`` and ``end_col == 6``.

    Slotted: the parser makes one per syntax node, and a slotted span takes
    a quarter of the memory of one with a ``__dict__``. `make_span` builds
    one without the frozen ``__init__``'s per-field ``object.__setattr__``.
    """

    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    start: int = 0  # character offset of the first character
    end: int = 0  # character offset just past the last character

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
        }

    def merge(self, other: Span) -> Span:
        """The smallest span covering both (assumes the same file)."""
        first, last = (self, other) if self.start <= other.start else (other, self)
        end_span = self if self.end >= other.end else other
        return Span(
            self.file,
            first.line,
            first.col,
            end_span.end_line,
            end_span.end_col,
            first.start,
            max(self.end, other.end),
        )

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_SPAN = Span("<builtin>", 1, 1, 1, 1)

_new_span = object.__new__
_set_file, _set_line, _set_col, _set_end_line, _set_end_col, _set_start, _set_end = (
    Span.__dict__[name].__set__  # the slots' own descriptors: no frozen check, no Python frame
    for name in ("file", "line", "col", "end_line", "end_col", "start", "end")
)


def make_span(file: str, line: int, col: int, end_line: int, end_col: int, start: int, end: int) -> Span:
    """`Span(file, line, col, end_line, end_col, start, end)`, about twice as fast.

    The same value as the constructor builds (Span has no ``__post_init__``
    and no validation); the parser's tree builder calls this once per node.
    """
    span = _new_span(Span)
    _set_file(span, file)
    _set_line(span, line)
    _set_col(span, col)
    _set_end_line(span, end_line)
    _set_end_col(span, end_col)
    _set_start(span, start)
    _set_end(span, end)
    return span


@frozen
class Source:
    """A named source text with fast offset -> (line, col) conversion."""

    name: str
    text: str
    _line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        for index, char in enumerate(self.text):
            if char == "\n":
                starts.append(index + 1)
        object.__setattr__(self, "_line_starts", tuple(starts))

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return line_index + 1, offset - self._line_starts[line_index] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.position(start)
        end_line, end_col = self.position(end)
        return Span(self.name, line, col, end_line, end_col, start, end)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        if line < 1 or line > len(self._line_starts):
            return ""
        begin = self._line_starts[line - 1]
        end = self.text.find("\n", begin)
        return self.text[begin:] if end == -1 else self.text[begin:end]

    @property
    def line_count(self) -> int:
        return len(self._line_starts)
