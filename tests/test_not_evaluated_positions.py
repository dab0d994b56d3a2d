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
