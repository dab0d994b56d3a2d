"""A number of rounds over a definition's parameters (issue 27: `loop[k]`
prints k * eps): the symbolic cost, at each number, is the cost of the
program written with that number, and each call is still checked at its own."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.costs import pure_epsilon
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.symbolic import Poly

HEAD = "type Trip = { km : num, zone : int };\n"

# each body over {N} (rounds) and {R} (an epsilon): the library names the
# parameters there, the hand-written program the numbers
BODIES = {
    "count each round": "loop[{N}] 0 (fun acc -> laplace[0.25] (size t))",
    "a count that seeds the state":
        "loop[{N} + 1] (size t) (fun acc -> laplace[0.5] (acc + size (filter (fun x -> x.zone == 1) t)))",
    "rounds times a parameter epsilon": "loop[2 * {N}] 0 (fun acc -> laplace[{R}] (size t + size t))",
    "a loop in a loop": "loop[{N}] 0 (fun a -> loop[3] a (fun b -> laplace[{R} / 2] (size t)))",
}


def _checked(text: str):  # noqa: ANN202
    return check_program(parse_program(HEAD + text, "<rounds>"))


def _library(body: str) -> str:
    return f"def lib (n : int) (r : num) (t : bag Trip) : fuzzy num = {body.format(N='n', R='r')};\n"


@pytest.mark.parametrize("name", list(BODIES))
@pytest.mark.parametrize(("n", "r"), [(1, "0.1"), (3, "2"), (7, "1 / 3")])
def test_the_expression_is_the_written_programs_cost(name: str, n: int, r: str) -> None:
    body = BODIES[name]
    symbolic = _checked(_library(body) + f"def use (t : bag Trip) : fuzzy num = lib {n} ({r}) t;\n")
    cost = symbolic.definitions["lib"].symbolic_privacy["t"]
    assert isinstance(cost, Poly) and "n" in cost.symbols()
    hand = _checked(f"def lib (t : bag Trip) : fuzzy num = {body.format(N=n, R=f'({r})')};\n")
    exact = pure_epsilon(hand.definitions["lib"].privacy["t"])
    assert cost.evaluate({"n": Fraction(n), "r": Fraction(r.replace(" ", ""))}) == exact
    assert pure_epsilon(symbolic.definitions["use"].privacy["t"]) == exact


def test_a_call_with_a_fraction_of_a_round_is_refused() -> None:
    with pytest.raises(FuzzError) as info:
        _checked(_library(BODIES["count each round"]) + "def use (t : bag Trip) : fuzzy num = lib 1.5 1 t;\n")
    assert any(d.code == "FZ202" and "whole number" in d.message for d in info.value.diagnostics)


def test_gaussian_rounds_stay_checked_at_each_call() -> None:
    checked = _checked("def lib (n : int) (t : bag Trip) : fuzzy num = loop[n] 0 (fun a -> gauss[3] (size t));\n")
    assert checked.definitions["lib"].symbolic_privacy["t"] is None
