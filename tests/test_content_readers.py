"""Issue 24, second attack on the content key: the same rows as ordinary
readers type them (dates, timestamps, times, booleans, hex), two first runs
at once, a trailing comma, a cell DuckDB cannot widen, integers beyond 2^53.

Written as a stranger would: each table is read back by the library's own
reader with its usual options, or written to Parquet from that reader's
frame, and then run under a new name."""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.data import datasets as dataset_rules
from fuzzpy.engines.content import _read_file_content, table_content
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.run import Refusal, RunRequest, execute

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")
pacsv = pytest.importorskip("pyarrow.csv")

PROGRAM = """
type Count = { x : num };
def count (db : bag Count) : fuzzy num = laplace[1.0] (size db);
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "p.fz").write_text(PROGRAM)
    return tmp_path


def run(folder: Path, data: object, name: str | None = None, ledger: str = "ledger.sqlite") -> Fraction | str:
    request = RunRequest(str(folder / "p.fz"), "count", data={"db": data}, budget="1e9,0.5",
                         ledger=str(folder / ledger), seed=3, datasets={"db": name} if name else {})
    try:
        return execute(request).value
    except (Refusal, FuzzError) as error:
        return ",".join(d.code for d in error.diagnostics)


def csv_of(folder: Path, cells: list[str], name: str = "rows.csv") -> str:
    path = folder / name
    path.write_text("c,x\n" + "".join(f"{c},{i}\n" for i, c in enumerate(cells)))
    return str(path)


# the column `c` as a CSV holds it; each is typed by some ordinary reader
SPELLINGS = {
    "ISO timestamps with T": ["2020-01-01T11:15:00", "2020-01-02T04:15:00", "2019-12-31T23:59:59"],
    "timestamps in UTC (Z)": ["2020-01-01T11:15:00Z", "2020-01-02T04:15:00Z", "2020-01-01T22:15:00Z"],
    "fractional seconds": ["2020-01-01 11:15:00.25", "2020-01-02 04:15:00.5", "2020-01-01 22:15:00.125"],
    "minutes without seconds": ["2020-01-01 10:15", "2020-01-02 04:15", "2020-01-01 22:15"],
    "times of day": ["08:30", "11:05", "23:59"],
    "slash dates": ["2020/01/05", "2020/01/25", "2019/12/31"],
    "dates": ["2020-01-05", "2020-01-25", "1969-07-20"],
    "T and F": ["T", "F", "T"],
    "t and f": ["t", "f", "f"],
    "yes and no": ["yes", "no", "yes"],
    "hex": ["0xee", "0xc0", "0x102"],
}


def reader_tables(path: str) -> dict[str, pa.Table]:
    """The CSV as each reader types it, with its usual date options."""
    frames = {
        "pyarrow.csv": pacsv.read_csv(path),
        "duckdb read_csv": duckdb.read_csv(path).to_arrow_table(),
        "polars try_parse_dates": pl.read_csv(path, try_parse_dates=True).to_arrow(),
    }
    with contextlib.suppress(ValueError, TypeError):  # pandas cannot read this column as dates: its text, below
        frames["pandas parse_dates"] = pa.Table.from_pandas(pd.read_csv(path, parse_dates=["c"]),
                                                            preserve_index=False)
    frames["pandas"] = pa.Table.from_pandas(pd.read_csv(path), preserve_index=False)
    return frames


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_every_reader_keys_the_csv_as_its_text(folder: Path, spelling: str) -> None:
    path = csv_of(folder, SPELLINGS[spelling])
    key = _read_file_content(path, "csv")
    for reader, table in reader_tables(path).items():
        if spelling == "times of day" and reader == "pandas parse_dates":
            continue  # pandas reads 08:30 as today at 08:30: an instant of the day of the reading
        assert table_content(table) == key, (reader, table.schema)
        pq.write_table(table, folder / "copy.parquet")
        assert _read_file_content(str(folder / "copy.parquet"), "parquet") == key, (reader, "parquet")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_timestamp_frame_of_a_registered_csv_is_refused(folder: Path) -> None:
    path = csv_of(folder, SPELLINGS["ISO timestamps with T"])
    assert isinstance(run(folder, path), Fraction)
    typed = pl.read_csv(path, try_parse_dates=True)
    assert typed.schema["c"] != pl.String  # the premise: polars typed the column
    assert run(folder, typed, name="typed") == "FZ545"
    pq.write_table(pacsv.read_csv(path), folder / "typed.parquet")
    assert run(folder, str(folder / "typed.parquet")) == "FZ545"


def test_other_instants_are_other_rows(folder: Path) -> None:
    """Not blind: one second later, or a time zone that moves the instant,
    is another cell."""
    base = _read_file_content(csv_of(folder, ["2020-01-01T11:15:00"]), "csv")
    later = _read_file_content(csv_of(folder, ["2020-01-01T11:15:01"], "b.csv"), "csv")
    shifted = _read_file_content(csv_of(folder, ["2020-01-01T11:15:00+02:00"], "c.csv"), "csv")
    assert len({base, later, shifted}) == 3
    moved = pa.table({"c": pa.array([datetime.datetime(2020, 1, 1, 9, 15)], pa.timestamp("us", tz="UTC")),
                      "x": [0]})
    assert table_content(moved) == shifted


def interleave(monkeypatch: pytest.MonkeyPatch, other_run: Callable[[], object]) -> list[object]:
    """Runs `other_run` (the other process, start to end) right after this
    run's check for the same rows, before its charge."""
    original = dataset_rules.refuse_same_rows
    outcome: list[object] = []

    def then_the_other_run(*args: Any, **kwargs: Any) -> str | None:
        key = original(*args, **kwargs)
        if not outcome:
            outcome.append(None)
            outcome[0] = other_run()
        return key

    monkeypatch.setattr(dataset_rules, "refuse_same_rows", then_the_other_run)
    return outcome


