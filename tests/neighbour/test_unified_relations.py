"""One neighbour relation per dataset, local reports included (issue 28,
items 1 and 3 unified): a release of local reports IS a replace-one release.

Written from the outside: an events-level check of the conversion, then the
CLI on a small hand-written file (not the telemetry example the local tests
use), with a ledger per scenario.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.accounting.events import Group, Laplace, LocalReports, Repeat, ShuffledReports
from fuzzpy.accounting.neighbours import (
    REPLACE_ONE,
    LocalNeedsReplaceOne,
    relation_of_release,
    resolve,
)

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
type Visit = { sick : bool, ward : int };
def tally (rows : bag Visit) : fuzzy num = laplace[0.5] (size rows);
def answers (rows : bag Visit) : fuzzy (bag bool) = local (fun v -> rr[0.75] v.sick) rows;
def both (rows : bag Visit) : fuzzy num = {
  sample a = local (fun v -> rr[0.75] v.sick) rows; sample t = laplace[0.5] (size rows); return t
};
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuzzpy", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    program = tmp_path / "visits.fz"
    program.write_text(PROGRAM, encoding="utf-8")
    data = tmp_path / "visits.csv"
    data.write_text("sick,ward\n" + "".join(f"{'true' if i % 3 == 0 else 'false'},{i % 4}\n" for i in range(40)),
                    encoding="utf-8")
    return program, data


# ------------------------------------------------------------ the conversion


def test_local_reports_have_no_add_remove_cost() -> None:
    with pytest.raises(LocalNeedsReplaceOne):
        resolve((Repeat(2, (LocalReports(Fraction(1)),)),))
    assert relation_of_release((ShuffledReports(Fraction(1), 100),), None) == REPLACE_ONE
    assert relation_of_release((Laplace(Fraction(1), Fraction(2)),), None) is None


def test_a_person_of_k_rows_replaced_costs_k_reports_not_2k() -> None:
    # Dwork & Roth Thm 2.2 over K replace-one steps: K reports, each eps
    grouped = (Group(Fraction(3), (LocalReports(Fraction(1, 2)), Laplace(Fraction(1), Fraction(1)))),)
    (out,) = resolve(grouped, REPLACE_ONE)
    assert isinstance(out, Group) and out.size == 3
    assert out.body == (LocalReports(Fraction(1, 2)), Laplace(Fraction(2), Fraction(1)))


# ------------------------------------------------------------ check and run


def test_check_reports_local_definitions_for_replace_one_and_groups_them_per_replacement(files: tuple[Path, Path]) -> None:
    program, _ = files
    doc = json.loads(_cli("check", str(program), "--json", "--group", "2").stdout)
    figures = {d["name"]: d["privacy"]["rows"] for d in doc["definitions"] if d.get("privacy")}
    assert figures["answers"]["epsilon"] == 1.5 and figures["answers"]["neighbours"] == "replace-one"
    # 2 people-rows: the reports 2 x 0.75; the size of the bag, shared by replace-one
    # neighbours, costs nothing (it was 4 add/remove steps of 0.5 by group privacy)
    assert figures["both"]["epsilon"] == 1.5
    assert figures["tally"]["epsilon"] == 1.0 and "neighbours" not in figures["tally"]


def test_a_replace_one_dataset_holds_local_and_central_releases(files: tuple[Path, Path], tmp_path: Path) -> None:
    program, data = files
    ledger = str(tmp_path / "l.sqlite")
    # local reports need rows no rule drops (FZ556): the owner registers with --missing refuse
    registered = _cli("dataset", "register", "visits", str(data), "--budget", "10", "--neighbours", "replace-one",
                      "--missing", "refuse", "--ledger", ledger)
    assert registered.returncode == 0, registered.stderr
    # the size of the bag is public under replace-one: `tally` and the count in `both` cost 0
    for definition, epsilon in (("answers", 0.75), ("tally", 0.0), ("both", 0.75)):
        done = _cli("run", str(program), definition, "--data", "rows=visits", "--ledger", ledger, "--json")
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert doc["neighbours"] == "replace-one" and doc["charged"]["epsilon"] == epsilon


def test_an_add_remove_dataset_refuses_local_reports_with_one_code(files: tuple[Path, Path], tmp_path: Path) -> None:
    program, data = files
    ledger = str(tmp_path / "l.sqlite")
    assert _cli("dataset", "register", "visits", str(data), "--budget", "10", "--neighbours", "add-remove-one",
                "--ledger", ledger).returncode == 0
    for definition in ("answers", "both"):
        refused = _cli("run", str(program), definition, "--data", "rows=visits", "--ledger", ledger)
        assert refused.returncode == 3 and "FZ605" in refused.stderr and "FZ603" not in refused.stderr
        assert "--neighbours replace-one" in refused.stderr
    assert _cli("run", str(program), "tally", "--data", "rows=visits", "--ledger", ledger).returncode == 0


def test_rows_per_person_on_a_replace_one_dataset(files: tuple[Path, Path], tmp_path: Path) -> None:
    program, data = files
    ledger = str(tmp_path / "l.sqlite")
    assert _cli("dataset", "register", "visits", str(data), "--budget", "10", "--neighbours", "replace-one",
                "--rows-per-person", "3", "--missing", "refuse", "--ledger", ledger).returncode == 0
    done = _cli("run", str(program), "answers", "--data", "rows=visits", "--ledger", ledger, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["charged"]["epsilon"] == 2.25  # 3 reports replaced, 0.75 each


def test_the_shuffle_figure_names_fmt_2021() -> None:
    doc = json.loads(_cli("check", "examples/telemetry_survey.fz", "--json").stdout)
    methods = {d["name"]: d["privacy"]["db"]["method"] for d in doc["definitions"] if d.get("privacy")}
    assert methods["shuffled_crashes"] == "fmt2021"
    assert "kov" not in methods["browser_counts"] or methods["browser_counts"].startswith("fmt2021")


def test_budget_accounts_randomized_response_reports_for_replace_one() -> None:
    done = _cli("budget", "--rr", "0.5", "--rounds", "4", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["neighbours"] == "replace-one" and doc["tightest"]["epsilon"] == 2.0  # 4 reports, 0.5 each
    shuffled = json.loads(_cli("budget", "--rr", "2", "--shuffle", "10000", "--delta", "1e-6", "--json").stdout)
    assert shuffled["tightest"]["epsilon"] < 0.2  # amplified far below eps0 = 2
    refused = _cli("budget", "--rr", "1", "--neighbours", "add-remove-one")
    assert refused.returncode == 2 and "replace-one" in refused.stderr
