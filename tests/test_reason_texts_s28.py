"""Reasons and hints a reader acts on (reviews s28a/c/d): each says what is true
of the program in front of it, at its line."""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.refuter import refute


def _verdict(text: str):  # noqa: ANN202 - a Verdict
    program = parse_program(text, "texts.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return verify_mechanism(decl, program)


# review s28a bs4: "no counterexample among inputs of length up to 6" though the
# `requires` allow no input shorter than 40
def test_a_refuter_that_tried_no_length_the_requires_allow_says_it_searched_nothing() -> None:
    program = parse_program("mechanism longrow (q : vec[inf] num, eps : num) : list bool\n  requires eps > 0\n"
                       "  requires len(q) >= 40\n  privacy eps\n{\n  var x = lap(1 / eps);\n  var i = 0;\n"
                       "  while (i < len(q)) {\n    if (x > q[i]) { output true; } else { output false; }\n"
                       "    i = i + 1;\n  }\n}\n", "longrow.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    found, reason = refute(analyse(decl), 30.0)
    assert found is None
    assert "no counterexample among" not in reason
    assert "no counterexample searched (the `requires` rule out every input length this search tries" in reason


# review s28a pa1: FZ401's hint "declare it first with `var eps = ...;`" led to FZ405
def test_assigning_a_parameter_hints_a_fresh_local_and_the_hint_checks() -> None:
    from fuzzpy.api import loads
    from fuzzpy.api.errors import Rejected

    text = ("mechanism scaled (row : vec[inf] num, eps : num, eps2 : num) : num\n  requires eps > 0\n"
            "  privacy eps\n{\n  eps = eps * 100;\n  return row[0] + lap(1 / eps);\n}\n")
    try:
        loads(text).check()
        raise AssertionError("assigning a parameter was accepted")
    except Rejected as error:
        (diag,) = [d for d in error.diagnostics if d.code == "FZ401"]
    assert diag.span.line == 5
    assert "var eps = " not in (diag.hint or "")
    assert "`var eps3 = eps * 100;`" in (diag.hint or "")
    fixed = text.replace("  eps = eps * 100;", "  var eps3 = eps * 100;").replace("1 / eps)", "1 / eps3)")
    loads(fixed).check()


# review s28a: a private `bool` parameter printed as `b = 1` / `b = 0` in a counterexample
def test_a_bool_parameter_in_a_counterexample_reads_true_or_false() -> None:
    from fuzzpy.verifier.report import refutation_lines

    verdict = _verdict("mechanism gate (on : bool, e : num) : num\n  requires e > 0\n"
                       "  requires abs(dist(on)) <= 1\n  privacy e\n{\n  var x = 0;\n"
                       "  if (on) { x = 50; }\n  return x + lap(1 / e);\n}\n")
    assert verdict.status == "refuted" and verdict.counterexample is not None
    text = "\n".join(refutation_lines(verdict.counterexample, False))
    assert "on = 1" not in text and "on = 0" not in text
    assert ("on = true" in text and "with on = false" in text) or ("on = false" in text and "with on = true" in text)
    document = verdict.to_json()["counterexample"]
    assert {document["inputs"]["on"], document["neighbour"]["on"]} == {True, False}


# review s28c: `staircase[eps, gam]` with gam = 0 through a static parameter was refused
# "(a noise scale, bound, count or rate) must be positive" though gamma = 0 is allowed
def test_a_zero_static_parameter_is_refused_with_the_literal_zero_as_the_way_out() -> None:
    from fuzzpy.api import loads
    from fuzzpy.api.errors import Rejected

    text = ("type Row = { v : num };\n"
            "def stairs (e : num) (gam : num) (rows : bag Row) : fuzzy num = staircase[e, gam] (size rows);\n"
            "def flat (rows : bag Row) : fuzzy num = stairs 2 0 rows;\n")
    try:
        loads(text).check()
        raise AssertionError("gam = 0 through a static parameter was accepted")
    except Rejected as error:
        (diag,) = [d for d in error.diagnostics if d.code == "FZ202"]
    assert diag.span.line == 3
    assert "noise scale, bound, count or rate" not in diag.message
    assert "write the literal 0 at that use" in (diag.hint or "")
    loads("type Row = { v : num };\ndef flat (rows : bag Row) : fuzzy num = staircase[2, 0] (size rows);\n").check()


# review s28c: `ptr_median` answering `inr ()` printed "accuracy not derived for this expression"
def test_no_answer_from_ptr_median_says_there_is_nothing_to_bound() -> None:
    from fractions import Fraction

    from fuzzpy.release.accuracy import derive
    from fuzzpy.runtime.values import Inr

    program = parse_program("type Row = { w : num };\ndef mid (rows : bag Row) : fuzzy (num + unit) =\n"
                            "  ptr_median[1, 1e-6, 2] (map (fun r -> r.w) rows);\n", "mid.fz")
    (part,) = derive(program, program.decls[-1], Inr(()), [], Fraction(9, 10))
    assert "not derived" not in part.statement()
    assert "no answer (`inr ()`)" in part.statement() and "no value to bound" in part.statement()
    assert part.to_json()["derived"] is False and "no answer" in str(part.to_json()["note"])


# review s28d F6: `mat_of_rows [vec[inf] rows]` under laplace: the annotation that converts the row
def test_a_row_in_another_norm_gets_the_converting_annotation_as_hint() -> None:
    from fuzzpy.api import loads
    from fuzzpy.api.errors import Rejected

    head = "type P = { x : num };\ndef grid (ps : bag P) : fuzzy (mat[1] num) =\n  laplace[2] (mat_of_rows ["
    row = "tabulate [0, 5] (fun c -> size (filter (fun p -> p.x > c) ps))"
    try:
        loads(head + row + "]);\n").check()
        raise AssertionError("a vec[inf] row read as vec[1] was accepted")
    except Rejected as error:
        (diag,) = [d for d in error.diagnostics if d.code == "FZ201"]
    assert diag.span.line == 3 and "`(e : vec[1] num)`" in (diag.hint or "")
    assert "all elements of a list have one type" not in diag.message
    loads(head + f"({row} : vec[1] num)]);\n").check()


# review s28d F8: `--arg m=[5, 7]` for a `mat` parameter was read as the rows [5] and [7]
def test_a_matrix_argument_needs_its_rows_in_brackets() -> None:
    from fuzzpy.language.diagnostics import FuzzError
    from fuzzpy.language.types import TList, TNum, TVec
    from fuzzpy.release.run import parse_argument

    matrix = TList(TVec("1", TNum()))
    assert parse_argument("m", matrix, "[[5], [7]]") == [[5], [7]]
    assert parse_argument("m", matrix, "[[0.1, 2]]") == [[Fraction(1, 10), 2]]
    assert parse_argument("xs", TVec("2", TNum()), "0.25, 3") == [Fraction(1, 4), 3]
    for flat in ("[5, 7]", "5, 7"):
        try:
            parse_argument("m", matrix, flat)
            raise AssertionError(f"{flat} read as a matrix")
        except FuzzError as error:
            text = str(error.diagnostics[0].message) if hasattr(error, "diagnostics") else str(error)
            assert "is itself a list (a row), written in brackets" in text


# review s28d F11: FZ202 said `join[k]`'s k "sets a noise scale"; it is a row count per key
def test_a_join_count_given_at_run_time_is_named_as_the_join_count() -> None:
    from fuzzpy.api import loads
    from fuzzpy.api.errors import Rejected

    text = ("type Sale = { shop : int, amount : num };\n"
            "def pairs (k : int) (a : bag Sale) (b : bag Sale) : bag (Sale, Sale) =\n"
            "  join[k] (fun s -> s.shop) (fun t -> t.shop) a b;\n"
            "def many (db : bag Sale) : fuzzy num = laplace[1] (size ((fun n -> pairs n db db) 2));\n")
    try:
        loads(text).check()
        raise AssertionError("a join count bound at run time was accepted")
    except Rejected as error:
        (diag,) = [d for d in error.diagnostics if d.code == "FZ202"]
    assert diag.span.line == 4
    assert "noise scale" not in diag.message
    assert "is the number of rows kept per key by `join`" in diag.message
