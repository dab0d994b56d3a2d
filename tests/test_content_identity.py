"""Issue 24, "Budget identity": the content key reads the rows the loader
reads, typed as the loader types them, in every form.

Each case below is a file (or frame) that the loader reads as exactly the
rows of a dataset already in the ledger, which a key computed by DuckDB's
sniffing CSV reader took for new data with a fresh budget. Each must be
refused under a new name (FZ545), before anything is charged.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.data.loader import load_bag
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.types import TBag, TNum, TRecord, TString
from fuzzpy.release.run import Refusal, RunRequest, execute

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

PROGRAM = """
type Pair = { a : num, b : num };
type Single = { x : num };
type Clock = { t : string, v : num };
def pairs (db : bag Pair) : fuzzy num = laplace[1.0] (size db);
def singles (db : bag Single) : fuzzy num = laplace[1.0] (size db);
def clocks (db : bag Clock) : fuzzy num = laplace[1.0] (size db);
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.fz").write_text(PROGRAM)
    return tmp_path


def run(folder: Path, definition: str, data: object, name: str | None = None,
        ledger: str = "ledger.sqlite", engine: str = "memory") -> Fraction | str:
    request = RunRequest(str(folder / "p.fz"), definition, data={"db": data}, budget="1e9,0.5",
                         ledger=str(folder / ledger), seed=5, datasets={"db": name} if name else {},
                         engine=engine)
    try:
        return execute(request).value
    except (Refusal, FuzzError) as error:
        return ",".join(d.code for d in error.diagnostics)


def write(folder: Path, name: str, text: str | bytes) -> str:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


