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
