"""The logistic-regression dataset, and the accuracy of a released model.

    python examples/data/logistic.py generate            # writes logistic.csv
    python examples/data/logistic.py accuracy B W1 W2     # accuracy of a model

Synthetic: 4,000 rows with two standardised features x1, x2 and a label y in
{0, 1} drawn from a logistic model with bias 0.5 and weights (2, -1.5), from
one fixed seed (the same bytes every time). The model is public: evaluating
a released model on the data is post-processing of a private release plus a
statistic the data owner computes; the numbers in README.md are for
orientation, not releases.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CSV = HERE / "logistic.csv"
ROWS = 4000
TRUE_MODEL = (0.5, 2.0, -1.5)  # bias, w1, w2


def generate() -> None:
    rng = np.random.default_rng(20261122)
    x = rng.normal(size=(ROWS, 2))
    logits = TRUE_MODEL[0] + x @ np.array(TRUE_MODEL[1:])
    y = (rng.random(ROWS) < 1 / (1 + np.exp(-logits))).astype(int)
    with CSV.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x1", "x2", "y"])
        for (x1, x2), label in zip(x, y, strict=True):
            writer.writerow([f"{x1:.4f}", f"{x2:.4f}", int(label)])


def accuracy(model: tuple[float, float, float]) -> float:
    data = np.loadtxt(CSV, delimiter=",", skiprows=1)
    logits = model[0] + data[:, :2] @ np.array(model[1:])
    return float(np.mean((logits > 0) == (data[:, 2] > 0.5)))


def main(argv: list[str]) -> int:
    if argv[:1] == ["generate"]:
        generate()
        return 0
    if argv[:1] == ["accuracy"] and len(argv) == 4:
        model = tuple(float(v) for v in argv[1:])
        print(f"accuracy {accuracy(model):.4f}  (true model: {accuracy(TRUE_MODEL):.4f})")
        return 0
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