# (definition, the registered file, the same rows as the loader reads them written otherwise)
CASES = {
    "one column and a blank line": ("singles", "x\n1\n2\n3\n", "x\n1\n\n2\n3\n"),
    "one column, blank lines of spaces and CR LF": ("singles", "x\n1\n2\n3\n", "x\r\n1\r\n\r\n2\r\n3\r\n\r\n"),
    "a line of empty cells": ("pairs", "a,b\n1,2\n3,4\n", "a,b\n1,2\n,\n3,4\n"),
    "a line of blank cells": ("pairs", "a,b\n1,2\n3,4\n", "a,b\n1,2\n3,4\n  ,\t\n"),
    "a ragged line, longer": ("pairs", "a,b\n1,2\n3,4\n", "a,b\n1,2\n5,6,7\n3,4\n"),
    "a ragged line, shorter": ("pairs", "a,b\n1,2\n3,4\n", "a,b\n1,2\n9\n3,4\n"),
    "a quote that does not close": ("pairs", "a,b\n1,2\n3,4\n", 'a,b\n1,2\n"5,6\n3,4\n'),
    "a carriage return inside a line": ("pairs", "a,b\n1,2\n3,4\n", "a,b\n1,2\n7\r8,9\n3,4\n"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_file_with_lines_the_loader_drops_is_the_same_dataset(folder: Path, case: str) -> None:
    definition, registered, same_rows = CASES[case]
    first = write(folder, "first.csv", registered)
    other = write(folder, "other.csv", same_rows)
    assert isinstance(run(folder, definition, first), Fraction)
    assert run(folder, definition, other) == "FZ545"
    # and the other way round: the file with the dropped lines registered first
    assert isinstance(run(folder, definition, other, ledger="second.sqlite"), Fraction)
    assert run(folder, definition, first, ledger="second.sqlite") == "FZ545"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_the_rows_of_a_file_whose_quote_does_not_close_are_linked_in_every_form(folder: Path, engine: str) -> None:
    """The sniffer failed on such a file: it was keyed by its bytes only, so
    its rows saved as Parquet or read into a frame were new data."""
    broken = write(folder, "broken.csv", 'a,b\n1.5,2\n"oops,3\n3,4\n')
    assert isinstance(run(folder, "pairs", broken, engine=engine), Fraction)
    rows = pa.table({"a": [1.5, 3.0], "b": [2, 4]})
    pq.write_table(rows, folder / "rows.parquet")
    assert run(folder, "pairs", str(folder / "rows.parquet"), engine=engine) == "FZ545"
    assert run(folder, "pairs", rows.to_pandas(), name="as_pandas", engine=engine) == "FZ545"
    assert run(folder, "pairs", pl.from_arrow(rows), name="as_polars", engine=engine) == "FZ545"
    assert run(folder, "pairs", rows, name="as_arrow", engine=engine) == "FZ545"


@pytest.mark.parametrize("text", ["t,v\n12:30,1\n07:05,2\n", "t,v\n2024-01-31,1\n1999-12-01,2\n",
                                  "t,v\n2024-01-31 12:30:00,1\n2024-02-01 00:00:00,2\n"])
@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_time_or_date_column_read_back_by_pandas_is_the_same_dataset(folder: Path, text: str, engine: str) -> None:
    """DuckDB's sniffer typed `12:30` as a TIME and keyed it `12:30:00`;
    the loader reads the text, and so does pandas."""
    csv = write(folder, "clock.csv", text)
    assert isinstance(run(folder, "clocks", csv, engine=engine), Fraction)
    assert run(folder, "clocks", pd.read_csv(csv), name="clock_frame", engine=engine) == "FZ545"
    assert run(folder, "clocks", pl.read_csv(csv), name="clock_polars", engine=engine) == "FZ545"


def test_the_loader_reads_those_files_as_the_same_rows(folder: Path) -> None:
    """The premise of the cases above, checked on the loader itself."""
    row = TRecord((("a", TNum()), ("b", TNum())))
    for case, (definition, registered, same_rows) in CASES.items():
        if definition != "pairs":
            continue
        left = load_bag(write(folder, "l.csv", registered), TBag(row))
        right = load_bag(write(folder, "r.csv", same_rows), TBag(row))
        assert sorted(zip(*left.view().fields.values(), strict=True)) == sorted(
            zip(*right.view().fields.values(), strict=True)), case
    clocks = load_bag(write(folder, "c.csv", "t\n12:30\n"), TBag(TRecord((("t", TString()),))))
    assert list(clocks.view().fields["t"]) == ["12:30"]


def test_other_rows_are_still_other_data(folder: Path) -> None:
    """The key is not made blind: one more complete row, or a changed cell,
    is new data. A row with a missing cell is left out of the key (pandas
    reads a short line as one, the loader drops it: a review, s28b F2), so
    one more such row links (a refusal, never a fresh budget)."""
    first = write(folder, "first.csv", "a,b\n1,2\n3,4\n")
    assert isinstance(run(folder, "pairs", first), Fraction)
    for index, text in enumerate(["a,b\n1,2\n3,5\n", "a,b\n1,2\n3,4\n3,4\n", "a,b\n1,2\n3,4\n5,6\n"]):
        assert isinstance(run(folder, "pairs", write(folder, f"o{index}.csv", text)), Fraction), text
    for index, text in enumerate(["a,b\n1,2\n3,4\n5,\n", "a,b\n1,2\n3,4\n,6\n"]):
        assert run(folder, "pairs", write(folder, f"m{index}.csv", text)) == "FZ545", text


def test_a_key_of_an_earlier_version_is_computed_again_from_its_file(folder: Path) -> None:
    """A ledger's keys written by an earlier fuzzpy spell rows otherwise:
    never compared, but keyed again from the file while its bytes are the
    registered ones, so its rows in another form stay linked."""
    import sqlite3

    from fuzzpy.cli import main

    csv = write(folder, "people.csv", "a,b\n1,2\n3,4\n")
    ledger = str(folder / "ledger.sqlite")
    assert main(["dataset", "register", "people", csv, "--budget", "1", "--ledger", ledger]) == 0
    with sqlite3.connect(ledger) as connection:
        old = "0" * 64  # as fuzzpy-content-3 recorded it: no version tag
        connection.execute("UPDATE datasets SET content = ?", (old,))
        connection.execute("UPDATE dataset_log SET content = ?", (old,))
    pq.write_table(pa.table({"a": [3, 1], "b": [4.0, 2.0]}), folder / "copy.parquet")
    assert run(folder, "pairs", str(folder / "copy.parquet")) == "FZ545"
    with sqlite3.connect(ledger) as connection:
        (content,) = connection.execute("SELECT content FROM datasets WHERE name = 'people'").fetchone()
    assert content.startswith("c9:")
