"""Checking speed: generated programs of 1,000, 10,000 and 100,000 lines.

Prints, for each size, the time to check (parsing excluded, best of a few
runs), programs/second and lines/second, then the 100k/10k time ratio
(linear growth means about 10; the goal is within 12) .

    python bench/check.py
"""

from __future__ import annotations

import gc
import sys
import time

from fuzzpy.checker import check_program
from fuzzpy.frontend.parser import parse_program

HEADER = """let eps = 0.01;
type Row = { age : num, income : num, zip : int };
"""

UNIT = """def over_{i} (t : num) (db : bag Row) : num =
  size (filter (fun r -> r.age > t) db);
def release_{i} (db : bag Row) : fuzzy (num, num) = {{
  let c = over_{i} 40 db;
  let s = sum[0, 100] (map (fun r -> r.income) db) / 100;
  sample a = laplace[eps] (c + {i});
  sample b = laplace[eps] (if a > 10 then s else 2 * s);
  return (a, b)
}};
"""  # 10 lines


def long_block(name: str, lines: int) -> str:
    """One definition whose body is a block of ``lines`` statements."""
    body = ["  let x0 = size db;", "  sample y0 = laplace[eps] x0;"]
    for k in range(1, lines - 3):
        if k % 4 == 0:
            body.append(f"  sample y{k} = laplace[eps] (x{k - 1} / 4 + y{k - 4});")
        elif k % 4 == 1:
            body.append(f"  let x{k} = clip[0, 1] y{k - 1} + size (filter (fun r -> r.zip == {k}) db) / 8;")
        else:
            body.append(f"  let x{k} = (x{k - 1} + 3 * x{k - 1}) / 4;")
        if k % 4 == 0:
            body.append(f"  let x{k} = x{k - 1};")
    text = "\n".join(body[: lines - 3])
    last = max(i for i, line in enumerate(body[: lines - 3]) if line.startswith("  let x"))
    result_var = body[last].split()[1]
    return f"def {name} (db : bag Row) : fuzzy num = {{\n{text}\n  laplace[eps] {result_var}\n}};\n"


def program(lines: int) -> str:
    block_lines = max(lines // 10, 10)
    units = max((lines - block_lines - 2) // 10, 1)
    return HEADER + "".join(UNIT.format(i=i) for i in range(units)) + long_block("long_release", block_lines)


def time_check(text: str, repeats: int) -> float:
    parsed = parse_program(text, "bench.fz")
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        check_program(parsed)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    sys.setrecursionlimit(100_000)
    times: dict[int, float] = {}
    print(f"{'lines':>8} {'seconds':>9} {'programs/s':>11} {'lines/s':>10}")
    for target in (1_000, 10_000, 100_000):
        text = program(target)
        n_lines = text.count("\n")
        seconds = time_check(text, repeats=7 if target < 100_000 else 3)
        times[target] = seconds
        print(f"{n_lines:>8} {seconds:>9.3f} {1 / seconds:>11.2f} {n_lines / seconds:>10.0f}")
    ratio = times[100_000] / times[10_000]
    print(f"100k / 10k time ratio: {ratio:.2f} (linear is 10; goal <= 12)")
    print(f"10k lines checked in {times[10_000]:.3f} s (goal < 2 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
