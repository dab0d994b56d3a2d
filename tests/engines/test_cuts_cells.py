"""`fuzzpy.engines.cuts`: a row's bucket from its cell equals the number of
threshold tests it fails, for any sorted cuts and any value (the cell
formula evaluated in IEEE doubles, as the engine evaluates it)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.engines.cuts import Cells, plan_cells

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def _cell(plan: Cells, x: float) -> int:
    """As the engine computes it: floor of inf is inf, NaN above all."""
    q = (min(max(x, plan.low - plan.width), plan.top) - plan.low) / plan.width if not math.isnan(x) else math.nan
    if math.isnan(q) or q == math.inf:
        return plan.cells + 1
    index = math.floor(q) + 1.0 if q != -math.inf else q
    return int(min(max(index, 0.0), float(plan.cells + 1)))


def _bucket(plan: Cells, cuts: list[float], x: float) -> int:
    first, last = plan.spans[_cell(plan, x)]
    return 2 * first + sum((x >= c) + (x > c) for c in cuts[first:last])


@settings(max_examples=150, deadline=None)
@given(st.lists(finite, min_size=12, max_size=60), st.lists(finite, max_size=40), st.integers(0, 2**31))
def test_the_bucket_by_cells_counts_the_failed_tests(cuts: list[float], values: list[float], seed: int) -> None:
    cuts = sorted(cuts)
    plan = plan_cells(cuts)
    if plan is None:
        return
    # values at, beside and between the cuts, and anywhere
    near = [c for c in cuts] + [math.nextafter(c, math.inf) for c in cuts] + [math.nextafter(c, -math.inf) for c in cuts]
    for x in values + near + [math.inf, -math.inf]:
        assert _bucket(plan, cuts, x) == sum((x >= c) + (x > c) for c in cuts), x


@settings(max_examples=100, deadline=None)
@given(st.integers(-(2**40), 2**40), st.integers(1, 10**6), st.integers(12, 80), st.lists(st.integers(-50, 50), max_size=30))
def test_evenly_spaced_cuts_go_by_cells_exactly(start: int, step: int, n: int, offsets: list[int]) -> None:
    cuts = [float(start + step * i) for i in range(n)]
    if len(set(cuts)) < len(cuts):
        return
    plan = plan_cells(cuts)
    assert plan is not None
    for i in range(0, n, max(1, n // 7)):
        for d in offsets + [0]:
            x = cuts[i] + d * step / 7
            assert _bucket(plan, cuts, x) == sum((x >= c) + (x > c) for c in cuts)
