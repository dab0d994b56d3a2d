"""Data given in memory (fuzzpy.data): every kind releases, seeded, exactly
what the same data releases as a CSV or Parquet file; row rules; neighbours;
refusals; the fingerprint recorded in the ledger."""

from __future__ import annotations

import sqlite3
from fractions import Fraction
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.api.frames import register_frame
from fuzzpy.data import DuckDBTable
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.run import Refusal, RunRequest, execute

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

PROGRAM = """
type Row = { x : num, k : int, s : string, b : bool };
def count (db : bag Row) : fuzzy num = laplace[1.0] (size db);
def total (db : bag Row) : fuzzy num = laplace[1.0] (sum[-10, 10] (map (fun r -> r.x) db));
def kept (db : bag Row) : fuzzy num = laplace[1.0] (size (filter (fun r -> r.b) db));
def ks (db : bag Row) : fuzzy num = laplace[0.5] (sum[-100, 100] (map (fun r -> r.k) db));
def every (db : bag Row) : fuzzy num =
  laplace[1.0] (size (filter (fun r -> r.x == r.x && r.k == r.k && r.s == r.s && r.b == r.b) db));
"""
DEFINITIONS = ("count", "total", "kept", "ks")
CSV = """x,k,s,b
1.5,3,a,true
-2.25,,b,false
,7,c,true
0.1,-4,,true
nan,2,e,false
1e300,5,f,true
3.0,9,g,
-0.0,1,h,false
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.fz").write_text(PROGRAM)
    (tmp_path / "rows.csv").write_text(CSV)
    return tmp_path


def arrow(folder: Path) -> pa.Table:
    import pyarrow.csv as pacsv

    return pacsv.read_csv(folder / "rows.csv")


def run(folder: Path, definition: str, data: object, engine: str = "memory", name: str | None = "rows",
        ledger: str = "ledger.sqlite", budget: str | None = "1e9,0.5") -> Fraction | str:
    request = RunRequest(str(folder / "p.fz"), definition, data={"db": data}, budget=budget,
                         ledger=str(folder / ledger), seed=11, engine=engine,
                         datasets={"db": name} if name else {})
    try:
        return execute(request).value
    except Refusal as refusal:
        return ",".join(d.code for d in refusal.diagnostics)
    except FuzzError as error:
        return ",".join(d.code for d in error.diagnostics)


def kinds(folder: Path) -> dict[str, object]:
    table = arrow(folder)
    con = duckdb.connect()
    con.register("source", table)
    con.execute("CREATE TABLE rows_t AS SELECT * FROM source")
    return {
        "pandas": pd.read_csv(folder / "rows.csv"),
        "pandas-nullable": pd.read_csv(folder / "rows.csv").convert_dtypes(),
        # polars reads `nan` as text: a String column, `string` by its stored type (rows2), so x is given as floats
        "polars": pl.read_csv(folder / "rows.csv", schema_overrides={"x": pl.Float64}),
        "arrow": table,
        "arrow-reader": lambda: pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
        "duckdb-relation": con.sql("SELECT * FROM rows_t"),
        "duckdb-table": DuckDBTable(con, "rows_t"),
    }


@pytest.mark.parametrize("definition", ["total", "kept"])
def test_every_kind_releases_what_the_file_releases(folder: Path, definition: str) -> None:
    expected = run(folder, definition, str(folder / "rows.csv"), name=None, ledger="file.sqlite")
    assert isinstance(expected, Fraction)
    pq.write_table(arrow(folder), folder / "rows.parquet")
    assert run(folder, definition, str(folder / "rows.parquet"), "duckdb", None, "parquet.sqlite") == expected
    for kind, data in kinds(folder).items():
        for engine in ("memory", "duckdb") if kind != "duckdb-relation" else ("memory", "duckdb", "auto"):
            value = data() if callable(data) else data
            got = run(folder, definition, value, engine, ledger=f"{kind}-{engine}.sqlite")
            assert got == expected, (kind, engine)


def test_missing_values_of_every_library_are_missing(folder: Path) -> None:
    """NaN, None, pandas NA and NaT-like gaps all read as missing cells: the
    default rule drops their rows, whatever the library (for a definition
    reading every column: a count reads none, issue 31)."""
    frames = [
        pd.DataFrame({"x": [1.0, float("nan"), 2.0], "k": [1, 2, 3], "s": ["a", None, "c"],
                      "b": [True, True, True]}),
        pd.DataFrame({"x": pd.array([1.0, None, 2.0], dtype="Float64"), "k": pd.array([1, None, 3], "Int64"),
                      "s": ["a", "b", "c"], "b": pd.array([True, None, True], "boolean")}),
        pl.DataFrame({"x": [1.0, None, 2.0], "k": [1, 2, 3], "s": ["a", "b", "c"], "b": [True, True, True]}),
        pd.DataFrame({"x": [1.0, 2.5, 2.0], "k": [1, 2, 3], "s": ["a", "b", "c"],
                      "b": pd.Series([True, None, True], dtype=object)}),
        pa.table({"x": [1.0, float("inf"), 2.0], "k": [1, 2, 3], "s": ["a", "  ", "c"], "b": [True, True, True]}),
    ]
    two = pa.table({"x": [1.0, 2.0], "k": [1, 3], "s": ["a", "c"], "b": [True, True]})
    expected = run(folder, "every", two, ledger="two.sqlite")
    for index, frame in enumerate(frames):
        assert run(folder, "every", frame, ledger=f"m{index}.sqlite") == expected, index
        assert run(folder, "every", frame, "duckdb", ledger=f"d{index}.sqlite") == expected, index


def test_an_untyped_column_is_read_cell_by_cell(folder: Path) -> None:
    """A pandas object column is text, each cell from its own value: one
    float among big ints does not round them (pyarrow's inference would)."""
    big = 2**62 + 1
    mixed = pd.DataFrame({"x": [1.0, 2.0], "k": pd.Series([big, 0.5], dtype=object), "s": ["a", "b"],
                          "b": [True, False]})
    clean = pa.table({"x": [1.0], "k": pa.array([big], pa.int64()), "s": ["a"], "b": [True]})
    program = folder / "p.fz"
    program.write_text(PROGRAM + "def kmax (db : bag Row) : fuzzy num = laplace[1.0] "
                       "(sum[0, 4611686018427387904] (map (fun r -> r.k) db));\n")
    assert run(folder, "kmax", mixed, ledger="a.sqlite") == run(folder, "kmax", clean, ledger="b.sqlite")


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_row_rules_replace_and_refuse(folder: Path, engine: str) -> None:
    frame = pd.DataFrame({"x": [1.0, None, 2.0], "k": [1, 2, 3], "s": ["a", "b", "c"], "b": [True] * 3})
    replaced = pd.DataFrame({"x": [1.0, 5.0, 2.0], "k": [1, 2, 3], "s": ["a", "b", "c"], "b": [True] * 3})
    ledger = str(folder / "owner.sqlite")
    register_frame(ledger, "people", frame, "1e9,0.5", missing={"x": "value:5"})
    got = run(folder, "total", frame, engine, name="people", ledger="owner.sqlite", budget=None)
    assert got == run(folder, "total", replaced, engine, ledger="plain.sqlite")
    with pytest.raises(FuzzError) as refused:
        register_frame(ledger, "strict", frame, "1", missing={"x": "refuse"})
    assert refused.value.diagnostics[0].code == "FZ546"


@pytest.mark.slow  # 10-30 s: the slow job runs it (the default suite keeps its 10 minutes)
def test_neighbouring_frames_release_within_the_sensitivity(folder: Path) -> None:
    """One row added (seeded, the same noise): the releases differ by at
    most the checker's sensitivity (times the grid's slack 1 + 2^-8)."""
    base = pa.table({"x": [1.5, -2.0, 0.25], "k": [1, 2, 3], "s": ["a", "b", "c"], "b": [True, False, True]})
    extra = [{"x": 10.0, "k": 100, "s": "z", "b": True}, {"x": -1e300, "k": -5, "s": "", "b": False},
             {"x": float("nan"), "k": 0, "s": "q", "b": True}]
    sensitivity = {"total": 10, "ks": 100}
    for index, row in enumerate(extra):
        added = pa.concat_tables([base, pa.Table.from_pylist([row], base.schema)])
        for definition, bound in sensitivity.items():
            for engine in ("memory", "duckdb"):
                a = run(folder, definition, base, engine, ledger=f"n{index}{definition}{engine}a.sqlite")
                b = run(folder, definition, pl.from_arrow(added), engine,
                        ledger=f"n{index}{definition}{engine}b.sqlite")
                assert abs(a - b) <= Fraction(bound) * (1 + Fraction(1, 256)), (definition, engine, row)


def test_refusals(folder: Path) -> None:
    frame = arrow(folder)
    assert run(folder, "count", frame, name=None) == "FZ550"
    assert run(folder, "count", {"x": [1]}) == "FZ551"
    assert run(folder, "count", [1, 2]) == "FZ551"
    con = duckdb.connect()
    assert run(folder, "count", con.sql("SELECT 1.0 AS x, 1 AS k, 'a' AS s, true AS b"), "spark") == "FZ552"
    assert run(folder, "count", frame, name="not a name!") == "FZ547"
    assert not (folder / "ledger.sqlite").exists() or _charges(folder / "ledger.sqlite") == []


def test_a_changed_frame_is_refused_and_the_fingerprint_is_recorded(folder: Path) -> None:
    frame = pd.read_csv(folder / "rows.csv")
    frame["note"] = "n"
    first = run(folder, "total", frame)
    assert isinstance(first, Fraction)
    shuffled = frame.iloc[::-1].reset_index(drop=True)  # the order of rows does not matter
    assert isinstance(run(folder, "total", shuffled, "duckdb"), Fraction)
    changed = frame.copy()
    changed.loc[0, "x"] = 1.25
    assert run(folder, "total", changed) == "FZ541"
    assert run(folder, "total", changed, "duckdb") == "FZ541"
    other = frame.copy()
    other.loc[0, "note"] = "zz"  # a column the row type does not read
    assert isinstance(run(folder, "total", other), Fraction)
    assert run(folder, "kept", frame.drop(columns=["x"])) == "FZ503"
    charges = _charges(folder / "ledger.sqlite")
    assert len(charges) == 3
    assert len({c for c in charges}) == 1  # the columns read are the same data each time
    assert run(folder, "count", frame, name="copy") == "FZ545"  # the same data is one dataset


def test_the_fingerprint_is_the_same_in_every_engine_and_library(folder: Path) -> None:
    from fuzzpy.engines.fingerprint import cell_class
    from fuzzpy.engines.frames import local_digests

    table = pa.table({"x": [0.1, -0.0, 5e-324, float("nan"), None, 1e308, -3.0], "k": [1, None, -2, 3, 4, 5, 6]})
    everywhere = {i for i, t in enumerate(table.schema.types) if cell_class(t)}
    a = local_digests(table)(sorted(everywhere))
    b = local_digests(pl.from_arrow(table).to_arrow())(sorted(everywhere))
    c = local_digests(table.cast(pa.schema([("x", pa.float64()), ("k", pa.int32())])))(sorted(everywhere))
    assert a == b == c
    d = local_digests(table.set_column(0, "x", pa.array([0.1, 0.0, 5e-324, float("nan"), None, 1e308, -2.0])))
    assert d([0])["x"] != a["x"]


def _charges(ledger: Path) -> list[str]:
    """The data fingerprints the ledger recorded, one per charge."""
    with sqlite3.connect(ledger) as con:
        return [row[0] for row in con.execute("SELECT data_sha256 FROM releases ORDER BY id")]


def test_one_dataset_in_memory_and_in_duckdb_has_one_fingerprint(folder: Path) -> None:
    """Registered from an Arrow table, the same rows as a DuckDB table are
    the same dataset (the fingerprint is computed where the data lives)."""
    table = arrow(folder)
    assert isinstance(run(folder, "total", table), Fraction)
    con = duckdb.connect()
    con.register("source", table)
    con.execute("CREATE TABLE t AS SELECT * FROM source ORDER BY k DESC")
    assert isinstance(run(folder, "total", DuckDBTable(con, "t"), "auto"), Fraction)
    con.execute("UPDATE t SET x = 0.5 WHERE k = 3")
    assert run(folder, "total", DuckDBTable(con, "t"), "auto") == "FZ541"


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no spelling")


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_cell_python_cannot_spell_drops_its_row(folder: Path, engine: str) -> None:
    """a12: an int of more than 4,300 digits (Python's int <-> str limit) or
    an object whose str() fails failed the run on the neighbour holding it;
    each is a cell that does not fit: its row is dropped, as in a file."""
    odd = [10**5000, -(10**4400), _Unprintable()]
    for index, cell in enumerate(odd):
        frame = pd.DataFrame({"x": [1.0, 2.0], "k": pd.Series([3, cell], dtype=object), "s": ["a", "b"],
                              "b": [True, False]})
        without = pa.table({"x": [1.0], "k": pa.array([3], pa.int64()), "s": ["a"], "b": [True]})
        got = run(folder, "ks", frame, engine=engine, ledger=f"a{index}.sqlite")
        assert got == run(folder, "ks", without, engine=engine, ledger=f"b{index}.sqlite"), index


@pytest.mark.parametrize("engine", ["memory", "duckdb", "auto"])
def test_a_csv_int_of_thousands_of_digits_drops_its_row(folder: Path, engine: str) -> None:
    """Python's int() refuses more than 4,300 digits: the loader compares
    the digits instead (a12: FZ799 on the neighbour holding such a cell)."""
    long = folder / "long.csv"
    long.write_text("x,k,s,b\n1.5,3,a,true\n" + f"1,{'9' * 5000},b,true\n2,-{'9' * 4400},c,true\n"
                    f"3,{'0' * 5000}7,d,true\n")
    short = folder / "short.csv"
    short.write_text("x,k,s,b\n1.5,3,a,true\n3,7,d,true\n")
    assert run(folder, "ks", str(long), engine=engine, name="long", ledger="l.sqlite") == run(
        folder, "ks", str(short), engine=engine, name="short", ledger="s.sqlite")


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_column_types_duckdb_cannot_hold_read_as_their_exact_values(folder: Path, engine: str) -> None:
    """a12: float16, 256-bit and negative-scale decimals and polars' Int128
    escaped as DuckDB/Arrow errors; each reads as the same values typed
    plainly (float16 widened exactly, decimals and Int128 through their text)."""
    import decimal

    import numpy as np

    def table(x: pa.Array, k: pa.Array) -> pa.Table:
        return pa.table({"x": x, "k": k, "s": ["a", "b"], "b": [True, False]})

    plain = table(pa.array([1.5, 100.0]), pa.array([3, 40], pa.int64()))
    odd = {
        "float16": table(pa.array(np.array([1.5, 100.0], dtype=np.float16)), pa.array([3, 40], pa.int64())),
        "decimal256": table(pa.array([decimal.Decimal("1.5"), decimal.Decimal("100")], pa.decimal256(40, 1)),
                            pa.array([decimal.Decimal(3), decimal.Decimal(40)], pa.decimal256(40, 0))),
        "negative scale": table(pa.array([1.5, 100.0]),
                                pa.array([decimal.Decimal("0"), decimal.Decimal("100")], pa.decimal128(5, -2))),
        "polars Int128": pl.DataFrame({"x": [1.5, 100.0], "k": pl.Series([3, 40], dtype=pl.Int128),
                                       "s": ["a", "b"], "b": [True, False]}),
    }
    plain_k0 = table(pa.array([1.5, 100.0]), pa.array([0, 100], pa.int64()))
    #: columns held as their exact text (beyond what DuckDB and Arrow's decimal128 hold) are `string`
    #: by their stored type (rows2): read as numbers they are refused before the charge, not read
    as_text = {("decimal256", "total"), ("decimal256", "ks"), ("polars Int128", "ks")}
    for index, (name, data) in enumerate(odd.items()):
        reference = plain_k0 if name == "negative scale" else plain
        for definition in ("total", "ks"):
            got = run(folder, definition, data, engine=engine, name=f"o{index}", ledger=f"o{index}{definition}.sqlite")
            want = "FZ542" if (name, definition) in as_text else run(
                folder, definition, reference, engine=engine, name=f"p{index}", ledger=f"p{index}{definition}.sqlite")
            assert got == want, (name, definition)


# ---------------------------------------------------------------- a14: the API's data in memory


def test_a_quote_leaves_a_stream_for_the_run(folder: Path) -> None:
    """a14 F3: quoting with a RecordBatchReader must not read it (the run then
    released noise on an empty table)."""
    from fuzzpy.release.run import quote

    table = arrow(folder)
    expected = run(folder, "total", table, ledger="table.sqlite")
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    request = RunRequest(str(folder / "p.fz"), "total", data={"db": reader}, budget="1e9,0.5",
                         ledger=str(folder / "reader.sqlite"), seed=11, datasets={"db": "rows"})
    quote(request)
    assert run(folder, "total", reader, ledger="reader.sqlite") == expected


def test_a_frame_changed_during_the_run_cannot_reach_it(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """a14 F4: the run reads a copy taken once; changing the caller's arrays
    afterwards (here: between the fingerprint and the load) changes nothing."""
    import numpy as np

    from fuzzpy.engines import frames

    values = np.zeros(50)
    frame = pd.DataFrame({"x": values, "k": 1, "s": "a", "b": True}, copy=False)
    register_frame(str(folder / "mutated.sqlite"), "rows", frame, "1e9,0.5")
    expected = run(folder, "total", frame, ledger="mutated.sqlite")
    original = frames.local_digests

    def flipping(table: pa.Table):  # type: ignore[no-untyped-def]
        digests = original(table)

        def then_flip(indices: list[int]) -> dict[str, str]:
            found = digests(indices)
            values[:] = 1.0  # the caller's array, after the fingerprint
            return found
        return then_flip

    monkeypatch.setattr(frames, "local_digests", flipping)
    assert run(folder, "total", frame, ledger="mutated.sqlite") == expected
    values[:] = 0.0


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("names", [["x", "x"], ["X", "x"], ["x", "x", "x_1"]])
def test_columns_alike_but_for_case_are_refused_by_every_engine(folder: Path, engine: str, names: list[str]) -> None:
    """a14 F5: DuckDB renames (x, x -> x, x_1) and folds case; memory did not."""
    columns = [pa.array([float(i)] * 3) for i in range(len(names))]
    table = pa.table(columns + [pa.array([1] * 3), pa.array(["a"] * 3), pa.array([True] * 3)],
                     names=[*names, "k", "s", "b"])
    assert run(folder, "total", table, engine) == "FZ505"
    assert run(folder, "total", table.to_pandas(), engine) == "FZ505"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_parquet_column_alike_but_for_case_is_refused(folder: Path, engine: str) -> None:
    """DuckDB read `X` where memory read `x` (a14 F5, for files)."""
    table = pa.table({"X": [100.0] * 3, "x": [1.0] * 3, "k": [1] * 3, "s": ["a"] * 3, "b": [True] * 3})
    pq.write_table(table, folder / "case.parquet")
    assert run(folder, "total", str(folder / "case.parquet"), engine, name=None) == "FZ505"
    pq.write_table(table.drop_columns(["x"]), folder / "upper.parquet")
    assert run(folder, "total", str(folder / "upper.parquet"), engine, name=None, ledger="u.sqlite") == "FZ503"


def test_a_failing_object_is_refused_without_its_message(folder: Path) -> None:
    """a14 F6: the caller's DuckDB SQL failing on a row, a missing table, a
    polars Object column: FZ553, never a raw library exception (nor the cell
    it quotes), nothing charged."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT 'a' AS s")
    failing = con.sql("SELECT CAST(s AS DOUBLE) AS x, 1 AS k, s, true AS b FROM t")
    for engine in ("memory", "duckdb"):
        assert run(folder, "total", failing, engine) == "FZ553"
        assert run(folder, "total", DuckDBTable(con, "nope"), engine) == "FZ553"
    objects = pl.DataFrame({"x": pl.Series([object()], dtype=pl.Object), "k": [1], "s": ["a"], "b": [True]})
    assert run(folder, "total", objects, "duckdb") in ("FZ553", "FZ542")
    assert run(folder, "total", objects, "memory") in ("FZ553", "FZ542")
    try:
        execute(RunRequest(str(folder / "p.fz"), "total", data={"db": failing}, budget="1e9,0.5",
                           ledger=str(folder / "ledger.sqlite"), seed=11, datasets={"db": "rows"}))
    except FuzzError as error:
        assert "'a'" not in str(error.diagnostics)
    assert not (folder / "ledger.sqlite").exists() or _charges(folder / "ledger.sqlite") == []


def test_the_same_rows_in_another_form_are_the_same_dataset(folder: Path) -> None:
    """a14 F1: a file's rows read by pandas, polars or Arrow, or its CSV
    written as Parquet, under a new name were a new dataset with a fresh
    budget. They share the file's content key: FZ545, before any charge."""
    csv = str(folder / "rows.csv")
    assert isinstance(run(folder, "count", csv, name=None), Fraction)
    table = arrow(folder)
    same = {"pandas": pd.read_csv(csv), "polars": pl.read_csv(csv), "arrow": table}
    for kind, frame in same.items():
        for engine in ("memory", "duckdb"):
            assert run(folder, "count", frame, engine, name=f"{kind}_copy") == "FZ545", (kind, engine)
    pq.write_table(table, folder / "converted.parquet")
    assert run(folder, "count", str(folder / "converted.parquet"), name=None) == "FZ545"
    assert len(_charges(folder / "ledger.sqlite")) == 1
    other = pd.read_csv(csv)
    other.loc[0, "k"] = 4  # other rows are other data
    assert isinstance(run(folder, "count", other, name="other"), Fraction)


def test_a_frame_first_links_its_file_and_an_owners_registration_links_frames(folder: Path) -> None:
    from fuzzpy.cli import main

    csv = str(folder / "rows.csv")
    assert isinstance(run(folder, "count", pl.read_csv(csv), name="frame", ledger="first.sqlite"), Fraction)
    assert run(folder, "count", csv, name=None, ledger="first.sqlite") == "FZ545"
    owner = str(folder / "owner.sqlite")
    assert main(["dataset", "register", "people", csv, "--budget", "1", "--ledger", owner]) == 0
    assert run(folder, "count", pd.read_csv(csv), name="notebook", ledger="owner.sqlite", budget="100") == "FZ545"


def test_the_content_key_is_the_same_wherever_it_is_computed(folder: Path) -> None:
    """One table: its CSV and Parquet files, frames of three libraries, a
    DuckDB table: one content key; one changed cell: another."""
    from fuzzpy.engines.content import _read_file_content, query_content
    from fuzzpy.engines.frames import local_content, local_table
    from fuzzpy.engines.sql import DIALECTS

    csv = str(folder / "rows.csv")
    pq.write_table(arrow(folder), folder / "rows.parquet")
    keys = {_read_file_content(csv, "csv"), _read_file_content(str(folder / "rows.parquet"), "parquet")}
    from fuzzpy.data.memory import InMemory

    for kind, frame in (("pandas", pd.read_csv(csv)), ("polars", pl.read_csv(csv)), ("arrow", arrow(folder))):
        keys.add(local_content(local_table(InMemory(kind, frame))))
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS SELECT * FROM read_csv('{csv}')")
    schema = pa.schema([("x", pa.float64()), ("k", pa.int64()), ("s", pa.string()), ("b", pa.bool_())])
    keys.add(query_content(DIALECTS["duckdb"], lambda sql: con.execute(sql).fetchall(), "t", schema))
    assert len(keys) == 1 and None not in keys
    changed = pd.read_csv(csv)
    changed.loc[0, "s"] = "aa"  # a complete row (a row with a missing cell is not keyed: s28b F2)
    assert local_content(local_table(InMemory("pandas", changed))) not in keys


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_parquet_file_with_a_duplicated_column_is_refused_by_every_engine(folder: Path, engine: str) -> None:
    """a15 F2: DuckDB read the first of two columns `x` where memory refused."""
    (folder / "v.fz").write_text("def v (db : bag (vec[2] num)) : fuzzy (vec[2] num) = gauss[1] (vsum[10] db);\n"
                                 "type Y = { y : num };\n"
                                 "def n (db : bag Y) : fuzzy num = laplace[1] (size db);\n")
    pq.write_table(pa.table([pa.array([1.0] * 3), pa.array([2.0] * 3)], names=["x", "x"]), folder / "dup.parquet")
    for definition in ("v", "n"):
        request = RunRequest(str(folder / "v.fz"), definition, data={"db": str(folder / "dup.parquet")},
                             budget="1e9,0.5", ledger=str(folder / f"{definition}.sqlite"), seed=1, engine=engine)
        with pytest.raises(FuzzError) as refused:
            execute(request)
        assert [d.code for d in refused.value.diagnostics] == ["FZ505"]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("name", ["_fz_pos", "_FZ_POS", "", " "])
def test_a_column_named_as_the_position_or_nothing_is_refused(folder: Path, engine: str, name: str) -> None:
    """a16 F3: a frame's own `_fz_pos` column was hashed by `subsample` in
    place of the rows' positions (rows sharing it were kept or dropped
    together); a16 F5: an empty name raised a raw DuckDB error."""
    table = pa.table([pa.array([1.0] * 3), pa.array([1] * 3), pa.array(["a"] * 3), pa.array([True] * 3),
                      pa.array([0] * 3)], names=["x", "k", "s", "b", name])
    con = duckdb.connect()
    con.register("source", table)
    kinds = [table, table.to_pandas()] + ([DuckDBTable(con, "source")] if name.strip() else [])  # DuckDB names ""
    for data in kinds:
        assert run(folder, "total", data, engine) == "FZ505"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_parquet_column_named_file_row_number_is_read(folder: Path, engine: str) -> None:
    """a16 F4: DuckDB's own row-number column clashed with it (FZ799)."""
    table = pa.table({"x": [1.5, 2.5], "k": [1, 2], "s": ["a", "b"], "b": [True, False], "file_row_number": [7, 7]})
    pq.write_table(table, folder / "frn.parquet")
    expected = run(folder, "total", table, "memory", name="frn_table", ledger="t.sqlite")
    assert run(folder, "total", str(folder / "frn.parquet"), engine, name=None) == expected


def test_booleans_as_zero_and_one_are_the_same_rows_and_register_frame_takes_api_arguments(folder: Path) -> None:
    """a18 F3: a CSV with its booleans exported as 0/1 got a fresh budget;
    a18 F4: register_frame crashed on a fuzzpy.Ledger or a float budget."""
    import fuzzpy

    csv = str(folder / "rows.csv")
    assert isinstance(run(folder, "count", csv, name=None), Fraction)
    numbers = pd.read_csv(csv)
    numbers["b"] = numbers["b"].map({True: 1, False: 0, "True": 1, "False": 0})
    numbers["b"] = numbers["b"].astype("Int64")
    assert run(folder, "count", numbers, name="as_numbers") == "FZ545"
    book = fuzzpy.Ledger(folder / "owner.sqlite")
    registration = register_frame(book, "people", pd.read_csv(csv), 1.0)
    assert registration.name == "people"
    with pytest.raises(FuzzError):
        register_frame(book, "again", pd.read_csv(csv), (1.0, 1e-6))  # the same rows: FZ545, not a traceback


@pytest.mark.parametrize("pad", ["\t", "\x0b", "\x0c", "\u3000", "\u00a0"])
def test_whitespace_the_loader_trims_is_trimmed_by_the_content_key(folder: Path, pad: str) -> None:
    """a20 F4: a tab (or VT, FF) around a boolean cell is trimmed by the
    loader, so the rows read the same, but the key's SQL trim() removed only
    spaces: the same rows got a fresh budget."""
    from fuzzpy.engines.content import _read_file_content

    padded = folder / "padded.csv"
    lines = CSV.splitlines()
    padded.write_text("\n".join([lines[0], *(",".join(pad + c + pad for c in line.split(",")) for line in lines[1:])])
                      + "\n")
    assert _read_file_content(str(padded), "csv") == _read_file_content(str(folder / "rows.csv"), "csv")
