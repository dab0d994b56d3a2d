"""What importing the standard library costs a `fuzzpy check` (issue 31 item 4).

`python bench/stdlib_import.py [ROUNDS]` times, in fresh processes,
`fuzzpy check examples/region_library.fz` (three library mechanisms, six
library definitions) with an empty proof cache (every mechanism proved) and
with the cache the first run filled (proofs read), interleaved round by round
so that the machine's load falls on both alike; and, for scale, the same
check of examples/noisy_count.fz (no import). Prints the medians.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _check(program: Path, cache: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FUZZPY_CACHE": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fuzzpy", "check", str(program)], env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr.decode())
    return elapsed


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    library = ROOT / "examples" / "region_library.fz"
    plain = ROOT / "examples" / "noisy_count.fz"
    cold, warm, base = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            fresh = Path(tmp) / f"cold{i}"
            cold.append(_check(library, fresh))  # proves, and fills `fresh`
            warm.append(_check(library, fresh))  # reads the proofs
            base.append(_check(plain, fresh))
            shutil.rmtree(fresh, ignore_errors=True)
    print(f"check region_library.fz, empty proof cache : {statistics.median(cold):6.2f} s (median of {rounds})")
    print(f"check region_library.fz, proofs cached     : {statistics.median(warm):6.2f} s")
    print(f"check noisy_count.fz (no import)           : {statistics.median(base):6.2f} s")


if __name__ == "__main__":
    main()
