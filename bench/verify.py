"""Benchmark the coupling verifier: verdict and time for every example mechanism.

    python bench/verify.py [FILE...]

Prints one line per mechanism: verdict, expected verdict, wall-clock seconds
and CPU seconds of this process (the verifier is single-threaded, so CPU time
is the time on one core, less sensitive to other load), excluding start-up. Correct mechanisms live in examples/mechanisms/, buggy ones
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
    print(f"{'mechanism':32} {'verdict':9} {'expected':9} {'wall s':>8} {'cpu s':>8}")
    worst, mismatches = 0.0, 0
    for path in files:
        program = parse(load_source(path))
        expected = "refuted" if path.parent.name == "buggy" else "proved"
        for decl in program.decls:
            if not isinstance(decl, MechanismDecl):
                continue
            started, cpu = time.perf_counter(), time.process_time()
            verdict = verify_mechanism(decl, program)
            seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
            worst = max(worst, cpu_seconds)
            mismatches += verdict.status != expected
            print(f"{decl.name:32} {verdict.status:9} {expected:9} {seconds:8.2f} {cpu_seconds:8.2f}")
    print(f"slowest (cpu): {worst:.2f} s; verdicts different from expected: {mismatches}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
