"""`staircase[eps]` under replace-one neighbours (issue 28).

A replaced row moves a clamped sum `sum[lo, hi]` by at most hi - lo (a count
not at all), not by twice the add/remove sensitivity; staircase noise on a
query moving by r is (eps ceil(r))-DP. Before, every staircase event was
restated at 2s under replace-one (`sum[0, 1]`: 2 eps, where eps is exact).

The reference is the staircase density itself (Geng & Viswanath 2016, steps
of width 1: a e^{-k eps} on |x| in [k, k + gamma), a e^{-(k+1) eps} on
[k + gamma, k + 1)), its worst log-ratio f(x) / f(x + d) over a grid of
outputs x and shifts |d| <= r found by brute force, never the checker's rule.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fuzzpy.api import loads


def _log_density(x: np.ndarray, eps: float, gamma: float) -> np.ndarray:
    k = np.floor(np.abs(x))
    upper = (np.abs(x) - k) >= gamma  # the lower half of the step
    return -(k + upper) * eps  # up to the normaliser, which cancels in a ratio


def worst_log_ratio(eps: float, move: float, gamma: float) -> float:
    """max over x and 0 < |d| <= move of log f(x) / f(x + d) (a grid fine
    enough to land on both sides of every step edge)."""
    x = np.arange(-8.0, 8.0, 1 / 64) + 1 / 128
    shifts = np.concatenate([np.arange(1, int(move * 64) + 1) / 64, [move]])
    best = 0.0
    for d in np.concatenate([shifts, -shifts]):
        best = max(best, float(np.max(_log_density(x, eps, gamma) - _log_density(x + d, eps, gamma))))
    return best


def _cost(source: str, name: str, neighbours: str | None) -> float:
    report = loads(source).check(None, neighbours, None)
    return float(report[name].parameters[0].cost.epsilon)


@pytest.mark.parametrize(("query", "move", "before"), [
    ("sum[0, 1] db", 1.0, 1.4),
    ("sum[-2, 1] db", 3.0, 2.8),  # add/remove moves it by 2: 4 steps before
    ("sum[0, 2.5] (filter (fun x -> x > 1) db)", 2.5, 3.5),  # a filtered row adds 0 or [0, 2.5]
])
def test_replace_one_is_charged_the_query_move(query: str, move: float, before: float) -> None:
    eps, gamma = 0.7, 0.3
    source = f"def s (db : bag num) : fuzzy num = staircase[{eps}, {gamma}] ({query});\n"
    found = _cost(source, "s", "replace-one")
    reference = worst_log_ratio(eps, move, gamma)
    assert math.isclose(found, reference, rel_tol=1e-9), (found, reference)
    assert found < before - 0.5  # twice the add/remove sensitivity before


def test_a_count_does_not_move_under_replacement() -> None:
    source = "def c (db : bag num) : fuzzy num = staircase[0.5] (size db);\n"
    assert _cost(source, "c", "replace-one") == 0.0
    assert _cost(source, "c", None) == 0.5  # add/remove: one step
