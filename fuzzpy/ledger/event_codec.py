"""Privacy events as JSON, exactly: how the ledger stores each release's cost.

Every event class of `fuzzpy.accounting.events` is written as an object
``{"kind": ClassName, field: value, ...}``: exact numbers (`Fraction`) as
``"p/q"`` strings, counts as integers, names as strings, nested bodies as
lists of events. Reading it back gives events equal to the ones written, so a
later composition rule can recompute a release's cost from the ledger.

The codec follows the dataclass fields and their annotations, so an event
kind added to `events.py` (additively) is stored without changes here.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Sequence
from fractions import Fraction
from functools import cache

from fuzzpy.accounting import events as event_module
from fuzzpy.accounting.events import Event

JsonValue = str | int | list["JsonValue"] | dict[str, "JsonValue"]


class EventFormatError(ValueError):
    """Stored event text that does not describe events of this version."""


@cache
def _event_classes() -> dict[str, type]:
    return {cls.__name__: cls for cls in typing.get_args(event_module.Event)}


@cache
def _field_types(cls: type) -> dict[str, object]:
    hints = typing.get_type_hints(cls, vars(event_module))
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _is_event_tuple(annotation: object) -> bool:
    return typing.get_origin(annotation) is tuple


# ---------------------------------------------------------------- writing


def event_to_data(event: Event) -> dict[str, JsonValue]:
    """One event as plain JSON data."""
    cls = type(event)
    if _event_classes().get(cls.__name__) is not cls:
        raise EventFormatError(f"not a privacy event: {event!r}")
    data: dict[str, JsonValue] = {"kind": cls.__name__}
    defaults = _defaults(cls)
    for name, annotation in _field_types(cls).items():
        value = getattr(event, name)
        if name in defaults and value == defaults[name]:
            continue  # a field added later, at its default: the text older versions wrote (and read)
        data[name] = _value_to_data(value, annotation)
    return data


@cache
def _defaults(cls: type) -> dict[str, object]:
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


def _value_to_data(value: object, annotation: object) -> JsonValue:
    if _is_event_tuple(annotation):
        return [event_to_data(e) for e in typing.cast(Sequence[Event], value)]
    if annotation is bool or annotation is str:
        return typing.cast(JsonValue, value)
    if annotation is int:
        return int(typing.cast(int, value))
    if annotation is Fraction:
        return str(Fraction(typing.cast(Fraction, value)))
    raise EventFormatError(f"cannot store a field of type {annotation!r}")


def events_to_data(events: Sequence[Event]) -> list[JsonValue]:
    return [event_to_data(e) for e in events]


def events_to_json(events: Sequence[Event]) -> str:
    """Compact, key-sorted JSON text: equal event lists give equal text."""
    return json.dumps(events_to_data(events), sort_keys=True, separators=(",", ":"))


# ---------------------------------------------------------------- reading


def event_from_data(data: object) -> Event:
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise EventFormatError(f"an event must be an object with a kind, not {data!r}")
    cls = _event_classes().get(data["kind"])
    if cls is None:
        raise EventFormatError(f"unknown event kind {data['kind']!r}")
    fields = _field_types(cls)
    unknown = set(data) - set(fields) - {"kind"}
    if unknown:
        raise EventFormatError(f"unknown fields {sorted(unknown)} in a {cls.__name__} event")
    values = {
        name: _value_from_data(data[name], annotation, name)
        for name, annotation in fields.items()
        if name in data
    }
    try:
        return typing.cast(Event, cls(**values))
    except TypeError as exc:
        raise EventFormatError(f"incomplete {cls.__name__} event: {exc}") from exc


def _value_from_data(value: object, annotation: object, name: str) -> object:
    if _is_event_tuple(annotation):
        if not isinstance(value, list):
            raise EventFormatError(f"field {name!r} must be a list of events")
        return tuple(event_from_data(item) for item in value)
    if annotation is bool and isinstance(value, bool):
        return value
    if annotation is str and isinstance(value, str):
        return value
    if annotation is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if annotation is Fraction and isinstance(value, str):
        try:
            return Fraction(value)
        except (ValueError, ZeroDivisionError) as exc:
            raise EventFormatError(f"field {name!r}: {value!r} is not a number") from exc
    raise EventFormatError(f"field {name!r}: unexpected value {value!r}")


def events_from_data(data: object) -> tuple[Event, ...]:
    if not isinstance(data, list):
        raise EventFormatError("stored events must be a JSON list")
    return tuple(event_from_data(item) for item in data)


def events_from_json(text: str) -> tuple[Event, ...]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EventFormatError(f"stored events are not JSON: {exc}") from exc
    return events_from_data(data)
