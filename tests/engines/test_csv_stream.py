"""A CSV file streamed by DuckDB (fuzzpy/engines/csvscan.py) gives the rows,
in the same order, and the owner's report of the in-memory loader, on every
kind of line the loader's own tests use; a file DuckDB cannot frame as the
loader does is loaded by the loader, silently (the reason is a fact about
the data, kept in the owner's record); a streamed file is never loaded into
Python."""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzpy.data.loader import load, plan, read_data_file, read_header
from fuzzpy.engines.csvscan import CHUNK, LINE_LIMIT, Scanner
from fuzzpy.engines.engine import QueryEngine, streamed_data_file
from fuzzpy.engines.scan import ROW_ID
from fuzzpy.language.types import BOOL, INT, NUM, STRING, TBag, TRecord
from fuzzpy.ledger.datasets import Column, Policy, Registration

from .conftest import release

ROOT = Path(__file__).resolve().parents[2]
ROW = TRecord((("n", INT), ("x", NUM), ("ok", BOOL), ("s", STRING)))
HEADER = b"n,x,ok,s"
POLICIES = {"drop": {}, "values": {"n": "value:-7", "x": "value:2.5", "ok": "value:true", "s": "value:gap"}}

NUMBERS = [b"1", b" 2 ", b"+3", b"-4", b"1.5", b".5", b"5.", b"-.5e-3", b"1e3", b"1E+3", b"1e400", b"-1e400",
           b"nan", b"inf", b"-Infinity", b"0x10", b"1_000", b"forty", b"", b"   ", b"\xc2\xa0 7\xe3\x80\x80",
           b"\t8", b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
           b"0000000000000000000000000000000000000000001", b"1" * 700, b"0." + b"1" * 700, b"1" * 400 + b"e-390",
           b"\xd9\xa1\xd9\xa2", b"\xef\xbc\x91", b"+", b"-", b"1e", b"--1", b"2.2250738585072011e-308",
           b"4.9406564584124654e-324", b"-0", b"-0.0", b"\x00", b"1\x00"]
WORDS = [b"true", b"FALSE", b"1", b"0", b"TrUe", b"yes", b"", b" true ", b"t", b"h\xc3\xa9llo w\xc3\xb6rld",
         b"\xe6\x97\xa5\xe6\x9c\xac", b"a b", b"\xef\xbb\xbfx", b"\xe2\x80\xa8", b"'q'", b"5'11\"", b"a\\b"]
QUOTED = [b'"1,5"', b'"x"', b'""', b'" 2 "', b'"a""b"', b'"true"', b'"  3.5 "', b'"a\nb"', b'"\xc3\xa9,"']


def _file(data: bytes, folder: Path, name: str = "d.csv") -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _registration(path: Path, policies: dict[str, str]) -> Registration:
    file = read_data_file(path)
    columns = tuple(Column(name, None, Policy.parse(policies.get(name, "drop"))) for name, _ in ROW.fields)
    return Registration("d", file.absolute, file.format, file.sha256, len(file.data), columns, explicit=True,
                        registered="", validated="")


def _memory(path: Path, registration: Registration) -> tuple[list[tuple], dict[str, object]]:
    header = read_header(read_data_file(path))
    bag, report = load(header, plan(header, TBag(ROW), str(path), registration))
    fields = bag.view().fields
    return [tuple(_exact(v) for v in row) for row in zip(*(fields[n].tolist() for n, _ in ROW.fields),
                                                          strict=True)], report


def _engine(path: Path, registration: Registration) -> tuple[list[tuple], dict[str, object], list[str]]:
    warnings: list[str] = []
    engine = QueryEngine("duckdb", warnings.append)
    try:
        file = streamed_data_file(path)
        header = engine._header(file)
        opened = SimpleNamespace(file=file, header=header, placed=None,
                                 plan=plan(header, TBag(ROW), str(path), registration))
        bag, report = engine.load(opened)
        got = engine.backend.rows(f"SELECT * FROM {bag.scan.table} ORDER BY {ROW_ID}")
    finally:
        engine.close()
    assert [row[-1] for row in got] == list(range(len(got)))  # ids: positions among the loaded rows
    return [tuple(_exact(v) for v in row[:-1]) for row in got], report, warnings


def _exact(value: object) -> object:
    return repr(value) if isinstance(value, float) else value  # -0.0 and 0.0 differ


