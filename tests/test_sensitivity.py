"""Property tests of the sensitivity algebra (fuzzpy.language.sensitivity)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.language.sensitivity import INF, ONE, ZERO, Sens, case_scale, total

finite = st.builds(lambda n, d: Sens(Fraction(n, d)), st.integers(0, 1000), st.integers(1, 50))
sens = st.one_of(finite, st.just(INF), st.just(ZERO))

SETTINGS = settings(max_examples=150, derandomize=True, deadline=None)


@SETTINGS
@given(sens, sens, sens)
def test_addition_is_a_commutative_monoid(a: Sens, b: Sens, c: Sens) -> None:
    assert a + b == b + a
    assert (a + b) + c == a + (b + c)
    assert a + ZERO == a


@SETTINGS
@given(sens, sens, sens)
def test_scaling_is_associative_commutative_with_unit(a: Sens, b: Sens, c: Sens) -> None:
    assert a * b == b * a
    assert (a * b) * c == a * (b * c)
    assert a * ONE == a


@SETTINGS
@given(sens, sens, sens)
def test_scaling_distributes_over_addition(a: Sens, b: Sens, c: Sens) -> None:
    assert a * (b + c) == a * b + a * c


@SETTINGS
@given(sens)
def test_zero_times_infinity_is_zero_and_infinity_absorbs(a: Sens) -> None:
    assert ZERO * INF == ZERO
    assert a + INF == INF
    assert (a * INF).is_inf == (not a.is_zero)


@SETTINGS
@given(sens, sens, sens)
def test_join_is_a_semilattice_bounded_by_the_sum(a: Sens, b: Sens, c: Sens) -> None:
    assert a.join(b) == b.join(a)
    assert a.join(a) == a
    assert a.join(b).join(c) == a.join(b.join(c))
    assert a <= a.join(b) <= a + b


@SETTINGS
@given(sens, sens, sens)
def test_order_is_total_and_monotone(a: Sens, b: Sens, c: Sens) -> None:
    assert a <= b or b <= a
    assert ZERO <= a <= INF
    if a <= b:
        assert a + c <= b + c
        assert a * c <= b * c


@SETTINGS
@given(sens)
def test_case_scale_is_positive_and_never_below_its_argument(a: Sens) -> None:
    scaled = case_scale(a)
    assert not scaled.is_zero
    assert a <= scaled
    assert (scaled * INF).is_inf  # an infinitely sensitive scrutinee stays infinite


@SETTINGS
@given(st.lists(finite, max_size=8))
def test_total_is_the_exact_sum(values: list[Sens]) -> None:
    assert total(values) == Sens(sum((v.value for v in values), Fraction(0)))  # type: ignore[misc]


def test_literals_are_exact() -> None:
    assert Sens.of("0.1") + Sens.of("0.2") == Sens.of("0.3")
    assert str(Sens.of("0.1") * Sens.of(3)) == "0.3"
    assert Sens.of("inf").is_inf
