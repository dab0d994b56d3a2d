"""Stored events read back equal to what was stored; bad text is refused."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting.events import (
    Event,
    ExpMech,
    Gaussian,
    Group,
    Laplace,
    Repeat,
    Subsample,
    Verified,
)
from fuzzpy.ledger.event_codec import (
    EventFormatError,
    events_from_json,
    events_to_json,
)

positive = st.fractions(min_value=Fraction(1, 10**9), max_value=10**6)
rate = st.fractions(min_value=Fraction(1, 10**6), max_value=1)
names = st.text(min_size=1, max_size=12)

leaves = st.one_of(
    st.builds(Laplace, positive, positive),
    st.builds(Gaussian, positive, positive),
    st.builds(ExpMech, positive),
    st.builds(Verified, names, positive, st.fractions(min_value=0, max_value=Fraction(1, 100))),
)


def _composites(children: st.SearchStrategy[tuple[Event, ...]]) -> st.SearchStrategy[Event]:
    return st.one_of(
        st.builds(Repeat, st.integers(min_value=1, max_value=10**6), children),
        st.builds(Subsample, rate, children),
        st.builds(Group, st.fractions(min_value=1, max_value=100), children),
    )


events = st.recursive(
    st.lists(leaves, max_size=4).map(tuple),
    lambda children: st.lists(st.one_of(leaves, _composites(children)), max_size=4).map(tuple),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(events)
def test_events_round_trip_through_json(original: tuple[Event, ...]) -> None:
    text = events_to_json(original)
    assert events_from_json(text) == original
    assert events_to_json(events_from_json(text)) == text  # canonical text


def test_numbers_are_stored_exactly() -> None:
    text = events_to_json((Laplace(Fraction(1), Fraction(3)),))
    assert json.loads(text) == [{"kind": "Laplace", "sensitivity": "1", "scale": "3"}]


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"kind": "Laplace"}',
        '[{"kind": "Nope"}]',
        '[{"kind": "Laplace", "sensitivity": "1"}]',
        '[{"kind": "Laplace", "sensitivity": "1", "scale": "x"}]',
        '[{"kind": "Laplace", "sensitivity": 1, "scale": "2"}]',
        '[{"kind": "Repeat", "count": "3", "body": []}]',
        '[{"kind": "Repeat", "count": 3, "body": {}}]',
        '[{"kind": "ExpMech", "epsilon": "1", "extra": 2}]',
    ],
)
def test_malformed_event_text_is_refused(text: str) -> None:
    with pytest.raises(EventFormatError):
        events_from_json(text)
