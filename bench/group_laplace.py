"""Issue 28: a person's k rows over a Poisson-subsampled Laplace (`check --group k`).

Measures what the accountant charges against an independent computation of
the mixture pair (no fuzzpy code): P = sum_j Bin(k, q)(j) Lap(j eps, 1)
against Q = Lap(0, 1) (removal; the reverse for addition), or against
sum_j Bin(k, q)(j) Lap(-j eps, 1) (the rows replaced). One round: the
hockey-stick divergence in mpmath (the loss is monotone in the outcome, so
the best set is a half-line: its end found by bisection); many rounds:
dp-accounting's PLD from the loss distribution of the pair, its masses in
mpmath, rounded up (pessimistic, an upper bound) and down (a lower bound).

    PYTHONPATH=$PWD FUZZPY_CACHE=off /work/venv/bin/python bench/group_laplace.py
"""

from __future__ import annotations

import math
import sys
import time
from fractions import Fraction

import mpmath

mpmath.mp.dps = 40


def weights(q: float, k: int) -> list[mpmath.mpf]:
    qq = mpmath.mpf(q)
    return [mpmath.binomial(k, j) * qq**j * (1 - qq) ** (k - j) for j in range(k + 1)]


def lap_sf(t: mpmath.mpf) -> mpmath.mpf:
    """P(X > t) for X ~ Lap(0, 1)."""
    return mpmath.exp(-t) / 2 if t >= 0 else 1 - mpmath.exp(t) / 2


class Pair:
    """The group pair in one way: 'remove', 'add' or 'replace'."""

    def __init__(self, eps: float, q: float, k: int, way: str) -> None:
        self.e, self.k, self.way = mpmath.mpf(eps), k, way
        self.w = weights(q, k)

    def _p_sf(self, t: mpmath.mpf, sign: int) -> mpmath.mpf:  # the mixture with shifts sign * j eps
        return mpmath.fsum(w * lap_sf(t - sign * j * self.e) for j, w in enumerate(self.w))

    def upper_sf(self, t: mpmath.mpf) -> mpmath.mpf:
        """P(X > t): the first law of the pair, as a function of the outcome
        (the 'add' pair is written in -X so that its loss increases too)."""
        if self.way == "add":
            return 1 - lap_sf(-t)  # Lap(0) of -X: symmetric
        return self._p_sf(t, 1)

    def lower_sf(self, t: mpmath.mpf) -> mpmath.mpf:
        if self.way == "remove":
            return lap_sf(t)
        if self.way == "add":  # the mixture of -X: shifts -j eps
            return self._p_sf(t, -1)
        return self._p_sf(t, -1)

    def loss(self, x: mpmath.mpf) -> mpmath.mpf:
        def dens(y: mpmath.mpf, sign: int) -> mpmath.mpf:
            return mpmath.fsum(w * mpmath.exp(-abs(y - sign * j * self.e)) for j, w in enumerate(self.w))
        base = mpmath.exp(-abs(x))
        if self.way == "remove":
            return mpmath.log(dens(x, 1) / base)
        if self.way == "add":
            return mpmath.log(base / dens(x, -1))
        return mpmath.log(dens(x, 1) / dens(x, -1))

    def reach(self) -> mpmath.mpf:
        return self.k * self.e

    def threshold(self, c: mpmath.mpf) -> mpmath.mpf:
        """sup{x : loss(x) <= c} on [-reach, reach] (-inf / +inf outside)."""
        lo, hi = -self.reach() - 1, self.reach() + 1
        if self.loss(lo) > c:
            return mpmath.mpf("-inf")
        if self.loss(hi) <= c:
            return mpmath.mpf("inf")
        for _ in range(mpmath.mp.prec + 10):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if self.loss(mid) > c else (mid, hi)
        return hi

    def hockey(self, eps: float) -> mpmath.mpf:
        t = self.threshold(mpmath.mpf(eps))
        if t == mpmath.inf:
            return mpmath.mpf(0)
        if t == -mpmath.inf:
            return max(mpmath.mpf(0), 1 - mpmath.exp(eps))
        return max(mpmath.mpf(0), self.upper_sf(t) - mpmath.exp(eps) * self.lower_sf(t))

    def rounded(self, h: float, up: bool) -> tuple[dict[int, float], float]:
        """The loss's law under the first distribution, rounded to multiples of h."""
        lo_l, hi_l = self.loss(-self.reach() - 1), self.loss(self.reach() + 1)
        first, last = math.floor(float(lo_l) / h) - 1, math.ceil(float(hi_l) / h) + 1
        pmf: dict[int, float] = {}
        prev = mpmath.mpf(1)  # P(L > (first) h)
        for i in range(first + 1, last + 1):
            t = self.threshold(mpmath.mpf(i) * h)
            now = mpmath.mpf(0) if t == mpmath.inf else (mpmath.mpf(1) if t == -mpmath.inf else self.upper_sf(t))
            mass = prev - now  # P((i-1) h < L <= i h)
            if mass > 0:
                key = i if up else i - 1
                pmf[key] = pmf.get(key, 0.0) + float(mass)
            prev = now
        return pmf, 0.0


