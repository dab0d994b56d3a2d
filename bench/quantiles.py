"""A private median and a 90th percentile (exponential mechanism over
candidates; the median also as `std.stats.median` of the incomes) against
a count, on DuckDB at scale (issue 31, item 3).

    python bench/quantiles.py                          # 10M rows, 50 candidates
    python bench/quantiles.py --rows 1000000 --candidates 200 --repeat 1
    python bench/quantiles.py --tree /work/main        # another checkout (before/after)

The data are `bench/data_scale.py`'s (same generator, same seed, same
folder: /tmp/fuzzpy-bench/rows_N.parquet is reused when present). Each
figure is `python -m fuzzpy run --engine duckdb` in a fresh process, warm
(the file registered and audited by a first run), the median of
``--repeat`` interleaved runs: CPU (user + sys of the child), wall, peak
RSS. The goal printed beside: a median within 3x a count's wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_scale as scale  # noqa: E402 -- the sibling script, by path


def program(candidates: int) -> str:
    """Candidates spread over the incomes' range (lognormal, median ~36,000)."""
    top = 200_000
    cands = ", ".join(str(round(top * (i + 1) / candidates)) for i in range(candidates))
    return f"""\
import std.stats (median);

type Row = {{ age : int, income : num, ward : int, city : string }};

def count (db : bag Row) : fuzzy num = laplace[0.1] (size (filter (fun r -> r.age > 40) db));

def balance (c : num) (db : bag Row) : num =
  let (below, above) = split (fun r -> r.income <= c) db in - abs (size below - size above);

def median_by_hand (db : bag Row) : fuzzy num = expmech[0.1] [{cands}] balance db;

def p90_score (c : num) (db : bag Row) : num =
  let (below, above) = split (fun r -> r.income <= c) db in - abs (size below - 9 * size above);

def p90 (db : bag Row) : fuzzy num = expmech[0.01] [{cands}] p90_score db;

def std_median (db : bag Row) : fuzzy num = median [{cands}] (map (fun r -> r.income) db) 0.1;
"""


RELEASES = ("count", "median_by_hand", "p90", "std_median")


class Runs(scale.Fuzzpy):
    """`fuzzpy run` of this script's program, from ``tree``'s code (a full
    checkout: `git archive COMMIT | tar -x -C DIR` makes one)."""

    def __init__(self, work: Path, text: str, tree: Path) -> None:
        super().__init__(work)
        self.program.write_text(text)
        self.tree = tree

    def env(self, cache: Path) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.tree), "FUZZPY_CACHE": str(cache)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path("/tmp/fuzzpy-bench"))
    parser.add_argument("--tree", type=Path, default=scale.TREE, help="the checkout whose fuzzpy runs")
    parser.add_argument("--releases", default=",".join(RELEASES))
    args = parser.parse_args()
    releases = tuple(r for r in RELEASES if r in args.releases.split(","))
    import tempfile

    # `python -m` reads the package from its working directory first: each run starts in ``tree``
    scale.TREE = args.tree.resolve()

    path = scale.generate(args.data, args.rows, "parquet")
    with tempfile.TemporaryDirectory(prefix="fuzzpy-quantiles-") as folder:
        runs = Runs(Path(folder) / "runs", program(args.candidates), args.tree)
        runs.prepare(path, releases)
        figures: dict[str, list[dict[str, object]]] = {r: [] for r in releases}
        loads = []
        for _ in range(args.repeat):  # interleaved
            for release in releases:
                figures[release].append(runs.warm(release, path))
                loads.append(os.getloadavg()[0])
    print(f"{path.name}, {args.candidates} candidates, code from {args.tree}, {os.cpu_count()} cores, "
          f"load {min(loads):.1f}-{max(loads):.1f}; median of {args.repeat} warm runs")
    print(f"{'release':<16}{'CPU s':>7}{'wall s':>7}{'RSS MB':>8}{'wall / count':>14}")
    medians = {r: scale._median(figures[r]) for r in releases}
    base = medians.get("count")
    for release in releases:
        m = medians[release]
        ratio = ""
        if base and "error" not in base and "error" not in m:
            ratio = f"{float(m['wall']) / float(base['wall']):>13.2f}x"  # type: ignore[arg-type]
        print(f"{release:<16}{scale._cell(m)}{ratio}", flush=True)
    print("goal (issue 31): a median's wall time within 3x a count's")


if __name__ == "__main__":
    main()
