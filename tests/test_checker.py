"""The checker's rules, number by number (issue 3, "Must show")."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from fuzzpy.accounting.events import Gaussian, Group, Laplace, Repeat, Subsample, Verified
from fuzzpy.checker import check_program
from fuzzpy.checker.costs import pure_epsilon
from fuzzpy.checker.result import CheckedProgram
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.sensitivity import INF, Sens

ROW = "type Row = { age : num, income : num, zip : int };\n"


def check(text: str) -> CheckedProgram:
    return check_program(parse_program(ROW + text, "t.fz"))


def sens(text: str, name: str) -> dict[str, Sens]:
    return {p.name: p.sensitivity for p in check(text).definitions[name].params}


def events(text: str, name: str, db: str = "db") -> tuple:
    return check(text).definitions[name].privacy[db]


def eps(text: str, name: str, db: str = "db") -> Fraction | None:
    return pure_epsilon(events(text, name, db))


def rejected(text: str) -> list[tuple[str, int, int]]:
    """(code, line, col) of every diagnostic, lines counted in ``text``."""
    with pytest.raises(FuzzError) as info:
        check(text)
    return [(d.code, d.span.line - 1, d.span.col) for d in info.value.diagnostics]


def S(x: str | int) -> Sens:
    return Sens.of(x)


# ---------------------------------------------------------------- sensitivities


def test_sums_scaling_and_products() -> None:
    assert sens("def f (x : num) : num = x + x;", "f") == {"x": S(2)}
    assert sens("def f (x : num) : num = 3 * x;", "f") == {"x": S(3)}
    assert sens("def f (x : num) (y : num) : num = x * y;", "f") == {"x": INF, "y": INF}
    assert sens("def f (x : num) : num = x / 4 - x;", "f") == {"x": S("1.25")}


def test_let_scales_the_bound_expression() -> None:
    text = "def f (x : num) (y : num) : num = { let z = 2 * x; let z2 = z + y; z2 };"
    assert sens(text, "f") == {"x": S(2), "y": S(1)}
    text = "def f (x : num) : num = { let z = 2 * x; z + z + z };"
    assert sens(text, "f") == {"x": S(6)}


def test_if_joins_branches_and_branching_on_a_real_is_infinite() -> None:
    text = "def f (z : num) (x : num) (y : num) (w : num) : num = if z == 1 then 5 * (x + x + y) else w + y / 2 + x;"
    assert sens(text, "f") == {"z": INF, "x": S(10), "y": S(5), "w": S(1)}
    assert sens("def f (x : num) : num = if x == 1.0 then 100 else 0;", "f") == {"x": INF}
    assert sens("def f (x : num) : num = if x > 0 then 1 else 0;", "f") == {"x": INF}


def test_tensor_pairs_add_and_with_pairs_join() -> None:
    assert sens("def f (x : num) : (num, num) = (x, 2 * x);", "f") == {"x": S(3)}
    assert sens("def f (x : num) : <num & num> = <x, 2 * x>;", "f") == {"x": S(2)}
    assert sens("def f (p : (num, num)) : num = { let (a, b) = p; a + 3 * b };", "f") == {"p": S(3)}


def test_case_scales_the_scrutinee() -> None:
    assert sens("def f (s : num + num) : num = case s of inl a -> 2 * a | inr b -> b;", "f") == {"s": S(2)}
    text = "def f (xs : list num) : num = case xs of [] -> 0 | h :: t -> 3;"
    assert sens(text, "f") == {"xs": S(1)}  # case_scale never scales by 0


def test_closures_in_map_and_filter_scale_captures_by_infinity() -> None:
    text = "def f (t : num) (db : bag Row) : num = size (filter (fun r -> r.age > t) db);"
    assert sens(text, "f") == {"t": INF, "db": S(1)}
    text = "def f (c : num) (db : bag Row) : bag num = map (fun r -> r.income + c) db;"
    assert sens(text, "f") == {"c": INF, "db": S(1)}


def test_primitives() -> None:
    assert sens("def f (db : bag Row) : num = sum[-5, 3] (map (fun r -> r.income) db);", "f") == {"db": S(5)}
    assert sens("def f (x : num) : num = clip[0, 10] (abs x) + sigmoid x;", "f") == {"x": S("1.25")}
    assert sens("def f (db : bag Row) : vec[1] num = counts (group[3] (fun r -> r.zip) db);", "f") == {"db": S(1)}
    text = "def f (db : bag Row) : vec[inf] num = tabulate [1, 2, 3] (fun t -> size (filter (fun r -> r.zip == t) db));"
    assert sens(text, "f") == {"db": S(1)}


def test_vector_literals_use_their_metric() -> None:
    assert sens("def f (x : num) : vec[inf] num = [x, x, 2 * x];", "f") == {"x": S(2)}
    assert sens("def f (x : num) : vec[1] num = [x, x, 2 * x];", "f") == {"x": S(4)}
    assert sens("def f (x : num) (y : num) : vec[2] num = [3 * x, 4 * x, y];", "f") == {"x": S(5), "y": S(1)}


def test_norm_conversions() -> None:
    # inf -> 1 costs the length; 1 -> inf and 1 -> 2 cost 1; inf -> 2 costs sqrt(length)
    text = "def f (x : num) : vec[1] num = ([x, x, x] : vec[inf] num);"
    assert sens(text, "f") == {"x": S(3)}
    text = "def f (x : num) : vec[inf] num = ([x, x] : vec[1] num);"
    assert sens(text, "f") == {"x": S(2)}
    text = "def f (x : num) : vec[2] num = ([x, x, x, x] : vec[inf] num);"
    assert sens(text, "f") == {"x": S(2)}


def test_vector_arithmetic() -> None:
    text = "def f (u : vec[2] num) (v : vec[2] num) : vec[2] num = 2 * u - v / 2;"
    assert sens(text, "f") == {"u": S(2), "v": S("0.5")}
    assert sens("def f (u : vec[2] num) (v : vec[2] num) : num = dot u v;", "f") == {"u": INF, "v": INF}
    assert sens("def f (db : bag Row) : vec[2] num = vsum[3] (map (fun r -> clip2[1] [r.age, r.income]) db);", "f") == {"db": S(3)}


def test_calls_scale_by_the_callee_sensitivity() -> None:
    text = "def g (x : num) : num = 3 * x;\ndef f (y : num) : num = g (g y) + y;"
    assert sens(text, "f") == {"y": S(10)}
    text = "def over (t : num) (r : Row) : bool = r.age > t;\ndef f (db : bag Row) : num = size (filter (over 40) db);"
    assert sens(text, "f") == {"db": S(1)}


def test_recursion_is_checked_against_its_declared_signature() -> None:
    text = "def rec total (xs :[1] list num) : num = case xs of [] -> 0 | h :: t -> h + total t;"
    assert sens(text, "total") == {"xs": S(1)}


# ---------------------------------------------------------------- privacy


def test_noisy_count_and_composition() -> None:
    assert eps("def f (db : bag Row) : fuzzy num = laplace[0.1] (size db);", "f") == Fraction(1, 10)
    text = "def f (db : bag Row) : fuzzy (num, num) = { sample a = laplace[2] (size db); sample b = laplace[3] (size db); return (a, b) };"
    assert eps(text, "f") == 5


def test_histogram_costs_once_and_separate_counts_add() -> None:
    text = "def f (db : bag Row) : fuzzy (vec[1] num) = laplace[0.5] (counts (group[10] (fun r -> r.zip) db));"
    assert eps(text, "f") == Fraction(1, 2)
    counts = "; ".join(f"sample c{i} = laplace[0.5] (size (filter (fun r -> r.zip == {i}) db))" for i in range(4))
    text = f"def f (db : bag Row) : fuzzy (num, num, num, num) = {{ {counts}; return (c0, c1, c2, c3) }};"
    assert eps(text, "f") == 2


def test_split_costs_once() -> None:
    text = (
        "def f (db : bag Row) : fuzzy (num, num) = { let (a, b) = split (fun r -> r.age < 30) db;"
        " sample x = laplace[0.3] (size a); sample y = laplace[0.3] (size b); return (x, y) };"
    )
    assert eps(text, "f") == Fraction(3, 10)


def test_clamped_sum_loop_and_expmech() -> None:
    text = "def f (db : bag Row) : fuzzy num = laplace[0.01] (sum[0, 300] (map (fun r -> r.income) db));"
    assert eps(text, "f") == 3
    text = "def f (db : bag Row) : fuzzy num = loop[10] 0 (fun x -> laplace[0.2] (size db));"
    # `size db` is shared by replace-one neighbours: its replace-one move (`Laplace.replaced`) is 0
    assert events(text, "f") == (Repeat(10, (Laplace(Fraction(1), Fraction(5), Fraction(0)),)),)
    assert eps(text, "f") == 2
    text = "def f (db : bag Row) : fuzzy num = expmech[0.7] [1, 2, 3] (fun c d -> size (filter (fun r -> r.zip == c) d)) db;"
    assert eps(text, "f") == Fraction(7, 10)


def test_sampled_values_are_public() -> None:
    text = "def f (db : bag Row) : fuzzy num = { sample n = laplace[1] (size db); if n > 10 then laplace[1] (size db) else return n };"
    assert eps(text, "f") == 2


def test_gaussian_vectors_loops_and_subsampling_are_events() -> None:
    text = "def f (db : bag Row) : fuzzy (vec[2] num) = gauss[4] (vsum[2] (map (fun r -> [r.age, r.income]) db));"
    assert events(text, "f") == (Gaussian(Fraction(2), Fraction(4)),)
    text = (
        "def f (db : bag Row) : fuzzy (vec[2] num) = loop[100] ([0, 0] : vec[2] num) (fun w ->"
        " { sample g = gauss[3] (vsum[1] (map (fun r -> clip2[1] [r.age, r.income]) db)); return w - g / 10 });"
    )
    assert events(text, "f") == (Repeat(100, (Gaussian(Fraction(1), Fraction(3)),)),)
    text = "def f (db : bag Row) : fuzzy num = subsample[0.01] (fun b -> gauss[2] (size b)) db;"
    assert events(text, "f") == (Subsample(Fraction(1, 100), (Gaussian(Fraction(1), Fraction(2), replaced=Fraction(0)),), direct=True),)
    assert eps(text, "f") is None


def test_group_privacy_for_events_that_do_not_scale() -> None:
    text = (
        "def inner (db : bag Row) : fuzzy num = subsample[0.1] (fun b -> laplace[1] (size b)) db;\n"
        "def outer (db : bag Row) : fuzzy (num, num) = { let (a, b) = split (fun r -> r.age < 3) db;"
        " sample x = inner a; sample y = inner db; return (x, y) };"
    )
    sub = Subsample(Fraction(1, 10), (Laplace(Fraction(1), Fraction(1), Fraction(0)),))
    # `inner db` samples the dataset itself (`direct`); `inner a`, a part of it, does not.
    # Two routes to `db` (the part `a` and `db` itself): their pure costs add, as
    # one pure event (a draw may read both routes: never independent releases)
    from fuzzpy.checker.costs import pure_routes

    assert events(text, "outer") == (pure_routes((dataclasses.replace(sub, direct=True), sub)),)
    text = "def g (x : num) : fuzzy num = laplace[1] x;\ndef f (db : bag Row) : fuzzy num = g (3 * size db);"
    assert events(text, "f") == (Laplace(Fraction(3), Fraction(1)),)


# ---------------------------------------------------------------- rejections


def test_rejections_have_codes_and_spans() -> None:
    assert ("FZ301", 1, 36) in rejected("def f (db : bag Row) : fuzzy num = return (size db);")
    assert ("FZ302", 1, 36) in rejected("def f (db : bag Row) : fuzzy num = if size db > 3 then laplace[1] 0 else return 0;")
    text = "def f (db : bag Row) : fuzzy num = laplace[1] (size (map (fun r -> size db) db));"
    assert ("FZ303", 1, text.index("(fun r") + 1) in rejected(text)
    codes = rejected("def f (db : bag Row) : fuzzy num = laplace[1] (sum[0, inf] (map (fun r -> r.income) db));")
    assert codes[0][0] == "FZ304"
    assert ("FZ305", 1, 7) in rejected("def f (x :[1] num) : num = x + x;")
    assert ("FZ305", 1, 7) in rejected("def f (x :[1] num) : num = x * x;")
    text = "def rec f (n : int) (db : bag Row) : fuzzy num =\n if n == 0 then return 0 else f (n - 1) db;"
    assert ("FZ307", 2, 31) in rejected(text)


def test_every_error_is_reported() -> None:
    text = "def a (x :[1] num) : num = x + x;\ndef b (db : bag Row) : fuzzy num = return (size db);\ndef c (x : num) : num = size x;"
    assert [code for code, _, _ in rejected(text)] == ["FZ305", "FZ301", "FZ201"]


@pytest.mark.parametrize(
    "body",
    [
        "def f (x : num) : num = if x then 1 else 0;",
        "def f (x : num) : num = size x;",
        "def f (b : bool) : num = if b then 1 else true;",
        "def f (db : bag Row) : fuzzy num = size db;",
        "def f (x : num) : num = x + true;",
        "def f (db : bag Row) : num = size (filter (fun r -> r.age) db);",
        "def f (u : vec[1] num) (v : vec[2] num) : vec[2] num = u + v;",
    ],
)
def test_type_mismatches(body: str) -> None:
    assert [code for code, _, _ in rejected(body)] == ["FZ201"]


def test_other_type_errors() -> None:
    assert rejected("def f (x : num) : num = y;")[0][0] == "FZ207"
    assert rejected("def f (r : Row) : num = r.salary;")[0][0] == "FZ205"
    # a parameter in a noise scale is static now (issue 27): a scale read off the data is still refused
    assert rejected("def f (db : bag Row) : fuzzy num = laplace[size db] (size db);")[0][0] == "FZ202"
    assert rejected("def f (v : vec[inf] num) : vec[1] num = v;")[0][0] == "FZ214"
    assert rejected("def f (db : bag Row) : num = map (fun r -> r.age) db;")[0][0] == "FZ201"


# ---------------------------------------------------------------- mechanisms

SVT = """
mechanism above (q : vec[inf] num, t : num, eps : num) : int
  requires eps > 0
  privacy eps
{
  var out = -1;
  return out;
}
def counts_over (db : bag Row) : vec[inf] num = tabulate [10, 20, 30] (fun t -> size (filter (fun r -> r.age > t) db));
"""


class _Verdict:
    def __init__(self, status: str) -> None:
        self.status, self.reason, self.counterexample = status, "stub", None


class FakeVerifier:
    """Stands in for fuzzpy.verifier.verify_mechanism; records its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.status = "proved"

    def __call__(self, decl: object, program: object, **_: object) -> _Verdict:
        self.calls.append(decl.name)  # type: ignore[attr-defined]
        return _Verdict(self.status)


