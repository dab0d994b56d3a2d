"""Parser throughput: lines per second on generated programs.

    python bench/parse.py            # 10,000 and 100,000 lines
    python bench/parse.py 20000      # other sizes
    python bench/parse.py --lark     # also lark's own LALR parser, for comparison

Each generated program repeats, with fresh names, a realistic mix of the
language: a row type, constants, small helper defs, clamped sums and means,
blocks with `sample`, `case` over lists, records and a `mechanism`. The
parser is warmed up first (grammar compilation is not timed); the ratio of
the two rates shows whether parsing time grows linearly with the length.
Each size is parsed three times and the best run is reported (as `timeit`
does: the slower runs measure other load on the machine, not the parser).
Rates are given per second of wall-clock time and per second of CPU time
(the latter is steadier on a busy machine); the ratio uses CPU time.
"""

from __future__ import annotations

import sys
import time

from fuzzpy.frontend.parser import parse_program

_CHUNK = """\
// group {i}: statistics over the visits table
type Visit{i} = {{ age : num, cost : num, ward : int, stay : num }};
let eps{i} = 0.1;
let cap{i} = 5000;

def is_old{i} (t : num) (v : Visit{i}) : bool = v.age > t && v.stay >= 1;

def count_old{i} (db :[1] bag Visit{i}) : num =
  size (filter (is_old{i} 65) db);

def noisy_mean{i} (db : bag Visit{i}) : fuzzy num = {{
  sample total = laplace[eps{i} / cap{i}] (sum[0, cap{i}] (map (fun v -> v.cost) db));
  sample n = laplace[eps{i}] (size db);
  return (if n > 1 then total / n else 0)
}};

def rec length{i} (xs : list num) : num =
  case xs of [] -> 0 | h :: t -> 1 + length{i} t;

def wards{i} (db : bag Visit{i}) : fuzzy (vec[1] num) =
  laplace[eps{i}] (counts (group[8] (fun v -> v.ward) db));

def summary{i} (x : num) (y : num) : {{ lo : num, hi : num }} =
  let m = (x + y) / 2 in {{ lo = m - 1, hi = m + 1 }};

mechanism svt{i} (q : vec[inf] num, t : num, eps : num) : int
  requires eps > 0
  privacy eps
{{
  var tt = t + lap(2 / eps);
  var i = 0;
  var out = -1;
  while (i < len(q) && out == -1) {{
    if (q[i] + lap(4 / eps) >= tt) {{ out = i; }}
    i = i + 1;
  }}
  return out;
}}

"""


def generate(lines: int) -> str:
    """A program of about `lines` lines (whole chunks)."""
    chunk_lines = _CHUNK.count("\n")
    chunks = max(1, round(lines / chunk_lines))
    return "".join(_CHUNK.format(i=i) for i in range(chunks))


REPEATS = 3


def measure(lines: int) -> float:
    """Parse a program of about `lines` lines REPEATS times; print the best run."""
    text = generate(lines)
    actual = text.count("\n")
    wall = cpu = float("inf")
    for _ in range(REPEATS):
        started_wall, started_cpu = time.perf_counter(), time.process_time()
        program = parse_program(text, f"<generated {actual} lines>")
        wall = min(wall, time.perf_counter() - started_wall)
        cpu = min(cpu, time.process_time() - started_cpu)
        declarations = len(program.decls)
        del program  # free the tree before the next run (not timed)
    rate = actual / cpu
    print(f"{actual:>8} lines  {declarations:>6} declarations  "
          f"{wall:7.3f} s wall  {cpu:7.3f} s cpu  {actual / wall:>9,.0f} lines/s wall  "
          f"{rate:>9,.0f} lines/s cpu")
    return rate


def lark_own(lines: int) -> None:
    """lark's own parsing loop (and its lexer) over the same program, building
    no tree at all: the work fuzzpy's driver replaces (fuzzpy/frontend/lalr.py,
    which also builds the syntax tree in the time it reports)."""
    import gc

    from lark import Lark

    from fuzzpy.frontend.parser import grammar_text

    text = generate(lines)
    parser = Lark(grammar_text(), parser="lalr", lexer="basic", keep_all_tokens=True, maybe_placeholders=False)
    cpu = float("inf")
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(REPEATS):
            started = time.process_time()
            parser.parse(text)
            cpu = min(cpu, time.process_time() - started)
    finally:
        if collecting:
            gc.enable()
    actual = text.count("\n")
    print(f"{actual:>8} lines  lark's own parser, no tree: {cpu:7.3f} s cpu  {actual / cpu:>9,.0f} lines/s cpu")


def main(argv: list[str]) -> None:
    sizes = [int(arg) for arg in argv if arg.isdigit()] or [10_000, 100_000]
    parse_program(generate(100), "<warm-up>")
    rates = [measure(size) for size in sizes]
    if len(rates) >= 2:
        print(f"rate ratio (largest / smallest program): {rates[-1] / rates[0]:.2f} "
              "(1.00 = linear growth)")
    if "--lark" in argv:
        lark_own(sizes[0])


if __name__ == "__main__":
    main(sys.argv[1:])
