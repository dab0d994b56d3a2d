"""A black-box review (s29, issue 24): the same rows in another form still
got a fresh, full budget. Each test charges one form of a table and then
offers another form of the same rows under a new name: it must be refused
(FZ545) before anything more is charged.

G1 pandas' `parse_dates` on cells that are not whole dates (a year, a
   6-digit date, a month's name, a quarter, a bare time: pandas fills the
   missing fields, a bare time with the day it runs);
G2 DuckDB's `infinity` dates and stamps;
G3 zone names and offsets in stamps, in ISO and other spellings;
G4 an Excel (cp1252) CSV and its copy re-saved as UTF-8;
G5 a CSV whose cells are single-quoted (DuckDB's sniffer takes `'` as the quote).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from fuzzpy.cli import main
from fuzzpy.engines.content import _read_file_content, table_content
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.run import Refusal, RunRequest, execute

pd = pytest.importorskip("pandas")
duckdb = pytest.importorskip("duckdb")

PROGRAM = """
type Row = { v : num };
def count (db : bag Row) : fuzzy num = laplace[0.5] (size db);
"""


class Ledger:
    """One ledger, one program; forms of data offered to it, one after another."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / "count.fz").write_text(PROGRAM)
        self.ledger = str(folder / "ledger.sqlite")

    def file(self, name: str, content: str | bytes) -> str:
        path = self.folder / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return str(path)

    def cli(self, capsys: pytest.CaptureFixture[str], data: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["run", str(self.folder / "count.fz"), "count", "--data", f"db={data}",
                     "--budget", "4", "--ledger", self.ledger, "--seed", "11"])
        return code, capsys.readouterr().err

    def frame(self, frame: object, name: str) -> str:
        request = RunRequest(str(self.folder / "count.fz"), "count", data={"db": frame}, budget="4",
                             ledger=self.ledger, seed=11, datasets={"db": name})
        try:
            execute(request)
        except (Refusal, FuzzError) as error:
            return ",".join(d.code for d in error.diagnostics)
        return "charged"


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path)


def first_charged(ledger: Ledger, capsys: pytest.CaptureFixture[str], path: str) -> None:
    code, err = ledger.cli(capsys, path)
    assert code == 0, err


# ---------------------------------------------------------------- G1


PARTIAL = ("v,year,ym6,month,quarter,clock\n"
           "1,2019,311299,Jan,2020Q1,12:30\n"
           "2,2024,010203,Mar,2021Q3,07:05:09\n"
           "3,1987,150687,Dec,2019Q4,23:59\n")


