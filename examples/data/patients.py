"""The patients dataset: one row per enrolment of a patient in an insurance plan.

    python examples/data/patients.py        # writes patients.csv

Synthetic: 1,294 rows `patient,plan,premium` from one fixed seed (the same
bytes every time). Patient ids are those of visits.csv (100000..101199);
every patient holds one plan, about 8% a second one (a second enrolment);
some patients have no visits. Plans are "basic", "silver" and "gold". Joined with
visits.csv on `patient` by examples/joined_visits.fz.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CSV = HERE / "patients.csv"
PATIENTS = 1200
PLANS = ("basic", "silver", "gold")
SHARES = (0.5, 0.35, 0.15)
PREMIUMS = (90.0, 180.0, 320.0)


def generate() -> None:
    rng = np.random.default_rng(20261129)
    ids = np.arange(100000, 100000 + PATIENTS)
    second = ids[rng.random(PATIENTS) < 0.08]
    rows = np.concatenate([ids, second])[:1300]
    rows = rng.permutation(rows)
    plans = rng.choice(len(PLANS), size=rows.size, p=SHARES)
    premiums = np.round(np.array(PREMIUMS)[plans] * rng.uniform(0.8, 1.2, size=rows.size), 2)
    with CSV.open("w", newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        writer.writerow(("patient", "plan", "premium"))
        for patient, plan, premium in zip(rows.tolist(), plans.tolist(), premiums.tolist(), strict=True):
            writer.writerow((int(patient), PLANS[plan], float(premium)))


if __name__ == "__main__":
    generate()
