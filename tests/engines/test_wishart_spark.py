"""`wishart` on Spark: the rows are read into memory and the same code sums
X^T X exactly and draws, so a seeded run releases the memory engine's matrix,
and the warning names the primitive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str) -> dict[str, object]:
    code = main(["run", str(ROOT / "examples" / "private_covariance.fz"), "second_moment", "--data",
                 f"db={ROOT / 'examples' / 'data' / 'logistic.csv'}", "--budget", "20,1e-3", "--ledger",
                 str(tmp_path / f"{engine}.sqlite"), "--dataset", "logistic", "--json", "--seed", "5",
                 "--engine", engine])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_spark_gives_the_memory_matrix(spark, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    on_spark = _run(capsys, tmp_path, "spark")
    assert on_spark["released"] == _run(capsys, tmp_path, "memory")["released"]
    assert any("`wishart`" in w for w in on_spark.get("warnings", [])), on_spark.get("warnings")
