"""Issue 23, item 1 (scope): `verify` reads a file's top level as `check` does.

A name defined twice is rejected by both (FZ210), never proved with the later
definition; a mechanism's local shadows a top-level constant of the same name
in its body (docs/language-notes.md), so `let eta = 1;` above the shipped
above_threshold (whose loop declares `var eta = lap(...)`) changes nothing.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.syntax import MechanismDecl

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "mechanisms"

SCALED = """
mechanism m (x : num, eps : num) : num
  requires eps > 0
  requires abs(dist(x)) <= 1
  privacy eps
{
  return x + lap(K / eps);
}
"""


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue() + err.getvalue()


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "scope.fz"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("lets", ["let K = 0.01;\nlet K = 1;", "let K = 1;\nlet K = 1;", "let K = 1;\nlet K = 100;"])
def test_a_constant_defined_twice_is_rejected_by_verify_as_by_check(tmp_path: Path, lets: str) -> None:
    path = _write(tmp_path, lets + SCALED)
    for command in ("check", "verify"):
        code, out = _cli(command, "--json", path)
        assert code != 0, command
        assert "FZ210" in out and "proved" not in out, (command, out)


def test_the_duplicate_is_reported_once_for_several_mechanisms(tmp_path: Path) -> None:
    text = "let K = 1;\nlet K = 2;" + SCALED + SCALED.replace("mechanism m ", "mechanism n ")
    code, out = _cli("verify", _write(tmp_path, text))
    assert code != 0 and out.count("FZ210") == 1


def test_verify_mechanism_itself_refuses_the_file() -> None:
    program = parse_program("let K = 1;\nlet K = 100;" + SCALED, "scope.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    with pytest.raises(FuzzError) as caught:
        verify_mechanism(decl, program)
    assert caught.value.diagnostics[0].code == "FZ210"


def test_the_api_refuses_it_too(tmp_path: Path) -> None:
    program = fuzzpy.load(_write(tmp_path, "let K = 1;\nlet K = 100;" + SCALED))
    with pytest.raises(fuzzpy.Rejected):
        program.verify()


@pytest.mark.parametrize("value", ["1", "1000", "0.5"])
def test_a_local_shadows_a_top_level_constant(tmp_path: Path, value: str) -> None:
    text = f"let eta = {value};\n" + (EXAMPLES / "above_threshold.fz").read_text()
    code, out = _cli("verify", _write(tmp_path, text))
    assert code == 0 and "above_threshold: proved" in out, out


def test_the_proof_reads_the_local_not_the_constant(tmp_path: Path) -> None:
    # with the constant s = 1 / eps-like 100 the claim would hold; the local is
    # 100 times too small a scale
    body = """
mechanism m (x : num, eps : num) : num
  requires eps > 0
  requires abs(dist(x)) <= 1
  privacy eps
{
  var s = 0.01 / eps;
  return x + lap(s);
}
"""
    code, out = _cli("verify", _write(tmp_path, "let s = 100;" + body))
    assert "m: proved" not in out
    code, out = _cli("verify", _write(tmp_path, "let s = 100;" + body.replace("0.01 / eps", "1 / eps")))
    assert code == 0 and "m: proved" in out


def test_a_name_meaning_the_constant_and_a_local_is_refused(tmp_path: Path) -> None:
    text = """let c = 2;
mechanism m (x : num, eps : num) : num
  requires eps > 0
  requires abs(dist(x)) <= c
  privacy eps
{
  var c = 1;
  return x + lap(c / eps);
}
"""
    code, out = _cli("verify", "--json", _write(tmp_path, text))
    assert code != 0 and "FZ405" in out and "cannot mean both" in out


def test_check_and_run_of_a_call_under_a_shadowed_constant(tmp_path: Path) -> None:
    text = "let eta = 1;\n" + (EXAMPLES / "above_threshold.fz").read_text() + \
        "def first (db : bag num) : fuzzy int = above_threshold [size db, 2 * eta] 1 1;\n"
    path = _write(tmp_path, text)
    code, out = _cli("check", "--json", path)
    assert code == 0, out
    data = tmp_path / "v.csv"
    data.write_text("v\n1\n2\n")
    code, out = _cli("run", path, "first", "--data", f"db={data}", "--budget", "2",
                     "--ledger", str(tmp_path / "l.sqlite"), "--json")
    assert code == 0, out
    from tests.notes import without_registration

    assert json.loads(without_registration(out))["released"] in (-1, 0, 1)
