"""Issue 31, second black-box review (rows2): a first run's column typing is
`dataset register`'s, decided from what is public -- a stored column's type
(Parquet, Arrow, pandas, polars, DuckDB), or every cell of untyped text (CSV)
-- and a row type that does not match the recorded type is refused (FZ542)
before the charge. Written from outside: the CLI and the Python API, on CSV
and Parquet files, frames, Arrow tables and DuckDB tables and relations.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.cli import main
from fuzzpy.data.memory import DuckDBTable
from fuzzpy.ledger.book import Ledger

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

#: the DuckDB engine's case of a test whose memory case runs by default (the default suite's time budget)
SLOW_DUCKDB = pytest.param("duckdb", marks=pytest.mark.slow)

PROGRAM = """
type Ints = { v : int };
type Nums = { v : num };
type Texts = { v : string };
type Two = { k : int, v : string };
def as_int (t : bag Ints) : fuzzy num = laplace[1.0] (sum[0, 10] (map (fun r -> r.v) t));
def as_num (t : bag Nums) : fuzzy num = laplace[1.0] (sum[0, 10] (map (fun r -> r.v) t));
def as_text (t : bag Texts) : fuzzy num = laplace[1.0] (size (filter (fun r -> r.v == "NA") t));
def keys (t : bag Two) : fuzzy num = laplace[1.0] (sum[0, 10] (map (fun r -> r.k) t));
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.fz").write_text(PROGRAM)
    return tmp_path


