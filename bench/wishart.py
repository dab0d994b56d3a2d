"""`wishart[eps, delta, b, k]` (issue 29): the exact second moment and the exact draws.

    python bench/wishart.py [ROUNDS]

For n rows of d standard normal features, b = 3: X^T X of the clipped rows in
exact integers (`runtime.wishart.second_moment`), the calibration of w^2
(`accounting.wishart.calibrate_ratio`, cold: its cache cleared) and one
release S / k - w^2 I drawn exactly and rounded (`sample_release`), each the
median CPU time of interleaved rounds, in milliseconds.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from fuzzpy.accounting import wishart as A
from fuzzpy.runtime import wishart as W
from fuzzpy.runtime.randomness import SeededSource

CASES = ((100_000, 3, 16), (100_000, 3, 256), (1_000_000, 3, 64), (10_000, 10, 64), (10_000, 32, 64))
EPS, DELTA, BOUND = Fraction(1), Fraction(1, 10**6), Fraction(3)


def _timed(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return (time.process_time() - start) * 1e3


def _case(rows: np.ndarray, k: int, seed: int) -> dict[str, float]:
    out = {"moment": _timed(lambda: W.second_moment(rows, BOUND))}
    A.calibrate_ratio.cache_clear()
    out["calibrate"] = _timed(lambda: A.calibrate_ratio(EPS, DELTA, k))
    w2 = A.noise_variance(EPS, DELTA, BOUND, k)
    moment = W.second_moment(rows, BOUND)
    sigma = [[x + (w2 if i == j else 0) for j, x in enumerate(row)] for i, row in enumerate(moment)]
    out["release"] = _timed(lambda: W.sample_release(sigma, k, w2, SeededSource(seed)))
    return out


def main(rounds: int) -> None:
    rng = np.random.default_rng(0)
    print(f"{'n':>9} {'d':>3} {'k':>5} {'moment ms':>10} {'calibrate ms':>13} {'release ms':>11}")
    cases = [(n, d, k, rng.normal(size=(n, d))) for n, d, k in CASES]
    times: list[dict[str, list[float]]] = [{"moment": [], "calibrate": [], "release": []} for _ in cases]
    for r in range(rounds):  # interleaved: each round runs every case once
        for (_, _, k, rows), found in zip(cases, times, strict=True):
            for key, value in _case(rows, k, r).items():
                found[key].append(value)
    for (n, d, k, _), found in zip(cases, times, strict=True):
        m = {key: statistics.median(v) for key, v in found.items()}
        print(f"{n:>9} {d:>3} {k:>5} {m['moment']:>10.1f} {m['calibrate']:>13.1f} {m['release']:>11.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
