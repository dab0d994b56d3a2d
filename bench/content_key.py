"""The content key's cost on a CSV file and on the frame pandas reads from it
(CPU seconds of the process, DuckDB's threads included; wall seconds).

    python bench/content_key.py [--rows 300000] [--repeat 3] [TREE ...]

With one or more source trees (e.g. an older checkout), each measurement
runs in a fresh process per tree, the trees interleaved round by round, so
that a load on the machine falls on all of them alike; the median of each
is printed, and the ratio to the first tree. Without a tree: this tree.
The file mixes the cells the key reads otherwise than as plain text:
integers, decimals, words, ISO dates, US dates, times, zoned stamps.
`csv typed` and `frame typed` key under the row rules id=int, amount=num
(fuzzpy-content-9, review s30b: the rows the loader drops left out); a tree
whose key takes no rules keys them as `csv` and `frame`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

WHATS = ("csv", "csv typed", "frame", "frame typed")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_csv(path: str, rows: int) -> None:
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "Zoë", "O'Neil", "x, y"]
    with open(path, "w", encoding="utf-8") as out:
        out.write("id,amount,name,day,us_day,clock,stamp\n")
        for i in range(rows):
            name = rng.choice(words)
            name = f'"{name}"' if "," in name else name
            out.write(f"{i},{rng.uniform(0, 1e4):.2f},{name},2020-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},"
                      f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/2021,{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d},"
                      f"2022-03-04 {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00+02:00\n")


def measure(path: str, what: str) -> dict[str, float]:
    """One measurement in this process (the tree on sys.path)."""
    import hashlib
    import inspect

    from fuzzpy.engines.content import _read_file_content, table_content

    typed = {}
    if what.endswith(" typed") and "rules" in inspect.signature(table_content).parameters:
        typed = {"rules": frozenset({("id", "int"), ("amount", "num")})}
    what = what.removesuffix(" typed")
    if what == "frame":
        import pandas as pd
        import pyarrow as pa

        table = pa.Table.from_pandas(pd.read_csv(path), preserve_index=False)
        cpu, wall = time.process_time(), time.perf_counter()
        table_content(table, **typed)
    else:
        with open(path, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        cpu, wall = time.process_time(), time.perf_counter()
        _read_file_content(path, "csv", sha, **typed)
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", default=[HERE])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--measure", nargs=2, metavar=("FILE", "WHAT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "mixed.csv")
        write_csv(path, args.rows)
        results: dict[tuple[str, str], list[dict[str, float]]] = {}
        for _ in range(args.repeat):
            for what in WHATS:
                for tree in args.trees:
                    env = dict(os.environ, PYTHONPATH=tree, FUZZPY_CACHE="off")
                    out = subprocess.run([sys.executable, __file__, "--measure", path, what], env=env,
                                         capture_output=True, text=True, check=True, cwd=tree).stdout
                    results.setdefault((tree, what), []).append(json.loads(out.strip().splitlines()[-1]))
        print(f"content key, {args.rows} rows, median of {args.repeat} interleaved runs")
        for what in WHATS:
            base = None
            for tree in args.trees:
                cpu = statistics.median(r["cpu"] for r in results[(tree, what)])
                wall = statistics.median(r["wall"] for r in results[(tree, what)])
                base = base or cpu
                print(f"  {what:5} {tree}: cpu {cpu:.2f} s, wall {wall:.2f} s, cpu x{cpu / base:.2f}")


if __name__ == "__main__":
    main()
