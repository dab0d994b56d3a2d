"""Text -> syntax tree: `parse_program`.

The grammar is grammar/fuzz.lark (shipped inside the installed package as
fuzzpy/grammar/fuzz.lark). lark compiles it once, lazily, into an LALR(1)
table and tree-building callbacks (`parse_tree.TreeBuilder` builds the syntax
tree during the parse); `lalr.Tables` drives that table over the tokens of
`lexer.Scanner`. Syntax errors become FZ1xx diagnostics in words a user knows
(`parse_errors`).

Compiling the grammar takes a quarter of a second, longer than the rest of a
small `fuzzpy check`; the compiled grammar is therefore kept in the user's
cache directory (`fuzzpy.support.usercache`, kind ``grammar``) as lark saves a parser
(`Lark.save`, what lark's own cache stores), after a first line holding the
SHA-256 of the grammar, the options, lark's version and Python's; the file is
named by that hash and written atomically. A file whose first line is not
that hash, or that does not load, is ignored and written afresh.

Loading lark's saved parser still rebuilds its tables and callbacks (about
50 ms, a fifth of a whole `fuzzpy run` on DuckDB). What the parse uses --
`lalr.Tables`, the `lexer.Scanner` and the `TreeBuilder` its callbacks are
bound to -- is therefore also kept, pickled, in a second file (``.tables``)
whose key adds the source of every frontend module these objects are made
by (so an edited driver, lexer or tree builder is never paired with tables
made by another); lark's parser itself is then loaded only to explain a
syntax error.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib.util
import io
import pickle
import sys
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from fuzzpy.frontend.lalr import ParseError, Tables
from fuzzpy.frontend.lexer import LexError, Scanner
from fuzzpy.frontend.syntax_errors import syntax_error
from fuzzpy.frontend.tree import TreeBuilder
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import Source
from fuzzpy.language.syntax import Program
from fuzzpy.support.usercache import cache_dir, trusted, write_atomic

if TYPE_CHECKING:  # lark is imported to compile the grammar, or to explain a syntax error
    from lark import Lark

_PACKAGED_GRAMMAR = Path(__file__).resolve().parents[1] / "grammar" / "fuzz.lark"
_REPO_GRAMMAR = Path(__file__).resolve().parents[2] / "grammar" / "fuzz.lark"

_lock = threading.Lock()


@dataclass
class Compiled:
    """The grammar compiled once: lark's tables and callbacks, our scanner;
    lark's parser (for the words of a syntax error) loaded when first asked for."""

    tables: Tables
    scanner: Scanner
    builder: TreeBuilder
    _lark: Lark | None = None

    @property
    def lark(self) -> Lark:
        if self._lark is None:
            self._lark = _lark(grammar_text(), self.builder)
        return self._lark


_compiled: Compiled | None = None
#: The modules whose code makes the pickled tables, scanner and tree builder.
_FRONTEND = ("parser.py", "lalr.py", "lexer.py", "tree.py", "tree_base.py", "tree_types.py", "tree_mechanisms.py",
             "ranges.py")


def grammar_text() -> str:
    """The grammar: from the installed package, else from the repository.
    (Read from the file beside the package, not through `importlib.resources`:
    its readers import `zipfile`, 2 ms of every run; fuzzpy is never run zipped,
    as the tables' key reads the frontend's source files.)"""
    packaged = _PACKAGED_GRAMMAR if _PACKAGED_GRAMMAR.is_file() else _REPO_GRAMMAR
    return packaged.read_text(encoding="utf-8")


def compiled() -> Compiled:
    """Compile the grammar on first use (callers hold `_lock`)."""
    global _compiled
    if _compiled is None:
        grammar = grammar_text()
        _compiled = _load_tables(grammar)
        if _compiled is None:
            builder = TreeBuilder()
            parser = _lark(grammar, builder)
            _compiled = Compiled(Tables.from_lark(parser), Scanner(parser.terminals), builder, parser)
            _save_tables(grammar, _compiled)
    return _compiled


