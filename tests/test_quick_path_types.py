"""Issue 31: no silent all-noise release, and no row dropped for a column
nobody reads.

On the quick path (`run --budget`, nothing registered) a row type that
reads a column as a type its data does not hold used to drop every row and
release pure noise, charged. The first run now types the dataset's columns
as `dataset register` does and refuses (FZ542) before the charge; the rows
are read against the columns the definition reads only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

pd = pytest.importorskip("pandas")

PENGUINS = """species,island,bill_mm,mass_g,sex,year
Adelie,Torgersen,39.1,3750,male,2007
Adelie,Torgersen,39.5,3800,,2007
Adelie,Biscoe,40.3,3250,female,2007
Gentoo,Biscoe,46.1,4500,female,2008
Gentoo,Biscoe,50.0,5700,,2008
Chinstrap,Dream,46.5,3500,female,2009
Chinstrap,Dream,50.0,3900,male,2009
"""

#: the year stored as 2007.0 (a pandas export of a float column)
FLOATY = "species,year\nAdelie,2007.0\nGentoo,2008.0\nChinstrap,2009.0\n"

PROGRAM = """
type Penguin = { species : string, island : string, bill_mm : num, mass_g : num, sex : string, year : int };
type Yearly = { species : string, year : int };
type Named = { species : num, year : num };

