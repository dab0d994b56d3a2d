"""What the checker counts at sensitivity 0 is never evaluated by `run`, also
where a tuple is written out and taken apart at once, and where a per-row
function reaches a macro-level binding it uses at 0 (review s29d, UNSOUND 1:
`let (x, y) = (size db, deep (size db))` released on 9,999 rows and failed
FZ519 on 10,000, after the charge; the same per row with "ran out of
recursive calls on the all-zero row"). docs/semantics.md, "What the checker
scales by 0 is not evaluated". Each definition is 1-DP; on the dataset
holding 42 the unused part recurses past the budget if it is evaluated, so
the outcome must not depend on whether 42 is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzpy.cli import main
from tests.notes import without_registration

PRELUDE = """
def rec spin (n : int) : num = if n <= 0 then 0 else spin (n - 1);
def trap (db : bag num) : int = if size (filter (fun v -> v == 42) db) > 0 then 20000 else 0;
def keep (junk : num) (v : num) : num = { let j = junk; v };
"""

PROGRAMS = {
    # macro level: the pair form is `let a = e1; let b = e2;`, call by need
    "pair in a block": "{ let (n, junk) = (size db, spin (trap db)); laplace[1] n }",
    "pair with let-in": "laplace[1] (let (n, junk) = (size db, spin (trap db)) in n)",
    "triple, junk in the middle": "{ let (a, junk, c) = (2, spin (trap db), size db); laplace[1] (a + c) }",
    "a sampled first part": "{ let (m, junk) = (laplace[1] (size db), spin (trap db)); m }",
    "taken apart twice": "{ let (n, j) = (size db, spin (trap db)); let (u, w) = (n, j); laplace[1] u }",
    # per row: the row's function uses the macro-level binding at 0
    "per-row pair in map": "{ let z = spin (trap db); laplace[1] (sum[0, 1] (map (fun v -> { let (a, b) = (v, z); a }) db)) }",
    "per-row pair in filter": "{ let z = spin (trap db); laplace[1] (size (filter (fun v -> let (k, b) = (v > 1, z) in k) db)) }",
    "per-row unused let": "{ let z = spin (trap db); laplace[1] (sum[0, 1] (map (fun v -> { let u = z; v }) db)) }",
    "per-row unused argument": "{ let z = spin (trap db); laplace[1] (sum[0, 1] (map (fun v -> (fun (u : num) -> v) z) db)) }",
    "partial application": "laplace[1] (sum[0, 1] (map (keep (spin (trap db))) db))",
    "closure in a closure": "{ let z = spin (trap db); let g = fun (u : num) -> { let j = z; u }; "
    "laplace[1] (sum[0, 1] (map (fun v -> g v) db)) }",
}

#: in the default suite (the others run in the slow job)
FAST = {"pair in a block", "a sampled first part", "per-row pair in map", "per-row unused argument", "partial application"}


def _outcome(tmp: Path, program: Path, rows: list[float], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    data = tmp / f"d{len(rows)}.csv"
    data.write_text("v\n" + "".join(f"{r}\n" for r in rows))
    capsys.readouterr()
    code = main(["run", str(program), "p", "--data", f"db={data}", "--budget", "10",
                 "--ledger", str(tmp / f"l{len(rows)}.sqlite"), "--seed", "3", "--engine", "memory"])
    _, err = capsys.readouterr()
    return code, without_registration(err).replace(str(data), "DATA").replace(str(tmp), "TMP")


@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in sorted(PROGRAMS)])
def test_an_unused_part_is_never_evaluated(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "p.fz"
    program.write_text(PRELUDE + f"def p (db : bag num) : fuzzy num = {PROGRAMS[name]};\n")
    assert main(["check", str(program)]) == 0
    rows = [1.5, 0.25, 3, 1, 0]
    plain = _outcome(tmp_path, program, rows, capsys)
    with_42 = _outcome(tmp_path, program, [*rows, 42], capsys)
    assert plain == (0, plain[1]) and with_42 == plain, (plain, with_42)