@pytest.fixture
def verifier(monkeypatch: pytest.MonkeyPatch) -> FakeVerifier:
    import fuzzpy.verifier

    fake = FakeVerifier()
    monkeypatch.setattr(fuzzpy.verifier, "verify_mechanism", fake, raising=False)
    return fake


def test_mechanism_call_costs_its_verified_claim(verifier: FakeVerifier) -> None:
    text = SVT + "def f (db : bag Row) : fuzzy int = { sample a = above (counts_over db) 100 0.5; above (counts_over db) 50 0.25 };"
    assert events(text, "f") == (Verified("above", Fraction(1, 2)), Verified("above", Fraction(1, 4)))
    assert verifier.calls == ["above"]  # verified once, lazily


def test_mechanism_call_rules(verifier: FakeVerifier) -> None:
    # a parameter named in the claim is a static parameter (DFuzz, issue 31):
    # every call checks the body at its number, which must be static
    text = SVT + "def f (db : bag Row) (e : num) : fuzzy int = above (counts_over db) 100 e;"
    text += "\ndef g (db : bag Row) : fuzzy int = f db (size db);"
    assert rejected(text)[0][0] == "FZ202"
    text = SVT + "def f (db : bag Row) (e : num) : fuzzy int = above (counts_over db) 100 (e - 1);"
    text += "\ndef g (db : bag Row) : fuzzy int = f db 0.5;"
    assert rejected(text)[0][0] in ("FZ309", "FZ202")  # e - 1 is not positive for every e; at 0.5 it is -0.5
    text = SVT + "def f (db : bag Row) (e : num) : fuzzy int = above (counts_over db) 100 e;"
    text += "\ndef g (db : bag Row) : fuzzy int = f db 0.5;"
    assert events(text, "g") == (Verified("above", Fraction(1, 2)),)
    # a 2-sensitive query vector: group privacy over 2 (issue 28; once FZ308)
    text = SVT + "def f (db : bag Row) : fuzzy int = above (2 * counts_over db) 100 0.5;"
    assert events(text, "f") == (Group(Fraction(2), (Verified("above", Fraction(1, 2)),)),)
    text = SVT + "def f (db : bag Row) : fuzzy int = above (tabulate [1] (fun t -> size db > 3)) 100 0.5;"
    assert rejected(text)[0][0] in ("FZ308", "FZ201")  # an infinitely sensitive input: no chain
    text = SVT + "def f (db : bag Row) : fuzzy int = above (counts_over db) (size db) 0.5;"
    assert rejected(text)[0][0] == "FZ309"
    text = SVT + "def f (db : bag Row) : fuzzy int = above (counts_over db) 100 0;"
    assert rejected(text)[0][0] == "FZ309"


