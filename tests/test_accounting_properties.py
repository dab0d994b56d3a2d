"""Properties of the accountant (hypothesis, derandomised): monotone in delta
and in the number of rounds; the reported minimum is never above any method."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting.accountant import guarantees, tightest
from fuzzpy.accounting.events import ExpMech, Gaussian, Laplace, Repeat, Subsample, Verified

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)

fractions = st.fractions(min_value=Fraction(1, 2), max_value=Fraction(4), max_denominator=10)
rates = st.sampled_from([Fraction(1, 100), Fraction(1, 20), Fraction(1, 4)])


def _step(kind: str, a: Fraction, q: Fraction):
    if kind == "laplace":
        return Laplace(Fraction(1), a)
    if kind == "gaussian":
        return Gaussian(Fraction(1), a)
    if kind == "expmech":
        return ExpMech(a / 4)
    if kind == "verified":
        return Verified("m", a / 4, Fraction(1, 10**9))
    return Subsample(q, (Gaussian(Fraction(1), a),))


steps = st.builds(
    _step,
    st.sampled_from(["laplace", "gaussian", "expmech", "verified", "subsampled"]),
    fractions,
    rates,
)
programs = st.lists(st.tuples(steps, st.integers(1, 20)), min_size=1, max_size=3)
deltas = st.sampled_from([1e-8, 1e-6, 1e-4, 1e-2])


def _events(program, scale: int = 1):
    return [Repeat(count * scale, (step,)) for step, count in program]


@SETTINGS
@given(programs, deltas, deltas)
def test_monotone_in_delta(program, d1, d2):
    low, high = sorted((d1, d2))
    assert (
        tightest(_events(program), high).epsilon <= tightest(_events(program), low).epsilon + 1e-9
    )


@SETTINGS
@given(programs, deltas)
def test_monotone_in_rounds(program, delta):
    once = tightest(_events(program), delta).epsilon
    twice = tightest(_events(program, 2), delta).epsilon
    assert once <= twice + 1e-9


@SETTINGS
@given(programs, deltas)
def test_minimum_is_never_above_any_proven_method(program, delta):
    best = tightest(_events(program), delta)
    found = [g for g in guarantees(_events(program), delta) if g.proven]
    assert found, "some method always applies at delta > 0"
    assert best.epsilon == min(g.epsilon for g in found)
    if math.isinf(best.epsilon):  # e.g. the verified deltas alone exceed delta
        assert best.method == "none"
    else:
        assert best.method in {g.method for g in found if g.epsilon == best.epsilon}
