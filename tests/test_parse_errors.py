"""Malformed programs: each gives its FZ1xx diagnostic at the right line:col, exit code 1.

Every file in tests/malformed/ starts with `// expect CODE LINE:COL`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.messages import CODES

MALFORMED = sorted((Path(__file__).resolve().parent / "malformed").glob("*.fz"))


def expectation(path: Path) -> tuple[str, int, int]:
    header = path.read_text(encoding="utf-8").splitlines()[0]
    _, _, code, position = header.split()
    line, col = position.split(":")
    return code, int(line), int(col)


def test_there_are_at_least_40_malformed_programs() -> None:
    assert len(MALFORMED) >= 40


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.stem)
def test_malformed_program_gives_its_diagnostic(path: Path) -> None:
    code, line, col = expectation(path)
    with pytest.raises(FuzzError) as caught:
        parse_program(path.read_text(encoding="utf-8"), str(path))
    diagnostic = caught.value.diagnostics[0]
    assert (diagnostic.code, diagnostic.span.line, diagnostic.span.col) == (code, line, col)
    assert diagnostic.code in CODES
    assert diagnostic.span.file == str(path)
    assert "__ANON" not in diagnostic.message and "RPAR" not in diagnostic.message


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.stem)
def test_cli_exits_1_with_a_rendered_diagnostic(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, line, col = expectation(path)
    assert main(["parse", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"error[{code}]" in err
    assert f"{path}:{line}:{col}" in err
    assert "Traceback" not in err


def test_cli_json_has_the_design_page_shape(capsys: pytest.CaptureFixture[str]) -> None:
    path = MALFORMED[0]
    code, line, col = expectation(path)
    assert main(["parse", "--json", str(path)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False
    diagnostic = document["diagnostics"][0]
    assert diagnostic["code"] == code and diagnostic["severity"] == "error"
    assert diagnostic["span"] == {
        "file": str(path), "line": line, "col": col,
        "end_line": diagnostic["span"]["end_line"], "end_col": diagnostic["span"]["end_col"],
    }


def test_cli_unreadable_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(tmp_path / "missing.fz")]) == 2
    assert "FZ701" in capsys.readouterr().err


def test_cli_non_utf8_file_is_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.fz"
    path.write_bytes("let caf\xe9 = 1;".encode("latin-1"))
    assert main(["parse", str(path)]) == 1
    err = capsys.readouterr().err
    assert "FZ100" in err and f"{path}:1:8" in err


def test_cli_prints_the_program_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "noisy_count.fz"
    assert main(["parse", str(example)]) == 0
    printed = capsys.readouterr().out
    assert parse_program(printed) == parse_program(example.read_text(encoding="utf-8"))


def test_installed_command_shows_no_traceback() -> None:
    path = next(p for p in MALFORMED if p.stem == "unclosed_brace_eof")
    run = subprocess.run(
        [sys.executable, "-m", "fuzzpy", "parse", str(path)],
        capture_output=True, text=True, check=False,
    )
    assert run.returncode == 1
    assert "error[FZ104]" in run.stderr and "Traceback" not in run.stderr
