"""Propose-test-release for the median (`ptr_median[eps, delta, b] db`) and
for quantiles (`ptr_quantile[eps, delta, b, p] db`, at the end of the module).

Dwork & Lei (STOC 2009, Sec. 3) release a statistic whose *local*
sensitivity is small on the data at hand, paying only when a test says it is
safe to: propose a bound b, compute the distance d from the data to the
nearest dataset whose local sensitivity exceeds b, test a noisy d against a
threshold, and release the statistic with noise for sensitivity b or answer
"no answer". The generic framework is Dwork & Roth (2014), Sec. 7.3; the
privacy argument is repeated in docs/semantics.md.

Everything here is exact and depends only on the multiset of values, so the
in-memory interpreter and every engine compute the same d from the same
sorted values (an engine sends its values; the function is this one).

**The median.** For a bag of n numbers sorted x_1 <= ... <= x_n, the median
is the lower median x_m, m = ceil(n / 2) (a data value; no averaging); the
median of an empty bag is 0.

**Local sensitivity** under add/remove-one neighbours, with x_i = -inf for
i <= 0 and x_i = +inf for i > n: LS(x) = x_{j+1} - x_j with j = floor(n / 2).
(Adding a row anywhere, or removing one, moves the median within
[x_j, x_{j+1}] and the median is one of its ends.) For n <= 1 it is infinite.

**Distance to instability.** d(x) = min { dist(x, y) : LS(y) > b }, dist the
number of rows added or removed. With t steps the widest median gap any y can
have is x_{hi(t)} - x_{lo(t)}, lo(t) = ceil((n - 1 - t) / 2), hi(t) = lo(t) +
t + 1: a gap (x_i, x_k) becomes y's median gap after removing the k - i - 1
rows between them and then max(0, n - i - k, i + k - n - 1) rows added far
below or above to centre it, in all max(k - i - 1, n - 1 - 2i, 2k - n - 2)
steps; for a given t the pairs within that budget lie inside the window
[lo(t), hi(t)], whose own gap is the widest. An added row never makes a wider
gap than an existing or infinite end would. Hence

    d(x) = min { t >= 0 : x_{hi(t)} - x_{lo(t)} > b },

at most max(n - 1, 0) (the window then reaches -inf). `distance_brute` in the
tests checks this against a search over all small neighbours.

**The test.** d moves by at most 1 between neighbours (a distance to a set).
It is released as d + Z with Z two-sided geometric at eps (P(Z = z)
proportional to exp(-eps |z|): eps-DP for an integer of sensitivity 1, Ghosh,
Roughgarden & Sundararajan 2009), the exact integer analogue of Dwork & Lei's
d + Lap(1/eps); the test passes when d + Z >= K, K the least integer at or
above ln(1/delta) / eps. With d = 0, P(pass) = P(Z >= K) = e^(-eps K) / (1 +
e^-eps) < delta.

**The release.** When the test passes, the median plus Laplace noise of scale
b / eps on the runtime's exact grid (`noise.laplace_release_one`: eps-DP for
a value that moves by at most b, eps >= 2^-23), wrapped `inl m`; otherwise
`inr ()`: "no answer".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, overload

from fuzzpy.runtime.noise import laplace_release_one
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import geometric_noise
from fuzzpy.runtime.values import Inl, Inr, RuntimeFailure, Value
from fuzzpy.support.records import frozen

#: The smallest eps the exact Laplace grid serves for a release of one value
#: at relative cost eps (`noise.MIN_RELATIVE_COST`).
MIN_EPSILON = Fraction(1, 2**23)


def lower_median(values: Sequence[Fraction]) -> Fraction:
    """x_m, m = ceil(n / 2), of sorted ``values`` (1-indexed); 0 when empty."""
    n = len(values)
    return values[(n + 1) // 2 - 1] if n else Fraction(0)


def window(n: int, t: int) -> tuple[int, int]:
    """(lo(t), hi(t)): the 1-indexed ends of the widest median gap reachable
    in t add/remove steps from n sorted values (indices outside 1..n stand
    for -inf and +inf)."""
    lo = -((t + 1 - n) // 2)  # ceil((n - 1 - t) / 2)
    return lo, lo + t + 1


def _gap_exceeds(values: Sequence[Fraction], lo: int, hi: int, b: Fraction) -> bool:
    if lo <= 0 or hi > len(values):
        return True  # an infinite end
    return values[hi - 1] - values[lo - 1] > b


def local_sensitivity_exceeds(values: Sequence[Fraction], b: Fraction) -> bool:
    """LS(x) > b (the window at t = 0)."""
    return _gap_exceeds(values, *window(len(values), 0), b)


def distance_to_instability(values: Sequence[Fraction], b: Fraction) -> int:
    """d(x): the least t with x_{hi(t)} - x_{lo(t)} > b, for sorted exact
    ``values`` (module note). The gap only widens with t, so the first t
    found is the least."""
    n = len(values)
    for t in range(max(n - 1, 0) + 1):
        if _gap_exceeds(values, *window(n, t), b):
            return t
    return max(n - 1, 0)  # not reached: the window at t = n - 1 has lo <= 0


@lru_cache(maxsize=64)
def threshold(epsilon: Fraction, delta: Fraction) -> int:
    """K = ceil(ln(1/delta) / eps), exactly: the least integer K >= 1 with
    e^(eps K) >= 1/delta, decided in mpmath at rising precision with a margin
    (ln(1/delta) / eps is irrational for rational 0 < delta < 1, so a
    precision that decides it exists)."""
    if not (0 < delta < 1 and epsilon > 0):
        raise RuntimeFailure("FZ517", "ptr_median needs eps > 0 and 0 < delta < 1")
    import mpmath

    bits = 128
    while bits <= 1 << 16:
        with mpmath.workprec(bits):
            quotient = mpmath.log(mpmath.mpf(delta.denominator) / delta.numerator) / (
                mpmath.mpf(epsilon.numerator) / epsilon.denominator)
            # a few operations, each within a relative 2^-bits: ceil is decided
            # when the value is farther than 2^(16 - bits) |T| from an integer
            margin = abs(quotient) * mpmath.mpf(2) ** (16 - bits) + mpmath.mpf(2) ** (16 - bits)
            low, high = int(mpmath.ceil(quotient - margin)), int(mpmath.ceil(quotient + margin))
        if low == high:
            return max(low, 1)
        bits *= 4
    raise RuntimeFailure("FZ517", "ptr_median: ln(1/delta)/eps could not be rounded up exactly")


class _Exact(Sequence[Fraction]):
    """A sorted int64 / float64 array read as exact numbers, each converted
    when it is read (the distance reads about 2 d of the n values)."""

    def __init__(self, array: Any) -> None:  # a sorted one-dimensional numpy array
        self._array = array

    def __len__(self) -> int:
        return len(self._array)

    @overload
    def __getitem__(self, index: int) -> Fraction: ...

    @overload
    def __getitem__(self, index: slice) -> list[Fraction]: ...

    def __getitem__(self, index: int | slice) -> Fraction | list[Fraction]:
        if isinstance(index, slice):
            return [Fraction(v) for v in self._array[index].tolist()]
        return Fraction(self._array[index].item())


def sorted_exact(column: object, what: str = "ptr_median") -> Sequence[Fraction]:
    """A bag's numbers (an int64 / float64 / object column) sorted, each read
    as its exact value (a double stands for itself)."""
    import numpy as np

    array = np.asarray(column)
    if array.dtype.kind == "b":
        array = array.astype(np.int64)
    if array.dtype.kind == "f" and not bool(np.all(np.isfinite(array))):
        raise RuntimeFailure("FZ516", f"`{what}` reads numbers, and a row is not a finite number")
    if array.dtype.kind in "iuf":
        return _Exact(np.sort(array))  # the order of doubles and of int64s is their exact order
    try:
        return sorted(Fraction(v) for v in array.tolist())
    except (TypeError, ValueError):
        raise RuntimeFailure("FZ516", f"`{what}` reads a bag of numbers") from None


@frozen
class Prepared:
    """What a run of the mechanism reads from the data: the lower median and
    the distance to instability (computed once per bag, whatever the number
    of draws)."""

    median: Fraction
    distance: int


def prepare(values: Sequence[Fraction], bound: Fraction) -> Prepared:
    """The median and d of sorted exact ``values`` at the bound b."""
    return Prepared(lower_median(values), distance_to_instability(values, bound))


def draw(prepared: Prepared, epsilon: Fraction, delta: Fraction, bound: Fraction, source: RandomSource) -> Value:
    """One run of the mechanism: `inl` the noisy median or `inr ()`. The
    test's draw comes first, the release's second, on every engine."""
    if bound <= 0 or epsilon < MIN_EPSILON:
        raise RuntimeFailure("FZ517", "ptr_median needs b > 0 and eps >= 2^-23")
    k = threshold(epsilon, delta)
    noisy = prepared.distance + geometric_noise(epsilon, 1, source)[0]
    if noisy < k:
        return Inr(None)
    return Inl(laplace_release_one(prepared.median, bound / epsilon, source))


def ptr_median(values: Sequence[Fraction], epsilon: Fraction, delta: Fraction, bound: Fraction,
               source: RandomSource) -> Value:
    """`prepare` and `draw` on sorted exact ``values``."""
    return draw(prepare(values, bound), epsilon, delta, bound, source)


# ---------------------------------------------------------------- quantiles (`ptr_quantile[eps, delta, b, p]`)
#
# The lower p-quantile of n >= 1 sorted values is x_m, m = ceil(p n) (the
# median's m at p = 1/2), 0 for no rows. The test, the release and the charge
# are the median's; only the statistic and its distance to instability
# differ. The distance is derived and proved in docs/semantics.md
# ("`ptr_quantile`"); in short, with x_0 = -inf and x_{n+1} = +inf:
#
# * a bag y of N rows is unstable (LS(y) > b) iff N <= 1 or one of its
#   *active* gaps (y_P, y_{P+1}) is wider than b, P in `active_gaps(N, p)`;
# * a cheapest way to an unstable bag removes the rows strictly inside one
#   gap (x_u, x_k) of x wider than b, k the least such index above u, and
#   then adds or removes rows below and above it until the gap is active:
#   w(u) = k - u - 1 removals, then `recentre` more steps; d is the least
#   w(u) + recentre(u, n + 1 - k) over u, and only u within c of
#   [ceil(p (n - c)) - 1, ceil(p (n + c))] can cost c or less.


def quantile_index(n: int, p: Fraction) -> int:
    """m = ceil(p n), the 1-indexed position of the lower p-quantile of n >= 1 values."""
    return -((-p.numerator * n) // p.denominator)


def lower_quantile(values: Sequence[Fraction], p: Fraction) -> Fraction:
    """x_m, m = ceil(p n), of sorted ``values``; 0 when empty (the median at p = 1/2)."""
    n = len(values)
    return values[quantile_index(n, p) - 1] if n else Fraction(0)


def active_gaps(size: int, p: Fraction) -> tuple[int, ...]:
    """The P (0 <= P <= N) whose gap (y_P, y_{P+1}) bounds how far one row added
    or removed moves the p-quantile of a bag of N = ``size`` rows, each such
    move reaching the gap's far end: P = M - 1 when a row added keeps the index
    M = ceil(p N) or a row removed lowers it, P = M when a row added raises it
    or a row removed keeps it. For N <= 1 every bag is unstable: (0,) and (0, 1)."""
    if size <= 1:
        return (0,) if size == 0 else (0, 1)
    m = quantile_index(size, p)
    up, down = quantile_index(size + 1, p), quantile_index(size - 1, p)
    lower = up == m or down == m - 1
    upper = up == m + 1 or down == m
    return tuple(g for g, on in ((m - 1, lower), (m, upper)) if on)


def recentre(u: int, v: int, p: Fraction, budget: int) -> int:
    """The fewest rows added or removed outside a gap with u rows at or below
    it and v rows at or above it (the -inf / +inf ends count as 0 rows) that
    make it an active gap of the resulting bag: min over N and P in
    `active_gaps(N)` of |P - u| + |N - P - v| = max(|N - s|, |2P - N - (u - v)|)
    (s = u + v), where no row of the gap's own ends is removed (P >= 1 when
    u >= 1, N - P >= 1 when v >= 1). Values >= ``budget`` are reported as
    ``budget`` (the caller needs nothing larger)."""
    s, skew = u + v, u - v
    reach = min(budget, s + 1)  # sizes s - reach < N < s + reach cost less than `budget` at best
    if p.numerator * (s + reach + 2) >= 2**62 or p.denominator >= 2**62:  # beyond int64: one size at a time
        return _recentre_slowly(u, v, p, budget)
    import numpy as np

    first, last = max(s - reach + 1, 0), s + reach - 1
    # 2P - N lies in [a N - 2, a N + 2), a = 2p - 1 (P = ceil(p N) or one less): a size whose
    # |2P - N - skew| cannot be below the budget is not looked at
    slope = 2 * p - 1
    if slope == 0:
        if abs(skew) >= budget + 2:
            first = last + 1
    else:
        ends = sorted(((skew - budget - 2) / slope, (skew + budget + 2) / slope))
        first, last = max(first, math.floor(ends[0])), min(last, math.ceil(ends[1]))
    sizes = np.arange(first, last + 1, dtype=np.int64)
    best = budget
    big = np.int64(budget)
    m = -((-p.numerator * sizes) // p.denominator)
    up = -((-p.numerator * (sizes + 1)) // p.denominator)
    down = -((-p.numerator * (sizes - 1)) // p.denominator)
    lower = (up == m) | (down == m - 1)
    upper = (up == m + 1) | (down == m)
    for gap, on in ((m - 1, lower), (m, upper)):
        ok = on & (sizes >= 2) & (gap >= min(u, 1)) & (sizes - gap >= min(v, 1))
        cost = np.maximum(np.abs(sizes - s), np.abs(2 * gap - sizes - skew))
        if sizes.size and ok.any():
            best = min(best, int(np.where(ok, cost, big).min()))
    for size in (0, 1):  # every bag of no row or one row is unstable (`active_gaps`)
        if s - reach < size < s + reach:
            best = min(best, _cost_at(size, u, v, p, budget))
    return best


def _cost_at(size: int, u: int, v: int, p: Fraction, budget: int) -> int:
    best = budget
    for gap in active_gaps(size, p):
        if gap >= min(u, 1) and size - gap >= min(v, 1):
            best = min(best, max(abs(size - u - v), abs(2 * gap - size - (u - v))))
    return best


def _recentre_slowly(u: int, v: int, p: Fraction, budget: int) -> int:
    s = u + v
    best = _cost_at(s, u, v, p, budget)
    for step in range(1, budget):
        if step >= best:
            break
        for size in (s - step, s + step):
            if size >= 0:
                best = min(best, _cost_at(size, u, v, p, budget))
    return best


def _widest_from(values: Sequence[Fraction], u: int, b: Fraction, budget: int) -> int | None:
    """w(u) = k - u - 1, k the least index above u with x_k - x_u > b (x_0 = -inf,
    x_{n+1} = +inf), when it is below ``budget``; else None. A binary search:
    the gap only widens with k."""
    n = len(values)
    if u == 0:
        return 0
    top = min(u + budget, n + 1)  # w < budget: k <= u + budget

    def wide(k: int) -> bool:
        return k > n or values[k - 1] - values[u - 1] > b

    if top <= u or not wide(top):
        return None
    low, high = u + 1, top  # the least wide k lies in [low, high]
    while low < high:
        mid = (low + high) // 2
        if wide(mid):
            high = mid
        else:
            low = mid + 1
    return low - u - 1


def quantile_distance(values: Sequence[Fraction], p: Fraction, b: Fraction) -> int:
    """d(x) for the lower p-quantile: the fewest rows added or removed to reach a
    bag whose p-quantile one more row moves by more than b (sorted exact
    ``values``; docs/semantics.md, "`ptr_quantile`"). At p = 1/2 it is
    `distance_to_instability`."""
    if p == Fraction(1, 2):  # the median's window formula: the same d (tested), in O(d) reads
        return distance_to_instability(values, b)
    return quantile_distance_by_search(values, p, b)


def quantile_distance_by_search(values: Sequence[Fraction], p: Fraction, b: Fraction) -> int:
    """`quantile_distance` by the search of Lemma Q2 (docs/semantics.md), for any p."""
    n = len(values)
    if n <= 1:
        return 0
    best = n - 1  # n - 1 rows removed: one row is unstable
    m = quantile_index(n, p)

    for step in itertools.count():
        c = best - 1  # a gap worth reading costs at most c: its lower end lies within c of an active position
        low = max(quantile_index(max(n - c, 0), p) - 1 - c, 0)
        high = min(quantile_index(n + c, p) + c, n)
        if m - step < low and m + step > high:
            break
        for u in sorted({m - step, m + step}):
            if not low <= u <= high:
                continue
            inside = _widest_from(values, u, b, best)
            if inside is not None:
                best = min(best, inside + recentre(u, n - u - inside, p, best - inside))
    return best


def prepare_quantile(values: Sequence[Fraction], bound: Fraction, p: Fraction) -> Prepared:
    """The lower p-quantile and its d of sorted exact ``values`` at the bound b."""
    return Prepared(lower_quantile(values, p), quantile_distance(values, p, bound))
