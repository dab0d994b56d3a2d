"""`ptr_median` (issue 29, item 3): what a run costs besides reading the rows.

    python bench/ptr_median.py [ROUNDS]

For log-normal salaries (two decimals) of n rows, b = 1000: the exact sort
(`ptr.sorted_exact`, numpy's sort, values read as Fractions only when used),
the distance to instability (`ptr.prepare`, about 2 d exact comparisons) and
one draw (`ptr.draw`: the test and the release), each the median CPU time of
interleaved rounds, in milliseconds.
"""

from __future__ import annotations

import statistics
import sys
import time
from fractions import Fraction

import numpy as np

from fuzzpy.runtime import ptr
from fuzzpy.runtime.randomness import SeededSource

SIZES = (10_000, 100_000, 1_000_000)


def _round(column: np.ndarray, seed: int) -> tuple[float, float, float, int]:
    start = time.process_time()
    values = ptr.sorted_exact(column)
    sorted_at = time.process_time()
    prepared = ptr.prepare(values, Fraction(1000))
    prepared_at = time.process_time()
    ptr.draw(prepared, Fraction(1, 2), Fraction(1, 10**7), Fraction(1000), SeededSource(seed))
    drawn_at = time.process_time()
    return ((sorted_at - start) * 1e3, (prepared_at - sorted_at) * 1e3, (drawn_at - prepared_at) * 1e3,
            prepared.distance)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = np.random.default_rng(29)
    columns = {n: np.round(rng.lognormal(10.8, 0.6, n), 2) for n in SIZES}
    times: dict[int, list[tuple[float, float, float, int]]] = {n: [] for n in SIZES}
    for r in range(rounds):
        for n in SIZES:  # interleaved: load on the machine falls on every size alike
            times[n].append(_round(columns[n], r))
    print(f"{'rows':>10} {'d':>7} {'sort ms':>9} {'distance ms':>12} {'draw ms':>9}")
    for n in SIZES:
        sort, dist, draw = (statistics.median(t[i] for t in times[n]) for i in range(3))
        print(f"{n:>10} {times[n][0][3]:>7} {sort:>9.2f} {dist:>12.2f} {draw:>9.3f}")


if __name__ == "__main__":
    main()
