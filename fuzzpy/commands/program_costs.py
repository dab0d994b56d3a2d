"""The privacy events of a program's definitions, from the checker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fuzzpy.accounting.events import Event


@dataclass(frozen=True)
class Parameterised:
    """The definitions with static parameters: `budget`'s text lines, and
    one JSON document each (`budget --json`'s `parameterised`): the
    parameters, the cost over them (text; None where it is checked at each
    call), why it is checked at each call, and each call's numbers and cost."""

    lines: list[str] = field(default_factory=list)
    documents: list[dict[str, object]] = field(default_factory=list)
    #: per definition, what `budget` says under its row: its declared measure
    #: (`privacy zcdp[delta]`, what `run` charges) and the unchecked
    #: `assume def`s its figures rest on
    notes: dict[str, list[str]] = field(default_factory=dict)
    #: per definition (with static parameters or not), the unchecked `assume
    #: def`s its figures rest on (FZ318): `budget --json`'s "rests_on_unchecked"
    unchecked: dict[str, list[str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.lines)


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
    return costs_and_parameterised(path, definition)[0]


def costs_and_parameterised(
    path: str, definition: str | None = None, delta: float | None = None
) -> tuple[list[tuple[str, str, tuple[Event, ...]]], Parameterised]:
    """`program_costs`, and the lines that describe each definition with
    static parameters (all definitions only): its cost as an expression over
    them and, under it, its cost at each call's numbers in the file."""
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
    names = [definition] if definition is not None else [n for n, d in checked.own_definitions().items() if not d.static_params]
    costs = [
        (name, param, tuple(events))
        for name in names
        for param, events in checked.definitions[name].privacy.items()
    ]
    found = Parameterised() if definition is not None else _parameterised(checked, delta)
    found.notes.update(_notes(checked, names))
    found.unchecked.update({n: list(d.rests_on) for n, d in checked.definitions.items() if d.rests_on})
    return costs, found


def _notes(checked: object, names: list[str]) -> dict[str, list[str]]:
    from fuzzpy.checker.report import assumption_lines, zcdp_figure

    notes: dict[str, list[str]] = {}
    for name in names:
        d = checked.definitions[name]  # type: ignore[attr-defined]
        lines = assumption_lines(checked, d)  # type: ignore[arg-type]
        if d.zcdp_delta is not None:
            charged = ", ".join(f"{zcdp_figure(events, d.zcdp_delta, db).text()} in {db}" for db, events in d.privacy.items())
            lines.insert(0, f"    declares `privacy zcdp[{float(d.zcdp_delta):g}]`: `run` charges {charged} "
                            "(a zcdp-rule dataset: the rho)")
        if lines:
            notes[name] = lines
    return notes


def _parameterised(checked: object, delta: float | None) -> Parameterised:
    from fuzzpy.checker.report import (
        _argument_float,
        assumption_lines,
        instance_lines,
        privacy_figure,
        symbolic_costs,
        symbolic_text,
    )
    from fuzzpy.checker.result import CheckedProgram

    assert isinstance(checked, CheckedProgram)
    found = Parameterised()
    for d in checked.own_definitions().values():
        if not d.static_params:
            continue
        params = ", ".join(d.static_params)
        text = symbolic_text(d) or "no release in a database"
        found.lines.append(f"{d.name:20} parameterised by {params}: {text}")
        found.lines.extend(assumption_lines(checked, d))  # at every number, as a caller's (review s30c)
        found.lines.extend(instance_lines(checked, d, delta) or [f"    (no call in the file gives {params} a number)"])
        found.documents.append({
            "name": d.name,
            "static_params": list(d.static_params),
            "symbolic_privacy": {db: None if cost is None else str(cost) for db, cost in symbolic_costs(d).items()},
            "cost": text,
            "checked_at_each_call": {name: why for name, why in d.deferred},
            "instances": [
                {
                    "values": {name: _argument_float(value) for name, value in instance.values},
                    "exact_values": {name: str(value) for name, value in instance.values},
                    "privacy": {db: privacy_figure(events, delta, db).to_json() for db, events in instance.privacy.items()},
                }
                for instance in checked.instances.get(d.name, ())
            ],
            **({"rests_on_unchecked": list(d.rests_on)} if d.rests_on else {}),
        })
    return found
