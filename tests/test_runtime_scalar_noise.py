"""The numpy-free paths of a scalar release (issue 11) give what the array
paths give: the same value from the same random words."""

from __future__ import annotations

import pickle
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.runtime import randomness
from fuzzpy.runtime.noise import laplace_release, laplace_release_one
from fuzzpy.runtime.randomness import SecureSource, SeededSource
from fuzzpy.runtime.vectors import is_exact_vector, labelled, vector

exact_numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.fractions(max_denominator=2**40).filter(lambda q: abs(q) < 2**70),
)
scales = st.fractions(min_value=Fraction(1, 2**20), max_value=Fraction(2**40), max_denominator=2**30)


@settings(max_examples=200, deadline=None)
@given(value=exact_numbers, scale=scales, seed=st.integers(min_value=0, max_value=2**32))
def test_one_number_is_released_as_the_array_path_releases_it(value: Fraction, scale: Fraction, seed: int) -> None:
    import numpy as np

    array = np.empty(1, dtype=object)
    array[0] = value
    by_array, by_ints = SeededSource(seed), SeededSource(seed)
    expected = Fraction(laplace_release(array, scale, by_array)[0])
    got = laplace_release_one(value, scale, by_ints)
    assert type(got) is Fraction and got == expected
    assert by_ints.word() == by_array.word()  # the same words were used


def test_secure_words_as_ints_are_the_words_numpy_reads(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stream = bytes(range(256)) * 8
    monkeypatch.setattr(randomness.os, "urandom", lambda n: stream[:n])
    source = SecureSource()
    assert source._generate_ints(200) == source._generate(200).tolist()


def test_a_vector_made_lazily_is_one_and_survives_pickling() -> None:
    v = labelled(vector([1, Fraction(1, 3)]), ("a", "b"))
    assert is_exact_vector(v) and not is_exact_vector([1, 2]) and not is_exact_vector(v.view(type(v).__base__))
    again = pickle.loads(pickle.dumps(v))
    assert is_exact_vector(again) and again.tolist() == [1, Fraction(1, 3)]
