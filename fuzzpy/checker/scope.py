"""The file's top-level scope, as `check` reads it, for the verifier too:
`static_constants(program)` and `verify_mechanism(decl, program)`, which
verifies a mechanism with the constants of that scope (issue 23: one scope
for `verify` and `check`). The verifier below is handed the constants as a
value; it never reads the checker (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from fuzzpy.language.diagnostics import FuzzError

if TYPE_CHECKING:
    from fuzzpy.language.syntax import MechanismDecl, Program
    from fuzzpy.verifier.verdict import Verdict


def static_constants(program: Program | None) -> dict[str, Fraction]:
    """Top-level `let` constants with a numeric value (language.md §1), by the
    checker's own collection of the top-level declarations, so that a file
    `check` rejects there (a name defined twice, FZ210; a `let` that is not
    static, FZ212) is rejected by `verify` the same way, never proved with
    the later of two definitions."""
    if program is None:
        return {}
    from fuzzpy.checker.driver import ProgramChecker

    checker = ProgramChecker(program)
    checker.collect()
    if checker.errors:
        raise FuzzError(tuple(dict.fromkeys(checker.errors)))
    return dict(checker.globals.constants)


def library_home(decl: MechanismDecl) -> Program | None:
    """The standard library module an imported mechanism comes from (None for
    the file's own): its scope is that module's, never the importing file's,
    so its proof (and its proof-cache key) is the same in every program."""
    from fuzzpy.frontend.imports import home

    return home(decl.span.file)


def verification_scope(decl: MechanismDecl, program: Program | None) -> tuple[Program | None, dict[str, Fraction]]:
    """The program and constants a mechanism is verified against."""
    module = library_home(decl)
    scope = program if module is None else module
    return scope, static_constants(scope)


def verify_mechanism(decl: MechanismDecl, program: Program | None = None, **limits: Any) -> Verdict:
    """`fuzzpy.verifier.verify_mechanism` with the constants of its scope:
    the file's, or its library module's for an imported mechanism."""
    import fuzzpy.verifier

    scope, found = verification_scope(decl, program)
    constants: Mapping[str, Fraction] = found
    return fuzzpy.verifier.verify_mechanism(decl, scope, constants=constants, **limits)

