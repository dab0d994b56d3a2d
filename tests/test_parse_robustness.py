"""Mutated programs never crash the parser: a program or a FuzzError with diagnostics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError, render_text
from fuzzpy.language.messages import CODES
from fuzzpy.language.source import Source
from fuzzpy.release.pipeline import load_source

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_TEXTS = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").rglob("*.fz"))]
_PIECES = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|[0-9.]+|\S")


def pieces(text: str) -> list[str]:
    return _PIECES.findall(text)


def outcome(text: str) -> None:
    """Parse `text`; if it is rejected, check the diagnostics are well formed."""
    try:
        parse_program(text, "mutant.fz")
    except FuzzError as error:
        assert error.diagnostics
        source = Source("mutant.fz", text)
        for diagnostic in error.diagnostics:
            assert diagnostic.code in CODES and diagnostic.code.startswith("FZ1")
            span = diagnostic.span
            assert 1 <= span.line <= source.line_count
            assert span.col >= 1
            assert render_text(diagnostic, {"mutant.fz": source})


@st.composite
def mutants(draw: st.DrawFn) -> str:
    tokens = pieces(draw(st.sampled_from(EXAMPLE_TEXTS)))
    kind = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "truncate", "nest"]))
    i = draw(st.integers(0, len(tokens) - 1))
    j = draw(st.integers(0, len(tokens) - 1))
    if kind == "delete":
        del tokens[i]
    elif kind == "duplicate":
        tokens.insert(i, tokens[i])
    elif kind == "swap":
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif kind == "insert":
        tokens.insert(i, draw(st.text(min_size=1, max_size=4)))
    elif kind == "truncate":
        tokens = tokens[:i]
    else:
        depth = draw(st.integers(1, 400))
        opener = draw(st.sampled_from(["(", "[", "{", "<", "-"]))
        closer = {"(": ")", "[": "]", "{": "}", "<": ">", "-": ""}[opener]
        tokens[i:i] = [opener * depth + "x" + closer * draw(st.integers(0, depth))]
    return "".join(tokens)


@settings(max_examples=400, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutants())
def test_mutated_examples_give_a_program_or_diagnostics(text: str) -> None:
    outcome(text)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.text(max_size=60))
def test_random_text_gives_a_program_or_diagnostics(text: str) -> None:
    outcome(text)


@pytest.mark.parametrize("text", [
    "", "   \n\n", "/* */", "(" * 20000, ")" * 100, "def f = " + "[" * 20000,
    "def f = " + "(" * 5000 + "1" + ")" * 5000 + ";",
    "def f = " + "-" * 5000 + "1;", "def f = " + "not " * 3000 + "x;",
    "def f = " + "fun x -> " * 3000 + "x;",
    "def f = " + "1 :: " * 3000 + "[];",
    "type T = " + "list " * 3000 + "num;",
    "\x00\x01\x02", "def f = \"\x00\";", "let \u00e9t\u00e9 = 1;",
])
def test_extreme_inputs(text: str) -> None:
    outcome(text)


def test_empty_file_is_a_diagnostic() -> None:
    with pytest.raises(FuzzError) as caught:
        parse_program("", "empty.fz")
    assert caught.value.diagnostics[0].code == "FZ114"


def test_non_utf8_bytes_through_load_source(tmp_path: Path) -> None:
    path = tmp_path / "bytes.fz"
    path.write_bytes(b"def f = 1;\n\xff\xfe\x00 garbage")
    with pytest.raises(FuzzError) as caught:
        load_source(path)
    diagnostic = caught.value.diagnostics[0]
    assert (diagnostic.code, diagnostic.span.line, diagnostic.span.col) == ("FZ100", 2, 1)


@settings(max_examples=100, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=40), st.integers(0, 2000))
def test_random_bytes_in_a_file(tmp_path: Path, noise: bytes, where: int) -> None:
    """Bytes spliced into an example, read from disk: FZ100, a program, or FZ1xx diagnostics."""
    data = EXAMPLE_TEXTS[where % len(EXAMPLE_TEXTS)].encode("utf-8")
    where %= len(data) + 1
    path = tmp_path / "noisy.fz"
    path.write_bytes(data[:where] + noise + data[where:])
    try:
        source = load_source(path)
    except FuzzError as error:
        assert [d.code for d in error.diagnostics] == ["FZ100"]
        return
    outcome(source.text)
