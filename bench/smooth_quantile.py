"""`smooth_quantile` (issue 29): the exact smooth bound S of a quantile.

    python bench/smooth_quantile.py [ROUNDS]

For log-normal salaries (two decimals) of n rows clamped to [0, 10^9], after
the exact sort: S at p = 0.1, 0.5 and 0.9 (`smooth.smooth_bound`: a lower bound,
then NRS's divide and conquer over the pairs it leaves, every comparison
exact), at eps = 1 and eps = 0.1 (r = 1 + 1/N, N = 28 and 277 at delta = 1e-6),
each the median CPU time of interleaved rounds in milliseconds, with the
noise scale 2 S / eps it gives.
"""

from __future__ import annotations

import statistics
import sys
import time
from fractions import Fraction

import numpy as np

from fuzzpy.runtime import ptr, smooth

SIZES = (10_000, 100_000, 1_000_000)
LEVELS = (Fraction(1, 10), Fraction(1, 2), Fraction(9, 10))
EPSILONS = (Fraction(1), Fraction(1, 10))
DELTA = Fraction(1, 10**6)
LO, HI = Fraction(0), Fraction(10**9)


def _timed(work) -> tuple[float, Fraction]:  # type: ignore[no-untyped-def]
    start = time.process_time()
    bound = work()
    return (time.process_time() - start) * 1e3, bound


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rng = np.random.default_rng(29)
    columns = {n: ptr.sorted_exact(np.round(rng.lognormal(10.8, 0.6, n), 2)) for n in SIZES}
    found: dict[tuple[int, str, str], list[tuple[float, Fraction]]] = {}
    for _ in range(rounds):
        for n in SIZES:  # interleaved: load on the machine falls on every case alike
            for eps in EPSILONS:
                r = smooth.ratio(eps, DELTA)
                for p in LEVELS:
                    def work(n: int = n, p: Fraction = p, r: Fraction = r) -> Fraction:
                        return smooth.smooth_bound(smooth.Padded(columns[n], LO, HI), p, r).value(r)

                    found.setdefault((n, str(eps), str(p)), []).append(_timed(work))
    print(f"{'rows':>10} {'eps':>5} {'p':>5} {'scale 2S/eps':>14} {'bound ms':>10}")
    for (n, eps, p), runs in found.items():
        scale = float(2 * runs[0][1] / Fraction(eps))
        print(f"{n:>10} {eps:>5} {p:>5} {scale:>14.2f} {statistics.median(t for t, _ in runs):>10.2f}")


if __name__ == "__main__":
    main()
