"""Should the in-memory interpreter compute an `expmech`'s threshold counts
from one sort (issue 31, item 3)? The numpy core of both ways, interleaved:

    python bench/memory_thresholds.py                      # 10M rows, 31 candidates
    python bench/memory_thresholds.py --rows 1000000 --candidates 500

* per candidate (today): `x <= c`, its count and its complement's count
  (`split` is a lazy mask, `size` a `count_nonzero`);
* one pass: `np.sort` once, then `searchsorted` for every candidate.

CPU seconds (process time), the median of ``--repeat`` interleaved runs.
Interpreter overhead per candidate (evaluating the score's closure) is not
included: it favours the one-pass way by a constant per candidate.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def per_candidate(x: np.ndarray, cands: np.ndarray) -> list[int]:
    out = []
    for c in cands:
        keep = x <= c
        out.append(int(np.count_nonzero(keep)) - int(np.count_nonzero(~keep)))
    return out


def one_pass(x: np.ndarray, cands: np.ndarray) -> list[int]:
    ordered = np.sort(x)
    below = np.searchsorted(ordered, cands, side="right")
    return [int(2 * b - x.size) for b in below]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--candidates", type=int, default=31)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    x = np.random.default_rng(1).normal(200, 20, args.rows)
    cands = np.linspace(170, 230, args.candidates)
    times: dict[str, list[float]] = {"per candidate": [], "one sort": []}
    for _ in range(args.repeat):
        for name, way in (("per candidate", per_candidate), ("one sort", one_pass)):
            start = time.process_time()
            way(x, cands)
            times[name].append(time.process_time() - start)
        assert per_candidate(x[:1000], cands) == one_pass(x[:1000], cands)
    for name, spent in times.items():
        print(f"{name:14s} {statistics.median(spent):.3f} s CPU  ({args.rows} rows, {args.candidates} candidates)")


if __name__ == "__main__":
    main()
