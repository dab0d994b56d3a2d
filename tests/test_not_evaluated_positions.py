"""What the checker scales by 0 is never evaluated by `run`, through any
binder (adversarial reviews of issue 9, F1/F2 and G1): the vector `len`
measures (its length comes from the type), `loop`'s initial state, the bag of
`subsample` and the data of `expmech` (passed on unevaluated). Each program
below is 0-DP; on the neighbour holding 42 the hidden argument would recurse
past the budget (FZ519) if it were evaluated."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzpy.cli import main
from tests.notes import without_registration

PRELUDE = (
    "def rec deep (n : num) : num = if n <= 0 then 0 else deep (n - 1);\n"
    "def has42 (db : bag num) : num = if size (filter (fun x -> x == 42) db) > 0 then 20000 else 0;\n"
    "def hidden (db : bag num) : bag num = if deep (has42 db) > 0 then db else filter (fun x -> x > 1) db;\n"
)

PROGRAMS = {
    "len literal": "def p (db : bag num) : fuzzy num = return (len ([deep (has42 db)] : vec[1] num));",
    "len tabulate": "def p (db : bag num) : fuzzy num = return (len (tabulate [1, 2] (fun t -> deep (has42 db))));",
    "len through def": "def L (v : vec[inf] num) : num = len v;\n"
    "def p (db : bag num) : fuzzy num = return (L (tabulate [1, 2] (fun t -> deep (has42 db))));",
    "len through lambda": "def p (db : bag num) : fuzzy num = return ((fun v -> len v) (tabulate [1, 2] (fun t -> deep (has42 db))));",
    "len through let": "def p (db : bag num) : fuzzy num = { let v = tabulate [1, 2] (fun t -> deep (has42 db)); return (len v) };",
    "loop state": "def p (db : bag num) : fuzzy num = loop[1] (deep (has42 db)) (fun x -> laplace[1] 0);",
    "loop state scaled": "def p (db : bag num) : fuzzy num = loop[2] (deep (has42 db)) (fun x -> laplace[1] (0 * x));",
    "loop through def": "def I (x0 : num) : fuzzy num = loop[1] x0 (fun x -> laplace[1] 0);\n"
    "def p (db : bag num) : fuzzy num = I (deep (has42 db));",
    "loop through let": "def p (db : bag num) : fuzzy num = { let x0 = deep (has42 db); loop[1] x0 (fun x -> laplace[1] 0) };",
    "subsample bag": "def p (db : bag num) : fuzzy num = subsample[0.5] (fun b -> laplace[1] 0) (hidden db);",
    "subsample through def": "def S (b : bag num) : fuzzy num = subsample[0.5] (fun c -> laplace[1] 0) b;\n"
    "def p (db : bag num) : fuzzy num = S (hidden db);",
    "expmech data": "def p (db : bag num) : fuzzy num = expmech[1] [0, 1] (fun c d -> 0) (hidden db);",
    "expmech through def": "def E (b : bag num) : fuzzy num = expmech[1] [0, 1] (fun c d -> 0) b;\n"
    "def p (db : bag num) : fuzzy num = E (hidden db);",
}


def _run(tmp: Path, program: Path, rows: list[int], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    data = tmp / f"d{len(rows)}.csv"
    data.write_text("x\n" + "".join(f"{r}\n" for r in rows))
    ledger = tmp / f"l{len(rows)}.sqlite"
    capsys.readouterr()
    code = main(["run", str(program), "p", "--data", f"db={data}", "--budget", "10",
                 "--ledger", str(ledger), "--seed", "7", "--json"])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_zero_scaled_arguments_are_not_evaluated(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "p.fz"
    program.write_text(PRELUDE + PROGRAMS[name] + "\n")
    assert main(["check", str(program)]) == 0
    without = _run(tmp_path, program, [1, 2], capsys)
    with_42 = _run(tmp_path, program, [1, 2, 42], capsys)
    assert without[0] == with_42[0] == 0
    assert '"released"' in without[1] and without[1].split('"released"')[1][:40] == with_42[1].split('"released"')[1][:40]


H = "def h (y : num) (x : num) : num = case [x] of [] -> 0 | t :: u -> (if t > 41 then 0 * t + y else 0);\n"

DD = ("def rec dd (n : num) : num = if n <= 0 then 0 else 1 + dd (n - 1);\n"
      "def rec rr (n : num) (k : num) (f : num -> num) : num = if k >= 1 then f 0 else rr n 1 f;\n")

#: Per-row functions that reach a macro-level binding only on some rows
#: (adversarial review of issue 9, round 2, G2/G3): the outcome, the release
#: and what the analyst sees must not depend on whether the row 42 is there.
ROW_REACHED = {
    "captured let, column mode": "def rec r (n : num) (k : num) (f : num -> num) : num = "
    "if k >= 1 then f 0 else (if n > 41 then r n 1 f else 0);\n"
    "def p (db : bag num) : fuzzy num = { let y = deep 20000; "
    "laplace[1] (sum[0, 1] (map (fun x -> r x 0 (fun u -> 0 * u + y)) db)) };",
    "captured let, row mode": "def p (db : bag num) : fuzzy num = { let y = deep 20000; "
    "laplace[1] (sum[0, 1] (map (fun x -> case [x] of [] -> 0 | h :: t -> (if h > 41 then 0 * h + y else 0)) db)) };",
    "shared budget": "def p (db : bag num) : fuzzy num = { let y = deep 8000; let z = deep 6000; "
    "laplace[1] (z + sum[0, 1] (map (fun x -> case [x] of [] -> 0 | h :: t -> (if h > 41 then 0 * h + y else 0)) db)) };",
    "parameterless def": "def y : num = deep 20000;\n"
    "def p (db : bag num) : fuzzy num = laplace[1] (sum[0, 1] (map (fun x -> case [x] of [] -> 0 | h :: t -> (if h > 41 then y else 0)) db));",
    "partially applied def": "def helper (y : num) (x : num) : num = case [x] of [] -> 0 | h :: t -> (if h > 41 then y else 0);\n"
    "def p (db : bag num) : fuzzy num = { let y = deep 20000; laplace[1] (sum[0, 1] (map (helper y) db)) };",
    # round 3 (H1): reached from a row through a capture used at 0, a tuple,
    # a sum of functions, a partial application, a function in `loop`'s state
    "capture used at 0": "def rec r (n : num) (k : num) (f : num -> num) : num = "
    "if k >= 1 then f 0 else (if n > 41 then r n 1 f else 0);\n"
    "def p (db : bag num) : fuzzy num = { let y = deep 20000; "
    "laplace[1] (sum[0, 1] (map (fun x -> r x 0 (fun u -> { let z = y; 0 })) db)) };",
    "function in a tuple": H + "def p (db : bag num) : fuzzy num = { let t = (h (deep 20000), 1); "
    "laplace[1] (sum[0, 1] (map (fun x -> { let (g, c) = t; g x }) db)) };",
    "function in a sum": H + "def pick (y : num) : (num -> num) + num = inl (h y);\n"
    "def p (db : bag num) : fuzzy num = { let s = pick (deep 20000); "
    "laplace[1] (sum[0, 1] (map (fun x -> case s of inl g -> g x | inr c -> 0) db)) };",
    "function in loop state": H + "def p (db : bag num) : fuzzy num = { sample g = loop[1] (h (deep 20000)) (fun f -> return f); "
    "laplace[1] (sum[0, 1] (map (fun x -> g x) db)) };",
    # round 4 (K1/K2): what one row computed must not be kept for the others
    "value kept for later rows": DD + "def p (db : bag num) : fuzzy num = { let y = dd 6000; let z = dd 6000 + y; "
    "laplace[1] (sum[0, 1] (map (fun x -> case [x] of [] -> 0 | t :: u -> (if t > 41 then (fun a -> 0 * t + 1) y "
    "else rr t 0 (fun w -> (fun b -> 0 * t + 1) z))) db)) };",
    "value kept for the next map": DD + "def p (db : bag num) : fuzzy num = { let y = dd 6000; let z = dd 6000 + y; "
    "let s1 = sum[0, 1] (map (fun x -> case [x] of [] -> 0 | t :: u -> (if t > 41 then (fun a -> 0 * t) y else 0)) db); "
    "let s2 = sum[0, 1] (map (fun x -> case [x] of [] -> 0 | t :: u -> (if t < 0.5 then (fun b -> 0 * t) z else 0)) db); "
    "laplace[1] (s1 + s2) };",
    "row-by-row fallback": "def rec r (n : num) (k : num) : num = if k >= 1 then (case [n] of [] -> 0 | h :: t -> 1) "
    "else (if n > 41 then r n 1 else 0);\n"
    "def p (db : bag num) : fuzzy num = laplace[1] (sum[0, 1] (map (fun x -> r x 0) db));",
}


def _outcome(tmp: Path, program: Path, rows: list[int], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    data = tmp / f"d{len(rows)}.csv"
    data.write_text("x\n" + "".join(f"{r}\n" for r in rows))
    capsys.readouterr()
    code = main(["run", str(program), "p", "--data", f"db={data}", "--budget", "10",
                 "--ledger", str(tmp / f"l{len(rows)}.sqlite"), "--seed", "7"])
    out, err = capsys.readouterr()
    released = out.split("charged")[0] if code == 0 else ""
    # a first run's registration note (its recorded types, issue 31 F1) is the holder's, not the release's
    return code, released, without_registration(err).replace(str(data), "DATA").replace(str(tmp), "TMP")


#: ~36 s of evaluation each: run in the slow job
SLOW_ROW_REACHED = {"value kept for later rows"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_ROW_REACHED else n
                                  for n in sorted(ROW_REACHED)])
def test_what_rows_reach_is_not_decided_by_the_rows(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "p.fz"
    program.write_text(PRELUDE + ROW_REACHED[name] + "\n")
    assert main(["check", str(program)]) == 0
    rows = list(range(1, 21))
    code_a, released_a, err_a = _outcome(tmp_path, program, rows, capsys)
    code_b, released_b, err_b = _outcome(tmp_path, program, [42, *rows], capsys)  # first: before every other row
    assert code_a == code_b and err_a == err_b
    if code_a == 0:  # sum[0, 1] moves by at most 1
        assert abs(float(released_a.split()[-1]) - float(released_b.split()[-1])) <= 1