@pytest.mark.parametrize("form", ["csv copy", "parquet", "pandas frame"])
def test_two_first_runs_of_one_table_checked_before_either_registers(
        folder: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    """The race, made deterministic: this run's check for the same rows
    passes on an empty ledger, then the other run registers and charges,
    then this one charges. It must be refused in the charge's own
    transaction (as two processes racing were not)."""
    path = csv_of(folder, ["1", "2", "3"])
    copy = folder / "copy.csv"
    copy.write_text("x,c\n2,3\n0,1\n1,2\n")
    pq.write_table(pa.table({"c": [1, 2, 3], "x": [0, 1, 2]}), folder / "copy.parquet")
    data: object = {"csv copy": str(copy), "parquet": str(folder / "copy.parquet"),
                    "pandas frame": pd.read_csv(path)}[form]
    other = interleave(monkeypatch, lambda: run(folder, path))
    assert run(folder, data, name="second") == "FZ545"
    assert isinstance(other[0], Fraction)


def test_an_owner_registering_the_rows_while_a_first_run_is_checked(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both orders of a first run and an owner's registration of the same
    rows as a frame: whichever comes second is refused."""
    from fuzzpy.api.frames import register_frame

    path = csv_of(folder, ["1", "2", "3"])
    frame = pd.read_csv(path)
    ledger = str(folder / "ledger.sqlite")

    def owner() -> object:
        try:
            return register_frame(ledger, "people", frame, "1")
        except FuzzError as error:
            return error.diagnostics[0].code

    other = interleave(monkeypatch, owner)
    assert run(folder, path) == "FZ545"  # the owner registered between its check and its charge
    assert not isinstance(other[0], str)
    monkeypatch.undo()
    second = str(folder / "second.sqlite")
    assert isinstance(run(folder, path, ledger="second.sqlite"), Fraction)
    with pytest.raises(FuzzError) as refused:
        register_frame(second, "people", frame, "1")
    assert refused.value.diagnostics[0].code == "FZ545"


def test_a_trailing_comma_on_every_line_is_the_same_rows(folder: Path) -> None:
    plain = folder / "plain.csv"
    plain.write_text("c,x\n1,0\n2,1\n3,2\n")
    trailing = folder / "trailing.csv"
    trailing.write_text("c,x,\n1,0,\n2,1,\n3,2,\n")
    assert isinstance(run(folder, str(plain)), Fraction)
    assert run(folder, str(trailing)) == "FZ545"
    # a column with no name but a value is a column added (as pandas' index): the same people on the
    # columns shared (issue 24, compared on shared columns); a named cell changed is new data
    valued = folder / "valued.csv"
    valued.write_text("c,x,\n1,0,\n2,1,7\n3,2,\n")
    assert run(folder, str(valued)) == "FZ545"
    changed = folder / "changed.csv"
    changed.write_text("c,x,\n1,0,\n2,5,7\n3,2,\n")
    assert isinstance(run(folder, str(changed)), Fraction)


def test_keying_never_fails_on_a_cell_of_another_dataset(folder: Path) -> None:
    """A timestamp[s] of 10^13 s is beyond DuckDB's TIMESTAMP: keying the
    registered file failed (FZ799) whenever a stranger's run had the same
    column names, one bit about one of its rows."""
    cells = pa.array([None, None, 10 ** 13], pa.timestamp("s"))
    table = pa.table({"c": [1.0, 2.0, 3.0], "x": [0.0, 1.0, 2.0], "z": cells})
    pq.write_table(table, folder / "owner.parquet", coerce_timestamps=None, allow_truncated_timestamps=True)
    assert isinstance(run(folder, str(folder / "owner.parquet")), Fraction)
    stranger = pa.table({"c": [5.0], "x": [0.0], "z": pa.array([None], pa.timestamp("s"))})
    pq.write_table(stranger, folder / "stranger.parquet")
    assert isinstance(run(folder, str(folder / "stranger.parquet")), Fraction)
    assert table_content(table) == _read_file_content(str(folder / "owner.parquet"), "parquet")


def test_integers_are_keyed_by_their_nearest_double(folder: Path) -> None:
    """A review (s28b F3): an int column with a missing cell is float64 in
    pandas, and pyarrow reads an integer beyond int64 as a double, so an
    integer is keyed by its nearest double: 2^53 + 1 links to 2^53 (more
    links, never fewer), while 2^53 + 2 is another cell."""
    big = table_content(pa.table({"c": pa.array([2 ** 53], pa.int64())}))
    bigger = table_content(pa.table({"c": pa.array([2 ** 53 + 1], pa.int64())}))
    assert big == bigger
    assert big != table_content(pa.table({"c": pa.array([2 ** 53 + 2], pa.int64())}))
    as_text = folder / "big.csv"
    as_text.write_text(f"c\n{2 ** 53 + 1}\n")
    assert _read_file_content(str(as_text), "csv") == bigger
    # a double that is an integer beyond 2^53 is that integer
    assert table_content(pa.table({"c": pa.array([2.0 ** 60])})) == table_content(
        pa.table({"c": pa.array([2 ** 60], pa.int64())}))
    underscored = folder / "u.csv"
    underscored.write_text("c\n3_78\n")
    plain = folder / "p.csv"
    plain.write_text("c\n378\n")
    assert _read_file_content(str(underscored), "csv") != _read_file_content(str(plain), "csv")
