"""`(n : nat)` parameters: static indices used as sizes and sensitivities
(DFuzz, Gaboardi et al. POPL 2013: `forall n : nat`, `[n * e]`). A `nat` is a
number at each call, read as one in arithmetic (`n * x` is n-sensitive), in
declared bounds (`(x :[n] num)`) and in counts (`group[n]`); the definition
is checked at each call's numbers. Before issue 27, `nat` was an unknown type
(FZ204)."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.report import text_report
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.pipeline import run
from fuzzpy.runtime.bag import Bag

ROOT = Path(__file__).resolve().parent.parent


def checked(text: str):
    return check_program(parse_program(text, "<nat>"))


def codes(text: str) -> list[str]:
    with pytest.raises(FuzzError) as info:
        checked(text)
    return [d.code for d in info.value.diagnostics]


# DFuzz's `scale : forall n. num -o[n] num`, used at two sizes
SCALE = "def scale (n : nat) (x : num) : num = n * x;\n"


@pytest.mark.parametrize("n", [1, 3, 17])
def test_a_size_is_a_sensitivity_and_is_reached(n: int) -> None:
    prog = checked(SCALE + f"def use (x : num) : num = scale {n} x;")
    (x,) = prog.definitions["use"].params
    assert x.sensitivity.value == n
    assert run(prog, "use", {"x": Fraction(5, 2) + 1}) - run(prog, "use", {"x": Fraction(5, 2)}) == n


def test_a_declared_index_bound_is_checked_at_each_call() -> None:
    lib = "def twice (n : nat) (x :[n * 2] num) : num = 2 * n * x;\n"
    checked(lib + "def use (x : num) : num = twice 4 x;")
    tight = "def over (n : nat) (x :[n] num) : num = 2 * n * x;\n"
    # refused at the definition, for every n (issue 27: an index term over n), and at the call
    assert codes(tight + "def use (x : num) : num = over 4 x;") == ["FZ305", "FZ305"]


def test_dfuzz_histogram_over_n_buckets() -> None:
    lib = ("def hist (n : nat) (db : bag num) : fuzzy (vec[1] num) =\n"
           "  laplace[0.5] (counts (group[n] (fun r -> floor (clip[0, n - 1] r)) db));\n")
    prog = checked(lib + "def h3 (db : bag num) : fuzzy (vec[1] num) = hist 3 db;\n"
                         "def h5 (db : bag num) : fuzzy (vec[1] num) = hist 5 db;")
    db = Bag(np.array([0.0, 1.0, 1.0, 2.0, 4.0]))
    assert len(run(prog, "h3", {"db": db}, seed=2)) == 3 and len(run(prog, "h5", {"db": db}, seed=2)) == 5
    text = text_report(prog, None)
    assert "(n : nat)" in text and "at n = 3: 0.5-DP in db" in text


def test_the_cost_at_a_call_is_the_hand_written_programs() -> None:
    lib = "def rep (n : nat) (eps : num) (db : bag num) : fuzzy num = laplace[eps] (n * sum[0, 1] db);\n"
    prog = checked(lib + "def main (db : bag num) : fuzzy num = rep 3 0.1 db;")
    hand = checked("def main (db : bag num) : fuzzy num = laplace[0.1] (3 * sum[0, 1] db);")
    assert prog.definitions["main"].privacy == hand.definitions["main"].privacy
    db = Bag(np.array([0.25, 0.5, 1.0]))
    assert run(prog, "main", {"db": db}, seed=9) == run(hand, "main", {"db": db}, seed=9)


def test_a_nat_is_a_positive_whole_number() -> None:
    assert codes(SCALE + "def use (x : num) : num = scale 2.5 x;") == ["FZ202"]
    assert codes(SCALE + "def use (x : num) : num = scale 0 x;") == ["FZ202"]


def test_a_nat_from_the_data_is_refused() -> None:
    assert codes(SCALE + "def use (db : bag num) (x : num) : num = scale (size db) x;") == ["FZ202"]


def test_run_takes_it_as_an_argument(tmp_path: Path) -> None:
    src = tmp_path / "n.fz"
    src.write_text("def noisy (n : nat) (db : bag num) : fuzzy num = laplace[0.5] (n * sum[0, 1] db);\n")
    data = tmp_path / "d.csv"
    data.write_text("v\n0.5\n1\n")

    def fuzzpy(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fuzzpy", *args], capture_output=True, text=True, cwd=ROOT, check=False)

    common = ["--data", f"db={data}", "--budget", "5", "--ledger", str(tmp_path / "l.db")]
    done = fuzzpy("run", str(src), "noisy", "--arg", "n=4", *common)
    assert done.returncode == 0 and "eps=2" in done.stdout, done.stdout + done.stderr
    assert fuzzpy("run", str(src), "noisy", "--arg", "n=1.5", *common).returncode != 0


def test_a_zero_from_a_parameter_is_refused_at_the_call() -> None:
    # the interpreter finds static zeros lexically (a parameter is data to it): it would evaluate
    # what the checker scaled by 0, which may fail on one dataset only (issue 9's rule)
    lib = "def f (n : nat) (db : bag num) : fuzzy num = laplace[1] ((n - 1) * size db);\n"
    assert codes(lib + "def g (db : bag num) : fuzzy num = f 1 db;") == ["FZ202"]
    prog = checked(lib + "def g (db : bag num) : fuzzy num = f 3 db;")
    assert not prog.zero_products  # the generic pass's placeholder zero is not recorded
    bounds = "def s (hi : num) (db : bag num) : fuzzy num = laplace[1] (sum[0, hi - 2] db);\n"
    assert codes(bounds + "def t (db : bag num) : fuzzy num = s 2 db;") == ["FZ202"]
    checked(bounds + "def t (db : bag num) : fuzzy num = s 3 db;")


def test_a_length_read_beside_a_parameterised_count_is_refused() -> None:
    # `run` reads `len`'s answer from the generic pass, where `group[n]` had the placeholder length
    assert codes("def h (n : nat) (db : bag num) : fuzzy num = laplace[1] (len (counts (group[n] (fun r -> 0) db)));") == ["FZ202"]


def test_division_by_a_parameter_is_checked_at_each_call() -> None:
    lib = "def f (n : nat) (x : num) : num = x / (n - 1);\n"
    prog = checked(lib + "def g (x : num) : num = f 3 x;")  # the placeholder's 0 is not a refusal
    assert prog.definitions["g"].params[0].sensitivity.value == Fraction(1, 2)
    assert codes(lib + "def g (x : num) : num = f 1 x;") == ["FZ202"]
