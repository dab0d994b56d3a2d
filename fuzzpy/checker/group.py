"""Costs for groups: `check --group k`, a person who holds up to k rows.

Databases that differ in one person's rows, at most k of them, are k
add/remove steps apart: a definition's events are charged as a `Group(k, ..)`
(group privacy, Dwork & Roth 2014, Thm 2.2: pure eps -> k eps, (eps, delta)
-> (k eps, k e^{(k-1) eps} delta); the accountant scales Laplace and Gaussian
noise exactly instead, as a query k times as sensitive: Gaussian rho -> k^2 rho,
Bun & Steinke 2016; `accounting.atoms`). A symbolic pure cost is scaled by k.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from fuzzpy.accounting.events import Event, person_group
from fuzzpy.checker.result import CheckedDef, CheckedProgram, Instance


def group_events(events: tuple[Event, ...], k: int) -> tuple[Event, ...]:
    return person_group(k, events)  # a central rr/krr stays outside the group (its docstring)


def _def(d: CheckedDef, k: int) -> CheckedDef:
    return dataclasses.replace(
        d,
        privacy={name: group_events(events, k) for name, events in d.privacy.items()},
        # an (eps, delta) cost over parameters: group privacy's delta k e^((k-1) eps) delta is no polynomial
        symbolic_privacy={
            name: None if cost is None or name in d.symbolic_delta else cost.scale(Fraction(k))
            for name, cost in d.symbolic_privacy.items()
        },
        symbolic_delta={},
    )


def _instance(instance: Instance, k: int) -> Instance:
    return dataclasses.replace(
        instance, privacy={name: group_events(events, k) for name, events in instance.privacy.items()}
    )


def grouped(checked: CheckedProgram, k: int) -> CheckedProgram:
    """The program's costs for groups of k rows (k = 1: unchanged)."""
    if k <= 1:
        return checked
    return dataclasses.replace(
        checked,
        definitions={name: _def(d, k) for name, d in checked.definitions.items()},
        instances={name: tuple(_instance(i, k) for i in items) for name, items in checked.instances.items()},
    )
