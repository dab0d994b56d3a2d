"""The engines' scans apply the loader's row rules, cell by cell; their
subsample is the documented keyed hash; what they cannot run falls back to
memory with a warning; progress is quiet when nobody watches."""

from __future__ import annotations

import os
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzpy.data.loader import load, plan, read_data_file, read_header
from fuzzpy.engines.engine import QueryEngine, streamed_data_file
from fuzzpy.engines.execute import Executor
from fuzzpy.engines.plan import Relation
from fuzzpy.engines.scan import TRIMMED, scan_row
from fuzzpy.engines.subsample import keep_threshold, keeps
from fuzzpy.language.types import TBag, TBool, TInt, TNum, TRecord, TString
from fuzzpy.ledger.datasets import Column, Policy, Registration

from .conftest import release

ROOT = Path(__file__).resolve().parents[2]

CELLS = ["1", " 2 ", "+3", "-4", "1.5", ".5", "5.", "1e3", "1e400", "-1e400", "nan", "inf", "-Infinity", "0x10",
         "forty", "", "   ", "\u00a0 7\u3000", "\t8\n", "true", "FALSE", "1", "0", "TrUe", "yes",
         "9223372036854775807", "9223372036854775808", "-9223372036854775807", "-9223372036854775808",
         "0000000000000000000000000000000000000000001", "héllo wörld", "日本語", "a b", "+", "-", "1e", "--1",
         "2.2250738585072011e-308", "4.9406564584124654e-324", "123456789012345678901234567890"]


def test_trimmed_whitespace_is_arrows() -> None:
    points = [c for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    trimmed = pc.utf8_trim_whitespace(pa.array(["a" + chr(c) for c in points])).to_pylist()
    assert {chr(c) for c, t in zip(points, trimmed, strict=True) if t == "a"} == set(TRIMMED)


# `f`, an int64 column, is read as an int: a stored number is never read as a bool (issue 31, F8)
ROW = TRecord((("n", TNum()), ("i", TInt()), ("b", TBool()), ("s", TString()), ("x", TNum()), ("k", TInt()),
               ("f", TInt()), ("t", TString())))


def _registration(path: Path, policies: dict[str, str]) -> Registration:
    file = read_data_file(path)
    columns = tuple(Column(name, None, Policy.parse(policies.get(name, "drop"))) for name, _ in ROW.fields)
    return Registration("d", file.absolute, file.format, file.sha256, len(file.data), columns, explicit=True,
                        registered="", validated="")


def _compare(path: Path, policies: dict[str, str], engine_name: str = "duckdb") -> None:
    registration = _registration(path, policies)
    memory_header = read_header(read_data_file(path))
    memory_plan = plan(memory_header, TBag(ROW), str(path), registration)
    expected, expected_report = load(memory_header, memory_plan)
    engine = QueryEngine(engine_name, lambda m: None)
    try:
        file = streamed_data_file(path)
        header = engine._header(file)
        scan_bag, report = engine._parquet(file, header, plan(header, TBag(ROW), str(path), registration),
                                           os.path.realpath(path))
        executor = Executor(engine.backend)
        got = executor.materialise(Relation(scan_bag.scan, (), scan_row(scan_bag.scan, executor.nodes)))
    finally:
        engine.close()
    assert report == expected_report
    assert len(got) == len(expected)
    order = np.argsort(got.view().get("k"), kind="stable")  # the engine's order is not the file's
    reference = np.argsort(expected.view().get("k"), kind="stable")
    for name, _ in ROW.fields:
        a, b = got.view().get(name)[order], expected.view().get(name)[reference]
        assert a.dtype == b.dtype, name
        assert a.tolist() == b.tolist(), name


def _table(texts: list[str], numbers: list[float], ints: list[int | None]) -> pa.Table:
    n = len(texts)
    return pa.table({
        "n": pa.array(texts, pa.string()), "i": pa.array(texts[::-1], pa.string()),
        "b": pa.array(texts[n // 2:] + texts[: n // 2], pa.string()), "s": pa.array(texts, pa.string()),
        "x": pa.array(numbers, pa.float64()), "k": pa.array(list(range(n)), pa.int64()),
        "f": pa.array(ints, pa.int64()), "t": pa.array([None if v is None else v % 2 == 0 for v in ints], pa.bool_()),
    })


@settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(CELLS), st.sampled_from([0.0, -0.0, 1.5, 3.0, float("nan"), float("inf"),
                                                                  -1e308, 2.0**63, -(2.0**62), None]),
                          st.sampled_from([0, 1, 2, -1, None])), min_size=1, max_size=40),
       st.sampled_from([{}, {"n": "value:7.5", "i": "value:-3", "b": "value:true", "s": "value:none",
                            "x": "value:0", "f": "value:0", "t": "value:empty"}]))
