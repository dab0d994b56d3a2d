"""The checker's internal error: one diagnostic that stops checking one `def`.

Type errors abort the definition they occur in (nothing sensible follows);
sensitivity and privacy errors are collected and checking goes on, so that a
run reports every problem it can find.
"""

from __future__ import annotations

from collections.abc import Sequence

from fuzzpy.language.diagnostics import Diagnostic, Label
from fuzzpy.language.source import NO_SPAN, Span


class CheckError(Exception):
    def __init__(
        self,
        code: str,
        message: str,
        span: Span | None,
        hint: str | None = None,
        labels: Sequence[Label] = (),
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.diagnostic = Diagnostic(
            code, message, span or NO_SPAN, labels=tuple(labels), notes=tuple(notes), hint=hint
        )


class SilentAbort(Exception):
    """Stop checking a definition without a new diagnostic (it calls a
    definition that was already rejected)."""


#: FZ202 for a static parameter given 0: where 0 is allowed (`staircase`'s gamma), a literal at the use is
ZERO_STATIC_HINT = ("where 0 is meant for an argument that allows it (as `staircase[eps, 0]`'s gamma does), write "
                    "the literal 0 at that use instead of passing it through a static parameter")
