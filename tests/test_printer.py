"""The pretty-printer: print -> parse gives back an equal tree (spans aside)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzpy.frontend.parser import parse_program
from fuzzpy.frontend.printer import print_program
from fuzzpy.language import syntax as ast

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").rglob("*.fz"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_round_trip(path: Path) -> None:
    program = parse_program(path.read_text(encoding="utf-8"), str(path))
    printed = print_program(program)
    assert parse_program(printed) == program
    assert print_program(parse_program(printed)) == printed  # printing is a fixed point


# ---------------------------------------------------------------- generated programs

names = st.sampled_from(["x", "y", "db", "row", "f", "count_1", "_tmp", "xs2"])
fields = st.sampled_from(["age", "income", "ward", "a", "b"])
numbers = st.sampled_from(["0", "1", "2.5", "100000", "1e-6", "0.1", "3E+2"])
strings = st.text(alphabet='ab "\\\n\tz', max_size=6)
ops = st.sampled_from(["||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/"])


def _record_fields(values: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(st.tuples(fields, values), min_size=1, max_size=3,
                    unique_by=lambda item: item[0]).map(tuple)


def _types() -> st.SearchStrategy:
    leaf_names = st.sampled_from(["num", "int", "bool", "Row"])

    def extend(inner: st.SearchStrategy) -> st.SearchStrategy:
        static = st.one_of(numbers.map(ast.NumLit), st.just(ast.InfLit()))
        return st.one_of(
            inner.map(ast.TyList), inner.map(ast.TyBag), inner.map(ast.TyFuzzy),
            st.builds(ast.TyVec, st.sampled_from(["1", "2", "inf"]), inner),
            st.lists(inner, min_size=2, max_size=3).map(lambda items: ast.TyTuple(tuple(items))),
            st.builds(ast.TyWith, inner, inner), st.builds(ast.TySum, inner, inner),
            _record_fields(inner).map(ast.TyRecord),
            st.builds(ast.TyFun, inner, inner, st.sampled_from(["->", "-o"])),
            st.builds(lambda p, r, s: ast.TyFun(p, r, "-[]->", s), inner, inner, static),
        )

    return st.recursive(leaf_names.map(ast.TyName), extend, max_leaves=6)


types = _types()

leaves = st.one_of(
    names.map(ast.Var), numbers.map(ast.NumLit), st.booleans().map(ast.BoolLit),
    strings.map(ast.StringLit), st.just(ast.UnitLit()), st.just(ast.InfLit()),
)


def _functional(inner: st.SearchStrategy) -> st.SearchStrategy:
    block_stmts = st.one_of(
        st.builds(ast.LetStmt, names, st.none() | types, inner),
        st.builds(ast.LetTuple, st.lists(names, min_size=2, max_size=3).map(tuple), inner),
        st.builds(ast.SampleStmt, names, inner),
    )
    prims = st.sampled_from(["laplace", "gauss", "sum", "clip", "group", "loop", "subsample"])
    return st.one_of(
        st.builds(ast.Binary, ops, inner, inner), st.builds(ast.Cons, inner, inner),
        st.builds(ast.Unary, st.sampled_from(["-", "not"]), inner),
        st.builds(ast.App, inner, inner),
        st.builds(ast.Lambda, names, st.none() | types, inner),
        st.builds(ast.If, inner, inner, inner),
        st.lists(inner, max_size=3).map(lambda items: ast.ListLit(tuple(items))),
        st.lists(inner, min_size=2, max_size=3).map(lambda items: ast.Tuple(tuple(items))),
        _record_fields(inner).map(ast.RecordLit),
        st.builds(ast.WithPair, inner, inner), st.builds(ast.Field, inner, fields),
        st.builds(ast.CaseSum, inner, names, inner, names, inner),
        st.builds(ast.CaseList, inner, inner, names, names, inner),
        inner.map(ast.Return), st.builds(ast.Ann, inner, types),
        st.builds(ast.Block, st.lists(block_stmts, max_size=3).map(tuple), inner),
        st.builds(ast.Prim, prims, st.lists(inner, min_size=1, max_size=2).map(tuple)),
    )


expressions = st.recursive(leaves, _functional, max_leaves=12)

mech_leaves = st.one_of(names.map(ast.Var), numbers.map(ast.NumLit),
                        st.booleans().map(ast.BoolLit), st.just(ast.InfLit()))


def _imperative(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.builds(ast.Binary, ops, inner, inner),
        st.builds(ast.Unary, st.sampled_from(["-", "not"]), inner),
        st.builds(ast.Index, inner, inner),
        st.builds(ast.Call, names, st.lists(inner, max_size=2).map(tuple)),
        st.builds(ast.Noise, st.sampled_from(["lap", "lapplus"]), inner, st.none() | inner),
        inner.map(ast.Dist), st.builds(ast.If, inner, inner, inner),
        st.builds(ast.Forall, names, inner),
    )


mech_expressions = st.recursive(mech_leaves, _imperative, max_leaves=8)


def _statements(inner: st.SearchStrategy) -> st.SearchStrategy:
    blocks = st.lists(inner, max_size=2).map(tuple)
    return st.one_of(
        st.builds(ast.IfStmt, mech_expressions, blocks, blocks),
        st.builds(ast.While, mech_expressions, st.lists(mech_expressions, max_size=2).map(tuple), blocks),
    )


simple_statements = st.one_of(
    st.builds(ast.VarDecl, names, mech_expressions),
    st.builds(ast.Assign, names, st.none() | mech_expressions, mech_expressions),
    st.builds(ast.ReturnStmt, mech_expressions), st.builds(ast.Output, mech_expressions),
)
statements = st.recursive(simple_statements, _statements, max_leaves=5)

params = st.builds(ast.Param, names, types, st.none() | numbers.map(ast.NumLit) | st.just(ast.InfLit()))
declarations = st.one_of(
    st.builds(ast.LetDecl, names, expressions),
    st.builds(ast.TypeDecl, names, types),
    st.builds(ast.DefDecl, names, st.lists(params, max_size=3).map(tuple), st.none() | types,
              expressions, st.booleans()),
    st.builds(ast.MechanismDecl, names, st.lists(st.builds(ast.Param, names, types), max_size=3).map(tuple),
              types, st.lists(mech_expressions, max_size=2).map(tuple), mech_expressions,
              st.lists(statements, max_size=3).map(tuple)),
)
programs = st.lists(declarations, min_size=1, max_size=3).map(lambda ds: ast.Program(tuple(ds)))


@settings(max_examples=300, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs)
def test_generated_programs_round_trip(program: ast.Program) -> None:
    printed = print_program(program)
    assert parse_program(printed) == program, printed


def test_a_variable_named_like_a_primitive_prints_back_as_a_variable() -> None:
    from fuzzpy.frontend.parser import parse_program
    from fuzzpy.frontend.printer import print_program

    program = parse_program("def f (sum : list num -> num) : num = sum [1, 2] + sum [3];\n", "t.fz")
    assert parse_program(print_program(program), "t.fz") == program
