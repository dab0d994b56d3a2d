"""Review s30a of issue 28: the relation every figure is for, zCDP group
privacy over sampled bodies, and central randomized response in a group.

Written from the reviewer's reproductions (its scripts in review-s30a):
* a release of local or shuffled reports has no finite cost for add/remove
  neighbours (the count of reports is n), so whatever relation is asked its
  figure is a replace-one figure, and every surface must say so;
* rho-zCDP for neighbours is k^2 rho-zCDP for inputs k steps apart (Bun &
  Steinke 2016, Prop. 1.9): a person's group over a subsampled or sampled
  Gaussian has a zCDP charge;
* randomized response on the whole released bit is eps-DP for any two
  inputs (Warner 1965), so a group costs it nothing more.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.accounting.accountant import rho, zcdp_guarantee
from fuzzpy.accounting.events import Gaussian, Group, Laplace, RandomizedResponse, Repeat, Subsample
from fuzzpy.cli import main

ROOT = Path(__file__).resolve().parent.parent
SURVEY = str(ROOT / "examples" / "telemetry_survey.fz")


LOCAL = """
type D = { crashed : bool };
def crash_count (db : bag D) : fuzzy num = {
  sample reports = local (fun d -> rr[2] d.crashed) db;
  return (rr_estimate[2] reports)
};
"""
SHUFFLED = LOCAL + "def shuffled_crashes (db : bag D) : fuzzy (bag bool) = shuffle[1000] (fun d -> rr[2] d.crashed) db;\n"


@pytest.mark.parametrize("group", [1, 2])
def test_the_api_labels_local_figures_replace_one_whatever_is_asked(group: int) -> None:
    cost = fuzzpy.loads(LOCAL).check(group=group)["crash_count"].costs["db"]
    assert cost.neighbours == "replace-one", cost.neighbours
    assert "add/remove" not in str(cost)


@pytest.mark.slow
@pytest.mark.parametrize("group", [1, 2])
def test_the_api_labels_shuffled_figures_replace_one(group: int) -> None:
    cost = fuzzpy.loads(SHUFFLED).check(group=group)["shuffled_crashes"].costs["db"]
    assert cost.neighbours == "replace-one", cost.neighbours
    assert "add/remove" not in str(cost)


def test_budget_marks_local_figures_as_replace_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["budget", SURVEY]) == 0
    text = capsys.readouterr().out
    lines = {line.split()[0]: line for line in text.splitlines() if line and not line.startswith(" ")}
    assert "replace-one; 2-LDP per person" in lines["crash_count"]
    assert "replace-one" in lines["shuffled_crashes"]
    assert "replacing one row" in text or "replace-one (local reports)" in text
    assert main(["budget", SURVEY, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    found = {d["name"]: d["privacy"]["db"] for d in doc["definitions"]}
    assert found["crash_count"]["neighbours"] == "replace-one"
    assert found["shuffled_crashes"]["local_epsilon"] == 2.0


def test_a_persons_group_over_a_sampled_gaussian_has_a_zcdp_charge() -> None:
    body = (Gaussian(Fraction(1), Fraction(2)),)  # rho = 1/8
    sub = Subsample(Fraction(1, 10), body, direct=True)
    for events in ((Group(Fraction(3), (sub,), rows=True),),
                   (Group(Fraction(3), (Subsample(Fraction(1, 10), body, replace=True),), rows=True),)):
        found = rho(events)
        assert found is not None
        assert found <= 9 * rho((events[0].body[0],))  # type: ignore[union-attr,operator]
        assert zcdp_guarantee(events, Fraction(1, 10**6)) is not None
    # a group over 2.5 steps is a group over 3 (the distance is at most 3 steps)
    assert rho((Group(Fraction(5, 2), body),)) <= Fraction(9, 8)


def test_central_randomized_response_costs_eps_for_any_group() -> None:
    src = ("type R = { x : num };\n"
           "def rc (db : bag R) : fuzzy bool = rr[1] (size db > 100);\n"
           "def both (db : bag R) : fuzzy (bool, num) = {\n"
           "  sample b = rr[1] (size db > 100);\n"
           "  sample c = laplace[1] (size db);\n"
           "  return (b, c)\n"
           "};\n")
    for neighbours in ("add-remove-one", "replace-one"):
        report = fuzzpy.loads(src).check(group=3, neighbours=neighbours)
        assert report["rc"].costs["db"].epsilon == 1
    # the Laplace count is grouped (3 steps), the response is not: 1 + 3
    assert fuzzpy.loads(src).check(group=3)["both"].costs["db"].epsilon == 4
    events = (Repeat(2, (RandomizedResponse(Fraction(1), 2), Laplace(Fraction(1), Fraction(1)))),)
    from fuzzpy.accounting.events import person_group

    split = person_group(3, events)
    assert Repeat(2, (RandomizedResponse(Fraction(1), 2),)) in split
    assert any(isinstance(e, Group) and e.size == 3 for e in split)


@pytest.mark.slow
def test_ledger_audit_states_the_ledgers_own_relation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "".join(f"{i % 7}\n" for i in range(30)), encoding="utf-8")
    program = tmp_path / "p.fz"
    program.write_text("type R = { x : num };\ndef n (db : bag R) : fuzzy num = laplace[1] (size db);\n",
                       encoding="utf-8")
    ledger = str(tmp_path / "l.sqlite")
    assert main(["dataset", "register", "d", str(data), "--budget", "10", "--neighbours", "replace-one",
                 "--missing", "refuse", "--ledger", ledger]) == 0
    assert main(["run", str(program), "n", "--data", "db=d", "--ledger", ledger, "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["ledger", "--ledger", ledger, "--audit"]) == 0
    text = capsys.readouterr().out
    assert "replacing one row" in text and "adding or removing" not in text
    assert main(["ledger", "--ledger", ledger, "--audit", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["neighbours"] == "replace-one"
    assert all(r["neighbours"] == "replace-one" for r in doc["releases"])


BOOT = """
type R = { x : num, g : bool };
def lsize (db : bag R) : fuzzy num = bootstrap[10] (fun b -> laplace[1] (size b)) db;
def lcount (db : bag R) : fuzzy num = bootstrap[10] (fun b -> laplace[1] (size (filter (fun r -> r.g) b))) db;
"""


@pytest.mark.slow
def test_bootstrap_under_replace_one_uses_the_querys_replace_move() -> None:
    """m = 10 draws from n = 100 public rows: the sample's size never moves
    (0); a filtered count moves by at most j when the replaced row is drawn j
    times, so the pure bound is log(1 + eta (e^{m eps} - 1)), eta = 1 - 0.99^10,
    never above the unamplified m eps = 10 (it was 17.65 for both)."""
    import math

    report = fuzzpy.loads(BOOT).check(neighbours="replace-one", rows=100)
    assert report["lsize"].costs["db"].epsilon == 0
    eta = 1 - 0.99**10
    found = float(report["lcount"].costs["db"].epsilon)
    assert found <= 10
    assert abs(found - math.log1p(eta * math.expm1(10))) < 1e-4


def test_budget_shuffle_needs_two_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["budget", "--rr", "1", "--shuffle", "1"]) == 2
    assert "2..10^7" in capsys.readouterr().err


def test_a_shuffle_no_better_than_its_reports_is_printed_pure() -> None:
    src = "type D = { c : bool };\ndef s2 (db : bag D) : fuzzy (bag bool) = shuffle[2] (fun d -> rr[3] d.c) db;\n"
    cost = fuzzpy.loads(src).check()["s2"].costs["db"]
    assert (cost.epsilon, cost.delta) == (3, 0)


def test_pure_brackets_show_the_groups_cost_as_gaussian_ones_do() -> None:
    src = "type D = { c : bool };\ndef l (db : bag D) : fuzzy num = laplace[0.5] (size db);\n"
    assert "(db :[1.5] bag D)" in fuzzpy.loads(src).check(group=3).text


@pytest.mark.slow
def test_run_ledger_and_dataset_show_print_rows_per_person(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "".join(f"{i % 5}\n" for i in range(20)), encoding="utf-8")
    program = tmp_path / "p.fz"
    program.write_text("type R = { x : num };\ndef n (db : bag R) : fuzzy num = laplace[1] (size db);\n",
                       encoding="utf-8")
    ledger = str(tmp_path / "l.sqlite")
    assert main(["dataset", "register", "d", str(data), "--budget", "10", "--rows-per-person", "2",
                 "--ledger", ledger]) == 0
    capsys.readouterr()
    assert main(["run", str(program), "n", "--data", "db=d", "--ledger", ledger, "--seed", "1"]) == 0
    assert "up to 2 rows per person" in capsys.readouterr().out
    assert main(["ledger", "--ledger", ledger]) == 0
    assert "up to 2 rows per person" in capsys.readouterr().out
    assert main(["dataset", "show", "d", "--ledger", ledger]) == 0
    assert "up to 2 rows per person" in capsys.readouterr().out


def test_a_zcdp_definition_of_local_reports_is_a_replace_one_figure() -> None:
    """It was an internal error (FZ799: the add/remove restatement refused the reports)."""
    src = ("type D = { c : bool };\n"
           "def z (db : bag D) : fuzzy (bag bool) privacy zcdp[1e-6] = local (fun d -> rr[1] d.c) db;\n")
    cost = fuzzpy.loads(src).check()["z"].costs["db"]
    assert cost.neighbours == "replace-one" and cost.rho is not None
    assert "replace-one; 1-LDP per person" in str(cost)
