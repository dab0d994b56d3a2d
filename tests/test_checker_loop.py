"""`loop[k]`: k rounds charge the body k times; zero rounds release the state."""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.checker import check_program
from fuzzpy.checker.costs import pure_epsilon
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError

ROW = "type R = { a : num };\n"


def _codes(text: str) -> list[tuple[str, int]]:
    try:
        check_program(parse_program(ROW + text, "t.fz"))
    except FuzzError as error:
        return [(d.code, d.span.line) for d in error.diagnostics]
    return []


def _eps(text: str, name: str) -> Fraction | None:
    checked = check_program(parse_program(ROW + text, "t.fz"))
    return pure_epsilon(checked.definitions[name].privacy["db"])


def test_zero_rounds_release_a_private_initial_state_without_noise() -> None:
    program = "def f (db : bag R) : fuzzy num = loop[0] (size db) (fun x -> laplace[1] x);\n"
    assert _codes(program) == [("FZ301", 2)]


def test_zero_rounds_from_a_public_state_cost_nothing() -> None:
    program = "def f (db : bag R) : fuzzy num = loop[0] 0 (fun x -> laplace[1] (x + size db));\n"
    assert _eps(program, "f") == 0


def test_the_initial_state_is_charged_once_and_captures_every_round() -> None:
    program = (
        "def f (db : bag R) : fuzzy num = loop[3] (size db) (fun x -> laplace[1] x);\n"
        "def g (db : bag R) : fuzzy num = loop[3] 0 (fun x -> laplace[1] (x + size db));\n"
    )
    assert _eps(program, "f") == 1
    assert _eps(program, "g") == 3
