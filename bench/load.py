"""Loading data under the row rules, against pyarrow's own typed reader.

    python bench/load.py [--rows 1000000] [--repeat 3]

Writes (once, in bench/_data/) a numeric CSV, a CSV with quoted strings and a
Parquet file of `--rows` rows, and prints the best time of fuzzpy's loader
(line framing, every cell parsed on its own, row rules) beside pyarrow's typed
`read_csv` / `read_table`, which is fast but fails on the first bad cell.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzzpy.data.loader import load_bag  # noqa: E402
from fuzzpy.language.types import INT, NUM, STRING, TBag, TRecord  # noqa: E402

NUMERIC = TBag(TRecord((("age", NUM), ("income", NUM), ("bucket", INT))))
QUOTED = TBag(TRecord((("age", INT), ("name", STRING))))


def write(folder: Path, rows: int) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    paths = {"numeric": folder / f"numeric_{rows}.csv", "quoted": folder / f"quoted_{rows}.csv",
             "parquet": folder / f"numeric_{rows}.parquet"}
    if not all(p.exists() for p in paths.values()):
        table = pa.table({"age": rng.integers(18, 95, rows).astype(float),
                          "income": rng.lognormal(10.6, 0.7, rows).round(0), "bucket": rng.integers(0, 100, rows)})
        pacsv.write_csv(table, paths["numeric"])
        pq.write_table(table, paths["parquet"])
        names = np.array(['"Smith, J"', '"Doe, ""A"""', "plain", '"x"'])[rng.integers(0, 4, rows)]
        ages = rng.integers(18, 95, rows)
        with open(paths["quoted"], "w") as handle:
            handle.write("age,name\n")
            handle.write("\n".join(f"{a},{s}" for a, s in zip(ages.tolist(), names.tolist(), strict=True)) + "\n")
    return paths


def best(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    paths = write(ROOT / "bench" / "_data", args.rows)
    cases = [
        ("numeric CSV", lambda: load_bag(paths["numeric"], NUMERIC), lambda: pacsv.read_csv(paths["numeric"])),
        ("quoted-string CSV", lambda: load_bag(paths["quoted"], QUOTED), lambda: pacsv.read_csv(paths["quoted"])),
        ("Parquet", lambda: load_bag(paths["parquet"], NUMERIC), lambda: pq.read_table(paths["parquet"])),
    ]
    print(f"{args.rows:,} rows; best of {args.repeat}")
    print(f"{'file':<20}{'fuzzpy':>10}{'pyarrow':>10}")
    for label, ours, theirs in cases:
        print(f"{label:<20}{best(ours, args.repeat):>9.2f}s{best(theirs, args.repeat):>9.2f}s")


if __name__ == "__main__":
    main()
