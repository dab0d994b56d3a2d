"""Build the syntax tree (fuzzpy/syntax.py) during the parse.

`TreeBuilder` is lark's transformer for grammar/fuzz.lark: lark turns each of
its methods into the callback of a rule, which the LALR driver calls the
moment the rule is reduced, so no intermediate lark tree is built. The
grammar keeps every token (``keep_all_tokens``), which is what gives each
node a span from its first to its last token; each method below therefore
receives the rule's children in grammar order, keywords and brackets
included.

The rules are grouped by language: declarations and functional expressions
here, `parse_tree_mechanisms` and `parse_tree_types` for the others, and
`parse_tree_base` for spans, the depth limit and operator precedence. A few
checks that the grammar cannot express are made while building, each raising
a `FuzzError` with an FZ1xx diagnostic: chained comparisons, case arms of
different kinds, fields named twice, vector norms other than 1, 2 or inf,
and nesting too deep for the later (recursive) phases.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fuzzpy.frontend import ranges
from fuzzpy.frontend.lexer import Tok
from fuzzpy.frontend.tree_base import MAX_DEPTH, Children, _append
from fuzzpy.frontend.tree_mechanisms import MechanismRules
from fuzzpy.frontend.tree_types import TypeRules
from fuzzpy.language import syntax as ast
from fuzzpy.language.source import Span

__all__ = ["MAX_DEPTH", "TreeBuilder", "unescape"]


class TreeBuilder(MechanismRules, TypeRules):
    """One method per grammar rule (or alias) of grammar/fuzz.lark.

    Declarations and functional expressions are here; mechanisms and types
    come from `MechanismRules` and `TypeRules`, spans, the depth limit and
    operator precedence from `parse_tree_base.BuilderBase`.
    """

    # ------------------------------------------------------------ declarations

    def start(self, c: Children) -> ast.Program:
        return ast.Program(tuple(c[1]), self.file, tuple(c[0]))

    def imports(self, c: Children) -> Children:
        return _append(c)

    def import_decl(self, c: Children) -> ast.ImportDecl:
        _, (module, module_span), names, semi = c
        listed = None if names is None else tuple(t.value for t in names)
        spans = () if names is None else tuple(self.token_span(t) for t in names)
        return ast.ImportDecl(module, listed, self.span(c[0], semi), module_span, spans)

    def module_path(self, c: Children) -> tuple[tuple[str, ...], Span]:
        if len(c) == 1:
            return (c[0].value,), self.token_span(c[0])
        (parts, span), _, last = c
        return (*parts, last.value), span.merge(self.token_span(last))

    def import_list(self, c: Children) -> Children | None:
        return c[1] if c else None

    def import_names(self, c: Children) -> Children:
        return [c[0]] if len(c) == 1 else [*c[0], c[2]]

    def decls(self, c: Children) -> Children:
        return _append(c)

    def let_decl(self, c: Children) -> ast.LetDecl:
        return ast.LetDecl(c[1].value, c[3], self.span(c[0], c[4]))

    def type_decl(self, c: Children) -> ast.TypeDecl:
        return ast.TypeDecl(c[1].value, c[3], self.span(c[0], c[4]))

    def def_decl(self, c: Children) -> ast.DefDecl:
        _, recursive, name, params, result, measure, _, body, semi = c
        return ast.DefDecl(
            name.value, tuple(params), result, body, recursive,
            self.span(c[0], semi), self.token_span(name), measure=measure,
        )

    def assume_def_decl(self, c: Children) -> ast.DefDecl:
        decl = self.def_decl(c[1:])
        return dataclasses.replace(decl, span=self.span(c[0], c[-1]), assumed=True)

    def def_measure(self, c: Children) -> ast.Measure | None:
        if not c:
            return None
        return ast.Measure(c[1].value, c[3], self.span(c[0], c[4]))

    def rec_flag(self, c: Children) -> bool:
        return bool(c)

    def def_params(self, c: Children) -> Children:
        return _append(c)

    def def_param(self, c: Children) -> ast.Param:
        return ast.Param(c[1].value, c[3], None, self.span(c[0], c[4]))

    def def_param_sens(self, c: Children) -> ast.Param:
        return ast.Param(c[1].value, c[6], c[4], self.span(c[0], c[7]))

    def ret_type(self, c: Children) -> Any:
        return c[1] if c else None

    # ------------------------------------------------------------ functional expressions

    def lambda_(self, c: Children) -> ast.Lambda:
        params, body = c[1], c[3]
        node = body
        for index in range(len(params) - 1, -1, -1):
            name, param_type, first = params[index]
            start = c[0] if index == 0 else first
            node = self.nest(ast.Lambda(name, param_type, node, self.span(start, body)), node, param_type)
        return node

    def lam_params(self, c: Children) -> Children:
        return c

    def lam_param(self, c: Children) -> tuple[str, Any, Tok]:
        if len(c) == 1:
            return c[0].value, None, c[0]
        return c[1].value, c[3], c[0]

    def if_expr(self, c: Children) -> ast.If:
        return self.nest(ast.If(c[1], c[3], c[5], self.span(c[0], c[5])), c[1], c[3], c[5])

    def case_expr(self, c: Children) -> ast.CaseSum | ast.CaseList:
        scrutinee, first, second = c[1], c[4], c[6]
        kinds = {first[0], second[0]}
        span = self.span(c[0], second[2])
        if kinds == {"inl", "inr"}:
            left, right = (first, second) if first[0] == "inl" else (second, first)
            node: Any = ast.CaseSum(scrutinee, left[1], left[2], right[1], right[2], span)
            return self.nest(node, scrutinee, left[2], right[2])
        if kinds == {"nil", "cons"}:
            nil, cons = (first, second) if first[0] == "nil" else (second, first)
            head, tail = cons[1]
            node = ast.CaseList(scrutinee, nil[2], head, tail, cons[2], span)
            return self.nest(node, scrutinee, nil[2], cons[2])
        raise self.fail(
            "FZ110",
            "the two arms of this `case` do not fit together",
            self.span(first[3], second[2]),
            hint="use `inl x -> a | inr y -> b` for a sum, `[] -> a | h :: t -> b` for a list",
        )

    def case_bar(self, c: Children) -> None:
        return None

    def arm_inl(self, c: Children) -> tuple[str, str, Any, Tok]:
        return "inl", c[1].value, c[3], c[0]

    def arm_inr(self, c: Children) -> tuple[str, str, Any, Tok]:
        return "inr", c[1].value, c[3], c[0]

    def arm_nil(self, c: Children) -> tuple[str, None, Any, Tok]:
        return "nil", None, c[3], c[0]

    def arm_cons(self, c: Children) -> tuple[str, tuple[str, str], Any, Tok]:
        return "cons", (c[0].value, c[2].value), c[4], c[0]

    def let_in(self, c: Children) -> ast.Block:
        stmt = ast.LetStmt(c[1].value, c[2], c[4], self.span(c[0], c[4]))
        return self.nest(ast.Block((stmt,), c[6], self.span(c[0], c[6])), c[4], c[6], c[2])

    def let_tuple_in(self, c: Children) -> ast.Block:
        stmt = ast.LetTuple(c[1], c[3], self.span(c[0], c[3]))
        return self.nest(ast.Block((stmt,), c[5], self.span(c[0], c[5])), c[3], c[5])

    def let_type(self, c: Children) -> Any:
        return c[1] if c else None

    def tuple_names(self, c: Children) -> tuple[str, ...]:
        return tuple(token.value for token in c[1:-1:2])

    def return_expr(self, c: Children) -> ast.Return:
        return self.nest(ast.Return(c[1], self.span(c[0], c[1])), c[1])

    def neg(self, c: Children) -> ast.Unary:
        return self.nest(ast.Unary("-", c[1], self.span(c[0], c[1])), c[1])

    def not_(self, c: Children) -> ast.Unary:
        return self.nest(ast.Unary("not", c[1], self.span(c[0], c[1])), c[1])

    def app(self, c: Children) -> ast.App:
        return self.nest(ast.App(c[0], c[1], self.span(c[0], c[1])), c[0], c[1])

    def with_pair(self, c: Children) -> ast.WithPair:
        return self.nest(ast.WithPair(c[1], c[3], self.span(c[0], c[4])), c[1], c[3])

    def field(self, c: Children) -> ast.Field:
        return self.nest(ast.Field(c[0], c[2].value, self.span(c[0], c[2])), c[0])

    def var(self, c: Children) -> ast.Var:
        return ast.Var(c[0].value, self.token_span(c[0]))

    def string(self, c: Children) -> ast.StringLit:
        return ast.StringLit(unescape(c[0].value[1:-1]), self.token_span(c[0]))

    def unit(self, c: Children) -> ast.UnitLit:
        return ast.UnitLit(self.span(c[0], c[1]))

    def tuple(self, c: Children) -> ast.Tuple:
        items = tuple(c[1:-1:2])
        return self.nest(ast.Tuple(items, self.span(c[0], c[-1])), *items)

    def ann(self, c: Children) -> ast.Ann:
        return self.nest(ast.Ann(c[1], c[3], self.span(c[0], c[4])), c[1], c[3])

    def list_lit(self, c: Children) -> ast.ListLit:
        items = tuple(c[1:-1:2])
        return self.nest(ast.ListLit(items, self.span(c[0], c[-1])), *items)

    def range_lit(self, c: Children) -> ast.ListLit:
        """`[a .. c]` or `[a, b .. c]` -> the list literal of its elements (`ranges`)."""
        span = self.span(c[0], c[-1])
        bounds = [item for item in c[1:-1] if not isinstance(item, Tok)]
        try:
            items = ranges.desugar(bounds, span)
        except ranges.RangeProblem as problem:
            raise self.fail(problem.code, problem.message, problem.span, hint=problem.hint) from None
        node = ast.ListLit(items, span)
        self.depth[id(node)] = 2
        return node

    def record(self, c: Children) -> ast.RecordLit:
        fields = self._fields(c)
        node = ast.RecordLit(fields, self.span(c[0], c[-1]))
        return self.nest(node, *(value for _, value in fields))

    def block(self, c: Children) -> ast.Block:
        inner = [item for item in c[1:-1] if not isinstance(item, Tok)]
        stmts, result = tuple(inner[:-1]), inner[-1]
        node = ast.Block(stmts, result, self.span(c[0], c[-1]))
        return self.nest(node, result, *(stmt.expr for stmt in stmts))

    def let_stmt(self, c: Children) -> ast.LetStmt:
        return ast.LetStmt(c[1].value, c[2], c[4], self.span(c[0], c[4]))

    def let_tuple_stmt(self, c: Children) -> ast.LetTuple:
        return ast.LetTuple(c[1], c[3], self.span(c[0], c[3]))

    def sample_stmt(self, c: Children) -> ast.SampleStmt:
        return ast.SampleStmt(c[1].value, c[3], self.span(c[0], c[3]))

    def prim(self, c: Children) -> ast.Prim:
        args = tuple(c[2:-1:2])
        return self.nest(ast.Prim(c[0].value, args, self.span(c[0], c[-1])), *args)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def unescape(body: str) -> str:
    """The value of a string literal's body: `\\n \\t \\r \\" \\\\`; others kept."""
    if "\\" not in body:
        return body
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            nxt = body[index + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)
