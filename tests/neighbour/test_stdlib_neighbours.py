"""The standard library's labelled mechanisms on neighbouring datasets
(issue 31 item 4): report-noisy-max and above-threshold imported from
`std`, run seeded on the adversarial catalogue in process and through
`fuzzpy run` (the harness's `via_cli`), and through `python -m fuzzpy run` on
two neighbouring files, where the label frequencies must stay within the
claimed e^eps of each other."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from .harness import Case, examine
from .runner import Outcome, isolated

ROOT = Path(__file__).resolve().parents[2]

SOURCE = """import std.noisy_max (noisy_max_label, noisy_max_exp_label);
import std.sparse_vector (above_threshold, first_above_label);

type Row = { region : string, a : num };

let regions = ["north", "south", "east"];

def per_region (db : bag Row) : vec[inf] num =
  tabulate regions (fun c -> size (filter (fun r -> r.region == c) db));

def busiest (db : bag Row) : fuzzy string = noisy_max_label regions (per_region db) 0.5;

def busiest_exp (db : bag Row) : fuzzy string = noisy_max_exp_label regions (per_region db) 0.5;

def first_index (db : bag Row) : fuzzy int = above_threshold (per_region db) 2 0.5;

def first_label (db : bag Row) : fuzzy string = first_above_label regions (per_region db) 2 0.5;
"""


def test_library_labels_keep_their_claims_on_adversarial_neighbours() -> None:
    case = Case("stdlib_labels", SOURCE, expect="accepted", sizes=(0, 3), via_cli=True, seeds=(1, 2),
                fill={"region": "north"}, extra={"region": "south"}, seconds=600.0)
    report = isolated(lambda: examine(case), case.seconds)
    if isinstance(report, Outcome):
        pytest.fail(f"examining it {report.describe()}")
    assert report.checked, report.rejection
    assert report.pairs_run > 0
    assert report.violations == [], "\n".join(report.violations)


def _csv(path: Path, south: int) -> Path:
    rows = ["region,a"] + ["north,1"] * 3 + ["south,1"] * south + ["east,1"] * 2
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.slow  # tens of seconds (the default suite's budget)
@pytest.mark.parametrize("definition", ["busiest", "first_label"])
def test_python_m_fuzzpy_run_seeded_on_two_neighbouring_files(tmp_path: Path, definition: str) -> None:
    """The same seeds on D and on D' (one more "south" row): every run
    releases a label of the list, charged 0.5; the label counts over the
    seeds differ by no more than e^0.5 allows, with a generous margin for
    so few runs (a net for gross leaks, not a proof)."""
    program = tmp_path / "labels.fz"
    program.write_text(SOURCE)
    smaller, larger = _csv(tmp_path / "d.csv", 3), _csv(tmp_path / "d1.csv", 4)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FUZZPY_CACHE": str(tmp_path / "cache")}
    script = (
        "import io, json, sys\nfrom contextlib import redirect_stdout\nfrom fuzzpy.cli import main\n"
        "out = []\n"
        "for seed in range(int(sys.argv[4])):\n"
        "    buf = io.StringIO()\n"
        "    with redirect_stdout(buf):\n"
        "        code = main(['run', sys.argv[1], sys.argv[2], '--data', 'db=' + sys.argv[3], '--budget', '1e9',\n"
        "                     '--ledger', sys.argv[5], '--seed', str(seed), '--json'])\n"
        "    doc = json.loads(buf.getvalue()) if code == 0 else {}\n"
        "    out.append([code, doc.get('released'), doc.get('charged', {}).get('epsilon')])\n"
        "print(json.dumps(out))\n"
    )
    runs = 200
    counts = []
    for data in (smaller, larger):
        # one real `python -m fuzzpy run` first, then the seeds in one process (the same `main`)
        single = subprocess.run([sys.executable, "-m", "fuzzpy", "run", str(program), definition, "--data",
                                 f"db={data}", "--budget", "1e9", "--ledger", str(tmp_path / "one.sqlite"),
                                 "--seed", "7", "--json"], env=env, capture_output=True, text=True, timeout=300)
        assert single.returncode == 0, single.stderr
        assert json.loads(single.stdout)["released"] in ("north", "south", "east", "")
        done = subprocess.run([sys.executable, "-c", script, str(program), definition, str(data), str(runs),
                               str(tmp_path / f"{data.stem}.sqlite")], env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout.splitlines()[-1])
        assert all(code == 0 and charged == 0.5 for code, _, charged in results)
        assert {label for _, label, _ in results} <= {"north", "south", "east", ""}
        counts.append(Counter(label for _, label, _ in results))
    bound = math.exp(0.5)
    for label in set(counts[0]) | set(counts[1]):
        a, b = counts[0][label], counts[1][label]
        if max(a, b) >= 40:  # enough runs for the ratio to mean something
            assert max(a, b) <= 1.6 * bound * max(min(a, b), 1), (label, a, b)
