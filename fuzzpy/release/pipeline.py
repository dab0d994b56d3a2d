"""The short chain of phases, shared by the CLI and the Python API.

    text --parse--> Program --check--> Checked --verify--> Verdicts --run--> values

Each phase is a function from one representation to the next that either
returns its result or raises `FuzzError` with that phase's diagnostics.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN, Source, Span
from fuzzpy.language.syntax import Program

if TYPE_CHECKING:
    from fuzzpy.checker.result import CheckedProgram


def load_source(path: str | os.PathLike[str]) -> Source:
    """Read a source file; unreadable or non-UTF-8 files become diagnostics."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise FuzzError((Diagnostic("FZ701", f"cannot read `{name}`: {reason}", _file_span(name)),)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        source = Source(name, data[: exc.start].decode("utf-8", errors="replace"))
        span = source.span(exc.start, exc.start)
        raise FuzzError(
            (
                Diagnostic(
                    "FZ100",
                    f"the file is not valid UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                    Span(name, span.line, span.col, span.line, span.col + 1, exc.start, exc.start + 1),
                    hint="save the file as UTF-8",
                ),
            )
        ) from None
    return Source(name, text)


def _file_span(name: str) -> Span:
    return Span(name, 1, 1, 1, 1) if name else NO_SPAN


def parse(source: Source) -> Program:
    from fuzzpy.frontend.parser import parse_program

    return parse_program(source.text, source.name)


def check(program: Program) -> CheckedProgram:
    """Types, sensitivities and privacy costs; FuzzError (FZ2xx/FZ3xx) with
    every error found."""
    from fuzzpy.checker import check_program

    return check_program(program)


def verify(program: Program) -> list:
    """A `Verdict` for every `mechanism` of the program, in order (cached per
    mechanism). Raises FuzzError (FZ4xx) when a mechanism is malformed."""
    from fuzzpy.checker.scope import verify_mechanism
    from fuzzpy.language.syntax import MechanismDecl

    return [verify_mechanism(d, program) for d in program.decls if isinstance(d, MechanismDecl)]


def run(
    checked: CheckedProgram,
    definition: str,
    arguments: dict[str, object],
    seed: int | None = None,
) -> object:
    """Apply a checked definition to its arguments (bags from
    `fuzzpy.data.loader.load_bag`, public values as Python numbers) and
    sample its `fuzzy` result with the exact samplers (`seed`: reproducible,
    not private). Charges no budget: `fuzzpy run` (`fuzzpy.release.run`)
    puts the ledger around this phase. Raises FuzzError (FZ5xx) on failure."""
    from fuzzpy.release.run import compute
    from fuzzpy.runtime.randomness import SecureSource, SeededSource

    if definition not in checked.definitions:
        raise FuzzError((Diagnostic("FZ521", f"the program has no definition `{definition}`", NO_SPAN),))
    source = SecureSource() if seed is None else SeededSource(seed)
    return compute(checked, checked.definitions[definition], arguments, source, lambda message: None)
