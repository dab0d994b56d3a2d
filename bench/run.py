"""Speed of `fuzzpy run`'s engine against hand-written numpy.

    python bench/run.py [--rows 10000000] [--repeat 5]

Generates a CSV of `--rows` people (once, in bench/_data/), prints the loader's
rows per second beside pyarrow's typed `read_csv` on the same file and the time
of one `fuzzpy run` end to end (a new process, fresh ledger), then for three
releases the interpreter's time (evaluating the definition over columns and
sampling its exact noise) beside hand-written numpy computing the same
statistic with numpy's floating-point Laplace noise, and their ratio (goal:
within 2x; loading excluded). Last, the time to sample 1,000,000 noisy counts with the exact
discrete Laplace sampler (secure randomness) beside numpy's `laplace`.
Each figure is the best of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzzpy.checker import check_program  # noqa: E402
from fuzzpy.data.loader import load_bag  # noqa: E402
from fuzzpy.frontend.parser import parse_program  # noqa: E402
from fuzzpy.language.types import INT, NUM, TBag, TRecord  # noqa: E402
from fuzzpy.runtime.interpreter import Interpreter  # noqa: E402
from fuzzpy.runtime.noise import laplace_release  # noqa: E402
from fuzzpy.runtime.randomness import SecureSource  # noqa: E402

PROGRAM = """
type Person = { age : num, income : num, bucket : int };
let eps = 0.5;
let cap = 200000;

def filtered_count (db : bag Person) : fuzzy num =
  laplace[eps] (size (filter (fun p -> p.age > 40) db));

def clamped_mean (db : bag Person) : fuzzy num = {
  sample total = laplace[eps / cap] (sum[0, cap] (map (fun p -> p.income) db));
  sample n = laplace[eps] (size db);
  return (total / n)
};

def histogram (db : bag Person) : fuzzy (vec[1] num) =
  laplace[eps] (counts (group[100] (fun p -> p.bucket) db));
"""
ROW = TBag(TRecord((("age", NUM), ("income", NUM), ("bucket", INT))))
EPS, CAP = 0.5, 200000.0


def generate(path: Path, rows: int) -> None:
    rng = np.random.default_rng(7)
    chunk = 1_000_000
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("age", pa.float64()), ("income", pa.float64()), ("bucket", pa.int64())])
    with pacsv.CSVWriter(path, schema) as writer:
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            writer.write_table(
                pa.table(
                    {
                        "age": np.clip(rng.normal(45, 17, n), 18, 95).round(0),
                        "income": rng.lognormal(10.6, 0.7, n).round(0),
                        "bucket": rng.integers(0, 100, n),
                    },
                    schema=schema,
                )
            )


def best_time(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def end_to_end(data: Path, rows: int) -> None:
    """`fuzzpy run` as a user calls it (new process: parse, check, quote, load,
    charge a fresh ledger, release), once."""
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        program = Path(tmp) / "bench.fz"
        program.write_text(PROGRAM)
        command = [sys.executable, "-m", "fuzzpy", "run", str(program), "filtered_count",
                   "--data", f"db={data}", "--budget", "100", "--ledger", str(Path(tmp) / "ledger.db")]
        cpu_before = _children_cpu()
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        took = time.perf_counter() - start
        cpu = _children_cpu() - cpu_before
    if done.returncode != 0:
        raise SystemExit(f"fuzzpy run failed ({done.returncode}): {done.stderr.strip()}")
    print(f"fuzzpy run filtered_count on {rows:,} rows, end to end (new process, imports included): "
          f"{took:.2f} s wall, {cpu:.2f} s CPU")


def _children_cpu() -> float:
    """CPU seconds of finished child processes (wall time is noisy on a shared machine)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    path = ROOT / "bench" / "_data" / f"people_{args.rows}.csv"
    if not path.exists():
        start = time.perf_counter()
        generate(path, args.rows)
        print(f"generated {path.name} ({args.rows:,} rows) in {time.perf_counter() - start:.1f} s")

    bag = load_bag(path, ROW)  # also warms the file cache for both readers
    ours = best_time(lambda: load_bag(path, ROW), args.repeat)
    theirs = best_time(lambda: pacsv.read_csv(path), args.repeat)
    print(f"load {args.rows:,} rows: fuzzpy {args.rows / ours:,.0f} rows/s ({ours:.2f} s; framed by line, "
          f"every cell checked, row rules), pyarrow read_csv {args.rows / theirs:,.0f} rows/s ({theirs:.2f} s), "
          f"{ours / theirs:.2f}x")
    end_to_end(path, args.rows)

    columns = bag.view().fields
    age, income, bucket = columns["age"], columns["income"], columns["bucket"]
    checked = check_program(parse_program(PROGRAM, "<bench>"))
    interp = Interpreter(checked.program, SecureSource(), None, checked)  # as `run` builds it
    rng = np.random.default_rng()

    def numpy_count() -> float:
        return np.count_nonzero(age > 40) + rng.laplace(0, 1 / EPS)

    def numpy_mean() -> float:
        total = np.clip(income, 0, CAP).sum() + rng.laplace(0, CAP / EPS)
        return total / (income.size + rng.laplace(0, 1 / EPS))

    def numpy_histogram() -> np.ndarray:
        inside = bucket[(bucket >= 0) & (bucket < 100)]
        return np.bincount(inside, minlength=100) + rng.laplace(0, 1 / EPS, 100)

    cases = [
        ("filtered noisy count", "filtered_count", numpy_count),
        ("clamped mean", "clamped_mean", numpy_mean),
        ("100-bucket histogram", "histogram", numpy_histogram),
    ]
    print(f"{'release':<24}{'fuzzpy':>10}{'numpy':>10}{'ratio':>8}")
    for label, name, by_hand in cases:
        ours = best_time(lambda name=name: interp.definition(name)(bag).sample(), args.repeat)
        theirs = best_time(by_hand, args.repeat)
        print(f"{label:<24}{ours * 1000:>8.1f}ms{theirs * 1000:>8.1f}ms{ours / theirs:>7.2f}x")

    zeros = np.zeros(1_000_000, dtype=np.int64)
    exact = best_time(lambda: laplace_release(zeros, Fraction(1, 2), SecureSource()), args.repeat)
    floating = best_time(lambda: zeros + rng.laplace(0, 2.0, zeros.size), args.repeat)
    print(
        f"{'1,000,000 noisy counts':<24}{exact * 1000:>8.1f}ms{floating * 1000:>8.1f}ms"
        f"{exact / floating:>7.2f}x  (exact discrete Laplace, os.urandom vs numpy float laplace)"
    )


if __name__ == "__main__":
    main()
