"""Checking programs that call a library definition over its epsilon
(static parameters, issue 27): each call at new numbers checks the body again,
so N calls at N distinct epsilons cost about N checks of the body, as the same
program written by hand with the numbers does; calls at repeated numbers reuse
the instance.

Prints, for N in 10, 100, 1000: the time to check the program with the
library (distinct epsilons, then one epsilon repeated) and the hand-written
program, best of 3, interleaved, and the ratios.

    python bench/symbolic.py
"""

from __future__ import annotations

import time

from fuzzpy.checker import check_program
from fuzzpy.frontend.parser import parse_program

HEAD = "type Row = { age : num, income : num };\nlet cap = 1000;\n"
BODY = """{{
  let big = filter (fun r -> r.age > 40) db;
  sample a = laplace[{e} / 2] (size big);
  sample b = laplace[{e} / (2 * cap)] (sum[0, cap] (map (fun r -> r.income) big));
  return (a + b)
}}"""


def library(n: int, distinct: bool) -> str:
    lib = "def stat (e : num) (db : bag Row) : fuzzy num = " + BODY.format(e="e") + ";\n"
    calls = "".join(
        f"def use_{i} (db : bag Row) : fuzzy num = stat {1 + i if distinct else 1} db;\n" for i in range(n)
    )
    return HEAD + lib + calls


def by_hand(n: int) -> str:
    return HEAD + "".join(
        f"def use_{i} (db : bag Row) : fuzzy num = " + BODY.format(e=f"({1 + i})") + ";\n" for i in range(n)
    )


def timed(text: str) -> float:
    program = parse_program(text, "<bench>")
    start = time.perf_counter()
    check_program(program)
    return time.perf_counter() - start


def main() -> None:
    for n in (10, 100, 1000):
        texts = {"library, distinct eps": library(n, True), "library, one eps": library(n, False), "by hand": by_hand(n)}
        best = {name: float("inf") for name in texts}
        for _ in range(3):
            for name, text in texts.items():  # interleaved: load on the machine hits all alike
                best[name] = min(best[name], timed(text))
        hand = best["by hand"]
        shown = ", ".join(f"{name} {t * 1000:.1f} ms ({t / hand:.2f}x)" for name, t in best.items())
        print(f"N={n}: {shown}")


if __name__ == "__main__":
    main()
