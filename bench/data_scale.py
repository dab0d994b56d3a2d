"""`fuzzpy run` on data at scale against the floor: hand-written DuckDB SQL
of the same aggregate, and polars (issue 24, items 2 and 5).

    python bench/data_scale.py                       # 1M and 10M rows, Parquet and CSV
    python bench/data_scale.py --rows 50000000 --forms parquet
    python bench/data_scale.py --spark               # and Spark local[*] on 10M rows
    python bench/data_scale.py --rows 1000000 --repeat 1 --releases count

Four releases over rows `{age: int, income: num, ward: int, city: string}`:
a filtered count, a clamped mean, a 100-bucket histogram and a count
grouped by a string column (20 public categories). Each is run by

* `fuzzpy run --engine duckdb` (the CLI, `python -m fuzzpy`), **warm**: the
  file seen before (a previous run registered it in the ledger and its
  hash, audit and schema are in the user's cache), and **cold**: the first
  run of the file (a fresh ledger; the cache holds the compiled grammar and
  proofs but nothing about this file: the run hashes it and audits it);
* hand-written DuckDB SQL (import, connect, one query, close): the floor;
* polars' lazy scan of the same aggregate (if polars is installed);
* OpenDP (if installed; never installed by this script): not yet written,
  reported as skipped;
* with `--spark`, fuzzpy on Spark `local[*]` and hand-written PySpark at
  `--spark-rows` (10M), each a fresh process (the JVM's start-up is in both).

Every measurement is its own child process, reaped with `os.wait4`: CPU is
that child's user + system time (its threads and its own children
included), peak RSS its `ru_maxrss` (as `getrusage(RUSAGE_CHILDREN)` reports
for one child), wall the time from spawn to reap. The tools are run
interleaved (each repeat runs every tool once, in turn), and each figure is
the median over `--repeat` runs. The 1-minute load average is printed: on a
shared machine ratios are the figure to read, not seconds.

Data files are generated once (fixed seed) into `--data` (default
/tmp/fuzzpy-bench): `rows_N.parquet` (1M rows per row group) and
`rows_N.csv`. Nothing is asserted; the issue's goals are printed beside the
figures (warm CPU <= 1.3 x SQL + 0.3 s, peak RSS <= 2 x SQL + 100 MB, a cold
Parquet run <= 3 x the warm run).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
CITIES = ("Aachen", "Bergen", "Cork", "Delft", "Espoo", "Faro", "Graz", "Haarlem", "Ibiza", "Jena",
          "Kiel", "Lund", "Mons", "Nice", "Oulu", "Pula", "Riga", "Split", "Turku", "Uppsala")
PROGRAM = f"""\
type Row = {{ age : int, income : num, ward : int, city : string }};
let cities = [{", ".join(f'"{c}"' for c in CITIES)}];

def count (db : bag Row) : fuzzy num = laplace[0.1] (size (filter (fun r -> r.age > 40) db));

def mean (db : bag Row) : fuzzy num = {{
  sample total = laplace[0.1 / 200000] (sum[0, 200000] (map (fun r -> r.income) db));
  sample n = laplace[0.1] (size db);
  return (if n > 1 then total / n else 0)
}};

def histogram (db : bag Row) : fuzzy (vec[1] num) =
  laplace[0.5] (counts (group[100] (fun r -> r.ward) db));

def by_city (db : bag Row) : fuzzy (vec[1] num) =
  laplace[0.5] (counts (group[cities] (fun r -> r.city) db));
