"""A Parquet file replaced or deleted while a run reads it, on Spark (and
the audit's remembered counts on both engines): the run ends with FZ541
("changed while the run read it"), never an engine's error, and nothing
computed from other bytes than the hashed ones is released or remembered
(issue 11, a22 F2). DuckDB's own case: test_group_counts.py. And the file
an engine opens is the one named and hashed, whatever its name holds."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.engines.engine import QueryEngine
from fuzzpy.engines.execute import Executor
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.book import Ledger
from fuzzpy.release.run import Refusal, RunRequest, execute

PROGRAM = ("type Row = { w : int };\n"
           "def c (db : bag Row) : fuzzy num = laplace[1] (size (filter (fun r -> r.w > 1) db));\n"
           "def n (db : bag Row) : fuzzy num = laplace[1] (size db);\n")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache of its own for each test: the files' bytes repeat from test
    to test, and an audit's counts remembered by another would skip the audit."""
    monkeypatch.setenv("FUZZPY_CACHE", str(tmp_path / "cache"))


def _run(tmp_path: Path, data: Path, engine: str, ledger: str = "l.sqlite", definition: str = "c") -> str:
    """The run's released value, or the codes it failed with."""
    program = tmp_path / "p.fz"
    program.write_text(PROGRAM)
    request = RunRequest(str(program), definition, data={"db": str(data)}, budget="10",
                         ledger=str(tmp_path / ledger), seed=1, engine=engine)
    try:
        return repr(execute(request, warn=lambda _: None).value)
    except (FuzzError, Refusal) as error:
        return ",".join(d.code for d in error.diagnostics)


def _before(monkeypatch: pytest.MonkeyPatch, owner: type, method: str, change: Callable[[], None]) -> None:
    """`change` the file system once, just before `owner.method` runs."""
    original = getattr(owner, method)
    done: list[bool] = []

    def changed(self, *args):  # type: ignore[no-untyped-def]
        if not done:
            done.append(True)
            change()
        return original(self, *args)

    monkeypatch.setattr(owner, method, changed)


@contextlib.contextmanager
def _logged(name: str) -> Iterator[list[logging.LogRecord]]:
    """What PySpark's logger `name` logs meanwhile (nothing before PySpark 4.0)."""
    logged: list[logging.LogRecord] = []
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:
        yield logged
        return
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    logger = PySparkLogger.getLogger(name)
    logger.addHandler(handler)
    try:
        yield logged
    finally:
        logger.removeHandler(handler)


def _files(tmp_path: Path, replacement: pa.Array | pa.Table) -> tuple[Path, Path]:
    """The run's file (a column `w` of 4 ints) and its replacement (`w` holding
    ``replacement``, or that table)."""
    path, other = tmp_path / "d.parquet", tmp_path / "other.parquet"
    pq.write_table(pa.table({"w": pa.array([1, 2, 3, 4])}), path)
    pq.write_table(replacement if isinstance(replacement, pa.Table) else pa.table({"w": replacement}), other)
    return path, other


@pytest.mark.spark
@pytest.mark.parametrize("replacement", [pa.array(["1", "2", "x"]), pa.table({"v": [1, 2]})],
                         ids=["text", "renamed"])
def test_a_file_replaced_by_another_schema_during_the_query_is_a_changed_file_on_spark(
    spark: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replacement: pa.Array | pa.Table
) -> None:
    """Spark reads the file's schema again for each query: replaced after
    its hash and audit by a file whose column has another type (a cast of a
    cell fails) or another name (the query does not resolve), the query
    fails -- FZ541, not Spark's error; PySpark's logger of a failed query's
    error (whose text quotes the cell a cast failed on) says nothing."""
    path, other = _files(tmp_path, replacement)
    _before(monkeypatch, Executor, "_query", lambda: os.replace(other, path))
    with _logged("SQLQueryContextLogger") as logged:
        assert _run(tmp_path, path, "spark") == "FZ541"
    assert logged == []


