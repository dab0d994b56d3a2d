"""`ptr_quantile` on Spark: the same seeded answers as in memory (the engine
sends the numbers; the distance, the test and the release are one function)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _released(capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str) -> object:
    code = main(["run", str(ROOT / "examples" / "salary_quantiles.fz"), "pay_quartiles", "--data",
                 f"db={ROOT / 'examples' / 'data' / 'salaries.csv'}", "--budget", "20,1e-3", "--ledger",
                 str(tmp_path / f"{engine}.sqlite"), "--dataset", "salaries", "--json", "--seed", "11",
                 "--engine", engine])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)["released"]


def test_spark_gives_the_memory_answers(spark, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _released(capsys, tmp_path, "spark") == _released(capsys, tmp_path, "memory")
