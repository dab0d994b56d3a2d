"""The discrete Gaussian in int64 batches (issue 24 item 4): the same exact
distribution as the one-candidate-at-a-time sampler, its randomness taken
only from the run's `RandomSource`.

Goodness of fit is judged against the pmf computed here from its definition
(P(z) proportional to exp(-z^2 / (2 sigma^2)), normalised over a support wide
enough that the rest weighs less than 1e-30), by a chi-square test at a
fixed seed and level 1e-4, as in test_runtime_samplers.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from fuzzpy.runtime import samplers
from fuzzpy.runtime.randomness import RandomSource, SeededSource
from fuzzpy.runtime.samplers import discrete_gaussian, discrete_gaussian_array

ALPHA = 1e-4


class HashedWords(RandomSource):
    """Words from SHA-256 in counter mode: a source that owes nothing to
    numpy's generators, and records how many words it gave."""

    private = False

    def __init__(self, key: bytes) -> None:
        super().__init__()
        self.key = key
        self.given = 0

    def _generate(self, count: int) -> np.ndarray:
        blocks = bytearray()
        block = self.given // 4
        while len(blocks) < 8 * count:
            blocks += hashlib.sha256(self.key + block.to_bytes(8, "little")).digest()
            block += 1
        self.given += count
        return np.frombuffer(bytes(blocks[: 8 * count]), dtype="<u8").astype(np.uint64)


def _pmf(sigma: int) -> tuple[np.ndarray, np.ndarray]:
    half = 13 * sigma + 2  # exp(-13^2 / 2) < 1e-36
    support = np.arange(-half, half + 1)
    weights = np.array([math.exp(-(int(z) ** 2) / (2 * sigma * sigma)) for z in support])
    return support, weights / math.fsum(weights)


def _pvalue(draws: np.ndarray, support: np.ndarray, probs: np.ndarray) -> float:
    index = np.searchsorted(support, draws)
    assert np.all(support[index] == draws), "a draw outside the pmf's support"
    observed = np.bincount(index, minlength=support.size).astype(float)
    expected = probs * draws.size
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], draws.size - expected[big].sum())
    return float(stats.chisquare(obs, exp).pvalue)


@pytest.mark.parametrize(("sigma", "seed"), [(1, 3), (2, 4), (7, 5), (40, 6), (64, 7)])
def test_batches_match_the_exact_pmf(sigma: int, seed: int) -> None:
    draws = discrete_gaussian_array(Fraction(sigma * sigma), 300_000, SeededSource(seed))
    assert draws.dtype == np.int64 and draws.size == 300_000
    support, probs = _pmf(sigma)
    assert _pvalue(draws, support, probs) > ALPHA


def test_batches_from_hashed_words_match_the_pmf() -> None:
    """Another source of words, another form of the scale (an int Fraction of
    a product), the same distribution."""
    draws = discrete_gaussian_array(Fraction(3 * 4) ** 2, 200_000, HashedWords(b"fuzzpy"))
    support, probs = _pmf(12)
    assert _pvalue(draws, support, probs) > ALPHA


@pytest.mark.parametrize("sigma", [2**32 + 5, 2**33, 3 * 2**31 + 1])
def test_runtime_scale_matches_the_normal_at_the_grid(sigma: int) -> None:
    """sigma near 2^32 grid units, as every runtime release has (a power of
    two among them: every word's remainder is used): the draws
    binned by z / sigma into 16 cells against the normal's cell masses (the
    discrete sums differ from them by O(1/sigma), 1e-9 here)."""
    draws = discrete_gaussian_array(Fraction(sigma) ** 2, 400_000, SeededSource(17))
    edges = np.array([-math.inf, *np.arange(-3.5, 3.6, 0.5), math.inf])
    cells = np.digitize(draws / sigma, edges[1:-1])
    observed = np.bincount(cells, minlength=edges.size - 1)
    masses = np.diff(stats.norm.cdf(edges))
    assert float(stats.chisquare(observed, masses * draws.size).pvalue) > ALPHA
    assert abs(float(np.mean(draws)) / sigma) < 0.01


def test_every_word_comes_from_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """No other randomness: with numpy's, Python's and the system's generators
    all broken, the draws still come, and they are a function of the
    source's words alone (the same words give the same draws)."""

    def broken(*args: object, **kwargs: object) -> None:
        raise AssertionError("randomness taken outside the RandomSource")

    for name in ("default_rng", "random", "randint", "integers", "Generator", "PCG64", "bit_generator"):
        if hasattr(np.random, name):
            monkeypatch.setattr(np.random, name, broken)
    for name in ("random", "getrandbits", "randrange", "randint"):
        monkeypatch.setattr(random, name, broken)
    monkeypatch.setattr(os, "urandom", broken)
    first, again = HashedWords(b"same"), HashedWords(b"same")
    one = discrete_gaussian_array(Fraction(25), 5000, first)
    two = discrete_gaussian_array(Fraction(25), 5000, again)
    assert np.array_equal(one, two) and first.given == again.given > 0
    other = discrete_gaussian_array(Fraction(25), 5000, HashedWords(b"other"))
    assert not np.array_equal(one, other)


