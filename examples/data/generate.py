"""Generate the synthetic datasets the examples run on (fixed seed: the same
files every time). Usage: python examples/data/generate.py

* people.csv  (3,000 rows)  the census: type Person = { age : num, income : num,
              hours : num, zip : int, married : bool }
* visits.csv  (2,000 rows)  hospital visits: type Visit = { patient : int,
              age : num, ward : int, cost : num, stay : num }
* points.csv  (500 rows)    2-d points: type Point = { x : num, y : num }

Nobody in these files exists: every column is drawn from a simple model
(see the functions below), chosen only so that the examples' thresholds and
candidate values fall where they would on real data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

SEED = 20261122
HERE = Path(__file__).resolve().parent


def people(rng: np.random.Generator, n: int = 3000) -> pa.Table:
    """Adults 18-95 (a wide bump around 45); income log-normal (median about
    45,000) rising until 55 and falling after retirement, with some zeros;
    weekly hours around 38 for workers, 0 after 67; zip codes of six towns;
    married more often with age."""
    age = np.clip(rng.normal(46, 17, n), 18, 95).round(0)
    working = (age < 67) & (rng.random(n) > 0.07)
    peak = 1 + 0.4 * np.exp(-((age - 55) / 15) ** 2)
    income = np.where(working, rng.lognormal(np.log(42000), 0.6, n) * peak, rng.lognormal(np.log(18000), 0.5, n))
    income = np.where(rng.random(n) < 0.03, 0.0, income).round(0)
    hours = np.where(working, np.clip(rng.normal(38, 9, n), 4, 80), 0.0).round(1)
    zips = rng.choice([10115, 10245, 10437, 12043, 13347, 14467], size=n, p=[0.25, 0.2, 0.2, 0.15, 0.1, 0.1])
    married = rng.random(n) < np.clip((age - 18) / 60, 0.05, 0.7)
    return pa.table({"age": age, "income": income, "hours": hours, "zip": zips.astype(np.int64), "married": married})


def visits(rng: np.random.Generator, n: int = 2000) -> pa.Table:
    """Visits by 1,200 patients (some come back), to 8 wards of uneven size;
    stays exponential (mean 4 days), costs log-normal and rising with stay."""
    patient = rng.integers(100000, 101200, n)
    age = np.clip(rng.normal(55, 20, n), 0, 100).round(0)
    ward = rng.choice(8, size=n, p=[0.22, 0.18, 0.15, 0.12, 0.11, 0.09, 0.08, 0.05])
    stay = (rng.exponential(4.0, n) + 0.25).round(2)
    cost = (rng.lognormal(np.log(250), 0.5, n) * (1 + stay / 3)).round(2)
    return pa.table({"patient": patient.astype(np.int64), "age": age, "ward": ward.astype(np.int64), "cost": cost, "stay": stay})


def points(rng: np.random.Generator, n: int = 500) -> pa.Table:
    """Three clusters in the plane, plus a few far-away outliers that the
    centroid example's clipping (L2 norm 10) tames."""
    centers = np.array([[2.0, 3.0], [-4.0, 1.0], [1.0, -5.0]])
    labels = rng.integers(0, 3, n)
    xy = centers[labels] + rng.normal(0, 1.2, (n, 2))
    outliers = rng.random(n) < 0.02
    xy[outliers] *= 25
    return pa.table({"x": xy[:, 0].round(3), "y": xy[:, 1].round(3)})


def main() -> None:
    rng = np.random.default_rng(SEED)
    for name, table in (("people", people(rng)), ("visits", visits(rng)), ("points", points(rng))):
        pacsv.write_csv(table, HERE / f"{name}.csv")
        print(f"wrote {HERE / name}.csv ({table.num_rows} rows)")


if __name__ == "__main__":
    main()
