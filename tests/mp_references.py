"""Exact reference values in extended precision (mpmath), written from the
formulas of the papers and independent of fuzzpy's code: the tests compare
the accountant against these.

* `rr_delta`, `kov_reference`: the hockey-stick divergence of k-fold
  randomized response and the optimal epsilon of k-fold (eps0, delta0)-DP
  (Kairouz, Oh & Viswanath 2015, Thm 3.3), by full summation.
* `discrete_delta`: the hockey-stick divergence of a discrete loss distribution.
* `gaussian_delta`, `gaussian_reference`: the analytic Gaussian (Balle & Wang 2018, Thm 8).
* `renyi_*`: Renyi divergences of randomized response, the Laplace pair and the
  Poisson-subsampled Gaussian (by quadrature), and `zcdp_reference`, the
  smallest rho with D_alpha <= alpha rho at every order.
"""

from __future__ import annotations

from collections.abc import Callable

import mpmath
from mpmath import mp, mpf

PREC = 200


def _bisect(holds: Callable[[mpf], bool], lo: mpf, hi: mpf, tol: mpf) -> mpf:
    """The smallest x in [lo, hi] with holds(x) (monotone), to within tol (upper end)."""
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------- KOV


def rr_delta(eps0: float, k: int, eps: float | mpf) -> mpf:
    """delta(eps) of k-fold randomized response: sum over j of
    C(k, j) p^(k-j) (1-p)^j (1 - e^(eps - (k - 2j) eps0))_+, p = e^eps0 / (1 + e^eps0),
    every term summed (masses by the ratio m_(j+1) / m_j = (k-j)/(j+1) * (1-p)/p)."""
    with mp.workprec(PREC):
        e0, e = mpf(eps0), mpf(eps)
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        ratio = (1 - p) / p
        mass = p**k
        total = mpf(0)
        for j in range(k + 1):
            loss = (k - 2 * j) * e0
            if loss <= e:
                break
            total += mass * -mpmath.expm1(e - loss)
            mass = mass * (k - j) / (j + 1) * ratio
        return total


def kov_delta(eps0: float, delta0: float, k: int, eps: float | mpf) -> mpf:
    """1 - (1 - delta0)^k (1 - delta_k(eps)) (KOV15, Thm 3.3)."""
    with mp.workprec(PREC):
        survive = (1 - mpf(delta0)) ** k
        return 1 - survive * (1 - rr_delta(eps0, k, eps))


def kov_reference(eps0: float, delta0: float, k: int, delta: float) -> mpf:
    """The smallest eps with kov_delta <= delta, to 1e-25."""
    with mp.workprec(PREC):
        target = mpf(delta)
        return _bisect(
            lambda e: kov_delta(eps0, delta0, k, e) <= target, mpf(0), k * mpf(eps0), mpf(10) ** -25
        )


# ---------------------------------------------------------------- discrete


def discrete_delta(losses, masses, infinity_mass, eps) -> mpf:
    """p_inf + sum p_i (1 - e^(eps - l_i))_+ over the float inputs taken exactly."""
    with mp.workprec(PREC):
        e = mpf(eps)
        total = mpf(infinity_mass)
        for loss, mass in zip(losses, masses, strict=True):
            if mpf(loss) > e:
                total += mpf(mass) * -mpmath.expm1(e - mpf(loss))
        return total


# ---------------------------------------------------------------- Gaussian


def gaussian_delta(mu: float, eps: float | mpf) -> mpf:
    """Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle & Wang 2018, Thm 8)."""
    with mp.workprec(PREC * 2):
        m, e = mpf(mu), mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def gaussian_reference(mu: float, delta: float) -> mpf:
    with mp.workprec(PREC):
        target = mpf(delta)
        hi = mpf(mu) ** 2 + 40 * mpf(mu) + 1
        return _bisect(lambda e: gaussian_delta(mu, e) <= target, mpf(0), hi, mpf(10) ** -25)


# ---------------------------------------------------------------- Renyi, zCDP


def renyi_randomized_response(eps: float, alpha: float | mpf) -> mpf:
    """D_alpha of randomized response with P(true) = e^eps / (1 + e^eps)."""
    with mp.workprec(PREC):
        e, a = mpf(eps), mpf(alpha)
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        q = 1 - p
        return mpmath.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)


def renyi_laplace(eps: float, alpha: float | mpf) -> mpf:
    """D_alpha(Lap(0, 1) || Lap(eps, 1)) by direct integration of the densities
    (not Mironov's closed form): int p^alpha q^(1-alpha), split where the
    log-ratio changes form (at 0 and at eps)."""
    with mp.workprec(PREC):
        e, a = mpf(eps), mpf(alpha)

        def integrand(x):
            log_p = -abs(x) - mpmath.log(2)
            log_q = -abs(x - e) - mpmath.log(2)
            return mpmath.exp(a * log_p + (1 - a) * log_q)

        total = mpmath.quad(integrand, [-mpmath.inf, 0, e, mpmath.inf])
        return mpmath.log(total) / (a - 1)


def renyi_subsampled_gaussian(q: float, sigma: float, alpha: float | mpf) -> mpf:
    """D_alpha((1-q) N(0, s^2) + q N(1, s^2) || N(0, s^2)) by quadrature
    (Mironov, Talwar & Zhang 2019, Sec. 3: A_alpha = E_{z ~ N(0, s^2)}
    [(1 - q + q e^((2z - 1)/(2 s^2)))^alpha])."""
    with mp.workprec(120):
        qq, s, a = mpf(q), mpf(sigma), mpf(alpha)

        def integrand(z):
            ratio = 1 - qq + qq * mpmath.exp((2 * z - 1) / (2 * s * s))
            return mpmath.npdf(z, 0, s) * ratio**a

        z0 = s * s * mpmath.log(1 / qq - 1) + mpf(1) / 2
        points = [-mpmath.inf, -10 * s, 0, z0, z0 + 10 * s * a, mpmath.inf]
        points = sorted(set(points), key=lambda x: x)
        total = mpmath.quad(integrand, points)
        return mpmath.log(total) / (a - 1)


def zcdp_reference(divergence: Callable[[mpf], mpf]) -> tuple[mpf, mpf]:
    """sup over alpha > 1 of D_alpha / alpha, by a dense grid in log(alpha - 1)
    from 1e-8 to 1e4 and golden-section refinement around the best point:
    (the supremum found, the order where it is attained)."""
    with mp.workprec(PREC):
        grid = [1 + mpmath.exp(t) for t in mpmath.linspace(-18, 9, 271)]
        values = [divergence(a) / a for a in grid]
        best = max(range(len(grid)), key=lambda i: values[i])
        lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
        for _ in range(80):
            m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
            if divergence(m1) / m1 < divergence(m2) / m2:
                lo = m1
            else:
                hi = m2
        point = (lo + hi) / 2
        return max(values[best], divergence(point) / point), point
