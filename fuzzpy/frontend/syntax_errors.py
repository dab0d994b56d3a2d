"""Syntax errors in words a user knows.

lark reports a parse error in its own vocabulary (terminal names such as
``RPAR`` or ``__ANON_3``, parser states). This module turns one error into one
`Diagnostic`: it names tokens as they are written (`` `)` ``), groups what was
expected ("an expression", "a type", "a name"), recognises the common
mistakes (a missing `;`, an unclosed or stray bracket, an unterminated comment
or string, a reserved word used as a name) and points at the place to fix.

Three sources of evidence:

* the exact set of tokens the parser could accept at the error
  (`Tables.acceptable`; the table's own lookahead sets are merged by LALR
  and too generous);
* the parser's value stack, which holds the unreduced tokens: the brackets
  still open and the declaration being parsed;
* a bracket-matching pass over the whole text (`match_brackets`), which says
  whether an open bracket is closed later on, or never.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fuzzpy.frontend.lalr import ParseError, Tables
from fuzzpy.frontend.lexer import RESERVED, LexError, Tok
from fuzzpy.language.diagnostics import Diagnostic, Label
from fuzzpy.language.source import Source, Span

if TYPE_CHECKING:
    from lark import Lark

OPENERS = {"(": ")", "[": "]", "{": "}", "-[": "]"}
CLOSERS = {")": "(", "]": "[", "}": "{"}

# What may follow a complete expression or type and extend it: listed only
# when nothing else was expected.
_CONTINUATIONS = {
    "||", "&&", "==", "!=", "<", "<=", ">", ">=", "::", "+", "-", "*", "/", ".", "?",
    "->", "-o", "-[", "align",
}
_EXPRESSION_STARTS = {
    "NAME", "NUMBER", "STRING", "(", "[", "{", "<", "true", "false", "inf", "not", "-", "!",
    "fun", "if", "case", "let", "return", "lap", "lapplus", "dist", "forall",
    "laplace", "gauss", "gauss_dp", "geometric", "staircase", "dgauss", "sum", "clip", "clip2", "vsum", "group", "expmech", "loop", "iterate", "subsample",
    "rr", "krr", "shuffle", "rr_estimate", "krr_estimate",
    "choose", "bootstrap", "ptr_median", "ptr_quantile", "smooth_median", "smooth_quantile", "wishart", "join",
}
_NAMED = {"NAME": "a name", "NUMBER": "a number", "STRING": "a string", "$END": "the end of the file"}
_DECLARATION_WORDS = {"def": "the definition of", "let": "the constant", "type": "the type",
                      "mechanism": "the mechanism"}
_STATEMENT_STARTS = {"def", "let", "type", "mechanism", "sample", "var", "while", "output",
                     "return", "if"}
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"')
_BRACKET_SCAN = re.compile(r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|"(?:[^"\\\n]|\\.)*"?|-\[|[()\[\]{}]')


def syntax_error(
    error: ParseError | LexError, source: Source, parser: Lark, tables: Tables
) -> Diagnostic:
    """The diagnostic for one parse error (from the parser or the lexer)."""
    unterminated = _unterminated(source, _error_offset(error, source))
    if unterminated is not None:
        return unterminated
    if isinstance(error, LexError):
        return _unexpected_character(error, source)
    return _Explainer(error, source, parser, tables).diagnose()


class _Explainer:
    """Everything known at one unexpected token, and the rules that use it."""

    def __init__(self, error: ParseError, source: Source, parser: Lark, tables: Tables) -> None:
        self.source = source
        self.token = error.token
        self.text = "" if error.token.type == "$END" else str(error.token)
        self.words = {t.name: t.pattern.value for t in parser.terminals if t.pattern.type == "str"}
        self.stack: list[Any] = list(error.values)
        self.expected = tables.acceptable(error.states)
        self.previous = _last_positioned(self.stack)
        self.here = _token_span(source, self.token)

    def written(self, names: set[str]) -> set[str]:
        """Terminal names -> how they are written (regex terminals keep their name)."""
        return {self.words.get(name, name) for name in names}

    def diagnose(self) -> Diagnostic:
        return (
            self.bracket_problem()
            or self.reserved_word()
            or self.missing_semicolon()
            or self.generic()
        )

    # -------------------------------------------------------- rules

    def bracket_problem(self) -> Diagnostic | None:
        open_brackets = _open_brackets(self.stack)
        if self.text in CLOSERS:
            if not open_brackets:
                return Diagnostic(
                    "FZ105", f"unexpected `{self.text}`: there is no `{CLOSERS[self.text]}` to close",
                    self.here, hint="remove it, or add the opening bracket it belongs to",
                )
            if OPENERS[str(open_brackets[-1])] != self.text:
                return self.mismatched(open_brackets[-1])
        if open_brackets:
            innermost = open_brackets[-1]
            closes = match_brackets(self.source.text)
            if closes.get(innermost.start) is None:
                return self.unclosed(innermost)
        return None

    def reserved_word(self) -> Diagnostic | None:
        if self.text in RESERVED and "NAME" in self.expected and "NUMBER" not in self.expected:
            return Diagnostic(
                "FZ108", f"`{self.text}` is a reserved word and cannot be used as a name",
                self.here, hint=f"choose another name, such as `{self.text}_`",
            )
        return None

    def missing_semicolon(self) -> Diagnostic | None:
        if "SEMICOLON" not in self.expected or not self.ends_statement():
            return None
        where = _after(self.source, self.previous)
        first = next((item for item in self.stack if isinstance(item, Tok)), None)
        if first is not None and first.value in _DECLARATION_WORDS and not _open_brackets(self.stack):
            name = next((i for i in self.stack if isinstance(i, Tok) and i.type == "NAME"), None)
            what = _DECLARATION_WORDS[first.value] + (f" `{name}`" if name is not None else "")
            return Diagnostic("FZ107", f"expected `;` after {what}", where,
                              hint="every declaration ends with `;`")
        return Diagnostic("FZ107", "expected `;` at the end of this statement", where,
                          hint="statements are separated by `;`")

    def ends_statement(self) -> bool:
        """True when the unexpected token cannot continue what came before."""
        if self.token.type == "$END" or self.text in _STATEMENT_STARTS or self.text in CLOSERS:
            return True
        end = _end_line(self.previous)
        return end is not None and self.token.line is not None and self.token.line > end

    def generic(self) -> Diagnostic:
        code = "FZ103" if self.token.type == "$END" else "FZ102"
        hint = self.hint()
        what = self.describe_expected()
        if self.text in ("and", "or"):
            return Diagnostic(code, f"`{self.text}` is not an operator", self.here, hint=hint)
        unexpected = "the end of the file" if self.token.type == "$END" else f"`{self.text}`"
        if what and isinstance(self.previous, Tok) and what.startswith(("an expression", "a type")):
            return Diagnostic(code, f"expected {what} after `{self.previous}`", self.here, hint=hint)
        message = f"unexpected {unexpected}" + (f": expected {what}" if what else "")
        return Diagnostic(code, message, self.here, hint=hint)

    def describe_expected(self) -> str:
        written = self.written(self.expected)
        after_expression = bool(written & {"+", "*", "&&"})
        after_type = bool(written & {"->", "-o"})
        if {"NAME", "NUMBER", "("} <= written and not after_expression:
            return "an expression"
        if {"NAME", "list", "bag"} <= written and not after_type:
            return "a type"
        core = written
        if after_expression or after_type:  # leave out what would extend it
            closing_pair = {">"} if "<" not in written else set()  # `>` closes `<a, b>`
            core = written - (_CONTINUATIONS - closing_pair) - _EXPRESSION_STARTS
        core = core or written
        if len(core) > 5:
            return ""
        shown = sorted(_NAMED.get(w, f"`{w}`") for w in core)
        return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]

    def hint(self) -> str | None:
        """The first of `_HINTS` that recognises this mistake."""
        for recognises, advice in _HINTS:
            if recognises(self):
                previous = self.previous.value if isinstance(self.previous, Tok) else ""
                return advice.replace("{previous}", previous)
        return None

    @property
    def following(self) -> str:
        """The character just after the unexpected token."""
        return self.source.text[self.token.end:self.token.end + 1]

    @property
    def previous_text(self) -> str | None:
        return self.previous.value if isinstance(self.previous, Tok) else None

    @property
    def in_def_header(self) -> bool:
        """Between `def` and its `=`."""
        tokens = [item.value for item in self.stack if isinstance(item, Tok)]
        return bool(tokens) and tokens[0] == "def" and "=" not in tokens

    # -------------------------------------------------------- bracket messages

    def unclosed(self, opener: Tok) -> Diagnostic:
        opened = _token_span(self.source, opener)
        bracket = "[" if opener.value == "-[" else opener.value
        closer = OPENERS[opener.value]
        ending = "the file ends here" if self.token.type == "$END" else f"before `{self.text}`"
        return Diagnostic(
            "FZ104", f"unclosed `{bracket}` opened at {opened.line}:{opened.col}", self.here,
            labels=(Label(opened, "opened here"),),
            hint=f"add `{closer}` ({ending})",
        )

    def mismatched(self, opener: Tok) -> Diagnostic:
        opened = _token_span(self.source, opener)
        bracket = "[" if opener.value == "-[" else opener.value
        return Diagnostic(
            "FZ105",
            f"unexpected `{self.text}`: the innermost open bracket is the `{bracket}` opened at "
            f"{opened.line}:{opened.col}",
            self.here,
            labels=(Label(opened, "still open"),),
            hint=f"close it with `{OPENERS[opener.value]}` first",
        )


# Common mistakes: (recognises(explainer), advice); the first that recognises wins.
_Rule = Callable[[_Explainer], bool]
_HINTS: list[tuple[_Rule, str]] = [
    (lambda e: e.text in ("and", "or"),
     "logical and is written `&&`, logical or `||`"),
    (lambda e: e.text == "=" and e.following == ">" and "->" in e.written(e.expected),
     "functions and case arms use `->`, not `=>`"),
    (lambda e: e.text == "=" and "==" in e.written(e.expected),
     "to compare two values, write `==`"),
    (lambda e: e.previous_text == "vec" and e.written(e.expected) == {"["},
     "a vector type names its norm: `vec[1] num`, `vec[2] num` or `vec[inf] num`"),
    (lambda e: e.previous_text == "mat" and e.written(e.expected) == {"["},
     "a matrix type names the norm of its rows: `mat[1] num`, `mat[2] num` or `mat[inf] num`"),
    (lambda e: e.previous_text is not None and e.written(e.expected) == {"["},
     "`{previous}` takes its static arguments in brackets, as in `{previous}[...] e`"),
    (lambda e: e.text == "->" and {":", "="} <= e.written(e.expected),
     "the result type follows a colon: `def f (x : num) : num = ...`"),
    (lambda e: e.text == "," and e.in_def_header and e.written(e.expected) == {")"},
     "each parameter of a `def` has its own parentheses: `(x : num) (y : num)`"),
    (lambda e: e.text not in ("(", ":", "=") and {"(", ":", "="} <= e.written(e.expected),
     "parameters are written with their types: `def f (x : num) (db : bag Row) : num = ...`"),
    (lambda e: e.text == "->" and "->" not in e.written(e.expected),
     "`->` belongs to `fun x -> e` and to `case e of [] -> a | h :: t -> b`"),
    (lambda e: e.text == "}" and {"NAME", "NUMBER"} <= e.written(e.expected),
     "a block ends with the expression it returns, as in `{ let y = x; y }`"),
    (lambda e: {"privacy", "requires"} <= e.written(e.expected),
     "a mechanism states its claim before its body: `privacy eps { ... }`"),
    (lambda e: e.written(e.expected) == {"("} and e.previous_text in ("if", "while"),
     "in a mechanism, `{previous}` takes its condition in parentheses"),
]


# ---------------------------------------------------------------- brackets


def _open_brackets(stack: list[Any]) -> list[Tok]:
    """The brackets among the unreduced tokens that are still open, outermost first."""
    opened: list[Tok] = []
    for item in stack:
        if not isinstance(item, Tok):
            continue
        if item.value in OPENERS:
            opened.append(item)
        elif item.value in CLOSERS and opened:
            opened.pop()
    return opened


def match_brackets(text: str) -> dict[int, int | None]:
    """Offset of every opening bracket -> offset of its closer (None if never closed).

    Comments and strings are skipped; a closer of the wrong kind ends the
    innermost bracket (as a reader would assume) and is otherwise ignored.
    """
    closes: dict[int, int | None] = {}
    opened: list[tuple[str, int]] = []
    for found in _BRACKET_SCAN.finditer(text):
        piece = found.group()
        if piece in OPENERS:
            opened.append((piece, found.start()))
            closes[found.start()] = None
        elif piece in CLOSERS and opened:
            _, start = opened.pop()
            closes[start] = found.start()
    return closes


# ---------------------------------------------------------------- characters, comments, strings


def _unexpected_character(error: LexError, source: Source) -> Diagnostic:
    offset = error.offset
    char = source.text[offset] if offset < len(source.text) else ""
    shown = char if char.isprintable() else f"U+{ord(char):04X}"
    hints = {
        "'": "strings are written in double quotes: \"text\"",
        "#": "comments start with `//`",
        "%": "there is no `%` operator",
        "\\": "`fun x -> e` writes an anonymous function",
        "&": "`&&` is logical and; `&` only appears in the type `<A & B>`",
        "|": "`||` is logical or; `|` separates the arms of a `case`",
    }
    return Diagnostic(
        "FZ101", f"unexpected character `{shown}`", source.span(offset, offset + 1),
        hint=hints.get(char),
    )


def _unterminated(source: Source, limit: int) -> Diagnostic | None:
    """An unclosed `/*` or `"` at or before `limit` (it makes everything after it wrong)."""
    text = source.text
    position = 0
    while True:
        starts = [p for p in (text.find("/*", position, limit + 2), text.find('"', position, limit + 1),
                              text.find("//", position, limit + 1)) if p != -1]
        if not starts:
            return None
        start = min(starts)
        found = _COMMENT_OR_STRING.match(text, start)
        if found is None:
            if text.startswith("/*", start):
                return Diagnostic("FZ106", "this comment is never closed",
                                  source.span(start, start + 2), hint="end it with `*/`")
            end_of_line = text.find("\n", start)
            end = len(text) if end_of_line == -1 else end_of_line
            return Diagnostic("FZ106", "this string is never closed", source.span(start, end),
                              hint="close it with `\"` on the same line")
        position = found.end()
        if position > limit:
            return None


# ---------------------------------------------------------------- positions


def _error_offset(error: ParseError | LexError, source: Source) -> int:
    if isinstance(error, LexError):
        return error.offset
    token = error.token
    if token.type == "$END":
        return len(source.text)
    return int(token.start)


def _last_positioned(stack: list[Any]) -> Any:
    """The last token or node on the stack (what the error comes after)."""
    for item in reversed(stack):
        found = _positioned(item)
        if found is not None:
            return found
    return None


def _positioned(item: Any) -> Any:
    if isinstance(item, Tok) or hasattr(item, "span"):
        return item
    if isinstance(item, (list, tuple)):
        for inner in reversed(item):
            found = _positioned(inner)
            if found is not None:
                return found
    children = getattr(item, "children", None)  # a lark helper tree (repetitions)
    if isinstance(children, list):
        return _positioned(children)
    return None


def _end_line(item: Any) -> int | None:
    if item is None:
        return None
    if isinstance(item, Tok):
        return item.end_line
    return int(item.span.end_line)


def _after(source: Source, item: Any) -> Span:
    """A one-character span just after `item` (where a missing token belongs)."""
    if item is None:
        return source.span(0, 0)
    end = item.end if isinstance(item, Tok) else item.span.end
    line, col = source.position(end)
    return Span(source.name, line, col, line, col + 1, end, end)


def _token_span(source: Source, token: Any) -> Span:
    if token.type == "$END":
        end = len(source.text)
        line, col = source.position(end)
        return Span(source.name, line, col, line, col + 1, end, end)
    return source.span(token.start, token.end)