def bisect(f, delta: float, hi: float = 40.0) -> float:  # noqa: ANN001
    lo = 0.0
    if f(lo) <= delta:
        return 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > delta else (lo, mid)
    return hi


def one_round(eps: float, q: float, k: int, delta: float, replace: bool) -> float:
    ways = ("replace",) if replace else ("remove", "add")
    return max(bisect(Pair(eps, q, k, w).hockey, delta) for w in ways)


def composed(eps: float, q: float, k: int, steps: int, delta: float, replace: bool, up: bool,
             h: float = 0.0) -> float:
    from dp_accounting.pld import privacy_loss_distribution as pld

    h = h or min(1e-4, 5e-3 / steps)  # the rounding moves the composed figure by at most steps h

    ways = ("replace",) if replace else ("remove", "add")
    found = []
    for way in ways:
        pmf, inf = Pair(eps, q, k, way).rounded(h, up)
        one = pld.PrivacyLossDistribution.create_from_rounded_probability(pmf, inf, h, pessimistic_estimate=up)
        found.append(one.self_compose(steps).get_epsilon_for_delta(delta))
    return max(found)


def charged(eps: Fraction, q: Fraction, k: int, steps: int, delta: float, replace: bool):  # noqa: ANN201
    from fuzzpy.accounting import accountant
    from fuzzpy.accounting.events import Group, Laplace, Repeat, Subsample

    step = Subsample(q, (Laplace(Fraction(1), 1 / Fraction(eps)),), direct=True, replace=replace)
    body = (step,) if steps == 1 else (Repeat(steps, (step,)),)
    return accountant.tightest((Group(Fraction(k), body, rows=True),), delta)


CASES = [  # eps, q, k, steps, delta, replace
    (Fraction(1), Fraction(1, 10), 2, 1, 1e-6, False),
    (Fraction(1), Fraction(1, 10), 2, 1, 1e-6, True),
    (Fraction(1, 2), Fraction(1, 20), 2, 50, 1e-6, False),
    (Fraction(1, 2), Fraction(1, 20), 2, 50, 1e-6, True),
    (Fraction(1, 2), Fraction(1, 20), 3, 50, 1e-6, False),
    (Fraction(1, 5), Fraction(1, 100), 2, 1000, 1e-6, False),
]

if __name__ == "__main__":
    for eps, q, k, steps, delta, rep in CASES:
        t = time.time()
        g = charged(eps, q, k, steps, delta, rep)
        spent = time.time() - t
        if steps == 1:
            ref = f"exact {one_round(float(eps), float(q), k, delta, rep):.7f}"
        else:
            ref = (f"dp-accounting [{composed(float(eps), float(q), k, steps, delta, rep, False):.6f}, "
                   f"{composed(float(eps), float(q), k, steps, delta, rep, True):.6f}]")
        print(f"eps {eps} q {q} k {k} steps {steps} delta {delta} {'replace' if rep else 'add/remove'}: "
              f"charged {g.epsilon:.7f} ({g.method}, {spent:.1f}s); {ref}", flush=True)
    sys.exit(0)
