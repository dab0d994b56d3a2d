"""Public lists as mechanism parameters (issue 29, item 7): per-query
thresholds as Lyu, Su & Li print SVT, proved; a broken variant refuted with
the same thresholds in both runs; a `def` may pass only a data-free list."""

from __future__ import annotations

import pytest

import fuzzpy
from fuzzpy.api.errors import Rejected
from fuzzpy.cli import main

# AboveThreshold with a threshold per query, written 0-indexed with a `for`-like
# counter counting down, so the proof does not lean on the example's shape
PER_QUERY = """
mechanism first_over (scores : vec[inf] num, cut : list num, budget : num) : int
  requires budget > 0 && len(cut) == len(scores)
  privacy budget
{
  var noisy_cut = lap(2 / budget);
  var left = len(scores);
  var hit = -1;
  while (left > 0 && hit < 0) {
    var j = len(scores) - left;
    if (scores[j] + lap(4 / budget) >= cut[j] + noisy_cut) { hit = j; }
    left = left - 1;
  }
  return hit;
}
"""

# the same without noise on the cut: releases which score first passes its
# own cut exactly, not private for any budget
NO_CUT_NOISE = PER_QUERY.replace("cut[j] + noisy_cut", "cut[j]").replace("first_over", "first_over_bare")

CALLS = """
type Row = { score : num, group : int };
def per_group (db : bag Row) : fuzzy int =
  first_over (tabulate [0, 1, 2] (fun g -> size (filter (fun r -> r.group == g) db))) [5, 50, 500] 0.5;
"""


@pytest.mark.slow  # each proves the mechanism (seconds)
def test_a_public_list_of_thresholds_is_proved() -> None:
    (result,) = fuzzpy.loads(PER_QUERY).verify(fresh=True)
    assert result.status == "proved"


@pytest.mark.slow  # each proves the mechanism (seconds)
def test_the_broken_variant_is_refuted_with_the_same_thresholds_in_both_runs() -> None:
    (result,) = fuzzpy.loads(NO_CUT_NOISE).verify(fresh=True)
    assert result.status == "refuted"
    cx = result.verdict.counterexample
    assert cx.inputs["cut"] == cx.neighbour["cut"]
    assert cx.log_ratio > float(cx.eps)


@pytest.mark.slow  # each proves the mechanism (seconds)
def test_a_definition_passes_a_literal_list_and_is_charged_the_claim() -> None:
    report = fuzzpy.loads(PER_QUERY + CALLS).check()
    assert report.ok
    assert "0.5-DP in db" in report.text


@pytest.mark.slow  # each proves the mechanism (seconds)
def test_a_list_that_depends_on_the_data_is_refused() -> None:
    leaky = PER_QUERY + CALLS.replace("[5, 50, 500]", "[size db, 50, 500]")
    with pytest.raises(Rejected, match=r"FZ309.*public argument `cut` of `first_over` depends on `db`"):
        fuzzpy.loads(leaky).check()


@pytest.mark.slow  # each proves the mechanism (seconds)
def test_a_list_of_the_wrong_length_fails_the_precondition() -> None:
    short = PER_QUERY + CALLS.replace("[5, 50, 500]", "[5, 50]")
    with pytest.raises(Rejected, match=r"FZ309.*does not meet its precondition"):
        fuzzpy.loads(short).check()


def test_a_list_of_strings_is_not_a_mechanism_parameter(tmp_path, capsys) -> None:  # noqa: ANN001
    path = tmp_path / "labels.fz"
    path.write_text(PER_QUERY.replace("cut : list num", "cut : list string"))
    assert main(["verify", str(path)]) == 1  # a rejected program (README: exit codes)
    assert "public `list num`" in capsys.readouterr().err


def test_a_distance_bound_on_a_public_list_is_no_crash_at_the_call() -> None:
    # fifth review: `requires abs(dist(T[0])) <= 1` on a list crashed the call (StopIteration)
    text = ("mechanism first (T : list num, eps : num) : num\n  requires eps > 0\n  requires abs(dist(T[0])) <= 1\n"
            "  privacy eps\n{\n  return T[0];\n}\n"
            "type P = { age : num };\ndef f (db : bag P) : fuzzy num = first [size db] 1;\n")
    with pytest.raises(Rejected, match="FZ309"):
        fuzzpy.loads(text).check()
