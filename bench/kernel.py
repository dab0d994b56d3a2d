"""Time the proof kernel on every proved mechanism (examples and literature suite).

    python bench/kernel.py                 # examples/mechanisms and the suite's proved entries
    python bench/kernel.py FILE...         # these files

For each mechanism the verifier proves, the kernel checks the certificate
again on its own and its CPU seconds are printed; a mechanism the prover
proved but the kernel rejected shows as "REJECTED" with the kernel's reason.
The last line is the largest kernel time.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.release.pipeline import load_source, parse
from fuzzpy.verifier.kernel import check

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "tests" / "mechanism_suite"


def default_files() -> list[Path]:
    files = sorted((REPO / "examples" / "mechanisms").glob("*.fz"))
    manifest = json.loads((SUITE / "expected.json").read_text())["mechanisms"]
    files += [SUITE / name for name, entry in sorted(manifest.items())
              if isinstance(entry.get("recorded"), dict) and entry["recorded"].get("verdict") == "proved"]
    return files


def main(argv: list[str]) -> int:
    files = [Path(a).resolve() for a in argv] or default_files()
    worst, rejected = 0.0, 0
    for path in files:
        program = parse(load_source(path))
        for decl in [d for d in program.decls if isinstance(d, MechanismDecl)]:
            verdict = verify_mechanism(decl, program)
            if verdict.proved and verdict.certificate is not None:
                started = time.process_time()
                decision = check(decl, program, verdict.certificate)
                seconds = time.process_time() - started
                worst = max(worst, seconds)
                state = "accepted" if decision.accepted else f"REJECTED {decision.reason}"
                print(f"{path.relative_to(REPO)}:{decl.name}: {state}, {decision.paths} paths, {seconds:.2f} s", flush=True)
            elif "proof kernel rejected" in (verdict.reason or ""):
                rejected += 1
                print(f"{path.relative_to(REPO)}:{decl.name}: REJECTED {verdict.reason}", flush=True)
            else:
                print(f"{path.relative_to(REPO)}:{decl.name}: {verdict.status}", flush=True)
    print(f"largest kernel check: {worst:.2f} s CPU; proofs the kernel rejected: {rejected}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
