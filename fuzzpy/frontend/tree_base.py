"""The base of the tree builder: spans, depth limit, operator precedence.

`BuilderBase` holds what every group of grammar rules needs (see
`parse_tree.TreeBuilder`, which assembles the groups): turning tokens and
nodes into spans, refusing trees nested too deeply, and giving binary
operators their precedence. The grammar hands binary operators over as flat
sequences `e1 op e2 op e3 ...`; `opseq` builds the tree by precedence
climbing, one recursion level per precedence level (never per operand), so
long chains such as `1 :: 2 :: ... :: []` cannot exhaust Python's stack.
"""

from __future__ import annotations

from typing import Any

from fuzzpy.frontend.lexer import Tok
from fuzzpy.language import syntax as ast
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.limits import MAX_LITERAL_CHARS, literal_value
from fuzzpy.language.source import Span, make_span

Children = list[Any]

# Deepest nesting of syntax nodes accepted. The LALR parser itself never
# recurses, but the checker, verifier, interpreter and printer walk the tree
# recursively; a cap keeps them far from Python's recursion limit.
MAX_DEPTH = 200

# Binding strength of the binary operators (higher binds tighter).
COMPARISON = 3
PRECEDENCE = {
    "==>": 0, "||": 1, "&&": 2,
    "==": COMPARISON, "!=": COMPARISON, "<": COMPARISON, "<=": COMPARISON,
    ">": COMPARISON, ">=": COMPARISON,
    "::": 4, "+": 5, "-": 5, "*": 6, "/": 6,
}
RIGHT_ASSOCIATIVE = {0, 4}  # `a ==> b ==> c` is `a ==> (b ==> c)`


def _append(c: Children) -> Children:
    """`list: list item | (empty)` -> one growing Python list."""
    if not c:
        return []
    c[0].append(c[1])
    return c[0]  # type: ignore[no-any-return]


def _extend(c: Children) -> Children:
    """`chain: operand op operand | chain op operand` -> [operand, op, operand, ...]."""
    if isinstance(c[0], list):
        c[0].extend(c[1:])
        return c[0]  # type: ignore[no-any-return]
    return c


class BuilderBase:
    """Helpers shared by the rule groups, and the rules both expression languages use.

    lark's transformer protocol needs only the rule methods (lark looks each
    up by the rule's name); not deriving from lark's `Transformer` spares a
    parse with cached tables from importing lark (`frontend.parser`)."""

    __visit_tokens__ = False  # lark: no callbacks for tokens (our lexer makes them)

    def __init__(self) -> None:
        self.file = "<input>"
        self.depth: dict[int, int] = {}

    # ------------------------------------------------------------ helpers

    def span(self, first: Any, last: Any) -> Span:
        """From the start of `first` to the end of `last` (tokens or nodes)."""
        if type(first) is not Tok:
            first = first.span
        if type(last) is not Tok:
            last = last.span
        return make_span(
            self.file, first.line, first.col, last.end_line, last.end_col, first.start, last.end
        )

    def token_span(self, token: Tok) -> Span:
        """The span of one token (as `span(token, token)`, without its type tests)."""
        return make_span(
            self.file, token.line, token.col, token.end_line, token.end_col, token.start, token.end
        )

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
            whole = node.span  # point at where it starts: the whole may be very long
            start = Span(whole.file, whole.line, whole.col, whole.line, whole.col + 1,
                         whole.start, whole.start + 1)
            raise self.fail(
                "FZ109",
                f"this expression or type is nested too deeply (more than {MAX_DEPTH} levels)",
                start,
                hint="split it into smaller definitions or `let`s",
            )
        depth_of[id(node)] = deepest + 1
        return node

    # ------------------------------------------------------------ shared by both expression languages

    def paren(self, c: Children) -> Any:
        """`(e)` is e, its span widened to the parentheses (so enclosing spans cover them)."""
        inner = c[1]
        # `dataclasses.replace(inner, span=...)` without its walk over the
        # field definitions: every field of a syntax node is an init field.
        node = type(inner)(**{**vars(inner), "span": self.span(c[0], c[2])})
        # `inner` is dropped now and its id may be reused: move its depth over.
        self.depth[id(node)] = self.depth.pop(id(inner), 0)
        return node

    def number(self, c: Children) -> ast.NumLit:
        if literal_value(c[0].value) is None:
            raise self.fail(
                "FZ115",
                "this number is out of range: a number is zero or lies between 2.2e-308 and 1.8e308 in "
                f"magnitude (the range of doubles), written in at most {MAX_LITERAL_CHARS} characters",
                self.token_span(c[0]),
                hint="write a smaller number; `run` computes with doubles, which cannot carry it",
            )
        return ast.NumLit(c[0].value, self.token_span(c[0]))

    def true(self, c: Children) -> ast.BoolLit:
        return ast.BoolLit(True, self.token_span(c[0]))

    def false(self, c: Children) -> ast.BoolLit:
        return ast.BoolLit(False, self.token_span(c[0]))

    def inf(self, c: Children) -> ast.InfLit:
        return ast.InfLit(self.token_span(c[0]))

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

    # ------------------------------------------------------------ binary operators

    def opchain(self, c: Children) -> Children:
        return _extend(c)

    def opseq(self, c: Children) -> Any:
        """`e1 op e2 op e3 ...` -> a tree, by precedence climbing (see PRECEDENCE).

        Recursion goes one level per precedence level, never per operand, so
        long chains (`1 :: 2 :: ... :: []`) cannot exhaust Python's stack.
        """
        sequence = c[0]
        if len(sequence) == 3:  # the common case: one operator, nothing to climb
            return self._combine(sequence[0], sequence[1], sequence[2])
        return self._climb_all(sequence)

    def arith(self, c: Children) -> Any:
        """The components of a with-pair: `e1 op e2 ...` with op in + - * /."""
        return self._climb_all(c)

    def _climb_all(self, sequence: Children) -> Any:
        self.operands = sequence
        self.position = 1
        return self._climb(sequence[0], 0)

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
