"""The privacy events of a program's definitions, from the checker."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fuzzpy.accounting.events import Event


class CostsUnavailable(LookupError):
    """No such definition (FZ702), or the checker is not available (FZ700)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def program_costs(
    path: str, definition: str | None = None
) -> list[tuple[str, str, tuple[Event, ...]]]:
    """(definition, database parameter, events) for every private release in
    the file, or in ``definition`` only. Parse and type errors raise FuzzError."""
    try:
        from fuzzpy.checker import check_program
        from fuzzpy.release.pipeline import load_source, parse
    except ImportError as exc:  # the checker is built by another phase
        raise CostsUnavailable(f"the checker is not available: {exc}", "FZ700") from None
    checked = check_program(parse(load_source(path)))
    if definition is not None and definition not in checked.definitions:
        known = ", ".join(sorted(checked.definitions)) or "none"
        raise CostsUnavailable(f"no definition `{definition}` in {path} (definitions: {known})", "FZ702")
    if definition is not None and checked.definitions[definition].static_params:
        static = ", ".join(checked.definitions[definition].static_params)
        raise CostsUnavailable(
            f"`{definition}` has no single cost: it depends on its parameter(s) {static} (`fuzzpy check` shows "
            f"the expression); quote a run with `fuzzpy run --arg NAME=VALUE` or call it from a definition",
            "FZ702",
        )
    # a definition with static parameters has a cost only at numbers: its
    # callers' costs include it at theirs
    names = [definition] if definition is not None else [n for n, d in checked.definitions.items() if not d.static_params]
    return [
        (name, param, tuple(events))
        for name in names
        for param, events in checked.definitions[name].privacy.items()
    ]
