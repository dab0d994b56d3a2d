"""Text -> syntax tree: `parse_program`.

The grammar is grammar/fuzz.lark (shipped inside the installed package as
fuzzpy/grammar/fuzz.lark). lark compiles it once, lazily, into an LALR(1)
table and tree-building callbacks (`parse_tree.TreeBuilder` builds the syntax
tree during the parse); `lalr.Tables` drives that table over the tokens of
`lexer.Scanner`. Syntax errors become FZ1xx diagnostics in words a user knows
(`parse_errors`).
"""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path

from lark import Lark

from fuzzpy.diagnostics import Diagnostic, FuzzError
from fuzzpy.frontend.lalr import ParseError, Tables
from fuzzpy.frontend.lexer import LexError, Scanner
from fuzzpy.frontend.syntax_errors import syntax_error
from fuzzpy.frontend.tree import TreeBuilder
from fuzzpy.source import Source
from fuzzpy.syntax import Program

_REPO_GRAMMAR = Path(__file__).resolve().parents[2] / "grammar" / "fuzz.lark"

_lock = threading.Lock()


@dataclass(frozen=True)
class Compiled:
    """The grammar compiled once: lark's tables and callbacks, our scanner."""

    lark: Lark
    tables: Tables
    scanner: Scanner
    builder: TreeBuilder


_compiled: Compiled | None = None


def grammar_text() -> str:
    """The grammar: from the installed package, else from the repository."""
    try:
        packaged = resources.files("fuzzpy").joinpath("grammar/fuzz.lark")
        if packaged.is_file():
            return packaged.read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, NotADirectoryError):
        pass
    return _REPO_GRAMMAR.read_text(encoding="utf-8")


def compiled() -> Compiled:
    """Compile the grammar on first use (callers hold `_lock`)."""
    global _compiled
    if _compiled is None:
        builder = TreeBuilder()
        parser = Lark(
            grammar_text(),
            parser="lalr",
            lexer="basic",
            keep_all_tokens=True,
            transformer=builder,
            maybe_placeholders=False,
        )
        _compiled = Compiled(parser, Tables.from_lark(parser), Scanner(parser.terminals), builder)
    return _compiled


def parse_program(text: str, filename: str = "<input>") -> Program:
    """Parse a whole file; raise `FuzzError` (FZ1xx) if it is not a program."""
    with _lock:
        grammar = compiled()
        builder = grammar.builder
        builder.file = filename
        builder.depth.clear()
        # The parse allocates many small acyclic objects; the cyclic garbage
        # collector would rescan them again and again (quadratic on big files).
        collecting = gc.isenabled()
        gc.disable()
        try:
            program = grammar.tables.parse(partial(grammar.scanner.batches, text))
        except (ParseError, LexError) as error:
            source = Source(filename, text)
            raise FuzzError((syntax_error(error, source, grammar.lark, grammar.tables),)) from None
        finally:
            builder.depth.clear()
            if collecting:
                gc.enable()
    if not program.decls:
        raise FuzzError((_empty_program(filename, text),))
    return program  # type: ignore[no-any-return]


def _empty_program(filename: str, text: str) -> Diagnostic:
    source = Source(filename, text)
    end = len(text)
    return Diagnostic(
        "FZ114", "the file contains no declarations", source.span(end, end),
        hint="write at least one `let`, `type`, `def` or `mechanism`",
    )
