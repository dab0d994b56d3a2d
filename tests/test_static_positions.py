"""Static parameters where a number is needed (issue 27, item 1 continued):
a `gauss` sigma, `sum`/`clip` bounds, a `loop` count, a `subsample` rate, an
epsilon under `subsample`, an epsilon that divides by a parameter. The cost
is then not one polynomial, so such a definition is checked at each call's
numbers only (DFuzz's instantiation of index variables, Gaboardi et al.
POPL 2013, with every side condition decided at the numbers) and its cost
reported in words; the generic pass checks its types.

Each case is a library written the way DFuzz/Duet/DiffMu examples write
them (the parameter first, the data last), called at numbers, against the
program written by hand with those numbers: same events, same released
values under a seed. All of these were FZ202 before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.report import text_report
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.pipeline import run
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.values import Record

ROOT = Path(__file__).resolve().parent.parent
HEAD = "type Trip = { km : num, fare : num, zone : int };\n"

# (library, call with numbers, the call's body written by hand)
CASES = {
    "gaussian sigma (Duet's gauss[sigma])": (
        "def lib (sigma : num) (t : bag Trip) : fuzzy num = gauss[sigma] (sum[0, 50] (map (fun r -> r.km) t));",
        "lib 40 t",
        "gauss[40] (sum[0, 50] (map (fun r -> r.km) t))",
    ),
    "clamp bounds and an epsilon over them (DFuzz's clipped sum)": (
        "def lib (eps : num) (hi : num) (t : bag Trip) : fuzzy num = laplace[eps / hi] (sum[0, hi] (map (fun r -> r.fare) t));",
        "lib 0.5 30 t",
        "laplace[0.5 / 30] (sum[0, 30] (map (fun r -> r.fare) t))",
    ),
    "clip bounds": (
        "def lib (lo : num) (hi : num) (t : bag Trip) : fuzzy num = laplace[0.2] (sum[0, 1] (map (fun r -> clip[lo, hi] (r.km / 100)) t));",
        "lib 0.25 0.75 t",
        "laplace[0.2] (sum[0, 1] (map (fun r -> clip[0.25, 0.75] (r.km / 100)) t))",
    ),
    "loop count (DiffMu's for-loop over k rounds)": (
        "def lib (k : int) (eps : num) (t : bag Trip) : fuzzy num = loop[k] 0 (fun s -> laplace[eps] (size t));",
        "lib 4 0.1 t",
        "loop[4] 0 (fun s -> laplace[0.1] (size t))",
    ),
    "subsampling rate": (
        "def lib (q : num) (t : bag Trip) : fuzzy num = subsample[q] (fun b -> laplace[1] (size b)) t;",
        "lib 0.25 t",
        "subsample[0.25] (fun b -> laplace[1] (size b)) t",
    ),
    "an epsilon under subsample": (
        "def lib (eps : num) (t : bag Trip) : fuzzy num = subsample[0.1] (fun b -> laplace[eps] (size b)) t;",
        "lib 0.8 t",
        "subsample[0.1] (fun b -> laplace[0.8] (size b)) t",
    ),
    "a library calling a library at its own parameter": (
        "def inner (sigma : num) (t : bag Trip) : fuzzy num = gauss[sigma] (size t);\n"
        "def lib (s : num) (t : bag Trip) : fuzzy num = inner (3 * s) t;",
        "lib 7 t",
        "gauss[21] (size t)",
    ),
}


def checked(text: str):
    return check_program(parse_program(HEAD + text, "<static positions>"))


def trips(n: int) -> Bag:
    return Bag(Record({"km": np.linspace(0, 80, n), "fare": np.linspace(2, 45, n), "zone": np.arange(n, dtype=np.int64) % 4}))


@pytest.mark.parametrize("case", list(CASES))
def test_call_costs_and_releases_what_the_hand_written_program_does(case: str) -> None:
    library, call, body = CASES[case]
    symbolic = checked(f"{library}\ndef main (t : bag Trip) : fuzzy num = {call};")
    hand = checked(f"def main (t : bag Trip) : fuzzy num = {body};")
    assert symbolic.definitions["main"].privacy == hand.definitions["main"].privacy
    for seed in (1, 2):
        assert run(symbolic, "main", {"t": trips(30)}, seed=seed) == run(hand, "main", {"t": trips(30)}, seed=seed)
    lib = symbolic.definitions["lib"]
    if case.startswith("loop count"):  # a pure body: its cost k * eps (tests/test_symbolic_rounds.py)
        assert not lib.deferred and str(lib.symbolic_privacy["t"]) == "eps * k"
        return
    assert lib.deferred and all(cost is None for cost in lib.symbolic_privacy.values())
    assert "cost checked at each call's numbers" in text_report(symbolic, None)


def test_each_call_is_listed_with_its_own_cost() -> None:
    prog = checked(CASES["loop count (DiffMu's for-loop over k rounds)"][0] + "\n"
                   "def main (t : bag Trip) : fuzzy (num, num) = { sample a = lib 2 0.1 t; sample b = lib 5 0.1 t; return (a, b) };")
    text = text_report(prog, None)
    assert "at k = 2, eps = 0.1: 0.2-DP in t" in text and "at k = 5, eps = 0.1: 0.5-DP in t" in text
    assert "main : (t :[0.7] bag Trip)" in text


def codes(text: str) -> list[str]:
    with pytest.raises(FuzzError) as info:
        checked(text)
    return [d.code for d in info.value.diagnostics]


def test_a_scale_from_the_data_is_refused() -> None:
    lib = CASES["gaussian sigma (Duet's gauss[sigma])"][0]
    assert codes(f"{lib}\ndef main (t : bag Trip) : fuzzy num = lib (size t) t;") == ["FZ202"]


def test_a_local_name_in_a_count_is_refused() -> None:
    assert "FZ202" in codes("def f (t : bag Trip) : fuzzy num = { let k = 3; loop[k] 0 (fun s -> laplace[1] (size t)) };")


def test_side_conditions_are_decided_at_each_calls_numbers() -> None:
    loop_lib = "def lib (k : int) (t : bag Trip) : fuzzy num = loop[k] 0 (fun s -> laplace[0.1] (size t));"
    assert codes(f"{loop_lib}\ndef main (t : bag Trip) : fuzzy num = lib 2.5 t;") == ["FZ202"]  # not a count
    rate = "def lib (q : num) (t : bag Trip) : fuzzy num = subsample[q] (fun b -> laplace[1] (size b)) t;"
    assert codes(f"{rate}\ndef main (t : bag Trip) : fuzzy num = lib 1.5 t;") == ["FZ202"]  # not a probability
    shifted = "def lib (sigma : num) (t : bag Trip) : fuzzy num = gauss[sigma - 2] (size t);"
    assert codes(f"{shifted}\ndef main (t : bag Trip) : fuzzy num = lib 2 t;") == ["FZ202"]  # sigma 0
    checked(f"{shifted}\ndef main (t : bag Trip) : fuzzy num = lib 3 t;")  # sigma 1: fine


def test_a_refusal_at_a_call_points_into_the_definition() -> None:
    loop_lib = "def lib (k : int) (t : bag Trip) : fuzzy num = loop[k] 0 (fun s -> laplace[0.1] (size t));"
    with pytest.raises(FuzzError) as info:
        checked(f"{loop_lib}\ndef main (t : bag Trip) : fuzzy num = lib 2.5 t;")
    (diag,) = info.value.diagnostics
    assert diag.span.line == 3 and "at k = 2.5" in diag.message
    assert any(label.span.line == 2 for label in diag.labels)


def test_cli_run_at_arguments_equals_the_hand_written_run(tmp_path: Path) -> None:
    lib = tmp_path / "lib.fz"
    lib.write_text(HEAD + "def f (sigma : num) (k : int) (t : bag Trip) : fuzzy num = loop[k] 0 (fun s -> gauss[sigma] (size t));\n")
    hand = tmp_path / "hand.fz"
    hand.write_text(HEAD + "def f (t : bag Trip) : fuzzy num = loop[3] 0 (fun s -> gauss[25] (size t));\n")
    data = tmp_path / "trips.csv"
    data.write_text("km,fare,zone\n3,10,1\n12,30,2\n7,9,1\n")

    def fuzzpy(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fuzzpy", *args], capture_output=True, text=True, cwd=ROOT, check=False)

    common = ["--data", f"t={data}", "--budget", "5,1e-5", "--seed", "4", "--json"]
    got = fuzzpy("run", str(lib), "f", "--arg", "sigma=25", "--arg", "k=3", "--ledger", str(tmp_path / "a.db"), *common)
    want = fuzzpy("run", str(hand), "f", "--ledger", str(tmp_path / "b.db"), *common)
    assert got.returncode == 0, got.stdout + got.stderr
    doc, ref = json.loads(got.stdout), json.loads(want.stdout)
    assert doc["released"] == ref["released"] and doc["charged"] == ref["charged"]
    refused = fuzzpy("run", str(lib), "f", "--arg", "sigma=25", "--arg", "k=0.5", "--ledger", str(tmp_path / "c.db"), *common)
    assert refused.returncode != 0
