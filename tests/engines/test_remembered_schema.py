"""A Parquet file's schema remembered by its hash (`engine.parquet_columns`),
so that a DuckDB run of the same bytes does not import pyarrow (issue 11):
the remembered descriptions (`columntypes.ColumnType`) must classify every
column exactly as pyarrow's types do, refuse with the same code and
message, and compile to the same SQL; runs from a remembered schema release
what the in-memory interpreter releases."""

from __future__ import annotations

import datetime
import decimal
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fuzzpy.engines.engine as engine_module
import fuzzpy.engines.filehash as filehash
from fuzzpy.data.cells import kind_of_arrow, readable_from
from fuzzpy.data.columntypes import column_type, from_json, to_json
from fuzzpy.data.loader import Header, plan
from fuzzpy.engines.engine import _compilable, parquet_columns, streamed_data_file
from fuzzpy.engines.fingerprint import cell_class
from fuzzpy.engines.scan import cell_sql, compilable, parquet_select
from fuzzpy.engines.sql import DIALECTS
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.types import TBag, TBool, TInt, TNum, TRecord, TString

from .conftest import release

KINDS = {"int": TInt(), "num": TNum(), "bool": TBool(), "string": TString()}
TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
         pa.float16(), pa.float32(), pa.float64(), pa.bool_(), pa.string(), pa.large_string(), pa.binary(),
         pa.large_binary(), pa.binary(3), pa.decimal128(5, 2), pa.decimal256(40, 1), pa.decimal128(10, -2),
         pa.date32(), pa.date64(), pa.timestamp("ns"), pa.timestamp("us", tz="UTC"), pa.time32("s"),
         pa.time64("us"), pa.duration("s"), pa.null(), pa.list_(pa.int64()), pa.large_list(pa.string()),
         pa.struct([("x", pa.int64())]), pa.map_(pa.string(), pa.int64()), pa.string_view(),
         pa.binary_view(), pa.dictionary(pa.int32(), pa.string()), pa.dictionary(pa.int8(), pa.large_string()),
         pa.dictionary(pa.int32(), pa.int64()), pa.dictionary(pa.int16(), pa.binary()), pa.json_(), pa.uuid()]


# ---------------------------------------------------------------- the reference: pyarrow's own predicates


