"""Every engine releases what the in-memory interpreter releases, bit for bit.

The same seeded `fuzzpy run` (docs/engines.md) on the in-memory interpreter,
DuckDB and Spark must end the same way: the same exact released value, or
the same failure. Programs: every shipped example (examples/*.fz on
examples/data, as CSV and as Parquet) and programs drawn by the neighbour
harness's generator (tests/neighbour/programs.py) on rows drawn from its
adversarial values, and its hand-written adversarial programs
(tests/neighbour/adversarial) on its edge rows. A program with `subsample` is compared with the
in-memory interpreter using the engines' keyed-hash rule (its own exact
Bernoulli draws are another, equally private, sample).

Spark starts once per session (it takes seconds per query): it runs every
example (with its loops cut to 2 rounds) and every generated program; the
adversarial corpus and the examples' Parquet copies run on DuckDB only.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neighbour.datasets import rows, write_csv
from neighbour.programs import SCHEMA, programs

from fuzzpy.language.types import TBag, TFuzzy
from fuzzpy.release.pipeline import load_source
from fuzzpy.release.run import check

from .conftest import release

ROOT = Path(__file__).resolve().parents[2]
DATA = {"Person": "people.csv", "Visit": "visits.csv", "Example": "logistic.csv", "Point": "points.csv", "Resident": "residents.csv"}
GENERATED = int(os.environ.get("ENGINE_PROGRAMS", "60"))
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")


def example_releases() -> list[tuple[str, str, str]]:
    """(program, definition, data file) for every example release on a bag."""
    found = []
    for path in sorted((ROOT / "examples").glob("*.fz")):
        text = path.read_text()
        data = next((DATA[t] for t in DATA if f"bag {t}" in text), None)
        if data is None:
            continue
        checked = check(load_source(path))
        for name, d in checked.definitions.items():
            bags = [p for p in d.params if isinstance(p.type, TBag)]
            if isinstance(d.result, TFuzzy) and len(bags) == 1 and len(d.params) == 1:
                found.append((str(path), name, str(ROOT / "examples" / "data" / data)))
    return found


EXAMPLES = example_releases()


def _parquet_copy(csv: str, folder: Path) -> Path:
    target = folder / (Path(csv).stem + ".parquet")
    if not target.exists():
        pq.write_table(pacsv.read_csv(csv), target)
    return target


@pytest.fixture(scope="module")
def parquet_folder():
    with tempfile.TemporaryDirectory(prefix="engines-") as tmp:
        yield Path(tmp)


def test_the_examples_are_all_here() -> None:
    assert len(EXAMPLES) >= 15
    assert {Path(p).name for p, _, _ in EXAMPLES} >= {"dpsgd.fz", "ward_histogram.fz", "subsampled_count.fz"}


#: Examples whose releases add nothing engine-specific to the others (a
#: declared sensitivity or measure changes the charge, not the query): the
#: slow job runs them, keeping the default suite inside its 10 minutes.
SLOW_EXAMPLES = {"trusted_primitives", "zcdp_measure"}


def _example_params() -> list[object]:
    return [pytest.param(p, d, data, id=f"{Path(p).stem}:{d}",
                         marks=[pytest.mark.slow] if Path(p).stem in SLOW_EXAMPLES else [])
            for p, d, data in EXAMPLES]


@pytest.mark.parametrize(("program", "definition", "data"), _example_params())
def test_examples_release_the_same_on_duckdb(program: str, definition: str, data: str, parquet_folder: Path) -> None:
    hashed = "subsample" in Path(program).read_text()
    memory = release(program, definition, data, "memory", hashed_memory=hashed)
    assert memory.kind == "released", memory
    assert _same(release(program, definition, data, "duckdb"), memory)
    parquet = _parquet_copy(data, parquet_folder)
    on_parquet = release(program, definition, parquet, "memory", hashed_memory=hashed)
    assert on_parquet.kind == "released", on_parquet
    assert _same(release(program, definition, parquet, "duckdb"), on_parquet)


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    """Endings compare by kind and value (or codes); warnings (an engine's
    fallback notice) are not part of the release."""
    return (a.kind, a.detail) == (b.kind, b.detail)


def _typed_parquet(table_rows: list[tuple], folder: Path, name: str) -> Path:
    columns = list(zip(*table_rows, strict=True)) if table_rows else [[] for _ in SCHEMA.columns]
    types = {"num": pa.float64(), "int": pa.int64(), "bool": pa.bool_(), "string": pa.string()}
    table = pa.table({col: pa.array(list(values), types[kind])
                      for (col, kind), values in zip(SCHEMA.columns, columns, strict=True)})
    path = folder / f"{name}.parquet"
    pq.write_table(table, path)
    return path


def generated_cases(count: int) -> list[tuple[str, list[tuple]]]:
    cases: list[tuple[str, list[tuple]]] = []

    @settings(max_examples=count, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(), st.lists(rows(SCHEMA), min_size=0, max_size=12))
    def collect(program, data):  # type: ignore[no-untyped-def]
        cases.append((program.source, data + SCHEMA.edge_rows()))

    collect()
    return cases


def _generated_differences(engine: str, parquet_every: int) -> None:
    """Each generated program on its CSV file (and, every `parquet_every`-th,
    its typed Parquet copy) releases in `engine` what memory releases with
    the engines' subsample rule; most programs release something."""
    differences, released = [], 0
    with tempfile.TemporaryDirectory(prefix="engines-") as tmp:
        folder = Path(tmp)
        for index, (source, data) in enumerate(generated_cases(GENERATED)):
            program = folder / f"p{index}.fz"
            program.write_text(source)
            files = [write_csv(SCHEMA, data, folder)]
            if index % parquet_every == 0:
                files.append(_typed_parquet(data, folder, f"d{index}"))
            for path in files:
                memory = release(program, "m", path, "memory", hashed_memory=True)
                other = release(program, "m", path, engine)
                released += memory.kind == "released"
                if not _same(memory, other):
                    differences.append(f"{path.suffix}: memory {memory} {engine} {other}\n{source}")
    assert not differences, f"{len(differences)} differ; the first:\n" + differences[0]
    assert released >= GENERATED // 2  # most programs release something


