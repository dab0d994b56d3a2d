"""Side conditions over static parameters decided by z3 when the term-by-term
test cannot (issue 27, item 1: "side conditions it cannot decide become
obligations for the solver; an undecided obligation is a located diagnostic,
never accepted"). Each accepted program here was refused before (FZ202 or
FZ312) although its condition holds; each refused one gets a witness."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fuzzpy.checker import check_program, obligations
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.symbolic import Poly


def checked(text: str):
    return check_program(parse_program(text, "<obligations>"))


def refused(text: str):
    with pytest.raises(FuzzError) as info:
        checked(text)
    return info.value.diagnostics


E = Poly.var("e")


def test_a_positive_epsilon_with_a_negative_coefficient_is_proved() -> None:
    prog = checked("def f (e : num) (db : bag num) : fuzzy num = laplace[e * e - e + 1] (size db);\n"
                   "def g (db : bag num) : fuzzy num = f 0.5 db;")
    assert prog.definitions["f"].symbolic_privacy["db"] == E * E - E + Poly.const(1)
    (events,) = prog.definitions["g"].privacy.values()
    assert events[0].epsilon == Fraction(3, 4)  # 1/4 - 1/2 + 1


def test_a_bound_above_the_cost_but_not_term_by_term_is_proved() -> None:
    # 2e <= e^2 + 1 since (e - 1)^2 >= 0 (Duet-style declared privacy over a parameter)
    checked("def f (e : num) (db :[e * e + 1] bag num) : fuzzy num = laplace[2 * e] (size db);")


def test_a_false_bound_is_refused_with_a_witness() -> None:
    (d,) = refused("def f (e : num) (db :[e] bag num) : fuzzy num = laplace[2 * e] (size db);")
    assert d.code == "FZ312" and "above it at e = " in d.message and d.span.line == 1


def test_an_epsilon_negative_somewhere_is_refused_with_a_witness() -> None:
    (d,) = refused("def f (e : num) (db : bag num) : fuzzy num = laplace[e * e - 3 * e + 2] (size db);")
    assert d.code == "FZ202" and "not positive at e = " in d.message
    assert d.span.col == 54  # at the epsilon


def test_a_symbolic_argument_proved_positive_is_accepted_at_a_library_call() -> None:
    checked("def f (e : num) (db : bag num) : fuzzy num = laplace[e] (size db);\n"
            "def g (x : num) (db : bag num) : fuzzy num = f (x * x - x + 1) db;")


def test_two_parameters() -> None:
    # a^2 + b^2 >= 2ab: the cost 2ab is below the bound a^2 + b^2
    checked("def f (a : num) (b : num) (db :[a * a + b * b] bag num) : fuzzy num = laplace[2 * a * b] (size db);")
    (d,) = refused("def f (a : num) (b : num) (db :[2 * a * b] bag num) : fuzzy num = laplace[a * a + b * b] (size db);")
    assert d.code == "FZ312"


def test_undecided_is_refused_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(obligations, "_never", lambda p, strict: obligations.Verdict("unknown"))
    (d,) = refused("def f (e : num) (db : bag num) : fuzzy num = laplace[e * e - e + 1] (size db);")
    assert d.code == "FZ202" and "could not decide" in d.message
    (d,) = refused("def f (e : num) (db :[e * e + 1] bag num) : fuzzy num = laplace[2 * e] (size db);")
    assert d.code == "FZ312" and "could not decide" in d.message


def test_verdicts_directly() -> None:
    assert obligations.positive(E * E - E * Poly.const(2) + Poly.const(1)).status == "refuted"  # (e-1)^2 = 0 at 1
    assert obligations.positive(E * E * E - E + Poly.const(1)).status == "proved"  # min at e = 1/sqrt(3) is > 0
    assert obligations.at_most(E, E * E).status == "refuted"
