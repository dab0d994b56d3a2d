"""What the checker produces: the typed, costed view of a program.

This is the contract between the checker and its consumers (the CLI's
`check` output, the interpreter, the ledger). The checker fills it in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzzpy.accounting.events import Event
from fuzzpy.diagnostics import Diagnostic
from fuzzpy.sensitivity import Sens
from fuzzpy.syntax import DefDecl, MechanismDecl, Program
from fuzzpy.types import Type


@dataclass(frozen=True)
class ParamInfo:
    name: str
    type: Type
    sensitivity: Sens


@dataclass(frozen=True)
class CheckedDef:
    """A definition's inferred signature and privacy cost.

    ``privacy`` maps every `bag` parameter of a definition whose result is
    `fuzzy` to the mechanism events it performs on that database.
    """

    name: str
    decl: DefDecl
    params: tuple[ParamInfo, ...]
    result: Type
    privacy: dict[str, tuple[Event, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckedProgram:
    program: Program
    definitions: dict[str, CheckedDef]
    mechanisms: dict[str, MechanismDecl]
    constants: dict[str, object]  # static `let` constants: name -> Fraction
    warnings: tuple[Diagnostic, ...] = ()