def _compare(data: bytes, streamed: bool | None = True) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _file(data, Path(tmp))
        for policies in POLICIES.values():
            registration = _registration(path, policies)
            expected, expected_report = _memory(path, registration)
            got, report, warnings = _engine(path, registration)
            loaded_by = report.pop("loaded_by", None)  # the owner's record of a fallback
            assert report == expected_report, data
            assert got == expected, data
            assert not warnings  # whether a file streams depends on its contents: the analyst is not told
            if streamed is not None:
                assert (loaded_by is None) == streamed, (loaded_by, data)


def _lines(*lines: bytes, end: bytes = b"\n") -> bytes:
    return end.join((HEADER, *lines)) + end


CASES = {
    "numbers": _lines(*(b"%s,%s,true,s" % (n, n) for n in NUMBERS)),
    "words": _lines(*(b"1,2,%s,%s" % (w, w) for w in WORDS)),
    "quoted": _lines(*(b"%d,%s,1,%s" % (i, q, q) for i, q in enumerate(QUOTED))),
    "crlf": _lines(b"1,2,true,a", b"", b"3,4,false,b", b" ", end=b"\r\n"),
    "mixed line ends": b"n,x,ok,s\r\n1,2,true,a\n\r\n3,4,0,b\r\n5,6,1,c\n",
    "no final newline": _lines(b"1,2,true,a") + b"3,4,false,b",
    "ragged": _lines(b"1,2,true", b"1,2,true,a,b", b"1", b",,,", b"1,2,true,a", b"1,\"2,3\",true,a,"),
    "unclosed quotes": _lines(b'1,"2,true,x', b"2,3,true,y", b'3,4,true,"z', b'"', b'4,5,true,a"b"'),
    "quoted then text": _lines(b'1,"2"x,true,a', b'1,2,"tr"ue,a', b'1, "2",true,a'),
    "bom": b"\xef\xbb\xbf" + _lines(b"1,2,true,a", b"\xef\xbb\xbf2,3,true,b"),
    "blank lines first": b"\n\r\n\n" + _lines(b"1,2,true,a", b"", b"2,3,true,b"),
    "bom then blank": b"\xef\xbb\xbf\n" + _lines(b"1,2,true,a"),
    "header only": HEADER + b"\n",
    "header, no newline": HEADER,
    "header spaced": b" n , x ,ok, s \n1,2,true,a\n",
    "quoted header": b'"n","x",ok,"s"\n1,2,true,a\n',
    "header with other columns": b"s,extra,x,n,ok\nq,1,2,3,true\nr,,2,3,true\n",
    "nul bytes": _lines(b"1,2,true,a\x00b", b"\x00,2,true,a"),
    "empty cells": _lines(b",,,", b"1,,,", b",2,,", b",,true,", b",,,s"),
    # a lone carriage return streams from a marked copy (review s29c): one row decides no path
    "lone carriage return": _lines(b"1,2\r,true,x", b"2,3,true,y"),
    "final carriage return": _lines(b"1,2,true,x") + b"2,3,true,y\r",
    "lone return splitting a record in two": _lines(b"1,2,true,x\r3,4,false,y", b"2,3,true,y"),
    # bytes that are not UTF-8 stream from a marked copy too: a cell holding one reads as no text
    "invalid utf-8": _lines(b"1,2,true,\xff", b"2,3,true,ok", b"\xc3(,1,true,a", b"3,\xed\xa0\x80,true,b"),
    "invalid utf-8, quoted and spaced": _lines(b'"1\xff",2,true,a', b'4," \x80 ",1,"b\xfe"', b"5,6, \xc0\xaf ,c",
                                              b"7,8,true,\xf4\x90\x80\x80", b"9,1,\xff\xfe,,"),
    "invalid utf-8 and a lone return": _lines(b"1,2,true,\xe9", b"2,\xff3\r,true,y", b"3,4,false,z"),
}
FALLBACK = {
    "every delimiter byte": _lines(b"1,2,true,\x01\x02\x03\x1f", b"2,3,true,y"),
    # no third byte left to mark the bad bytes with (remains: one row can hold three such bytes)
    "three delimiter bytes and invalid utf-8": _lines(b"1,2,true,\x01\x02\x03", b"2,3,true,\xff"),
    "a long line": _lines(b"1,2,true," + b"x" * (LINE_LIMIT + 10), b"2,3,true,y"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_streamed_csv_reads_as_the_loader_reads_it(name: str) -> None:
    _compare(CASES[name])


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_a_csv_duckdb_cannot_frame_is_loaded_by_the_loader_silently(name: str) -> None:
    _compare(FALLBACK[name], streamed=False)


CELL = st.one_of(st.sampled_from(NUMBERS + WORDS + QUOTED),
                 st.binary(max_size=6).filter(lambda b: not set(b) & set(b"\n\r,\"\x01\x02\x03\x1f")),
                 st.text(max_size=4).map(str.encode).filter(lambda b: not set(b) & set(b"\n\r,\"")))
LINE = st.one_of(st.lists(CELL, min_size=4, max_size=4).map(b",".join),
                 st.lists(CELL, min_size=4, max_size=4).map(b",".join),
                 st.lists(CELL, min_size=0, max_size=6).map(b",".join),
                 st.sampled_from([b'1,"2,true,x', b" ", b"1,2.5,true,caf\xc3\xa9", b'"', b'""""']))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(lines=st.lists(LINE, max_size=8), crlf=st.booleans())
@pytest.mark.slow  # 10-30 s: the slow job runs it (the default suite keeps its 10 minutes)
def test_any_file_of_such_lines_reads_as_the_loader_reads_it(lines: list[bytes], crlf: bool) -> None:
    _compare(_lines(*lines, end=b"\r\n" if crlf else b"\n"), streamed=None)


def test_the_scanner_sees_across_chunks() -> None:
    def facts(*chunks: bytes):  # type: ignore[no-untyped-def]
        scanner = Scanner()
        for chunk in chunks:
            scanner.update(chunk)
        return scanner.facts()

    assert not facts(b"a\r", b"\nb").lone_carriage_return
    assert facts(b"a\r", b"b\n").lone_carriage_return
    assert facts(b"a\xc3", b"\xa9\n").utf8
    assert facts(b"a\xc3", b"(\n").utf8 is False
    assert facts(b"a\xc3").utf8 is False
    assert facts(b"\x01", b"\x02").delimiter == b"\x03"
    half = b"x" * (LINE_LIMIT // 2 + 1)
    assert facts(b"\n" + half, half + b"\n").long_line
    assert not facts(b"\n" + half, b"\n" + half + b"\n").long_line
    assert CHUNK <= LINE_LIMIT  # a line inside one chunk is never longer than the limit


def test_a_streamed_csv_is_never_loaded_into_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import fuzzpy.data.loader as loader
    import fuzzpy.engines.engine as engine

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the loader read the file")

    program = ROOT / "examples" / "noisy_count.fz"
    data = _file((ROOT / "examples" / "data" / "people.csv").read_bytes(), tmp_path, "people.csv")
    expected = release(program, "noisy_count", data, "memory")
    for module in (engine, loader):
        monkeypatch.setattr(module, "load", refuse)
        monkeypatch.setattr(module, "read_header", refuse)
    monkeypatch.setattr(loader, "read_data_file", refuse)
    monkeypatch.setattr(engine, "_read_whole", refuse)
    got = release(program, "noisy_count", data, "duckdb")
    assert (got.kind, got.detail) == (expected.kind, expected.detail) and got.kind == "released"
    assert not got.warnings


def test_a_file_version_s_hash_is_remembered_and_a_changed_file_is_hashed_again(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import hashlib

    import fuzzpy.engines.engine as engine
    import fuzzpy.engines.filehash as filehash

    monkeypatch.setattr(filehash, "SETTLED_SECONDS", 0.0)
    path = _file(CASES["quoted"], tmp_path)
    first = streamed_data_file(path)
    assert first.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()

    class Unread(Scanner):
        def update(self, chunk: bytes) -> None:
            raise AssertionError("the file was read again")

    monkeypatch.setattr(engine, "Scanner", Unread)
    again = streamed_data_file(path)
    assert (again.sha256, again.data.facts, again.data.stat) == (first.sha256, first.data.facts, first.data.stat)
    monkeypatch.setattr(engine, "Scanner", Scanner)
    with path.open("r+b") as handle:  # the same size, another byte
        handle.seek(len(HEADER) + 1)
        handle.write(b"7")
    changed = streamed_data_file(path)
    assert changed.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() != first.sha256
