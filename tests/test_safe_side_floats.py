"""Every float a user reads of a privacy figure is on its safe side (review s30b).

A cost, or what is spent, is the least double >= the exact figure; what
remains of a budget is the greatest double <= it. ``float()`` rounds to the
nearest double, which is *below* 1/3 and 7/10 and *above* 1/10 and 9/10, so
each case below was on the wrong side before. Checked against the exact
figure as a Fraction (a double converts to a Fraction exactly), whatever the
surface: `ledger --json`, `check --json`, `Charge`, `Ledger.remaining()`.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction as Q
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.accounting.events import Gaussian, Laplace
from fuzzpy.cli import main
from fuzzpy.language.figures import double_down, double_up, json_figure
from fuzzpy.ledger.book import Budget, Ledger


def _is_least_above(value: float, exact: Q) -> bool:
    return Q(value) >= exact and Q(math.nextafter(value, -math.inf)) < exact


def _is_greatest_below(value: float, exact: Q) -> bool:
    return Q(value) <= exact and Q(math.nextafter(value, math.inf)) > exact


@pytest.mark.parametrize("exact", [Q(1, 3), Q(7, 10), Q(2, 3), Q(1, 10), Q(9, 10), Q(1, 18), Q(10**400, 3)])
def test_the_one_conversion_rounds_each_way(exact: Q) -> None:
    up, down = json_figure(exact), json_figure(exact, up=False)
    if exact > Q(1.7976931348623157e308):
        assert up == "inf" and double_up(exact) == math.inf and down == 1.7976931348623157e308
        return
    assert isinstance(up, float) and isinstance(down, float)
    assert _is_least_above(up, exact) and _is_greatest_below(down, exact)
    assert double_up(exact) == up and double_down(exact) == down


def _ledger_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["ledger", "--ledger", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_ledger_json_charges_up_and_remaining_down(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "book.sqlite"
    with Ledger(path) as ledger:
        ledger.charge("thirds", (Laplace(Q(1), Q(3)),), Budget(1))  # 1/3, then 2/3 spent
        ledger.charge("thirds", (Laplace(Q(1), Q(3)),), Budget(1))
        ledger.charge("sevenths", (Laplace(Q(7), Q(10)),), Budget(1))  # 7/10 spent, 3/10 left
        ledger.charge("ninth", (Laplace(Q(9), Q(10)),), Budget(1))  # 1 - 9/10 = 1/10 left
    by_name = {d["dataset"]: d for d in _ledger_json(path, capsys)["datasets"]}
    for name, spent, left in (("thirds", Q(2, 3), Q(1, 3)), ("sevenths", Q(7, 10), Q(3, 10)),
                              ("ninth", Q(9, 10), Q(1, 10))):
        document = by_name[name]
        assert Q(document["spent"]["exact"]["epsilon"]) == spent
        assert _is_least_above(document["spent"]["epsilon"], spent), name
        assert _is_greatest_below(document["remaining"]["epsilon"], left), name
        last = document["releases"][-1]
        charged = Q(last["charged"]["exact"]["epsilon"])
        assert _is_least_above(last["charged"]["epsilon"], charged), name
        assert _is_greatest_below(last["remaining"]["epsilon"], left), name
    assert by_name["thirds"]["releases"][0]["charged"]["epsilon"] == 0.33333333333333337
    assert by_name["ninth"]["remaining"]["epsilon"] == 0.09999999999999999


def test_ledger_json_rho_rounds_each_way_under_zcdp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "z.sqlite"
    with Ledger(path) as ledger:
        ledger.charge("z", (Gaussian(Q(1), Q(3)),), Budget(10, Q(1, 10**6), "zcdp"))
    document = _ledger_json(path, capsys)["datasets"][0]
    for key in ("epsilon", "delta", "rho"):
        assert _is_least_above(document["spent"][key], Q(document["spent"]["exact"][key])), key
        assert _is_greatest_below(document["remaining"][key], Q(document["remaining"]["exact"][key])), key


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    path = tmp_path / "rows.csv"
    path.write_text("x\n1\n2\n3\n")
    return path


def test_api_charge_and_remaining(tmp_path: Path, rows: Path) -> None:
    program = fuzzpy.loads("def c (db : bag num) : fuzzy num = laplace[0.7] (size db);\n"
                           "def t (db : bag num) : fuzzy num = laplace[1 / 3] (size db);")
    ledger = fuzzpy.Ledger(tmp_path / "api.sqlite")
    charge = program.run("c", data={"db": str(rows)}, datasets={"db": "d"}, ledger=ledger, budget=1.0).charges["d"]
    assert charge.epsilon == 0.7000000000000001 and _is_least_above(charge.epsilon, Q(7, 10))
    assert _is_greatest_below(charge.remaining.epsilon, Q(3, 10))
    assert _is_greatest_below(ledger.remaining("d")[0], Q(3, 10))
    other = tmp_path / "other.csv"
    other.write_text("x\n4\n")
    second = program.run("t", data={"db": str(other)}, datasets={"db": "e"}, ledger=ledger, budget=1.0).charges["e"]
    assert _is_least_above(second.epsilon, Q(1, 3)) and _is_greatest_below(second.remaining.epsilon, Q(2, 3))
    assert _is_least_above(second.quote and json.loads(json.dumps(second.to_json()))["charged"]["epsilon"], Q(1, 3))
    assert _is_greatest_below(second.to_json()["remaining"]["epsilon"], Q(2, 3))  # type: ignore[index]


def test_api_remaining_after_nine_tenths(tmp_path: Path, rows: Path) -> None:
    program = fuzzpy.loads("def c (db : bag num) : fuzzy num = laplace[0.9] (size db);")
    ledger = fuzzpy.Ledger(tmp_path / "nine.sqlite")
    charge = program.run("c", data={"db": str(rows)}, datasets={"db": "d"}, ledger=ledger, budget=1.0).charges["d"]
    assert _is_least_above(charge.epsilon, Q(9, 10))
    assert charge.remaining.epsilon == 0.09999999999999999 and ledger.remaining("d") == (0.09999999999999999, 0.0)
    assert charge.remaining.exact["epsilon"] == Q(1, 10)


def test_check_json_seven_tenths_is_not_below(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "seven.fz"
    source.write_text("def c (db : bag num) : fuzzy num = laplace[0.7] (size db);\n")
    main(["check", "--json", str(source)])
    text = capsys.readouterr().out
    assert "0.7000000000000001" in text
    assert _is_least_above(fuzzpy.loads(source.read_text()).check().to_json()["definitions"][0]["privacy"]["db"]
                           ["epsilon"], Q(7, 10))