"""
RELEASES = ("count", "mean", "histogram", "by_city")
TOOLS = ("sql", "polars", "warm", "cold")
SEED = 2024


# ---------------------------------------------------------------- the data


def generate(folder: Path, rows: int, form: str) -> Path:
    """Synthetic rows (made once per size and form, fixed seed)."""
    import numpy as np
    import pyarrow as pa

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rows_{rows}.{form}"
    if path.exists():
        return path
    partial = path.with_name(path.name + ".partial")
    rng = np.random.default_rng(SEED)
    schema = pa.schema([("age", pa.int64()), ("income", pa.float64()), ("ward", pa.int64()),
                        ("city", pa.string())])
    cities = pa.array(CITIES)
    if form == "parquet":
        import pyarrow.parquet as pq

        writer: object = pq.ParquetWriter(partial, schema)
    else:
        import pyarrow.csv as pcsv

        writer = pcsv.CSVWriter(partial, schema, write_options=pcsv.WriteOptions(quoting_style="needed"))
    with writer:  # type: ignore[attr-defined]
        for start in range(0, rows, 1_000_000):
            n = min(1_000_000, rows - start)
            city = cities.take(pa.array(rng.integers(0, len(CITIES), n)))
            writer.write_table(pa.table({  # type: ignore[attr-defined]
                "age": rng.integers(18, 95, n), "income": np.round(rng.lognormal(10.5, 0.8, n), 2),
                "ward": rng.integers(0, 100, n), "city": city}, schema=schema))
    partial.rename(path)
    return path


# ---------------------------------------------------------------- the floor (child processes)


def _source(path: str) -> str:
    quoted = path.replace("'", "''")
    return f"read_parquet('{quoted}')" if path.endswith(".parquet") else f"read_csv('{quoted}', header = true)"


def hand_sql(release: str, path: str) -> object:
    import duckdb

    scan = _source(path)
    cities = ", ".join(f"'{c}'" for c in CITIES)
    sql = {
        "count": f"SELECT count(*) FROM {scan} WHERE age > 40",
        "mean": f"SELECT sum(least(greatest(income, 0), 200000)), count(*) FROM {scan}",
        "histogram": f"SELECT ward, count(*) FROM {scan} WHERE ward >= 0 AND ward < 100 GROUP BY ward",
        "by_city": f"SELECT city, count(*) FROM {scan} WHERE city IN ({cities}) GROUP BY city",
    }[release]
    with duckdb.connect() as con:
        return con.execute(sql).fetchall()


def hand_polars(release: str, path: str) -> object:
    import polars as pl

    frame = pl.scan_parquet(path) if path.endswith(".parquet") else pl.scan_csv(path)
    if release == "count":
        query = frame.filter(pl.col("age") > 40).select(pl.len())
    elif release == "mean":
        query = frame.select(pl.col("income").clip(0, 200000).sum(), pl.len())
    elif release == "histogram":
        query = frame.filter((pl.col("ward") >= 0) & (pl.col("ward") < 100)).group_by("ward").len()
    else:
        query = frame.filter(pl.col("city").is_in(list(CITIES))).group_by("city").len()
    return query.collect().rows()


def hand_spark(release: str, path: str) -> object:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.builder.master("local[*]").getOrCreate()
    df = spark.read.parquet(path) if path.endswith(".parquet") else spark.read.csv(path, header=True,
                                                                                   inferSchema=True)
    if release == "count":
        out: object = df.filter(df.age > 40).count()
    elif release == "mean":
        out = df.select(F.sum(F.least(F.greatest("income", F.lit(0.0)), F.lit(200000.0))), F.count("*")).collect()
    elif release == "histogram":
        out = df.filter((df.ward >= 0) & (df.ward < 100)).groupBy("ward").count().collect()
    else:
        out = df.filter(df.city.isin(list(CITIES))).groupBy("city").count().collect()
    spark.stop()
    return out


# ---------------------------------------------------------------- one measurement


def measured(argv: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """Run `argv` as a child; its CPU (user + sys), wall time and peak RSS."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=TREE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            err.seek(0)
            lines = err.read().decode(errors="replace").strip().splitlines()
            return {"error": lines[-1] if lines else f"exit {child.returncode}"}
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss": usage.ru_maxrss / 1024}


