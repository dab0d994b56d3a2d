"""Issue 31, review findings F1, F2, F3, F6, F8: a first run is a
registration, then a run; a column no row holds a value in is typed `none`
and never read into an all-noise release; one typing for every engine; a
mechanism call reads only its queries' columns; diagnostics.

Written from the outside: the CLI and the Python API, on CSV and Parquet
files, pandas, polars and Arrow frames and DuckDB relations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.cli import main
from fuzzpy.ledger.book import Ledger

PROGRAM = """
type Row = { city : string, score : num, flag : bool, n : int };
def total (t : bag Row) : fuzzy num = laplace[2.0] (sum[0, 10] (map (fun r -> r.score) t));
def whole (t : bag Row) : fuzzy num = laplace[2.0] (sum[0, 10] (map (fun r -> r.n) t));
def flagged (t : bag Row) : fuzzy num = laplace[2.0] (size (filter (fun r -> r.flag) t));
def rows (t : bag Row) : fuzzy num = laplace[2.0] (size t);
def in_paris (t : bag Row) : fuzzy num = laplace[2.0] (size (filter (fun r -> r.city == "paris") t));
"""

#: n holds integers, flag 0/1, score nothing at all
CSV = "city,score,flag,n\nparis,,1,3\nlyon,,0,4\nnice,,1,5\n"


def _run(capsys: pytest.CaptureFixture[str], folder: Path, definition: str, data: Path, *extra: str,
         engine: str = "memory") -> tuple[int, str]:
    code = main(["run", str(folder / "p.fz"), definition, "--data", f"t={data}", "--ledger",
                 str(folder / "book.sqlite"), "--engine", engine, "--seed", "4", *extra])
    return code, capsys.readouterr().err


def _charges(folder: Path) -> int:
    if not (folder / "book.sqlite").exists():
        return 0
    with Ledger(folder / "book.sqlite") as book:
        return len(book.history())


def _types(ledger: Path, name: str) -> dict[str, str | None]:
    with Ledger(ledger) as book:
        registration = book.registration(name)
    assert registration is not None
    return {c.name: c.kind for c in registration.columns}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.fz").write_text(PROGRAM)
    (tmp_path / "towns.csv").write_text(CSV)
    return tmp_path


# ---------------------------------------------------------------- F1: a first run registers, then judges


def test_a_refused_first_run_records_nothing(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    """Review s30 E: a refused first run leaves no registration (nor budget) behind."""
    code, err = _run(capsys, folder, "flagged", folder / "towns.csv", "--budget", "1000")
    assert code == 2 and "FZ542" in err and _charges(folder) == 0
    assert "note: registered" not in err and "a refused run registers nothing" in err
    with Ledger(folder / "book.sqlite") as book:
        assert book.registrations() == []
    # the next run registers it with the types its cells give, and its budget
    code, err = _run(capsys, folder, "in_paris", folder / "towns.csv", "--budget", "1000")
    assert code == 0 and _charges(folder) == 1
    assert "note: registered towns with types city: string, score: none, flag: int, n: int" in err
    assert _types(folder / "book.sqlite", "towns") == {"city": "string", "score": "none", "flag": "int", "n": "int"}
    code, err = _run(capsys, folder, "flagged", folder / "towns.csv")
    assert code == 2 and "FZ542" in err and "the type its first run recorded" in err


def test_a_refused_first_run_records_nothing_from_python(tmp_path: Path) -> None:
    """The same through the Python API, for a refusal after the typing (FZ556, review s30 E)."""
    (tmp_path / "d.csv").write_text("x\n1\n2\n3\n4\n")
    (tmp_path / "c.fz").write_text("def c (db : bag num) : fuzzy num = laplace[1] (size db);")
    program = fuzzpy.load(str(tmp_path / "c.fz"))
    book = tmp_path / "l.sqlite"
    with pytest.raises(fuzzpy.FuzzError) as refused:
        program.run("c", data={"db": str(tmp_path / "d.csv")}, budget=5, neighbours="replace-one", rows=4,
                    ledger=str(book))
    assert [d.code for d in refused.value.diagnostics] == ["FZ556"]
    with Ledger(book) as ledger:
        assert ledger.registrations() == [] and ledger.history() == []
    program.run("c", data={"db": str(tmp_path / "d.csv")}, budget=5, ledger=str(book), seed=1)
    with Ledger(book) as ledger:
        (registration,) = ledger.registrations()
        assert registration.name == "d" and len(ledger.history()) == 1


# ---------------------------------------------------------------- F2: no value, no release


@pytest.mark.parametrize(("engine", "cells"), [("memory", ("", "", "")), ("duckdb", ("NA", "?", "null")),
                                               ("duckdb", ("inf", "-inf", "1e999")), ("memory", ("", "inf", "N/A"))])
def test_a_csv_column_without_a_value_is_refused_before_the_charge(
    capsys: pytest.CaptureFixture[str], folder: Path, engine: str, cells: tuple[str, ...]
) -> None:
    lines = ["city,score,flag,n", *(f"town{i},{c},true,{i}" for i, c in enumerate(cells))]
    (folder / "empty.csv").write_text("\n".join(lines) + "\n")
    code, err = _run(capsys, folder, "total", folder / "empty.csv", "--budget", "1000", engine=engine)
    assert code == 2 and "FZ542" in err and "`score`" in err
    # empty cells only: `none`; text that is no finite number (`NA`, `inf`): `string`, refused read as a number
    assert ("every row would be dropped" in err) == (set(cells) == {""})
    assert _charges(folder) == 0
    # a definition that does not read the column is not refused (a count reads no field)
    assert _run(capsys, folder, "rows", folder / "empty.csv", "--budget", "1000", engine=engine)[0] == 0


def test_a_file_without_records_types_nothing(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    (folder / "header.csv").write_text("city,score,flag,n\n")
    assert _run(capsys, folder, "total", folder / "header.csv", "--budget", "1000")[0] == 0
    assert set(_types(folder / "book.sqlite", "header").values()) == {None}


def _frames() -> list[tuple[str, object]]:
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    base = {"city": ["a", "b", "c"], "flag": [True, False, True], "n": [1, 2, 3]}
    return [
        ("pandas NaN", pd.DataFrame({**base, "score": [float("nan")] * 3})),
        ("pandas None", pd.DataFrame({**base, "score": [None, None, None]})),
        ("polars null", pl.DataFrame({**base, "score": pl.Series([None, None, None], dtype=pl.Float64)})),
        ("arrow null int", pa.table({**base, "score": pa.array([None, None, None], pa.int64())})),
        ("arrow inf", pa.table({**base, "score": pa.array([float("inf")] * 3, pa.float64())})),
    ]


@pytest.mark.parametrize("engine", ["memory", pytest.param("duckdb", marks=pytest.mark.slow)])
def test_a_stored_column_without_a_value_is_typed_by_its_type(folder: Path, engine: str) -> None:
    """A stored column is typed by its stored type, never by its cells
    (review s29c): a float or int column none of whose cells holds a value
    is `num` or `int`, as its neighbour with one value is, and the run
    releases on both (the rows without a value are dropped by the row
    rules) -- where it used to be typed `none` and refused, so adding one
    row with a value flipped a refusal into a release."""
    program = fuzzpy.load(str(folder / "p.fz"))
    for label, frame in _frames():
        if label == "pandas None":
            continue  # an object column of None is stored as Arrow's null type: refused by that type
        ledger = str(folder / f"{label.replace(' ', '_')}-{engine}.sqlite")
        release = program.run("total", data={"t": frame}, datasets={"t": "scores"}, budget=1000, seed=1,
                              ledger=ledger, engine=engine)
        assert isinstance(release.value, float), label
        with Ledger(ledger) as book:
            registered = book.registration("scores")
            assert registered is not None
            kinds = {c.name: c.kind for c in registered.columns}
        assert kinds["score"] == ("int" if label == "arrow null int" else "num"), (label, kinds)


def test_a_parquet_text_column_of_nulls_releases_as_its_neighbour_on_duckdb(capsys: pytest.CaptureFixture[str],
                                                                            folder: Path) -> None:
    """Two nulls in a text column, or one of them a city: the same type
    (`string`, stored), so both release (review s29c: never `none` from cells)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    for i, cities in enumerate(([None, None], [None, "paris"])):
        table = pa.table({"city": pa.array(cities, pa.string()), "score": [1.5, 2.5], "flag": [True, False],
                          "n": [1, 2]})
        pq.write_table(table, folder / f"nulls{i}.parquet")
        code, err = _run(capsys, folder, "in_paris", folder / f"nulls{i}.parquet", "--budget", "1000",
                         "--dataset", f"t=nulls{i}", engine="duckdb")
        assert code == 0 and "city: string" in err, err


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_stored_number_is_never_read_as_a_bool(capsys: pytest.CaptureFixture[str], folder: Path,
                                                 engine: str) -> None:
    """One rule on every form (F8): a column of 0 and 1 is an int column."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"city": ["a", "b"], "score": [1.0, 2.0], "flag": [7, 9], "n": [1, 2]})  # int64 flags
    frame.to_parquet(folder / "ints.parquet")
    code, err = _run(capsys, folder, "flagged", folder / "ints.parquet", "--budget", "1000", engine=engine)
    assert code == 2 and "FZ542" in err and "`flag`" in err and _charges(folder) == 0
    code, err = _run(capsys, folder, "flagged", folder / "towns.csv", "--budget", "1000", engine=engine)
    assert code == 2 and "FZ542" in err and "0 and 1" in err and "`flag : int`" in err


def test_integers_beyond_64_bits_type_a_column_num(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    (folder / "big.csv").write_text("city,score,flag,n\na,1,true,9223372036854775808\nb,2,false,-9223372036854775809\n")
    code, err = _run(capsys, folder, "whole", folder / "big.csv", "--budget", "1000", engine="duckdb")
    assert code == 2 and "FZ542" in err and "`n`" in err
    assert _run(capsys, folder, "rows", folder / "big.csv", "--budget", "1000", engine="duckdb")[0] == 0
    assert _types(folder / "book.sqlite", "big")["n"] == "num"


# ---------------------------------------------------------------- F3: one typing for every engine


def test_a_duckdb_relation_is_typed_alike_on_every_engine(folder: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    relation = con.sql("SELECT * FROM (VALUES ('x', '1.5', 'true', 1), ('y', '2.5', 'false', 2), "
                       "('z', 'NA', 'true', 3)) AS t(city, score, flag, n)")
    program = fuzzpy.load(str(folder / "p.fz"))
    types = {}
    for engine in ("memory", "duckdb"):
        ledger = folder / f"{engine}.sqlite"
        with pytest.raises(fuzzpy.FuzzError) as refused:  # VARCHAR is text, whatever it spells (rows2, item 3)
            program.run("total", data={"t": relation}, datasets={"t": "rel"}, budget=1000, seed=1,
                        ledger=str(ledger), engine=engine)
        assert [d.code for d in refused.value.diagnostics] == ["FZ542"]
        with Ledger(ledger) as book:
            assert book.registrations() == []  # a refused run records nothing (review s30 E)
        program.run("rows", data={"t": relation}, datasets={"t": "rel"}, budget=1000, seed=1,
                    ledger=str(ledger), engine=engine)
        types[engine] = _types(ledger, "rel")
    assert types["memory"] == types["duckdb"]
    assert types["duckdb"] == {"city": "string", "score": "string", "flag": "string", "n": "int"}


# ---------------------------------------------------------------- F6: a mechanism call's columns


def test_a_mechanism_call_reads_only_its_queries_columns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "m.fz").write_text("""
mechanism bigger (q : vec[inf] num, eps : num) : bool
  requires eps > 0
  privacy eps
{
  var x = q[0] + lap(2 / eps);
  var y = q[1] + lap(2 / eps);
  return x > y;
}
type P = { species : string, mass : num, sex : string };
def tally (db : bag P) : vec[inf] num =
  [size (filter (fun p -> p.species == "a") db), size (filter (fun p -> p.species == "b") db)];
