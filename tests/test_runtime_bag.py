"""Columnar bags: lazy selections agree with filtering a list of rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.runtime.bag import Bag, LazyGroups, as_column, column_from_rows
from fuzzpy.runtime.values import Record


def _bag(values: list[int]) -> Bag:
    column = np.array(values, dtype=np.int64)
    return Bag(Record({"v": column, "w": column * 2.0}))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    values=st.lists(st.integers(-5, 12), max_size=50),
    cut1=st.integers(-5, 12),
)
def test_selections_compose_like_list_filters(values: list[int], cut1: int) -> None:
    bag = _bag(values)
    first = bag.where(bag.view().fields["v"] > cut1)
    second = first.where(first.view().fields["v"] % 2 == 0)
    expected = [v for v in values if v > cut1 and v % 2 == 0]
    assert len(second) == len(expected)
    assert second.view().fields["v"].tolist() == expected
    assert second.view().fields["w"].tolist() == [2.0 * v for v in expected]
    assert [row.get("v") for row in second.rows()] == expected
    picked = second.pick(np.arange(len(second))[::-1])
    assert picked.view().fields["v"].tolist() == expected[::-1]
    groups = LazyGroups(first, first.view().fields["v"], 10)
    inside = [v for v in values if v > cut1 and 0 <= v < 10]
    assert groups.sizes().tolist() == [inside.count(k) for k in range(10)]
    assert [len(groups[k]) for k in range(10)] == [inside.count(k) for k in range(10)]
    assert all(set(groups[k].view().fields["v"].tolist()) <= {k} for k in range(10))


def test_constants_broadcast_and_rows_stack() -> None:
    assert as_column(3, 4).tolist() == [3, 3, 3, 3]
    stacked = as_column([np.arange(3.0), np.ones(3)], 3)
    assert stacked.shape == (3, 2)
    records = column_from_rows([Record({"a": 1, "b": True}), Record({"a": 2.5, "b": False})])
    assert records.fields["a"].dtype == np.float64 and records.fields["b"].dtype == bool
