"""What fuzzpy's parser relies on inside lark, and the compiled-grammar cache.

The LALR driver (fuzzpy/frontend/lalr.py) runs lark's parse table itself:
it is about twice as fast as lark's own parsing loop (`python bench/parse.py`;
lark's loop without building any tree takes longer than the driver with it),
and the lexer's context-dependent keywords need the parser's state. It reads
parts of lark that are not its documented API, so pyproject.toml pins lark to
the versions this file has been run against (1.1.9 to 1.3.1), and each test
below names one such part: a lark release that changes it fails here, not in
a user's parse.
"""

from __future__ import annotations

import os
from pathlib import Path

import lark
import pytest
from lark import Lark
from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders, ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

from fuzzpy.frontend import parser as fuzz_parser
from fuzzpy.frontend.lalr import Tables
from fuzzpy.frontend.tree import TreeBuilder
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.source import Source
from fuzzpy.release.pipeline import parse

OPTIONS = {"parser": "lalr", "lexer": "basic", "keep_all_tokens": True, "maybe_placeholders": False}


@pytest.fixture(scope="module")
def compiled() -> Lark:
    return Lark(fuzz_parser.grammar_text(), transformer=TreeBuilder(), **OPTIONS)


def test_the_installed_lark_is_a_version_the_driver_was_tested_with() -> None:
    major, minor, *_ = (int(part) for part in lark.__version__.split(".")[:3])
    assert (1, 1) <= (major, minor) <= (1, 3)


def test_the_parse_table_is_where_the_driver_reads_it(compiled: Lark) -> None:
    inner = compiled.parser.parser.parser  # frontend -> LALR_Parser -> _Parser
    table = inner.parse_table
    assert isinstance(table.states, dict) and table.states
    assert "start" in table.start_states and "start" in table.end_states
    actions = [action for row in table.states.values() for action in row.values()]
    assert all(len(action) == 2 for action in actions)  # (Shift | Reduce, argument)
    shifts = [argument for kind, argument in actions if kind is Shift]
    reduces = [argument for kind, argument in actions if kind is not Shift]
    assert shifts and all(isinstance(state, int) for state in shifts)
    assert reduces and all(hasattr(rule, "expansion") and hasattr(rule.origin, "name") for rule in reduces)
    assert all(rule in inner.callbacks for rule in reduces)  # one callback per rule


def test_the_callbacks_are_the_classes_the_driver_recognises(compiled: Lark) -> None:
    callbacks = compiled.parser.parser.parser.callbacks.values()
    kinds = {type(callback) for callback in callbacks}
    assert ExpandSingleChild in kinds  # `?rule: other` passes its child up
    filters = [c for c in callbacks if type(c) is ChildFilterLALR_NoPlaceholders]
    assert filters
    for callback in filters:  # the driver splices repetitions with these two attributes
        assert callable(callback.node_builder)
        assert all(isinstance(index, int) and isinstance(expand, bool) for index, expand in callback.to_include)


def test_the_terminals_carry_their_patterns(compiled: Lark) -> None:
    kinds = {t.pattern.type for t in compiled.terminals}
    assert kinds == {"str", "re"}
    names = {t.name for t in compiled.terminals}
    assert {"NUMBER", "STRING"} <= names  # the lexer builds its regular expression from these
    assert all(isinstance(t.pattern.value, str) for t in compiled.terminals)


def test_a_saved_parser_loads_with_a_transformer(compiled: Lark) -> None:
    """The grammar cache stores `Lark.save` and loads it with `Lark._load`
    (lark's own cache does the same), leaving out lark's load-time options."""
    import io

    import lark.lark as lark_module

    assert {"transformer"} <= set(lark_module._LOAD_ALLOWED_OPTIONS)
    stream = io.BytesIO()
    compiled.save(stream, exclude_options=tuple(lark_module._LOAD_ALLOWED_OPTIONS))
    stream.seek(0)
    builder = TreeBuilder()
    loaded = Lark.__new__(Lark)._load(stream, transformer=builder)
    assert Tables.from_lark(loaded).actions == Tables.from_lark(compiled).actions
    assert [t.name for t in loaded.terminals] == [t.name for t in compiled.terminals]
    callbacks = loaded.parser.parser.parser.callbacks.values()
    assert any(getattr(c, "__self__", None) is builder or getattr(getattr(c, "node_builder", None), "__self__", None)
               is builder for c in callbacks)  # the tree is built by our transformer


def test_the_driver_parses_with_the_tables_it_reads(compiled: Lark) -> None:
    tables = Tables.from_lark(compiled)
    assert tables.actions[tables.start] and tables.rules
    program = parse(Source("t.fz", "let eps = 0.1;\ndef f (db : bag num) : fuzzy num = laplace[eps] (size db);\n"))
    assert [d.name for d in program.decls] == ["eps", "f"]


# ---------------------------------------------------------------- the grammar cache


