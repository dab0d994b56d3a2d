"""The speed of `join[k]` in memory (fuzzpy/runtime/joins.py).

    python bench/joins.py [--rows N] [--repeats R]

Two bags of records `{ key : int, v : num, tag : string }` with N rows each,
keys drawn from N/3 values (so most keys have more than k rows), joined with
`join[3]` on the key; prints the best-of-R wall time of the join alone
(truncation, pairing, gathering the pair columns) and of `size` of it
through `pipeline.run`, and the number of pairs. One fixed seed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fuzzpy.language.source import Source
from fuzzpy.release import pipeline
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.joins import join_bags
from fuzzpy.runtime.values import Record

PROGRAM = """
type T = { key : int, v : num, tag : string };
def pairs (a : bag T) (b : bag T) : num = size (join[3] (fun x -> x.key) (fun y -> y.key) a b);
"""


def table(rng: np.random.Generator, n: int) -> Bag:
    return Bag(Record({
        "key": rng.integers(0, max(n // 3, 1), size=n),
        "v": rng.normal(size=n).round(3),
        "tag": rng.choice(np.array(["red", "green", "blue"], dtype=object), size=n),
    }))


def best(repeats: int, work) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    rng = np.random.default_rng(27)
    a, b = table(rng, options.rows), table(rng, options.rows)
    keys_a, keys_b = a.view().fields["key"], b.view().fields["key"]
    joined = join_bags(a, b, keys_a, keys_b, 3)
    alone = best(options.repeats, lambda: join_bags(a, b, keys_a, keys_b, 3))
    checked = pipeline.check(pipeline.parse(Source("bench.fz", PROGRAM)))
    through_run = best(options.repeats, lambda: pipeline.run(checked, "pairs", {"a": a, "b": b}))
    print(f"rows per side: {options.rows:,}  pairs: {len(joined):,}")
    print(f"join_bags:           {alone:.3f} s")
    print(f"size (join[3] ...):  {through_run:.3f} s (pipeline.run, key functions included)")


if __name__ == "__main__":
    main()