@pytest.mark.parametrize(("r", "sigma", "squared"), [(1, 3, False), (2, 3, False), (5, 6, True), (3, 3, False),
                                                     (0, 9, True), (999, 1000, True)])
def test_each_acceptance_factor_is_its_exponential(r: int, sigma: int, squared: bool) -> None:
    """The building block: Bernoulli(exp(-r/sigma)) or Bernoulli(exp(-(r/sigma)^2/2)),
    its frequency against the exact value (binomial test)."""
    n = 200_000
    ones = int(samplers._bernoulli_exp_ratio(np.full(n, r, dtype=np.int64), sigma, squared, SeededSource(r + sigma))
               .sum())
    x = (r / sigma) ** 2 / 2 if squared else r / sigma
    if r == 0:
        assert ones == n
        return
    assert stats.binomtest(ones, n, math.exp(-x)).pvalue > ALPHA


def test_scales_the_batches_do_not_take_go_one_at_a_time() -> None:
    """sigma^2 = 9/2 has no whole sigma: `discrete_gaussian` keeps the exact
    rational path; the batch function refuses it rather than round it."""
    with pytest.raises(ValueError, match="square of a whole number"):
        discrete_gaussian_array(Fraction(9, 2), 10, SeededSource(1))
    with pytest.raises(ValueError, match="square of a whole number"):
        discrete_gaussian_array(Fraction(8), 10, SeededSource(1))
    draws = discrete_gaussian(Fraction(9, 2), 40, SeededSource(2))
    assert len(draws) == 40 and all(isinstance(d, int) for d in draws)


def test_a_long_vector_release_uses_the_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzzpy.runtime import noise

    calls: list[int] = []
    real = noise.discrete_gaussian_array

    def spy(sigma2: Fraction, count: int, source: RandomSource) -> np.ndarray:
        calls.append(count)
        return real(sigma2, count, source)

    monkeypatch.setattr(noise, "discrete_gaussian_array", spy)
    out = noise.gauss_release(np.arange(1000, dtype=np.int64), Fraction(5), SeededSource(8))
    assert calls == [1000] and out.shape == (1000,)
    assert abs(float(np.std(out.astype(float) - np.arange(1000))) - 5) < 0.5


@pytest.mark.parametrize("bound", [1, 3, 2**32 + 5, 2**33, 3 * 2**40 + 1, 2**61, 2**62 - 1])
def test_uniform_by_remainder_is_uniform_and_in_range(bound: int) -> None:
    """The Gaussian's wide uniform draws (a word's remainder): in range, and
    each of (up to) 8 equal slices of [0, bound) as often as the others."""
    draws = SeededSource(bound % 1000).below_by_remainder(bound, 160_000)
    assert draws.dtype == np.int64 and draws.min() >= 0 and draws.max() < bound
    parts = min(8, bound)
    slices = np.bincount((draws.astype(object) * parts // bound).astype(np.int64), minlength=parts)
    assert parts == 1 or stats.chisquare(slices).pvalue > ALPHA


def test_uniform_by_remainder_draws_again_above_the_last_multiple() -> None:
    """Words at or above 2^64 - (2^64 mod bound) are not used: a source whose
    first words all lie there gives the draws of the words after them."""

    class Scripted(RandomSource):
        def __init__(self, words: list[int]) -> None:
            super().__init__()
            self.left = list(words)

        def _generate(self, count: int) -> np.ndarray:
            taken, self.left = self.left[:count], self.left[count:]
            return np.array(taken + [0] * (count - len(taken)), dtype=np.uint64)

    bound = 3 * 2**60  # 2^64 = 5 bound + 2^60: words from 15 * 2^60 on are drawn again
    limit = 15 * 2**60
    source = Scripted([5, 2**64 - 1, limit + 7, limit, 9, 2**60 + 4, limit - 1])
    assert source.below_by_remainder(bound, 4).tolist() == [5, 9, 2**60 + 4, bound - 1]


@pytest.mark.parametrize("den", [1, 2, 5])
def test_bernoulli_exp_of_a_unit_fraction(den: int) -> None:
    n = 200_000
    ones = int(samplers._bernoulli_exp_one(n, SeededSource(den), den).sum())
    assert stats.binomtest(ones, n, math.exp(-1 / den)).pvalue > ALPHA