def _fresh(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    monkeypatch.setenv("FUZZPY_CACHE", str(cache))
    monkeypatch.setattr(fuzz_parser, "_compiled", None)


def test_the_compiled_grammar_is_cached_and_reused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fresh(monkeypatch, tmp_path)
    path = fuzz_parser.grammar_cache_path(fuzz_parser.grammar_text())
    assert path is not None and not path.exists()
    first = parse(Source("a.fz", "let a = 1;"))
    assert path.exists() and os.stat(path.parent).st_mode & 0o077 == 0
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # written in one step
    written = path.stat().st_mtime_ns
    monkeypatch.setattr(fuzz_parser, "_compiled", None)
    assert parse(Source("a.fz", "let a = 1;")) == first
    assert path.stat().st_mtime_ns == written  # read, not written again


def test_the_cache_key_names_the_grammar_and_the_lark_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FUZZPY_CACHE", str(tmp_path))
    text = fuzz_parser.grammar_text()
    assert fuzz_parser.grammar_cache_path(text) != fuzz_parser.grammar_cache_path(text + "\n// changed\n")
    here = fuzz_parser.grammar_cache_path(text)
    monkeypatch.setattr(lark, "__version__", "0.0.0")
    assert fuzz_parser.grammar_cache_path(text) != here


@pytest.mark.parametrize("damage", [b"", b"garbage\n", b"\x80\x04junk"])
def test_a_damaged_grammar_cache_is_never_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, damage: bytes
) -> None:
    _fresh(monkeypatch, tmp_path)
    path = fuzz_parser.grammar_cache_path(fuzz_parser.grammar_text())
    assert path is not None
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(damage)
    program = parse(Source("b.fz", "def f (x : num) : num = x + 1;"))
    assert [d.name for d in program.decls] == ["f"]


def test_without_a_cache_directory_the_grammar_is_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUZZPY_CACHE", "off")
    monkeypatch.setattr(fuzz_parser, "_compiled", None)
    assert fuzz_parser.grammar_cache_path(fuzz_parser.grammar_text()) is None
    assert [d.name for d in parse(Source("c.fz", "let c = 2;")).decls] == ["c"]


def _tables_files(cache: Path) -> list[Path]:
    return sorted((cache / "grammar").glob("*.tables"))


def test_the_parse_tables_are_cached_and_lark_is_then_loaded_only_for_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fresh(monkeypatch, tmp_path)
    text = "def f (db : bag num) : fuzzy num = laplace[0.1] (size (filter (fun x -> x > 1) db));"
    first = parse(Source("a.fz", text))
    (tables,) = _tables_files(tmp_path)
    written = tables.stat().st_mtime_ns
    monkeypatch.setattr(fuzz_parser, "_compiled", None)
    assert parse(Source("a.fz", text)) == first
    assert fuzz_parser._compiled is not None and fuzz_parser._compiled._lark is None  # lark's parser not loaded
    assert tables.stat().st_mtime_ns == written
    with pytest.raises(FuzzError) as error:  # a syntax error loads lark's parser for its words
        parse(Source("b.fz", "def f (x : num) : num = x +;"))
    assert error.value.diagnostics[0].code.startswith("FZ1")
    assert fuzz_parser._compiled._lark is not None


def test_the_tables_key_names_the_frontend_code(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tables made by other code (an edited driver, lexer or tree builder)
    are never used: their key differs, and so does their file."""
    _fresh(monkeypatch, tmp_path)
    grammar = fuzz_parser.grammar_text()
    here = fuzz_parser._tables_key(grammar)
    real_read = Path.read_bytes

    def edited(path: Path) -> bytes:
        data = real_read(path)
        return data + b"\n# edited\n" if path.name == "lalr.py" else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    assert fuzz_parser._tables_key(grammar) != here


@pytest.mark.parametrize("damage", [b"", b"garbage\n", b"\x80\x04junk"])
def test_damaged_parse_tables_are_never_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, damage: bytes) -> None:
    _fresh(monkeypatch, tmp_path)
    key = fuzz_parser._tables_key(fuzz_parser.grammar_text())
    path = fuzz_parser._tables_path(key)
    assert path is not None
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(key.encode() + b"\n" + damage if damage else damage)
    program = parse(Source("b.fz", "def f (x : num) : num = x + 1;"))
    assert [d.name for d in program.decls] == ["f"]


@pytest.mark.parametrize("position", [-1, -200, -5000])
def test_a_damaged_tables_entry_is_never_unpickled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   position: int) -> None:
    """a17 F4: one flipped bit in the pickled tables loaded, then broke every
    parse (IndexError) until the cache was deleted. The entry's SHA-256 is
    checked before anything is unpickled; the grammar is compiled again."""
    _fresh(monkeypatch, tmp_path)
    text = "def f (db : bag num) : fuzzy num = laplace[0.1] (size db);"
    first = parse(Source("a.fz", text))
    (tables,) = _tables_files(tmp_path)
    data = bytearray(tables.read_bytes())
    data[position] ^= 0x10
    tables.write_bytes(bytes(data))
    monkeypatch.setattr(fuzz_parser, "_compiled", None)
    monkeypatch.setattr(fuzz_parser.pickle, "loads", lambda payload: pytest.fail("a damaged entry was unpickled"))
    assert parse(Source("a.fz", text)) == first


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_tables_entry_others_can_write_is_never_unpickled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """a17 F1: a 0666 tables file (a pickle: code) in a private directory was loaded."""
    _fresh(monkeypatch, tmp_path)
    parse(Source("a.fz", "let a = 1;"))
    (tables,) = _tables_files(tmp_path)
    os.chmod(tables, 0o666)
    monkeypatch.setattr(fuzz_parser, "_compiled", None)
    monkeypatch.setattr(fuzz_parser.pickle, "loads", lambda payload: pytest.fail("an untrusted entry was unpickled"))
    assert [d.name for d in parse(Source("a.fz", "let a = 1;")).decls] == ["a"]


def test_fuzzpy_cache_on_means_the_default_place_not_a_folder_named_on(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    from fuzzpy.support.usercache import cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("FUZZPY_CACHE", "on")
    assert cache_dir("proofs") == tmp_path / "fuzzpy" / "proofs"
    monkeypatch.setenv("FUZZPY_CACHE", "OFF")
    assert cache_dir("proofs") is None
