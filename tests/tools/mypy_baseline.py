#!/usr/bin/env python3
"""Regenerate the mypy baseline at the end of pyproject.toml (issue 26).

Run at the repository root after a merge: removes the baseline section
(from its marker line to the end of the file), runs mypy with the project's
configuration, and writes back, per module, the error codes it still raises,
repeating until mypy passes (disabling a code can make a `type: ignore`
unused). Use: PYTHONPATH=$PWD python3 mypy_baseline.py [/path/to/mypy]
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
from pathlib import Path

MARKER = "# ---- the baseline (issue 26)"


def run_mypy(mypy: str) -> list[str]:
    done = subprocess.run([mypy], capture_output=True, text=True)
    return [line for line in done.stdout.splitlines() if ": error:" in line]


def section(codes: dict[str, set[str]], errors: int) -> str:
    groups: dict[tuple[str, ...], list[str]] = collections.defaultdict(list)
    for module, found in codes.items():
        groups[tuple(sorted(found))].append(module)
    out = ["", MARKER + ": modules with errors today, and the codes each may still raise.",
           "# Tighten by fixing a module and deleting it here; a module never joins this list.",
           f"# {errors} errors in {len(codes)} modules when written (regenerate: tests/tools/mypy_baseline.py)."]
    for found, modules in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out += ["", "[[tool.mypy.overrides]]",
                "module = [" + ", ".join(f'"{m}"' for m in sorted(modules)) + "]",
                "disable_error_code = [" + ", ".join(f'"{c}"' for c in found) + "]"]
    return "\n".join(out) + "\n"


def main() -> int:
    mypy = sys.argv[1] if len(sys.argv) > 1 else "mypy"
    path = Path("pyproject.toml")
    text = path.read_text()
    base = text.split("\n" + MARKER)[0].rstrip("\n") + "\n"
    codes: dict[str, set[str]] = collections.defaultdict(set)
    first = None
    for _ in range(5):
        path.write_text(base + (section(codes, first or 0) if codes else ""))
        errors = run_mypy(mypy)
        if first is None:
            first = len(errors)
        if not errors:
            break
        for line in errors:
            m = re.match(r"(fuzzpy/\S+)\.py:\d+: error: .*\[([a-z-]+)\]$", line.strip())
            if m is None:
                sys.exit(f"mypy_baseline: not an error with a code: {line}")
            module = m.group(1).replace("/", ".").removesuffix(".__init__")
            codes[module].add(m.group(2))
    path.write_text(base + (section(codes, first or 0) if codes else ""))
    print(f"baseline: {first} errors in {len(codes)} modules")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