def _cli(capsys: pytest.CaptureFixture[str], folder: Path, definition: str, data: Path, *extra: str,
         ledger: str = "book.sqlite", engine: str = "memory") -> tuple[int, str]:
    code = main(["run", str(folder / "p.fz"), definition, "--data", f"t={data}", "--ledger", str(folder / ledger),
                 "--engine", engine, "--seed", "5", *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _charges(path: Path) -> int:
    if not path.exists():
        return 0
    with Ledger(path) as book:
        return len(book.history())


def _types(path: Path, name: str) -> dict[str, str | None]:
    with Ledger(path) as book:
        registration = book.registration(name)
    assert registration is not None
    return {c.name: c.kind for c in registration.columns}


def _api(folder: Path, definition: str, data: object, ledger: str, engine: str = "memory") -> float:
    program = fuzzpy.load(str(folder / "p.fz"))
    release = program.run(definition, data={"t": data}, datasets={"t": "d"}, budget=1000, seed=5,
                          ledger=str(folder / ledger), engine=engine)
    assert isinstance(release.value, float)
    return release.value


def _refused(folder: Path, definition: str, data: object, ledger: str, engine: str = "memory") -> str:
    with pytest.raises(fuzzpy.FuzzError) as refused:
        _api(folder, definition, data, ledger, engine)
    assert [d.code for d in refused.value.diagnostics] == ["FZ542"]
    assert _charges(folder / ledger) == 0
    return str(refused.value)


# ---------------------------------------------------------------- 1: every cell, never a majority


@pytest.mark.parametrize("cells", [("1", "2", "x", "y"), pytest.param(("2.0", "1e3", "3.0"), marks=pytest.mark.slow),
                                   pytest.param(("7", "8", "9.5"), marks=pytest.mark.slow)])
@pytest.mark.parametrize("engine", ["memory", SLOW_DUCKDB])
def test_int_for_a_csv_column_not_all_ints_is_refused_uncharged(
    capsys: pytest.CaptureFixture[str], folder: Path, cells: tuple[str, ...], engine: str
) -> None:
    data = folder / "mixed.csv"
    data.write_text("v\n" + "\n".join(cells) + "\n")
    code, said = _cli(capsys, folder, "as_int", data, "--budget", "100", engine=engine)
    assert code == 2 and "FZ542" in said and "`v`" in said
    assert _charges(folder / "book.sqlite") == 0
    # refused again, from the recorded type, on the next run (no --budget: the first run registered it)
    assert _cli(capsys, folder, "as_int", data, engine=engine)[0] == 2


def test_a_neighbour_with_one_odd_row_is_refused_alike_given_the_schema(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    """Given the recorded schema, the refusal is the same on the dataset and
    on its neighbour: registered from the clean file, the file with one more
    row (`abc`) is refused exactly as the clean one is read."""
    clean = folder / "clean.csv"
    clean.write_text("k,v\n1,a\n2,b\n")
    assert main(["dataset", "register", "d", str(clean), "--budget", "100",
                 "--ledger", str(folder / "book.sqlite")]) == 0
    assert _types(folder / "book.sqlite", "d") == {"k": "int", "v": "string"}
    capsys.readouterr()
    assert _cli(capsys, folder, "keys", clean)[0] == 0
    assert _cli(capsys, folder, "as_num", clean)[0] == 2  # `v` : num against `v` registered `string`


# ---------------------------------------------------------------- 2: the note is true


def _odd_csv(folder: Path) -> Path:
    data = folder / "odd.csv"
    data.write_text("a,b,c,d,e,f,g\n1,2.5,true,x,,NA,inf\n2,NA,false,y,,?,1e999\n3,3,1,2,,nan,-inf\n")
    return data


def _parquet(folder: Path) -> Path:
    data = folder / "typed.parquet"
    table = pa.table({
        "i": pa.array([1, None, 3], pa.int32()),
        "u": pa.array([2**64 - 1, 5, None], pa.uint64()),
        "money": pa.array([Decimal("1.25"), Decimal("2.00"), None], pa.decimal128(10, 2)),
        "whole_dec": pa.array([Decimal("4"), Decimal("5"), Decimal("6")], pa.decimal128(12, 0)),
        "f": pa.array([2007.0, None, 2009.0], pa.float64()),
        "nan": pa.array([float("nan"), None, float("inf")], pa.float64()),
        "digits": pa.array(["1", "2", "3"], pa.string()),
        "nulls": pa.array([None, None, None], pa.string()),
        "b": pa.array([True, False, None], pa.bool_()),
    })
    pq.write_table(table, data)
    return data


@pytest.mark.parametrize("engine", ["memory", SLOW_DUCKDB])
@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_a_first_run_records_the_schema_dataset_register_records(
    capsys: pytest.CaptureFixture[str], folder: Path, engine: str, form: str
) -> None:
    data = _odd_csv(folder) if form == "csv" else _parquet(folder)
    registered = folder / "registered.sqlite"
    assert main(["dataset", "register", "d", str(data), "--budget", "100", "--ledger", str(registered)]) == 0
    program = folder / "count.fz"
    first = "a" if form == "csv" else "i"
    program.write_text(f"type R = {{ {first} : string }};\n"
                       "def n (t : bag R) : fuzzy num = laplace[1.0] (size t);\n")
    code = main(["run", str(program), "n", "--data", f"t={data}", "--dataset", "d", "--budget", "100",
                 "--ledger", str(folder / "first.sqlite"), "--engine", engine])
    said = capsys.readouterr().err
    assert code == 0 and "as `fuzzpy dataset register` types them" in said
    assert _types(folder / "first.sqlite", "d") == _types(registered, "d")
    expected = ({"a": "int", "b": "num", "c": "bool", "d": "string", "e": "none", "f": "string", "g": "string"}
                if form == "csv" else
                # a stored column by its type alone, never its cells (review s29c): a float is num, all-null text string
                {"i": "int", "u": "num", "money": "num", "whole_dec": "int", "f": "num", "nan": "num",
                 "digits": "string", "nulls": "string", "b": "bool"})
    assert _types(registered, "d") == expected


# ---------------------------------------------------------------- 3: stored types decide, not cells


def test_a_stored_text_column_is_text_whatever_it_spells(folder: Path) -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE digits AS SELECT CAST(range AS VARCHAR) AS v FROM range(1, 4)")
    forms = [("polars", pl.DataFrame({"v": ["1", "2", "3"]})), ("arrow", pa.table({"v": ["1", "2", "3"]})),
             ("duckdb table", DuckDBTable(con, "digits"))]
    for label, data in forms:
        said = _refused(folder, "as_int", data, f"{label.replace(' ', '_')}.sqlite")
        assert "holds text" in said, label


def test_a_float_column_reads_as_int_with_or_without_a_missing_cell(folder: Path) -> None:
    """pandas stores an int column with a missing cell as float64: that frame
    is `num` by its type (never by its cells: review s29c), and `int` reads it
    under the row rules, as its neighbour without the row (int64) is read
    (issue 24); a fractional value's row is dropped, not refused."""
    pd = pytest.importorskip("pandas")
    with_gap = pd.DataFrame({"v": [1.0, 2.0, None]})
    without = pd.DataFrame({"v": [1, 2]})
    assert _api(folder, "as_int", with_gap, "g.sqlite") == pytest.approx(3.0, abs=40)
    assert _api(folder, "as_int", without, "w.sqlite") == pytest.approx(3.0, abs=40)
    fractional = pd.DataFrame({"v": [1.5, 2.0, None]})
    assert _api(folder, "as_int", fractional, "f.sqlite") == pytest.approx(2.0, abs=40)
    assert _api(folder, "as_num", fractional, "f.sqlite") == pytest.approx(3.5, abs=40)


# ---------------------------------------------------------------- 4: decimals and uint64


@pytest.mark.parametrize("engine", ["memory", SLOW_DUCKDB])
def test_decimals_are_num_unless_whole(folder: Path, engine: str) -> None:
    path = folder / "money.parquet"
    pq.write_table(pa.table({"v": pa.array([Decimal("1.50")] * 40, pa.decimal128(10, 2))}), path)
    # read as int under the row rules (review s29f): 1.50 is not whole, every row is dropped, none refused
    assert abs(_api(folder, "as_int", str(path), "a0.sqlite", engine)) < 10
    assert _api(folder, "as_num", str(path), "a.sqlite", engine) > 30  # 60 read, not noise over nothing
    whole = folder / "whole.parquet"
    pq.write_table(pa.table({"v": pa.array([Decimal("2")] * 40, pa.decimal128(10, 0))}), whole)
    assert _api(folder, "as_int", str(whole), "b.sqlite", engine) > 50  # 80


@pytest.mark.parametrize("engine", ["memory", SLOW_DUCKDB])
def test_uint64_beyond_int64_is_num_and_dropped_read_as_int(folder: Path, engine: str) -> None:
    duckdb = pytest.importorskip("duckdb")
    path = folder / "big.parquet"
    pq.write_table(pa.table({"v": pa.array([2**63 + 7] * 40, pa.uint64())}), path)
    con = duckdb.connect()
    con.execute("CREATE TABLE big AS SELECT CAST(18446744073709551615 - range AS UBIGINT) AS v FROM range(40)")
    for label, data in (("parquet", str(path)), ("duckdb", DuckDBTable(con, "big"))):
        # past 2^63 - 1: every row fails the row rules read as int, none refused (review s29f)
        assert abs(_api(folder, "as_int", data, f"{label}0.sqlite", engine)) < 10, label
        assert _api(folder, "as_num", data, f"{label}.sqlite", engine) > 300, label  # 40 rows clamped to 10


# ---------------------------------------------------------------- 5: DuckDB types with no Arrow reading


def test_a_uuid_is_read_as_its_text_on_duckdb(folder: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    relation = duckdb.connect().sql("SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID AS v FROM range(40)")
    assert _api(folder, "as_text", relation, "u.sqlite", "duckdb") < 10  # no Binder Error on `left(UUID, ...)`


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_duckdb_types_are_read_as_text_or_refused_by_name(folder: Path, engine: str) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    selects = {
        "bit": "SELECT '101'::BIT AS v, 1 AS k FROM range(40)",
        "uuid": "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID AS v, 1 AS k FROM range(40)",
        "timetz": "SELECT '10:00:00+01'::TIMETZ AS v, 1 AS k FROM range(40)",
    }
    for label, sql in selects.items():  # read as their text: no traceback, the same on every engine
        relation = con.sql(sql)
        assert _api(folder, "as_text", relation, f"{label}.sqlite", engine) < 10, label  # none is "NA"
        assert _api(folder, "keys", relation, f"{label}-k.sqlite", engine) > 20, label
    for label, sql in {"list": "SELECT [1, 2] AS v, 1 AS k FROM range(40)",
                       "interval": "SELECT INTERVAL 3 DAY AS v, 1 AS k FROM range(40)",
                       "struct": "SELECT {'x': 1} AS v, 1 AS k FROM range(40)"}.items():
        relation = con.sql(sql)
        said = _refused(folder, "as_text", relation, f"{label}.sqlite", engine)
        assert "`v`" in said and "cannot be read as `string`" in said and "convert" in said, label
        assert _api(folder, "keys", relation, f"{label}.sqlite", engine) > 20, label  # only when read


# ---------------------------------------------------------------- 6: dates (the docs were wrong)


def test_a_date_column_is_refused_with_a_hint_to_convert_it(folder: Path) -> None:
    import datetime

    path = folder / "dates.parquet"
    pq.write_table(pa.table({"v": pa.array([datetime.date(2020, 1, 5)] * 3, pa.date32())}), path)
    said = _refused(folder, "as_text", str(path), "d.sqlite")
    assert "date32" in said and "ISO text" in said


# ---------------------------------------------------------------- 7: markers are text to a string column


@pytest.mark.parametrize("engine", ["memory", SLOW_DUCKDB])
def test_a_column_of_missing_markers_reads_as_text(capsys: pytest.CaptureFixture[str], folder: Path,
                                                   engine: str) -> None:
    data = folder / "markers.csv"
    data.write_text("v\n" + "NA\nnan\n?\n" * 20)
    code, said = _cli(capsys, folder, "as_text", data, "--budget", "100", "--json", engine=engine)
    assert code == 0 and _types(folder / "book.sqlite", "markers") == {"v": "string"}
    assert _cli(capsys, folder, "as_num", data, engine=engine)[0] == 2
    # empty cells are missing to every reading, text included: `none`, refused read as anything
    empty = folder / "empty.csv"
    empty.write_text("k,v\n1,\n2, \n")
    code, said = _cli(capsys, folder, "as_text", empty, "--budget", "100", ledger="e.sqlite", engine=engine)
    assert code == 2 and "every row would be dropped" in said and _charges(folder / "e.sqlite") == 0
