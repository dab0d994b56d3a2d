"""The staircase mechanism, sampled exactly on a power-of-two grid.

Geng & Viswanath ("The optimal noise-adding mechanism in differential
privacy", IEEE Trans. Inf. Theory 62(2), 2016) show that among eps-DP
additive noises for a query of sensitivity Delta the staircase density

    f(x) = a e^(-k eps)        for |x| in [k Delta, (k + gamma) Delta)
    f(x) = a e^(-(k+1) eps)    for |x| in [(k + gamma) Delta, (k + 1) Delta),  k = 0, 1, ...
    a = (1 - b) / (2 Delta (gamma + (1 - gamma) b)),   b = e^-eps,

minimises the expected |noise| at gamma* = 1 / (1 + e^(eps/2)) (and the
variance at another gamma); any gamma in [0, 1] is eps-DP. They sample it as
X = S ((1 - B)(G + gamma U) Delta + B (G + gamma + (1 - gamma) U) Delta) with
a fair sign S, P(G = k) = (1 - b) b^k, B = 1 with probability
(1 - gamma) b / (gamma + (1 - gamma) b) and U uniform on [0, 1). In the
language Delta = 1 (`staircase[eps] e` has steps of width 1; the checker
charges eps ceil(s) for a query of sensitivity s, `checker.noise.staircase`).

Here no float touches the noise. With a grid g = 2^e fixed by gamma alone
(e = floor(log2 min(gamma, 1 - gamma)) - 32, so both parts of a step span
at least 2^32 grid units), a step spans W = 2^-e + 1 grid units -- one more
than Delta / g, see below -- of which the first I = round(gamma 2^-e) form
its inner part. The release of the exact x is

    g (round(x / g) + N),   P(N = n) proportional to b^h(|n|),
    h(j) = #{k >= 0 : k W + I <= j}   (the steps of the discrete staircase),

drawn as Geng & Viswanath do on the integers: |N| = G W + R with G as above
(`samplers.geometric_steps`, exact for rational eps), B as above with
weights I and W - I (an exact comparison of uniform bits with rigorous
bounds on b, `bernoulli_between`), R uniform on [0, I) if B = 0, on [I, W)
if B = 1, and a fair sign, (negative, 0) rejected so that zero is not
counted twice (as in Canonne, Kamath & Steinke 2020, Alg. 2).

Why the release is still (eps ceil(s))-DP (the exact discrete distribution's
ratio, not a limit): for |x - x'| <= s the grid points u = round(x/g) and
u' = round(x'/g) differ by at most s/g + 1 (rounding is monotone). h counts
points of a lattice of spacing W, so |h(j) - h(j')| <= ceil(|j - j'| / W),
and ||n| - |n'|| <= |n - n'|. For k = ceil(s) >= 1, s/g + 1 <= k/g + 1 <=
k (1/g + 1) = k W, so any output o has
P(o | x) / P(o | x') = b^(h(|o - u|) - h(|o - u'|)) <= e^(eps k): the
discretised mechanism costs what the checker charged. (The bound
s/g + 1 holds for any monotone rounding; the extra unit per step makes it
enough, without an argument about how ties are rounded.) gamma* is
irrational; its grid value I is computed from rigorous bounds on
e^(-eps/2), deterministically -- a different gamma changes the accuracy,
never the privacy. The released value g N' is an exact dyadic rational;
printing it is post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import geometric_steps
from fuzzpy.runtime.values import RuntimeFailure
from fuzzpy.support.records import frozen

#: Both parts of a step span at least 2^GRID_BITS grid units.
GRID_BITS = 32
#: A comparison still open after this many uniform bits (probability below
#: 2^-4000) is reported rather than looped on (as `lazy_reals.MAX_DIGITS`).
MAX_BITS = 4096
_WORD = 64


@frozen
class StaircaseGrid:
    """Where a staircase release lives: the grid 2^exponent, a step's width
    and its inner part in grid units (module docstring)."""

    exponent: int
    width: int
    inner: int
    gamma: Fraction  # the gamma the grid stands for (gamma* rounded down to a rational when not given)


@lru_cache(maxsize=1024)
def exp_neg_bounds(x: Fraction, bits: int) -> tuple[int, int]:
    """(lo, hi) integers with lo <= 2^bits e^-x <= hi, for a rational x >= 0.

    e^-x = (e^-y)^(2^j) with y = x / 2^j <= 1/2; e^-y lies between two
    consecutive partial sums of its alternating series (terms decreasing as
    y < 1); the square is taken j times with the lower end rounded down and
    the upper end up, at bits + j + 16 working bits."""
    if x < 0 or bits < 0:
        raise ValueError("exp_neg_bounds needs x >= 0 and bits >= 0")
    j = 0
    while x > Fraction(1, 2) * 2**j:
        j += 1
    y = Fraction(x) / 2**j
    work = bits + j + 16
    limit = Fraction(1, 2**work)
    term, total, k = Fraction(1), Fraction(1), 0
    while True:
        k += 1
        term = -term * y / k
        previous, total = total, total + term
        if abs(term) < limit:
            break
    one = 1 << work
    lo = min(previous, total).numerator * one // min(previous, total).denominator
    high = max(previous, total)
    hi = min(-(-high.numerator * one // high.denominator), one)
    for _ in range(j):
        lo = (lo * lo) >> work
        hi = min(-((-hi * hi) >> work), one)
    shift = work - bits
    return lo >> shift, -((-hi) >> shift)


def optimal_gamma(epsilon: Fraction) -> Fraction:
    """gamma* = 1 / (1 + e^(eps/2)) = c / (1 + c), c = e^(-eps/2), rounded
    down to a rational from a rigorous lower bound on c (about 2^-64
    relative error): deterministic, and any gamma in [0, 1] is private."""
    bits = 64 + math.ceil(Fraction(epsilon) * Fraction(3, 4))  # e^(-eps/2) >= 2^(-0.73 eps)
    lo, _ = exp_neg_bounds(Fraction(epsilon) / 2, bits)
    return Fraction(lo, (1 << bits) + lo)


@lru_cache(maxsize=256)
def staircase_grid(epsilon: Fraction, gamma: Fraction | None = None) -> StaircaseGrid:
    """The grid and the step of `staircase[eps]` (gamma None: gamma*) or `staircase[eps, gamma]`."""
    if epsilon <= 0:
        raise ValueError("the staircase needs eps > 0")
    g = optimal_gamma(epsilon) if gamma is None else Fraction(gamma)
    if not 0 <= g <= 1:
        raise ValueError("gamma must lie in [0, 1]")
    parts = [p for p in (g, 1 - g) if p > 0]
    smallest = min(parts)
    e = _floor_log2(smallest) - GRID_BITS
    unit = 1 << -e  # grid units in Delta = 1
    return StaircaseGrid(e, unit + 1, round(g * unit), g)


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > x else e


def bernoulli_between(bounds: Callable[[int], tuple[int, int]], source: RandomSource) -> bool:
    """Bernoulli(p) for a p known through ``bounds(k)``: integers (lo, hi)
    with lo <= 2^k p <= hi. V uniform on [0, 1) is drawn 64 bits at a time
    (U its first k bits: V in [U, U + 1) / 2^k); the answer is V < p, decided
    once [U, U + 1) lies below lo or at or above hi. P(answer) = p exactly;
    two words are needed with probability about 2^-60."""
    u, k = 0, 0
    while k < MAX_BITS:
        u, k = (u << _WORD) | source.word(), k + _WORD
        lo, hi = bounds(k)
        if u + 1 <= lo:
            return True
        if u >= hi:
            return False
    raise RuntimeFailure("FZ520", "a staircase draw could not be decided in 4096 bits (probability below 2^-4000)")


def _outer_bounds(epsilon: Fraction, inner: int, outer: int) -> Callable[[int], tuple[int, int]]:
    """Bounds on p = outer b / (inner + outer b), b = e^-eps (increasing in b)."""
    def bounds(k: int) -> tuple[int, int]:
        b_lo, b_hi = exp_neg_bounds(epsilon, k + 8)
        scale = 1 << (k + 8)
        p_lo = Fraction(outer * b_lo, inner * scale + outer * b_lo)
        p_hi = Fraction(outer * b_hi, inner * scale + outer * b_hi)
        return math.floor(p_lo * 2**k), math.ceil(p_hi * 2**k)
    return bounds


def staircase_units(epsilon: Fraction, grid: StaircaseGrid, source: RandomSource) -> int:
    """One draw of N, P(N = n) proportional to e^(-eps h(|n|)) (module docstring)."""
    inner, outer = grid.inner, grid.width - grid.inner
    bounds = _outer_bounds(Fraction(epsilon), inner, outer)
    while True:
        steps = geometric_steps(Fraction(epsilon), source)
        if inner == 0:
            is_outer = True
        elif outer == 0:
            is_outer = False
        else:
            is_outer = bernoulli_between(bounds, source)
        rest = inner + source.below_one(outer) if is_outer else source.below_one(inner)
        magnitude = steps * grid.width + rest
        negative = source.below_one(2) == 1
        if not (negative and magnitude == 0):
            return -magnitude if negative else magnitude


def staircase_release_one(value: int | Fraction, epsilon: Fraction, gamma: Fraction | None,
                          source: RandomSource) -> Fraction:
    """g (round(x / g) + N): one exact release of x (module docstring)."""
    grid = staircase_grid(Fraction(epsilon), None if gamma is None else Fraction(gamma))
    step = Fraction(2) ** grid.exponent
    return (round(Fraction(value) / step) + staircase_units(epsilon, grid, source)) * step


# ---------------------------------------------------------------- accuracy


def tail_units(epsilon: Fraction, grid: StaircaseGrid, alpha: Fraction) -> int:
    """A number m of grid units with P(|N| > m) <= alpha, at most one unit
    above the least such m. The magnitudes j carry weight w(j) = b^h(j):
    each whole step k holds b^k (I + (W - I) b), so the mass from step k on
    is M b^k, M = (I + (W - I) b) / (1 - b), and within step k the first
    r + 1 magnitudes hold b^k (min(r + 1, I) + b max(r + 1 - I, 0)); with
    both signs and zero once, the normaliser is Z = 2 M - w(0). Solved for
    the least step and place in mpmath at 256 bits from the exact eps and
    alpha; one unit is added for the evaluation's rounding."""
    import mpmath
    from mpmath import mp

    inner, width = grid.inner, grid.width
    # enough bits that the subtraction below is exact to well under one unit
    # for any width and a small eps (1 - b is about eps)
    precision = 256 + 2 * width.bit_length() + 2 * max(0, -_floor_log2(Fraction(epsilon)))
    with mp.workprec(precision):
        b = mpmath.exp(-mp.mpf(epsilon.numerator) / epsilon.denominator)
        a = mp.mpf(alpha.numerator) / alpha.denominator
        mass = (inner + (width - inner) * b) / (1 - b)
        normaliser = 2 * mass - (1 if inner > 0 else b)
        target = a * normaliser / 2  # P(|N| > m) <= alpha  <=>  sum_{j > m} w(j) <= target
        if mass - (1 if inner > 0 else b) <= target:
            return 1
        k = max(int(mpmath.floor(mpmath.log(target / mass) / mpmath.log(b))) - 1, 0)
        while k > 0 and mass * b**k <= target:
            k -= 1
        while mass * b ** (k + 1) > target:
            k += 1
        need = mass - target / b**k  # the first r + 1 magnitudes of step k must hold this (in units of b^k)
        if need <= inner:
            r = int(mpmath.ceil(need)) - 1
        else:
            r = inner + int(mpmath.ceil((need - inner) / b)) - 1
    return k * width + min(max(r, 0), width - 1) + 1