@pytest.mark.slow  # 10-30 s: the slow job runs it (the default suite keeps its 10 minutes)
def test_generated_programs_release_the_same_on_duckdb() -> None:
    _generated_differences("duckdb", parquet_every=1)


def adversarial_releases(folder: Path) -> list[tuple[Path, str, list[Path]]]:
    """(program, definition, data files) for the neighbour harness's
    hand-written adversarial programs (tests/neighbour/adversarial): each
    fuzzy one-bag definition on the harness's edge rows, its typical rows
    and its typical rows plus the added one."""
    from neighbour.adversarial import all_cases
    from neighbour.datasets import Schema, sized

    found = []
    for case in all_cases():
        program = folder / f"{case.name}.fz"
        program.write_text(case.source, encoding="utf-8")
        try:
            checked = check(load_source(program))
        except Exception:  # noqa: BLE001 -- a program the checker refuses: nothing to release
            continue
        for name, d in checked.definitions.items():
            if not (isinstance(d.result, TFuzzy) and len(d.params) == 1 and isinstance(d.params[0].type, TBag)):
                continue
            schema = Schema.of(d.params[0].type, case.vector_length)
            tables = [schema.edge_rows()] + [list(p.larger) for p in sized(schema, case.sizes[:2], case.fill, case.extra)]
            found.append((program, name, [write_csv(schema, rows_, folder) for rows_ in tables]))
    return found


@pytest.mark.slow  # 10-30 s: the slow job runs it (the default suite keeps its 10 minutes)
def test_adversarial_programs_release_the_same_on_duckdb() -> None:
    differences, released = [], 0
    with tempfile.TemporaryDirectory(prefix="engines-") as tmp:
        cases = adversarial_releases(Path(tmp))
        for program, definition, files in cases:
            for data in files:
                memory = release(program, definition, data, "memory", hashed_memory=True)
                released += memory.kind == "released"
                duck = release(program, definition, data, "duckdb")
                if not _same(memory, duck):
                    differences.append(f"{program.name}:{definition} on {data.name}: memory {memory} duckdb {duck}")
    assert not differences, f"{len(differences)} differ; the first:\n" + differences[0]
    assert len(cases) >= 20 and released >= 20


def _fewer_rounds(program: str, folder: Path) -> Path:
    """The example with its loops cut to 2 rounds (`let steps`/`let rounds`):
    on Spark each round is a query of a second or more."""
    text = re.sub(r"^let (steps|rounds) = \d+;", r"let \1 = 2;", Path(program).read_text(), flags=re.M)
    copy = folder / Path(program).name
    copy.write_text(text)
    return copy


@pytest.mark.slow  # tens of seconds (the default suite's budget)
@pytest.mark.spark
def test_examples_release_the_same_on_spark(spark, parquet_folder: Path) -> None:  # type: ignore[no-untyped-def]
    differences = []
    with tempfile.TemporaryDirectory(prefix="engines-") as tmp:
        for program, definition, data in EXAMPLES:
            hashed = "subsample" in Path(program).read_text()
            short = _fewer_rounds(program, Path(tmp))
            memory = release(short, definition, data, "memory", hashed_memory=hashed)
            on_spark = release(short, definition, data, "spark")
            if memory.kind != "released" or not _same(on_spark, memory):
                differences.append(f"{Path(program).stem}:{definition}: memory {memory} spark {on_spark}")
    program, definition, data = next(e for e in EXAMPLES if e[1] == "noisy_count")
    parquet = _parquet_copy(data, parquet_folder)
    assert _same(release(program, definition, parquet, "spark"), release(program, definition, parquet, "memory"))
    assert not differences, differences


@pytest.mark.slow  # ~15 s; the Spark examples stay in the default suite
@pytest.mark.spark
def test_generated_programs_release_the_same_on_spark(spark) -> None:  # type: ignore[no-untyped-def]
    _generated_differences("spark", parquet_every=4)  # Spark's own Parquet scan, on a quarter of them