def test_parquet_scan_applies_the_loaders_rules(tmp_path_factory, cells, policies) -> None:  # type: ignore[no-untyped-def]
    texts, numbers, ints = (list(c) for c in zip(*cells, strict=True))
    path = tmp_path_factory.mktemp("scan") / "cells.parquet"
    pq.write_table(_table(texts, numbers, ints), path)
    _compare(path, policies)


@pytest.mark.spark
def test_spark_scan_applies_the_loaders_rules(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    numbers = [0.0, -0.0, 1.5, float("nan"), float("inf"), 2.0**63, 3.0] * 6
    ints = [0, 1, 2, None, -1, 1, 0] * 6
    texts = (CELLS * 2)[: len(numbers)]
    path = tmp_path / "cells.parquet"
    pq.write_table(_table(texts, numbers, ints), path)
    _compare(path, {}, "spark")
    _compare(path, {"n": "value:7.5", "x": "value:0", "f": "value:0"}, "spark")


# ---------------------------------------------------------------- subsample


def test_the_engines_subsample_is_the_documented_hash() -> None:
    from fuzzpy.engines.duck import DuckDBBackend

    secret, q = "ab" * 32, Fraction(3, 10)
    backend = DuckDBBackend()
    sql = backend.dialect.keep("i", secret, keep_threshold(q))
    kept = {i for (i,) in backend.rows(f"SELECT i FROM range(2000) t(i) WHERE {sql}")}
    backend.close()
    assert kept == {i for i in range(2000) if keeps(secret, i, q)}
    assert keep_threshold(Fraction(1)) == 2**60 and keep_threshold(Fraction(0)) == 0


def test_identical_rows_are_kept_independently(tmp_path: Path) -> None:
    """Two people with the same values are two rows: a subsample of 400
    identical rows at rate 1/2 keeps about half of them, never all or none
    (as hashing row contents would)."""
    path = tmp_path / "same.csv"
    path.write_text("v\n" + "5\n" * 400)
    program = tmp_path / "p.fz"
    program.write_text("def m (db : bag num) : fuzzy num = subsample[0.5] (fun b -> laplace[1000000] (size b)) db;\n")
    for seed in range(3):
        ending = release(program, "m", path, "duckdb", seed=seed)
        assert ending.kind == "released"
        kept = float(eval(ending.detail, {"Fraction": Fraction}))  # noqa: S307 -- a Fraction's repr
        assert 120 < kept < 280, kept  # Binomial(400, 1/2) lies outside with probability < 1e-15


# ---------------------------------------------------------------- fallback, batching, progress


def test_a_function_the_engine_cannot_run_falls_back_with_a_warning(tmp_path: Path) -> None:
    program = tmp_path / "p.fz"
    program.write_text(
        "type P = { age : num, income : num, hours : num, zip : int, married : bool };\n"
        "def m (db : bag P) : fuzzy num = laplace[0.5] (sum[0, 10] (map (fun p -> log (p.hours + 1)) "
        "(filter (fun p -> p.age > 30) db)));\n")
    data = ROOT / "examples" / "data" / "people.csv"
    duck, memory = release(program, "m", data, "duckdb"), release(program, "m", data, "memory")
    assert (duck.kind, duck.detail) == (memory.kind, memory.detail) and duck.kind == "released"
    assert any("`map`" in w and "log" in w for w in duck.warnings)
    assert not memory.warnings


def test_independent_releases_share_one_query(monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzzpy.engines.duck import DuckDBBackend

    queries: list[str] = []
    rows = DuckDBBackend.rows
    def counted(self, sql, meanwhile=None):  # type: ignore[no-untyped-def]
        if "read_csv(" not in sql:  # the streamed CSV's audit runs when the file is loaded
            queries.append(sql)
        return rows(self, sql, meanwhile)

    monkeypatch.setattr(DuckDBBackend, "rows", counted)
    data = ROOT / "examples" / "data" / "people.csv"
    assert release(ROOT / "examples" / "census_report.fz", "report", data, "duckdb").kind == "released"
    assert len(queries) == 1  # three aggregates, one scan
    queries.clear()
    release(ROOT / "examples" / "age_brackets_svt.fz", "first_large_bracket", data, "duckdb")
    assert len(queries) == 1  # `tabulate` of seven counts
    queries.clear()
    release(ROOT / "examples" / "private_median.fz", "median_income", data, "duckdb")
    assert len(queries) == 1  # expmech: 18 sizes


def _cli(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tty: bool) -> str:
    from fuzzpy.cli import main

    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty, raising=False)
    code = main(args)
    assert code == 0
    from tests.notes import without_registration

    return without_registration(capsys.readouterr().err)


def test_progress_only_for_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", str(ROOT / "examples" / "threshold_search.fz"), "search", "--data",
            f"db={ROOT / 'examples' / 'data' / 'visits.csv'}", "--budget", "10", "--ledger", str(tmp_path / "l.sqlite")]
    assert _cli(args, monkeypatch, capsys, tty=False) == ""
    assert _cli([*args, "--json"], monkeypatch, capsys, tty=True) == ""
    watched = _cli(args, monkeypatch, capsys, tty=True)
    assert "loop: round 5 of 5" in watched and "duckdb:" in watched


