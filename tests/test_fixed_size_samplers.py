"""The exact samplers behind `choose[m]` and `bootstrap[m]`: sizes, ranges,
and their distributions (every m-subset equally likely; every draw uniform
and independent), by chi-square tests on seeded runs, and through the
interpreter on a real bag."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.samplers import draws_with_replacement, subset_without_replacement


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 400).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n - 1))), st.integers(0, 2**32))
def test_subset_has_m_distinct_sorted_positions(nm: tuple[int, int], seed: int) -> None:
    n, m = nm
    chosen = subset_without_replacement(n, m, SeededSource(seed))
    assert chosen.shape == (m,) and chosen.dtype == np.int64
    assert len(set(chosen.tolist())) == m
    assert chosen.min() >= 0 and chosen.max() < n
    assert (np.diff(chosen) > 0).all()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(1, 300), st.integers(0, 2**32))
def test_draws_have_m_positions_in_range(n: int, m: int, seed: int) -> None:
    drawn = draws_with_replacement(n, m, SeededSource(seed))
    if n == 0:
        assert drawn.size == 0
        return
    assert drawn.shape == (m,) and drawn.min() >= 0 and drawn.max() < n
    assert (np.diff(drawn) >= 0).all()


def _chi_square_p(counts: list[int]) -> float:
    return float(stats.chisquare(counts).pvalue)


def test_every_subset_is_equally_likely() -> None:
    """All C(6, 3) = 20 subsets, 40 000 draws: chi-square against uniform."""
    source = SeededSource(20261129)
    seen = Counter(tuple(subset_without_replacement(6, 3, source).tolist()) for _ in range(40_000))
    subsets = list(itertools.combinations(range(6), 3))
    assert set(seen) == set(subsets)
    assert _chi_square_p([seen[s] for s in subsets]) > 1e-4


def test_each_position_is_chosen_with_probability_m_over_n() -> None:
    """Inclusion frequencies of 9 of 40 positions over 20 000 draws: each
    Binomial(20 000, 9/40); the largest deviation within 5 standard errors."""
    source = SeededSource(7)
    hits = np.zeros(40)
    for _ in range(20_000):
        hits[subset_without_replacement(40, 9, source)] += 1
    p = 9 / 40
    sd = math.sqrt(20_000 * p * (1 - p))
    assert np.abs(hits - 20_000 * p).max() < 5 * sd


def test_draws_with_replacement_are_uniform_and_independent() -> None:
    """Ordered pairs from 2 draws over 5 rows: the 15 multisets {i, j} have
    probability 2/25 (i != j) or 1/25 (i = j)."""
    source = SeededSource(99)
    seen = Counter(tuple(draws_with_replacement(5, 2, source).tolist()) for _ in range(50_000))
    multisets = list(itertools.combinations_with_replacement(range(5), 2))
    expected = [50_000 * (1 if i == j else 2) / 25 for i, j in multisets]
    observed = [seen[s] for s in multisets]
    assert float(stats.chisquare(observed, expected).pvalue) > 1e-4


def test_interpreter_samples_have_the_exact_size(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Through a program on a pandas frame: the noisy count of a sample of
    m rows of 30 (Laplace at eps = 10^6: within 0.01 of m with
    overwhelming probability) is m, or 30 for m > 30."""
    import pandas as pd

    from fuzzpy.api import loads

    program = loads("""
def sizes(db : bag num) : fuzzy num = choose[7] (fun b -> laplace[1000000] (sum[1, 1] b)) db;
def boots(db : bag num) : fuzzy num = bootstrap[45] (fun b -> laplace[1000000] (sum[1, 1] b)) db;
def small(db : bag num) : fuzzy num = choose[50] (fun b -> laplace[1000000] (sum[1, 1] b)) db;
""")
    rows = pd.DataFrame({"x": [float(i) for i in range(30)]})
    for seed in range(3):
        assert abs(program.run("sizes", {"db": rows}, seed=seed, budget="1e12", datasets={"db": "rows"}, ledger=str(tmp_path / "l.db")).value - 7) < 0.01
        assert abs(program.run("boots", {"db": rows}, seed=seed, budget="1e12", datasets={"db": "rows"}, ledger=str(tmp_path / "l.db")).value - 45) < 0.01
        assert abs(program.run("small", {"db": rows}, seed=seed, budget="1e12", datasets={"db": "rows"}, ledger=str(tmp_path / "l.db")).value - 30) < 0.01


def test_api_run_under_replace_one_with_public_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`Program.run(neighbours="replace-one", rows=N)`: charged at m/N, the
    relation kept for the dataset, the other relation refused (FZ605), a
    wrong N refused before the charge (FZ606)."""
    import math
    import subprocess
    import sys

    import pytest

    from fuzzpy.api import loads
    from fuzzpy.api.errors import ProgramError

    data = tmp_path / "rows.csv"
    data.write_text("v\n" + "".join(f"{i % 3 - 1}\n" for i in range(20)), encoding="utf-8")
    program = loads("def f(db : bag num) : fuzzy num = choose[5] (fun b -> laplace[1] (sum[-1, 1] b)) db;")
    ledger = str(tmp_path / "l.db")
    subprocess.run([sys.executable, "-m", "fuzzpy", "dataset", "register", "rows", str(data), "--budget", "10",
                    "--missing", "value:0", "--neighbours", "replace-one", "--ledger", ledger], check=True,
                   capture_output=True)
    release = program.run("f", {"db": "rows"}, ledger=ledger, rows=20)
    (charge,) = release.charges.values()
    assert float(charge.epsilon) == pytest.approx(math.log1p(5 / 20 * math.expm1(2)), rel=1e-9)
    with pytest.raises(ProgramError) as refused:
        program.run("f", {"db": "rows"}, ledger=ledger, neighbours="add-remove-one")
    assert "FZ605" in str(refused.value)
    with pytest.raises(ProgramError) as wrong:
        program.run("f", {"db": "rows"}, ledger=ledger, rows=21)
    assert "FZ606" in str(wrong.value)
