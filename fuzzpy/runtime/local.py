"""Exact samplers for randomized response and k-ary randomized response.

No floating-point coin: the report keeps the truth with probability exactly
e^eps / (e^eps + k - 1) for rational eps, by rejection from the project's
exact Bernoulli(exp(-gamma)) sampler (Canonne, Kamath & Steinke 2020, Alg. 1;
`samplers.bernoulli_exp_fraction`): propose a report uniformly among the k
values; accept the true value always and any other value with probability
e^{-eps}. A proposal is accepted with probability (1 + (k - 1) e^{-eps}) / k,
and given acceptance the report is the truth with probability
1 / (1 + (k - 1) e^{-eps}) = e^eps / (e^eps + k - 1), each other value with
1 / (e^eps + k - 1): exactly k-RR (Warner 1965 for k = 2; Wang et al. 2017).
"""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import bernoulli_exp_fraction


def krr(value: int, k: int, epsilon: Fraction, source: RandomSource) -> int:
    """One k-RR report of ``value`` in {0, .., k-1}."""
    if not 0 <= value < k:
        raise ValueError(f"k-RR value {value} outside 0..{k - 1}")
    if k == 1:
        return 0
    while True:
        proposal = source.below_one(k)
        if proposal == value or bernoulli_exp_fraction(Fraction(epsilon), source):
            return proposal


def rr(value: bool, epsilon: Fraction, source: RandomSource) -> bool:
    """One randomized-response report of a bit (k-RR with k = 2)."""
    return bool(krr(int(value), 2, epsilon, source))


def shuffled(values: list, source: RandomSource) -> list:  # type: ignore[type-arg]
    """A uniformly random permutation of ``values`` (Fisher-Yates with exact
    uniform integers): the shuffler of the shuffle model."""
    out = list(values)
    for i in range(len(out) - 1, 0, -1):
        j = source.below_one(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
