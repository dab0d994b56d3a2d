"""Build the syntax tree (fuzzpy/syntax.py) while lark parses.

`TreeBuilder` is handed to the LALR parser as its transformer, so every rule
of grammar/fuzz.lark is turned into syntax nodes the moment it is reduced: no
intermediate lark tree is built. The grammar keeps every token
(``keep_all_tokens``), which is what gives each node a span from its first to
its last token; each method below therefore receives the rule's children in
grammar order, keywords and brackets included.

A few checks that the grammar cannot express are made here, each raising a
`FuzzError` with an FZ1xx diagnostic: reserved words used as names, case arms
of different kinds, fields named twice, vector norms other than 1, 2 or inf,
and nesting too deep for the later (recursive) phases.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lark import Transformer

from fuzzpy import syntax as ast
from fuzzpy.diagnostics import Diagnostic, FuzzError
from fuzzpy.lexer import Tok
from fuzzpy.source import Span

# Deepest nesting of syntax nodes accepted. The LALR parser itself never
# recurses, but the checker, verifier, interpreter and printer walk the tree
# recursively; a cap keeps them far from Python's recursion limit.
MAX_DEPTH = 200

Children = list[Any]
_new_span = object.__new__
_set = object.__setattr__

# Binding strength of the binary operators (higher binds tighter).
COMPARISON = 3
PRECEDENCE = {
    "||": 1, "&&": 2,
    "==": COMPARISON, "!=": COMPARISON, "<": COMPARISON, "<=": COMPARISON,
    ">": COMPARISON, ">=": COMPARISON,
    "::": 4, "+": 5, "-": 5, "*": 6, "/": 6,
}
RIGHT_ASSOCIATIVE = {4}


class TreeBuilder(Transformer):  # type: ignore[type-arg]
    """One method per grammar rule (or alias); see grammar/fuzz.lark."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.file = "<input>"
        self.depth: dict[int, int] = {}

    # ------------------------------------------------------------ helpers

    def span(self, first: Any, last: Any) -> Span:
        """From the start of `first` to the end of `last` (tokens or nodes)."""
        if type(first) is not Tok:
            first = first.span
        if type(last) is not Tok:
            last = last.span
        # Span is a frozen dataclass without __post_init__; filling its
        # __dict__ directly builds the same value about four times faster
        # than its generated __init__ (this is the parser's hottest line).
        span = _new_span(Span)
        _set(span, "__dict__", {
            "file": self.file, "line": first.line, "col": first.col, "end_line": last.end_line,
            "end_col": last.end_col, "start": first.start, "end": last.end,
        })
        return span  # type: ignore[no-any-return]

    def token_span(self, token: Tok) -> Span:
        return self.span(token, token)

    def fail(self, code: str, message: str, span: Span, hint: str | None = None) -> FuzzError:
        return FuzzError((Diagnostic(code, message, span, hint=hint),))

    def nest(self, node: Any, *children: Any) -> Any:
        """Record `node`'s nesting depth; refuse trees deeper than MAX_DEPTH."""
        depth_of = self.depth
        deepest = 0
        for child in children:
            child_depth = depth_of.get(id(child), 0)
            if child_depth > deepest:
                deepest = child_depth
        if deepest >= MAX_DEPTH:
            raise self.fail(
                "FZ109",
                f"this is nested too deeply (more than {MAX_DEPTH} levels)",
                node.span,
                hint="split it into smaller definitions or `let`s",
            )
        depth_of[id(node)] = deepest + 1
        return node

    # ------------------------------------------------------------ declarations

    def start(self, c: Children) -> ast.Program:
        return ast.Program(tuple(c), self.file)

    def let_decl(self, c: Children) -> ast.LetDecl:
        return ast.LetDecl(c[1].value, c[3], self.span(c[0], c[4]))

    def type_decl(self, c: Children) -> ast.TypeDecl:
        return ast.TypeDecl(c[1].value, c[3], self.span(c[0], c[4]))

    def def_decl(self, c: Children) -> ast.DefDecl:
        _, recursive, name, params, result, _, body, semi = c
        return ast.DefDecl(
            name.value, tuple(params), result, body, recursive,
            self.span(c[0], semi), self.token_span(name),
        )

    def rec_flag(self, c: Children) -> bool:
        return bool(c)

    def def_params(self, c: Children) -> Children:
        return c

    def def_param(self, c: Children) -> ast.Param:
        return ast.Param(c[1].value, c[3], None, self.span(c[0], c[4]))

    def def_param_sens(self, c: Children) -> ast.Param:
        return ast.Param(c[1].value, c[6], c[4], self.span(c[0], c[7]))

    def ret_type(self, c: Children) -> Any:
        return c[1] if c else None

    # ------------------------------------------------------------ mechanisms

    def mech_decl(self, c: Children) -> ast.MechanismDecl:
        name, params, result, requires, privacy = c[1], c[3], c[6], c[7], c[9]
        body, closing = c[10]
        return ast.MechanismDecl(
            name.value, tuple(params), result, tuple(requires),
            privacy, body, self.span(c[0], closing), self.token_span(name),
        )

    def mech_params(self, c: Children) -> Children:
        return c[0::2]

    def mech_param(self, c: Children) -> ast.Param:
        return ast.Param(c[0].value, c[2], None, self.span(c[0], c[2]))

    def mech_requires(self, c: Children) -> Children:
        return c[1::2]

    def mech_body(self, c: Children) -> tuple[tuple[ast.Stmt, ...], Tok]:
        return tuple(c[1:-1]), c[-1]

    def var_stmt(self, c: Children) -> ast.VarDecl:
        return ast.VarDecl(c[1].value, c[3], self.span(c[0], c[4]))

    def assign_stmt(self, c: Children) -> ast.Assign:
        return ast.Assign(c[0].value, None, c[2], self.span(c[0], c[3]))

    def assign_index_stmt(self, c: Children) -> ast.Assign:
        return ast.Assign(c[0].value, c[2], c[5], self.span(c[0], c[6]))

    def if_stmt(self, c: Children) -> ast.IfStmt:
        then, closing = c[4]
        orelse: tuple[ast.Stmt, ...] = ()
        if c[5] is not None:
            orelse, closing = c[5]
        return ast.IfStmt(c[2], then, orelse, self.span(c[0], closing))

    def else_part(self, c: Children) -> tuple[tuple[ast.Stmt, ...], Any] | None:
        if not c:
            return None
        if isinstance(c[1], ast.IfStmt):
            return (c[1],), c[1]
        return c[1]

    def while_stmt(self, c: Children) -> ast.While:
        body, closing = c[5]
        return ast.While(c[2], tuple(c[4]), body, self.span(c[0], closing))

    def invariants(self, c: Children) -> Children:
        return c[1::2]

    def return_stmt(self, c: Children) -> ast.ReturnStmt:
        return ast.ReturnStmt(c[1], self.span(c[0], c[2]))

    def output_stmt(self, c: Children) -> ast.Output:
        return ast.Output(c[1], self.span(c[0], c[2]))

    # ------------------------------------------------------------ mechanism expressions

    def m_forall(self, c: Children) -> ast.Forall:
        node = ast.Forall(c[1].value, c[3], self.span(c[0], c[3]))
        return self.nest(node, c[3])

    def m_ternary(self, c: Children) -> ast.If:
        return self.nest(ast.If(c[0], c[2], c[4], self.span(c[0], c[4])), c[0], c[2], c[4])

    def m_opseq(self, c: Children) -> Any:
        return self.opseq(c)

    def m_binop(self, c: Children) -> Tok:
        return c[0]  # type: ignore[no-any-return]

    def m_neg(self, c: Children) -> ast.Unary:
        return self.nest(ast.Unary("-", c[1], self.span(c[0], c[1])), c[1])

    def m_not(self, c: Children) -> ast.Unary:
        return self.nest(ast.Unary("not", c[1], self.span(c[0], c[1])), c[1])

    def m_index(self, c: Children) -> ast.Index:
        return self.nest(ast.Index(c[0], c[2], self.span(c[0], c[3])), c[0], c[2])

    def m_var(self, c: Children) -> ast.Var:
        return ast.Var(c[0].value, self.token_span(c[0]))

    def m_call(self, c: Children) -> ast.Call:
        args = tuple(c[2])
        return self.nest(ast.Call(c[0].value, args, self.span(c[0], c[3])), *args)

    def m_args(self, c: Children) -> Children:
        return c[0::2]

    def m_lap(self, c: Children) -> ast.Noise:
        return self._noise("lap", c)

    def m_lapplus(self, c: Children) -> ast.Noise:
        return self._noise("lapplus", c)

    def _noise(self, kind: str, c: Children) -> ast.Noise:
        align = c[4]
        node = ast.Noise(kind, c[2], align, self.span(c[0], align if align is not None else c[3]))
        return self.nest(node, c[2], align)

    def m_align(self, c: Children) -> Any:
        return c[1] if c else None

    def m_dist(self, c: Children) -> ast.Dist:
        return self.nest(ast.Dist(c[2], self.span(c[0], c[3])), c[2])

    # ------------------------------------------------------------ types

    def ty_arrow(self, c: Children) -> ast.TyFun:
        node = ast.TyFun(c[0], c[2], c[1].value, None, self.span(c[0], c[2]))
        return self.nest(node, c[0], c[2])

    def ty_sens_arrow(self, c: Children) -> ast.TyFun:
        node = ast.TyFun(c[0], c[5], "-[]->", c[2], self.span(c[0], c[5]))
        return self.nest(node, c[0], c[2], c[5])

    def ty_sum(self, c: Children) -> ast.TySum:
        return self.nest(ast.TySum(c[0], c[2], self.span(c[0], c[2])), c[0], c[2])

    def ty_list(self, c: Children) -> ast.TyList:
        return self.nest(ast.TyList(c[1], self.span(c[0], c[1])), c[1])

    def ty_bag(self, c: Children) -> ast.TyBag:
        return self.nest(ast.TyBag(c[1], self.span(c[0], c[1])), c[1])

    def ty_fuzzy(self, c: Children) -> ast.TyFuzzy:
        return self.nest(ast.TyFuzzy(c[1], self.span(c[0], c[1])), c[1])

    def ty_vec(self, c: Children) -> ast.TyVec:
        norm = c[2].value
        if norm not in ("1", "2", "inf"):
            raise self.fail(
                "FZ112",
                f"`vec[{norm}]` is not a vector type: the norm must be 1, 2 or inf",
                self.token_span(c[2]),
                hint="write `vec[1]`, `vec[2]` or `vec[inf]`",
            )
        return self.nest(ast.TyVec(norm, c[4], self.span(c[0], c[4])), c[4])

    def vec_norm(self, c: Children) -> Tok:
        return c[0]  # type: ignore[no-any-return]

    def ty_name(self, c: Children) -> ast.TyName:
        return ast.TyName(c[0].value, self.token_span(c[0]))

    def ty_tuple(self, c: Children) -> ast.TyTuple:
        items = tuple(c[1:-1:2])
        return self.nest(ast.TyTuple(items, self.span(c[0], c[-1])), *items)

    def ty_with(self, c: Children) -> ast.TyWith:
        return self.nest(ast.TyWith(c[1], c[3], self.span(c[0], c[4])), c[1], c[3])

    def ty_record(self, c: Children) -> ast.TyRecord:
        fields = self._fields(c)
        node = ast.TyRecord(fields, self.span(c[0], c[-1]))
        return self.nest(node, *(value for _, value in fields))

    def _fields(self, c: Children) -> tuple[tuple[str, Any], ...]:
        """`{ f <sep> v, g <sep> w }` children -> ((f, v), (g, w)), names unique."""
        seen: set[str] = set()
        fields = []
        for index in range(1, len(c) - 1, 4):
            token = c[index]
            field_name = token.value
            if field_name in seen:
                raise self.fail(
                    "FZ111", f"the field `{field_name}` is named twice", self.token_span(token)
                )
            seen.add(field_name)
            fields.append((field_name, c[index + 2]))
        return tuple(fields)

    # ------------------------------------------------------------ functional expressions

    def paren(self, c: Children) -> Any:
        """`(e)` is e, its span widened to the parentheses (so enclosing spans cover them)."""
        inner = c[1]
        node = replace(inner, span=self.span(c[0], c[2]))
        self.depth[id(node)] = self.depth.get(id(inner), 0)
        return node

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

    def binop(self, c: Children) -> Tok:
        return c[0]  # type: ignore[no-any-return]

    def arith_op(self, c: Children) -> Tok:
        return c[0]  # type: ignore[no-any-return]

    def opseq(self, c: Children) -> Any:
        """`e1 op e2 op e3 ...` -> a tree, by precedence climbing (see PRECEDENCE).

        Recursion goes one level per precedence level, never per operand, so
        long chains (`1 :: 2 :: ... :: []`) cannot exhaust Python's stack.
        """
        self.operands = c
        self.position = 1
        return self._climb(c[0], 0)

    def _climb(self, left: Any, minimum: int) -> Any:
        items = self.operands
        while self.position < len(items) and PRECEDENCE[items[self.position].value] >= minimum:
            op = items[self.position]
            level = PRECEDENCE[op.value]
            operators, operands = [op], [left, self._operand(level)]
            if level in RIGHT_ASSOCIATIVE:
                while self.position < len(items) and PRECEDENCE[items[self.position].value] == level:
                    operators.append(items[self.position])
                    operands.append(self._operand(level))
                right = operands[-1]
                for index in range(len(operators) - 1, -1, -1):
                    right = self._combine(operands[index], operators[index], right)
                left = right
                continue
            if level == COMPARISON and self.position < len(items):
                after = items[self.position]
                if PRECEDENCE[after.value] == COMPARISON:
                    raise self.fail(
                        "FZ113", "comparisons do not chain", self.token_span(after),
                        hint="write `a < b && b < c`, or add parentheses",
                    )
            left = self._combine(left, op, operands[1])
        return left

    def _operand(self, level: int) -> Any:
        """The operand after the operator at `position`, with every tighter operator applied."""
        items = self.operands
        right = items[self.position + 1]
        self.position += 2
        while self.position < len(items) and PRECEDENCE[items[self.position].value] > level:
            right = self._climb(right, PRECEDENCE[items[self.position].value])
        return right

    def _combine(self, left: Any, op: Tok, right: Any) -> Any:
        span = self.span(left, right)
        if op.value == "::":
            return self.nest(ast.Cons(left, right, span), left, right)
        return self.nest(ast.Binary(op.value, left, right, span), left, right)

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

    def number(self, c: Children) -> ast.NumLit:
        return ast.NumLit(c[0].value, self.token_span(c[0]))

    def string(self, c: Children) -> ast.StringLit:
        return ast.StringLit(unescape(c[0].value[1:-1]), self.token_span(c[0]))

    def true(self, c: Children) -> ast.BoolLit:
        return ast.BoolLit(True, self.token_span(c[0]))

    def false(self, c: Children) -> ast.BoolLit:
        return ast.BoolLit(False, self.token_span(c[0]))

    def inf(self, c: Children) -> ast.InfLit:
        return ast.InfLit(self.token_span(c[0]))

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

    def prim_name(self, c: Children) -> Tok:
        return c[0]  # type: ignore[no-any-return]

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
