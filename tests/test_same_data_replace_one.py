"""One dataset behind two parameters of one definition under replace-one
(`run --data a=x --data b=x --neighbours replace-one`; issue 28).

Each parameter's events are restated for a replaced row first, then joined
for the dataset: a draw read through both parameters at the summed move,
different draws composed, anything else the chain of the routes' own
guarantees -- now with their replace-one pairs. Before, replace-one kept
the chain for single draws (3.977 for two Gaussian draws whose exact
composition is 2.76066) and chained subsamples at their group bound (12.787;
now 5.345). The truths here are closed forms (Balle & Wang 2018's exact
Gaussian epsilon) computed beside, never by the accountant.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy.stats import norm

from fuzzpy.cli import main

PROGRAM = """
def two (a : bag num) (b : bag num) : fuzzy (num, num) = {
  sample u = gauss[2] (sum[0, 1] a);
  sample v = gauss[3] (size (filter (fun x -> x > 0) b));
  return (u, v)
};
def sub (a : bag num) (b : bag num) : fuzzy (num, num) = {
  sample u = subsample[0.1] (fun s -> gauss[1] (size s)) a;
  sample v = subsample[0.1] (fun s -> gauss[1] (size s)) b;
  return (u, v)
};
"""


def _gaussian_epsilon(mu: float, delta: float) -> float:
    lo, hi = 0.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        found = norm.cdf(-mid / mu + mu / 2) - math.exp(mid) * norm.cdf(-mid / mu - mu / 2)
        lo, hi = (mid, hi) if found > delta else (lo, mid)
    return hi


def _charge(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> float:
    program, data, ledger = tmp_path / "p.fz", tmp_path / "d.csv", tmp_path / "l.sqlite"
    program.write_text(PROGRAM)
    data.write_text("x\n" + "\n".join(["1", "-1", "0.5"] * 10) + "\n")
    assert main(["dataset", "register", "dd", str(data), "--budget", "100,1e-5", "--ledger", str(ledger),
                 "--neighbours", "replace-one", "--missing", "refuse"]) == 0
    capsys.readouterr()
    assert main(["run", str(program), name, "--data", "a=dd", "--data", "b=dd", "--ledger", str(ledger),
                 "--json", "--rows", "a=30", "--rows", "b=30"]) == 0
    return float(json.loads(capsys.readouterr().out)["charged"]["epsilon"])


@pytest.mark.slow  # two CLI runs with a ledger
def test_two_draws_compose_under_replace_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a replaced row moves the clamped sum by 1 and the filtered count by 1: mu^2 = 1/4 + 1/9
    truth = _gaussian_epsilon(math.sqrt(1 / 4 + 1 / 9), 1e-6)
    found = _charge(tmp_path, capsys, "two")
    assert truth * (1 - 1e-9) <= found <= truth * 1.01, (found, truth)  # 3.977 by the chain before


@pytest.mark.slow
def test_two_subsamples_chain_with_their_replace_one_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = _charge(tmp_path, capsys, "sub")
    assert found < 5.4, found  # 12.787 before: each route at its group bound
