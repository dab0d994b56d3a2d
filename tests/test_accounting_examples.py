"""The two learning examples check, cost what the accountant says, run, and
learn: noisy gradient descent and DP-SGD on examples/data/logistic.csv."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fuzzpy.cli import main

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "examples" / "data" / "logistic.csv"


def accuracy(model: list[float]) -> float:
    rows = np.loadtxt(DATA, delimiter=",", skiprows=1)
    logits = model[0] + rows[:, :2] @ np.array(model[1:])
    return float(np.mean((logits > 0) == (rows[:, 2] > 0.5)))


@pytest.mark.parametrize(
    ("example", "epsilon", "method"),
    [("gradient_descent", 0.685782, "exact-gaussian"), ("dpsgd", 1.55251, "pld")],
)
def test_example_costs_runs_and_learns(capsys, tmp_path, example, epsilon, method):
    program = ROOT / "examples" / f"{example}.fz"
    assert main(["budget", str(program), "train", "--delta", "1e-6", "--json"]) == 0
    cost = json.loads(capsys.readouterr().out)["definitions"][0]["privacy"]["db"]
    assert cost["method"] == method
    assert cost["epsilon"] == pytest.approx(epsilon, rel=1e-5)

    ledger = tmp_path / "ledger.db"
    argv = ["run", str(program), "train", "--data", f"db={DATA}", "--budget", "2,1e-6"]
    code = main([*argv, "--ledger", str(ledger), "--seed", "7", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    model = json.loads(out)["released"]
    assert len(model) == 3
    assert accuracy(model) >= 0.78  # the true model scores 0.814 on this data
