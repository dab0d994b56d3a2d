"""Write salaries.csv: synthetic employees for examples/robust_median.fz
(fixed seed, standard library only). Usage: python examples/data/salaries.py

type Employee = { dept : int, salary : num, tenure : num }
* dept:   one of four departments, 0..3 (shares about 40/30/25/5%)
* salary: yearly, log-normal around 50,000 (more in dept 1), two decimals;
          about 1 in 500 is an outlier of millions or more, up to 2e9
          (unbounded data: no public clamp fits it)
* tenure: years with the employer, exponential with mean 6, one decimal
Nobody in this file exists.
"""

from __future__ import annotations

import random
from pathlib import Path

ROWS = 4_000
SEED = 20261129


def main() -> None:
    rng = random.Random(SEED)
    lines = ['"dept","salary","tenure"']
    for _ in range(ROWS):
        dept = rng.choices([0, 1, 2, 3], weights=[40, 30, 25, 5])[0]
        salary = rng.lognormvariate(10.82 + (0.2 if dept == 1 else 0.0), 0.6)
        if rng.random() < 0.002:
            salary = 10 ** rng.uniform(6, 9.3)
        tenure = rng.expovariate(1 / 6)
        lines.append(f"{dept},{salary:.2f},{tenure:.1f}")
    (Path(__file__).resolve().parent / "salaries.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
