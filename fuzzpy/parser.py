"""Text -> syntax tree: `parse_program`.

The grammar is grammar/fuzz.lark (shipped inside the installed package as
fuzzpy/grammar/fuzz.lark). It is compiled once, lazily, into a lark LALR(1)
parser with a contextual lexer whose transformer (`parse_tree.TreeBuilder`)
builds the syntax tree during the parse. Syntax errors become FZ1xx
diagnostics in words a user knows (`parse_errors`).
"""

from __future__ import annotations

import gc
import threading
from importlib import resources
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedToken

from fuzzpy.diagnostics import Diagnostic, FuzzError
from fuzzpy.lexer import FuzzLexer, LexError
from fuzzpy.parse_errors import syntax_error
from fuzzpy.parse_tree import TreeBuilder
from fuzzpy.source import Source
from fuzzpy.syntax import Program

_REPO_GRAMMAR = Path(__file__).resolve().parent.parent / "grammar" / "fuzz.lark"

_lock = threading.Lock()
_parser: Lark | None = None
_builder: TreeBuilder | None = None


def grammar_text() -> str:
    """The grammar: from the installed package, else from the repository."""
    try:
        packaged = resources.files("fuzzpy").joinpath("grammar/fuzz.lark")
        if packaged.is_file():
            return packaged.read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, NotADirectoryError):
        pass
    return _REPO_GRAMMAR.read_text(encoding="utf-8")


def _get_parser() -> tuple[Lark, TreeBuilder]:
    """Compile the grammar on first use (callers hold `_lock`)."""
    global _parser, _builder
    if _parser is None or _builder is None:
        _builder = TreeBuilder()
        _parser = Lark(
            grammar_text(),
            parser="lalr",
            lexer=FuzzLexer,
            keep_all_tokens=True,
            transformer=_builder,
            maybe_placeholders=False,
        )
    return _parser, _builder


def parse_program(text: str, filename: str = "<input>") -> Program:
    """Parse a whole file; raise `FuzzError` (FZ1xx) if it is not a program."""
    with _lock:
        parser, builder = _get_parser()
        builder.file = filename
        builder.depth.clear()
        # The parse allocates many small acyclic objects; the cyclic garbage
        # collector would rescan them again and again (quadratic on big files).
        collecting = gc.isenabled()
        gc.disable()
        try:
            program = parser.parse(text)
        except (UnexpectedToken, LexError) as error:
            raise FuzzError((syntax_error(error, Source(filename, text), parser),)) from None
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
