"""Issue 23, item 1 (calls): a call is accepted only inside the relation its
mechanism's proof speaks about.

Every private bound `abs(dist(x)) <= c` must admit the argument's actual
distance, 0 included (a constant argument, or two neighbouring databases on
which the argument agrees): c >= 0, and c > 0 for `<`. A mechanism whose
proof is vacuous (its `requires` admit no inputs: FZ406 in `verify`) is
refused at the call. Both were accepted before, and `run` released exact data.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from fuzzpy.cli import main

GATE = """
mechanism gate (x : num, y : num, k : num, eps : num) : num
  requires eps > 0
  requires abs(dist(x)) {op} k
  requires abs(dist(y)) <= 1
  privacy eps
{{
  if (k < 0) {{ return y; }}
  return y + lap(1 / eps);
}}
def f (db : bag num) : fuzzy num = gate {x} (size db) {k} 1;
"""

VACUOUS = """
mechanism exact (x : num, y : num, k : num, eps : num) : num
  requires eps > 0
  requires k < 0
  requires abs(dist(x)) <= k
  requires abs(dist(y)) <= 1
  privacy eps
{
  return y;
}
def f (db : bag num) : fuzzy num = exact 3 (size db) (0 - 1) 1;
"""


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue() + err.getvalue()


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "calls.fz"
    path.write_text(text)
    return str(path)


def _codes(tmp_path: Path, text: str) -> list[str]:
    code, out = _cli("check", "--json", _file(tmp_path, text))
    document = json.loads(out)
    return [d["code"] for d in document["diagnostics"] if d.get("severity", "error") == "error"] if code else []


def _data(tmp_path: Path) -> str:
    data = tmp_path / "values.csv"
    data.write_text("v\n4\n8\n15\n")
    return str(data)


@pytest.mark.parametrize(("op", "x", "k"), [
    ("<=", "5", "(0 - 1)"),    # a constant x: distance 0, outside `<= -1`
    ("<=", "2.5", "(0 - 0.5)"),
    ("<", "5", "0"),           # `< 0` admits no distance at all
    ("<=", "(3 * 2)", "(0 - 3)"),
], ids=["constant, k = -1", "fraction", "strict zero", "static expression"])
def test_a_bound_that_excludes_distance_zero_is_refused(tmp_path: Path, op: str, x: str, k: str) -> None:
    assert "FZ308" in _codes(tmp_path, GATE.format(op=op, x=x, k=k))


@pytest.mark.parametrize(("op", "k"), [("<=", "0"), ("<=", "2"), ("<", "0.5")])
def test_a_bound_that_admits_distance_zero_is_accepted(tmp_path: Path, op: str, k: str) -> None:
    assert _codes(tmp_path, GATE.format(op=op, x="5", k=k)) == []


def test_a_private_argument_outside_a_negative_bound_is_still_refused(tmp_path: Path) -> None:
    text = GATE.format(op="<=", x="(size db)", k="(0 - 1)").replace("gate (size db) (size db)", "gate (size db) 3")
    assert "FZ308" in _codes(tmp_path, text)


def test_a_call_of_a_vacuously_proved_mechanism_is_refused(tmp_path: Path) -> None:
    code, out = _cli("check", "--json", _file(tmp_path, VACUOUS))
    diagnostics = json.loads(out)["diagnostics"]
    assert code == 1
    refused = [d for d in diagnostics if d["code"] == "FZ310"]
    assert refused and "vacuous" in refused[0]["message"]


@pytest.mark.parametrize("text", [GATE.format(op="<=", x="5", k="(0 - 1)"), VACUOUS], ids=["bound", "vacuous"])
def test_run_releases_nothing(tmp_path: Path, text: str) -> None:
    path = _file(tmp_path, text)
    code, out = _cli("run", path, "f", "--data", f"db={_data(tmp_path)}", "--budget", "2",
                     "--ledger", str(tmp_path / "ledger.sqlite"))
    assert code != 0
    assert "released" not in out and "3" not in out.split("error")[0]


def test_the_mechanism_itself_still_verifies(tmp_path: Path) -> None:
    # the refusal is the call's, not the proof's: `verify` proves `gate` for
    # every k (vacuously for k < 0, which no call may then use)
    code, out = _cli("verify", _file(tmp_path, GATE.format(op="<=", x="5", k="(0 - 1)")))
    assert code == 0 and "gate: proved" in out
