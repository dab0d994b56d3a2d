"""The local and shuffle paths on neighbouring datasets (issue 28).

Local and shuffled reports are private for replace-one neighbours (one row's
value changed, the number of rows public), so the pairs here replace a row.
Each definition runs through the public pipeline on both datasets with the
same seeds; both must end the same way for every seed, and over many seeds
the frequencies of every output (the bag of reports, as counts) must respect
the checker's epsilon: P[o | D] <= e^eps P[o | D'] up to sampling error (a
one-sided test at 4.5 standard errors). `test_a_broken_randomiser_is_caught`
shows that the test sees a randomiser that does not randomise.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzpy.data.loader import load_bag
from fuzzpy.release import pipeline

from .datasets import Schema, write_csv
from .runner import Outcome, bag_parameter, check_text

PROGRAM = """
type R = { f : bool, k : int };
let eps = 1;
def reports (db : bag R) : fuzzy (bag bool) = local (fun r -> rr[eps] r.f) db;
def shuffled (db : bag R) : fuzzy (bag bool) = shuffle[3] (fun r -> rr[eps] r.f) db;
def cats (db : bag R) : fuzzy (bag int) = local (fun r -> krr[eps, 3] r.k) db;
def estimate (db : bag R) : fuzzy num = { sample s = local (fun r -> rr[eps] r.f) db; return (rr_estimate[eps] s) };
"""
SCHEMA = Schema((("f", "bool"), ("k", "int")))
BASE = [(True, 0), (False, 1), (False, 2)]
#: replace-one neighbours: the first row's values replaced (both columns move)
REPLACED = [(False, 2), (False, 1), (False, 2)]
SEEDS = range(300)


def _runs(definition: str, rows: list[tuple[bool, int]], folder: Path, statistic: Callable[[object], object]) -> list[object]:
    checked = check_text(PROGRAM)
    assert checked.accepted, checked.outcome.describe()
    name, bag_type = bag_parameter(checked.program, definition)
    bag = load_bag(write_csv(SCHEMA, rows, folder), bag_type)
    out = []
    for seed in SEEDS:
        try:
            value = pipeline.run(checked.program, definition, {name: bag}, seed=seed)
            out.append(("released", statistic(value)))
        except Exception as exc:  # noqa: BLE001 - an ending to compare, whatever it is
            out.append((Outcome("crashed", detail=type(exc).__name__).kind, type(exc).__name__))
    return out


def _true_count(value: object) -> object:
    return sum(bool(v) for v in value.rows())  # type: ignore[attr-defined]


def _category_counts(value: object) -> object:
    counts = Counter(int(v) for v in value.rows())  # type: ignore[attr-defined]
    return tuple(counts.get(j, 0) for j in range(3))


def _epsilon(definition: str) -> float:
    checked = check_text(PROGRAM)
    from fuzzpy.checker.report import privacy_figure

    figure = privacy_figure(checked.program.definitions[definition].privacy["db"], 1e-6)
    assert figure.neighbours == "replace-one"
    return float(figure.epsilon)  # type: ignore[arg-type]


def _violations(left: list[object], right: list[object], eps: float) -> list[str]:
    n = len(left)
    found = []
    for a, b in ((left, right), (right, left)):
        ca, cb = Counter(a), Counter(b)
        for outcome in set(ca) | set(cb):
            x, y = ca.get(outcome, 0) / n, cb.get(outcome, 0) / n
            slack = 4.5 * math.sqrt((x + math.exp(2 * eps) * y) / n) + 1 / n
            if x - math.exp(eps) * y > slack:
                found.append(f"{outcome}: {x:.3f} vs e^{eps:.3g} x {y:.3f}")
    return found


@pytest.mark.parametrize(("definition", "statistic"), [
    ("reports", _true_count), ("shuffled", _true_count), ("cats", _category_counts),
])
def test_replace_one_neighbours_respect_the_epsilon(definition: str, statistic: Callable[[object], object]) -> None:
    eps = _epsilon(definition)
    with tempfile.TemporaryDirectory() as folder:
        left = _runs(definition, BASE, Path(folder), statistic)
        right = _runs(definition, REPLACED, Path(folder), statistic)
    assert [kind for kind, _ in left] == [kind for kind, _ in right] == ["released"] * len(SEEDS)
    assert _violations(left, right, eps) == []


def test_a_broken_randomiser_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import fuzzpy.runtime.local as local

    monkeypatch.setattr(local, "rr", lambda value, eps, source: value)  # reports the truth
    with tempfile.TemporaryDirectory() as folder:
        left = _runs("reports", BASE, Path(folder), _true_count)
        right = _runs("reports", REPLACED, Path(folder), _true_count)
    assert _violations(left, right, 1.0)


def test_estimates_end_the_same_way_and_centre_on_the_truth() -> None:
    with tempfile.TemporaryDirectory() as folder:
        left = _runs("estimate", BASE, Path(folder), lambda v: float(v))  # type: ignore[arg-type]
    values = [v for _, v in left]
    assert abs(sum(values) / len(values) - 1) < 0.6  # one true row; the estimate is unbiased


def test_shuffle_is_private_for_replace_one_only() -> None:
    # adding a row to a 2-row dataset moves `shuffle[3]` from refused to released:
    # the number of reports is public, as the report says (replace-one)
    with tempfile.TemporaryDirectory() as folder:
        smaller = _runs("shuffled", BASE[:2], Path(folder), _true_count)
    assert {kind for kind, _ in smaller} != {"released"}
