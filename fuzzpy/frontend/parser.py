"""Text -> syntax tree: `parse_program`.

The grammar is grammar/fuzz.lark (shipped inside the installed package as
fuzzpy/grammar/fuzz.lark). lark compiles it once, lazily, into an LALR(1)
table and tree-building callbacks (`parse_tree.TreeBuilder` builds the syntax
tree during the parse); `lalr.Tables` drives that table over the tokens of
`lexer.Scanner`. Syntax errors become FZ1xx diagnostics in words a user knows
(`parse_errors`).

Compiling the grammar takes a quarter of a second, longer than the rest of a
small `fuzzpy check`; the compiled grammar is therefore kept in the user's
cache directory (`fuzzpy.usercache`, kind ``grammar``) as lark saves a parser
(`Lark.save`, what lark's own cache stores), after a first line holding the
SHA-256 of the grammar, the options, lark's version and Python's; the file is
named by that hash and written atomically. A file whose first line is not
that hash, or that does not load, is ignored and written afresh.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import sys
import threading
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path

import lark
import lark.lark as lark_module
from lark import Lark

from fuzzpy.diagnostics import Diagnostic, FuzzError
from fuzzpy.frontend.lalr import ParseError, Tables
from fuzzpy.frontend.lexer import LexError, Scanner
from fuzzpy.frontend.syntax_errors import syntax_error
from fuzzpy.frontend.tree import TreeBuilder
from fuzzpy.source import Source
from fuzzpy.syntax import Program
from fuzzpy.usercache import cache_dir, trusted, write_atomic

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
        parser = _lark(grammar_text(), builder)
        _compiled = Compiled(parser, Tables.from_lark(parser), Scanner(parser.terminals), builder)
    return _compiled


def _lark(grammar: str, builder: TreeBuilder) -> Lark:
    """lark's parser for the grammar, from the cache when it is there."""
    path = grammar_cache_path(grammar)
    if path is not None and trusted(path):
        with contextlib.suppress(Exception):  # damaged, truncated, another lark: compile instead
            return _load(path, _cache_key(grammar), builder)
    parser = Lark(grammar, transformer=builder, **_OPTIONS)
    if path is not None:
        stream = io.BytesIO()
        stream.write(_cache_key(grammar).encode() + b"\n")
        parser.save(stream, exclude_options=_LOAD_OPTIONS)
        write_atomic(path, stream.getvalue())
    return parser


_OPTIONS = {"parser": "lalr", "lexer": "basic", "keep_all_tokens": True, "maybe_placeholders": False}
# lark's own cache leaves these out of the saved parser and passes them when loading
_LOAD_OPTIONS = tuple(sorted(lark_module._LOAD_ALLOWED_OPTIONS))


def _load(path: Path, key: str, builder: TreeBuilder) -> Lark:
    """A parser saved by `_lark`, if the file's first line is this key
    (lark's `Lark._load`, as its own cache uses it: tested in
    tests/test_lark_internals.py)."""
    with path.open("rb") as stream:
        if stream.readline().rstrip(b"\n") != key.encode():
            raise ValueError("another grammar or lark version")
        return Lark.__new__(Lark)._load(stream, transformer=builder)


def _cache_key(grammar: str) -> str:
    text = f"{grammar}\0{_OPTIONS}\0lark {lark.__version__}\0python {sys.version_info[:2]}"
    return hashlib.sha256(text.encode()).hexdigest()


def grammar_cache_path(grammar: str) -> Path | None:
    """Where the compiled grammar is cached: named by what it depends on."""
    folder = cache_dir("grammar")
    return None if folder is None else folder / f"fuzz-{_cache_key(grammar)[:32]}.lark"


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
