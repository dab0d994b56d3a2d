"""Diagnostics as data, and their text and JSON renderings.

Detection (every phase) builds `Diagnostic` values; this module only renders
them. A phase that fails raises `FuzzError` carrying its diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fuzzpy.language.source import Source, Span
from fuzzpy.support.records import frozen


@frozen
class Label:
    """A secondary span with a short note ("db is used here (1)")."""

    span: Span
    message: str


@frozen
class Diagnostic:
    code: str
    message: str
    span: Span
    severity: str = "error"  # "error" | "warning"
    labels: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    hint: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "span": self.span.to_json(),
            "labels": [
                {"message": label.message, "span": label.span.to_json()}
                for label in self.labels
            ],
            "notes": list(self.notes),
            "hint": self.hint,
        }


#: Exit codes (language design, section 4): accepted / done, rejected
#: (syntax, type, privacy or verification failure), usage or I/O error,
#: refused by the budget ledger.
EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_BUDGET = 0, 1, 2, 3


def exit_code_for(diagnostics: Iterable[Diagnostic]) -> int:
    """Usage/I-O codes (FZ5xx data, FZ7xx usage) exit 2; budget (FZ6xx) 3; else 1."""
    codes = {d.code for d in diagnostics if d.severity == "error"}
    if not codes:
        return EXIT_OK
    if any(c.startswith("FZ6") for c in codes):
        return EXIT_BUDGET
    if any(c.startswith(("FZ5", "FZ7")) for c in codes):
        return EXIT_USAGE
    return EXIT_REJECTED


@dataclass
class FuzzError(Exception):
    """Raised by a phase that rejects its input; carries the reasons.

    ``exit_code`` is the one the CLI exits with for them (read off the
    codes; a subclass may fix it, as `fuzzpy.release.run.Refusal` does)."""

    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        super().__init__("; ".join(d.message for d in self.diagnostics))

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.diagnostics)


#: Pseudo-files of diagnostics that point at no source (usage, internal).
_NOWHERE = frozenset({"<builtin>", "<command line>"})


def render_text(
    diagnostic: Diagnostic, sources: Mapping[str, Source] | None = None
) -> str:
    """Render one diagnostic in the rustc/Elm style:

        error[FZ201]: message
          --> file:line:col
           |
        12 |   source line
           |   ^^^^^
           = note: ...
           = hint: ...
    """
    span = diagnostic.span
    lines = [f"{diagnostic.severity}[{diagnostic.code}]: {diagnostic.message}"]
    if span.file not in _NOWHERE:  # line 0: a whole file (a ledger), not a place in it
        lines.append(f"  --> {span.file}:{span.line}:{span.col}" if span.line else f"  --> {span.file}")
    source = (sources or {}).get(span.file)
    gutter = len(str(max([span.line, *(lab.span.line for lab in diagnostic.labels)])))
    pad = " " * gutter
    if source is not None:
        lines.append(f"{pad} |")
        marks = [_Mark(span, "^", "")]
        for label in diagnostic.labels:
            if label.span.file == span.file:
                marks.append(_Mark(label.span, "-", label.message))
            else:
                lines.append(f"{pad} = {label.span}: {label.message}")
        lines.extend(_snippets(source, marks, gutter))
    for note in diagnostic.notes:
        lines.append(f"{pad} = note: {note}")
    if diagnostic.hint:
        lines.append(f"{pad} = hint: {diagnostic.hint}")
    return "\n".join(lines)


@frozen
class _Mark:
    span: Span
    char: str
    message: str


def _snippets(source: Source, marks: list[_Mark], gutter: int) -> list[str]:
    """Each source line once, in order, with every mark on it underlined.

    Marks that do not overlap share an underline row (the primary mark's row
    first); the rightmost mark's message follows its underline and the others'
    go on lines of their own below, starting at their column (rustc style).
    """
    by_line: dict[int, list[_Mark]] = {}
    for mark in marks:
        by_line.setdefault(mark.span.line, []).append(mark)
    out: list[str] = []
    for number in sorted(by_line):
        text = source.line_text(number).replace("\t", " ")
        out.append(f"{number:>{gutter}} | {text}")
        for row in _rows(by_line[number], text):
            out.extend(_underline_row(row, text, gutter))
    return out


def _rows(marks: list[_Mark], text: str) -> list[list[_Mark]]:
    rows: list[list[_Mark]] = []
    for mark in marks:  # primary first, labels in their given order
        start, width = _extent(mark.span, text)
        for row in rows:
            if all(_disjoint((start, width), _extent(m.span, text)) for m in row):
                row.append(mark)
                break
        else:
            rows.append([mark])
    return rows


def _disjoint(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] + a[1] <= b[0] or b[0] + b[1] <= a[0]


def _underline_row(row: list[_Mark], text: str, gutter: int) -> list[str]:
    on_row = sorted(row, key=lambda m: m.span.col)
    underline: list[str] = []
    for mark in on_row:
        start, width = _extent(mark.span, text)
        underline.extend(" " * max(0, start + width - len(underline)))
        underline[start : start + width] = mark.char * width
    last = on_row[-1]
    suffix = f" {last.message}" if last.message else ""
    lines = [f"{' ' * gutter} | {''.join(underline).rstrip()}{suffix}"]
    for mark in reversed(on_row[:-1]):
        if mark.message:
            start, _ = _extent(mark.span, text)
            lines.append(f"{' ' * gutter} | {' ' * start}{mark.message}")
    return lines


def _extent(span: Span, text: str) -> tuple[int, int]:
    """0-based start column and width of a span's underline on its first line."""
    start = max(span.col, 1) - 1
    if span.end_line == span.line:
        width = max(span.end_col - span.col, 1)
    else:
        width = max(len(text) - start, 1)
    return start, width


def render_all(
    diagnostics: Iterable[Diagnostic], sources: Mapping[str, Source] | None = None
) -> str:
    return "\n\n".join(render_text(d, sources) for d in diagnostics)