def count (db : bag Penguin) : fuzzy num = laplace[1.0] (size db);
def heavy (db : bag Penguin) : fuzzy num = laplace[1.0] (size (filter (fun p -> p.mass_g > 4000) db));
def males (db : bag Penguin) : fuzzy num = laplace[1.0] (size (filter (fun p -> p.sex == "male") db));
def years (db : bag Yearly) : fuzzy num = laplace[1.0] (sum[2000, 2010] (map (fun r -> r.year) db));
def species_sum (db : bag Named) : fuzzy num = laplace[1.0] (sum[0, 1] (map (fun r -> r.species) db));
def year_sum (db : bag Named) : fuzzy num = laplace[1.0] (sum[2000, 2010] (map (fun r -> r.year) db));
"""


def _files(tmp: Path) -> dict[str, Path]:
    (tmp / "p.fz").write_text(PROGRAM)
    (tmp / "penguins.csv").write_text(PENGUINS)
    (tmp / "floaty.csv").write_text(FLOATY)
    pd.read_csv(tmp / "penguins.csv").to_parquet(tmp / "penguins.parquet")
    fractional = pd.DataFrame({"species": ["Adelie", "Gentoo", "Chinstrap"], "year": [2007.5, 2008.25, 2009.0]})
    fractional.to_parquet(tmp / "floaty.parquet")  # a float column: whole floats would read as int
    return {"program": tmp / "p.fz"}


def _cli(capsys: pytest.CaptureFixture[str], tmp: Path, definition: str, data: Path,
         ledger: str = "l.sqlite") -> tuple[int, object, str]:
    code = main(["run", str(tmp / "p.fz"), definition, "--data", f"db={data}", "--budget", "1e6",
                 "--ledger", str(tmp / ledger), "--seed", "3", "--json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out) if captured.out.strip() else None
    said = captured.err + (json.dumps(document.get("diagnostics", [])) if isinstance(document, dict) else "")
    return code, document, said.replace("\\u00a0", " ").replace('\\"', '"')


def _charged(tmp: Path, ledger: str = "l.sqlite") -> bool:
    from fuzzpy.ledger.book import Ledger

    path = tmp / ledger
    if not path.exists():
        return False
    with Ledger(path) as book:
        return bool(book.history())


# ---------------------------------------------------------------- item 1: refused before the charge


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_int_declared_for_a_csv_column_of_decimals_is_refused_uncharged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str
) -> None:
    _files(tmp_path)
    code = main(["run", str(tmp_path / "p.fz"), "years", "--data", f"db={tmp_path / 'floaty.csv'}",
                 "--budget", "1e6", "--ledger", str(tmp_path / "l.sqlite"), "--engine", engine])
    err = capsys.readouterr().err
    assert code == 2 and "FZ542" in err and "`year`" in err
    assert not _charged(tmp_path)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_int_declared_for_a_column_stored_as_floats_reads_its_whole_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str
) -> None:
    """A stored float column is `num` by its type, whatever its cells (review
    s29c): the program's `int` reads it under the row rules -- 2009.0 is read,
    the rows of 2007.5 and 2008.25 dropped -- with a note from the schema."""
    _files(tmp_path)
    code = main(["run", str(tmp_path / "p.fz"), "years", "--data", f"db={tmp_path / 'floaty.parquet'}",
                 "--budget", "1e6", "--ledger", str(tmp_path / "l.sqlite"), "--engine", engine])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "`year` is read as int: a row whose `year` is not a whole number" in err and "year: num" in err
    assert _charged(tmp_path)


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_num_declared_for_a_text_column_is_refused_uncharged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str
) -> None:
    _files(tmp_path)
    code, _, err = _cli(capsys, tmp_path, "species_sum", tmp_path / f"floaty.{suffix}")
    assert code == 2 and "FZ542" in err and "`species`" in err and "holds text" in err
    assert not _charged(tmp_path)
    # the same column read as what it holds releases (a num column may hold integers)
    code, document, _ = _cli(capsys, tmp_path, "year_sum", tmp_path / f"floaty.{suffix}", "other.sqlite")
    assert code == 0 and isinstance(document, dict)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_pandas_frame_is_typed_as_its_columns_hold(tmp_path: Path, engine: str) -> None:
    import fuzzpy

    _files(tmp_path)
    program = fuzzpy.load(str(tmp_path / "p.fz"))
    frame = pd.read_parquet(tmp_path / "floaty.parquet")  # year: float64, two of three not whole
    with pytest.raises(fuzzpy.FuzzError) as refused:  # text read as num: refused by its stored type
        program.run("species_sum", data={"db": frame}, datasets={"db": "floaty"}, budget=1e6, seed=1,
                    ledger=str(tmp_path / "species_sum.sqlite"), engine=engine)
    assert [d.code for d in refused.value.diagnostics] == ["FZ542"]
    assert "`species`" in str(refused.value)
    assert not _charged(tmp_path, "species_sum.sqlite")
    # float64 read as int: the whole values are read, the others' rows dropped, and the release says so
    release = program.run("years", data={"db": frame}, datasets={"db": "floaty"}, budget=1e6, seed=1,
                          ledger=str(tmp_path / "years.sqlite"), engine=engine)
    assert any("`year` is read as int: a row whose `year` is not a whole number" in w for w in release.warnings)


def test_the_recorded_types_refuse_later_runs_alike(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The first run records the types (public from then on): a later run is
    refused from the registration alone, and `dataset show` lists them."""
    _files(tmp_path)
    assert _cli(capsys, tmp_path, "year_sum", tmp_path / "floaty.csv")[0] == 0
    code, _, err = _cli(capsys, tmp_path, "years", tmp_path / "floaty.csv")
    assert code == 2 and "FZ542" in err
    assert main(["dataset", "show", "floaty", "--ledger", str(tmp_path / "l.sqlite"), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    columns = shown.get("columns") or shown.get("dataset", {}).get("columns")
    assert {c["name"]: c["type"] for c in columns} == {"species": "string", "year": "num"}


def test_one_odd_cell_retypes_a_column_before_any_charge(capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path) -> None:
    """A first run types a CSV column from every cell, as `dataset register`
    does (rows2, item 1): a missing marker (`NA`) is no evidence and is
    dropped by the row rule; a `2.5` makes the column `num`, and reading it
    as `int` is refused before the charge, from the recorded type."""
    _files(tmp_path)
    plain = tmp_path / "plain.csv"
    plain.write_text("species,year\nAdelie,2007\nGentoo,2008\nChinstrap,2009\n")
    marked = tmp_path / "marked.csv"
    marked.write_text("species,year\nAdelie,2007\nGentoo,2008\nChinstrap,2009\nGentoo,NA\n")
    odd = tmp_path / "odd.csv"
    odd.write_text("species,year\nAdelie,2007\nGentoo,2008\nChinstrap,2009\nAdelie,2.5\n")
    first = _cli(capsys, tmp_path, "years", plain, "a.sqlite")
    second = _cli(capsys, tmp_path, "years", marked, "b.sqlite")
    assert first[0] == second[0] == 0
    assert first[1]["released"] == second[1]["released"]  # type: ignore[index]
    code, _, err = _cli(capsys, tmp_path, "years", odd, "c.sqlite")
    assert code == 2 and "FZ542" in err and "`year`" in err and not _charged(tmp_path, "c.sqlite")


# ---------------------------------------------------------------- item 2: the columns read


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_an_unread_column_with_missing_values_drops_no_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str, engine: str
) -> None:
    """`sex` is missing in 2 of 7 rows: a count and a filter on the mass read
    all 7; a definition reading `sex` drops its 2 rows."""
    _files(tmp_path)
    data = tmp_path / f"penguins.{suffix}"
    values = {}
    for definition in ("count", "heavy", "males"):
        code = main(["run", str(tmp_path / "p.fz"), definition, "--data", f"db={data}", "--budget", "1e6",
                     "--ledger", str(tmp_path / f"{definition}.sqlite"), "--seed", "5", "--json",
                     "--engine", engine])
        out = capsys.readouterr().out
        assert code == 0
        values[definition] = json.loads(out)["released"]
    noise = values["count"] - 7  # the same seed: the same noise in each run
    assert values["count"] == pytest.approx(7 + noise)
    assert values["heavy"] == pytest.approx(2 + noise)
    assert values["males"] == pytest.approx(2 + noise)


def test_a_frame_with_an_unread_missing_column_keeps_its_rows(tmp_path: Path) -> None:
    import fuzzpy

    _files(tmp_path)
    program = fuzzpy.load(str(tmp_path / "p.fz"))
    frame = pd.read_csv(tmp_path / "penguins.csv")
    counted = program.run("count", data={"db": frame}, datasets={"db": "penguins"}, budget=1e6, seed=5,
                          ledger=str(tmp_path / "f.sqlite"))
    filled = program.run("count", data={"db": frame.fillna({"sex": "unknown"})}, datasets={"db": "filled"},
                         budget=1e6, seed=5, ledger=str(tmp_path / "g.sqlite"))
    assert counted.value == filled.value  # the same noise on 7 rows each: no row was dropped for `sex`


def test_check_says_which_columns_each_definition_reads(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _files(tmp_path)
    assert main(["check", str(tmp_path / "p.fz")]) == 0
    text = capsys.readouterr().out
    assert "a row with a missing value" in text and "is dropped" in text
    assert "count: db: none" in text and "heavy: db: mass_g" in text and "males: db: sex" in text
    assert main(["check", str(tmp_path / "p.fz"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    read = {d["name"]: d.get("columns_read") for d in document["definitions"]}
    assert read["count"] == {"db": []} and read["heavy"] == {"db": ["mass_g"]}


def test_a_record_compared_whole_reads_every_column(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "w.fz"
    program.write_text("type R = { a : num, b : string };\n"
                       "def same (db : bag R) : fuzzy num = laplace[1.0] (size (filter (fun r -> r == r) db));\n")
    assert main(["check", str(program), "--json"]) == 0
    (definition,) = json.loads(capsys.readouterr().out)["definitions"]
    assert definition["columns_read"] == {"db": ["a", "b"]}


def test_a_declared_column_missing_from_the_file_is_still_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _files(tmp_path)
    data = tmp_path / "no_sex.csv"
    data.write_text(PENGUINS.replace(",sex", "").replace(",male", "").replace(",female", "").replace(",,", ","))
    code, _, err = _cli(capsys, tmp_path, "count", data)
    assert code == 2 and "FZ503" in err and "`sex`" in err


def test_a_misspelled_name_gets_a_suggestion(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "typo.fz"
    program.write_text("type R = { a : num };\ndef f (db : bag R) : fuzzy num = laplce[1.0] (size db);\n")
    assert main(["check", str(program)]) == 1
    err = capsys.readouterr().err
    assert "FZ207" in err and "did you mean `laplace`?" in err


def test_api_hints_name_keyword_arguments_and_the_ledger_is_no_place(tmp_path: Path) -> None:
    import fuzzpy

    _files(tmp_path)
    program = fuzzpy.load(str(tmp_path / "p.fz"))
    data = {"db": str(tmp_path / "penguins.csv")}
    with pytest.raises(fuzzpy.FuzzError) as unset:
        program.run("count", data=data, ledger=str(tmp_path / "h.sqlite"))
    assert "budget=EPS" in str(unset.value) and "--budget" not in str(unset.value)
    with pytest.raises(fuzzpy.FuzzError) as over:
        program.run("count", data=data, ledger=str(tmp_path / "h.sqlite"), budget=0.5)
    text = str(over.value)
    assert "raise budget to at least 1" in text and "--budget" not in text
    assert "h.sqlite:1:1" not in text and f"--> {tmp_path / 'h.sqlite'}" in text


def test_ledger_entries_take_a_datasets_item(tmp_path: Path) -> None:
    import fuzzpy

    _files(tmp_path)
    ledger = str(tmp_path / "e.sqlite")
    fuzzpy.load(str(tmp_path / "p.fz")).run("count", data={"db": str(tmp_path / "penguins.csv")}, ledger=ledger,
                                            budget=3)
    book = fuzzpy.Ledger(ledger)
    (state,) = book.datasets()
    assert len(book.entries(state)) == 1 == len(book.entries("penguins"))
    assert book.remaining(state) == book.remaining("penguins") == (2.0, 0.0)
    with pytest.raises(fuzzpy.FuzzError) as wrong:
        book.entries(3)  # type: ignore[arg-type]
    assert [d.code for d in wrong.value.diagnostics] == ["FZ509"]


def test_check_says_what_the_p_of_a_vector_is(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "v.fz"
    program.write_text("type R = { a : num };\n"
                       "def five (db : bag R) : fuzzy (vec[2] num) =\n"
                       "  gauss[10.0] (vsum[1] (map (fun r -> [clip[0, 1] r.a, 0, 0, 0, 0]) db));\n")
    assert main(["check", str(program)]) == 0
    assert "p is not its length" in capsys.readouterr().out


def test_a_row_inside_a_built_record_compared_reads_every_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = tmp_path / "n.fz"
    program.write_text("type R = { a : num, b : string };\n"
                       "def wrap (r : R) : { inner : R } = { inner = r };\n"
                       "def same (db : bag R) : fuzzy num =\n"
                       "  laplace[1.0] (size (filter (fun r -> (wrap r).inner == r) db));\n")
    assert main(["check", str(program), "--json"]) == 0, capsys.readouterr()
    document = json.loads(capsys.readouterr().out)
    read = {d["name"]: d.get("columns_read") for d in document["definitions"]}
    assert read["same"] == {"db": ["a", "b"]}


def test_a_float_column_is_num_and_reads_as_int_whatever_its_cells(tmp_path: Path) -> None:
    """A pandas int column with a missing value is float64: a float column is
    `num` by its stored type (`cells.stored_kind`), never by its cells (review
    s29c), and `int` reads it under the row rules -- the missing row and a
    fractional value's row dropped -- so the frame, its neighbour without the
    missing row, and one with a fractional value all release (issue 24)."""
    import fuzzpy

    _files(tmp_path)
    program = fuzzpy.load(str(tmp_path / "p.fz"))
    frame = pd.DataFrame({"species": ["a", "b", "c", "d"], "year": [2007.0, None, 2008.0, 2009.0]})
    frame.to_parquet(tmp_path / "whole.parquet")
    fractional = pd.DataFrame({"species": ["a", "b"], "year": [2007.5, None]})
    for data, ledger in ((frame, "f.sqlite"), (str(tmp_path / "whole.parquet"), "p.sqlite"),
                         (fractional, "x.sqlite")):
        release = program.run("years", data={"db": data}, datasets={"db": ledger[0]}, budget=1e6, seed=2,
                              ledger=str(tmp_path / ledger))
        assert isinstance(release.value, float)
        assert any("read as int" in w for w in release.warnings)


def test_a_later_run_types_nothing_it_reads_the_registration(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first run reads cells to type them (the registration); a
    later run's refusal (FZ542) and its release come from the recorded types
    alone: typing from cells is made to fail after the first run."""
    import fuzzpy.data.datasets as datasets
    import fuzzpy.data.validation as validation

    _files(tmp_path)
    data = tmp_path / "penguins.csv"
    assert _cli(capsys, tmp_path, "count", data)[0] == 0

    def no_typing(*args: object) -> object:
        raise AssertionError("a later run typed the data from its cells")

    monkeypatch.setattr(datasets, "_first_run_kinds", no_typing)
    monkeypatch.setattr(validation, "first_run_kinds", no_typing)
    monkeypatch.setattr(validation, "text_kinds", no_typing)
    monkeypatch.setattr(validation, "_infer", no_typing)
    code, _, err = _cli(capsys, tmp_path, "species_sum", data)
    assert code == 2 and "FZ542" in err
    assert _cli(capsys, tmp_path, "heavy", data)[0] == 0


def test_the_guide_s_post_processing_helpers_cost_nothing(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    """Issue 31 item 6: a noisy mean clamped into its range, a count rounded
    and floored at 0, after `sample`, as docs/user-guide.md shows them: the
    same cost as the bare releases (post-processing)."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "user-guide.md").read_text()
    block = guide.split("```\ntype Visit")[1].split("```")[0]
    bare = ("def bare_mean (db : bag Visit) : fuzzy (num, num) = {\n"
            "  sample total = laplace[0.5 / 15] (sum[0, 15] (map (fun v -> v.minutes) db));\n"
            "  sample n = laplace[0.5] (size db);\n  return (total, n)\n};\n"
            "def bare_count (db : bag Visit) : fuzzy num = laplace[0.5] (size db);\n")
    (tmp_path / "guide.fz").write_text("type Visit" + block + bare)
    assert main(["check", str(tmp_path / "guide.fz")]) == 0
    costs = {line.split(":")[0].strip(): line.rsplit("->", 1)[1].split()[-3]
             for line in capsys.readouterr().out.splitlines() if "-DP in db" in line}
    assert costs["mean_minutes"] == costs["bare_mean"] == "1-DP"
    assert costs["visits"] == costs["bare_count"] == "0.5-DP"