def _tables_key(grammar: str) -> str:
    """What the tables depend on: the grammar, the options, Python, lark
    (its `__init__.py`, which holds its version: read, not imported) and
    the frontend modules' source."""
    here = Path(__file__).resolve().parent
    spec = importlib.util.find_spec("lark")
    if spec is None or spec.origin is None:
        raise OSError("lark is not installed")
    digest = hashlib.sha256(f"{grammar}\0{_OPTIONS}\0python {sys.version_info[:2]}".encode())
    digest.update(b"\0lark\0" + Path(spec.origin).read_bytes())
    for name in _FRONTEND:
        digest.update(b"\0" + name.encode() + b"\0" + (here / name).read_bytes())
    return digest.hexdigest()


def _tables_path(key: str) -> Path | None:
    folder = cache_dir("grammar")
    return None if folder is None else folder / f"fuzz-{key[:32]}.tables"


def _load_tables(grammar: str) -> Compiled | None:
    """The pickled tables, scanner and builder, if cached for this grammar,
    this lark and this frontend code."""
    try:
        key = _tables_key(grammar)
    except (OSError, ImportError, ValueError):  # a module not shipped as source: no cache
        return None
    path = _tables_path(key)
    if path is None or not trusted(path):
        return None
    try:
        with path.open("rb") as stream:
            if stream.readline().rstrip(b"\n") != key.encode():
                return None
            digest = stream.readline().rstrip(b"\n")
            payload = stream.read()
        if hashlib.sha256(payload).hexdigest().encode() != digest:  # damaged (a17 F4): never unpickled
            return None
        tables, scanner, builder = pickle.loads(payload)
    except Exception:  # noqa: BLE001 -- damaged, truncated, another Python: compile instead
        return None
    if not (isinstance(tables, Tables) and isinstance(scanner, Scanner) and isinstance(builder, TreeBuilder)):
        return None
    return Compiled(tables, scanner, builder)


def _save_tables(grammar: str, grammar_compiled: Compiled) -> None:
    with contextlib.suppress(Exception):  # a cache is optional (a frontend file unreadable, say)
        key = _tables_key(grammar)
        path = _tables_path(key)
        if path is not None:
            objects = (grammar_compiled.tables, grammar_compiled.scanner, grammar_compiled.builder)
            payload = pickle.dumps(objects, protocol=pickle.HIGHEST_PROTOCOL)
            digest = hashlib.sha256(payload).hexdigest().encode()
            write_atomic(path, key.encode() + b"\n" + digest + b"\n" + payload)


def _lark(grammar: str, builder: TreeBuilder) -> Lark:
    """lark's parser for the grammar, from the cache when it is there."""
    from lark import Lark

    path = grammar_cache_path(grammar)
    if path is not None and trusted(path):
        with contextlib.suppress(Exception):  # damaged, truncated, another lark: compile instead
            return _load(path, _cache_key(grammar), builder)
    parser = Lark(grammar, transformer=builder, **_OPTIONS)
    if path is not None:
        stream = io.BytesIO()
        stream.write(_cache_key(grammar).encode() + b"\n")
        parser.save(stream, exclude_options=_load_options())
        write_atomic(path, stream.getvalue())
    return parser


_OPTIONS = {"parser": "lalr", "lexer": "basic", "keep_all_tokens": True, "maybe_placeholders": False}


def _load_options() -> tuple[str, ...]:
    """What lark's own cache leaves out of a saved parser and passes when loading."""
    import lark.lark as lark_module

    return tuple(sorted(lark_module._LOAD_ALLOWED_OPTIONS))


def _load(path: Path, key: str, builder: TreeBuilder) -> Lark:
    """A parser saved by `_lark`, if the file's first line is this key
    (lark's `Lark._load`, as its own cache uses it: tested in
    tests/test_lark_internals.py)."""
    from lark import Lark

    with path.open("rb") as stream:
        if stream.readline().rstrip(b"\n") != key.encode():
            raise ValueError("another grammar or lark version")
        return Lark.__new__(Lark)._load(stream, transformer=builder)


def _cache_key(grammar: str) -> str:
    import lark

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
