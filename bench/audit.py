"""`fuzzpy audit` on every mechanism of examples/mechanisms (proved and buggy/) and a few
checked definitions: the lower bound, the claim and the CPU time of each (issue 30 item 6).

    PYTHONPATH=. python bench/audit.py [--samples N] [--def-samples N] [--seed S] [--only NAME]

A proved example must stay below its claim; a buggy one should exceed it. The claim
printed is the one at the inputs of the best event (the audit also tries the claim's
numbers at 1/2, 1 and 3: docs/audit.md), `ratio` is lower / claim; `cpu s` is the
audit's own CPU time (the machine is shared: wall time is noisy).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from fuzzpy.frontend.parser import parse_program
from fuzzpy.language import syntax as S
from fuzzpy.runtime.audit import AuditError, audit_definition, audit_mechanism, safe_audit

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = [("noisy_count", "noisy_count"), ("parallel_split", "young_and_old"),
               ("clamped_mean", "mean_income")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--def-samples", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", help="audit only these mechanisms / definitions")
    args = parser.parse_args()
    wanted = (lambda name: name in args.only) if args.only else (lambda name: True)
    print(f"{'program':34} {'kind':7} {'claim':>6} {'lower':>7} {'ratio':>6} {'leak':>5} {'cpu s':>6} {'wall s':>6}"
          "  best event")
    files = sorted((ROOT / "examples/mechanisms").glob("*.fz")) + sorted((ROOT / "examples/mechanisms/buggy").glob("*.fz"))
    for path in files:
        program = parse_program(path.read_text(), str(path))
        for decl in [d for d in program.decls if isinstance(d, S.MechanismDecl) and wanted(d.name)]:
            kind = "buggy" if path.parent.name == "buggy" else "proved"
            _one(decl.name, kind, lambda p=program, n=decl.name: audit_mechanism(p, n, samples=args.samples, seed=args.seed))
    for file, name in [(f, n) for f, n in DEFINITIONS if wanted(n)]:
        program = parse_program((ROOT / "examples" / f"{file}.fz").read_text(), file)
        _one(name, "def", lambda p=program, n=name: audit_definition(p, n, samples=args.def_samples, seed=args.seed))


def _one(name: str, kind: str, run) -> None:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    try:
        r = safe_audit(run)
    except AuditError as error:
        print(f"{name:34} {kind:7} cannot audit: {error}")
        return
    wall = time.perf_counter() - start
    print(f"{name:34} {kind:7} {r.best.claim:6g} {r.best.bound:7.3f} {r.best.bound / r.best.claim:6.3f} "
          f"{'LEAK' if r.leak else '-':>5} "
          f"{r.seconds:6.1f} {wall:6.1f}  {r.best.event} on {r.best.pair}"[:220], flush=True)


if __name__ == "__main__":
    main()
