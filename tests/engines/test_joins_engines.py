"""`join[k]` on every engine: the same seeded release, and the neighbour bound.

Two CSV files bound to two bag parameters of one `fuzzpy run`; each dataset
is charged its own cost in the ledger. The join's result is read back
exactly by a histogram of its pairs released with negligible noise
(`laplace[1e9]`, then rounded): on neighbouring files (one row added to
either side) the two histograms differ, in L1 (the symmetric difference of
the two bags of pairs), by at most the 2k the checker charges.
"""

from __future__ import annotations

import random
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.release.run import RunRequest, execute

from .conftest import HAVE_SPARK

K = 2
# keys 0..2, left values 0..2, right values 0..2: a pair (r, s) is bucket 9 key + 3 v + w
PROGRAM = f"""
type L = {{ key : int, v : int }};
type R = {{ key : int, w : int }};

def pairs (left : bag L) (right : bag R) : fuzzy (vec[1] num) =
  laplace[1000000000] (counts (group[27] (fun p -> 9 * (fst p).key + 3 * (fst p).v + (snd p).w)
    (join[{K}] (fun a -> a.key) (fun b -> b.key) left right)));

def total (left : bag L) (right : bag R) : fuzzy num =
  laplace[0.5] (size (join[{K}] (fun a -> a.key) (fun b -> b.key) left right));
"""


def _write(folder: Path, name: str, header: str, rows: list[tuple[int, int]]) -> Path:
    path = folder / f"{name}.csv"
    path.write_text(header + "\n" + "".join(f"{a},{b}\n" for a, b in rows))
    return path


def _run(folder: Path, definition: str, left: list, right: list, engine: str, tag: str):  # type: ignore[no-untyped-def]
    case = folder / tag
    case.mkdir()
    program = case / "joins.fz"
    program.write_text(PROGRAM)
    request = RunRequest(str(program), definition,
                         data={"left": str(_write(case, "left", "key,v", left)),
                               "right": str(_write(case, "right", "key,w", right))},
                         budget="1e12", ledger=str(case / "ledger.sqlite"), seed=3, engine=engine)
    return execute(request, warn=lambda _message: None)


def _histogram(result) -> list[int]:  # type: ignore[no-untyped-def]
    return [round(float(x)) for x in result.value]


def _rows(rng: random.Random, n: int) -> list[tuple[int, int]]:
    return [(rng.randint(0, 2), rng.randint(0, 2)) for _ in range(n)]


ENGINES = ["memory", "duckdb", pytest.param("spark", marks=pytest.mark.skipif(not HAVE_SPARK, reason="no pyspark"))]


@pytest.mark.slow  # ~3 s: a first run's imports and ledger
@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_each_dataset_is_charged_its_own_cost(engine: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = _run(Path(tmp), "total", [(0, 1), (0, 2), (1, 1)], [(0, 0), (1, 1), (1, 2)], engine, "a")
    assert sorted(r.dataset for r in result.receipts) == ["left", "right"]
    for receipt in result.receipts:
        assert receipt.charged_json()["epsilon"] == pytest.approx(float(Fraction(2 * K) / 2))  # laplace[0.5] x 2k


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_neighbours_move_the_pairs_by_at_most_two_k(engine: str, request: pytest.FixtureRequest) -> None:
    if engine == "spark":
        request.getfixturevalue("spark")
    rng = random.Random(4242)
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in range(4 if engine == "spark" else 12):
            left, right = _rows(rng, rng.randint(1, 7)), _rows(rng, rng.randint(1, 7))
            extra = _rows(rng, 1)
            base = _histogram(_run(folder, "pairs", left, right, engine, f"{case}a"))
            for tag, (l2, r2) in (("b", (left + extra, right)), ("c", (left, right + extra))):
                other = _histogram(_run(folder, "pairs", l2, r2, engine, f"{case}{tag}"))
                moved = sum(abs(x - y) for x, y in zip(base, other, strict=True))
                worst = max(worst, moved)
                assert moved <= 2 * K
    assert worst > 0


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.skipif(not HAVE_SPARK, reason="no pyspark"))])
def test_every_engine_releases_what_memory_releases(engine: str, request: pytest.FixtureRequest) -> None:
    if engine == "spark":
        request.getfixturevalue("spark")
    rng = random.Random(77)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in range(3):
            left, right = _rows(rng, 9), _rows(rng, 6)
            for definition in ("pairs", "total"):
                memory = _run(folder, definition, left, right, "memory", f"{case}{definition}m").value
                other = _run(folder, definition, left, right, engine, f"{case}{definition}e").value
                assert repr(other) == repr(memory)
