"""Arithmetic ranges `[a, b .. c]` / `[a .. c]`: sugar for the list literal written out.

The expected lists here are built independently of `fuzzpy.frontend.ranges`:
written out as text by Python's own `range` or by repeated `Decimal` addition,
then parsed as ordinary list literals.
"""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.checker import check_program
from fuzzpy.checker.report import text_report
from fuzzpy.frontend.parser import parse_program
from fuzzpy.frontend.printer import print_program
from fuzzpy.language import syntax as ast
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.limits import MAX_RANGE_LENGTH


def literal(text: str) -> ast.Expr:
    decl = parse_program(f"let it = {text};").decls[-1]
    assert isinstance(decl, ast.LetDecl)
    return decl.expr


def values(node: ast.Expr) -> list[Fraction]:
    """The numbers of a list literal, negations applied."""
    assert isinstance(node, ast.ListLit)
    out = []
    for item in node.items:
        sign = 1
        while isinstance(item, ast.Unary):
            assert item.op == "-"
            sign, item = -sign, item.operand
        assert isinstance(item, ast.NumLit)
        out.append(sign * Fraction(item.text))
    return out


def refused(source: str) -> tuple[str, int, int, int]:
    """(code, line, first col, end col) of the one diagnostic."""
    with pytest.raises(FuzzError) as info:
        parse_program(source)
    (diag,) = info.value.diagnostics
    return diag.code, diag.span.line, diag.span.col, diag.span.end_col


# ------------------------------------------------------------ desugaring


def test_the_issues_example_is_the_written_out_list() -> None:
    written = "[" + ", ".join(str(v) for v in range(170, 231, 2)) + "]"
    assert literal("[170, 172 .. 230]") == literal(written)
    assert len(values(literal("[170, 172 .. 230]"))) == 31


def test_tenths_are_exact_and_end_on_the_bound() -> None:
    got = values(literal("[0, 0.1 .. 1]"))
    assert got == [Fraction(k, 10) for k in range(11)]
    assert got[-1] == 1  # 0.1 added ten times in doubles is 0.9999999999999999


@pytest.mark.parametrize(
    ("ranged", "written"),
    [
        ("[1 .. 5]", "[1, 2, 3, 4, 5]"),
        ("[-2 .. 1]", "[-2, -1, 0, 1]"),
        ("[10, 7 .. -5]", "[10, 7, 4, 1, -2, -5]"),
        ("[0, 3 .. 10]", "[0, 3, 6, 9]"),  # the last element not past the bound
        ("[4 .. 4]", "[4]"),
        ("[0, 5 .. 3]", "[0]"),
        ("[0.5 .. 3]", "[0.5, 1.5, 2.5]"),
        ("[1.0 .. 3.0]", "[1.0, 2.0, 3.0]"),  # written as decimals: `list num`
        ("[1e1, 2e1 .. 5e1]", "[1e1, 2e1, 30.0, 40.0, 50.0]"),
        ("[(1), (3) .. (7)]", "[1, 3, 5, 7]"),
    ],
)
def test_ranges_equal_their_written_out_lists(ranged: str, written: str) -> None:
    assert literal(ranged) == literal(written)


@pytest.mark.parametrize(
    ("ranged", "written", "typed"),
    [("[1 .. 3]", "[1, 2, 3]", "list int"), ("[1.0 .. 3]", "[1.0, 2.0, 3.0]", "list num")],
)
def test_elements_type_as_their_bounds_are_written(ranged: str, written: str, typed: str) -> None:
    def report(text: str) -> str:
        return text_report(check_program(parse_program(f"def it = {text};")), None)

    assert report(ranged) == report(written)
    assert typed in report(ranged)


def test_a_range_spans_lines_and_prints_as_its_list() -> None:
    program = parse_program("let xs =\n  [ 2\n  , 4\n  ..\n  10 ];")
    decl = program.decls[0]
    assert isinstance(decl, ast.LetDecl)
    assert (decl.expr.span.line, decl.expr.span.end_line) == (2, 5)
    printed = print_program(program)
    assert ".." not in printed
    assert parse_program(printed) == program


