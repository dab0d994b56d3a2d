"""`ptr_quantile` (issue 29): the distance to instability of a quantile.

    python bench/ptr_quantile.py [ROUNDS]

For log-normal salaries (two decimals) of n rows, b = 1000, after the exact
sort: the quantile's distance (`ptr.quantile_distance`, O(d log d) exact
comparisons and O(d) integer work per position searched) at p = 0.1, 0.5 and
0.9, and the median's own window formula (`ptr.distance_to_instability`) for
comparison, each the median CPU time of interleaved rounds, in milliseconds.
"""

from __future__ import annotations

import statistics
import sys
import time
from fractions import Fraction

import numpy as np

from fuzzpy.runtime import ptr

SIZES = (10_000, 100_000, 1_000_000)
LEVELS = (Fraction(1, 10), Fraction(1, 2), Fraction(9, 10))


def _timed(work) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    start = time.process_time()
    d = work()
    return (time.process_time() - start) * 1e3, d


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rng = np.random.default_rng(29)
    columns = {n: ptr.sorted_exact(np.round(rng.lognormal(10.8, 0.6, n), 2)) for n in SIZES}
    b = Fraction(1000)
    found: dict[tuple[int, str], list[tuple[float, int]]] = {}
    for _ in range(rounds):
        for n in SIZES:  # interleaved: load on the machine falls on every case alike
            values = columns[n]
            found.setdefault((n, "median"), []).append(
                _timed(lambda values=values: ptr.distance_to_instability(values, b)))  # type: ignore[misc]
            for p in LEVELS:
                found.setdefault((n, str(p)), []).append(
                    _timed(lambda p=p, values=values: ptr.quantile_distance(values, p, b)))  # type: ignore[misc]
    print(f"{'rows':>10} {'statistic':>10} {'d':>7} {'distance ms':>12}")
    for (n, what), runs in found.items():
        print(f"{n:>10} {what:>10} {runs[0][1]:>7} {statistics.median(t for t, _ in runs):>12.2f}")


if __name__ == "__main__":
    main()
