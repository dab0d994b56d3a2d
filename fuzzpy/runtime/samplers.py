"""Exact integer samplers (Canonne, Kamath & Steinke, "The Discrete Gaussian
for Differential Privacy", NeurIPS 2020), vectorised over numpy int64 arrays.

Only uniform random words enter (`RandomSource`); every step is an exact
comparison of integers, so the output distributions are exactly the stated
ones. Vectorising keeps exactness: each rejection loop runs on the whole array
of still-pending draws at once, and a draw's fate depends only on its own
random words, never on the other draws or on floating-point arithmetic.

* `bernoulli_exp`      Bernoulli(exp(-n/d)) for integer n >= 0, d >= 1 (CKS Alg. 1)
* `discrete_laplace`   P(Z = z) proportional to exp(-|z| / t), integer t >= 1 (CKS Alg. 2)
* `geometric`          P(X = x) proportional to exp(-x / t) on x >= 0 (one-sided)
* `geometric_noise`    P(Z = z) proportional to exp(-eps |z|), rational eps (CKS Alg. 2 with s/t = eps)
* `geometric_steps`    P(Y = y) proportional to exp(-eps y) on y >= 0, rational eps (its magnitude)
* `discrete_gaussian`  P(Z = z) proportional to exp(-z^2 / (2 sigma^2)), rational sigma^2 (CKS Alg. 3);
  `discrete_gaussian_array` its batches for a whole sigma (int64 throughout)
* `bernoulli_exp_fraction`  the same as `bernoulli_exp` for one arbitrary rational
"""

from __future__ import annotations

import math
from fractions import Fraction

from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

_MAX_BOUND = 2**62