def continuous_half_width(epsilon: Fraction, gamma: Fraction, alpha: Fraction) -> float:
    """h with P(|X| > h) = alpha for the continuous staircase (Delta = 1):
    P(|X| >= k) = b^k, so the k with b^k >= alpha > b^(k+1) is
    floor(ln(1/alpha) / eps); within step k the density is a b^k on both
    sides up to k + gamma, then a b^(k+1). In mpmath (a small eps leaves
    b = 1 in doubles)."""
    import mpmath
    from mpmath import mp

    with mp.workprec(128 + 2 * max(0, -_floor_log2(Fraction(epsilon)))):
        eps = mp.mpf(epsilon.numerator) / epsilon.denominator
        a_ = mp.mpf(alpha.numerator) / alpha.denominator
        g = mp.mpf(gamma.numerator) / gamma.denominator
        b = mpmath.exp(-eps)
        a = -mpmath.expm1(-eps) / (2 * (g + (1 - g) * b))
        k = int(mpmath.floor(mpmath.log(1 / a_) / eps))
        inside = b**k - a_  # the mass of step k below h, both sides
        first = 2 * a * b**k * g
        if inside <= first:
            return float(k + inside / (2 * a * b**k))
        return float(k + g + (inside - first) / (2 * a * b ** (k + 1)))
