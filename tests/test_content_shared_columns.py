"""Issue 24, a black-box review: a copy of a dataset's rows with columns
added (pandas' unnamed index column, an id) or removed (a projection) is
the same people, and may not be a new dataset with a fresh budget (FZ545).

Written as a data scientist would make such copies: pandas' `to_csv` with
its default index, polars' row index, a Parquet file with a column added, a
one-column extract, columns reordered with one more. Each was accepted as a
new dataset before datasets were compared on the columns they share.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.run import Refusal, RunRequest, execute

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

PROGRAM = """
type Person = { age : num };
def count (db : bag Person) : fuzzy num = laplace[1.0] (size db);
def both (a : bag Person) (b : bag Person) : fuzzy (num, num) = {
  sample x = laplace[2.0] (size a);
  sample y = laplace[2.0] (size b);
  return (x, y)
};
"""

PEOPLE = {"name": ["ana", "bo", "cy", "di", "ed", "flo"], "age": [34, 51, 29, 62, 45, 38],
          "income": [3100.5, 4200.0, 2800.25, 5100.0, 3900.75, 3300.0]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.fz").write_text(PROGRAM)
    pd.DataFrame(PEOPLE).to_csv(tmp_path / "people.csv", index=False)
    return tmp_path


def run(folder: Path, data: dict[str, object], engine: str = "memory", definition: str = "count") -> Fraction | str:
    request = RunRequest(str(folder / "p.fz"), definition, data=data, budget="100", ledger=str(folder / "l.sqlite"),
                         seed=3, engine=engine)
    try:
        value = execute(request).value
        return value if isinstance(value, Fraction) else "released"
    except (Refusal, FuzzError) as error:
        return ",".join(d.code for d in error.diagnostics)


def refused_after_people(folder: Path, copy: object, engine: str = "memory") -> str | Fraction:
    assert isinstance(run(folder, {"db": str(folder / "people.csv")}, engine), Fraction)
    return run(folder, {"db": copy}, engine)


def test_pandas_to_csv_with_its_default_index_is_the_same_dataset(folder: Path) -> None:
    frame = pd.read_csv(folder / "people.csv")
    frame.to_csv(folder / "withindex.csv")  # an unnamed first column holding 0..n-1
    assert (folder / "withindex.csv").read_text().startswith(",name,age,income")
    assert refused_after_people(folder, str(folder / "withindex.csv")) == "FZ545"


def test_pandas_to_csv_without_index_but_with_an_id_column(folder: Path) -> None:
    frame = pd.read_csv(folder / "people.csv")
    frame.insert(0, "person_id", range(1000, 1000 + len(frame)))
    frame.sample(frac=1.0, random_state=7).to_csv(folder / "with_id.csv", index=False)  # shuffled too
    assert refused_after_people(folder, str(folder / "with_id.csv")) == "FZ545"


def test_polars_with_a_row_index_written_as_csv(folder: Path) -> None:
    pl.read_csv(folder / "people.csv").with_row_index("row").write_csv(folder / "polars.csv")
    assert refused_after_people(folder, str(folder / "polars.csv")) == "FZ545"


def test_parquet_with_a_column_added(folder: Path) -> None:
    frame = pd.read_csv(folder / "people.csv")
    frame["region"] = ["n", "s", "n", "e", "w", "s"]
    frame.to_parquet(folder / "wider.parquet")
    assert refused_after_people(folder, str(folder / "wider.parquet")) == "FZ545"


def test_a_projection_to_one_column(folder: Path) -> None:
    pd.read_csv(folder / "people.csv")[["age"]].to_csv(folder / "age_only.csv", index=False)
    assert refused_after_people(folder, str(folder / "age_only.csv")) == "FZ545"


def test_columns_reordered_and_one_added_on_duckdb(folder: Path) -> None:
    frame = pd.read_csv(folder / "people.csv")
    frame["batch"] = "2024-q1"
    frame[["income", "batch", "age", "name"]].to_csv(folder / "reordered.csv", index=False)
    assert refused_after_people(folder, str(folder / "reordered.csv"), engine="duckdb") == "FZ545"


def test_the_projection_registered_first_links_the_wider_file_later(folder: Path) -> None:
    """The other way round: the narrow copy first, the full table second."""
    pd.read_csv(folder / "people.csv")[["age", "name"]].to_parquet(folder / "narrow.parquet", index=False)
    assert isinstance(run(folder, {"db": str(folder / "narrow.parquet")}, "duckdb"), Fraction)
    assert run(folder, {"db": str(folder / "people.csv")}, "duckdb") == "FZ545"


def test_one_program_on_the_file_and_its_indexed_copy(folder: Path) -> None:
    """The review's case: `--data a=people.csv --data b=withindex.csv`, one
    program spending half on each "dataset"."""
    pd.read_csv(folder / "people.csv").to_csv(folder / "withindex.csv")
    data = {"a": str(folder / "people.csv"), "b": str(folder / "withindex.csv")}
    assert run(folder, data, definition="both") == "FZ545"


def test_a_frame_with_an_extra_column_through_the_python_api(folder: Path) -> None:
    import fuzzpy.api as fz

    program = fz.load(folder / "p.fz")
    ledger = str(folder / "l.sqlite")
    program.run("count", {"db": str(folder / "people.csv")}, budget=100, ledger=ledger, seed=1)
    frame = pd.read_csv(folder / "people.csv")
    frame["weight"] = 1.0
    with pytest.raises(Exception) as caught:
        program.run("count", {"db": frame}, datasets="survey", budget=100, ledger=ledger, seed=1)
    assert "FZ545" in str(caught.value)
    assert "`age`, `income`, `name`" in str(caught.value)  # the shared columns, and the way forward
    assert "dataset update people" in str(caught.value)


def test_a_registered_frame_links_a_file_with_its_columns_and_more(folder: Path) -> None:
    """A frame keeps only its full key: a file holding its columns and one
    more (the index pandas writes) is compared with it."""
    from fuzzpy.api.frames import register_frame

    frame = pd.read_csv(folder / "people.csv")
    register_frame(str(folder / "l.sqlite"), "people", frame, budget=5)
    frame.to_csv(folder / "withindex.csv")
    assert run(folder, {"db": str(folder / "withindex.csv")}) == "FZ545"


def test_a_file_that_shares_a_column_name_but_not_its_values_is_new_data(folder: Path) -> None:
    pd.DataFrame({"age": [19, 23, 23, 70, 45, 38]}).to_csv(folder / "ages.csv", index=False)  # compared: new
    pd.DataFrame({"age": PEOPLE["age"][:5]}).to_csv(folder / "fewer.csv", index=False)  # a subset of rows
    assert isinstance(refused_after_people(folder, str(folder / "ages.csv")), Fraction)
    assert isinstance(run(folder, {"db": str(folder / "fewer.csv")}), Fraction)
