"""Smooth sensitivity for quantiles: `smooth_quantile[eps, delta, lo, hi, p] db`
and `smooth_median[eps, delta, lo, hi] db` (= p 1/2).

Nissim, Raskhodnikova & Smith ("Smooth sensitivity and sampling in private
data analysis", STOC 2007; NRS) add noise scaled to a *smooth upper bound*
S on the local sensitivity instead of the global one. The full argument,
for add/remove-one neighbours and any quantile, is in docs/semantics.md
("`smooth_quantile`"); in short:

**The statistic.** The rows are clamped to [lo, hi] (monotone: the sorted
order stays), sorted x_1 <= ... <= x_n and padded x_i = lo for i <= 0 and
x_i = hi for i > n (NRS Sec. 3.1). The lower p-quantile is x_m, m = ceil(p n)
(x_0 = lo for no rows).

**The bound.** With a rational ratio r > 1,

    S(x) = max over a <= m <= b, a < b, of r^-(b - a - 1) (x_b - x_a)
         = max_{k >= 0} r^-k max_{0 <= t <= k+1} (x_{m+t} - x_{m+t-k-1}),

NRS's median bound (Prop. 3.4) with e^beta replaced by r. U_k(x) =
max_t (x_{m+t} - x_{m+t-k-1}) satisfies U_0 >= LS and U_k(x) <= U_{k+1}(y)
for every neighbour y (a row added or removed shifts each order statistic by
at most one place and the quantile's index by at most one), so S(x) <= r S(y):
S is r-smooth (docs/semantics.md, Lemma S1; the tests check both by brute
force on every small bag).

**The noise.** The release is x_m + (S(x) / c) Z, c = eps / 2, Z a
continuous standard Laplace drawn exactly (`lazy_reals`), rounded to a grid
fixed by the statics (post-processing). r = 1 + 1/N with
N = max(ceil(ln(1/delta) / c), ceil(1 / c)): then ln r <= c and
c / (r - 1) >= ln(1/delta), which is what the dilation step needs (Lemma S2:
(eps, delta)-DP; NRS Lemma 2.6 with the constants derived for this r).

Everything before the draw is exact rational arithmetic on the data's exact
values; S is compared in a log domain only as a filter, every close call
decided exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

from fuzzpy.runtime import lazy_reals as R
from fuzzpy.runtime.ptr import quantile_index, threshold
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.values import RuntimeFailure
from fuzzpy.support.records import frozen

#: Bits of the output grid below the public noise scale 2 (hi - lo) / eps.
GRID_BITS = 32
#: The least eps (as the other exact releases'): N <= 2^24 ln(1/delta) + 1, so
#: ln r = log1p(1/N) is a normal double and the log-domain filter is sharp.
MIN_EPSILON = Fraction(1, 2**23)


@lru_cache(maxsize=64)
def ratio_steps(epsilon: Fraction, delta: Fraction) -> int:
    """N with r = 1 + 1/N: the least N >= ln(1/delta) / c and >= 1 / c, c = eps / 2
    (docs/semantics.md, Lemma S2). ceil(ln(1/delta) / c) is decided exactly
    (`ptr.threshold`)."""
    if not (epsilon >= MIN_EPSILON and 0 < delta < 1):
        raise RuntimeFailure("FZ517", "smooth_quantile needs eps >= 2^-23 and 0 < delta < 1")
    c = epsilon / 2
    return max(threshold(c, delta), math.ceil(1 / c))


def ratio(epsilon: Fraction, delta: Fraction) -> Fraction:
    """r = 1 + 1/N (`ratio_steps`): ln r <= 1/N <= eps / 2, and (eps / 2) / (r - 1) >= ln(1/delta)."""
    return 1 + Fraction(1, ratio_steps(epsilon, delta))


class Padded:
    """Sorted exact values clamped to [lo, hi], indexed from 1, with x_i = lo
    for i <= 0 and x_i = hi for i > n (NRS Sec. 3.1)."""

    def __init__(self, values: Sequence[Fraction], lo: Fraction, hi: Fraction) -> None:
        self.values, self.lo, self.hi, self.n = values, lo, hi, len(values)
        self._cache: dict[int, Fraction] = {}

    def __call__(self, i: int) -> Fraction:
        if i <= 0:
            return self.lo
        if i > self.n:
            return self.hi
        got = self._cache.get(i)
        if got is None:
            got = self._cache[i] = min(max(Fraction(self.values[i - 1]), self.lo), self.hi)
        return got


def quantile(x: Padded, p: Fraction) -> Fraction:
    """x_m, m = ceil(p n) (x_0 = lo for no rows)."""
    return x(quantile_index(x.n, p) if x.n else 0)


# ---------------------------------------------------------------- comparing D r^-k exactly


@frozen
class Scaled:
    """The number gap * r^-steps (gap >= 0), kept as its two parts."""

    gap: Fraction
    steps: int

    def value(self, r: Fraction) -> Fraction:
        return self.gap / r ** self.steps


def _log(x: Fraction) -> float:
    return math.log(x.numerator) - math.log(x.denominator)


def _log_ratio(r: Fraction) -> float:
    """ln r to a relative 2^-52 (log1p: r - 1 may be far below 2^-52)."""
    return math.log1p(float(r - 1))


def at_least(u: Scaled, v: Scaled, r: Fraction) -> bool:
    """u >= v, exactly: a log-domain filter, and exact powers when it is close."""
    if v.gap == 0:
        return True
    if u.gap == 0:
        return False
    difference = _log(u.gap) - _log(v.gap) - (u.steps - v.steps) * _log_ratio(r)
    if abs(difference) > 1e-6:
        return difference > 0
    if u.steps >= v.steps:
        return u.gap >= v.gap * r ** (u.steps - v.steps)
    return u.gap * r ** (v.steps - u.steps) >= v.gap


def _best_for(x: Padded, a: int, first: int, last: int, r: Fraction) -> tuple[int, Scaled]:
    """The least b in [first, last] maximising r^-(b - a - 1) (x_b - x_a)."""
    best_b, best = first, Scaled(x(first) - x(a), first - a - 1)
    for b in range(first + 1, last + 1):
        here = Scaled(x(b) - x(a), b - a - 1)
        if not at_least(best, here, r):
            best_b, best = b, here
    return best_b, best


def _search(x: Padded, m: int, a_range: tuple[int, int], b_range: tuple[int, int], r: Fraction) -> Scaled:
    """max over a in a_range, b in b_range, b >= max(m, a + 1) (NRS Sec. 3.1's
    divide and conquer): a maximiser's b never decreases as a grows (adding
    x_a - x_a' >= 0 to every gap favours the smaller powers), so the middle a's
    best b splits the b range of the two halves."""
    best = Scaled(Fraction(0), 0)
    stack = [(a_range, b_range)]
    while stack:
        (a_lo, a_hi), (b_lo, b_hi) = stack.pop()
        if a_lo > a_hi:
            continue
        a = (a_lo + a_hi) // 2
        first = max(b_lo, m, a + 1)
        if first > b_hi:  # no b for this a (only a = m = b_hi): the smaller a's keep the range
            stack.append(((a_lo, a - 1), (b_lo, b_hi)))
            continue
        b_star, here = _best_for(x, a, first, b_hi, r)
        if not at_least(best, here, r):
            best = here
        stack.append(((a_lo, a - 1), (b_lo, b_star)))
        stack.append(((a + 1, a_hi), (b_star, b_hi)))
    return best


def smooth_bound(x: Padded, p: Fraction, r: Fraction) -> Scaled:
    """S(x) = max over a <= m <= b, a < b, of r^-(b - a - 1) (x_b - x_a), exactly.

    Only 0 <= a and b <= n + 1 matter (the padding is constant beyond, and a
    pair farther apart has a larger power). A first lower bound L (the pair at
    each power of two of k) limits the pairs worth reading to b - a - 1 <= K,
    K the least k with r^-k (hi - lo) <= L (computed with a margin)."""
    n = x.n
    m = quantile_index(n, p) if n else 0
    lower = Scaled(Fraction(0), 0)
    k = 0
    while True:  # U_k's two end windows at k = 0, 1, 3, 7, ...: a lower bound, positive by k = n
        for a in (m - k - 1, m):
            a = max(a, 0)
            b = min(a + k + 1, n + 1)
            here = Scaled(x(b) - x(a), b - a - 1)
            if not at_least(lower, here, r):
                lower = here
        if k >= n:
            break
        k = min(2 * k + 1, n)
    span = x.hi - x.lo
    if lower.gap == 0:  # hi = lo is refused earlier; kept total
        return lower
    # r^-K span <= lower  <=>  K >= (log span - log lower) / log r; a margin of 2 steps
    reach = (_log(span) - _log(lower.gap)) / _log_ratio(r) + lower.steps + 2
    reach_steps = min(max(int(math.ceil(reach)), 0), n + 1)
    a_range = (max(m - reach_steps - 1, 0), m)
    b_range = (m, min(m + reach_steps + 1, n + 1))
    found = _search(x, m, a_range, b_range, r)
    return found if at_least(found, lower, r) else lower


# ---------------------------------------------------------------- the release


@frozen
class Prepared:
    """What a run reads from the data: the clamped quantile and S(x) (once per bag)."""

    quantile: Fraction
    bound: Fraction


def prepare(values: Sequence[Fraction], lo: Fraction, hi: Fraction, p: Fraction,
            epsilon: Fraction, delta: Fraction) -> Prepared:
    if not lo < hi:
        raise RuntimeFailure("FZ517", "smooth_quantile[eps, delta, lo, hi, p] needs lo < hi")
    x = Padded(values, lo, hi)
    r = ratio(epsilon, delta)
    return Prepared(quantile(x, p), smooth_bound(x, p, r).value(r))


def grid_exponent(epsilon: Fraction, lo: Fraction, hi: Fraction) -> int:
    """e of the output grid 2^e: GRID_BITS below the public scale 2 (hi - lo) / eps
    (statics only, never the data)."""
    bound = 2 * (hi - lo) / epsilon
    e = bound.numerator.bit_length() - bound.denominator.bit_length()
    if Fraction(2) ** e > bound:
        e -= 1
    return e - GRID_BITS


def draw(prepared: Prepared, epsilon: Fraction, lo: Fraction, hi: Fraction, source: RandomSource) -> Fraction:
    """x_m + (2 S(x) / eps) Z, Z ~ Lap(1) exact, rounded to the nearest point of
    the grid 2^e (`grid_exponent`): the only rounding, after the draw."""
    scale = 2 * prepared.bound / epsilon
    noisy = R.add(prepared.quantile, R.draw("lap", scale, source))
    return R.round_to_grid(noisy, grid_exponent(epsilon, lo, hi))


def smooth_quantile(values: Sequence[Fraction], epsilon: Fraction, delta: Fraction, lo: Fraction, hi: Fraction,
                    p: Fraction, source: RandomSource) -> Fraction:
    """`prepare` and `draw` on sorted exact ``values``."""
    return draw(prepare(values, lo, hi, p, epsilon, delta), epsilon, lo, hi, source)
