"""Conformance of `fuzzpy check` with the design page (language.md, sections
1-4, 3b, 5's call rules and 7), from programs written as a user would write
them from the page alone. Each number below was worked out by hand from the
page's rules; the tests check numbers and codes, not wording."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.costs import pure_epsilon
from fuzzpy.checker.report import _show
from fuzzpy.checker.result import CheckedProgram
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.sensitivity import INF, Sens

ROW = "type Row = { age : num, income : num, ward : int };\nlet eps = 0.1;\n"


def check(text: str) -> CheckedProgram:
    return check_program(parse_program(ROW + text, "t.fz"))


def sens(text: str, name: str) -> dict[str, Sens]:
    return {p.name: p.sensitivity for p in check(text).definitions[name].params}


def eps(text: str, name: str, db: str = "db") -> Fraction | None:
    return pure_epsilon(check(text).definitions[name].privacy[db])


def codes(text: str) -> list[tuple[str, int, int]]:
    """(code, line, col) of every diagnostic, lines counted in ``text``."""
    with pytest.raises(FuzzError) as info:
        check(text)
    return [(d.code, d.span.line - 2, d.span.col) for d in info.value.diagnostics]


def S(x: str | int) -> Sens:
    return Sens.of(x)


# ---------------------------------------------------------------- section 3: core rules


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("x / 4 - x * 0.5", S("0.75")),
        ("-x + - - x", S(2)),
        ("abs (x - 3)", S(1)),
        ("clip[0, 10] x", S(1)),
        ("0 * x", S(0)),
        ("let u = x + 1 in let v = u * 2 in v - x", S(3)),
        ("if x > 0 then 1 else 0", INF),
        ("if x == 1.0 then 100 else 0", INF),
    ],
)
def test_arithmetic_sensitivities(body: str, expected: Sens) -> None:
    assert sens(f"def f (x : num) : num = {body};", "f") == {"x": expected}


def test_if_joins_branches_and_case_scales_the_scrutinee() -> None:
    text = "def f (x : num) (y : num) (z : num) (w : num) : num = if z == 1 then 5 * (x + x + y) else w + y / 2 + x;"
    assert sens(text, "f") == {"x": S(10), "y": S(5), "z": INF, "w": S(1)}
    text = "def f (e : num + num) : num = case e of inl x -> 3 * x | inr y -> y;"
    assert sens(text, "f") == {"e": S(3)}
    # 0 * inf stays inf: a branch ignoring its variable still reveals the side
    text = "def f (z : num) (w : num) : num = case (if z > 0 then (inl w : num + num) else inr w) of inl a -> 0 | inr b -> 1;"
    assert sens(text, "f")["z"] == INF


def test_tensor_pairs_add_with_pairs_join_records_are_tensors() -> None:
    assert sens("def f (x : num) (y : num) : (num, num) = (x + y, x);", "f") == {"x": S(2), "y": S(1)}
    assert sens("def f (x : num) (y : num) : <num & num> = <x + y, x>;", "f") == {"x": S(1), "y": S(1)}
    assert sens("def f (p : <num & num>) : num = fst p + snd p;", "f") == {"p": S(2)}
    assert sens("def f (p : (num, num)) : num = let (a, b) = p in a + a;", "f") == {"p": S(2)}
    # each projection is a use of r (Fuzz's rules): 2, although the tensor metric would allow 1
    assert sens("def f (r : Row) : num = r.age + r.income;", "f") == {"r": S(2)}
    assert sens("def f (x : num) (y : num) : { a : num, b : num } = { a = x, b = x + y };", "f") == {"x": S(2), "y": S(1)}


def test_lists_and_case_on_lists() -> None:
    assert sens("def f (x : num) (y : num) : list num = [x, y, x];", "f") == {"x": S(2), "y": S(1)}
    assert sens("def f (xs : list num) : num = case xs of [] -> 0 | h :: t -> h;", "f") == {"xs": S(1)}
    assert sens("def f (x : num) (xs : list num) : list num = x :: xs;", "f") == {"x": S(1), "xs": S(1)}


@pytest.mark.parametrize(
    ("decl", "expected"),
    [
        ("(x : num) (y : num) : vec[inf] num = [x, y, x]", {"x": S(1), "y": S(1)}),
        ("(x : num) (y : num) : vec[1] num = [x, y, x]", {"x": S(2), "y": S(1)}),
        ("(x : num) : vec[2] num = [3 * x, 4 * x]", {"x": S(5)}),
        ("(x : num) : vec[2] num = [x, x, x, x]", {"x": S(2)}),
        ("(v : vec[1] num) : vec[inf] num = v", {"v": S(1)}),
        ("(v : vec[2] num) : vec[inf] num = v", {"v": S(1)}),
        ("(v : vec[1] num) : vec[2] num = v", {"v": S(1)}),
        ("(x : num) : vec[1] num = { let v : vec[inf] num = [x, x, x]; v }", {"x": S(3)}),
        ("(x : num) : vec[2] num = { let v : vec[inf] num = [x, x, x, x]; v }", {"x": S(2)}),
        ("(x : num) : vec[1] num = { let v : vec[2] num = [x, x, x, x]; v }", {"x": S(4)}),
        ("(u : vec[2] num) (v : vec[2] num) : vec[2] num = u + 2 * v - u / 2", {"u": S("1.5"), "v": S(2)}),
    ],
)
def test_vector_norms_and_list_literals(decl: str, expected: dict[str, Sens]) -> None:
    assert sens(f"def f {decl};", "f") == expected


def test_unknown_length_norm_conversion_is_refused() -> None:
    assert codes("def f (v : vec[inf] num) : vec[1] num = v;") == [("FZ214", 1, 41)]


def test_higher_order_functions_and_arrow_sensitivities() -> None:
    text = "def f (g : num -o num) (x : num) : num = g (g x);"
    assert sens(text, "f") == {"g": S(2), "x": S(1)}
    text = "def f (g : num -[2]-> num) : num -[4]-> num = fun x -> g (g x);"
    assert sens(text, "f") == {"g": S(3)}  # g + 2 * g: the outer g is 2-sensitive
    text = "def f (g : num -[0.5]-> num) (x : num) : num = g (g x);"
    assert sens(text, "f") == {"g": S("1.5"), "x": S("0.25")}
    assert sens("def f (g : num -> num) (x : num) : num = g x;", "f")["x"] == INF
    text = "def use (g : num -[3]-> num) (x : num) : num = g x;\ndef f (x : num) : num = use (fun y -> 4 * y) x;"
    assert codes(text) == [("FZ201", 2, 29)]


def test_def_rec_with_declared_bounds() -> None:
    text = "def rec total (xs :[1] list num) : num = case xs of [] -> 0 | h :: t -> h + total t;"
    assert sens(text, "total") == {"xs": S(1)}
    text = "def rec dbl (xs :[2] list num) : list num = case xs of [] -> [] | h :: t -> (2 * h) :: dbl t;"
    assert sens(text, "dbl") == {"xs": S(2)}
    assert codes("def rec bad (xs :[1] list num) : num = case xs of [] -> 0 | h :: t -> h + h + bad t;") == [("FZ305", 1, 13)]
    assert codes("def rec n (xs : list num) = case xs of [] -> 0 | h :: t -> h + n t;")[0][0] == "FZ211"


# ---------------------------------------------------------------- section 3: privacy


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("laplace[eps] (size (filter (fun r -> r.age > 40) db))", Fraction(1, 10)),
        ("{ sample a = laplace[2] (size db); sample b = laplace[3] (size db); return (a + b) }", Fraction(5)),
        ("laplace[eps] (size db + size db)", Fraction(1, 5)),
        ("laplace[1] (sum[-5, 2] (map (fun r -> r.age) db))", Fraction(5)),
        ("laplace[0.01] (sum[0, 50] (map (fun r -> r.age) db))", Fraction(1, 2)),
        ("loop[10] 0 (fun x -> laplace[eps] (size db))", Fraction(1)),
        ("loop[3] 0 (fun x -> laplace[eps] (size (filter (fun r -> r.age > x) db)))", Fraction(3, 10)),
        ("loop[3] (size db) (fun x -> laplace[1] x)", Fraction(1)),  # later rounds see released states
        ("{ sample a = laplace[1] (size db); if a > 3 then laplace[1] (size db) else return 0 }", Fraction(2)),
        ("{ let m = laplace[1] (size db); sample a = m; sample b = m; return (a + b) }", Fraction(2)),
        ("{ let (a, b) = (db, db); sample x = laplace[1] (size a); sample y = laplace[1] (size b); return (x + y) }", Fraction(2)),
        ("{ let h = fun (t : num) -> laplace[1] (size db); loop[5] 0 (fun x -> h x) }", Fraction(5)),
        ("subsample[0.01] (fun b -> laplace[1] (size db)) db", Fraction(1)),  # not amplified: uses db itself
    ],
)
def test_privacy_costs(body: str, expected: Fraction) -> None:
    assert eps(f"def f (db : bag Row) : fuzzy num = {body};", "f") == expected


def test_histograms_split_and_separate_counts() -> None:
    text = "def f (db : bag Row) : fuzzy (vec[1] num) = laplace[eps] (counts (group[5] (fun r -> r.ward) db));"
    assert eps(text, "f") == Fraction(1, 10)
    counts3 = "; ".join(f"sample c{k} = laplace[eps] (size (filter (fun r -> r.ward == {k}) db))" for k in range(3))
    assert eps(f"def f (db : bag Row) : fuzzy num = {{ {counts3}; return c0 }};", "f") == Fraction(3, 10)
    halves = "let (lo, hi) = split (fun r -> r.age < 40) db; sample a = laplace[eps] (size lo); sample b = laplace[eps] (size hi)"
    assert eps(f"def f (db : bag Row) : fuzzy (num, num) = {{ {halves}; return (a, b) }};", "f") == Fraction(1, 10)
    mixed = "let (lo, hi) = split (fun r -> r.age < 40) db; sample a = laplace[eps] (size lo); sample b = laplace[eps] (size db)"
    assert eps(f"def f (db : bag Row) : fuzzy (num, num) = {{ {mixed}; return (a, b) }};", "f") == Fraction(1, 5)


def test_tabulate_expmech_and_mechanism_calls() -> None:
    count = "def over (t : num) (db : bag Row) : num = size (filter (fun r -> r.age > t) db);\n"
    text = count + "def f (db : bag Row) : fuzzy (vec[1] num) = laplace[eps] (tabulate [10, 20, 30] (fun t -> over t db));"
    assert eps(text, "f") == Fraction(3, 10)  # vec[inf] of length 3 -> vec[1] costs 3
    assert eps(count + "def f (db : bag Row) : fuzzy num = expmech[0.5] [10, 20, 30] over db;", "f") == Fraction(1, 2)
    text = count + "def f (db : bag Row) : fuzzy num = expmech[0.5] [1, 2] (fun c d -> sum[0, 3] (map (fun r -> r.age) d)) db;"
    assert eps(text, "f") == Fraction(3, 2)
    assert codes(count + "def f (db : bag Row) : fuzzy num = expmech[1] [size db, 1] over db;")[0][0] == "FZ306"


# ---------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("text", "code", "at"),
    [
        ("def f (db : bag Row) : fuzzy num = return (size db);", "FZ301", "return"),
        ("def f (db : bag Row) : fuzzy num = if size db > 3 then laplace[1] 0 else laplace[1] 1;", "FZ302", "if"),
        ("def f (db : bag Row) : fuzzy num = laplace[1] (size (filter (fun r -> r.age > size db) db));", "FZ303", "(fun"),
        ("def f (db : bag Row) : fuzzy num = laplace[1] (sum[0, inf] (map (fun r -> r.age) db));", "FZ304", "(sum"),
        ("def f (x :[1] num) : num = x + x;", "FZ305", "(x"),
        ("def f (x :[1] num) : num = x * x;", "FZ305", "(x"),
        ("def f (db : bag Row) : fuzzy num = laplace[1] (size db * size db);", "FZ306", "(size"),
        ("def f (db :[0.5] bag Row) : fuzzy num = laplace[1] (size db);", "FZ312", "(db"),
        ("def f (db : bag Row) : fuzzy num = loop[3] (size db) (fun x -> return x);", "FZ301", "return"),
        ("def f (x : num) : bool = x;", "FZ201", "x;"),
        ("def f (x : num) : num = y;", "FZ207", "y"),
        # (a `def`'s own parameter is a static parameter, issue 27; a `def rec` takes none)
        ("def rec f (x : num) : fuzzy num = laplace[x] 3;", "FZ202", "x]"),
        ("def f (db : bag Row) : fuzzy num = laplace[0] (size db);", "FZ202", "0]"),
        ("def f (db : bag Row) : fuzzy num = loop[2.5] 0 (fun x -> laplace[1] (size db));", "FZ202", "2.5"),
        ("def f (db : bag Row) : fuzzy num = subsample[2] (fun b -> laplace[1] (size b)) db;", "FZ202", "2]"),
    ],
)
def test_rejections_with_code_and_span(text: str, code: str, at: str) -> None:
    assert codes(text)[0] == (code, 1, text.index(at) + 1)


def test_negative_static_is_reported_with_its_sign() -> None:
    with pytest.raises(FuzzError) as info:
        check("def f (db : bag Row) : fuzzy num = laplace[0 - 1.5] (size db);")
    (diag,) = info.value.diagnostics
    assert diag.code == "FZ202" and "-1.5" in diag.message


# ---------------------------------------------------------------- regressions


@pytest.mark.parametrize(
    "text",
    [
        # a distribution inside a sum value escaped the privacy accounting (db :[0])
        "def f (db : bag Row) : fuzzy num + num = inl (laplace[1] (size db));",
        "def f (db : bag Row) : fuzzy num = { let q = (inl (laplace[1] (size db)) : fuzzy num + num);"
        " case q of inl m -> { sample a = m; m } | inr y -> return 0 };",
        "type D = fuzzy num;\ndef f (x : list D) : num = 1;",
        "def f (x : (fuzzy num, num)) : num = 1;",
        "def f (x : { a : fuzzy num }) : num = 1;",
        "def f (x : fuzzy (fuzzy num)) : num = 1;",
    ],
)
def test_distributions_cannot_be_stored_in_data(text: str) -> None:
    assert codes(text)[0][0] == "FZ213"


def test_function_values_returning_distributions_still_compose() -> None:
    text = "def f (db : bag Row) : fuzzy num = { let p = (fun (t : num) -> laplace[1] (size db), 3);" " let (g, k) = p; sample a = g 1; sample b = g 2; return (a + b) };"
    assert eps(text, "f") == Fraction(2)


@pytest.mark.parametrize("value", [2.2540846502197387, 1.5524709867486715, 0.18921317272644853, 3.1e-05, 0.1, 0.5])
def test_printed_float_costs_round_up(value: float) -> None:
    assert float(_show(value)) >= value
    assert float(_show(value)) <= value * (1 + 1e-5) + 1e-12 or value < 1e-4


# ---------------------------------------------------------------- section 7: --json


def test_json_shape_pure_approximate_and_delta(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "p.fz"
    src.write_text(
        ROW
        + "def c (t : num) (db : bag Row) : num = size (filter (fun r -> r.age > t) db);\n"
        + "def n (db : bag Row) (other : bag Row) : fuzzy num = laplace[eps] (size db);\n"
        + "def g (db : bag Row) : fuzzy num = gauss[2] (size db);\n",
        encoding="utf-8",
    )
    assert main(["check", str(src), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and doc["diagnostics"] == []
    defs = {d["name"]: d for d in doc["definitions"]}
    assert [(p["name"], p["type"], p["sensitivity"]) for p in defs["c"]["params"]] == [("t", "num", "inf"), ("db", "bag Row", 1)]
    assert defs["c"]["privacy"] == {}
    assert set(defs["n"]["privacy"]) == {"db", "other"}  # every bag parameter of a fuzzy def
    assert defs["n"]["privacy"]["db"]["epsilon"] == 0.1 and defs["n"]["privacy"]["db"]["delta"] == 0
    assert defs["n"]["privacy"]["other"]["epsilon"] == 0
    gauss = defs["g"]["privacy"]["db"]
    assert gauss["delta"] == 1e-6 and gauss["epsilon"] > 0 and "method" in gauss
    assert main(["check", str(src), "--json", "--delta", "1e-5"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pure = {d["name"]: d for d in doc["definitions"]}["n"]["privacy"]["db"]
    assert pure["pure_epsilon"] == 0.1 and pure["delta"] == 1e-5 and pure["epsilon"] <= 0.1 and pure["method"]


def test_json_rejection_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "p.fz"
    src.write_text("def f (x :[1] num) : num = x + x;\n", encoding="utf-8")
    assert main(["check", str(src), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False
    (diag,) = doc["diagnostics"]
    assert diag["code"] == "FZ305" and diag["severity"] == "error"
    assert diag["span"] == {"file": str(src), "line": 1, "col": 7, "end_line": 1, "end_col": 19}
    assert main(["check", str(tmp_path / "missing.fz"), "--json"]) == 2
    capsys.readouterr()


@pytest.mark.parametrize(
    ("decl", "expected"),
    [
        # a list literal stands for a vector (section 1); with static entries w,
        # `dot w v` is ||w||_q-Lipschitz in v (Hoelder), q dual to v's norm
        ("(v : vec[2] num) : num = dot [3, 4] v", S(5)),
        ("(v : vec[2] num) : num = dot v [3, 4]", S(5)),
        ("(v : vec[1] num) : num = dot [3, -4] v", S(4)),
        ("(v : vec[inf] num) : num = dot [3, -4] v", S(7)),
        ("(v : vec[2] num) : num = dot v v", INF),
    ],
)
def test_dot_with_a_constant_vector(decl: str, expected: Sens) -> None:
    assert sens(f"def f {decl};", "f") == {"v": expected}


def test_directly_applied_lambdas_take_their_arguments_types() -> None:
    assert sens("def f (x : num) : num = (fun a -> fun b -> a + 2 * b) x 3;", "f") == {"x": S(1)}
    assert sens("def f (x : num) (y : num) : num = (fun a b -> a + 2 * b) x y;", "f") == {"x": S(1), "y": S(2)}
    assert sens("def f (x : num) : num = (fun a -> a * a) x;", "f") == {"x": INF}
    text = "def f (db : bag Row) : fuzzy num = { sample u = (fun b -> laplace[1] (size b)) db; (fun b -> laplace[1] (size b)) db };"
    assert eps(text, "f") == Fraction(2)
    assert codes("def f (x : num) : num = (fun a b -> a) x;")[0][0] == "FZ209"


def test_no_release_reports_zero_without_pure_epsilon_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "p.fz"
    src.write_text("def f (db : bag num) : fuzzy num = return 3;\n", encoding="utf-8")
    assert main(["check", str(src), "--json"]) == 0
    (definition,) = json.loads(capsys.readouterr().out)["definitions"]
    assert definition["privacy"]["db"]["epsilon"] == 0 and "pure_epsilon" not in definition["privacy"]["db"]
    assert main(["check", str(src), "--json", "--delta", "1e-6"]) == 0
    (definition,) = json.loads(capsys.readouterr().out)["definitions"]
    assert definition["privacy"]["db"]["pure_epsilon"] == 0


@pytest.mark.parametrize(
    ("text", "code"),
    [
        # comparing two distributions dropped their cost: db :[0] and "0-DP"
        ("def f (db : bag Row) : bool = laplace[1] (size db) == laplace[1] (size db);", "FZ213"),
        ("def f (db : bag Row) : fuzzy bool = return (laplace[1] (size db) != laplace[1] (size db));", "FZ213"),
        ("def f (g : num -> num) : bool = g == g;", "FZ201"),
    ],
)
def test_equality_is_on_data_only(text: str, code: str) -> None:
    assert codes(text)[0][0] == code


def test_equality_of_data_is_discrete() -> None:
    assert sens("def f (x : num) : bool = (x, 1) == (x, 2);", "f") == {"x": INF}
    assert sens("def f (db : bag Row) : bool = db != db;", "f") == {"db": INF}


def test_loop_state_from_integer_literals_holds_noisy_reals() -> None:
    # the state (0, 0) is read as (num, num): the body returns a noisy sum
    body = "{ let (i, acc) = s; sample n = laplace[1] (size db); return (i + 1, acc + n) }"
    assert eps(f"def f (db : bag Row) : fuzzy (num, num) = loop[3] (0, 0) (fun s -> {body});", "f") == Fraction(3)
    assert eps("def f (db : bag Row) : fuzzy int = loop[3] 0 (fun i -> return (i + 1));", "f") == Fraction(0)
    text = "def f (db : bag Row) : fuzzy int = { sample k = loop[3] 0 (fun i -> return (i + 1)); return k };"
    assert str(check(text).definitions["f"].result) == "fuzzy int"
    body = "{ let (i, acc) = s; sample n = laplace[1] (size (filter (fun r -> r.age > size db) db)); return (i + 1, acc + n) }"
    assert [c for c, _, _ in codes(f"def f (db : bag Row) : fuzzy (num, num) = loop[3] (0, 0) (fun s -> {body});")] == ["FZ303"]
    body = "{ let (raw, acc) = s; sample n = laplace[1] raw; return (raw, acc + n) }"
    assert codes(f"def f (db : bag Row) : fuzzy (num, num) = loop[9] (size db, 0) (fun s -> {body});")[0][0] == "FZ301"


def test_if_with_opposite_injections_infers_the_sum() -> None:
    text = "def f (z : num) (w : num) : num = case (if z > 0 then inl (2 * w) else inr true) of inl x -> x | inr y -> 1;"
    assert sens(text, "f") == {"z": INF, "w": S(2)}
    text = "def f (z : num) (w : num) : num = case (if z > 0 then inr w else inl true) of inl x -> 1 | inr y -> y;"
    assert sens(text, "f") == {"z": INF, "w": S(1)}
    text = "def f (z : bool) (db : bag Row) : num = case (if z then inl (laplace[1] (size db)) else inr 1) of inl x -> 1 | inr y -> y;"
    assert codes(text)[0][0] == "FZ213"


def test_case_on_private_sum_joins_the_branches_parts() -> None:
    # only one branch runs: the costs carried by x and y join, they do not add
    text = "def f (e : num + num) : fuzzy num = case e of inl x -> laplace[1] x | inr y -> laplace[1] y;"
    assert sens(text, "f") == {"e": S(1)}
    text = "def f (xs : list num) : fuzzy num = case xs of [] -> return 0 | h :: t -> { sample a = laplace[1] h; laplace[1] (h + 1) };"
    assert sens(text, "f") == {"xs": S(2)}


@pytest.mark.parametrize(
    "text",
    [
        # a local name hides the top-level constant: a static position cannot name it
        # (a `def`'s own parameter there is a static parameter, issue 27; a `def rec` takes none)
        "let e = 2;\ndef rec f (db : bag Row) (e : num) : fuzzy num = laplace[e] (size db);",
        "let e = 2;\ndef f (db : bag Row) : fuzzy num = { let e = size db; laplace[e] (size db) };",
        "let c = 2;\ndef f (db : bag Row) (c : num) : num = sum[0, c] (map (fun r -> r.age) db);",
        "let e = 2;\ndef f (db : bag Row) : fuzzy num = loop[3] 0 (fun e -> laplace[e] (size db));",
    ],
)
def test_shadowed_constants_are_not_static(text: str) -> None:
    assert codes(text)[0][0] == "FZ202"


def test_dot_weights_that_are_shadowed_constants_are_not_static() -> None:
    # the runtime multiplies by the local `w`, so the weights are not the constant 2
    text = "let w = 2;\ndef f (v : vec[2] num) (w : num) : num = dot [w, w] v;"
    assert sens(text, "f") == {"v": INF, "w": INF}
    text = "let w = 3;\ndef f (v : vec[2] num) : num = dot [w, 4] v;"
    assert sens(text, "f") == {"v": S(5)}
