"""`smooth_quantile` and `std.stats.mean_unbounded` on Spark: the same seeded
answers as in memory (the engine sends the numbers; the smooth bound and the
exact draw are one function)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _released(capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, definition: str) -> object:
    code = main(["run", str(ROOT / "examples" / "smooth_median.fz"), definition, "--data",
                 f"db={ROOT / 'examples' / 'data' / 'salaries.csv'}", "--budget", "20,1e-3", "--ledger",
                 str(tmp_path / f"{engine}.sqlite"), "--dataset", "salaries", "--json", "--seed", "11",
                 "--engine", engine])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)["released"]


@pytest.mark.parametrize("definition", ["pay_deciles", "median_tenure", "mean_pay"])
def test_spark_gives_the_memory_answers(spark, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                        definition: str) -> None:
    assert _released(capsys, tmp_path, "spark", definition) == _released(capsys, tmp_path, "memory", definition)
