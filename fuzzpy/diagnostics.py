"""Diagnostics as data, and their text and JSON renderings.

Detection (every phase) builds `Diagnostic` values; this module only renders
them. A phase that fails raises `FuzzError` carrying its diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fuzzpy.source import Source, Span


@dataclass(frozen=True)
class Label:
    """A secondary span with a short note ("db is used here (1)")."""

    span: Span
    message: str


@dataclass(frozen=True)
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


@dataclass
class FuzzError(Exception):
    """Raised by a phase that rejects its input; carries the reasons."""

    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        super().__init__("; ".join(d.message for d in self.diagnostics))


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
    lines.append(f"  --> {span.file}:{span.line}:{span.col}")
    source = (sources or {}).get(span.file)
    gutter = len(str(max([span.line, *(lab.span.line for lab in diagnostic.labels)])))
    pad = " " * gutter
    if source is not None:
        lines.append(f"{pad} |")
        lines.extend(_snippet(source, span, "", gutter))
        for label in diagnostic.labels:
            if label.span.file == span.file:
                lines.extend(_snippet(source, label.span, label.message, gutter, "-"))
            else:
                lines.append(f"{pad} = {label.span}: {label.message}")
    for note in diagnostic.notes:
        lines.append(f"{pad} = note: {note}")
    if diagnostic.hint:
        lines.append(f"{pad} = hint: {diagnostic.hint}")
    return "\n".join(lines)


def _snippet(
    source: Source, span: Span, message: str, gutter: int, mark: str = "^"
) -> list[str]:
    text = source.line_text(span.line).replace("\t", " ")
    start = max(span.col, 1)
    if span.end_line == span.line:
        width = max(span.end_col - span.col, 1)
    else:
        width = max(len(text) - start + 1, 1)
    underline = " " * (start - 1) + mark * width
    suffix = f" {message}" if message else ""
    return [
        f"{span.line:>{gutter}} | {text}",
        f"{' ' * gutter} | {underline}{suffix}",
    ]


def render_all(
    diagnostics: Iterable[Diagnostic], sources: Mapping[str, Source] | None = None
) -> str:
    return "\n\n".join(render_text(d, sources) for d in diagnostics)