@pytest.mark.spark
def test_a_file_deleted_during_the_query_is_a_changed_file_on_spark(
    spark: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = _files(tmp_path, pa.array([1]))
    _before(monkeypatch, Executor, "_query", path.unlink)
    assert _run(tmp_path, path, "spark") == "FZ541"


@pytest.mark.spark
def test_a_file_replaced_before_the_audit_is_a_changed_file_on_spark(
    spark: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit (the row rules' counts, before the charge) is the first
    query that reads the file: it fails on the other schema -- FZ541."""
    path, other = _files(tmp_path, pa.array(["1", "2", "x"]))
    _before(monkeypatch, QueryEngine, "_audit", lambda: os.replace(other, path))
    assert _run(tmp_path, path, "spark") == "FZ541"


@pytest.mark.spark
@pytest.mark.parametrize("when", ["query", "audit"])
def test_a_file_replaced_by_the_same_schema_is_not_read_silently_on_spark(
    spark: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """Spark reads whatever the path holds when a query runs (it keeps no
    listing or footer between queries): a file of the same schema and other
    rows is counted without an error. Replaced before the query, the file
    is checked after it and the release refused (the charge stands);
    before the audit, the run is refused then, before the charge."""
    path, other = _files(tmp_path, pa.array([5, 6, 7, 8, 9, 10, 11, 12]))
    owner, method = (Executor, "_query") if when == "query" else (QueryEngine, "_audit")
    _before(monkeypatch, owner, method, lambda: os.replace(other, path))
    assert _run(tmp_path, path, "spark") == "FZ541"
    assert len(Ledger(str(tmp_path / "l.sqlite")).history()) == (1 if when == "query" else 0)


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_counts_audited_on_a_replaced_file_are_not_remembered_for_the_hashed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, engine: str
) -> None:
    """The audit's counts are remembered by the file's hash and decide
    whether the scan checks the row rules at all. Counted on a replacement
    (every row fits) and remembered under the hash of the file read before
    (one row does not: a null), they would make a later run of that file
    skip its rules and count the null row."""
    if engine == "spark":
        request.getfixturevalue("spark")
    path, replacement = tmp_path / "d.parquet", tmp_path / "fits.parquet"
    original = pa.table({"w": pa.array([1, 2, 3, None])})
    pq.write_table(original, path)
    pq.write_table(pa.table({"w": pa.array([1, 2, 3, 4])}), replacement)
    expected = _run(tmp_path, path, "memory", ledger="memory.sqlite", definition="n")
    original_audit = QueryEngine._audit

    _before(monkeypatch, QueryEngine, "_audit", lambda: os.replace(replacement, path))
    assert _run(tmp_path, path, engine, definition="n") == "FZ541"
    monkeypatch.setattr(QueryEngine, "_audit", original_audit)
    pq.write_table(original, path)  # the same bytes again: the same hash, a new version of the file
    assert _run(tmp_path, path, engine, definition="n") == expected


@pytest.mark.parametrize(("engine", "names"), [
    ("duckdb", ("d[12].parquet", "e*.parquet", "~t.parquet")),
    pytest.param("spark", ("d[12].parquet", "e*.parquet", "_u.parquet", "x:y.parquet"), marks=pytest.mark.spark),
])
def test_a_file_named_with_a_pattern_is_the_file_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, engine: str,
    names: tuple[str, ...]
) -> None:
    """The engines read `*`, `?`, `[...]` (and on Spark `{...}`) in a path as
    a pattern: given `d[12].parquet`, they read `d1.parquet`, another
    dataset, whose budget is never charged -- the stat check passes, as the
    named file did not change. Such a file is read by fuzzpy's loader (its
    name is public: the analyst is warned); a relative `~t.parquet` is not
    DuckDB's home folder, nor `x:` a URI scheme to Spark, nor a name
    starting with `_` a file Spark skips: each releases what memory does."""
    if engine == "spark":
        request.getfixturevalue("spark")
    monkeypatch.chdir(tmp_path)
    for decoy in ("d1.parquet", "e-other.parquet", "t.parquet"):
        pq.write_table(pa.table({"w": list(range(1000))}), tmp_path / decoy)
    monkeypatch.setenv("HOME", str(tmp_path))  # DuckDB's `~`: a folder holding a decoy `t.parquet`
    for name in names:
        pq.write_table(pa.table({"w": [1, 2, 3]}), tmp_path / name)
        expected = _run(tmp_path, Path(name), "memory", ledger="memory.sqlite", definition="n")
        assert _run(tmp_path, Path(name), engine, definition="n") == expected, name


def _linked_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A link to `a.parquet` (1 row over the filter), and `b.parquet` (3)."""
    a, b, link = tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "link.parquet"
    pq.write_table(pa.table({"w": pa.array([1, 5])}), a)
    pq.write_table(pa.table({"w": pa.array([5, 6, 7])}), b)
    link.symlink_to(a)
    return a, b, link


def _point(link: Path, target: Path) -> None:
    spare = link.with_suffix(".new")
    spare.symlink_to(target)
    os.replace(spare, link)


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_link_pointed_at_another_file_during_the_query_and_back_is_not_read(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """The engine is given the file's real path, resolved once: a link
    pointed at another dataset's file for the query's time, and back
    before the check after computing, does not make it read that file
    (review a25 F4: it released the other file's count, charged to the
    first)."""
    if engine == "spark":
        request.getfixturevalue("spark")
    a, b, link = _linked_files(tmp_path)
    expected = _run(tmp_path, a, "memory", "memory.sqlite")
    original = Executor._query

    def swapped(self, sql, what, meanwhile=None):  # type: ignore[no-untyped-def]
        _point(link, b)
        try:
            return original(self, sql, what, meanwhile)
        finally:
            _point(link, a)

    monkeypatch.setattr(Executor, "_query", swapped)
    assert _run(tmp_path, link, engine) == expected


def test_a_link_pointed_at_another_file_before_the_engine_reads_it_is_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, link = _linked_files(tmp_path)
    _before(monkeypatch, QueryEngine, "load", lambda: _point(link, b))  # before the path is resolved
    assert _run(tmp_path, link, "duckdb") == "FZ541"


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_path_through_a_link_and_up_reads_the_file_the_kernel_opens(
    request: pytest.FixtureRequest, tmp_path: Path, engine: str
) -> None:
    """`lnk/../x.parquet` with `lnk` a link to `s/sub` is `s/x.parquet` to
    the kernel (which fuzzpy hashed); removing `lnk/..` as text named
    `x.parquet` beside `lnk`, another dataset's file, which the engines
    read under the first one's charge (review a25 F5)."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "s" / "sub").mkdir(parents=True)
    pq.write_table(pa.table({"w": pa.array([1, 5])}), tmp_path / "s" / "x.parquet")
    pq.write_table(pa.table({"w": pa.array([5, 6, 7])}), tmp_path / "x.parquet")
    (tmp_path / "lnk").symlink_to(tmp_path / "s" / "sub")
    path = Path(f"{tmp_path}/lnk/../x.parquet")
    expected = _run(tmp_path, tmp_path / "s" / "x.parquet", "memory", "memory.sqlite")
    assert _run(tmp_path, path, "memory", "m2.sqlite") == expected
    assert _run(tmp_path, path, engine) == expected


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_folder_named_like_a_partition_gives_no_column(
    request: pytest.FixtureRequest, tmp_path: Path, engine: str
) -> None:
    """A file in a folder `w=9` is read as it is: DuckDB's hive partitioning
    replaced every `w` by 9 (review a26 F3)."""
    if engine == "spark":
        request.getfixturevalue("spark")
    folder = tmp_path / "w=9"
    folder.mkdir()
    path = folder / "d.parquet"
    pq.write_table(pa.table({"w": pa.array([1, 1, 5])}), path)
    expected = _run(tmp_path, path, "memory", "memory.sqlite")
    assert _run(tmp_path, path, engine) == expected


@pytest.mark.parametrize("name", ["d.csv.gz", "d.csv.zst"])
def test_a_csv_file_named_as_compressed_is_read_as_it_is(tmp_path: Path, name: str) -> None:
    """DuckDB chose a decompressor from the name: a plain CSV that streams
    failed (FZ505, before the charge) where one with a line that cannot
    stream went to the loader -- a free answer about the rows (review a26 F2)."""
    path = tmp_path / name
    path.write_text("w\n1\n5\n7\n")
    expected = _run(tmp_path, path, "memory", "memory.sqlite")
    assert expected not in ("FZ505", "") and _run(tmp_path, path, "duckdb") == expected