def _values(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _binary(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def reference_readable(t: pa.DataType, kind: str) -> bool:
    t = _values(t)
    if pa.types.is_null(t):  # every cell missing: read as any kind, every row that reads it dropped (review s29f)
        return True
    text = _text(t) or _binary(t)
    number = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
    if kind in ("int", "num"):
        return text or number
    if kind == "bool":  # a stored number never, 0 and 1 included (issue 31, F8: one rule on every form)
        return text or pa.types.is_boolean(t)
    return text or number or pa.types.is_boolean(t)


def reference_kind(t: pa.DataType) -> str | None:
    t = _values(t)
    if pa.types.is_null(t):  # every cell missing: typed as a float column is (review s29f)
        return "num"
    if pa.types.is_integer(t):  # a uint64 reaches 2^64 - 1, beyond the runtime's ints: num (rows2)
        return "num" if t == pa.uint64() else "int"
    if pa.types.is_decimal(t):  # a whole decimal of at most 18 digits fits in 64 bits: int (rows2)
        return "int" if t.scale == 0 and t.precision <= 18 else "num"
    if pa.types.is_floating(t):
        return "num"
    return "bool" if pa.types.is_boolean(t) else "string" if _text(t) else None


def reference_compilable(t: pa.DataType, kind: str) -> bool:
    t = _values(t)
    if _text(t) or pa.types.is_integer(t):
        return True
    if pa.types.is_floating(t):
        return kind in ("num", "int", "bool")
    return pa.types.is_boolean(t) and kind in ("bool", "string")


def reference_class(t: pa.DataType) -> str | None:
    t = _values(t)
    tests = (("int", pa.types.is_integer), ("float", pa.types.is_floating), ("bool", pa.types.is_boolean),
             ("string", _text), ("binary", _binary), ("decimal", pa.types.is_decimal))
    return next((name for name, test in tests if test(t)), None)


def remembered(t: pa.DataType):  # type: ignore[no-untyped-def]
    """The description as a later run reads it back from the cache."""
    return from_json(json.loads(json.dumps(to_json(column_type(t)))))


@pytest.mark.parametrize("arrow_type", TYPES, ids=str)
def test_a_remembered_type_classifies_as_pyarrows_type(arrow_type: pa.DataType) -> None:
    described = remembered(arrow_type)
    assert described is not None and str(described) == str(arrow_type)
    for t in (arrow_type, described):
        assert kind_of_arrow(t) == reference_kind(arrow_type)
        assert cell_class(t) == reference_class(arrow_type)
        for kind in KINDS:
            assert readable_from(t, kind) == reference_readable(arrow_type, kind)
            assert compilable(t, kind) == reference_compilable(arrow_type, kind)
    for kind in KINDS:
        if reference_compilable(arrow_type, kind):
            d = DIALECTS["duckdb"]
            ours, theirs = cell_sql(d, "c", described, kind), cell_sql(d, "c", arrow_type, kind)
            assert (ours.value, ours.fits) == (theirs.value, theirs.fits)
    values = _values(arrow_type)
    assert described.dictionary == pa.types.is_dictionary(arrow_type)
    if pa.types.is_integer(values):  # the sign and width decide the SQL of 64-bit integers
        assert described.bit_width == values.bit_width
        assert described.family == ("uint" if pa.types.is_unsigned_integer(values) else "int")
    assert (described.family in ("string", "large_string")) == _text(values)


def test_a_damaged_entry_is_not_a_description() -> None:
    for entry in (None, [], ["int", 64, False], ["long", 64, False, "int64"], ["int", "64", False, "int64"],
                  ["int", 64, 0, "int64"], ["int", 64, False, 7]):
        assert from_json(entry) is None


# ---------------------------------------------------------------- files: the plan and the SQL


def _adversarial_table() -> pa.Table:
    n = 4
    columns = {
        "i8": pa.array([1, -2, 0, 1], pa.int8()), "i16": pa.array([1, 2, 3, 300], pa.int16()),
        "u8": pa.array([0, 1, 2, 255], pa.uint8()), "u64": pa.array([0, 1, 2**63, 2**64 - 1], pa.uint64()),
        "f16": pa.array([0.5, 1.0, None, 2.0], pa.float16()), "f32": pa.array([0.5, 1.0, 2.0, 3.0], pa.float32()),
        "dec": pa.array([decimal.Decimal("1.25")] * n, pa.decimal128(5, 2)),
        "dec40": pa.array([decimal.Decimal("12.5")] * n, pa.decimal256(40, 1)),
        "ds": pa.array(["a", "b", "a", None]).dictionary_encode(),
        "ls": pa.array(["1", "2", "x", ""], pa.large_string()), "bin": pa.array([b"1", b"0", b"1", b"x"]),
        "lbin": pa.array([b"1"] * n, pa.large_binary()), "fsb": pa.array([b"ab"] * n, pa.binary(2)),
        "ts": pa.array([datetime.datetime(2020, 1, 1)] * n, pa.timestamp("us", tz="UTC")),
        "dur": pa.array([1, 2, 3, 4], pa.duration("s")), "t32": pa.array([1, 2, 3, 4], pa.time32("s")),
        "lst": pa.array([[1], [2], [], None]), "st": pa.array([{"x": 1}] * n),
        "js": pa.array(["1", "2", "3", "4"], pa.json_()), "uu": pa.array([uuid.UUID(int=i).bytes for i in range(n)],
                                                                      pa.uuid()),
        "b": pa.array([True, False, None, True]),
    }
    fields = [pa.field(name, column.type, nullable=name not in ("i16", "f32")) for name, column in columns.items()]
    return pa.table(list(columns.values()), schema=pa.schema(fields))


@pytest.fixture
def settled(monkeypatch):  # type: ignore[no-untyped-def]
    """A file written by the test counts as settled (`filehash`), so its schema is remembered."""
    monkeypatch.setattr(filehash, "SETTLED_SECONDS", 0.0)


def _outcome(header: Header, name: str, kind: str, path: str) -> tuple[object, ...]:
    try:
        planned = plan(header, TBag(TRecord(((name, KINDS[kind]),))), path)
    except FuzzError as error:
        return tuple((d.code, d.message) for d in error.diagnostics)
    d = DIALECTS["duckdb"]
    if not _compilable(header, planned):
        return ("loader",)
    return ("compiled", parquet_select(d, "src", "pos", planned, header.arrow_types, header.names))


@pytest.mark.parametrize("options", [{}, {"version": "1.0"}, {"use_dictionary": False}])
def test_a_remembered_schema_plans_and_compiles_as_pyarrows(tmp_path: Path, settled: None,
                                                           options: dict[str, object], monkeypatch) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(_adversarial_table(), path, **options)
    schema = pq.read_schema(path)
    reference = Header(tuple(schema.names), tuple(schema.types), None, None)
    file = streamed_data_file(path)
    first = parquet_columns(file)
    monkeypatch.setattr(engine_module, "parquet_schema", _not_called)
    names, types = parquet_columns(streamed_data_file(path))  # from the cache
    assert (names, types) == first and names == reference.names
    ours = Header(names, types, None, None)
    for name in names:
        for kind in KINDS:
            assert _outcome(ours, name, kind, str(path)) == _outcome(reference, name, kind, str(path)), (name, kind)


def _not_called(path: str) -> None:
    raise AssertionError("the schema was read again")


def test_a_changed_file_does_not_use_anothers_schema(tmp_path: Path, settled: None, monkeypatch) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.int64())}), path)
    assert str(parquet_columns(streamed_data_file(path))[1][0]) == "int64"
    pq.write_table(pa.table({"a": pa.array(["1", "2"])}), path)
    assert str(parquet_columns(streamed_data_file(path))[1][0]) == "string"


