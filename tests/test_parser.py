"""The parser: every example parses, and each construct gives the tree syntax.py describes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fuzzpy.frontend.lexer import RESERVED
from fuzzpy.frontend.parser import grammar_text, parse_program
from fuzzpy.language import syntax as ast
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.library import is_library_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").rglob("*.fz"))


def body(source: str) -> ast.Expr:
    """The body of the last `def` of a program."""
    decl = parse_program(source).decls[-1]
    assert isinstance(decl, ast.DefDecl)
    return decl.body


def expr(text: str) -> ast.Expr:
    return body(f"def it = {text};")


def V(name: str) -> ast.Var:
    return ast.Var(name)


def N(text: str) -> ast.NumLit:
    return ast.NumLit(text)


def B(op: str, left: ast.Expr, right: ast.Expr) -> ast.Binary:
    return ast.Binary(op, left, right)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_parses(path: Path) -> None:
    program = parse_program(path.read_text(encoding="utf-8"), str(path))
    assert program.decls
    # the program's own declarations are in its file; imported ones in the library's
    assert all(decl.span.file == str(path) or is_library_file(decl.span.file) for decl in program.decls)
    assert any(decl.span.file == str(path) for decl in program.decls)


def test_there_are_enough_examples() -> None:
    top = sorted((ROOT / "examples").glob("*.fz"))
    rejected = sorted((ROOT / "examples" / "rejected").glob("*.fz"))
    assert len(top) >= 12
    assert len(rejected) >= 3
    for path in rejected:
        assert path.read_text(encoding="utf-8").startswith("// REJECTED:")


# ---------------------------------------------------------------- operators


def test_arithmetic_precedence_and_left_associativity() -> None:
    assert expr("a - b - c * d / e") == B(
        "-", B("-", V("a"), V("b")), B("/", B("*", V("c"), V("d")), V("e"))
    )


def test_logic_comparison_and_cons_levels() -> None:
    got = expr("a + 1 :: xs == ys || not p && q")
    cons = ast.Cons(B("+", V("a"), N("1")), V("xs"))
    assert got == B("||", B("==", cons, V("ys")), B("&&", ast.Unary("not", V("p")), V("q")))


def test_cons_is_right_associative() -> None:
    assert expr("1 :: 2 :: xs") == ast.Cons(N("1"), ast.Cons(N("2"), V("xs")))


def test_unary_minus_is_looser_than_application() -> None:
    assert expr("- f x") == ast.Unary("-", ast.App(V("f"), V("x")))
    assert expr("f - x") == B("-", V("f"), V("x"))


def test_application_is_left_associative_and_field_binds_tighter() -> None:
    assert expr("f x r.age") == ast.App(ast.App(V("f"), V("x")), ast.Field(V("r"), "age"))


def test_application_to_a_list_literal_is_not_indexing() -> None:
    got = expr("tabulate [10, 20] (fun t -> t)")
    lam = ast.Lambda("t", None, V("t"))
    assert got == ast.App(ast.App(V("tabulate"), ast.ListLit((N("10"), N("20")))), lam)


def test_with_pair_components_stop_at_the_closing_angle() -> None:
    assert expr("<a + 1, b * 2>") == ast.WithPair(B("+", V("a"), N("1")), B("*", V("b"), N("2")))
    assert expr("a < b") == B("<", V("a"), V("b"))


# ---------------------------------------------------------------- binders and blocks


def test_fun_with_several_parameters_nests_lambdas() -> None:
    got = expr("fun (x : num) y -> x + y")
    inner = ast.Lambda("y", None, B("+", V("x"), V("y")))
    assert got == ast.Lambda("x", ast.TyName("num"), inner)


def test_let_in_is_a_block() -> None:
    got = expr("let x : num = 1 in x")
    assert got == ast.Block((ast.LetStmt("x", ast.TyName("num"), N("1")),), V("x"))


def test_block_statements() -> None:
    got = expr("{ let (a, b) = p; sample s = m; let c = a; return s }")
    assert got == ast.Block(
        (ast.LetTuple(("a", "b"), V("p")), ast.SampleStmt("s", V("m")), ast.LetStmt("c", None, V("a"))),
        ast.Return(V("s")),
    )


def test_record_literal_versus_block() -> None:
    assert expr("{ a = 1, b = x }") == ast.RecordLit((("a", N("1")), ("b", V("x"))))
    assert expr("{ x }") == ast.Block((), V("x"))


def test_case_arms_in_either_order() -> None:
    expected = ast.CaseList(V("xs"), N("0"), "h", "t", V("h"))
    assert expr("case xs of [] -> 0 | h :: t -> h") == expected
    assert expr("case xs of | h :: t -> h | [] -> 0") == expected
    sums = ast.CaseSum(V("v"), "a", V("a"), "b", V("b"))
    assert expr("case v of inr b -> b | inl a -> a") == sums


def test_inl_and_inr_are_ordinary_functions_outside_case() -> None:
    assert expr("inl x") == ast.App(V("inl"), V("x"))


def test_literals_tuples_unit_and_ascription() -> None:
    got = expr('(1.5e-3, "a\\"b", true, (), inf, (x : list num))')
    assert got == ast.Tuple((
        N("1.5e-3"), ast.StringLit('a"b'), ast.BoolLit(True), ast.UnitLit(), ast.InfLit(),
        ast.Ann(V("x"), ast.TyList(ast.TyName("num"))),
    ))


def test_bracketed_primitives_take_static_arguments() -> None:
    got = expr("laplace[eps / 2] (sum[0, cap] xs)")
    inner = ast.App(ast.Prim("sum", (N("0"), V("cap"))), V("xs"))
    assert got == ast.App(ast.Prim("laplace", (B("/", V("eps"), N("2")),)), inner)


# ---------------------------------------------------------------- types and declarations


def test_types() -> None:
    decl = parse_program(
        "type T = list num -[2]-> bag { a : int } -o fuzzy (vec[inf] num, <num & bool>) -> num + unit;"
    ).decls[0]
    assert isinstance(decl, ast.TypeDecl)
    num = ast.TyName("num")
    pair = ast.TyTuple((ast.TyVec("inf", num), ast.TyWith(num, ast.TyName("bool"))))
    right = ast.TyFun(ast.TyFuzzy(pair), ast.TySum(num, ast.TyName("unit")), "->")
    middle = ast.TyFun(ast.TyBag(ast.TyRecord((("a", ast.TyName("int")),))), right, "-o")
    assert decl.type == ast.TyFun(ast.TyList(num), middle, "-[]->", N("2"))


def test_def_parameters_bounds_and_recursion() -> None:
    decl = parse_program("def rec f (x : num) (db :[inf] bag num) = x;").decls[0]
    assert isinstance(decl, ast.DefDecl)
    assert decl.recursive and decl.result is None
    assert decl.params == (
        ast.Param("x", ast.TyName("num")),
        ast.Param("db", ast.TyBag(ast.TyName("num")), ast.InfLit()),
    )
    assert (decl.name_span.line, decl.name_span.col) == (1, 9)


def test_mechanism() -> None:
    source = """
    mechanism m (q : vec[inf] num, eps : num) : list num
      requires eps > 0
      requires forall i. dist(q[i]) >= 0
      privacy eps
    {
      var x = lap(2 / eps) align -dist(q[0]) + 1;
      if (!(x > 0) && x <= len(q)) { output x; } else if (x == 1) { q[0] = 2; } else { }
      while (x > 0) invariant dist(x) == 0 { x = x - lapplus(1); }
      return c ? max(x, 1) : 0;
    }
    """
    decl = parse_program(source).decls[0]
    assert isinstance(decl, ast.MechanismDecl)
    assert decl.privacy == V("eps")
    assert decl.requires[1] == ast.Forall("i", B(">=", ast.Dist(ast.Index(V("q"), V("i"))), N("0")))
    noise = ast.Noise("lap", B("/", N("2"), V("eps")), ast.Unary("-", ast.Dist(ast.Index(V("q"), N("0")))))
    assert decl.body[0] == ast.VarDecl("x", B("+", noise, N("1")))
    branch = decl.body[1]
    assert isinstance(branch, ast.IfStmt)
    assert branch.cond == B("&&", ast.Unary("not", B(">", V("x"), N("0"))),
                            B("<=", V("x"), ast.Call("len", (V("q"),))))
    assert branch.orelse == (ast.IfStmt(B("==", V("x"), N("1")), (ast.Assign("q", N("0"), N("2")),), ()),)
    loop = decl.body[2]
    assert isinstance(loop, ast.While) and loop.invariants == (B("==", ast.Dist(V("x")), N("0")),)
    assert decl.body[3] == ast.ReturnStmt(ast.If(V("c"), ast.Call("max", (V("x"), N("1"))), N("0")))


# ---------------------------------------------------------------- lexing and spans


def test_arrow_tokens_only_after_types() -> None:
    assert expr("x-one") == B("-", V("x"), V("one"))
    assert expr("x -[1, 2]") == B("-", V("x"), ast.ListLit((N("1"), N("2"))))


def test_comments_are_ignored_and_lines_counted() -> None:
    program = parse_program("/* a\n b */ // c\n\nlet x = 1; // d\nlet y = x;", "f.fz")
    second = program.decls[1]
    assert (second.span.line, second.span.col, second.span.end_line, second.span.end_col) == (5, 1, 5, 11)


def test_spans_cover_first_to_last_token() -> None:
    text = "def f (x : num) : num =\n  g (x + 1);"
    decl = parse_program(text, "s.fz").decls[0]
    assert isinstance(decl, ast.DefDecl)
    app = decl.body
    assert isinstance(app, ast.App)
    assert (app.span.line, app.span.col, app.span.end_line, app.span.end_col) == (2, 3, 2, 12)
    assert text[app.span.start:app.span.end] == "g (x + 1)"
    assert isinstance(app.arg, ast.Binary)
    assert text[app.arg.span.start:app.arg.span.end] == "(x + 1)"
    assert decl.span.start == 0 and decl.span.end == len(text)


def test_reserved_words_match_the_grammar() -> None:
    pattern = re.search(r"^NAME: /\(\?!\(([^)]*)\)", grammar_text(), re.MULTILINE)
    assert pattern is not None
    assert set(pattern.group(1).split("|")) == RESERVED


def test_deep_nesting_is_refused_with_a_diagnostic() -> None:
    with pytest.raises(FuzzError) as caught:
        parse_program("def f = " + "[" * 500 + "]" * 500 + ";")
    assert caught.value.diagnostics[0].code == "FZ109"
    with pytest.raises(FuzzError) as caught:
        parse_program("def f = " + " + ".join(["1"] * 1000) + ";")
    assert caught.value.diagnostics[0].code == "FZ109"
    assert parse_program("def f = " + "(" * 500 + "1" + ")" * 500 + ";").decls


def test_the_wheel_ships_the_grammar_the_parser_loads() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert shipped["grammar/fuzz.lark"] == "fuzzpy/grammar/fuzz.lark"
    assert grammar_text() == (ROOT / "grammar" / "fuzz.lark").read_text(encoding="utf-8")


def test_windows_line_endings_and_byte_order_mark() -> None:
    program = parse_program("\ufefflet x = 1;\r\nlet y = x;\r\n")
    assert program == parse_program("let x = 1;\nlet y = x;\n")
    second = program.decls[1]
    assert (second.span.line, second.span.col) == (2, 1)
    first = program.decls[0]
    assert (first.span.line, first.span.col) == (1, 1)
