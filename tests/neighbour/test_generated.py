"""Generated programs on generated neighbour pairs (hypothesis).

Every example is one program (a deterministic query `q` and a release `m`
built on it, see `programs.py`) and a few neighbour pairs of adversarial
rows; both definitions run on every pair with one seed. Violations are
collected over the whole run rather than stopping at the first, so that
the failure message lists every class found, each with the shortest
program that showed it.

The number of examples: NEIGHBOUR_EXAMPLES (environment) for long local
runs, e.g. `NEIGHBOUR_EXAMPLES=20000 python -m pytest tests/neighbour -k generated`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .harness import Tally, examine_generated
from .programs import SCHEMA, neighbour_pairs, programs

EXAMPLES = int(os.environ.get("NEIGHBOUR_EXAMPLES", "400"))
PAIRS_PER_PROGRAM = 3
#: Each example runs 2 definitions on PAIRS_PER_PROGRAM pairs; at least this many must run.
MIN_PAIRS = 2000


def run_generated(examples: int, folder: Path) -> Tally:
    tally = Tally()

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(), st.lists(neighbour_pairs(), min_size=PAIRS_PER_PROGRAM, max_size=PAIRS_PER_PROGRAM),
           st.integers(0, 2**32))
    def one(program, pairs, seed):  # type: ignore[no-untyped-def]
        examine_generated(program.source, program.models, pairs, SCHEMA, seed, folder, tally)

    one()
    return tally


def test_generated_programs_keep_their_claims() -> None:
    with tempfile.TemporaryDirectory(prefix="neighbour-") as tmp:
        tally = run_generated(EXAMPLES, Path(tmp))
    print(tally.summary())
    assert tally.pairs >= min(MIN_PAIRS, EXAMPLES * PAIRS_PER_PROGRAM), tally.summary()
    assert sum(tally.rejected.values()) <= tally.programs // 4, tally.summary()
    assert not tally.violations, tally.summary()
