"""The lexer handed to lark's LALR parser (a lark custom lexer).

One compiled regular expression recognises every token; the parser state
decides the few context-dependent cases, as lark's contextual lexer would:

* a word that is a keyword where the parser accepts that keyword becomes the
  keyword (`inl` in a case arm, `list` in a type), and a name elsewhere;
  reserved words (`RESERVED`) are keywords everywhere and never names;
* `-o` and `-[` (function arrows) are single tokens only where a type may be
  followed by an arrow, so `x-one` and `x -[1, 2]` stay subtractions.

Tokens are small `Tok` objects rather than lark Tokens (a third of the cost);
they carry the positions the tree builder turns into spans. Positions count
lines and columns from 1; `end_column` is exclusive.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lark.common import LexerConf
from lark.lexer import Lexer

# Words that are keywords wherever they stand (see grammar/fuzz.lark, NAME).
RESERVED = frozenset({
    # declarations, binders and control
    "let", "in", "type", "def", "rec", "mechanism", "fun", "if", "then", "else", "case",
    "of", "sample", "return",
    # literals and operators
    "true", "false", "not", "inf",
    # bracketed primitives
    "laplace", "gauss", "sum", "clip", "clip2", "vsum", "group", "expmech", "loop", "subsample",
    # mechanisms
    "var", "while", "invariant", "requires", "privacy", "output", "align", "forall",
    "lap", "lapplus", "dist",
})

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_CONTEXTUAL_ARROWS = ("-o", "-[")


class Tok:
    """A token: its terminal name, text and position."""

    __slots__ = ("type", "value", "start_pos", "end_pos", "line", "column", "end_line", "end_column")

    def __init__(self, type_: str, value: str, start: int, end: int, line: int, column: int) -> None:
        self.type = type_
        self.value = value
        self.start_pos = start
        self.end_pos = end
        self.line = line
        self.column = column
        self.end_line = line
        self.end_column = column + (end - start)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Tok({self.type}, {self.value!r}, {self.line}:{self.column})"


class LexError(Exception):
    """No token starts at `offset` (an unknown character, or an unclosed comment or string)."""

    def __init__(self, offset: int, line: int, column: int, last: Tok | None) -> None:
        super().__init__(f"no token at {line}:{column}")
        self.offset = offset
        self.line = line
        self.column = column
        self.last = last


class FuzzLexer(Lexer):
    """lark custom lexer (interface 2): `lex(lexer_state, parser_state)`."""

    __future_interface__ = 2

    def __init__(self, conf: LexerConf) -> None:
        self.keywords: dict[str, str] = {}
        punctuation: dict[str, str] = {}
        for terminal in conf.terminals:
            if terminal.pattern.type != "str":
                continue
            text = terminal.pattern.value
            if _WORD.match(text):
                self.keywords[text] = terminal.name
            elif text not in _CONTEXTUAL_ARROWS:
                punctuation[text] = terminal.name
        self.punctuation = punctuation
        self.arrows = {text: self._terminal(conf, text) for text in _CONTEXTUAL_ARROWS}
        regex_terminals = {t.name: t.pattern.value for t in conf.terminals if t.pattern.type == "re"}
        operators = "|".join(re.escape(p) for p in sorted(punctuation, key=len, reverse=True))
        self.scanner = re.compile(
            r"(?P<SPACE>[ \t\r\f]+)|(?P<NEWLINE>\n)|(?P<LINE_COMMENT>//[^\n]*)"
            r"|(?P<BLOCK_COMMENT>/\*[\s\S]*?\*/)"
            rf"|(?P<NUMBER>{regex_terminals['NUMBER']})|(?P<WORD>[A-Za-z_][A-Za-z0-9_]*)"
            rf"|(?P<STRING>{regex_terminals['STRING']})|(?P<PUNCT>{operators})"
        )

    @staticmethod
    def _terminal(conf: LexerConf, text: str) -> str:
        return next(t.name for t in conf.terminals if t.pattern.type == "str" and t.pattern.value == text)

    def lex(self, lexer_state: Any, parser_state: Any) -> Iterator[Tok]:
        text: str = lexer_state.text.text
        states = parser_state.parse_conf.states
        keywords, punctuation, arrows = self.keywords, self.punctuation, self.arrows
        match = self.scanner.match
        position, line, line_start = 0, 1, 0
        last: Tok | None = None
        length = len(text)
        while position < length:
            found = match(text, position)
            if found is None:
                raise LexError(position, line, position - line_start + 1, last)
            kind = found.lastgroup
            end = found.end()
            if kind == "SPACE" or kind == "LINE_COMMENT":
                position = end
                continue
            if kind == "NEWLINE":
                line += 1
                position = line_start = end
                continue
            if kind == "BLOCK_COMMENT":
                newlines = text.count("\n", position, end)
                if newlines:
                    line += newlines
                    line_start = text.rfind("\n", position, end) + 1
                position = end
                continue
            value = found.group()
            if kind == "WORD":
                keyword = keywords.get(value)
                if keyword is None:
                    kind = "NAME"
                elif value in RESERVED or keyword in states[parser_state.position]:
                    kind = keyword
                else:
                    kind = "NAME"
            elif kind == "PUNCT":
                kind = punctuation[value]
                if value == "-" and end < length and text[end] in "o[":
                    arrow = arrows["-" + text[end]]
                    if arrow in states[parser_state.position]:
                        kind, value, end = arrow, value + text[end], end + 1
            last = Tok(kind, value, position, end, line, position - line_start + 1)
            yield last
            position = end
        lexer_state.last_token = last
