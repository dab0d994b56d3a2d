"""A first run on DuckDB types a CSV file's columns in one DuckDB pass
(`csvscan.streamed_csv_kinds`, issue 31): the same types as the loader's
typing (`validation.first_run_kinds`) on cells of every odd spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzpy.data.loader import read_data_file, read_header
from fuzzpy.data.validation import first_run_kinds
from fuzzpy.engines.csvscan import streamed_csv_kinds
from fuzzpy.engines.engine import csv_header, streamed_data_file

CASES = {
    "missing and markers": "a,b,c,d,e\n1,2.5,true,x,\n2,NA,false,y,NA\n2.5,3,1,z,\n",
    "padding, signs, not finite": "a,b,c\n 1 ,+2,inf\n1,2.0,nan\n-,1e400,NaN\n99999999999999999999,.5,-inf\n",
    "ties and bools": "a,b\n1,0\n2.5,1\n2.5,true\n,\n",
    "a duplicated name": "a,b,a\n1,x,2\n",
    "quoted fields": 'a,b\n"1",TRUE\n"2, 3",False\n',
    "only markers": "a,b\nnull,?\nN/A,.\n",
    "words outvote numbers": "a\nx\ny\n3\n",
    "crlf lines": "a,b\r\n1,t\r\n2,f\r\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_duckdb_types_a_csv_as_the_loader_does(tmp_path: Path, text: str) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(text.encode())
    streamed = streamed_data_file(str(path))
    duck = streamed_csv_kinds(streamed, csv_header(streamed))
    loaded = read_data_file(str(path))
    assert duck is not None and duck == first_run_kinds(loaded, read_header(loaded))


def test_a_file_duckdb_cannot_split_is_left_to_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"a,b\n1,\xff\n")  # not UTF-8
    streamed = streamed_data_file(str(path))
    assert streamed_csv_kinds(streamed, csv_header(streamed)) is None
