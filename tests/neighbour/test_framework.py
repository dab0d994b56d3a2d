"""The harness's own parts: data that reads back exactly, metrics, verdicts."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from fuzzpy.accounting.events import ExpMech, Laplace, Repeat
from fuzzpy.language import types as T

from . import compare as C
from .datasets import Schema, added, catalogue, removed, sized, write_csv
from .programs import SCHEMA
from .runner import Outcome

PERSON = T.TBag(T.TRecord((("a", T.NUM), ("k", T.INT), ("f", T.BOOL), ("s", T.STRING))))


def test_every_catalogue_pair_reads_back_exactly(tmp_path: Path) -> None:
    """The adversarial values survive the CSV file and the loader bit for bit."""
    from fuzzpy.data.loader import load_bag

    schema = Schema.of(PERSON)
    for pair in catalogue(schema, many=50):
        for rows in (pair.smaller, pair.larger):
            bag = load_bag(write_csv(schema, rows, tmp_path), PERSON)
            assert len(bag) == len(rows)
            for i, row in enumerate(bag.rows()):
                cells = [row.fields[name] for name, _ in schema.columns]
                # Values are exact numbers at run time: -0.0 reads as 0 (docs/semantics.md).
                assert [str(c + 0.0) if isinstance(c, float) else str(c) for c in cells] == [
                    str(c + 0.0) if isinstance(c, float) else str(c) for c in rows[i]
                ], pair.describe()


def test_pairs_are_neighbours() -> None:
    schema = Schema.of(T.TBag(T.NUM))
    assert schema.columns == (("v", "num"),)
    for pair in [*catalogue(schema, many=20), *sized(schema, (0, 3), extra={"v": 2.0})]:
        larger = list(pair.larger)
        assert len(larger) == len(pair.smaller) + 1
        larger.remove(pair.row)
        assert sorted(map(str, larger)) == sorted(map(str, pair.smaller))
    pair = removed("r", [(1.0,), (2.0,), (3.0,)], 1)
    assert pair.smaller == ((1.0,), (3.0,)) and pair.larger == ((1.0,), (2.0,), (3.0,))
    assert added("a", [(1.0,)], (5.0,), 0).larger == ((5.0,), (1.0,))
    assert SCHEMA.kinds == ("num", "num", "int", "bool", "string")


def test_metrics_follow_the_language() -> None:
    pair, with_, vec2, vecinf = (
        T.TTuple((T.NUM, T.NUM)), T.TWith(T.NUM, T.NUM), T.TVec("2", T.NUM), T.TVec("inf", T.NUM),
    )
    n = C.normalise
    assert C.distance(pair, n((1, 2.5), pair), n((0, 0.5), pair)) == 3
    assert C.distance(with_, n((1, 2.5), with_), n((0, 0.5), with_)) == 2
    assert C.distance(vec2, n(np.array([3.0, 0.0]), vec2), n([0, 4], vec2)) == 5
    assert C.distance(vecinf, n([3, 0], vecinf), n([0, 4], vecinf)) == 4
    assert C.distance(T.TList(T.NUM), n([1], T.TList(T.NUM)), n([1, 2], T.TList(T.NUM))) is None
    assert C.distance(T.BOOL, True, False) is None and C.distance(T.BOOL, True, True) == 0
    assert C.sqrt_below(Fraction(2)) < Fraction(14142135623730951, 10**16)
    assert C.sqrt_below(Fraction(2)) ** 2 <= 2 < (C.sqrt_below(Fraction(2)) + Fraction(1, 2**199)) ** 2
    assert C.normalise(0.1, T.NUM) == Fraction(0.1) != Fraction(1, 10)  # the double, exactly
    with pytest.raises(C.IllTyped):
        C.normalise(1.5, T.INT)


def _det(s: Fraction | None, result: T.Type = T.NUM) -> C.Claim:
    return C.Claim(result, False, s, ())


def _released(value: object) -> Outcome:
    return Outcome("released", value)


def test_deterministic_results_are_held_to_their_sensitivity_exactly() -> None:
    claim = _det(Fraction(1))
    assert C.judge(claim, "deterministic", _released(0.5), _released(1.5)) is None
    assert C.judge(claim, "deterministic", _released(Fraction(1, 3)), _released(Fraction(4, 3))) is None
    # the doubles 0.1 and 1.1 are 1 + 8.3e-17 apart: what one float addition does
    violation = C.judge(claim, "deterministic", _released(0.1), _released(1.1))
    assert violation is not None and violation.kind == "distance"
    nan = C.judge(claim, "deterministic", _released(float("nan")), _released(0.0))
    assert nan is not None and nan.kind == "non-finite"
    assert C.judge(_det(None), "deterministic", _released(0.0), Outcome("failed", codes=("FZ519",))) is None


def test_endings_must_agree() -> None:
    claim = _det(Fraction(1))
    failed = Outcome("failed", codes=("FZ524",), detail="not a finite number")
    assert C.judge(claim, "deterministic", failed, failed) is None
    assert C.judge(claim, "deterministic", failed, _released(1)).kind == "ending"  # type: ignore[union-attr]
    other = Outcome("failed", codes=("FZ519",), detail="recursed too deeply")
    assert C.judge(claim, "deterministic", failed, other).kind == "ending"  # type: ignore[union-attr]
    crash = Outcome("crashed", detail="ValueError")
    assert C.judge(claim, "deterministic", crash, crash).kind == "crash"  # type: ignore[union-attr]


def test_fuzzy_releases_get_the_grid_slack_and_no_more() -> None:
    laplace = C.Claim(T.NUM, True, None, (Laplace(Fraction(2), Fraction(1)),))
    assert laplace.allowed("laplace") == 2 * (1 + C.SLACK)
    assert C.judge(laplace, "laplace", _released(0.0), _released(2.0078125)) is None
    assert C.judge(laplace, "laplace", _released(0.0), _released(2.008)).kind == "distance"  # type: ignore[union-attr]
    repeated = C.Claim(T.NUM, True, None, (Repeat(3, (Laplace(Fraction(1), Fraction(1)),)),))
    assert repeated.allowed("laplace") == 3 * (1 + C.SLACK)
    assert repeated.allowed("outcome") is None
    assert C.Claim(T.NUM, True, None, (Laplace(Fraction(1), Fraction(4)),)).allowed("scale:4") == 1 + C.SLACK
    with pytest.raises(ValueError):
        C.Claim(T.NUM, True, None, (ExpMech(Fraction(1)),)).allowed("laplace")


def test_a_release_that_costs_nothing_must_be_identical() -> None:
    free = C.Claim(T.BOOL, True, None, (Laplace(Fraction(0), Fraction(1)),))
    assert C.judge(free, "outcome", _released(True), _released(True)) is None
    assert C.judge(free, "outcome", _released(True), _released(False)).kind == "identical"  # type: ignore[union-attr]
    assert C.judge(free, "unsynced", _released(True), _released(False)) is None


def test_the_slack_is_the_runtime_documented_one() -> None:
    """compare.SLACK restates fuzzpy/runtime/noise.py; if the runtime's
    constant moves, the harness must follow (only checked while it exists)."""
    noise = pytest.importorskip("fuzzpy.runtime.noise")
    if not hasattr(noise, "SLACK"):
        pytest.skip("the runtime no longer names its slack")
    assert noise.SLACK == C.SLACK
