"""Shared pytest hooks: a private cache directory and default ledger for the run; the
literature suite's rates at the end of a run.

tests/test_mechanism_suite.py records each verdict as a user property (which
also travels from pytest-xdist workers); the rates are reported, never asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

# Every test run has its own cache directory (compiled grammar, proofs), so
# that no test reads what an earlier run, or the user, left there.
_CACHE = tempfile.mkdtemp(prefix="fuzzpy-test-cache-")
os.environ["FUZZPY_CACHE"] = _CACHE
# ... and its own default ledger: a test that names none never reads or
# writes the user's (whose format may be newer or older than this code's)
_DATA = tempfile.mkdtemp(prefix="fuzzpy-test-data-")
os.environ["XDG_DATA_HOME"] = _DATA
os.environ.pop("FUZZPY_LEDGER", None)


def pytest_unconfigure(config) -> None:
    shutil.rmtree(_CACHE, ignore_errors=True)
    shutil.rmtree(_DATA, ignore_errors=True)


def pytest_terminal_summary(terminalreporter) -> None:
    rows: dict[str, dict[str, str]] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "mechanism_suite":
                    row = json.loads(value)
                    rows[row["file"]] = row
    if not rows:
        return
    private = [r["verdict"] for r in rows.values() if r["truth"] == "private"]
    leaky = [r["verdict"] for r in rows.values() if r["truth"] != "private"]
    terminalreporter.write_sep("-", "mechanism suite (tests/mechanism_suite)")
    terminalreporter.write_line(
        f"{len(rows)} verified: private {len(private)} (proved {private.count('proved')}, "
        f"unknown {private.count('unknown')}, refuted {private.count('refuted')}); "
        f"not private {len(leaky)} (refuted {leaky.count('refuted')}, unknown {leaky.count('unknown')}, "
        f"proved {leaky.count('proved')})"
    )