def top (db : bag P) : fuzzy bool = bigger (tally db) 1.0;
""")
    assert main(["check", str(tmp_path / "m.fz"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    text = json.dumps(document)
    assert "columns_read" in text
    found = _columns_read(document, "top")
    assert found == {"db": ["species"]}, found


def _columns_read(document: object, name: str) -> object:
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("name") == name and "columns_read" in item:
                return item["columns_read"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


# ---------------------------------------------------------------- F8: diagnostics


def _check(capsys: pytest.CaptureFixture[str], tmp_path: Path, source: str) -> str:
    (tmp_path / "c.fz").write_text(source)
    main(["check", str(tmp_path / "c.fz")])
    return capsys.readouterr().err


def test_a_record_type_mismatch_says_the_field_order_matters(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    err = _check(capsys, tmp_path, "type P = { a : num, b : num };\n"
                 "def f (r : { b : num, a : num }) : num = r.a;\ndef g (p : P) : num = f p;\n")
    assert "FZ201" in err and "order of a record's fields" in err


def test_did_you_mean_is_a_few_edits_away(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    err = _check(capsys, tmp_path, "def f (x : num) : num = lit x;\n")
    assert "FZ207" in err and "split" not in err
    err = _check(capsys, tmp_path, "def f (x : num) : fuzzy num = laplce[1.0] x;\n")
    assert "did you mean `laplace`" in err


def test_a_listed_import_shadowed_says_to_drop_it_from_the_list(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    err = _check(capsys, tmp_path, "import std.noisy_max (report_noisy_max, report_noisy_max_exp);\n"
                 "def report_noisy_max (x : num) : num = x;\n")
    assert "FZ122" in err and "import std.noisy_max (report_noisy_max_exp);" in err
    assert "list only the names you use" not in err


def test_same_rows_hint_in_python_names_the_keyword(folder: Path) -> None:
    pd = pytest.importorskip("pandas")
    program = fuzzpy.load(str(folder / "p.fz"))
    ledger = str(folder / "api.sqlite")
    program.run("rows", data={"t": str(folder / "towns.csv")}, budget=1000, seed=1, ledger=ledger)
    with pytest.raises(fuzzpy.FuzzError) as refused:
        program.run("rows", data={"t": pd.read_csv(folder / "towns.csv")}, datasets={"t": "copy"}, budget=1000,
                    ledger=ledger)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "FZ545" and diagnostic.hint is not None
    assert "--data" not in diagnostic.hint and 'data={"' in diagnostic.hint
