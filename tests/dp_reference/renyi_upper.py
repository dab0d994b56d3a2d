"""A proven (loose) upper end for k-fold Poisson-subsampled Gaussians, from
their Renyi DP at integer orders.

At integer alpha >= 2 the Renyi divergence of one step (rate q, mu = s / sigma)
is a finite sum (Mironov, Talwar & Zhang 2019, "Renyi DP of the Sampled
Gaussian Mechanism", Sec. 3.3; their Thm 5: the remove direction's A_alpha
bounds the add direction's B_alpha, so it is the step's RDP):

    A_alpha = sum_{j=0}^{alpha} binom(alpha, j) (1-q)^(alpha-j) q^j e^{(j^2 - j) mu^2 / 2},
    D_alpha = log(A_alpha) / (alpha - 1).

k steps compose by adding (Mironov 2017, Prop. 1): tau = k D_alpha. An
(alpha, tau)-RDP mechanism is (eps, delta)-DP with (Canonne, Kamath & Steinke
2020, Prop. 12; Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm 21)

    eps = tau + log(1 - 1/alpha) - (log delta + log alpha) / (alpha - 1),

and every order gives a valid eps: the least over the orders tried is kept.

Rigour: every term of A_alpha is positive, computed in mpmath at DPS digits,
so A_alpha carries a relative error below (alpha + 10) 10^-(DPS - 1)
(Higham Lemma 3.1 for the sum, a few roundings per term); it is widened by
REL_ERROR, far above that, then eps is rounded up once more on leaving
mpmath.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import mpmath as mp

DPS = 60
REL_ERROR = mp.mpf("1e-45")  # >> (alpha + 10) 10^-(DPS - 1) for alpha < 10^6
MAX_ORDER = 4096


def _mpf(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


@lru_cache(maxsize=4096)
def log_moment(rate: Fraction, mu: Fraction, alpha: int) -> mp.mpf:
    """An upper bound on log A_alpha of one step (at DPS digits)."""
    with mp.workdps(DPS):
        q, m2 = _mpf(rate), _mpf(mu) ** 2
        total = mp.fsum(
            mp.binomial(alpha, j) * (1 - q) ** (alpha - j) * q**j * mp.exp((j * j - j) * m2 / 2)
            for j in range(alpha + 1)
        )
        return mp.log(total * (1 + REL_ERROR))


def epsilon_at(rate: Fraction, mu: Fraction, steps: int, delta: float, alpha: int) -> mp.mpf:
    """CKS20 Prop. 12's epsilon of ``steps`` steps at order alpha (an upper
    bound on the exact epsilon at delta, before the final rounding)."""
    with mp.workdps(DPS):
        a = mp.mpf(alpha)
        tau = steps * log_moment(rate, mu, alpha) / (a - 1)
        value = tau + mp.log1p(-1 / a) - (mp.log(mp.mpf(delta)) + mp.log(a)) / (a - 1)
        return value * (1 + REL_ERROR) + REL_ERROR  # the logs' own rounding


def epsilon_upper(rate: Fraction, mu: Fraction, steps: int, delta: float) -> tuple[float, int]:
    """(eps, alpha): a proven upper end for the exact epsilon at delta of
    ``steps`` Poisson-subsampled Gaussian steps, as a float rounded up, and
    the order that gave it. Orders are scanned upward until eps has grown
    for a while past its least value (any order is valid: the scan only
    decides tightness)."""
    best, best_alpha = mp.inf, 2
    alpha = 2
    while alpha <= MAX_ORDER:
        value = epsilon_at(rate, mu, steps, delta, alpha)
        if value < best:
            best, best_alpha = value, alpha
        elif alpha > 2 * best_alpha + 8 and value > best * 1.5:
            break
        alpha += 1 if alpha < 64 else max(1, alpha // 64)
    best = max(best, mp.mpf(0))
    f = float(best)
    if mp.mpf(f) < best:
        f = math.nextafter(f, math.inf)
    return f, best_alpha