MEDIAN = """\
type Person = {{ age : num, income : num }};
def balance (c : num) (db : bag Person) : num =
  let (below, above) = split (fun p -> p.income <= c) db in
  - abs (size below - size above);
def median_age (db : bag Person) : fuzzy num =
  expmech[0.5] {candidates} balance db;
"""


def test_checking_a_median_with_a_range_is_checking_the_literal() -> None:
    ranged = MEDIAN.format(candidates="[18, 20.5 .. 90]")
    written = MEDIAN.format(candidates="[" + ", ".join(str(18 + 2.5 * k) for k in range(29)) + "]")
    report = text_report(check_program(parse_program(ranged, "a.fz")), None)
    assert report == text_report(check_program(parse_program(written, "b.fz")), None)
    assert "0.5-DP in db" in report


# ------------------------------------------------------------ diagnostics


def test_zero_step_is_refused_at_the_range() -> None:
    assert refused("let xs = [3, 3 .. 9];") == ("FZ116", 1, 10, 21)


def test_a_step_away_from_the_bound_is_refused() -> None:
    assert refused("let xs = [5 .. 1];") == ("FZ116", 1, 10, 18)
    assert refused("let xs =\n    [1, 2 .. -4];") == ("FZ116", 2, 5, 17)


@pytest.mark.parametrize(
    ("source", "where"),
    [
        ("let xs = [1, 2 .. n];", (19, 20)),
        ('let xs = ["a" .. "z"];', (11, 14)),
        ("let xs = [1 + 1 .. 5];", (11, 16)),
        ("let xs = [true, false .. true];", (11, 15)),
        ("let xs = [--1 .. 5];", (11, 14)),
    ],
)
def test_bounds_must_be_numbers_written_out(source: str, where: tuple[int, int]) -> None:
    code, line, col, end = refused(source)
    assert (code, line, (col, end)) == ("FZ117", 1, where)


def test_a_huge_range_is_refused_before_it_is_built() -> None:
    start = time.process_time()
    code, *_ = refused("let xs = [0, 1e-300 .. 1e300];")
    assert code == "FZ118"
    assert time.process_time() - start < 5  # a count, not 10^600 elements (a hang, not a timing)
    assert refused(f"let xs = [1 .. {MAX_RANGE_LENGTH + 1}];")[0] == "FZ118"
    assert len(literal(f"[1 .. {MAX_RANGE_LENGTH}]").items) == MAX_RANGE_LENGTH  # type: ignore[attr-defined]


def test_elements_below_the_smallest_number_are_refused() -> None:
    assert refused("let xs = [3e-308, 2e-308 .. -3e-308];")[0] == "FZ115"


def test_the_double_dot_is_not_a_number_or_a_field() -> None:
    assert literal("[1..3]") == literal("[1, 2, 3]")
    with pytest.raises(FuzzError):
        parse_program("let xs = [1 ..];")


# ------------------------------------------------------------ property


def _decimal(units: int, places: int) -> Decimal:
    return Decimal(units).scaleb(-places)


@settings(max_examples=150, deadline=None)
@given(
    first=st.integers(-10_000, 10_000),
    step=st.integers(-500, 500).filter(bool),
    places=st.integers(0, 3),
    count=st.integers(1, 60),
    overshoot=st.integers(0, 99),
    with_second=st.booleans(),
)
def test_a_range_is_the_list_counted_out_by_repeated_addition(
    first: int, step: int, places: int, count: int, overshoot: int, with_second: bool
) -> None:
    a = _decimal(first, places)
    s = _decimal(step, places) if with_second else Decimal(1)
    # the last bound: somewhere in [a + (count-1)s, a + count*s)
    c = a + (count - 1) * s + s * Decimal(overshoot) / 100
    expected: list[Decimal] = []
    value = a
    while (value <= c) if s > 0 else (value >= c):
        expected.append(value)
        value += s
    text = f"[{a}, {a + s} .. {c}]" if with_second else f"[{a} .. {c}]"
    assert values(literal(text)) == [Fraction(v) for v in expected]
    assert len(expected) == count
