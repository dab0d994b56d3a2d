"""A definition with static parameters whose figure rests on an unchecked
`assume def` says so wherever a plain definition's figure does (review s30c).

`assume def amp (x :[1] num)` below claims 1-sensitivity for `1000 * log (exp
x)` (1000-sensitive): z3 is not given `exp`, so the claim is unchecked (FZ318)
and every figure that uses it is only as good as the claim. A definition over
`(eps : num)` or `(n : nat)` that uses it printed "eps-DP for all eps > 0"
bare, and `run --arg eps=1` charged it with no warning and an empty
``unchecked_assumptions`` in the ledger.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.cli import main

SOURCE = """\
import std.stats;
assume def amp (x :[1] num) : num = 1000 * log (exp x);
def twice (f : num -o num) (x : num) : num = f (f x) / 2;
def direct (eps : num) (db : bag int) : fuzzy num = { let c : num = size db; laplace[eps] (amp c) };
def through (eps : num) (db : bag int) : fuzzy num = { let c : num = size db; laplace[eps] (twice amp c) };
def steps (k : nat) (eps : num) (db : bag int) : fuzzy num = { let c : num = size db; laplace[eps] (iterate[k] amp c) };
def outer (e : num) (db : bag int) : fuzzy num = direct (e / 2) db;
def hist (eps : num) (db : bag int) : fuzzy (vec[1] num) = { let c : num = size db; histogram [amp c, c] eps };
def clean (eps : num) (db : bag int) : fuzzy num = laplace[eps] (size db);
"""
RESTING = ("direct", "through", "steps", "outer", "hist")  # `hist`: through a standard library function


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    program, rows = tmp_path / "assumed.fz", tmp_path / "rows.csv"
    program.write_text(SOURCE)
    rows.write_text("v\n3\n1\n4\n1\n5\n")
    return program, rows


def _blocks(text: str) -> dict[str, str]:
    """Each definition's row and the lines under it, by name."""
    found: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            name = line.split()[0]
            found[name] = line
        elif name is not None:
            found[name] += "\n" + line
    return found


def test_check_text_and_json(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    program, _ = files
    main(["check", str(program)])
    blocks = _blocks(capsys.readouterr().out)
    for name in RESTING:
        assert "for all" in blocks[name] and "rests on an UNCHECKED ASSUMPTION: `amp`" in blocks[name], name
    assert "UNCHECKED" not in blocks["clean"]
    main(["check", "--json", str(program)])
    definitions = {d["name"]: d for d in json.loads(capsys.readouterr().out)["definitions"]}
    assert all(definitions[n]["rests_on_unchecked"] == ["amp"] for n in RESTING)
    assert "rests_on_unchecked" not in definitions["clean"]


def test_budget_text_and_json(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    program, _ = files
    main(["budget", str(program)])
    blocks = _blocks(capsys.readouterr().out)
    for name in RESTING:
        assert "parameterised by" in blocks[name] and "UNCHECKED ASSUMPTION: `amp`" in blocks[name], name
    assert "UNCHECKED" not in blocks["clean"]
    main(["budget", "--json", str(program)])
    documents = {d["name"]: d for d in json.loads(capsys.readouterr().out)["parameterised"]}
    assert all(documents[n]["rests_on_unchecked"] == ["amp"] for n in RESTING)
    assert "rests_on_unchecked" not in documents["clean"]


@pytest.mark.parametrize(("name", "args"), [("direct", {"eps": 1}), ("through", {"eps": "1/4"}),
                                            ("steps", {"k": 3, "eps": 0.5}), ("outer", {"e": 2}),
                                            ("hist", {"eps": 1})])
def test_api_run_and_quote_carry_the_mark(files: tuple[Path, Path], tmp_path: Path, name: str,
                                          args: dict[str, object]) -> None:
    program, rows = files
    loaded = fuzzpy.load(program)
    assert loaded.check()[name].rests_on_unchecked == ("amp",)
    ledger = fuzzpy.Ledger(tmp_path / "book.sqlite")
    quoted = loaded.quote(name, data={"db": str(rows)}, args=args, ledger=ledger, budget=10)
    assert [c.rests_on_unchecked for c in quoted.values()] == [("amp",)]
    heard: list[str] = []
    release = loaded.run(name, data={"db": str(rows)}, args=args, ledger=ledger, budget=10, on_warning=heard.append)
    (charge,) = release.charges.values()
    assert charge.rests_on_unchecked == ("amp",) and "UNCHECKED ASSUMPTION" in str(charge)
    assert charge.to_json()["rests_on_unchecked"] == ["amp"]
    assert any("FZ318" in w and "`amp`" in w for w in release.warnings)
    (entry,) = ledger.entries()
    assert entry.assumptions == (("amp", "1-sensitive in x"),)


def test_api_clean_definition_has_no_mark(files: tuple[Path, Path], tmp_path: Path) -> None:
    program, rows = files
    release = fuzzpy.load(program).run("clean", data={"db": str(rows)}, args={"eps": 1},
                                       ledger=fuzzpy.Ledger(tmp_path / "clean.sqlite"), budget=10)
    (charge,) = release.charges.values()
    assert charge.rests_on_unchecked == () and not any("FZ318" in w for w in release.warnings)


def test_cli_run_json_and_ledger_entry(files: tuple[Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    program, rows = files
    book = tmp_path / "cli.sqlite"
    main(["run", "--json", str(program), "steps", "--arg", "k=2", "--arg", "eps=1", "--data", f"db={rows}",
          "--ledger", str(book), "--budget", "10"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["rests_on_unchecked"] == ["amp"]
    assert any("FZ318" in w for w in document["warnings"])
    main(["ledger", "--json", "--ledger", str(book)])
    (release,) = json.loads(capsys.readouterr().out)["datasets"][0]["releases"]
    assert release["unchecked_assumptions"] == [{"definition": "amp", "claim": "1-sensitive in x"}]
    main(["ledger", "--ledger", str(book)])
    assert "steps eps=1 k=2 [UNCHECKED ASSUMPTION: amp]" in capsys.readouterr().out
    main(["run", str(program), "direct", "--arg", "eps=1", "--data", f"db={rows}", "--ledger", str(book)])
    assert "warning[FZ318]" in capsys.readouterr().err
