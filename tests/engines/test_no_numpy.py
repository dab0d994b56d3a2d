"""A scalar release on DuckDB does not import numpy (issue 11: its import is
~30 ms of a run's fixed cost). The run happens in a fresh process, which
records every import of numpy and who asked for it. pyarrow (the Parquet
schema, helper B's branch takes it off this path) imports numpy when it is
installed and works without it: there, numpy is hidden from it (numpy is
optional to pyarrow), so that an import by fuzzpy is still seen."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

PROGRAM = """\
type Row = { age : num, income : num, ward : int };

def count_older (db : bag Row) : fuzzy num = laplace[1] (size (filter (fun r -> r.age > 40) db));

def clamped_mean (db : bag Row) : fuzzy num = {
  sample total = laplace[0.1 / 200000] (sum[0, 200000] (map (fun r -> r.income) db));
  sample n = laplace[0.1] (size db);
  return (if n > 1 then total / n else 0)
};

def histogram (db : bag Row) : fuzzy (vec[1] num) = laplace[0.5] (counts (group[10] (fun r -> r.ward) db));
"""

CHILD = """
import importlib.abc, json, sys, traceback
from pathlib import Path

importers = []


class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "numpy":
            return None
        frames = [f for f in traceback.extract_stack()[:-1]
                  if not f.filename.startswith("<frozen") and "importlib" not in Path(f.filename).parts]
        if "pyarrow" in Path(frames[-1].filename).parts:
            raise ModuleNotFoundError("numpy hidden from pyarrow")
        importers.append(" <- ".join(f"{f.filename}:{f.lineno}" for f in frames[:-5:-1]))
        return None


sys.meta_path.insert(0, Watch())
from fuzzpy.release.run import RunRequest, execute
request = RunRequest(sys.argv[1], sys.argv[2], data={"db": sys.argv[3]}, budget="1000", ledger=sys.argv[4],
                     engine="duckdb")
value = execute(request).value
print(json.dumps({"value": str(value), "numpy": "numpy" in sys.modules, "importers": importers}))
"""


def _run(tmp_path: Path, release: str, data: Path) -> dict[str, object]:
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM)
    done = subprocess.run([sys.executable, "-c", CHILD, str(program), release, str(data), str(tmp_path / "l.sqlite")],
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("rows")
    table = pa.table({"age": [float(a) for a in range(20, 80)], "income": [1000.0 * a for a in range(60)],
                      "ward": list(range(60))})
    pq.write_table(table, folder / "rows.parquet")
    return {"parquet": folder / "rows.parquet"}


@pytest.mark.parametrize("release", ["count_older", "clamped_mean"])
def test_a_scalar_release_on_duckdb_does_not_import_numpy(tmp_path: Path, files: dict[str, Path], release: str) -> None:
    result = _run(tmp_path, release, files["parquet"])
    assert result["importers"] == [] and result["numpy"] is False
    float(str(result["value"]).split("/")[0])  # a number was released


def test_a_vector_release_imports_numpy_and_the_watch_sees_it(tmp_path: Path, files: dict[str, Path]) -> None:
    """The histogram is a `Vector` (a numpy array): numpy is needed, and the
    watch above reports it (it can fail)."""
    result = _run(tmp_path, "histogram", files["parquet"])
    assert result["numpy"] is True and result["importers"]


def test_a_histogram_imports_numpy_while_duckdb_counts(tmp_path: Path, files: dict[str, Path]) -> None:
    """The counts come back as an array: numpy is imported by the waiting
    thread while the query runs (`Executor._import_numpy`), not after it."""
    result = _run(tmp_path, "histogram", files["parquet"])
    first = str(result["importers"][0])  # the innermost frames first: lazy <- execute <- duck's waiting thread
    assert "fuzzpy/engines/duck.py" in first, first


def test_the_waiting_thread_works_meanwhile_and_its_failure_changes_nothing() -> None:
    import threading

    import duckdb

    from fuzzpy.engines.duck import interruptible

    con = duckdb.connect()
    started = threading.Event()

    def work() -> object:
        assert started.wait(10), "the query's thread waited for `meanwhile`, which never ran alongside it"
        return con.execute("SELECT 42").fetchall()

    assert interruptible(con, work, meanwhile=started.set) == [(42,)]  # `work` needs `meanwhile` to run first

    def broken() -> None:
        raise ValueError("preparation failed")

    assert interruptible(con, lambda: con.execute("SELECT 7").fetchall(), meanwhile=broken) == [(7,)]
    con.close()
