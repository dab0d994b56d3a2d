"""A cost written over static parameters is for the neighbour relation in
force (review of issue 27, F1): under replace-one a Laplace sum over
[-1, 1] moves by 2, so `laplace[eps]` of it is 2 eps-DP, and the printed
expression must say so, as each call's figure and the charge already did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import fuzzpy

ROOT = Path(__file__).resolve().parents[1]

SOURCE = """
def sm (eps : num) (db : bag num) : fuzzy num = laplace[eps] (sum[-1, 1] db);
def twice (e : num) (db : bag num) : fuzzy num = { sample a = laplace[e] (size db); laplace[e / 2] (size db) };
def use (db : bag num) : fuzzy num = sm 0.5 db;
"""


def _cli(tmp_path: Path, *argv: str) -> str:
    program = tmp_path / "p.fz"
    program.write_text(SOURCE)
    done = subprocess.run([sys.executable, "-m", "fuzzpy", *argv, str(program)], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "FUZZPY_CACHE": "off", "PATH": ""}, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_api_expression_doubles_under_replace_one() -> None:
    program = fuzzpy.loads(SOURCE, name="p.fz")
    add_remove = program.check()
    replace_one = program.check(neighbours="replace-one")
    assert add_remove["sm"].cost_expressions == {"db": "eps"}
    assert replace_one["sm"].cost_expressions == {"db": "2 * eps"}
    # `twice` costs e + e/2 per add/remove step, so 3e under replace-one
    assert replace_one["twice"].cost_expressions == {"db": "3 * e"}
    # never below a call's figure: `use` is `sm` at 0.5, charged 1 under replace-one
    (cost,) = [p.cost for p in replace_one["use"].parameters if p.cost is not None]
    assert Fraction(cost.epsilon) == 1


def test_check_and_budget_print_the_relations_expression(tmp_path: Path) -> None:
    assert "(2 * eps)-DP in db" in _cli(tmp_path, "check", "--neighbours", "replace-one")
    assert "eps-DP in db" in _cli(tmp_path, "check") and "2 * eps" not in _cli(tmp_path, "check")
    text = _cli(tmp_path, "budget", "--neighbours", "replace-one")
    assert "(2 * eps)-DP in db" in text and "at eps = 0.5: 1-DP in db" in text
    document = json.loads(_cli(tmp_path, "budget", "--neighbours", "replace-one", "--json"))
    (sm,) = [d for d in document["parameterised"] if d["name"] == "sm"]
    assert sm["symbolic_privacy"] == {"db": "2 * eps"}