def _bernoulli_exp_at_most_one(num: np.ndarray, den: int, source: RandomSource) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS Algorithm 1).

    K = 1; draw A ~ Bernoulli(gamma / K) until A = 0; answer 1 iff K is odd.
    P(answer 1) = sum_k (-gamma)^k / k! = exp(-gamma). All pending draws share
    the same K in a round, so Bernoulli(gamma/K) is one exact comparison
    `uniform below den*K < num`.
    """
    result = np.zeros(num.size, dtype=bool)
    pending = np.arange(num.size)
    k = 1
    while pending.size:
        if den * k >= _MAX_BOUND:  # probability below 1/k! for k this large
            raise OverflowError("Bernoulli(exp(-x)) loop ran past the integer range")
        success = source.below(den * k, pending.size) < num[pending]
        result[pending[~success]] = k % 2 == 1
        pending = pending[success]
        k += 1
    return result


def bernoulli_exp(num: np.ndarray, den: int, source: RandomSource) -> np.ndarray:
    """Bernoulli(exp(-num/den)) elementwise, for integers num >= 0, den >= 1.

    For gamma > 1, exp(-gamma) = exp(-1)^floor(gamma) * exp(-frac(gamma)): all
    floor(gamma) draws of Bernoulli(exp(-1)) and one of the fraction must be 1.
    """
    num = np.asarray(num, dtype=np.int64)
    whole, frac = np.divmod(num, den)
    alive = _bernoulli_exp_at_most_one(frac, den, source)
    remaining = whole.copy()
    candidates = np.flatnonzero(alive & (remaining > 0))
    while candidates.size:
        ok = _bernoulli_exp_one(candidates.size, source)
        alive[candidates[~ok]] = False
        remaining[candidates] -= 1
        candidates = candidates[ok & (remaining[candidates] > 0)]
    return alive


def _bernoulli_exp_one(count: int, source: RandomSource, den: int = 1) -> np.ndarray:
    """`count` draws of Bernoulli(exp(-1/den)): `_bernoulli_exp_at_most_one`
    with num = 1 (the same words, the same answers), without its gathers.
    A ~ Bernoulli(1/(den K)) is `below(den K) == 0`; below(1) takes no word."""
    result = np.ones(count, dtype=bool)  # A = 0 at K = 1: the answer is 1
    pending = np.arange(count)
    k = 1
    while pending.size:
        if den * k >= _MAX_BOUND:
            raise OverflowError("Bernoulli(exp(-x)) loop ran past the integer range")
        result[pending] = k % 2 == 1  # the answer of those whose A is 0 at this K
        pending = pending[source.below(den * k, pending.size) == 0]
        k += 1
    return result


def _geometric_exp1(count: int, source: RandomSource) -> np.ndarray:
    """Number of successes of Bernoulli(exp(-1)) before the first failure:
    P(V = v) = (1 - e^-1) e^-v."""
    result = np.zeros(count, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        pending = pending[_bernoulli_exp_one(pending.size, source)]
        result[pending] += 1
    return result


def _one_sided(t: int, count: int, source: RandomSource) -> np.ndarray:
    """`count` or fewer draws of X with P(X = x) proportional to exp(-x/t), x >= 0.

    U uniform in [0, t) kept with probability exp(-U/t), V ~ Geometric(exp(-1)),
    X = U + t V: then P(X = x) = P(U = x mod t) exp(-(x mod t)/t) P(V = x div t)
    / P(kept), proportional to exp(-x/t) (the first half of CKS Algorithm 2).
    """
    u = source.below(t, count)
    u = u[bernoulli_exp(u, t, source)]
    v = _geometric_exp1(u.size, source)
    if v.size and int(v.max()) >= _MAX_BOUND // t:
        raise OverflowError("discrete Laplace draw outside the integer range")
    return u + t * v


def geometric(t: int, count: int, source: RandomSource) -> np.ndarray:
    """`count` draws with P(X = x) proportional to exp(-x/t) on x >= 0."""
    _check_scale(t)
    if count <= _SCALAR_COUNT:
        return np.array([_one_sided_scalar(t, source) for _ in range(count)], dtype=np.int64)
    return _fill(count, lambda need: _one_sided(t, need, source))


def discrete_laplace(t: int, count: int, source: RandomSource) -> np.ndarray:
    """`count` draws with P(Z = z) = (1 - e^(-1/t)) / (1 + e^(-1/t)) exp(-|z|/t).

    CKS Algorithm 2 (with s = 1): a one-sided draw X and a fair sign B,
    rejecting (B = negative, X = 0) so that zero is not counted twice.
    """
    _check_scale(t)
    if count <= _SCALAR_COUNT:
        return np.array(discrete_laplace_ints(t, count, source), dtype=np.int64)

    def batch(need: int) -> np.ndarray:
        x = _one_sided(t, need, source)
        negative = source.bits(x.size)
        keep = ~(negative & (x == 0))
        return np.where(negative, -x, x)[keep]

    return _fill(count, batch)


def _fill(count: int, batch) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Concatenate accepted draws of `batch(n)` until there are `count`."""
    parts: list[np.ndarray] = []
    have = 0
    while have < count:
        need = count - have
        drawn = batch(need + need // 2 + 16)[:need]
        parts.append(drawn)
        have += drawn.size
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------- one draw at a time
# The same algorithms on Python integers: for a handful of draws (mechanism
# bodies, scalar releases) this avoids numpy's per-call overhead.

_SCALAR_COUNT = 16


def _bernoulli_exp_unit_scalar(num: int, den: int, source: RandomSource) -> bool:
    """Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS Algorithm 1)."""
    k = 1
    while source.below_one(den * k) < num:
        k += 1
    return k % 2 == 1


def _one_sided_scalar(t: int, source: RandomSource) -> int:
    while True:
        u = source.below_one(t)
        if not _bernoulli_exp_unit_scalar(u, t, source):
            continue
        v = 0
        while _bernoulli_exp_unit_scalar(1, 1, source):
            v += 1
        return u + t * v


def _laplace_scalar(t: int, source: RandomSource) -> int:
    while True:
        x = _one_sided_scalar(t, source)
        negative = source.below_one(2) == 1
        if not (negative and x == 0):
            return -x if negative else x


def discrete_laplace_ints(t: int, count: int, source: RandomSource) -> list[int]:
    """A few draws of `discrete_laplace` (the same draws from the same words),
    as Python integers, without numpy."""
    _check_scale(t)
    return [_laplace_scalar(t, source) for _ in range(count)]


def geometric_noise(epsilon: Fraction, count: int, source: RandomSource) -> list[int]:
    """`count` draws with P(Z = z) proportional to exp(-eps |z|) for a rational
    eps = n / d: CKS Algorithm 2 with its two integers (s, t) = (n, d). A
    one-sided X with P(X = x) proportional to exp(-x / d) (`_one_sided_scalar`),
    Y = floor(X / n): P(Y = y) is proportional to sum_{j < n} exp(-(y n + j) / d),
    which is exp(-eps y) times a constant; a fair sign, rejecting (negative, 0)
    so that zero is not counted twice. Python integers throughout."""
    if Fraction(epsilon) <= 0:
        raise ValueError("eps must be positive")
    _check_scale(Fraction(epsilon).denominator)
    out: list[int] = []
    while len(out) < count:
        y = geometric_steps(epsilon, source)
        negative = source.below_one(2) == 1
        if not (negative and y == 0):
            out.append(-y if negative else y)
    return out


def geometric_steps(epsilon: Fraction, source: RandomSource) -> int:
    """One draw with P(Y = y) = (1 - e^-eps) e^(-eps y) on y >= 0, for a
    rational eps = n / d: Y = floor(X / n) with P(X = x) proportional to
    exp(-x / d) (`_one_sided_scalar`), so P(Y = y) is proportional to
    sum_{j < n} exp(-(y n + j) / d), exp(-eps y) times a constant (CKS 2020,
    Alg. 2 with (s, t) = (n, d))."""
    n, d = Fraction(epsilon).numerator, Fraction(epsilon).denominator
    if n <= 0:
        raise ValueError("eps must be positive")
    _check_scale(d)
    return _one_sided_scalar(d, source) // n


def _check_scale(t: int) -> None:
    if not 1 <= t < 2**58:
        raise ValueError(f"discrete noise scale {t} outside [1, 2^58)")


# ---------------------------------------------------------------- Python-integer paths


def bernoulli_exp_fraction(gamma: Fraction, source: RandomSource) -> bool:
    """Bernoulli(exp(-gamma)) for one rational gamma >= 0 of any size."""
    if gamma < 0:
        raise ValueError("gamma must be non-negative")
    whole = math.floor(gamma)
    for _ in range(whole):
        if not _bernoulli_exp_fraction_unit(Fraction(1), source):
            return False
    return _bernoulli_exp_fraction_unit(gamma - whole, source)


def _bernoulli_exp_fraction_unit(gamma: Fraction, source: RandomSource) -> bool:
    return _bernoulli_exp_unit_scalar(gamma.numerator, gamma.denominator, source)


def discrete_gaussian(sigma2: Fraction, count: int, source: RandomSource) -> list[int]:
    """`count` draws of the discrete Gaussian N_Z(0, sigma2) (CKS Algorithm 3),
    as Python integers: `discrete_gaussian_array` when sigma is a whole number
    (every runtime release: `noise.gauss_release`), else one candidate at a
    time with exact rationals (`discrete_gaussian_fractions`)."""
    if sigma2 <= 0:
        raise ValueError("sigma^2 must be positive")
    if count > _SCALAR_COUNT and _whole_sigma(sigma2) is not None:
        return discrete_gaussian_array(sigma2, count, source).tolist()
    return discrete_gaussian_fractions(sigma2, count, source)


def discrete_gaussian_fractions(sigma2: Fraction, count: int, source: RandomSource) -> list[int]:
    """`count` draws of N_Z(0, sigma2) for any rational sigma2 > 0 (CKS Algorithm 3).

    Propose Y from the discrete Laplace of scale t = floor(sigma) + 1 and accept
    with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)); the acceptance
    test is done with exact rationals (Python integers of any size).
    """
    if sigma2 <= 0:
        raise ValueError("sigma^2 must be positive")
    t = math.isqrt(math.floor(sigma2)) + 1
    out: list[int] = []
    while len(out) < count:
        need = count - len(out)
        for y in discrete_laplace(t, need + need // 2 + 4, source).tolist():
            gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
            if bernoulli_exp_fraction(gamma, source):
                out.append(y)
                if len(out) == count:
                    break
    return out


# ---------------------------------------------------------------- the discrete Gaussian in batches
# CKS Algorithm 3 is exact for every scale t > 0 of its discrete Laplace
# proposal, not only t = floor(sigma) + 1: Y accepted has a probability
# proportional to exp(-|y|/t) exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)) =
# exp(-y^2 / (2 sigma^2)) exp(-sigma^2 / (2 t^2)), whose last factor does not
# depend on y (t sets only the acceptance rate, best at t = sigma). With
# t = sigma whole, and the Laplace's magnitude drawn as in Algorithm 2,
# |Y| = u + sigma v (u uniform in [0, sigma), v geometric: P(v) = (1 - 1/e) e^-v),
# the two acceptance steps (Algorithm 2's exp(-u/sigma), Algorithm 3's) combine
# into one: the target over the proposal is, up to a constant,
#   exp(-(u + sigma v)^2 / (2 sigma^2)) / e^-v
#     = exp(-u^2 / (2 sigma^2)) * exp(-u/sigma)^v * exp(-(v - 1)^2 / 2) * e^(1/2),
# three factors at most 1, each a Bernoulli(exp(-x)) with x a ratio of small
# int64s: every comparison is one of exact uniform integers drawn from the
# run's `RandomSource`, no number leaves the int64 range and no float enters.

#: The largest sigma the batch sampler takes (t = sigma is within `_check_scale`).
_MAX_BATCH_SIGMA = 2**57


def _whole_sigma(sigma2: Fraction) -> int | None:
    """sigma when sigma2 is the square of a whole number the batch sampler takes."""
    if sigma2.denominator != 1 or sigma2 <= 0:
        return None
    root = math.isqrt(sigma2.numerator)
    return root if root * root == sigma2.numerator and root < _MAX_BATCH_SIGMA else None


def discrete_gaussian_array(sigma2: Fraction, count: int, source: RandomSource) -> np.ndarray:
    """`count` draws of N_Z(0, sigma2) as int64, for sigma2 the square of a
    whole number: exact, by CKS Algorithms 2 and 3 with t = sigma, the
    acceptance tests vectorised over a batch of proposals (the comment above)."""
    sigma = _whole_sigma(Fraction(sigma2))
    if sigma is None:
        raise ValueError(f"the batch discrete Gaussian needs sigma^2 the square of a whole number below 2^114, "
                         f"got {sigma2}")
    parts: list[np.ndarray] = []
    have = 0
    while have < count:
        need = count - have
        # about 0.48 of the proposals are kept: (1 - 1/e) e^(-1/2) sqrt(2 pi) / 2
        drawn = _gaussian_batch(sigma, int(need / 0.46) + 16, source)[:need]
        parts.append(drawn)
        have += drawn.size
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _gaussian_batch(sigma: int, proposals: int, source: RandomSource) -> np.ndarray:
    """The accepted draws among `proposals` (the comment above)."""
    u = _uniform(sigma, proposals, source)
    u = u[_bernoulli_exp_ratio(u, sigma, True, source)]  # exp(-u^2 / (2 sigma^2))
    v = _geometric_exp1(u.size, source)
    if v.size and int(v.max()) >= min(_MAX_BOUND // sigma, 2**31):
        raise OverflowError("discrete Gaussian draw outside the integer range")
    keep = np.ones(u.size, dtype=bool)  # exp(-(v - 1)^2 / 2): 1 at v = 1
    half = np.flatnonzero((v == 0) | (v == 2))  # exp(-1/2), most of the others
    keep[half] = _bernoulli_exp_one(half.size, source, 2)
    far = np.flatnonzero(v > 2)
    keep[far] = bernoulli_exp((v[far] - 1) ** 2, 2, source)
    u, v = u[keep], v[keep]
    keep = np.ones(u.size, dtype=bool)
    steps = v.copy()
    left = np.flatnonzero(steps > 0)
    while left.size:  # v draws of exp(-u / sigma), each only while all before it were 1
        ok = _bernoulli_exp_ratio(u[left], sigma, False, source)
        keep[left[~ok]] = False
        steps[left] -= 1
        left = left[ok & (steps[left] > 0)]
    x = u[keep] + sigma * v[keep]
    negative = source.bits(x.size)
    return np.where(negative, -x, x)[~(negative & (x == 0))]  # zero is not counted twice (CKS Alg. 2)


def _uniform(bound: int, count: int, source: RandomSource) -> np.ndarray:
    """Exact uniform integers in [0, bound): a 64-bit word's remainder when
    the bound needs more than 32 bits (`RandomSource.below_by_remainder`),
    else a chunk of a word (`RandomSource.below`)."""
    return source.below_by_remainder(bound, count) if bound > 2**32 else source.below(bound, count)


def _bernoulli_exp_ratio(r: np.ndarray, sigma: int, squared: bool, source: RandomSource) -> np.ndarray:
    """Bernoulli(exp(-x)) elementwise for x = r/sigma, or x = (r/sigma)^2 / 2
    when `squared`, 0 <= r < sigma (CKS Algorithm 1: K = 1; A ~ Bernoulli(x/K)
    until A = 0; 1 iff K is odd). Bernoulli(x/K) is the AND of independent
    exact draws: `below(sigma) < r` (twice and a fair bit when squared) and
    `below(K) == 0` -- the product of their probabilities is x/K."""
    result = np.ones(r.size, dtype=bool)  # answer 1 when A = 0 at K = 1 (always so when r = 0)
    pending = np.arange(r.size)
    k = 1
    while pending.size:
        if k > 1:
            result[pending] = k % 2 == 1  # those whose A is 0 in this round keep this answer
        # each factor is drawn only for the draws whose earlier factors were 1,
        # the cheap and selective ones first (a fair bit is 1/64 of a word)
        chosen = pending
        if squared:
            chosen = chosen[source.bits(chosen.size)]
        if k > 1:
            chosen = chosen[source.below(k, chosen.size) == 0]
        chosen = chosen[_uniform(sigma, chosen.size, source) < r[chosen]]
        if squared:
            chosen = chosen[_uniform(sigma, chosen.size, source) < r[chosen]]
        pending = chosen
        k += 1
    return result


def bernoulli(p: Fraction, count: int, source: RandomSource) -> np.ndarray:
    """`count` exact Bernoulli(p) draws for a rational p in [0, 1]."""
    if not 0 <= p <= 1:
        raise ValueError("a probability must lie in [0, 1]")
    if p.denominator >= _MAX_BOUND:
        p = Fraction(math.floor(p * 2**61), 2**61)  # never more likely than p
    return source.below(p.denominator, count) < p.numerator


def subset_without_replacement(n: int, m: int, source: RandomSource) -> np.ndarray:
    """m distinct positions of [0, n), every m-subset equally likely, sorted
    (0 < m < n). Floyd's algorithm (Bentley & Floyd, CACM 1987): for j = n-m
    .. n-1 draw t uniform in [0, j]; take t, or j if t is taken. By
    induction each step leaves a uniform subset of [0, j] of its size; the
    draws are exact (`RandomSource.below`)."""
    if not 0 < m < n:
        raise ValueError(f"need 0 < m < n, got m={m}, n={n}")
    chosen: set[int] = set()
    for j in range(n - m, n):
        t = int(source.below(j + 1, 1)[0]) if j > 0 else 0
        chosen.add(j if t in chosen else t)
    return np.fromiter(sorted(chosen), dtype=np.int64, count=m)


def draws_with_replacement(n: int, m: int, source: RandomSource) -> np.ndarray:
    """m independent uniform positions of [0, n), sorted (none for n = 0)."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.sort(source.below(n, m)) if n > 1 else np.zeros(m, dtype=np.int64)
