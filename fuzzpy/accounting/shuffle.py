"""Amplification by shuffling: the central (eps, delta) of shuffled local reports.

n people each send one report from the same eps0-LDP randomiser; a shuffler
releases the reports in random order. Feldman, McMillan & Talwar ("Hiding
among the clones", FOCS 2021, Thm 3.2 and its numerical procedure, Sec. 4)
show that for datasets differing in one person's row (replace-one
neighbours, n known) the shuffled output is a post-processing of the pair

    P = (A + D, C - A + 1 - D)      Q = (A + 1 - D, C - A + D)

with C ~ Bin(n - 1, e^{-eps0}), A ~ Bin(C, 1/2), D ~ Bern(e^{eps0} / (e^{eps0} + 1)):
each other person's report is, with probability e^{-eps0}, a "clone" of the
first person's report on one of the two candidate rows. So the hockey-stick
divergence of (P, Q) at eps bounds the delta of the shuffle at eps.

Exact shape used here (our derivation from the pair): given C = c, the first
coordinate a determines the outcome, and

    P(a | c) - e^eps Q(a | c) = (b - e^eps (1 - b)) B(c, a - 1) + ((1 - b) - e^eps b) B(c, a)

(b the Bernoulli's mean, B(c, j) = Pr[Bin(c, 1/2) = j]), whose sign changes once
in a (the likelihood ratio grows with a / (c + 1 - a)), so the positive part is
a tail: h_c(eps) = (b - e^eps (1 - b)) S(c, t - 1) + ((1 - b) - e^eps b) S(c, t),
S(c, m) = Pr[Bin(c, 1/2) >= m], t the sign change. The threshold is found in
floats and the tail evaluated at t - 1, t and t + 1: each is a lower bound
of the hockey-stick, the true one among them, so their maximum is exact.

h_c is non-increasing in c (one more clone, put on a side by a fair coin,
is the same Markov kernel applied to both P and Q: post-processing), and
also non-increasing in n for the same reason, so

* a release to at least n reports may be charged the figure at n;
* the c axis may be cut into blocks, each charged its left end's h
  (at most 400 blocks however large n is), the mass below the first block
  charged 1.

Floating point: binomial tails come from cephes' regularized incomplete beta
(`scipy.special.bdtrc`, ~1e-13 relative in this range); every contribution is
raised by a relative margin of 1e-6 and the eps found is rounded up to a
Fraction. Tests compare the figure with an exact evaluation (integer binomial
coefficients, mpmath exponentials) on small n, and with the paper's closed
form (Thm 3.1) as a looser bound.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from fuzzpy.accounting.rounding import float_up

MARGIN = 1e-6  # relative safety margin on every floating contribution to delta
MAX_BLOCKS = 400
# beyond this local epsilon a report is a clone with probability below 1e-26:
# no amplification is claimed (eps0 itself is always valid), and e^eps stays a double
MAX_EPS0 = 60.0


def _probabilities(eps0: float) -> tuple[float, float]:
    """(p, b): the clone probability e^{-eps0} rounded down (fewer clones is a
    weaker blanket, and the bound is monotone in p: see `_blocks`) and the
    Bernoulli mean e^{eps0} / (e^{eps0} + 1) (used symmetrically below)."""
    p = math.nextafter(math.exp(-eps0), 0.0)
    b = 1.0 / (1.0 + math.exp(-eps0))
    return p, b


def _tail(c: int, m: int) -> float:
    """Pr[Bin(c, 1/2) >= m]."""
    from scipy.special import bdtrc

    if m <= 0:
        return 1.0
    if m > c:
        return 0.0
    return float(bdtrc(m - 1, c, 0.5))


def _h(c: int, eps: float, b: float) -> float:
    """The hockey-stick divergence at eps of P and Q given C = c (module docstring)."""
    e = math.exp(eps)
    up_coef = b - e * (1.0 - b)  # > 0 for eps < eps0
    down_coef = (1.0 - b) - e * b  # < 0
    if up_coef <= 0.0:
        return 0.0
    r_star = (e * b - (1.0 - b)) / up_coef
    t = math.ceil(r_star * (c + 1) / (1.0 + r_star))
    best = 0.0
    for tt in (t - 1, t, t + 1):
        if 0 <= tt <= c + 1:
            best = max(best, up_coef * _tail(c, tt - 1) + down_coef * _tail(c, tt))
    return max(0.0, best) * (1.0 + MARGIN)


def _blocks(n: int, p: float) -> list[tuple[int, float]]:
    """(c, mass) pairs: the left ends of blocks covering the likely values of
    C ~ Bin(n - 1, p), each with an upper bound on its block's mass; the
    mass below the first block is returned as c = -1 (charged 1)."""
    from scipy.special import bdtr

    m = n - 1
    mean, sd = m * p, math.sqrt(max(m * p * (1 - p), 1e-300))
    lo = max(0, int(mean - 14 * sd) - 2)
    hi = min(m, int(mean + 14 * sd) + 2)
    width = max(1, math.ceil((hi - lo + 1) / MAX_BLOCKS))
    cdf = lambda k: 0.0 if k < 0 else (1.0 if k >= m else float(bdtr(k, m, p)))  # noqa: E731
    out: list[tuple[int, float]] = [(-1, cdf(lo - 1) * (1 + MARGIN) + 1e-300)]
    start = lo
    while start <= m:
        end = m if start + width > hi else start + width - 1
        mass = cdf(end) - cdf(start - 1)
        out.append((start, max(mass, 0.0) * (1 + MARGIN) + 1e-300))
        start = end + 1
    return out


def shuffle_delta(eps0: float, n: int, eps: float) -> float:
    """An upper bound on the delta at ``eps`` of n shuffled eps0-LDP reports."""
    if eps >= eps0:
        return 0.0  # an eps0-LDP release is eps0-DP for replace-one neighbours
    if n < 2:
        return 1.0
    p, b = _probabilities(eps0)
    total = 0.0
    for c, mass in _blocks(n, p):
        total += mass * (1.0 if c < 0 else _h(c, eps, b))
    return min(1.0, total * (1.0 + MARGIN))


@lru_cache(maxsize=256)
def shuffle_epsilon(eps0: Fraction, n: int, delta: float) -> Fraction:
    """The smallest eps (rounded up, at most eps0) whose `shuffle_delta` is at
    most ``delta``: the central guarantee of shuffling n eps0-LDP reports
    (FMT 2021), never worse than eps0 itself."""
    top = float_up(Fraction(eps0))
    if delta <= 0 or n < 2 or top > MAX_EPS0:
        return Fraction(eps0)
    if shuffle_delta(top, n, 0.0) <= delta:
        return Fraction(0)
    lo, hi = 0.0, top
    for _ in range(60):  # delta(eps) is non-increasing in eps
        mid = (lo + hi) / 2
        if shuffle_delta(top, n, mid) <= delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-9 * max(hi, 1e-12):
            break
    # the accepted eps was evaluated at top >= eps0 (a weaker randomiser): valid for eps0
    return min(Fraction(eps0), Fraction(math.nextafter(hi, math.inf)))


def closed_form_epsilon(eps0: float, n: int, delta: float) -> float | None:
    """FMT 2021, Thm 3.1: log(1 + (e^eps0 - 1)/(e^eps0 + 1) (8 sqrt(e^eps0 log(4/delta)) / sqrt(n)
    + 8 e^eps0 / n)), valid when eps0 <= log(n / (16 log(2 / delta))); None outside that range."""
    if n < 2 or delta <= 0 or eps0 > math.log(n / (16 * math.log(2 / delta))):
        return None
    e = math.exp(eps0)
    inner = (e - 1) / (e + 1) * (8 * math.sqrt(e * math.log(4 / delta)) / math.sqrt(n) + 8 * e / n)
    return math.log1p(inner)
