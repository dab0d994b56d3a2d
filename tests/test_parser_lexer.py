"""The lexer's contracts: context-dependent tokens, error order, the master regex."""

from __future__ import annotations

import re

import pytest

from fuzzpy.frontend.lexer import without_captures
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language import syntax as ast
from fuzzpy.language.diagnostics import FuzzError


def _first_diagnostic(text: str) -> tuple[str, int, int]:
    with pytest.raises(FuzzError) as caught:
        parse_program(text, "t.fz")
    diagnostic = caught.value.diagnostics[0]
    return diagnostic.code, diagnostic.span.line, diagnostic.span.col


def test_contextual_keyword_is_a_name_where_no_keyword_fits() -> None:
    program = parse_program("let list = 1;\nlet y = list + 1;", "t.fz")
    assert [decl.name for decl in program.decls] == ["list", "y"]
    assert isinstance(program.decls[1].expr, ast.Binary)


def test_contextual_keyword_is_a_keyword_where_the_parser_takes_it() -> None:
    program = parse_program("def f (xs : list num) : num = 0;", "t.fz")
    decl = program.decls[0]
    assert isinstance(decl, ast.DefDecl)
    assert isinstance(decl.params[0].type, ast.TyList)


def test_minus_before_bracket_is_an_arrow_only_in_a_type() -> None:
    program = parse_program("type F = num -[2]-> num;\nlet y = x -[1];", "t.fz")
    fun_type, subtraction = program.decls[0].type, program.decls[1].expr
    assert isinstance(fun_type, ast.TyFun)
    assert isinstance(subtraction, ast.Binary) and subtraction.op == "-"


def test_positions_follow_lines_and_block_comments() -> None:
    program = parse_program("/* one\n two */ let a = 1;\n\n  let b = 2;", "t.fz")
    assert (program.decls[0].span.line, program.decls[0].span.col) == (2, 9)
    assert (program.decls[1].span.line, program.decls[1].span.col) == (4, 3)
    assert program.decls[1].span.end_col == 13


def test_a_syntax_error_before_a_bad_character_is_reported_first() -> None:
    assert _first_diagnostic("let = 1; $") == ("FZ102", 1, 5)
    assert _first_diagnostic("let x = 1 $;") == ("FZ101", 1, 11)


@pytest.mark.parametrize(
    ("pattern", "samples"),
    [
        (r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?", ["1", "1.5", "2e10", "3.0E-2", "1.", "e5"]),
        (r'"([^"\\\n]|\\.)*"', ['""', '"a\\"b"', '"open', '"a\nb"']),
        (r"[(]x(a)\(", ["(xa(", "(xa", "xa("]),
        (r"[]()](b)", ["]b", "(b", "b"]),
        (r"[^]()](c)", ["xc", "]c", "(c"]),
    ],
)
def test_without_captures_matches_the_same_strings(pattern: str, samples: list[str]) -> None:
    plain = without_captures(pattern)
    assert re.compile(plain).groups == 0
    for sample in samples:
        original, rewritten = re.fullmatch(pattern, sample), re.fullmatch(plain, sample)
        assert (original is None) == (rewritten is None), sample


def test_primitive_names_are_keywords_only_before_a_bracket() -> None:
    program = parse_program(
        "def f (db : bag num) : fuzzy num = { let sum = sum [0, 1] db; laplace[1] sum };\n"
        "mechanism m (q : vec[1] num, eps : num) : num privacy eps {\n"
        "  var sum = q[0]; return sum + lap(1 / eps);\n}\n",
        "t.fz",
    )
    block = program.decls[0].body
    assert isinstance(block, ast.Block)
    bound = block.stmts[0]
    assert isinstance(bound, ast.LetStmt) and bound.name == "sum"
    assert isinstance(bound.expr, ast.App) and bound.expr.func == ast.Prim(
        "sum", (ast.NumLit("0"), ast.NumLit("1"))
    )
    assert block.result.arg == ast.Var("sum")
    assert program.decls[1].body[0] == ast.VarDecl("sum", ast.Index(ast.Var("q"), ast.NumLit("0")))


def test_a_primitive_without_its_brackets_is_a_checker_error() -> None:
    from fuzzpy.checker import check_program

    program = parse_program("def f (db : bag num) : fuzzy num = laplace 0.1 (size db);\n", "t.fz")
    with pytest.raises(FuzzError) as info:
        check_program(program)
    assert [(d.code, d.span.line, d.span.col) for d in info.value.diagnostics] == [("FZ208", 1, 36)]