class Fuzzpy:
    """`python -m fuzzpy run` on one file: its program, ledgers and caches."""

    def __init__(self, work: Path, engine: str = "duckdb") -> None:
        self.work = work
        self.engine = engine
        work.mkdir(mode=0o700, parents=True)
        self.program = work / "bench.fz"
        self.program.write_text(PROGRAM)
        self.base = work / "cache-base"  # grammar and proofs, nothing about any data file
        self.warm_cache = work / "cache-warm"
        self.warm_ledger = work / "warm.sqlite"
        self._runs = 0

    def env(self, cache: Path) -> dict[str, str]:
        """An installed fuzzpy runs from bytecode compiled once: fuzzpy's own
        modules are compiled by the first (preparing) run into a folder of
        the bench's, whatever PYTHONDONTWRITEBYTECODE says (without it each
        run compiled the tree again: ~0.2 s CPU of every figure)."""
        env = {**os.environ, "PYTHONPATH": str(TREE), "FUZZPY_CACHE": str(cache),
               "PYTHONPYCACHEPREFIX": str(self.work / "bytecode")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env

    def argv(self, release: str, path: Path, ledger: Path) -> list[str]:
        return [sys.executable, "-m", "fuzzpy", "run", str(self.program), release, "--data", f"db={path}",
                "--budget", "1000000000", "--ledger", str(ledger), "--engine", self.engine]

    def prepare(self, path: Path, releases: tuple[str, ...] = RELEASES) -> None:
        """The warm state: one run of every release (registration, hash, audit,
        schema, proofs), and a base cache without the file's entries."""
        for release in releases:
            out = measured(self.argv(release, path, self.warm_ledger), self.env(self.warm_cache))
            if "error" in out:
                raise SystemExit(f"fuzzpy {release} on {path.name} failed: {out['error']}")
        shutil.rmtree(self.base, ignore_errors=True)
        shutil.copytree(self.warm_cache, self.base, ignore=shutil.ignore_patterns("hashes"))

    def warm(self, release: str, path: Path) -> dict[str, object]:
        return measured(self.argv(release, path, self.warm_ledger), self.env(self.warm_cache))

    def cold(self, release: str, path: Path) -> dict[str, object]:
        self._runs += 1
        cache = self.work / f"cache-cold-{self._runs}"
        shutil.copytree(self.base, cache)
        ledger = self.work / f"cold-{self._runs}.sqlite"
        try:
            return measured(self.argv(release, path, ledger), self.env(cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
            ledger.unlink(missing_ok=True)


def _self(tool: str, release: str, path: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", tool, release, str(path)]


# ---------------------------------------------------------------- the report


def _median(runs: list[dict[str, object]]) -> dict[str, object]:
    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    return {k: statistics.median(float(r[k]) for r in runs) for k in ("cpu", "wall", "rss")}  # type: ignore[arg-type]


def _cell(figure: dict[str, object]) -> str:
    if "error" in figure:
        return f"{'failed':>22}"
    return f"{figure['cpu']:>7.2f}{figure['wall']:>7.2f}{figure['rss']:>8.0f}"


def compare(path: Path, fuzzpy: Fuzzpy, tools: tuple[str, ...], repeat: int, releases: tuple[str, ...],
            summary: list[str]) -> None:
    runs: dict[tuple[str, str], list[dict[str, object]]] = {}
    loads: list[float] = []
    for _ in range(repeat):  # interleaved: every tool once per repeat, in turn
        for release in releases:
            for tool in tools:
                if tool == "warm":
                    out = fuzzpy.warm(release, path)
                elif tool == "cold":
                    out = fuzzpy.cold(release, path)
                else:
                    out = measured(_self(tool, release, path))
                runs.setdefault((release, tool), []).append(out)
                loads.append(os.getloadavg()[0])
    print(f"\n{path.name} ({path.stat().st_size / 1e6:.0f} MB), load {min(loads):.1f}-{max(loads):.1f}: "
          "CPU s, wall s, peak RSS MB")
    head = f"{'release':<10}" + "".join(f"{tool:>22}" for tool in tools)
    print(head + f"{'warm/sql CPU':>13}{'goal':>7}{'RSS goal':>10}{'cold/warm':>10}")
    for release in releases:
        figures = {tool: _median(runs[(release, tool)]) for tool in tools}
        line = f"{release:<10}" + "".join(_cell(figures[tool]) for tool in tools)
        sql, warm, cold = figures.get("sql"), figures.get("warm"), figures.get("cold")
        if sql and warm and "error" not in sql and "error" not in warm:
            goal = 1.3 * sql["cpu"] + 0.3  # type: ignore[operator]
            rss_goal = 2 * sql["rss"] + 100  # type: ignore[operator]
            met = warm["cpu"] <= goal and warm["rss"] <= rss_goal  # type: ignore[operator]
            line += f"{warm['cpu'] / sql['cpu']:>12.2f}x{goal:>6.2f}s{rss_goal:>8.0f}MB"  # type: ignore[operator]
            summary.append(f"{path.name:<22}{release:<10} warm CPU {warm['cpu']:.2f}s vs goal {goal:.2f}s, "
                           f"RSS {warm['rss']:.0f} vs {rss_goal:.0f} MB: {'met' if met else 'NOT met'}")
        else:
            line += f"{'':>13}{'':>7}{'':>10}"
        if warm and cold and "error" not in warm and "error" not in cold:
            line += f"{cold['cpu'] / warm['cpu']:>9.2f}x"  # type: ignore[operator]
        print(line, flush=True)
        for tool, figure in figures.items():
            if "error" in figure:
                summary.append(f"{path.name:<22}{release:<10} {tool} failed: {figure['error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1000000,10000000",
                        help="sizes, comma-separated (default 1M,10M; add 50000000 for 50M)")
    parser.add_argument("--forms", default="parquet,csv", help="parquet, csv or both")
    parser.add_argument("--releases", default=",".join(RELEASES))
    parser.add_argument("--tools", default=",".join(TOOLS), help="sql, polars, warm, cold")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path("/tmp/fuzzpy-bench"))
    parser.add_argument("--spark", action="store_true", help="also fuzzpy on Spark vs PySpark")
    parser.add_argument("--spark-rows", type=int, default=10_000_000)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        tool, release, path = args.child
        {"sql": hand_sql, "polars": hand_polars, "spark": hand_spark}[tool](release, path)
        return
    releases = tuple(r for r in RELEASES if r in args.releases.split(","))
    tools = tuple(t for t in TOOLS if t in args.tools.split(","))
    if "polars" in tools and importlib.util.find_spec("polars") is None:
        print("polars is not installed: skipped")
        tools = tuple(t for t in tools if t != "polars")
    if importlib.util.find_spec("opendp") is None:
        print("OpenDP is not installed: skipped (this script never installs it)")
    print(f"{os.cpu_count()} cores; each figure: the median of {args.repeat} interleaved runs, each a fresh "
          "process.\nwarm: fuzzpy run on a file seen before; cold: its first run (hash + audit); sql: "
          "hand-written DuckDB SQL")
    summary: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fuzzpy-bench-") as folder:
        for rows in (int(r) for r in args.rows.split(",")):
            for form in args.forms.split(","):
                path = generate(args.data, rows, form)
                fuzzpy = Fuzzpy(Path(folder) / f"{rows}-{form}")
                fuzzpy.prepare(path, releases)
                compare(path, fuzzpy, tools, args.repeat, releases, summary)
        if args.spark:
            path = generate(args.data, args.spark_rows, "parquet")
            spark = Fuzzpy(Path(folder) / "spark", engine="spark")
            spark.prepare(path, releases)
            print("\nSpark local[*] (each run a fresh process, the JVM's start-up included): sql = PySpark")
            compare_spark(path, spark, args.repeat, releases)
    print("\nthe goals (issue 24):")
    for line in summary:
        print("  " + line)


def compare_spark(path: Path, fuzzpy: Fuzzpy, repeat: int, releases: tuple[str, ...]) -> None:
    print(f"{'release':<10}{'fuzzpy warm':>22}{'PySpark':>22}{'ratio CPU':>10}")
    for release in releases:
        ours = _median([fuzzpy.warm(release, path) for _ in range(repeat)])
        theirs = _median([measured(_self("spark", release, path)) for _ in range(repeat)])
        ratio = (f"{ours['cpu'] / theirs['cpu']:>9.2f}x"  # type: ignore[operator]
                 if "error" not in ours and "error" not in theirs else "")
        print(f"{release:<10}{_cell(ours)}{_cell(theirs)}{ratio}", flush=True)


if __name__ == "__main__":
    main()
