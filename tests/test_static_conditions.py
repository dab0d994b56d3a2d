"""`if` on a condition over static numbers (issue 27, a LOOSE finding: both
branches were charged): the run takes one branch on every dataset, so only
that branch's cost and uses count; a condition on data is refused as before."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.costs import pure_epsilon
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError

HEAD = "type Sale = { price : num, shop : int };\nlet shops = 4;\nlet strict = 0;\n"


def _eps(text: str, name: str = "f") -> Fraction | None:
    checked = check_program(parse_program(HEAD + text, "<if>"))
    return pure_epsilon(checked.definitions[name].privacy["s"])


@pytest.mark.parametrize(("condition", "expected"), [
    ("shops >= 4", Fraction(1, 5)),
    ("shops * 2 == 7", Fraction(3)),
    ("not (strict == 1) && shops > 1", Fraction(1, 5)),
    ("strict != 0 || false", Fraction(3)),
])
def test_only_the_branch_taken_is_charged(condition: str, expected: Fraction) -> None:
    text = f"def f (s : bag Sale) : fuzzy num = if {condition} then laplace[0.2] (size s) else laplace[3] (size s);"
    assert _eps(text) == expected


def test_a_parameter_in_the_condition_is_data_and_both_branches_count() -> None:
    # a parameter compared in a condition is an ordinary argument (not a static
    # position): the branches join, as before
    text = ("def lib (cut : num) (s : bag Sale) : fuzzy num =\n"
            "  if cut < 10 then laplace[1] (size s) else laplace[0.25] (size s);\n")
    assert _eps(text, "lib") == Fraction(5, 4)


def test_a_value_uses_the_data_as_its_branch_does() -> None:
    checked = check_program(parse_program(
        HEAD + "def g (s : bag Sale) : num = if shops > 2 then size s else 3 * size s;", "<if>"))
    assert checked.definitions["g"].params[0].sensitivity.value == 1


def test_a_condition_on_the_data_still_chooses_nothing_for_free() -> None:
    with pytest.raises(FuzzError) as info:
        check_program(parse_program(
            HEAD + "def f (s : bag Sale) : fuzzy num = if size s > shops then laplace[1] (size s) else laplace[2] (size s);",
            "<if>"))
    assert [d.code for d in info.value.diagnostics] == ["FZ302"]


def test_the_branch_not_taken_is_still_checked() -> None:
    with pytest.raises(FuzzError) as info:
        check_program(parse_program(
            HEAD + "def f (s : bag Sale) : fuzzy num = if shops > 2 then laplace[1] (size s) else laplace[1] (size t);",
            "<if>"))
    assert "FZ207" in [d.code for d in info.value.diagnostics]
