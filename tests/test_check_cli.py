"""`fuzzpy check`: output format, JSON shape, --delta, --explain, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

ROOT = Path(__file__).resolve().parent.parent
NOISY = str(ROOT / "examples" / "noisy_count.fz")
GAUSS = str(ROOT / "examples" / "gaussian_centroid.fz")
REJECTED = str(ROOT / "examples" / "rejected" / "bound_exceeded.fz")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", NOISY)
    assert code == 0
    assert "noisy_count : (db :[0.1] bag Person) -> fuzzy num  0.1-DP in db" in out
    code, _, err = run(capsys, "check", REJECTED)
    assert code == 1 and "error[FZ305]" in err and "bound_exceeded.fz:6:" in err
    code, _, err = run(capsys, "check", str(ROOT / "no_such_file.fz"))
    assert code == 2
    code, _, _ = run(capsys, "check", "--delta", "2", NOISY)
    assert code == 2


def test_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--json", NOISY, REJECTED)
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False
    noisy = next(d for d in doc["definitions"] if d["name"] == "noisy_count")
    assert noisy["params"] == [{"name": "db", "type": "bag Person", "sensitivity": 0.1}]
    assert noisy["privacy"]["db"]["epsilon"] == 0.1 and noisy["privacy"]["db"]["delta"] == 0
    count = next(d for d in doc["definitions"] if d["name"] == "older_than")
    assert count["params"][0]["sensitivity"] == "inf"
    (diag,) = doc["diagnostics"]
    assert diag["code"] == "FZ305" and diag["span"]["line"] == 6 and diag["severity"] == "error"


def test_delta_reports_the_tightest_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--json", "--delta", "1e-5", NOISY, GAUSS)
    assert code == 0
    doc = json.loads(out)
    noisy = next(d for d in doc["definitions"] if d["name"] == "noisy_count" and "noisy_count.fz" in d["file"])
    privacy = noisy["privacy"]["db"]
    assert privacy["pure_epsilon"] == 0.1 and privacy["delta"] == 1e-5 and privacy["epsilon"] <= 0.1
    centroid = next(d for d in doc["definitions"] if d["name"] == "centroid")
    assert centroid["privacy"]["db"]["delta"] == 1e-5 and "method" in centroid["privacy"]["db"]
    assert "pure_epsilon" not in centroid["privacy"]["db"]


def test_approximate_costs_default_to_delta_1e_6(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", GAUSS)
    assert code == 0 and "1e-06)-DP in db" in out and "at delta = 1e-06" in out


def test_explain_prints_the_derivation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", NOISY, "--explain", "noisy_count")
    assert code == 0
    assert "Derivation of `noisy_count`" in out and "[variable] db" in out
    assert "context: cost db: [Laplace(sensitivity 1, scale 10)]" in out
    assert "0.1-DP by the Laplace mechanism: sensitivity 1 / scale 10" in out
    code, _, err = run(capsys, "check", NOISY, "--explain", "nothing_here")
    assert code == 2 and "FZ702" in err
