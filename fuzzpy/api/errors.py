"""The exceptions of the Python API (`fuzzpy.api`).

Every failure is a `fuzzpy.FuzzError` carrying the diagnostics the CLI
prints and the exit code it exits with; the subclass says which kind it is:

* `Rejected` (exit 1): a syntax, type, privacy or verification failure;
* `InvalidInput` (exit 2): a usage, I/O or data problem;
* `BudgetExceeded` (exit 3): refused by the budget ledger.

`str()` renders the diagnostics as the CLI does (code, span, the source
line underlined, notes and hint).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from fuzzpy.language.diagnostics import (
    EXIT_BUDGET,
    EXIT_REJECTED,
    EXIT_USAGE,
    Diagnostic,
    FuzzError,
    render_all,
)
from fuzzpy.language.source import Source


class ProgramError(FuzzError):
    """A `FuzzError` raised by the API: its exit code, and the sources its
    diagnostics point into (for rendering). ``report`` is what was found
    before the failure, if anything (a `CheckReport` of a program rejected
    only at the requested delta, the verdicts decided before a malformed
    mechanism)."""

    fixed_exit_code = EXIT_REJECTED

    def __init__(
        self,
        diagnostics: Sequence[Diagnostic],
        sources: Mapping[str, Source] | None = None,
        report: object = None,
    ) -> None:
        super().__init__(tuple(diagnostics))
        self.sources = dict(sources or {})
        self.report = report

    @property
    def exit_code(self) -> int:
        return self.fixed_exit_code

    def __str__(self) -> str:
        return render_all(self.diagnostics, self.sources)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.diagnostics, self.sources))


class Rejected(ProgramError):
    """The program, or the request, was rejected (exit 1)."""

    fixed_exit_code = EXIT_REJECTED


class InvalidInput(ProgramError):
    """A usage, I/O or data problem (exit 2)."""

    fixed_exit_code = EXIT_USAGE


class BudgetExceeded(ProgramError):
    """Refused by the budget ledger (exit 3): nothing was charged."""

    fixed_exit_code = EXIT_BUDGET


_BY_EXIT_CODE: dict[int, type[ProgramError]] = {
    EXIT_REJECTED: Rejected,
    EXIT_USAGE: InvalidInput,
    EXIT_BUDGET: BudgetExceeded,
}


def api_error(
    error: FuzzError, sources: Mapping[str, Source] | None = None, report: object = None
) -> ProgramError:
    """``error`` as the API raises it: the subclass of its exit code."""
    if isinstance(error, ProgramError) and sources is None and report is None:
        return error
    kind = _BY_EXIT_CODE.get(error.exit_code, Rejected)
    return kind(error.diagnostics, sources if sources is not None else getattr(error, "sources", None), report)


#: a command-line option in a hint, as a keyword argument of `Program.run`/`quote` (issue 31)
_AS_KEYWORDS = (
    # FZ545/FZ541 name the data to give (issue 31, F8: `--data PARAM=penguins` was shown in Python)
    (re.compile(r"--data (\w+)=([^\s,;)]+)"), r'data={"\1": "\2"}'),
    (re.compile(r"--dataset (\w+)=([^\s,;)]+)"), r'datasets={"\1": "\2"}'),
    (re.compile(r"--budget EPS,DELTA"), "budget=(EPS, DELTA)"),
    # a pair is a tuple in Python (review s29c: `budget=2.255,1e-05` is not Python)
    (re.compile(r"--budget (EPS|[0-9][^\s,;)]*),([0-9][^\s,;)]*[0-9.])"), r"budget=(\1, \2)"),
    (re.compile(r"--budget EPS\b"), "budget=EPS"),
    (re.compile(r"pass another file with --ledger or set FUZZPY_LEDGER"), "pass another file as ledger="),
    (re.compile(r"--(budget|delta|seed) ([0-9][^\s,;)]*(?:,[0-9][^\s;)]*)?)"), r"\1=\2"),
    (re.compile(r"at --delta,"), "at `delta=`,"),
    (re.compile(r"raise --budget \("), "raise budget= ("),
    (re.compile(r"--(ledger|rule|engine) ([^\s,;)]+)"), r'\1="\2"'),
    (re.compile(r"--(budget|delta|seed|ledger|rule|engine)\b(?= to\b)"), r"\1"),
    (re.compile(r"--(budget|delta|seed|ledger|rule|engine)\b"), r"\1="),
)


def in_python(error: ProgramError) -> ProgramError:
    """``error`` with the options its hints and notes name spelled as the
    Python API's keyword arguments (`budget=1`, not `--budget 1`)."""

    def spelled(text: str | None) -> str | None:
        if text is None:
            return None
        for pattern, replacement in _AS_KEYWORDS:
            text = pattern.sub(replacement, text)
        return text

    diagnostics = [replace(d, hint=spelled(d.hint), notes=tuple(spelled(n) or "" for n in d.notes))
                   for d in error.diagnostics]
    if diagnostics == list(error.diagnostics):
        return error
    return type(error)(diagnostics, error.sources, error.report)
