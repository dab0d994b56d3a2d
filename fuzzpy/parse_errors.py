"""Syntax errors in words a user knows.

lark reports what went wrong in its own vocabulary (terminal names such as
``RPAR`` or ``__ANON_3``, parser states). This module turns one lark error into
one `Diagnostic`: it names tokens as they are written (`` `)` ``), groups what
was expected ("an expression", "a type", "a name"), recognises the common
mistakes (a missing `;`, an unclosed or stray bracket, an unterminated comment
or string) and points at the place to fix.

The parser's value stack tells which brackets are open at the error (every
bracket token still on the stack is unclosed) and which declaration is being
parsed (the first token on the stack).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from fuzzpy.diagnostics import Diagnostic, Label
from fuzzpy.source import Source, Span

OPENERS = {"(": ")", "[": "]", "{": "}", "-[": "]"}
CLOSERS = {")", "]", "}"}

_EXPRESSION_STARTS = {"NAME", "NUMBER", "LPAR"}
_TYPE_STARTS = {"NAME", "LPAR", "LIST", "BAG", "VEC", "FUZZY"}
_REGEX_WORDS = {"NAME": "a name", "NUMBER": "a number", "STRING": "a string", "$END": "the end of the file"}
_DECLARATION_WORDS = {"def": "the definition of", "let": "the constant", "type": "the type",
                      "mechanism": "the mechanism"}
_DECLARATION_STARTS = {"def", "let", "type", "mechanism"}

_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"')


def syntax_error(error: UnexpectedInput, source: Source, parser: Lark) -> Diagnostic:
    """The diagnostic for one lark parse error."""
    unterminated = _unterminated(source, _error_offset(error, source))
    if unterminated is not None:
        return unterminated
    if isinstance(error, UnexpectedToken):
        return _unexpected_token(error, source, _TokenWords(parser))
    if isinstance(error, UnexpectedCharacters):
        return _unexpected_character(error, source)
    offset = _error_offset(error, source)
    return Diagnostic("FZ102", "this is not valid here", source.span(offset, offset + 1))


# ---------------------------------------------------------------- words for tokens


class _TokenWords:
    """Terminal names -> the text a user writes (`` `;` ``, "a name")."""

    def __init__(self, parser: Lark) -> None:
        self.words = dict(_REGEX_WORDS)
        for terminal in parser.terminals:
            if terminal.pattern.type == "str":
                self.words[terminal.name] = f"`{terminal.pattern.value}`"

    def word(self, name: str) -> str:
        return self.words.get(name, name.lower())

    def expected(self, names: Iterable[str]) -> str:
        names = set(names)
        if _EXPRESSION_STARTS <= names:
            return "an expression"
        if _TYPE_STARTS <= names:
            return "a type"
        words = sorted(self.word(name) for name in names if name not in {"$END"})
        if not words:
            return "the end of the file"
        if len(words) > 5:
            return ""
        if len(words) == 1:
            return words[0]
        return ", ".join(words[:-1]) + " or " + words[-1]


def _shown(token: Token) -> str:
    if token.type == "$END":
        return "the end of the file"
    return f"`{token}`"


# ---------------------------------------------------------------- unexpected tokens


def _unexpected_token(error: UnexpectedToken, source: Source, words: _TokenWords) -> Diagnostic:
    token = error.token
    expected = set(error.expected)
    stack = _value_stack(error)
    previous = _last_positioned(stack)
    open_brackets = [item for item in stack if isinstance(item, Token) and str(item) in OPENERS]
    here = _token_span(source, token)

    if ";" in {words.word(name).strip("`") for name in expected} and _ends_statement(token, previous):
        return _missing_semicolon(source, stack, previous, open_brackets)
    if open_brackets:
        opener = open_brackets[-1]
        closer = OPENERS[str(opener)]
        closer_expected = f"`{closer}`" in {words.word(name) for name in expected}
        if str(token) in CLOSERS and token.type != "$END" and str(token) != closer:
            return _mismatched_closer(source, token, opener)
        if closer_expected and (token.type == "$END" or str(token) in _DECLARATION_STARTS
                                or str(token) in CLOSERS or str(token) == ";"):
            return _unclosed(source, token, opener, here)
    elif str(token) in CLOSERS and token.type != "$END":
        return Diagnostic(
            "FZ105", f"unexpected `{token}`: there is no `{_opener_of(str(token))}` to close",
            here, hint="remove it, or add the opening bracket it belongs to",
        )
    return _generic(source, token, expected, previous, words, here)


def _generic(
    source: Source, token: Token, expected: set[str], previous: Any,
    words: _TokenWords, here: Span,
) -> Diagnostic:
    what = words.expected(expected)
    code = "FZ103" if token.type == "$END" else "FZ102"
    hint = _hint(token, expected, previous, words)
    if isinstance(previous, Token) and what in ("an expression", "a type", "a name"):
        message = f"expected {what} after `{previous}`"
        if token.type == "$END":
            message += ", but the file ends"
        return Diagnostic(code, message, here, hint=hint)
    if token.type == "$END":
        message = "unexpected end of file" + (f": expected {what}" if what else "")
        return Diagnostic(code, message, here, hint=hint)
    message = f"unexpected `{token}`" + (f": expected {what}" if what else " here")
    return Diagnostic(code, message, here, hint=hint)


def _hint(token: Token, expected: set[str], previous: Any, words: _TokenWords) -> str | None:
    written = {words.word(name) for name in expected}
    if str(token) == "=" and "`==`" in written:
        return "to compare two values, write `==`"
    if isinstance(previous, Token) and written == {"`[`"}:
        return f"`{previous}` takes its static arguments in brackets, as in `{previous}[...] e`"
    if token.type == "NAME" and "`->`" in written and "`(`" in written:
        return "a parameter with a type is written in parentheses: `fun (x : num) -> e`"
    if str(token) in ("<", "<=", ">", ">=", "==", "!=") and previous is not None:
        return "comparisons do not chain: write `a < b && b < c`"
    return None


def _ends_statement(token: Token, previous: Any) -> bool:
    """True when `token` cannot continue the statement `previous` ended."""
    if token.type == "$END" or str(token) in _DECLARATION_STARTS or str(token) in CLOSERS:
        return True
    if str(token) in ("sample", "var", "while", "output", "return", "if"):
        return True
    end = _end_line(previous)
    return end is not None and token.line is not None and token.line > end


def _missing_semicolon(
    source: Source, stack: list[Any], previous: Any, open_brackets: list[Token]
) -> Diagnostic:
    where = _after(source, previous)
    first = next((item for item in stack if isinstance(item, Token)), None)
    if not open_brackets and first is not None and str(first) in _DECLARATION_WORDS:
        name = next((item for item in stack if isinstance(item, Token) and item.type == "NAME"), None)
        what = _DECLARATION_WORDS[str(first)] + (f" `{name}`" if name is not None else "")
        return Diagnostic("FZ107", f"expected `;` after {what}", where,
                          hint="every declaration ends with `;`")
    return Diagnostic("FZ107", "expected `;` at the end of this statement", where,
                      hint="statements in a block are separated by `;`")


def _unclosed(source: Source, token: Token, opener: Token, here: Span) -> Diagnostic:
    closer = OPENERS[str(opener)]
    opened = _token_span(source, opener)
    bracket = "[" if str(opener) == "-[" else str(opener)
    ending = "the file ends here" if token.type == "$END" else f"expected `{closer}` before this"
    return Diagnostic(
        "FZ104", f"unclosed `{bracket}` opened at {opened.line}:{opened.col}", here,
        labels=(Label(opened, "opened here"),),
        hint=f"add `{closer}` ({ending})",
    )


def _mismatched_closer(source: Source, token: Token, opener: Token) -> Diagnostic:
    opened = _token_span(source, opener)
    bracket = "[" if str(opener) == "-[" else str(opener)
    return Diagnostic(
        "FZ105",
        f"unexpected `{token}`: the innermost open bracket is the `{bracket}` opened at "
        f"{opened.line}:{opened.col}",
        _token_span(source, token),
        labels=(Label(opened, "still open"),),
        hint=f"close it with `{OPENERS[str(opener)]}` first",
    )


def _opener_of(closer: str) -> str:
    return {")": "(", "]": "[", "}": "{"}[closer]


# ---------------------------------------------------------------- characters, comments, strings


def _unexpected_character(error: UnexpectedCharacters, source: Source) -> Diagnostic:
    offset = error.pos_in_stream
    char = source.text[offset] if offset < len(source.text) else ""
    shown = char if char.isprintable() else f"U+{ord(char):04X}"
    hints = {
        "'": "strings are written in double quotes: \"text\"",
        "%": "there is no `%` operator",
        "\\": "`fun x -> e` writes an anonymous function",
        "=": "to compare two values, write `==`",
        "&": "`&&` is logical and; `&` only appears in the type `<A & B>`",
        "|": "`||` is logical or; `|` separates the arms of a `case`",
        "!": "`not e` negates in definitions (`!e` is for mechanisms)",
    }
    return Diagnostic(
        "FZ101", f"unexpected character `{shown}`", source.span(offset, offset + 1),
        hint=hints.get(char),
    )


def _unterminated(source: Source, limit: int) -> Diagnostic | None:
    """An unclosed `/*` or `"` before `limit` (they make everything after them wrong)."""
    text = source.text
    position = 0
    while True:
        comment = text.find("/*", position, limit + 2)
        quote = text.find('"', position, limit + 1)
        line_comment = text.find("//", position, limit + 1)
        starts = [p for p in (comment, quote, line_comment) if p != -1]
        if not starts:
            return None
        start = min(starts)
        match = _COMMENT_OR_STRING.match(text, start)
        if match is None:
            if start == comment:
                return Diagnostic("FZ106", "this comment is never closed",
                                  source.span(start, start + 2), hint="end it with `*/`")
            end_of_line = text.find("\n", start)
            end = len(text) if end_of_line == -1 else end_of_line
            return Diagnostic("FZ106", "this string is never closed", source.span(start, end),
                              hint="close it with `\"` on the same line")
        position = match.end()
        if position > limit:
            return None


# ---------------------------------------------------------------- positions


def _error_offset(error: UnexpectedInput, source: Source) -> int:
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END" or token.start_pos is None:
            return len(source.text)
        return int(token.start_pos)
    position = getattr(error, "pos_in_stream", None)
    return len(source.text) if position is None else int(position)


def _value_stack(error: UnexpectedToken) -> list[Any]:
    interactive = getattr(error, "interactive_parser", None)
    if interactive is None:
        return []
    return list(interactive.parser_state.value_stack)


def _last_positioned(stack: list[Any]) -> Any:
    """The last token or node on the stack (what the error comes after)."""
    for item in reversed(stack):
        found = _positioned(item)
        if found is not None:
            return found
    return None


def _positioned(item: Any) -> Any:
    if isinstance(item, Token) or hasattr(item, "span"):
        return item
    if isinstance(item, (list, tuple)):
        for inner in reversed(item):
            found = _positioned(inner)
            if found is not None:
                return found
    return None


def _end_line(item: Any) -> int | None:
    if item is None:
        return None
    if isinstance(item, Token):
        return item.end_line
    return int(item.span.end_line)


def _after(source: Source, item: Any) -> Span:
    """A one-character span just after `item` (where a missing token belongs)."""
    if item is None:
        return source.span(0, 0)
    end = item.end_pos if isinstance(item, Token) else item.span.end
    line, col = source.position(end)
    return Span(source.name, line, col, line, col + 1, end, end)


def _token_span(source: Source, token: Token) -> Span:
    if token.type == "$END" or token.start_pos is None:
        end = len(source.text)
        line, col = source.position(end)
        return Span(source.name, line, col, line, col + 1, end, end)
    return source.span(int(token.start_pos), int(token.end_pos))