def test_unproved_mechanisms_are_refused(verifier: FakeVerifier) -> None:
    verifier.status = "refuted"
    text = SVT + "def f (db : bag Row) : fuzzy int = above (counts_over db) 100 0.5;"
    assert rejected(text)[0][0] == "FZ310"


def test_group_privacy_for_a_verified_mechanism(verifier: FakeVerifier) -> None:
    text = SVT + (
        "def g (q : vec[inf] num) : fuzzy int = above q 100 0.5;\n"
        "def f (db : bag Row) : fuzzy int = g (2 * counts_over db);"
    )
    assert events(text, "f") == (Group(Fraction(2), (Verified("above", Fraction(1, 2)),)),)


def test_claims_may_use_the_static_length_of_a_private_vector(verifier: FakeVerifier) -> None:
    text = SVT.replace("privacy eps", "privacy eps * len(q) / 3") + (
        "def f (db : bag Row) : fuzzy int = above (counts_over db) 100 0.5;"
    )
    assert events(text, "f") == (Verified("above", Fraction(1, 2)),)


def test_explaining_a_rejected_definition_shows_the_derivation(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # noqa: ANN001
    from fuzzpy.cli import main

    path = tmp_path / "leak.fz"
    path.write_text(ROW + "def leak (db : bag Row) : fuzzy num = return (size db);\n")
    assert main(["check", str(path), "--explain", "leak"]) == 1
    out, err = capsys.readouterr()
    assert "[return] return (size db)" in out and "rejected (FZ301)" in out and "error[FZ301]" in err


def test_mechanisms_are_verified_only_when_called(verifier: FakeVerifier) -> None:
    check(SVT + "def f (db : bag Row) : fuzzy num = laplace[1] (size db);")
    assert verifier.calls == []


def test_lengths_never_lose_an_infinite_move() -> None:
    # a list's length moves only when the list moves infinitely far: the
    # positive floor 1 keeps that; a vector's length is part of its type
    # (issue 9), the same for all values of the type, so `len` is public
    text = "def f (xs : list num) (v : vec[1] num) (db : bag Row) : num = len xs + len v + len (counts (group[3] (fun r -> r.zip) db));"
    assert sens(text, "f") == {"xs": S(1), "v": S(0), "db": S(0)}
    assert sens("def f (x : num) : num = len [x * x, 1];", "f") == {"x": INF}
