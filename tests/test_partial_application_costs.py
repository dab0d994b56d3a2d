"""A definition used as a function value (partially applied): its type keeps
one pure epsilon per parameter, so a Gaussian one was refused FZ306
("infinite sensitivity") while the Laplace one was accepted (review s28).
Both are now explained alike: pure costs pass through function values; an
approximate one, like local reports', must be called with all its arguments
(FZ301, naming why)."""

from __future__ import annotations

import pytest

from fuzzpy.checker import check_program
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError

HEAD = """type Visit = { minutes : num, paid : bool };
def lap_count (scale : num) (vs : bag Visit) : fuzzy num = laplace[scale] (size vs);
def gauss_count (sigma : num) (vs : bag Visit) : fuzzy num = gauss[sigma] (size vs);
"""


def _codes(text: str) -> list[str]:
    with pytest.raises(FuzzError) as info:
        check_program(parse_program(HEAD + text, "p.fz"))
    return [d.code for d in info.value.diagnostics]


def test_a_laplace_definition_passes_through_a_function_value() -> None:
    checked = check_program(parse_program(
        HEAD + "def via (vs : bag Visit) : fuzzy num = { let g = lap_count 0.5; g vs };\n", "p.fz"))
    assert "via" in checked.definitions


def test_a_gaussian_definition_as_a_function_value_is_refused_with_its_reason() -> None:
    text = "def via (vs : bag Visit) : fuzzy num = { let g = gauss_count 3; g vs };\n"
    with pytest.raises(FuzzError) as info:
        check_program(parse_program(HEAD + text, "p.fz"))
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.code == "FZ301"  # was FZ306, "infinite sensitivity"
    assert "approximate" in diagnostic.message and "all its arguments" in diagnostic.message


def test_the_direct_gaussian_call_is_accepted() -> None:
    checked = check_program(parse_program(HEAD + "def direct (vs : bag Visit) : fuzzy num = gauss_count 3 vs;\n",
                                          "p.fz"))
    assert "direct" in checked.definitions


def test_a_gaussian_passed_to_a_higher_order_use_is_refused_alike() -> None:
    text = "def twice (f : bag Visit -o fuzzy num) (vs : bag Visit) : fuzzy num = f vs;\n" \
           "def via (vs : bag Visit) : fuzzy num = twice (gauss_count 2) vs;\n"
    assert _codes(text) == ["FZ301"]
