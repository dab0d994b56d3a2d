"""The lexer: text -> `Tok`s, for the LALR driver (`lalr.Tables.parse`).

One compiled regular expression recognises every token; the parser state
decides the few context-dependent cases, as lark's contextual lexer would:

* a word that is a keyword where the parser accepts that keyword becomes the
  keyword (`inl` in a case arm, `list` in a type), and a name elsewhere;
  reserved words (`RESERVED`) are keywords everywhere and never names;
* `-o` and `-[` (function arrows) are single tokens only where a type may be
  followed by an arrow, so `x-one` and `x -[1, 2]` stay subtractions.

Tokens are small `Tok` objects rather than lark Tokens (a third of the cost);
they carry the positions the tree builder turns into spans. Positions count
lines and columns from 1; `end_col` is exclusive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

# Words that are keywords wherever they stand (see grammar/fuzz.lark, NAME).
RESERVED = frozenset({
    # declarations, binders and control
    "let", "in", "type", "def", "rec", "mechanism", "fun", "if", "then", "else", "case",
    "of", "sample", "return",
    # literals and operators (`and`, `or` are reserved so that `a and b` gets a clear
    # error: the operators are written `&&` and `||`)
    "true", "false", "not", "inf", "and", "or",
    # bracketed primitives
    "laplace", "gauss", "sum", "clip", "clip2", "vsum", "group", "expmech", "loop", "subsample",
    # mechanisms
    "var", "while", "invariant", "requires", "privacy", "output", "align", "forall",
    "lap", "lapplus", "dist",
})

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_CONTEXTUAL_ARROWS = ("-o", "-[")


class Tok:
    """A token: its terminal name, text and position (named as in `Span`)."""

    __slots__ = ("type", "value", "start", "end", "line", "col", "end_line", "end_col")

    def __init__(self, type_: str, value: str, start: int, end: int, line: int, col: int) -> None:
        self.type = type_
        self.value = value
        self.start = start
        self.end = end
        self.line = line
        self.col = col
        self.end_line = line
        self.end_col = col + (end - start)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Tok({self.type}, {self.value!r}, {self.line}:{self.col})"


class LexError(Exception):
    """No token starts at `offset` (an unknown character, or an unclosed comment or string)."""

    def __init__(self, offset: int, line: int, col: int, last: Tok | None) -> None:
        super().__init__(f"no token at {line}:{col}")
        self.offset = offset
        self.line = line
        self.col = col
        self.last = last


class Scanner:
    """Compiled once from the grammar's terminals (lark `TerminalDef`s)."""

    def __init__(self, terminals: Iterable[Any]) -> None:
        terminals = list(terminals)
        self.keywords: dict[str, str] = {}
        punctuation: dict[str, str] = {}
        self.arrows: dict[str, str] = {}
        for terminal in terminals:
            if terminal.pattern.type != "str":
                continue
            text = terminal.pattern.value
            if _WORD.match(text):
                self.keywords[text] = terminal.name
            elif text in _CONTEXTUAL_ARROWS:
                self.arrows[text] = terminal.name
            else:
                punctuation[text] = terminal.name
        self.punctuation = punctuation
        regex_terminals = {t.name: t.pattern.value for t in terminals if t.pattern.type == "re"}
        operators = "|".join(re.escape(p) for p in sorted(punctuation, key=len, reverse=True))
        # Blanks before a token are consumed by the same match (one match per token).
        self.scanner = re.compile(
            r"[ \t\r\f]*(?:(?P<NEWLINE>\n)|(?P<LINE_COMMENT>//[^\n]*)"
            r"|(?P<BLOCK_COMMENT>/\*[\s\S]*?\*/)"
            rf"|(?P<NUMBER>{regex_terminals['NUMBER']})|(?P<WORD>[A-Za-z_][A-Za-z0-9_]*)"
            rf"|(?P<STRING>{regex_terminals['STRING']})|(?P<PUNCT>{operators})|(?P<END>\Z))"
        )

    def tokens(self, text: str, accepted: Callable[[], dict[str, int]]) -> Iterator[Tok]:
        """The tokens of `text`; `accepted()` is what the parser accepts next."""
        keywords, punctuation, arrows = self.keywords, self.punctuation, self.arrows
        match = self.scanner.match
        position, line, line_start = 0, 1, 0
        if text.startswith("\ufeff"):  # a byte-order mark, as some editors write
            position = line_start = 1
        last: Tok | None = None
        length = len(text)
        while position < length:
            found = match(text, position)
            if found is None:
                while position < length and text[position] in " \t\r\f":
                    position += 1
                raise LexError(position, line, position - line_start + 1, last)
            kind = found.lastgroup
            # The commonest kinds first; `span` + slicing is one call where
            # `group` + `start` + `end` would be three.
            if kind == "WORD":
                start, end = found.span(kind)
                value = text[start:end]
                keyword = keywords.get(value)
                if keyword is None:  # reserved without a grammar rule: never valid
                    kind = "RESERVED" if value in RESERVED else "NAME"
                elif value in RESERVED or keyword in accepted():
                    kind = keyword
                else:
                    kind = "NAME"
            elif kind == "PUNCT":
                start, end = found.span(kind)
                value = text[start:end]
                kind = punctuation[value]
                if value == "-" and end < length and text[end] in "o[":
                    arrow = arrows["-" + text[end]]
                    if arrow in accepted():
                        kind, value, end = arrow, value + text[end], end + 1
            elif kind == "NEWLINE":
                line += 1
                position = line_start = found.end()
                continue
            elif kind == "NUMBER" or kind == "STRING":
                start, end = found.span(kind)
                value = text[start:end]
            else:  # a comment, or blanks up to the end of the text
                end = found.end()
                if kind == "BLOCK_COMMENT":
                    newlines = text.count("\n", position, end)
                    if newlines:
                        line += newlines
                        line_start = text.rfind("\n", position, end) + 1
                position = end
                continue
            last = Tok(kind, value, start, end, line, start - line_start + 1)
            yield last
            position = end
