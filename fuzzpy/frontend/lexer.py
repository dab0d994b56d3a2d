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
    # mechanisms
    "var", "while", "invariant", "requires", "privacy", "output", "align", "forall",
    "lap", "lapplus", "dist",
})

# The bracketed primitives are keywords only where the parser accepts them
# *and* a `[` follows (`sum[0, 1] xs`); elsewhere they are names, so a user
# may call a variable `sum` or `group` (in mechanisms, or in a `def`).
PRIMITIVES = frozenset({
    "laplace", "gauss", "gauss_dp", "geometric", "staircase", "dgauss", "sum", "clip", "clip2", "vsum", "group", "expmech", "loop", "iterate", "subsample",
    "rr", "krr", "shuffle", "rr_estimate", "krr_estimate",
    "choose", "bootstrap", "ptr_median", "ptr_quantile", "smooth_median", "smooth_quantile", "wishart", "join",
})

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BRACKET_AHEAD = re.compile(r"[ \t\r\f\n]*\[")
_CONTEXTUAL_ARROWS = ("-o", "-[")


def without_captures(pattern: str) -> str:
    """`pattern` with each plain group `(...)` made non-capturing `(?:...)`.

    Escapes (`\\(`), character classes (`[(]`) and `(?...)` groups are left
    alone; the result matches exactly the same strings.
    """
    out: list[str] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        step = 1
        if char == "\\":
            step = 2
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            step = 2 if pattern.startswith("[^", index) else 1
            if pattern.startswith("]", index + step):  # a `]` first in a class is a literal
                step += 1
        elif char == "(" and not pattern.startswith("(?", index):
            out.append("(?:")
            index += 1
            continue
        out.append(pattern[index:index + step])
        index += step
    return "".join(out)


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
        # A word's kind: NAME unless listed; None for a contextual keyword
        # (a keyword where the parser accepts it, a name elsewhere).
        self.word_kinds: dict[str, str | None] = {word: None for word in self.keywords}
        self.word_kinds.update(
            {word: self.keywords.get(word, "RESERVED") for word in RESERVED}
        )
        regex_terminals = {t.name: t.pattern.value for t in terminals if t.pattern.type == "re"}
        operators = "|".join(re.escape(p) for p in sorted(punctuation, key=len, reverse=True))
        # The grammar's own groups in NUMBER and STRING would only slow every
        # match down (the engine saves and restores their marks at each
        # alternative, roughly doubling the cost of a match).
        number = without_captures(regex_terminals["NUMBER"])
        string = without_captures(regex_terminals["STRING"])
        # Blanks before a token are consumed by the same match (one match per token).
        self.scanner = re.compile(
            r"[ \t\r\f]*(?:(?P<NEWLINE>\n)|(?P<LINE_COMMENT>//[^\n]*)"
            r"|(?P<BLOCK_COMMENT>/\*[\s\S]*?\*/)"
            rf"|(?P<NUMBER>{number})|(?P<WORD>[A-Za-z_][A-Za-z0-9_]*)"
            rf"|(?P<STRING>{string})|(?P<PUNCT>{operators})|(?P<END>\Z))"
        )

    def batches(self, text: str, accepted: Callable[[], dict[str, int]]) -> Iterator[list[Tok]]:
        """The tokens of `text`, in lists; `accepted()` is what the parser accepts next.

        A batch ends just before a token whose kind depends on the parser's
        state (a contextual keyword, or a `-` that may start an arrow): that
        token is lexed when the parser asks for the next batch, having taken
        every token before it, so `accepted()` is exactly what it would be
        token by token. Lexing in batches spares a generator switch per token.
        A lexical error is raised only after the tokens before it are parsed
        (a syntax error among them is reported first).
        """
        keywords, punctuation, arrows = self.keywords, self.punctuation, self.arrows
        word_kind = self.word_kinds.get
        match = self.scanner.match
        position, line, line_start = 0, 1, 0
        if text.startswith("\ufeff"):  # a byte-order mark, as some editors write
            position = line_start = 1
        last: Tok | None = None
        batch: list[Tok] = []
        length = len(text)
        while position < length:
            found = match(text, position)
            if found is None:
                if batch:
                    yield batch
                    batch = []
                while position < length and text[position] in " \t\r\f":
                    position += 1
                raise LexError(position, line, position - line_start + 1, last)
            kind = found.lastgroup
            # The commonest kinds first; `span` + slicing is one call where
            # `group` + `start` + `end` would be three.
            if kind == "WORD":
                start, end = found.span(kind)
                value = text[start:end]
                kind = word_kind(value, "NAME")
                if kind is None:  # a keyword only where the parser accepts it
                    if batch:
                        yield batch
                        batch = []
                    keyword = keywords[value]
                    is_keyword = keyword in accepted()
                    if is_keyword and value in PRIMITIVES:
                        is_keyword = _BRACKET_AHEAD.match(text, end) is not None
                    kind = keyword if is_keyword else "NAME"
            elif kind == "PUNCT":
                start, end = found.span(kind)
                value = text[start:end]
                kind = punctuation[value]
                if value == "-" and end < length and text[end] in "o[":
                    if batch:
                        yield batch
                        batch = []
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
            batch.append(last)
            position = end
        if batch:
            yield batch
