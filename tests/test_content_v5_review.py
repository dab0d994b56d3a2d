"""A black-box review of content key v5 (issue 24, item 1): the same rows
in another form got a fresh budget, or one cell failed every run.

Written against the public API only (`fuzzpy.loads`, `Program.run`,
`fuzzpy.Ledger`, `register_frame`): a first run registers dataset `first`,
then the same rows in another form run under the name `second`. The same
rows must be refused (FZ545), and a run must never end in anything but a
release or a FuzzError.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import fuzzpy
from fuzzpy.api.frames import register_frame

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

SOURCE = """
def count_nums (db : bag { a : num, b : num }) : fuzzy num = laplace[0.5] (size db);
def count_b (db : bag { b : num }) : fuzzy num = laplace[0.5] (size db);
"""


def _outcome(ledger: fuzzpy.Ledger, definition: str, data: Any, name: str, engine: str = "auto") -> str:
    program = fuzzpy.loads(SOURCE, name="review.fz")
    try:
        program.run(definition, data={"db": data}, datasets={"db": name}, ledger=ledger,
                    budget=2, seed=7, engine=engine)
    except fuzzpy.FuzzError as error:
        return ",".join(d.code for d in error.diagnostics)
    return "released"


def _second_is_refused(tmp_path: Path, first: Any, second: Any, definition: str = "count_nums") -> str:
    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    assert _outcome(ledger, definition, first, "first") == "released"
    return _outcome(ledger, definition, second, "second")


# F1: the five spellings pandas and pyarrow read as missing that v5 keyed as text

ODD_MISSING = ["#N/A N/A", "-1.#IND", "1.#IND", "1.#QNAN", "-1.#QNAN"]


@pytest.mark.parametrize("spelling", ODD_MISSING)
def test_a_csv_and_pandas_reading_of_it_are_one_dataset(tmp_path: Path, spelling: str) -> None:
    csv = tmp_path / "na.csv"
    csv.write_text(f"a,b\n{spelling},1\n2,2\n3,3\n")
    frame = pd.read_csv(csv)
    assert frame["a"].isna().iloc[0]  # pandas reads the cell as missing
    assert "FZ545" in _second_is_refused(tmp_path, str(csv), frame)


@pytest.mark.parametrize("spelling", ["#N/A N/A", "1.#QNAN"])
def test_the_parquet_pandas_writes_and_pyarrow_csv_tables_link_to_the_csv(tmp_path: Path, spelling: str) -> None:
    csv = tmp_path / "na.csv"
    csv.write_text(f"b,a\r\n7,{spelling}\r\n8,8.5\r\n")
    parquet = tmp_path / "na.parquet"
    pd.read_csv(csv, dtype_backend="pyarrow").to_parquet(parquet)
    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    assert _outcome(ledger, "count_b", str(csv), "first") == "released"
    assert "FZ545" in _outcome(ledger, "count_b", str(parquet), "second")
    assert "FZ545" in _outcome(ledger, "count_b", pacsv.read_csv(csv), "third")


# F2: a duration no engine's INTERVAL holds (the program never reads it)

def _with(extra: pa.Array) -> pa.Table:
    return pa.table({"a": pa.array([1.5, 2.5]), "b": pa.array([1, 2]), "span": extra})


HUGE = 10**13
LONG_DURATIONS = {
    "seconds": pa.array([HUGE, 0], pa.duration("s")),
    "milliseconds": pa.array([2**63 - 1, 0], pa.duration("ms")),
    "in a list": pa.array([[HUGE], []], pa.list_(pa.duration("s"))),
    "in a struct": pa.array([{"d": HUGE}, {"d": 1}], pa.struct([("d", pa.duration("s"))])),
    "dictionary": pa.array([HUGE, HUGE], pa.duration("s")).dictionary_encode(),
}


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("form", sorted(LONG_DURATIONS))
def test_a_long_duration_in_an_unread_column_does_not_fail_the_run(tmp_path: Path, form: str, engine: str) -> None:
    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    assert _outcome(ledger, "count_nums", _with(LONG_DURATIONS[form]), "first", engine) == "released"


def test_a_polars_duration_beyond_an_interval_registers_and_runs(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": [1.0, 2.0], "b": [3, 4],
                          "wait": pl.Series([2**62, 5], dtype=pl.Duration("ms"))})
    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    register_frame(ledger, "waits", frame, 2)
    assert _outcome(ledger, "count_nums", frame, "waits") == "released"


def test_durations_key_by_their_length_whatever_the_unit(tmp_path: Path) -> None:
    seconds = _with(pa.array([10**12, 3], pa.duration("s")))
    micros = _with(pa.array([10**18, 3 * 10**6], pa.duration("us")))
    assert "FZ545" in _second_is_refused(tmp_path, seconds, micros)


def test_other_awkward_types_never_fail_keying(tmp_path: Path) -> None:
    import decimal

    ledger = fuzzpy.Ledger(tmp_path / "budget.sqlite")
    columns = {
        "wide": pa.array([decimal.Decimal("9" * 70), decimal.Decimal(0)], pa.decimal256(76, 0)),
        "half": pa.array([1.5, 0.0], pa.float32()).cast(pa.float16()),
        "gap": pa.array([(1, 2, 3), (0, 0, 0)], pa.month_day_nano_interval()),
        "either": pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["x", "y"])]),
    }
    for i, (name, column) in enumerate(columns.items()):
        table = pa.table({"a": [1.0, 2.0 + i], "b": [1, 2], name: column})  # other rows: no link
        assert _outcome(ledger, "count_nums", table, f"t{i}") == "released", name


# F3: a Parquet file and the Arrow table it was written from

EXTREMES = {
    "binary not UTF-8": pa.array([b"\xff", b"x"], pa.binary()),
    "earliest ns timestamp": pa.array([-(2**63) + 1, 0], pa.int64()).cast(pa.timestamp("ns")),
    "latest ms timestamp": pa.array([2**63 - 1, 0], pa.int64()).cast(pa.timestamp("ms")),
    "latest us timestamp with a zone": pa.array([2**63 - 1, 0], pa.int64()).cast(pa.timestamp("us", tz="Asia/Kolkata")),
    "latest date32": pa.array([2**31 - 1, 0], pa.int32()).cast(pa.date32()),
}


@pytest.mark.parametrize("case", sorted(EXTREMES))
def test_a_parquet_file_and_its_arrow_table_are_one_dataset(tmp_path: Path, case: str) -> None:
    table = pa.table({"extra": EXTREMES[case], "b": [10.0, 20.0], "a": [0.25, 0.5]})
    parquet = tmp_path / "x.parquet"
    pq.write_table(table, parquet)
    assert "FZ545" in _second_is_refused(tmp_path, str(parquet), table)


def test_polars_reading_of_a_far_date_links_to_its_file(tmp_path: Path) -> None:
    table = pa.table({"a": [1.0, 2.0], "b": [1.0, 2.0],
                      "day": pa.array([2**31 - 1, 0], pa.int32()).cast(pa.date32())})
    parquet = tmp_path / "far.parquet"
    pq.write_table(table, parquet)
    assert "FZ545" in _second_is_refused(tmp_path, str(parquet), pl.read_parquet(parquet))


def test_an_ordinary_date_still_links_a_parquet_file_to_pandas(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [5.0, 6.0],
                          "when": [datetime.date(2021, 3, 4), datetime.date(1999, 1, 1)]})
    parquet = tmp_path / "dates.parquet"
    frame.to_parquet(parquet)
    assert "FZ545" in _second_is_refused(tmp_path, str(parquet), frame)
