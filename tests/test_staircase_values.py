"""Staircase noise costs eps * ceil(s), not eps * s (Geng & Viswanath 2016:
the density is a step function), so no function type's epsilon per unit of
distance stands for it: a staircase released through a function value must
be refused, never charged eps * s (review C, s28: `(fun x -> staircase[1] x)`
applied to a half-sensitive value was charged 1/2, the truth being 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

HEAD = """
type Sale = { amount : num, shop : string };
def quarter (sales : bag Sale) : num = sum[0, 0.25] (map (fun s -> s.amount) sales);
def noisy (y : num) : fuzzy num = staircase[2] y;
"""

AS_VALUES = {
    "a lambda applied at once": "def f (sales : bag Sale) : fuzzy num = (fun (y : num) -> staircase[2] y) (quarter sales);",
    "a lambda bound by let": "def f (sales : bag Sale) : fuzzy num = { let h = fun (y : num) -> staircase[2] (4 * y); h (quarter sales) };",
    "a definition bound by let": "def f (sales : bag Sale) : fuzzy num = { let h = noisy; h (quarter sales) };",
    "an eta-expanded definition": "def f (sales : bag Sale) : fuzzy num = (fun (y : num) -> noisy y) (quarter sales);",
}


@pytest.mark.parametrize("name", sorted(AS_VALUES))
def test_a_staircase_through_a_function_value_is_refused(name: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "f.fz"
    src.write_text(HEAD + AS_VALUES[name] + "\n")
    assert main(["check", str(src)]) != 0
    err = capsys.readouterr().err
    assert "FZ301" in err or "FZ306" in err


def test_direct_releases_cost_a_whole_step_per_started_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "f.fz"
    src.write_text(HEAD + "def once (sales : bag Sale) : fuzzy num = noisy (quarter sales);\n"
                   "def five (sales : bag Sale) : fuzzy num = staircase[2] (5 * quarter sales);\n")
    assert main(["check", "--json", str(src)]) == 0
    found = {d["name"]: d for d in json.loads(capsys.readouterr().out)["definitions"]}
    assert float(found["once"]["privacy"]["sales"]["epsilon"]) == 2.0  # ceil(1/4) = 1 step of eps 2
    assert float(found["five"]["privacy"]["sales"]["epsilon"]) == 4.0  # ceil(5/4) = 2 steps


@pytest.mark.parametrize(("program", "args"), [
    ("def f (eps : num) (sales : bag Sale) : fuzzy num = staircase[eps] (size sales);", ["eps=1500"]),
    ("def f (eps : num) (sales : bag Sale) : fuzzy (num + unit) =\n"
     "  ptr_median[eps, 0.000001, 1] (map (fun s -> s.amount) sales);", ["eps=3.0000000000000000000000001"]),
])
def test_a_static_parameter_the_runtime_cannot_carry_out_is_refused_before_the_charge(
        program: str, args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    src = tmp_path / "f.fz"
    src.write_text(HEAD + program + "\n")
    data = tmp_path / "sales.csv"
    data.write_text("amount,shop\n" + "".join(f"{i},s{i % 3}\n" for i in range(12)))
    ledger = tmp_path / "l.sqlite"
    argv = ["run", str(src), "f", "--data", f"sales={data}", "--budget", "5000,0.5", "--ledger", str(ledger)]
    for arg in args:
        argv += ["--arg", arg]
    assert main(argv) != 0
    assert "FZ517" in capsys.readouterr().err
    if ledger.exists():
        with sqlite3.connect(ledger) as connection:
            assert connection.execute("SELECT count(*) FROM releases").fetchone()[0] == 0
