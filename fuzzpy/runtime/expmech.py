"""The exponential mechanism, sampled exactly.

`expmech[eps]` picks candidate i with probability proportional to
exp(eps * q_i / 2) (McSherry & Talwar 2007). The usual float implementations
(softmax, or the Gumbel-max trick) round the probabilities and are not exact.
Here every score is an exact rational (macro-level numbers are exact), and
the choice is made by rejection:

    repeat: draw i uniformly; accept with probability exp(-eps (m - q_i) / 2),

where m = max_j q_j, each acceptance an exact Bernoulli(exp(-gamma)) with a
rational gamma (Canonne, Kamath & Steinke 2020, Algorithm 1). An accepted i
has probability proportional to exp(eps q_i / 2) / exp(eps m / 2), exactly the
mechanism's distribution; the expected number of rounds is at most the number
of candidates (the best one is always accepted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import bernoulli_exp_fraction
from fuzzpy.runtime.values import RuntimeFailure


def exponential_mechanism(scores: Sequence[int | Fraction | float], eps: Fraction, source: RandomSource) -> int:
    """The index chosen with probability proportional to exp(eps * score / 2)."""
    if any(isinstance(s, float) and not math.isfinite(s) for s in scores):
        raise RuntimeFailure("FZ518", "`expmech` scores must be finite numbers")
    exact = [Fraction(s) for s in scores]
    best = max(exact)
    gaps = [eps * (best - q) / 2 for q in exact]
    n = len(exact)
    while True:
        i = source.big_below(n)
        if bernoulli_exp_fraction(gaps[i], source):
            return i
