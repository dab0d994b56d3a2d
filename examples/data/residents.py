"""The residents dataset: a string `region` column, as data really comes.

    python examples/data/residents.py        # writes residents.csv

Synthetic: 1,500 rows `region,age,income` from one fixed seed (the same bytes
every time). Regions are "north", "south", "east" and "west" in uneven
shares; 4% of the cells carry stray spaces (" north", "south ") that the
loader trims, and 2% name a region outside the four ("unknown", "North"),
which `group["north", "south", "east", "west"]` drops and counts for the
data owner's audit. Used by examples/histogram_by_region.fz.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CSV = HERE / "residents.csv"
ROWS = 1500
REGIONS = ("north", "south", "east", "west")
SHARES = (0.4, 0.3, 0.2, 0.1)
STRAYS = ("unknown", "North")


def generate() -> None:
    rng = np.random.default_rng(20261124)
    regions = rng.choice(len(REGIONS), size=ROWS, p=SHARES)
    ages = np.clip(rng.normal(45, 16, size=ROWS), 18, 95).round()
    incomes = np.where(rng.random(ROWS) < 0.03, 0, rng.lognormal(10.6, 0.6, size=ROWS)).round()
    spaced = rng.random(ROWS) < 0.04
    stray = rng.random(ROWS) < 0.02
    with CSV.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["region", "age", "income"])
        for i in range(ROWS):
            region = STRAYS[i % len(STRAYS)] if stray[i] else REGIONS[regions[i]]
            if spaced[i]:
                region = f" {region}" if i % 2 else f"{region} "
            writer.writerow([region, int(ages[i]), int(incomes[i])])


if __name__ == "__main__":
    generate()
