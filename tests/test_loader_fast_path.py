"""The loader's fast paths read exactly what its reference reads.

Two shortcuts serve the common case (docs/semantics.md, "Data loading"):
numbers spelled plainly are converted without trimming, UTF-8 checks or
pattern matching (`cells._fast_numbers`), and a file with no ragged line is
handed to pyarrow whole (`loader._plain_csv_table`). Both must give the
same bag, cell for cell, and the same report as the reference path (every
cell parsed from its own text, ragged lines found by counting fields) on
any file: bad rows, quotes, CRs, whitespace, missing cells, ragged lines.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzpy.data import cells as C
from fuzzpy.data import loader as L
from fuzzpy.language.types import BOOL, INT, NUM, STRING, TBag, TRecord

ROW = TBag(TRecord((("n", INT), ("x", NUM), ("ok", BOOL), ("s", STRING))))

#: Cells near the edge of the plain spelling of numbers, and others.
PLAIN_CELL = st.text(alphabet="0123456789.eE+-", max_size=8).map(str.encode)
CELL = st.one_of(
    PLAIN_CELL,
    PLAIN_CELL,
    st.binary(max_size=10).filter(lambda b: b"\n" not in b and b"\r" not in b and b"," not in b and b'"' not in b),
    st.sampled_from([b"", b" ", b" 1", b"1 ", b"+5", b"-0", b"1e400", b"-1e400", b"nan", b"inf", b"-inf", b"0x10",
                     b"9223372036854775807", b"-9223372036854775807", b"-9223372036854775808",
                     b"9223372036854775808", b"0000000000000000000042", b"\xff", b"1_000", b"\xc2\xa0" + b"1",
                     b"1.", b".5", b"+.5e-3", b".", b"e5", b"1e", b"--1", b"true", b"TRUE", b"1.5"]),
)


def _both(column: pa.Array, kind: str) -> tuple[C.Cells, C.Cells]:
    return C.parse_text(column, kind), C.parse_text_reference(column, kind)


def _same(fast: C.Cells, slow: C.Cells) -> None:
    np.testing.assert_array_equal(fast.problems, slow.problems)
    np.testing.assert_array_equal(np.asarray(fast.values), np.asarray(slow.values))
    assert np.asarray(fast.values).dtype == np.asarray(slow.values).dtype
    signs = np.signbit(np.asarray(fast.values, dtype=np.float64))
    np.testing.assert_array_equal(signs, np.signbit(np.asarray(slow.values, dtype=np.float64)))  # -0 reads as 0


@settings(max_examples=400, deadline=None)
@given(cells=st.lists(CELL, max_size=12), kind=st.sampled_from(["num", "int"]),
       typed=st.sampled_from([pa.binary(), pa.large_binary()]))
def test_plain_numbers_read_as_the_reference_reads_them(cells: list[bytes], kind: str, typed: pa.DataType) -> None:
    fast, slow = _both(pa.array(cells, typed), kind)
    _same(fast, slow)


@settings(max_examples=100, deadline=None)
@given(cells=st.lists(CELL, min_size=1, max_size=12), kind=st.sampled_from(["num", "int"]), start=st.integers(0, 3))
def test_a_slice_of_a_column_reads_as_its_cells(cells: list[bytes], kind: str, start: int) -> None:
    """Arrays that start inside their buffers (pyarrow's slices) are read
    at the right offsets."""
    column = pa.array(cells, pa.binary()).slice(min(start, len(cells)))
    _same(*_both(column, kind))


# ---------------------------------------------------------------- whole files

FIELD = CELL.map(lambda b: b) | st.sampled_from([b'"1,5"', b'"x"', b'""', b'" 2 "', b'"a""b"'])
LINE = st.one_of(
    st.lists(FIELD, min_size=4, max_size=4).map(b",".join),  # a record of the header's width
    st.lists(FIELD, min_size=4, max_size=4).map(b",".join),
    st.lists(FIELD, min_size=0, max_size=6).map(b",".join),  # ragged, or blank
    st.sampled_from([b'1,"2,true,x', b"1,2\r,true,x", b"1,2,true,x\r", b" ", b"1,2.5,true,caf\xc3\xa9"]),
)


def _load(data: bytes) -> tuple[list[tuple[object, ...]], dict[str, object], list[list[int]]]:
    with tempfile.NamedTemporaryFile(suffix=".csv") as handle:
        handle.write(data)
        handle.flush()
        file = L.read_data_file(handle.name)
        header = L.read_header(file)
        bag, report = L.load(header, L.plan(header, ROW, handle.name))
        records = L.read_records(header, ((0, "int"), (1, "num"), (2, "bool"), (3, "string")))
    fields = bag.view().fields
    rows = list(zip(*(fields[name].tolist() for name in ("n", "x", "ok", "s")), strict=True))
    lines = [np.asarray(records.lines).tolist(), records.malformed_lines.tolist(), records.ragged_lines.tolist(),
             records.ragged_fields.tolist()]
    return rows, report, lines


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, max_size=8), crlf=st.booleans())
def test_a_file_loads_the_same_through_the_fast_paths_and_the_reference(
    monkeypatch: pytest.MonkeyPatch, lines: list[bytes], crlf: bool
) -> None:
    end = b"\r\n" if crlf else b"\n"
    data = b"n,x,ok,s" + end + end.join(lines) + end
    fast = _load(data)
    with monkeypatch.context() as patch:
        patch.setattr(C, "FAST_NUMBERS", False)
        patch.setattr(L, "_plain_csv_table", lambda framed, names, wanted: None)
        reference = _load(data)
    assert fast[0] == reference[0]  # the same rows, in the same order
    assert fast[1] == reference[1]  # the same report for the owner
    assert fast[2] == reference[2]  # the same lines named


def test_the_fast_paths_are_taken_on_a_clean_numeric_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a test of speed: that the common case does not go the slow way."""
    calls: list[str] = []
    original = C.parse_text_reference
    monkeypatch.setattr(C, "parse_text_reference", lambda column, kind: calls.append(kind) or original(column, kind))
    monkeypatch.setattr(L, "_csv_table", lambda *args: calls.append("framed line by line"))
    data = b"n,x,ok,s\n" + b"".join(b"%d,%d.5,true,x\n" % (i, i) for i in range(50))
    rows, _, _ = _load(data)  # loads, then reads the records once more
    assert len(rows) == 50 and calls == ["bool", "string"] * 2


BOM = "\ufeff".encode()


@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("cell", [BOM + b"7", BOM + b"north", BOM, b'"' + BOM + b'x"'])
def test_a_record_starting_with_a_byte_order_mark_reads_as_on_any_other_line(
    monkeypatch: pytest.MonkeyPatch, cell: bytes, ragged: bool
) -> None:
    """a15 F1: pyarrow dropped U+FEFF at the start of the first record only,
    so adding a line before it changed how it was read (a neighbour moved a
    sum by twice its bound). Only the file's first bytes are a byte order mark."""
    extra = b"1,2,3" if ragged else b"y,2,2.5,false"  # a ragged line takes the slow path
    for header, line in ((b"s,n,x,ok", cell + b",1,2.5,true"), (b"x,n,s,ok", cell + b",1,z,true")):
        alone = _load(header + b"\n" + line + b"\n" + extra + b"\n")[0]
        after = _load(header + b"\n" + extra + b"\n" + line + b"\n")[0]
        assert sorted(alone, key=repr) == sorted(after, key=repr)
        with monkeypatch.context() as patch:
            patch.setattr(L, "_plain_csv_table", lambda framed, names, wanted: None)
            slow = _load(header + b"\n" + line + b"\n" + extra + b"\n")[0]
        assert sorted(slow, key=repr) == sorted(alone, key=repr)
