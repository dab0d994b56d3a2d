"""Counts of one value cut at many constants (a median's or a quantile's
candidates, a tabulated list of thresholds) come from one grouped pass on
the engines (`Executor._run_thresholds`), and equal, bit for bit, the
filtered counts they replace and the in-memory interpreter's counts: on
rows with ties at the candidates, missing cells (dropped by the row rules),
negative zero, a filter before the cut, a computed value, and every
comparison written either way round.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import fuzzpy.engines.execute as execute

from .conftest import release

HEADER = "type Row = { x : num, k : int, g : bool };\n\n"

#: (name, score of a candidate `t` on `db`, candidates): each released as a
#: vector with almost no noise, so any count that differs shows.
SCORES = [
    ("split_le", "let (lo, hi) = split (fun r -> r.x <= t) db in size lo - 3 * size hi",
     "[-2, -1, 0, 0.5, 1, 1.5, 2, 3, 4.25, 9]"),
    ("lt_left", "size (filter (fun r -> t < r.x) db) + 10 * size (filter (fun r -> r.x < t) db)",
     "[0, 1, 2, 3, 4]"),
    ("ge_gt", "size (filter (fun r -> r.x >= t) db) - 7 * size (filter (fun r -> t > r.x) db)",
     "[4.25, 1, 0, 1.5, 3]"),
    ("eq_ne", "size (filter (fun r -> r.x == t) db) + 10 * size (filter (fun r -> r.x != t) db)",
     "[-0.0, 1, 2, 2.5, 3]"),
    ("ints", "let (lo, hi) = split (fun r -> r.k <= t) db in size lo - size hi + 9 * size (filter (fun r -> r.k > t) db)",
     "[0, 1, 2, 3, 5, 8]"),
    ("int_vs_num", "size (filter (fun r -> r.k < t) db) - 3 * size (filter (fun r -> r.k >= t) db)",
     "[0.5, 1, 2.5, 3]"),
    ("after_filter", "let (lo, hi) = split (fun r -> r.x <= t) (filter (fun r -> r.g) db) in size lo - 2 * size hi",
     "[0, 1, 2, 3]"),
    ("computed", "let (lo, hi) = split (fun r -> r.x * 2 + 1 <= t) db in size lo - 5 * size hi",
     "[1, 2, 3, 5, 7]"),
]


def _program(tmp: Path, name: str, score: str, candidates: str) -> Path:
    kind = "int" if name == "ints" else "num"
    text = (HEADER + f"def score (t : {kind}) (db : bag Row) : num =\n  {score};\n\n"
            f"def release (db : bag Row) : fuzzy (vec[1] num) =\n"
            f"  laplace[1000000000] (tabulate {candidates} (fun t -> score t db));\n")
    path = tmp / f"{name}.fz"
    path.write_text(text)
    return path


def _rows(tmp: Path, seed: int) -> Path:
    """Values drawn from a few, so that many rows tie with a candidate;
    about one row in eight has a missing cell."""
    rng = random.Random(seed)
    lines = ["x,k,g"]
    for _ in range(300):
        x = rng.choice(["-1", "0", "-0.0", "0.5", "1", "1", "1.5", "2", "2.5", "3", "4.25", "1e300", "-7.5"])
        k = str(rng.choice([0, 1, 1, 2, 3, 5, 8, 13, -4]))
        g = rng.choice(["true", "false"])
        cells = [x, k, g]
        if rng.random() < 0.125:
            cells[rng.randrange(3)] = ""
        lines.append(",".join(cells))
    path = tmp / f"rows{seed}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def grouped_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    original = execute.Executor._run_thresholds

    def counting(self, family):  # type: ignore[no-untyped-def]
        seen.append(len(family))
        return original(self, family)

    monkeypatch.setattr(execute.Executor, "_run_thresholds", counting)
    return seen


@pytest.mark.parametrize(("name", "score", "candidates"), SCORES, ids=[s[0] for s in SCORES])
@pytest.mark.parametrize("seed", [1, 2])
def test_one_pass_counts_equal_filtered_counts_and_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grouped_passes: list[int],
    name: str, score: str, candidates: str, seed: int,
) -> None:
    program, data = _program(tmp_path, name, score, candidates), _rows(tmp_path, seed)
    grouped = release(program, "release", data, "duckdb", budget="1e13,0")
    assert grouped.kind == "released", grouped
    assert grouped_passes, "the counts were not computed in one grouped pass"
    monkeypatch.setattr(execute, "MIN_FAMILY", 10**9)  # the filtered counts of before
    filtered = release(program, "release", data, "duckdb", budget="1e13,0")
    memory = release(program, "release", data, "memory", budget="1e13,0")
    assert grouped.detail == filtered.detail == memory.detail


def test_a_median_by_the_exponential_mechanism_is_one_grouped_query(
    tmp_path: Path, grouped_passes: list[int],
) -> None:
    program = tmp_path / "median.fz"
    program.write_text(HEADER + "def balance (c : num) (db : bag Row) : num =\n"
                       "  let (below, above) = split (fun p -> p.x <= c) db in - abs (size below - size above);\n\n"
                       "def median (db : bag Row) : fuzzy num =\n"
                       "  expmech[1] [-1, 0, 0.5, 1, 1.5, 2, 2.5, 3] balance db;\n")
    data = _rows(tmp_path, 3)
    releases = {seed: release(program, "median", data, "duckdb", seed=seed) for seed in (1, 2, 3)}
    assert grouped_passes == [16, 16, 16]  # 8 candidates, two counts each, every seed
    for seed, ending in releases.items():
        assert ending == release(program, "median", data, "memory", seed=seed)


@pytest.mark.spark
def test_one_pass_counts_on_spark(tmp_path: Path, spark: object, grouped_passes: list[int]) -> None:
    name, score, candidates = SCORES[0]
    program, data = _program(tmp_path, name, score, candidates), _rows(tmp_path, 4)
    on_spark = release(program, "release", data, "spark", budget="1e13,0")
    assert grouped_passes
    assert on_spark.detail == release(program, "release", data, "memory", budget="1e13,0").detail


@pytest.fixture
def cell_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every grouped pass by cells (`fuzzpy.engines.cuts`), even of a few cuts."""
    import fuzzpy.engines.cuts as cuts

    monkeypatch.setattr(cuts, "MIN_CUTS", 3)
    seen: list[str] = []
    original = execute.Executor._cells_query

    def recording(self, *args):  # type: ignore[no-untyped-def]
        seen.append(original(self, *args))
        return seen[-1]

    monkeypatch.setattr(execute.Executor, "_cells_query", recording)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(("name", "score", "candidates"), SCORES, ids=[s[0] for s in SCORES])
