"""`assume def`: declared sensitivities as the interface (Fuzz's trusted
primitives, Reed & Pierce ICFP 2010), proved by z3 where the body allows,
refused when false (FZ316), and otherwise an assumption that `check`, its
JSON, `budget` and `run` name (FZ318). Written against the metric of each
type (language design, section 2), with other spellings than the example's."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.report import json_definitions, text_report
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.pipeline import run


def checked(text: str):
    return check_program(parse_program(text, "<assume>"))


def codes(text: str) -> list[str]:
    with pytest.raises(FuzzError) as info:
        checked(text)
    return [d.code for d in info.value.diagnostics]


def sens(prog, name: str) -> dict[str, object]:
    return {p.name: p.sensitivity.value for p in prog.definitions[name].params}


def test_sorting_a_triple_by_its_first_two_is_proved_and_the_caller_gets_the_declared_bound() -> None:
    prog = checked(
        "assume def order (t :[1] (num, num, num)) : (num, num, num) = {\n"
        "  let (a, b, c) = t;\n"
        "  if a <= b then (a, b, c) else (b, a, c)\n"
        "};\n"
        "def twice (x : num) (y : num) : (num, num, num) = order (x, y, x);")
    assert prog.definitions["order"].assumption.status == "proved"
    assert sens(prog, "order") == {"t": 1}
    assert sens(prog, "twice") == {"x": 2, "y": 1}  # x stands twice in the triple
    assert run(prog, "order", {"t": (Fraction(3), Fraction(1), Fraction(0))}) == (1, 3, 0)


def test_a_record_argument_in_its_tensor_metric() -> None:
    prog = checked("type Band = { lo : num, hi : num };\n"
                   "assume def width (b :[1] Band) : num = abs (b.hi - b.lo);")
    assert prog.definitions["width"].assumption.status in ("typed", "proved")


def test_integers_are_whole_numbers_for_z3() -> None:
    # a unit step is 1-Lipschitz on the integers (its jump is between 0 and 1) but not on the reals
    on_ints = checked("assume def step (n :[1] int) : int = if n >= 1 then 1 else 0;")
    assert on_ints.definitions["step"].assumption.status == "proved"
    assert codes("assume def step (x :[1] num) : num = if x >= 1 then 1 else 0;") == ["FZ316"]


def test_a_false_declaration_is_refused_with_two_arguments() -> None:
    with pytest.raises(FuzzError) as info:
        checked("assume def double (x :[1.5] num) : num = x + x;")
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.code == "FZ316" and "x = " in diagnostic.notes[0] and "x' = " in diagnostic.notes[0]
    assert "1.5-sensitive in x" in diagnostic.message


def test_soundness_regression_a_wrong_bound_never_lowers_a_charge() -> None:
    # before `assume def`, the FZ305 check refused it; now z3 must, or the release would be charged 0.5, not 1
    assert codes("assume def relu2 (x :[0.5] num) : num = max x 0 + max x 0;\n"
                 "def leak (db : bag num) : fuzzy num = laplace[1] (relu2 (sum[0, 1] db));") == ["FZ316"]


def test_a_discrete_result_must_not_change() -> None:
    assert codes("assume def positive (x :[1] num) : bool = x > 0;") == ["FZ316"]


def test_a_declared_zero_is_not_assumed_where_the_body_reads_the_argument() -> None:
    # constant, but `run` never forces what the checker says is used at 0 (issue 9, G2): refused, not proved
    assert codes("assume def one (x :[0] num) : num = if x > 3 then 1 else 2 - 1;") == ["FZ317"]
    prog = checked("assume def one (x :[0.001] num) : num = if x > 3 then 1 else 2 - 1;")
    assert prog.definitions["one"].assumption.status == "proved"


def test_an_undeclared_parameter_keeps_its_inferred_sensitivity_and_is_public_in_the_proof() -> None:
    prog = checked("assume def cap (t : num) (x :[1] num) : num = if x > t then t + (x - t) / 2 else x;")
    assert prog.definitions["cap"].assumption.status == "proved"
    assert sens(prog, "cap") == {"t": None, "x": 1}


def test_what_z3_is_not_given_is_an_unchecked_assumption_everywhere() -> None:
    text = ("assume def smooth (x :[1] num) : num = log (1 + exp x);\n"
            "def inner (db : bag num) : num = smooth (sum[0, 1] db);\n"
            "def outer (db : bag num) : fuzzy num = laplace[0.5] (inner db);\n"
            "def alone (db : bag num) : fuzzy num = laplace[0.5] (size db);")
    prog = checked(text)
    assumption = prog.definitions["smooth"].assumption
    assert assumption.status == "unchecked" and "exp" in assumption.reason
    assert [w.code for w in prog.warnings] == ["FZ318"] and prog.warnings[0].severity == "warning"
    assert prog.definitions["outer"].rests_on == ("smooth",)  # through `inner`
    assert prog.definitions["alone"].rests_on == ()
    report = text_report(prog, None)
    assert "UNCHECKED ASSUMPTION: 1-sensitive in x" in report
    assert report.count("rests on an UNCHECKED ASSUMPTION: `smooth`") == 2  # inner and outer
    documents = {d["name"]: d for d in json_definitions(prog, None)}
    assert documents["smooth"]["assumption"]["status"] == "unchecked"
    assert documents["outer"]["rests_on_unchecked"] == ["smooth"]
    assert "rests_on_unchecked" not in documents["alone"]


def test_a_call_of_another_definition_is_read_as_its_body() -> None:
    prog = checked("def g (x : num) (c : num) : num = x * c;\n"
                   "assume def f (x :[1] num) : num = g x 3 - g x 2;")
    assert prog.definitions["f"].assumption.status == "proved"  # the rules: inf (a product), z3: x exactly
    assert codes("def g (x : num) (c : num) : num = x * c;\nassume def h (x :[4] num) : num = g x 3 + g x 2;") \
        == ["FZ316"]
    recursive = checked("def rec g (x : num) : num = x;\nassume def f (x :[1] num) : num = g x + g x - g x;")
    assert recursive.definitions["f"].assumption.status == "unchecked"
    assert "`g`" in recursive.definitions["f"].assumption.reason


def test_where_assume_does_not_apply() -> None:
    assert codes("assume def noisy (x :[1] num) : fuzzy num = laplace[1] x;") == ["FZ317"]
    assert codes("assume def bare (x : num) : num = x + x;") == ["FZ317"]
    assert codes("assume def over (n : nat) (x :[n] num) : num = n * x;") == ["FZ317"]


def test_assume_is_a_name_elsewhere() -> None:
    prog = checked("def assume (x : num) : num = x;\ndef f (assume : num) : num = assume + 1;")
    assert set(prog.definitions) == {"assume", "f"}


def test_run_says_the_release_rests_on_the_assumption(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "p.fz"
    program.write_text("assume def smooth (x :[1] num) : num = log (1 + exp x);\n"
                       "def release (db : bag num) : fuzzy num = laplace[0.5] (smooth (sum[0, 1] db));\n")
    data = tmp_path / "d.csv"
    data.write_text("x\n0.5\n1\n")
    code = main(["run", str(program), "release", "--data", f"db={data}", "--budget", "1",
                 "--ledger", str(tmp_path / "l.sqlite"), "--json"])
    out = capsys.readouterr()
    assert code == 0 and "UNCHECKED ASSUMPTION that `smooth` is 1-sensitive in x" in out.err
    assert json.loads(out.out)["charged"]["epsilon"] == 0.5


def test_the_printer_writes_both_declarations_back() -> None:
    from fuzzpy.frontend.printer import print_program as program_text

    text = ("assume def f (x :[1] num) : num = max x 0;\n"
            "def g (db : bag num) : fuzzy num privacy zcdp[1e-6] = gauss[2] (size db);\n")
    printed = program_text(parse_program(text, "<a>"))
    assert "assume def f" in printed and "privacy zcdp[1e-6]" in printed
    assert program_text(parse_program(printed, "<b>")) == printed


def test_what_z3_proves_holds_on_random_pairs_run_by_the_interpreter() -> None:
    import random

    prog = checked(
        "assume def cswp (p :[1] (num, num)) : (num, num) = { let (a, b) = p; (min a b, max a b) };\n"
        "assume def knee (x :[1] num) : num = if x > 2 then 2 + (x - 2) / 3 else if x < -1 then -1 else x;\n"
        "assume def spread (p :[2] (num, num)) : num = abs (fst2 p - snd2 p);\n"
        "def fst2 (p : (num, num)) : num = { let (a, b) = p; a };\n"
        "def snd2 (p : (num, num)) : num = { let (a, b) = p; b };")
    assert all(prog.definitions[n].assumption.status in ("proved", "typed") for n in ("cswp", "knee", "spread"))
    rng = random.Random(27)

    def number() -> Fraction:
        return Fraction(rng.randint(-400, 400), rng.choice([1, 3, 7, 8]))

    for _ in range(40):
        p, q = (number(), number()), (number(), number())
        moved = abs(p[0] - q[0]) + abs(p[1] - q[1])
        a, b = run(prog, "cswp", {"p": p}), run(prog, "cswp", {"p": q})
        assert abs(a[0] - b[0]) + abs(a[1] - b[1]) <= moved
        assert abs(run(prog, "spread", {"p": p}) - run(prog, "spread", {"p": q})) <= 2 * moved
        x, y = number(), number()
        assert abs(run(prog, "knee", {"x": x}) - run(prog, "knee", {"x": y})) <= abs(x - y)


def test_a_with_pair_in_its_max_metric() -> None:
    # <a, b> moves by max(|da|, |db|): their sum is 2-sensitive in it, their larger one 1-sensitive
    prog = checked("assume def top (w :[1] <num & num>) : num = max (fst w) (snd w);")
    assert prog.definitions["top"].assumption.status in ("typed", "proved")
    assert codes("assume def both (w :[1.5] <num & num>) : num = fst w + snd w;") == ["FZ316"]
    assert checked("assume def both (w :[2] <num & num>) : num = fst w + snd w;").definitions["both"] \
        .assumption.status in ("typed", "proved")
