"""Review s29e: a release resting on an `assume def` z3 could not check says
so wherever its result goes -- `run --json`'s warnings, the ledger's entry
(and `fuzzpy ledger`), the Python API's release, quote and check report --
and a `privacy zcdp[delta]` definition under the basic rule is charged the
better of its zCDP conversion and what the accountant proves (both shown)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.cli import main
from fuzzpy.ledger.book import Ledger

# `exp` is outside z3's fragment: the declared 3-sensitivity is an assumption
PROGRAM = """
assume def bump (t :[3] num) : num = exp (t / 100) * 2;
def pass_on (h : num -[3]-> num) (v : num) : num = h v;
def through_call (rows : bag num) : fuzzy num = laplace[0.25] (pass_on bump (size rows));
def plain (rows : bag num) : fuzzy num = laplace[0.25] (size rows);
"""


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "prog.fz"
    source.write_text(PROGRAM)
    data = tmp_path / "ages.csv"
    data.write_text("value\n" + "\n".join(str(n) for n in (4, 8, 15, 16, 23, 42)) + "\n")
    return source, data


def test_run_json_and_the_ledger_name_the_unchecked_assumption(files: tuple[Path, Path], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    source, data = files
    book = tmp_path / "book.sqlite"
    for name in ("through_call", "plain"):
        assert main(["run", str(source), name, "--data", f"rows={data}", "--ledger", str(book),
                     "--budget", "3", "--json"]) == 0
        document = json.loads(capsys.readouterr().out)
        flagged = [w for w in document["warnings"] if "FZ318" in w]
        assert (flagged != []) == (name == "through_call"), document["warnings"]
    with Ledger(book) as ledger:
        first, second = ledger.history()
    assert first.assumptions == (("bump", "3-sensitive in t"),) and second.assumptions == ()
    assert first.to_json()["unchecked_assumptions"] == [{"definition": "bump", "claim": "3-sensitive in t"}]
    assert main(["ledger", "--ledger", str(book)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "through_call" in line or "plain" in line]
    assert "UNCHECKED ASSUMPTION: bump" in rows[0] and "UNCHECKED" not in rows[1]


def test_the_python_api_says_so_too(files: tuple[Path, Path], tmp_path: Path) -> None:
    source, data = files
    program = fuzzpy.load(str(source))
    report = program.check()
    assert report["through_call"].rests_on_unchecked == ("bump",)
    assert report["plain"].rests_on_unchecked == ()
    book = str(tmp_path / "api.sqlite")
    (quoted,) = program.quote("through_call", data={"rows": str(data)}, ledger=book, budget=2.0).values()
    assert quoted.rests_on_unchecked == ("bump",) and "UNCHECKED" in str(quoted)
    assert quoted.to_json()["rests_on_unchecked"] == ["bump"]
    heard: list[str] = []
    release = program.run("through_call", data={"rows": str(data)}, ledger=book, budget=2.0, on_warning=heard.append)
    assert any("FZ318" in w for w in release.warnings) and any("FZ318" in w for w in heard)
    assert release.to_json()["rests_on_unchecked"] == ["bump"]
    assert release.charges[next(iter(release.charges))].rests_on_unchecked == ("bump",)


def test_a_zcdp_declared_pure_release_is_charged_its_pure_epsilon_under_the_basic_rule(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # two-sided geometric with scale 1/2: 2-DP; its rho (2 - ... ) converts at 1e-7 to well above 2
    source = tmp_path / "z.fz"
    source.write_text("def tally (rows : bag num) : fuzzy int privacy zcdp[1e-7] = geometric[2] (size rows);\n")
    data = tmp_path / "d.csv"
    data.write_text("value\n1\n2\n3\n")
    cost = fuzzpy.load(str(source)).check()["tally"].costs["rows"]
    assert cost.rho is not None and cost.epsilon is not None and cost.epsilon > 2  # the conversion, still shown
    assert cost.proved == (Fraction(2), 0) and "its events are 2-DP" in cost.text
    assert main(["run", str(source), "tally", "--data", f"rows={data}", "--ledger", str(tmp_path / "l.sqlite"),
                 "--budget", "2.5,1e-6", "--json"]) == 0  # refused before: the conversion exceeds 2.5
    charged = json.loads(capsys.readouterr().out)["charged"]
    assert charged["exact"] == {"epsilon": "2", "delta": "0"}


def test_only_figures_that_use_the_declared_bound_rest_on_it() -> None:
    # a per-row function under `map`: its declared sensitivity never enters the cost (the sum is clipped)
    program = fuzzpy.loads(
        "type P = { w : num, h : num };\n"
        "assume def squash (z :[1] num) : num = 1 / (1 + exp (0 - z));\n"
        "def per_row (ps : bag P) : fuzzy num = laplace[0.5] (sum[0, 1] (map (fun p -> squash p.w) ps));\n"
        "def on_count (ps : bag P) : fuzzy num = laplace[0.5] (squash (size ps));\n"
        "def both (ps : bag P) : fuzzy (num, num) = { sample a = per_row ps; sample b = on_count ps; return (a, b) };\n",
        name="rows.fz")
    report = program.check()
    assert report["per_row"].rests_on_unchecked == ()
    assert report["on_count"].rests_on_unchecked == ("squash",)
    assert report["both"].rests_on_unchecked == ("squash",)