def test_counts_by_cells_equal_filtered_counts_and_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cell_queries: list[str],
    name: str, score: str, candidates: str,
) -> None:
    program, data = _program(tmp_path, name, score, candidates), _rows(tmp_path, 5)
    by_cells = release(program, "release", data, "duckdb", budget="1e13,0")
    assert by_cells.kind == "released", by_cells
    assert cell_queries or name == "int_vs_num", "the counts were not computed by cells"
    monkeypatch.setattr(execute, "MIN_FAMILY", 10**9)
    assert by_cells.detail == release(program, "release", data, "duckdb", budget="1e13,0").detail
    assert by_cells.detail == release(program, "release", data, "memory", budget="1e13,0").detail


def test_many_candidates_by_cells_and_crowded_ones_by_the_search(tmp_path: Path, cell_queries: list[str]) -> None:
    """Candidates spread over [-10, 10] (ties with the data at most of them,
    two more squeezed beside 0) go by cells; candidates from -1e300 to 1e300
    crowded near 0 fall back to the search: the counts are equal either way."""
    spread = sorted({k / 4 for k in range(-40, 41)} | {-1e-9, 1e-300})
    crowded = sorted({-1e300, 1e300} | {k / 8 for k in range(-16, 40)})
    score = "let (lo, hi) = split (fun r -> r.x <= t) db in size lo - 3 * size hi + 7 * size (filter (fun r -> r.x == t) db)"
    data = _rows(tmp_path, 6)
    for name, candidates in (("spread", spread), ("crowded", crowded)):
        program = _program(tmp_path, name, score, "[" + ", ".join(repr(c) for c in candidates) + "]")
        assert release(program, "release", data, "duckdb", budget="1e13,0").detail == \
            release(program, "release", data, "memory", budget="1e13,0").detail
        assert len(cell_queries) == 1, name


def test_integer_cuts_past_two_to_the_53_by_cells(tmp_path: Path, cell_queries: list[str]) -> None:
    """Integers that a double cannot tell apart are compared as integers."""
    big = 2**53
    candidates = [big + 100 * i for i in range(-3, 20)]
    lines = ["x,k,g"] + [f"1,{big + 100 * i + d},true" for i in (-3, 0, 1, 7, 19) for d in (-1, 0, 1)] + ["1,3,true"]
    data = tmp_path / "big.csv"
    data.write_text("\n".join(lines) + "\n")
    score = "let (lo, hi) = split (fun r -> r.k <= t) db in size lo - 3 * size hi"
    program = _program(tmp_path, "ints", score, "[" + ", ".join(str(c) for c in sorted(candidates)) + "]")
    assert release(program, "release", data, "duckdb", budget="1e13,0").detail == \
        release(program, "release", data, "memory", budget="1e13,0").detail
    assert cell_queries


def test_the_library_median_of_a_mapped_bag_is_one_grouped_query(tmp_path: Path, grouped_passes: list[int]) -> None:
    """`std.stats.median` is passed a bag bound outside the exponential
    mechanism (`map` of the rows): the look ahead computes it for itself,
    keeps nothing in the binding, and the bag is used again after."""
    program = tmp_path / "library.fz"
    program.write_text("import std.stats (median);\n" + HEADER +
                       "def both (db : bag Row) : fuzzy (num, num) = {\n"
                       "  let xs = map (fun r -> r.x) (filter (fun r -> r.g) db);\n"
                       "  sample m = median [-1, 0 .. 5] xs 1;\n"
                       "  sample n = laplace[1] (size (filter (fun x -> x <= 1) xs));\n"
                       "  return (m, n) };\n")
    data = _rows(tmp_path, 8)
    for seed in (1, 2):
        assert release(program, "both", data, "duckdb", seed=seed) == release(program, "both", data, "memory", seed=seed)
    assert grouped_passes and all(size == 14 for size in grouped_passes)
