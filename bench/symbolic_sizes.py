"""Checking programs over `nat` sizes (issue 27, item 1): a definition over
`(n : nat)` is checked once with n as a symbol, then each call's numbers are
checked again (its instance); one whose symbolic check fails (here `group[n]`,
a vector length) is checked a second time the old way, at a placeholder.

Prints, for N calls at N distinct sizes: the time to check the program with
a symbolic library, with a library that falls back to the per-call check, and
the same program written by hand with the numbers, best of 3, interleaved,
and the ratios to the hand-written one.

    python bench/symbolic_sizes.py
"""

from __future__ import annotations

import time

from fuzzpy.checker import check_program
from fuzzpy.frontend.parser import parse_program

SYMBOLIC = "def lib (n : nat) (eps : num) (db : bag num) : fuzzy num = laplace[eps / n] (sum[0, n] db / 2 + n * size db);\n"
FALLBACK = ("def lib (n : nat) (eps : num) (db : bag num) : fuzzy (vec[1] num) =\n"
            "  laplace[eps] (counts (group[n] (fun r -> floor (clip[0, n - 1] r)) db));\n")


def library(lib: str, n: int, result: str) -> str:
    return lib + "".join(f"def use_{i} (db : bag num) : {result} = lib {i + 1} 0.5 db;\n" for i in range(n))


def by_hand(n: int) -> str:
    return "".join(
        f"def use_{i} (db : bag num) : fuzzy num = laplace[0.5 / {i + 1}] (sum[0, {i + 1}] db / 2 + {i + 1} * size db);\n"
        for i in range(n)
    )


def seconds(text: str) -> float:
    program = parse_program(text, "<bench>")
    start = time.process_time()
    check_program(program)
    return time.process_time() - start


def main() -> None:
    for n in (10, 100):
        texts = {"symbolic": library(SYMBOLIC, n, "fuzzy num"), "fallback": library(FALLBACK, n, "fuzzy (vec[1] num)"),
                 "by hand": by_hand(n)}
        best = {name: float("inf") for name in texts}
        for _ in range(3):
            for name, text in texts.items():
                best[name] = min(best[name], seconds(text))
        hand = best["by hand"]
        print(f"N = {n}: " + ", ".join(f"{name} {t * 1000:.1f} ms ({t / hand:.2f}x)" for name, t in best.items()))


if __name__ == "__main__":
    main()
