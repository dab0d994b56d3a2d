"""Benchmark the coupling verifier: verdict, time and truth for every mechanism.

    python bench/verify.py                  # the examples, then the literature suite
    python bench/verify.py --examples       # examples/mechanisms only
    python bench/verify.py --suite          # tests/mechanism_suite only
    python bench/verify.py --suite --json results.json --reasons
    python bench/verify.py FILE...          # these files (truth from the suite's
                                            # manifest, or buggy/ = not private)

Prints one line per mechanism: its truth (private / not private), the verdict,
whether the verdict matches the truth ("yes", "unknown", or "WRONG": a
non-private mechanism proved or a private one refuted), the CPU seconds of this
process (the verifier is single-threaded and runs z3 in-process, so CPU time is
the time on one core, less sensitive to other load) and the wall-clock seconds,
excluding start-up. Then the totals: proved / refuted / unknown per truth class,
the goals of issue 10 (no non-private mechanism proved; at least 90% of the
private ones proved and 90% of the non-private ones refuted) and every
mechanism over 3 s CPU. The truth of each suite file is in
tests/mechanism_suite/expected.json (see tests/mechanism_suite/README.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import fuzzpy.verifier as verifier
from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.release.pipeline import load_source, parse

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "mechanisms"
SUITE = REPO / "tests" / "mechanism_suite"
SLOW_CPU_SECONDS = 3.0
GOAL = 0.9


@dataclass(frozen=True)
class Row:
    path: str
    name: str
    truth: str  # "private" | "not private"
    verdict: str  # "proved" | "refuted" | "unknown" | "error"
    cpu: float
    wall: float
    reason: str | None

    @property
    def match(self) -> str:
        if self.verdict in ("unknown", "error"):
            return "unknown"
        wanted = "proved" if self.truth == "private" else "refuted"
        return "yes" if self.verdict == wanted else "WRONG"


def _truths() -> dict[Path, str]:
    manifest = json.loads((SUITE / "expected.json").read_text())["mechanisms"]
    truths = {(SUITE / name).resolve(): entry["truth"] for name, entry in manifest.items()}
    for path in EXAMPLES.glob("*.fz"):
        truths[path.resolve()] = "private"
    for path in (EXAMPLES / "buggy").glob("*.fz"):
        truths[path.resolve()] = "not private"
    for path in (EXAMPLES / "gaussian").glob("*.fz"):  # approximate DP (the Gaussian rule)
        truths[path.resolve()] = "private"
    for path in (EXAMPLES / "gaussian" / "buggy").glob("*.fz"):
        truths[path.resolve()] = "not private"
    return truths


def _label(path: Path) -> str:
    for root in (SUITE, REPO):
        if path.resolve().is_relative_to(root):
            return str(path.resolve().relative_to(root))
    return str(path)


def measure(path: Path, truth: str) -> list[Row]:
    program = parse(load_source(path))
    rows = []
    for decl in program.decls:
        if not isinstance(decl, MechanismDecl):
            continue
        getattr(verifier, "_cache", {}).clear()  # time every file, even a duplicate of another
        started, cpu = time.perf_counter(), time.process_time()
        try:
            verdict = verify_mechanism(decl, program)
            status, reason = verdict.status, verdict.reason
        except FuzzError as error:
            status, reason = "error", "; ".join(f"{d.code} {d.message}" for d in error.diagnostics)
        rows.append(Row(_label(path), decl.name, truth, status, time.process_time() - cpu,
                        time.perf_counter() - started, reason))
    return rows


def _percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def summary(rows: list[Row]) -> list[str]:
    private = [r for r in rows if r.truth == "private"]
    leaky = [r for r in rows if r.truth != "private"]
    proved = sum(r.verdict == "proved" for r in private)
    refuted = sum(r.verdict == "refuted" for r in leaky)
    wrong_proofs = [r for r in leaky if r.verdict == "proved"]
    wrong_refutations = [r for r in private if r.verdict == "refuted"]
    slow = sorted((r for r in rows if r.cpu > SLOW_CPU_SECONDS), key=lambda r: -r.cpu)
    lines = [
        f"private     ({len(private)}): proved {_percent(proved, len(private))}, "
        f"unknown {sum(r.verdict in ('unknown', 'error') for r in private)}, refuted {len(wrong_refutations)}",
        f"not private ({len(leaky)}): refuted {_percent(refuted, len(leaky))}, "
        f"unknown {sum(r.verdict in ('unknown', 'error') for r in leaky)}, proved {len(wrong_proofs)}",
        f"goal: no non-private mechanism proved ........ {'met' if not wrong_proofs else 'NOT MET'}"
        + "".join(f"\n    PROVED BUT NOT PRIVATE: {r.path}" for r in wrong_proofs),
        f"goal: >= 90% of the private ones proved ...... "
        f"{'met' if proved >= GOAL * len(private) else 'not met'}",
        f"goal: >= 90% of the non-private ones refuted . "
        f"{'met' if refuted >= GOAL * len(leaky) else 'not met'}",
        f"over {SLOW_CPU_SECONDS:.0f} s CPU: {len(slow)}"
        + "".join(f"\n    {r.cpu:6.2f} s  {r.verdict:8} {r.path}" for r in slow),
        f"total CPU {sum(r.cpu for r in rows):.1f} s, wall {sum(r.wall for r in rows):.1f} s",
    ]
    lines += [f"REFUTED BUT PRIVATE: {r.path}" for r in wrong_refutations]
    return lines


def run(title: str, files: list[Path], truths: dict[Path, str], reasons: bool) -> list[Row]:
    print(f"== {title}")
    print(f"{'mechanism':64} {'truth':11} {'verdict':8} {'match':7} {'cpu s':>7} {'wall s':>7}")
    rows: list[Row] = []
    for path in files:
        truth = truths.get(path.resolve(), "not private" if path.parent.name == "buggy" else "private")
        for row in measure(path, truth):
            rows.append(row)
            print(f"{row.path:64} {row.truth:11} {row.verdict:8} {row.match:7} {row.cpu:7.2f} {row.wall:7.2f}",
                  flush=True)
            if reasons and row.match != "yes" and row.reason:
                print(f"    {row.reason}")
    for line in summary(rows):
        print(line)
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--examples", action="store_true", help="examples/mechanisms only")
    parser.add_argument("--suite", action="store_true", help="tests/mechanism_suite only")
    parser.add_argument("--json", type=Path, help="also write every row to this file")
    parser.add_argument("--reasons", action="store_true", help="print the verifier's reason under each undecided row")
    args = parser.parse_args(argv)
    truths = _truths()
    groups: list[tuple[str, list[Path]]] = []
    if args.files:
        groups.append(("files", args.files))
    else:
        if args.examples or not args.suite:
            groups.append(("examples/mechanisms", sorted(EXAMPLES.glob("*.fz")) + sorted((EXAMPLES / "buggy").glob("*.fz"))))
            gaussian = EXAMPLES / "gaussian"
            groups.append(("examples/mechanisms/gaussian",
                           sorted(gaussian.glob("*.fz")) + sorted((gaussian / "buggy").glob("*.fz"))))
        if args.suite or not args.examples:
            groups.append(("tests/mechanism_suite", sorted(SUITE.glob("*/*.fz"))))
    rows: list[Row] = []
    for title, files in groups:
        rows += run(title, files, truths, args.reasons)
        print()
    if args.json:
        args.json.write_text(json.dumps([{**row.__dict__, "match": row.match} for row in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