def test_without_a_cache_the_schema_is_read_each_time(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), path)
    monkeypatch.setenv("FUZZPY_CACHE", "off")
    parquet_columns(streamed_data_file(path))
    monkeypatch.setattr(engine_module, "parquet_schema", _not_called)
    with pytest.raises(AssertionError):
        parquet_columns(streamed_data_file(path))


# ---------------------------------------------------------------- whole runs

PROGRAM = """\
type Nums = { i8 : num, f16 : num, u8 : int };
def total (db : bag Nums) : fuzzy num = laplace[1] (sum[0, 100] (map (fun r -> r.i8 + r.f16 + r.u8) db));
type Big = { u64 : num, i16 : num };
def big (db : bag Big) : fuzzy num = laplace[1] (size (filter (fun r -> r.u64 > 1) db));
type Words = { ds : string, b : bool, ls : int };
def words (db : bag Words) : fuzzy num = laplace[1] (size (filter (fun r -> r.ds == "a" && r.b) db));
type Decimal = { dec : num, bin : bool };
def decimals (db : bag Decimal) : fuzzy num = laplace[1] (sum[0, 10] (map (fun r -> r.dec) db));
type Bad = { ts : num };
def refused (db : bag Bad) : fuzzy num = laplace[1] (size db);
type Dur = { dur : int };
def duration (db : bag Dur) : fuzzy num = laplace[1] (size db);
"""


@pytest.mark.parametrize("definition", ["total", "big", "words", "decimals", "refused", "duration"])
def test_runs_from_a_remembered_schema_release_what_memory_releases(tmp_path: Path, settled: None,
                                                                    definition: str, monkeypatch) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(_adversarial_table(), path)
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM)
    expected = release(program, definition, path, "memory")
    assert release(program, definition, path, "duckdb") == expected  # the schema read, and remembered
    monkeypatch.setattr(engine_module, "parquet_schema", _not_called)
    assert release(program, definition, path, "duckdb") == expected  # from the cache
    assert expected.kind == ("failed" if definition in ("refused", "duration") else "released")


CHILD = """
import json, sys
import fuzzpy.engines.filehash as filehash
from fuzzpy.release.run import RunRequest, execute
filehash.SETTLED_SECONDS = 0.0  # the file was just written
request = RunRequest(sys.argv[1], "count_older", data={"db": sys.argv[2]}, budget="10", ledger=sys.argv[3],
                     seed=1, engine="duckdb")
value = execute(request).value
print(json.dumps({"value": str(value), "pyarrow": "pyarrow" in sys.modules}))
"""


def test_a_second_duckdb_run_of_a_parquet_file_does_not_import_pyarrow(tmp_path: Path) -> None:
    data = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"age": [float(a) for a in range(20, 80)], "name": ["x"] * 60}), data)
    program = tmp_path / "p.fz"
    program.write_text("type Row = { age : num };\n"
                       "def count_older (db : bag Row) : fuzzy num = laplace[1] (size (filter (fun r -> r.age > 40) db));\n")
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", CHILD, str(program), str(data), str(tmp_path / "l.sqlite")],
                              capture_output=True, text=True, timeout=300, check=True)
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    assert runs[0]["pyarrow"]  # the first run reads the schema with pyarrow, and remembers it
    assert not runs[1]["pyarrow"]
