"""Benchmark the coupling verifier: verdict and time for every example mechanism.

    python bench/verify.py [FILE...]

Prints one line per mechanism (verdict, expected verdict, seconds on one core,
excluding start-up). Correct mechanisms live in examples/mechanisms/, buggy ones
in examples/mechanisms/buggy/; the goal is every correct one proved and every
buggy one refuted, each in under 3 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fuzzpy.pipeline import load_source, parse
from fuzzpy.syntax import MechanismDecl
from fuzzpy.verifier import verify_mechanism

ROOT = Path(__file__).resolve().parent.parent / "examples" / "mechanisms"


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or sorted(ROOT.glob("*.fz")) + sorted((ROOT / "buggy").glob("*.fz"))
    print(f"{'mechanism':32} {'verdict':9} {'expected':9} {'seconds':>8}")
    worst, mismatches = 0.0, 0
    for path in files:
        program = parse(load_source(path))
        expected = "refuted" if path.parent.name == "buggy" else "proved"
        for decl in program.decls:
            if not isinstance(decl, MechanismDecl):
                continue
            started = time.perf_counter()
            verdict = verify_mechanism(decl, program)
            seconds = time.perf_counter() - started
            worst = max(worst, seconds)
            mismatches += verdict.status != expected
            print(f"{decl.name:32} {verdict.status:9} {expected:9} {seconds:8.2f}")
    print(f"slowest: {worst:.2f} s; verdicts different from expected: {mismatches}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
