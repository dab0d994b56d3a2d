"""`--rows` per bag parameter (issue 28): `--rows NAME=N` (repeatable) or a
bare N for a definition with one bag parameter, in check, budget, run and the
Python API (``rows={"a": N}``); a bare N where a definition has two bag
parameters is refused, naming them, before anything is charged.

Written against the closed form of `choose[m]` under replace-one (Balle,
Barthe & Gaboardi 2018, Thm 10): log(1 + (m/n)(e^{2 eps} - 1)) for a Laplace
sum of [-1, 1] values at eps, each dataset at its own n.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzpy.api import loads
from fuzzpy.api.errors import ProgramError

ROOT = Path(__file__).resolve().parents[1]

TWO = """
def pair(left : bag num) (right : bag num) : fuzzy (num, num) = {
  sample x = choose[4] (fun s -> laplace[1/2] (sum[-1, 1] s)) left;
  sample y = choose[6] (fun s -> laplace[1/2] (sum[-1, 1] s)) right;
  return (x, y)
};
def single(people : bag num) : fuzzy num = choose[3] (fun s -> laplace[1/2] (sum[-1, 1] s)) people;
"""


def _closed(m: int, n: int, eps: float = 0.5) -> float:
    return math.log1p(m / n * math.expm1(2 * eps))


def _cost(report, definition: str, parameter: str) -> float:  # noqa: ANN001
    (figure,) = [p.cost for p in report[definition].parameters if p.name == parameter]
    return float(figure.epsilon)


def test_each_bag_parameter_amplified_at_its_own_count() -> None:
    report = loads(TWO).check(neighbours="replace-one", rows={"left": 40, "right": 300, "people": 9})
    assert _cost(report, "pair", "left") == pytest.approx(_closed(4, 40), rel=1e-12)
    assert _cost(report, "pair", "right") == pytest.approx(_closed(6, 300), rel=1e-12)
    assert _cost(report, "single", "people") == pytest.approx(_closed(3, 9), rel=1e-12)
    assert "n = 40 rows in left" in report.text and "n = 300 rows in right" in report.text


def test_a_parameter_given_no_count_is_not_amplified() -> None:
    report = loads(TWO).check(neighbours="replace-one", rows={"right": 300})
    assert _cost(report, "pair", "left") == pytest.approx(1.0)  # the body at distance 2: 2 * 1/2
    assert _cost(report, "pair", "right") == pytest.approx(_closed(6, 300), rel=1e-12)


def test_a_bare_count_with_two_bag_parameters_is_refused() -> None:
    with pytest.raises(ProgramError) as refused:
        loads(TWO).check(neighbours="replace-one", rows=300)
    message = str(refused.value)
    assert "FZ523" in message and "`left`" in message and "`right`" in message and "left=N" in message
    # one bag parameter: the bare form still works
    only = loads("def single(people : bag num) : fuzzy num = choose[3] (fun s -> laplace[1/2] (sum[-1, 1] s)) people;")
    report = only.check(neighbours="replace-one", rows=9)
    assert _cost(report, "single", "people") == pytest.approx(_closed(3, 9), rel=1e-12)


@pytest.mark.parametrize("rows", [{"nobody": 5}, {"left": -1}, {"left": 2.5}, {"left": True}, "lots", [1, 2]])
def test_bad_counts_are_refused(rows: object) -> None:
    with pytest.raises(ProgramError) as refused:
        loads(TWO).check(neighbours="replace-one", rows=rows)  # type: ignore[arg-type]
    assert "FZ523" in str(refused.value)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuzzpy", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.mark.slow
def test_cli_check_and_budget_take_named_counts(tmp_path: Path) -> None:
    program = tmp_path / "two.fz"
    program.write_text(TWO, encoding="utf-8")
    done = _cli("check", str(program), "--neighbours", "replace-one", "--rows", "right=300", "--rows", "left=40",
                "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["rows"] == {"left": 40, "right": 300}
    refused = _cli("check", str(program), "--neighbours", "replace-one", "--rows", "40")
    assert refused.returncode == 2 and "`pair` has 2 bag parameters" in refused.stderr
    mixed = _cli("check", str(program), "--neighbours", "replace-one", "--rows", "40", "--rows", "left=3")
    assert mixed.returncode == 2 and "not both" in mixed.stderr
    budget = _cli("budget", str(program), "pair", "--neighbours", "replace-one", "--rows", "left=40",
                  "--rows", "right=300", "--json")
    assert budget.returncode == 0, budget.stderr
    assert budget.stdout.count("right") >= 1
    bare = _cli("budget", str(program), "pair", "--neighbours", "replace-one", "--rows", "40")
    assert bare.returncode == 2 and "bag parameters" in bare.stderr


@pytest.mark.slow
def test_run_charges_each_dataset_at_its_count_and_checks_it(tmp_path: Path) -> None:
    left = tmp_path / "left.csv"
    left.write_text("v\n" + "".join(f"{i % 3 - 1}\n" for i in range(40)), encoding="utf-8")
    right = tmp_path / "right.csv"
    right.write_text("v\n" + "".join(f"{i % 2}\n" for i in range(30)), encoding="utf-8")
    ledger = str(tmp_path / "l.db")
    for name, path in (("lefts", left), ("rights", right)):
        subprocess.run([sys.executable, "-m", "fuzzpy", "dataset", "register", name, str(path), "--budget", "10",
                        "--missing", "value:0", "--neighbours", "replace-one", "--ledger", ledger], check=True,
                       capture_output=True)
    program = loads(TWO)
    data = {"left": "lefts", "right": "rights"}
    with pytest.raises(ProgramError) as bare:
        program.run("pair", data, ledger=ledger, rows=40)
    assert "FZ523" in str(bare.value) and "`right`" in str(bare.value)
    with pytest.raises(ProgramError) as wrong:  # right has 30 rows, not 31: refused before the charge
        program.run("pair", data, ledger=ledger, rows={"left": 40, "right": 31})
    assert "FZ606" in str(wrong.value)
    release = program.run("pair", data, ledger=ledger, rows={"left": 40, "right": 30})
    charged = {key: float(charge.epsilon) for key, charge in release.charges.items()}
    assert sorted(charged.values()) == pytest.approx(sorted([_closed(4, 40), _closed(6, 30)]), rel=1e-9)