def test_pandas_parse_dates_on_partial_dates_is_the_csv(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    """pandas reads `2019` as 2019-01-01, `311299` as 1999-12-31, `Jan` as
    0001-01-01, `2021Q3` as 2021-07-01 and `12:30` as today at 12:30."""
    csv = ledger.file("partial.csv", PARTIAL)
    first_charged(ledger, capsys, csv)
    columns = ["year", "ym6", "month", "quarter", "clock"]
    frame = pd.read_csv(csv, dtype={"ym6": str}, parse_dates=columns)
    assert all(str(frame[c].dtype).startswith("datetime64") for c in columns)  # the premise
    assert ledger.frame(frame, "partial_frame") == "FZ545"


@pytest.mark.slow
def test_pd_to_datetime_frame_registered_first_links_the_csv(ledger: Ledger,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    frame = pd.DataFrame({"v": [1.0, 2.0, 3.0],
                          "year": pd.to_datetime(["2019", "2024", "1987"]),
                          "ym6": pd.to_datetime(["311299", "010203", "150687"]),
                          "month": pd.to_datetime(["Jan", "Mar", "Dec"], format="%b"),
                          "quarter": pd.to_datetime(["2020Q1", "2021Q3", "2019Q4"]),
                          "clock": pd.to_datetime(["12:30", "07:05:09", "23:59"], format="mixed")})
    assert ledger.frame(frame, "made_by_hand") == "charged"
    code, err = ledger.cli(capsys, ledger.file("partial.csv", PARTIAL))
    assert code != 0 and "FZ545" in err


@pytest.mark.slow
def test_a_year_and_a_bare_time_are_not_made_blind(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("v,year,clock\n1,2019,12:30\n")
    key = _read_file_content(str(tmp_path / "a.csv"), "csv")
    other_year = pa.table({"v": [1], "year": pa.array([dt.datetime(2018, 1, 1)], pa.timestamp("us")),
                           "clock": pa.array([dt.time(12, 30)], pa.time64("us"))})
    other_time = pa.table({"v": [1], "year": pa.array([dt.datetime(2019, 1, 1)], pa.timestamp("us")),
                           "clock": pa.array([dt.time(12, 31)], pa.time64("us"))})
    same = pa.table({"v": [1], "year": pa.array([dt.datetime(2019, 1, 1)], pa.timestamp("us")),
                     "clock": pa.array([dt.time(12, 30)], pa.time64("us"))})
    assert key == table_content(same)
    assert key != table_content(other_year) and key != table_content(other_time)


# ---------------------------------------------------------------- G2


INFINITE = "v,start,until\n1,-infinity,2020-01-05\n2,2021-03-07,infinity\n3,1999-12-31,infinity\n"


@pytest.mark.slow
def test_duckdb_infinite_dates_are_the_csv(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    csv = ledger.file("open_ended.csv", INFINITE)
    first_charged(ledger, capsys, csv)
    con = duckdb.connect()
    relation = con.sql(f"SELECT v, CAST(start AS DATE) AS start, CAST(until AS TIMESTAMP) AS until "
                       f"FROM read_csv('{csv}', all_varchar = true)")
    assert ledger.frame(relation, "in_duckdb") == "FZ545"


@pytest.mark.slow
def test_infinity_as_python_reads_it_is_the_csv(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    """DuckDB's `infinity` fetched into Python is 9999-12-31 (a stamp: its last microsecond)."""
    first_charged(ledger, capsys, ledger.file("open_ended.csv", INFINITE))
    rows = duckdb.sql("SELECT 'infinity'::TIMESTAMP AS t, '-infinity'::DATE AS d").fetchall()
    assert rows[0][0] == dt.datetime(9999, 12, 31, 23, 59, 59, 999999) and rows[0][1] == dt.date(1, 1, 1)
    table = pa.table({"v": [1.0, 2.0, 3.0],
                      "start": pa.array([dt.date(1, 1, 1), dt.date(2021, 3, 7), dt.date(1999, 12, 31)]),
                      "until": pa.array([dt.datetime(2020, 1, 5), rows[0][0], rows[0][0]], pa.timestamp("us"))})
    assert ledger.frame(table, "via_python") == "FZ545"


# ---------------------------------------------------------------- G3


ZONED = ("v,at\n1,2020-01-05 10:00:00 America/New_York\n2,2020-07-05 10:15:30 EST\n"
         "3,2021-02-03 23:45:00 Europe/Paris\n")


@pytest.mark.slow
def test_zone_names_read_by_duckdb_as_timestamptz_are_the_csv(ledger: Ledger,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    csv = ledger.file("zoned.csv", ZONED)
    first_charged(ledger, capsys, csv)
    relation = duckdb.connect().sql(f"SELECT * FROM read_csv('{csv}')")
    assert "TIME ZONE" in str(relation.types[1]).upper()  # the premise: DuckDB typed them, in UTC
    assert ledger.frame(relation, "zoned_duckdb") == "FZ545"


@pytest.mark.slow
def test_offsets_in_a_us_spelling_parsed_by_pandas_are_the_csv(ledger: Ledger,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    csv = ledger.file("offsets.csv", "v,at\n1,01/05/2020 10:15 +0530\n2,12/31/2020 11:59:59 -0800\n")
    first_charged(ledger, capsys, csv)
    frame = pd.read_csv(csv, parse_dates=["at"], date_format="%m/%d/%Y %H:%M:%S %z")
    frame["at"] = pd.to_datetime(pd.read_csv(csv)["at"], format="mixed", utc=True)
    assert ledger.frame(frame, "offsets_utc") == "FZ545"


# ---------------------------------------------------------------- G4


EXCEL = "v,name\n1,Zoë\n2,café crème\n3,Bob\n"


@pytest.mark.parametrize("order", ["cp1252 first", pytest.param("utf-8 first", marks=pytest.mark.slow)])
def test_an_excel_csv_and_its_utf8_copy_are_one_dataset(ledger: Ledger, capsys: pytest.CaptureFixture[str],
                                                        order: str) -> None:
    legacy = ledger.file("excel.csv", EXCEL.encode("cp1252"))
    modern = ledger.file("utf8.csv", EXCEL)
    first, second = (legacy, modern) if order == "cp1252 first" else (modern, legacy)
    first_charged(ledger, capsys, first)
    code, err = ledger.cli(capsys, second)
    assert code != 0 and "FZ545" in err


# ---------------------------------------------------------------- G5


QUOTED = "v,who\n1,'Ann'\n2,'Lee, Jo'\n3,'Kim'\n"


@pytest.mark.slow
def test_single_quoted_cells_as_duckdb_sniffs_them_are_the_csv(ledger: Ledger,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    csv = ledger.file("quoted.csv", QUOTED)
    first_charged(ledger, capsys, csv)
    relation = duckdb.connect().sql(f"SELECT * FROM read_csv('{csv}')")
    assert ("Lee, Jo",) in duckdb.connect().sql(f"SELECT who FROM read_csv('{csv}')").fetchall()  # the premise
    assert ledger.frame(relation, "sniffed") == "FZ545"


@pytest.mark.slow
def test_single_quoted_cells_read_by_pandas_are_the_csv(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    csv = ledger.file("quoted.csv", QUOTED)
    assert ledger.frame(pd.read_csv(csv, quotechar="'"), "pandas_quoted") == "charged"
    code, err = ledger.cli(capsys, csv)
    assert code != 0 and "FZ545" in err


# ---------------------------------------------------------------- G6


TAILED = 'v,who\n1,"Ann"\n2,"Lee"son\n3,Kim\n4,"O""Neil"x\n'


@pytest.mark.slow
def test_a_closed_quote_followed_by_text_as_pandas_reads_it(ledger: Ledger,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The loader drops `2,"Lee"son`; pandas and pyarrow read `Leeson`."""
    csv = ledger.file("tailed.csv", TAILED)
    first_charged(ledger, capsys, csv)
    frame = pd.read_csv(csv)
    assert "Leeson" in set(frame["who"])  # the premise
    assert ledger.frame(frame, "tailed_pandas") == "FZ545"


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["pyarrow", "duckdb", "cp1252 file"])
def test_a_closed_quote_followed_by_text_in_other_readers(ledger: Ledger, capsys: pytest.CaptureFixture[str],
                                                          reader: str) -> None:
    import pyarrow.csv as pcsv

    if reader == "cp1252 file":  # not UTF-8: keyed from the loader's own records, not streamed by DuckDB
        csv = ledger.file("tailed.csv", (TAILED + "5,Zoë\n").encode("cp1252"))
        first_charged(ledger, capsys, csv)
        assert ledger.frame(pd.read_csv(csv, encoding="cp1252"), "tailed_cp1252") == "FZ545"
        return
    csv = ledger.file("tailed.csv", TAILED)
    first_charged(ledger, capsys, csv)
    other = pcsv.read_csv(csv) if reader == "pyarrow" else duckdb.connect().sql(f"SELECT * FROM read_csv('{csv}')")
    assert ledger.frame(other, f"tailed_{reader}") == "FZ545"


# ---------------------------------------------------------------- long lines


def test_a_line_longer_than_a_mebibyte_is_read(tmp_path: Path) -> None:
    """pyarrow skipped a record longer than its 1 MiB block as an invalid
    row: the loader's rows lost it without a word."""
    from fuzzpy.data.loader import load_bag
    from fuzzpy.language.types import TBag, TNum, TRecord, TString

    path = tmp_path / "long.csv"
    path.write_text("v,note\n1,short\n2," + "x" * (3 << 20) + "\n3,short\n")
    rows = load_bag(str(path), TBag(TRecord((("v", TNum()), ("note", TString())))))
    assert len(rows) == 3


@pytest.mark.slow
def test_a_long_line_csv_and_its_frame_are_one_dataset(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    csv = ledger.file("long.csv", "v,note\n1,short\n2," + "y" * (5 << 19) + "\n")
    first_charged(ledger, capsys, csv)
    assert ledger.frame(pd.read_csv(csv), "long_frame") == "FZ545"


# ---------------------------------------------------------------- keys, quickly


def test_infinite_zoned_quoted_and_tailed_forms_key_as_the_csv(tmp_path: Path) -> None:
    """G2, G3, G5 and G6 at the level of the key (the runs are in the slow job)."""
    infinite = tmp_path / "infinite.csv"
    infinite.write_text(INFINITE)
    typed = duckdb.connect().sql(f"SELECT v, CAST(start AS DATE) AS start, CAST(until AS TIMESTAMP) AS until "
                                 f"FROM read_csv('{infinite}', all_varchar = true)").to_arrow_table()
    assert _read_file_content(str(infinite), "csv") == table_content(typed)
    tailed = tmp_path / "tailed.csv"
    tailed.write_text(TAILED)
    assert _read_file_content(str(tailed), "csv") == table_content(pa.Table.from_pandas(pd.read_csv(tailed)))
    zoned = tmp_path / "zoned.csv"
    zoned.write_text(ZONED)
    sniffed = duckdb.connect().sql(f"SELECT * FROM read_csv('{zoned}')").to_arrow_table()
    assert _read_file_content(str(zoned), "csv") == table_content(sniffed)
    quoted = tmp_path / "quoted.csv"
    quoted.write_text(QUOTED)
    sniffed = duckdb.connect().sql(f"SELECT * FROM read_csv('{quoted}')").to_arrow_table()
    assert _read_file_content(str(quoted), "csv") == table_content(sniffed)
    # not blind: another minute, another name
    moved = pa.table({"v": [1, 2, 3], "at": pa.array([dt.datetime(2020, 1, 5, 15, 1), dt.datetime(2020, 7, 5, 15, 15, 30),
                                                      dt.datetime(2021, 2, 3, 22, 45)], pa.timestamp("us", tz="UTC"))})
    assert _read_file_content(str(zoned), "csv") != table_content(moved)
    assert _read_file_content(str(quoted), "csv") != table_content(pa.table({"v": [1, 2, 3], "who": ["Ann", "Lee, Jo", "Kym"]}))