def test_a_parquet_file_changed_during_the_run_is_not_released(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fuzzpy.engines.engine as engine

    path = tmp_path / "people.parquet"
    pq.write_table(pacsv.read_csv(ROOT / "examples" / "data" / "people.csv"), path)
    seen = iter(range(100))
    monkeypatch.setattr(engine, "_stat", lambda p: next(seen))
    ending = release(ROOT / "examples" / "noisy_count.fz", "noisy_count", path, "duckdb")
    assert (ending.kind, ending.detail) == ("failed", "FZ541")


def _not_utf8_parquet(tmp_path: Path) -> tuple[Path, Path]:
    strings = pa.array([b"a", b"b", b"\xff\xfe", b"c"], pa.binary()).view(pa.string())
    data = tmp_path / "not_utf8.parquet"
    pq.write_table(pa.table({"n": [1.0, 2.0, 3.0, 4.0], "s": strings}), data)
    program = tmp_path / "p.fz"
    program.write_text('type R = { n : num, s : string };\n'
                       'def c (db : bag R) : fuzzy num =\n'
                       '  laplace[1] (sum[0, 10] (map (fun r -> r.n) (filter (fun r -> r.s != "z") db)));\n')
    # the definition reads `s`: a row whose `s` is not UTF-8 is dropped (an unread column drops no row, issue 31)
    return program, data


def test_text_that_is_not_utf8_drops_its_row_on_duckdb(tmp_path: Path) -> None:
    program, data = _not_utf8_parquet(tmp_path)
    memory, duck = release(program, "c", data, "memory"), release(program, "c", data, "duckdb")
    assert memory.kind == "released" and (duck.kind, duck.detail) == (memory.kind, memory.detail)
    assert duck.warnings == memory.warnings  # a fact about the data: kept for the owner, not told the analyst
    without = tmp_path / "without.parquet"
    pq.write_table(pa.table({"n": [1.0, 2.0, 4.0], "s": ["a", "b", "c"]}), without)
    assert release(program, "c", without, "memory").detail == memory.detail  # the row is dropped


@pytest.mark.spark
def test_text_that_is_not_utf8_drops_its_row_on_spark(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    program, data = _not_utf8_parquet(tmp_path)
    memory, on_spark = release(program, "c", data, "memory"), release(program, "c", data, "spark")
    assert (on_spark.kind, on_spark.detail) == (memory.kind, memory.detail)


@pytest.mark.slow  # tens of seconds (the default suite's budget)
def test_a_fallback_keeps_nothing_a_row_computed(tmp_path: Path) -> None:
    """A binding a row forces is not kept for other rows (`Transient`,
    docs/semantics.md), in the fallback as in memory: the engine's guarded
    thunks once cached it, and a 42 row made every other row contribute."""
    import test_not_evaluated_positions as positions

    program = tmp_path / "p.fz"
    program.write_text(positions.PRELUDE + positions.ROW_REACHED["value kept for later rows"] + "\n")
    for rows in (list(range(1, 21)), [42, *range(1, 21)]):
        data = tmp_path / f"d{len(rows)}.csv"
        data.write_text("x\n" + "".join(f"{r}\n" for r in rows))
        memory, duck = release(program, "p", data, "memory"), release(program, "p", data, "duckdb")
        assert memory.kind == "released" and (duck.kind, duck.detail) == (memory.kind, memory.detail)


def test_the_lowest_int64_is_out_of_range_in_parquet_as_in_csv(tmp_path: Path) -> None:
    """|n| > 2^63 - 1 lies beyond the runtime's `int` (docs/semantics.md): a
    Parquet int64 cell of -2^63 drops its row as the same CSV cell does, in
    memory and in DuckDB (a11 F2: the Parquet path kept it)."""
    program = tmp_path / "p.fz"
    program.write_text("type R = { k : int };\n"
                       "def c (db : bag R) : fuzzy num = laplace[1] (size (filter (fun r -> r.k < 0) db));\n")
    values = [-(2**63), -5, 3]
    parquet, csv, without = tmp_path / "d.parquet", tmp_path / "d.csv", tmp_path / "w.parquet"
    pq.write_table(pa.table({"k": pa.array(values, pa.int64())}), parquet)
    csv.write_text("k\n" + "".join(f"{v}\n" for v in values))
    pq.write_table(pa.table({"k": pa.array(values[1:], pa.int64())}), without)
    expected = release(program, "c", without, "memory").detail
    for data in (parquet, csv):
        for engine in ("memory", "duckdb"):
            assert release(program, "c", data, engine).detail == expected, (data.name, engine)
