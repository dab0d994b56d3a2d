"""Write telemetry.csv: synthetic device reports for examples/telemetry_survey.fz
(fixed seed, standard library only). Usage: python examples/data/telemetry.py

type Device = { crashed : bool, browser : int, night : bool }
* crashed: whether the device crashed this week (about 12%, more on browser 3)
* browser: one of four browsers, 0..3 (shares about 45/30/15/10%)
* night:   whether it is mostly used at night (about 25%)
Nobody and no device in this file exists.
"""

from __future__ import annotations

import random
from pathlib import Path

ROWS = 12_000
SEED = 20261129


def main() -> None:
    rng = random.Random(SEED)
    lines = ['"crashed","browser","night"']
    for _ in range(ROWS):
        browser = rng.choices([0, 1, 2, 3], weights=[45, 30, 15, 10])[0]
        crashed = rng.random() < (0.25 if browser == 3 else 0.10)
        night = rng.random() < 0.25
        lines.append(f"{str(crashed).lower()},{browser},{str(night).lower()}")
    (Path(__file__).resolve().parent / "telemetry.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
