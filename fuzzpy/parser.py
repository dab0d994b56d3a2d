"""Text -> syntax tree: `parse_program`.

The grammar is grammar/fuzz.lark (shipped inside the installed package as
fuzzpy/grammar/fuzz.lark). It is compiled once, lazily, into a lark LALR(1)
parser with a contextual lexer whose transformer (`parse_tree.TreeBuilder`)
builds the syntax tree during the parse. Syntax errors become FZ1xx
diagnostics in words a user knows (`parse_errors`).
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedInput

from fuzzpy.diagnostics import FuzzError
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
            lexer="contextual",
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
        try:
            program = parser.parse(text)
        except UnexpectedInput as error:
            raise FuzzError((syntax_error(error, Source(filename, text), parser),)) from None
        finally:
            builder.depth.clear()
    return program  # type: ignore[no-any-return]
