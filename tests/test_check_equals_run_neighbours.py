"""For a set of programs, the cost `check` prints is the charge `run` makes,
under each neighbour relation (review s28 item 4: reviewers saw `choose`
plus Laplace and two local reports of one person disagree under
replace-one). Both read the figure from `checker.report.privacy_figure` /
`accounting.accountant.charged_epsilon`; this pins that they stay one."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.cli import main

PROGRAM = """type Row = { score : int, flag : bool };

def sampled_plus_full (rows : bag Row) : fuzzy num = {
  sample part = choose[20] (fun b -> laplace[1] (size (filter (fun r -> r.flag) b))) rows;
  sample whole = laplace[1/2] (size (filter (fun r -> r.score > 5) rows));
  return part + whole
};

def two_reports (rows : bag Row) : fuzzy num = {
  sample first = local (fun r -> rr[1] r.flag) rows;
  sample second = local (fun r -> rr[1/2] (r.score > 5)) rows;
  return (rr_estimate[1] first) + (rr_estimate[1/2] second)
};

def one_person_two_answers (rows : bag Row) : fuzzy (bag (bool, bool)) =
  local (fun r -> {
    sample a = rr[1] r.flag;
    sample b = rr[1] (r.score > 3);
    return (a, b)
  }) rows;

def plain (rows : bag Row) : fuzzy num = laplace[1] (size rows);
"""
N = 200
DEFS = ["sampled_plus_full", "two_reports", "one_person_two_answers", "plain"]
# local reports are private for replace-one only: `run` refuses them under add-remove (FZ605), and
# `check` labels their figure "replace-one"
PRIVATE_FOR_BOTH = ["sampled_plus_full", "plain"]
RELATIONS = {"add-remove-one": [], "replace-one": ["--rows", str(N)]}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agree")
    (root / "p.fz").write_text(PROGRAM)
    (root / "rows.csv").write_text("score,flag\n" + "".join(f"{i % 11},{'true' if i % 3 else 'false'}\n"
                                                           for i in range(N)))
    return root


def _checked(capsys: pytest.CaptureFixture[str], root: Path, relation: str) -> dict[str, Fraction]:
    code = main(["check", "--json", "--neighbours", relation, *RELATIONS[relation], str(root / "p.fz")])
    out = capsys.readouterr().out
    assert code == 0, out
    return {d["name"]: Fraction(str(d["privacy"]["rows"]["epsilon"])) for d in json.loads(out)["definitions"]}


def _charged(capsys: pytest.CaptureFixture[str], root: Path, relation: str, name: str) -> Fraction:
    ledger = root / f"{relation}-{name}.sqlite"
    code = main(["dataset", "register", "table", str(root / "rows.csv"), "--ledger", str(ledger),
                 "--budget", "50", "--neighbours", relation, "--missing", "refuse"])
    assert code == 0, capsys.readouterr().out
    capsys.readouterr()
    code = main(["run", str(root / "p.fz"), name, "--data", "rows=table", "--ledger", str(ledger),
                 "--neighbours", relation, *RELATIONS[relation], "--seed", "2", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return Fraction(str(json.loads(out)["charged"]["epsilon"]))


@pytest.mark.slow  # a run per definition
@pytest.mark.parametrize("relation", sorted(RELATIONS))
def test_check_prints_what_run_charges(setup: Path, capsys: pytest.CaptureFixture[str], relation: str) -> None:
    checked = _checked(capsys, setup, relation)
    for name in DEFS if relation == "replace-one" else PRIVATE_FOR_BOTH:
        assert checked[name] == _charged(capsys, setup, relation, name), (relation, name)
