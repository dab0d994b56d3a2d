"""What a short DuckDB run on a Parquet file imports (issue 11: the whole
run within 1.3x of hand-written SQL, where a heavy import is a large share
of a 0.3 s query): the schema comes from pyarrow's footer reader, exactly
as `pyarrow.parquet.read_schema` gives it."""

from __future__ import annotations

import datetime
import decimal
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.engines.engine import parquet_schema

TABLES = {
    "plain": pa.table({"a": [1, 2], "s": ["x", None], "b": [True, False], "f": [1.5, None]}),
    "large and dictionary": pa.table({"ls": pa.array(["a", "b"], pa.large_string()),
                                      "d": pa.array(["a", "b"]).dictionary_encode()}),
    "times and decimals": pa.table({"t": pa.array([datetime.datetime(2020, 1, 1)] * 2, pa.timestamp("ns")),
                                    "dt": pa.array([datetime.date(2020, 1, 1)] * 2),
                                    "dec": pa.array([decimal.Decimal("1.23")] * 2)}),
    "nested": pa.table({"l": [[1, 2], [3]], "st": [{"x": 1}, {"x": 2}]}),
    "narrow ints": pa.table({"i8": pa.array([1, 2], pa.int8()), "u64": pa.array([1, 2], pa.uint64()),
                             "f32": pa.array([1.0, 2.0], pa.float32()), "bin": pa.array([b"x", b"y"])}),
    "with metadata": pa.table({"age": [1, 2]}).replace_schema_metadata({"pandas": "{}", "k": "v"}),
}


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("options", [{}, {"version": "1.0"}, {"use_dictionary": False}])
def test_the_schema_is_read_schemas(tmp_path: Path, name: str, options: dict[str, object]) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(TABLES[name], path, **options)
    assert parquet_schema(str(path)).equals(pq.read_schema(path), check_metadata=True)


CHILD = """
import json, sys
from fuzzpy.release.run import RunRequest, execute
request = RunRequest(sys.argv[1], "count_older", data={"db": sys.argv[2]}, budget="1", ledger=sys.argv[3],
                     seed=1, engine="duckdb")
value = execute(request).value
print(json.dumps({"value": str(value), "modules": sorted(m for m in sys.modules if m.startswith("pyarrow."))}))
"""


def test_a_parquet_run_on_duckdb_does_not_import_pyarrow_parquet(tmp_path: Path) -> None:
    data = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"age": [float(a) for a in range(20, 80)]}), data)
    program = tmp_path / "p.fz"
    program.write_text("type Row = { age : num };\n"
                       "def count_older (db : bag Row) : fuzzy num = laplace[1] (size (filter (fun r -> r.age > 40) db));\n")
    done = subprocess.run([sys.executable, "-c", CHILD, str(program), str(data), str(tmp_path / "l.sqlite")],
                          capture_output=True, text=True, timeout=300, check=True)
    modules = json.loads(done.stdout.splitlines()[-1])["modules"]
    assert "pyarrow.parquet" not in modules and "pyarrow.csv" not in modules


def test_a_damaged_parquet_page_is_refused_as_data_not_as_a_bug(tmp_path: Path) -> None:
    """a20 F2: DuckDB's decompression failure was FZ799 "internal error";
    it is the loader's FZ505, without DuckDB's text, and nothing is charged."""
    from fuzzpy.ledger.book import Ledger
    from fuzzpy.release.run import RunRequest, execute

    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"x": list(range(2000)), "age": [i % 100 for i in range(2000)]}), path,
                   compression="snappy", use_dictionary=False)
    column = pq.ParquetFile(path).metadata.row_group(0).column(1)
    damaged = bytearray(path.read_bytes())
    middle = column.data_page_offset + column.total_compressed_size // 2
    for i in range(middle, middle + 8):
        damaged[i] ^= 0x5A
    path.write_bytes(bytes(damaged))
    program = tmp_path / "p.fz"
    program.write_text("type R = { x : int, age : int };\n"
                       "def ages (db : bag R) : fuzzy num = laplace[1.0] (sum[0,100] (map (fun r -> r.age) db));\n")
    ledger = tmp_path / "l.sqlite"
    request = RunRequest(str(program), "ages", data={"db": str(path)}, budget="1000", ledger=str(ledger),
                         seed=1, engine="duckdb")
    from fuzzpy.language.diagnostics import FuzzError

    with pytest.raises(FuzzError) as refused:
        execute(request, warn=lambda message: None)
    assert [d.code for d in refused.value.diagnostics] == ["FZ505"]
    assert "Snappy" not in str(refused.value)
    if ledger.exists():
        with Ledger(ledger) as book:
            assert book.history() == []
