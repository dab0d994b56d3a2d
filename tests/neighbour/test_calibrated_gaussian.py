"""`gauss_dp[s, eps, delta]` through the neighbour harness (issue 27): a
library over (eps, delta) called at numbers, on a count, a clamped sum and
a clipped vector sum; each release may move between neighbours by at most
the sensitivity the checker derived (the "gauss" model), and both
neighbours end the same way. The example `calibrated_gaussian.fz` runs on
the whole adversarial catalogue (`test_examples.py`, slow job)."""

from __future__ import annotations

import pytest

from .harness import Case, examine
from .runner import Outcome, isolated

SOURCE = """
type Row = { age : num, income : num };
def noisy (eps : num) (delta : num) (db : bag Row) : fuzzy num = gauss_dp[1, eps, delta] (size db);
def noisy_sum (eps : num) (delta : num) (db : bag Row) : fuzzy num =
  gauss_dp[50, eps, delta] (sum[0, 50] (map (fun r -> r.age) db));
def count (db : bag Row) : fuzzy num = noisy 0.5 0.00001 db;
def total (db : bag Row) : fuzzy num = noisy_sum 2 0.001 db;
def both (db : bag Row) : fuzzy num = gauss_dp[2, 1, 0.0001] (size db + size (filter (fun r -> r.age > 30) db));
"""


@pytest.mark.slow  # ~3 s: three definitions on generated pairs
def test_calibrated_gaussian_releases_keep_their_claims_on_neighbours() -> None:
    case = Case("gauss_dp", SOURCE, models={"count": "gauss", "total": "gauss", "both": "gauss"},
                expect="accepted", use_catalogue=False, sizes=(2,), fill={"age": 40, "income": 10},
                extra={"age": 50, "income": 7})
    report = isolated(lambda: examine(case), case.seconds)
    if isinstance(report, Outcome):
        raise AssertionError(f"examining it {report.describe()}")
    assert report.checked, report.rejection
    assert report.violations == [], "\n".join(report.violations)
