"""The pair of a Poisson-subsampled Gaussian for a group of k rows, as loss tails.

A person's k rows are added (or removed) together; Poisson subsampling
draws each independently at rate q, so j ~ Binomial(k, q) of them are in
the sample and the Gaussian body (removal sensitivity s per row, mu = s /
sigma) sees a shift a_T of norm at most j mu. The pair

    P = sum_j C(k, j) q^j (1-q)^{k-j} N(j mu, 1)    against    Q = N(0, 1)

(and (Q, P) for the addition direction) dominates it: for an output set E of
mass p under N(0), N(a_T)(E) <= Phi(Phi^-1(p) + |a_T|) <= Phi(Phi^-1(p) + j mu)
(Neyman-Pearson: a half-space is the best test of a Gaussian shift), attained
for every j at once by one half-line, so sup_E P(E) - gamma Q(E) is at most
the 1-D pair's value; likewise N(a_T)(E) >= Phi(Phi^-1(p) - j mu) for the
addition direction (Zhu, Dong & Wang, AISTATS 2022, for dominating pairs and
their composition; the mixture is the group version of their Poisson pair).
It is exact when the k rows move the query the same way (a count).

The loss of the removal direction is F(x) = log sum_j w_j e^{j mu x - j^2
mu^2 / 2}, increasing and convex in x, from log w_0 = k log(1-q) up; of the
addition direction -F(x). The threshold x*(c) solving F(x*) = c is found by
Newton's method from the right (monotone for a convex increasing function),
and `threshold_error` is the measured residual |F(x~) - c| plus the rounding
of F's evaluation, so the tails at x~ are exact tails at a loss within it
(`pld_pairs` error model). The output line is cut at x in [-depth, depth +
k mu]; the mass beyond is moved up or counted at +infinity (`pld_grid`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import gammaln, ndtr

from fuzzpy.accounting.pld_pairs import GaussianPair, LaplacePair, Tails, ndtr_error
from fuzzpy.support.records import frozen

Array = np.ndarray
ULP = 2.0**-53
_NEWTON_STEPS = 400



def _solved_threshold_error(solve: Callable[[Array], tuple[Array, Array]], eps: Array) -> float:
    """Twice the largest residual of the thresholds ``solve`` finds at ``eps``
    (the `pld_pairs` error model: a threshold off by r moves a tail by r times its hazard)."""
    eps = np.asarray(eps, dtype=float)
    if eps.size == 0:
        return 0.0
    _, error = solve(eps)
    return 2 * float(np.max(error))

@frozen
class GroupTails:
    """The group pair of a Poisson-subsampled Gaussian (module docstring),
    with the interface of `pld_pairs.LossTails`."""

    base: GaussianPair  # mu of one row, and the depth of the kept range
    rate: float  # 0 < q < 1, rounded up
    size: int  # k >= 2 rows of one person
    remove: bool = True

    # ------------------------------------------------------------ the mixture

    def _log_weights(self) -> Array:
        k, q = self.size, self.rate
        j = np.arange(k + 1, dtype=float)
        log_binomial = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1)
        return log_binomial + j * math.log(q) + (k - j) * math.log1p(-q)

    def _exponents(self, x: Array) -> Array:
        mu = self.base.mu
        j = np.arange(self.size + 1, dtype=float)
        return self._log_weights()[None, :] + np.multiply.outer(x, j * mu) - (j * j * mu * mu / 2)[None, :]

    def loss_of(self, x: Array) -> tuple[Array, Array]:
        """F(x) and F'(x) (removal direction)."""
        terms = self._exponents(np.asarray(x, dtype=float))
        top = np.max(terms, axis=1)
        shares = np.exp(terms - top[:, None])
        total = np.sum(shares, axis=1)
        j = np.arange(self.size + 1, dtype=float)
        slope = self.base.mu * (shares @ j) / total
        return top + np.log(total), slope

    def _evaluation_error(self, x: Array) -> Array:
        """A bound of the rounding of F(x): a few ulp of the largest term's parts."""
        mu, k = self.base.mu, self.size
        size = np.where(np.isfinite(x), np.abs(x), 0.0)
        parts = float(np.max(np.abs(self._log_weights()))) + k * mu * size + k * k * mu * mu / 2
        return 16 * ULP * (parts + 2 * math.log(k + 2) + 4)

    def _x_range(self) -> tuple[float, float]:
        return -self.base.depth, self.base.depth + self.size * self.base.mu

    def _solve(self, c: Array) -> tuple[Array, Array]:
        """x*(c) with F(x*) = c (-inf for c below F's infimum), and the
        residual bound |F(x~) - c| plus F's rounding, per threshold."""
        c = np.asarray(c, dtype=float)
        logw = self._log_weights()
        mu, k = self.base.mu, self.size
        floor = float(logw[0])
        below = c <= floor
        target = np.where(below, floor + 1.0, c)
        # a start right of the root: F(x) >= log w_k + k mu x - k^2 mu^2 / 2
        x = (target - logw[k] + k * k * mu * mu / 2) / (k * mu) + 1.0
        for _ in range(_NEWTON_STEPS):
            value, slope = self.loss_of(x)
            step = (value - target) / slope
            x_next = x - np.maximum(step, 0.0)  # from the right: never past the root (convexity)
            if np.all(np.abs(x_next - x) <= 4 * ULP * (np.abs(x) + 1)):
                x = x_next
                break
            x = x_next
        value, _ = self.loss_of(x)
        error = np.abs(value - target) + self._evaluation_error(x)
        x = np.where(below, -np.inf, x)
        return x, np.where(below, 0.0, error)

    # ------------------------------------------------------------ tails

    def tails(self, eps: Array) -> Tails:
        eps = np.asarray(eps, dtype=float)
        mu, k = self.base.mu, self.size
        weights = np.exp(self._log_weights())
        j = np.arange(k + 1, dtype=float)
        if self.remove:  # L = F(X): L > c <=> X > x*(c); P the mixture, Q = N(0)
            x, _ = self._solve(eps)
            shifted = np.subtract.outer(x, j * mu)  # X - j mu under N(j mu) is N(0)
            p_sf = ndtr(-shifted) @ weights
            p_cdf = ndtr(shifted) @ weights
            q_sf, q_cdf = ndtr(-x), ndtr(x)
        else:  # L = -F(X): L > c <=> X < x*(-c); P = N(0), Q the mixture
            x, _ = self._solve(-eps)
            shifted = np.subtract.outer(x, j * mu)
            p_sf, p_cdf = ndtr(x), ndtr(-x)
            q_sf = ndtr(shifted) @ weights
            q_cdf = ndtr(-shifted) @ weights
        size = np.where(np.isfinite(x), np.abs(x), 0.0)
        hazard = np.minimum(size + k * mu, 40)
        rel = ndtr_error(hazard) + 4 * ULP * (size + k * mu + 1) * (hazard + 3) + 4 * (k + 2) * ULP
        return Tails(p_sf, p_cdf, q_sf, q_cdf, rel)

    def threshold_error(self, eps: Array) -> float:
        eps = np.asarray(eps, dtype=float)
        if eps.size == 0:
            return 0.0
        _, error = self._solve(eps if self.remove else -eps)
        return 2 * float(np.max(error))

    def loss_range(self) -> tuple[float, float]:
        lo_x, hi_x = self._x_range()
        values, _ = self.loss_of(np.array([lo_x, hi_x]))
        lo, hi = float(values[0]), float(values[1])
        return (lo, hi) if self.remove else (-hi, -lo)


@frozen
class ReplaceGroupTails:
    """A person's k rows replaced, under Poisson subsampling of a Gaussian
    body: the pair

        P = sum_j C(k, j) q^j (1-q)^{k-j} N(j mu, 1)   against
        Q = sum_j C(k, j) q^j (1-q)^{k-j} N(-j mu, 1).

    Why it dominates (ours, the argument of `pld_replace` with the group's
    mixture of `GroupTails`): couple the k rows' sampling coins on both
    sides; given the rest of the sample S and the set T of the person's rows
    drawn (|T| = j, probability C(k, j) q^j (1-q)^{k-j}), the outputs are
    M(S + x_T) and M(S + x'_T), Gaussian shifts of norm at most j mu from
    M(S). For an output set E of mass p under M(S), Neyman-Pearson gives
    M(S + x_T)(E) <= N(j mu)(U_p) and M(S + x'_T)(E) >= N(-j mu)(U_p), with
    U_p the upper half-line of N(0)-mass p, one set for every j; so
    P(E) - gamma Q(E) <= P*(U_p) - gamma Q*(U_p) <= H_gamma(P* || Q*), and the
    mixture over S keeps the bound (joint convexity; Balle, Barthe & Gaboardi
    2018 for mixtures of pairs; Zhu, Dong & Wang 2022 for dominating pairs).
    x -> -x swaps P and Q: one direction serves both. For k = 1 it is the
    replace-one pair of `pld_replace`.

    The loss L(x) = F(x) - F(-x), F as in `GroupTails`, is increasing and
    odd. The threshold x*(c) is found by bisection (L need not be convex);
    `threshold_error` is the measured residual plus the rounding of L."""

    base: GaussianPair
    rate: float
    size: int
    remove: bool = True

    def _group(self) -> GroupTails:
        return GroupTails(self.base, self.rate, self.size, True)

    def loss_of(self, x: Array) -> Array:
        group = self._group()
        x = np.asarray(x, dtype=float)
        return group.loss_of(x)[0] - group.loss_of(-x)[0]

    def _reach(self) -> float:
        return self.base.depth + self.size * self.base.mu

    def _solve(self, c: Array) -> tuple[Array, Array]:
        c = np.asarray(c, dtype=float)
        reach = self._reach()
        lo = np.full(c.shape, -reach)
        hi = np.full(c.shape, reach)
        for _ in range(_NEWTON_STEPS):
            mid = (lo + hi) / 2
            above = self.loss_of(mid) > c
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid)
            if np.all(hi - lo <= 4 * ULP * (np.abs(hi) + 1)):
                break
        x = hi
        group = self._group()
        rounding = group._evaluation_error(x) + group._evaluation_error(-x)
        return x, np.abs(self.loss_of(x) - c) + rounding

    def tails(self, eps: Array) -> Tails:
        eps = np.asarray(eps, dtype=float)
        mu, k = self.base.mu, self.size
        weights = np.exp(self._group()._log_weights())
        j = np.arange(k + 1, dtype=float)
        x, _ = self._solve(eps)  # L > c <=> X > x*(c)
        up = np.subtract.outer(x, j * mu)  # X - j mu under N(j mu) is N(0)
        down = np.add.outer(x, j * mu)  # X + j mu under N(-j mu)
        p_sf, p_cdf = ndtr(-up) @ weights, ndtr(up) @ weights
        q_sf, q_cdf = ndtr(-down) @ weights, ndtr(down) @ weights
        size = np.abs(x)
        hazard = np.minimum(size + k * mu, 40)
        rel = ndtr_error(hazard) + 4 * ULP * (size + k * mu + 1) * (hazard + 3) + 4 * (k + 2) * ULP
        return Tails(p_sf, p_cdf, q_sf, q_cdf, rel)

    def threshold_error(self, eps: Array) -> float:
        return _solved_threshold_error(self._solve, eps)

    def loss_range(self) -> tuple[float, float]:
        top = float(self.loss_of(np.array([self._reach()]))[0])
        return -top, top


def _laplace_sf(u: Array) -> Array:
    """P(X > u) for X ~ Lap(0, 1), from the small side in both tails."""
    small = 0.5 * np.exp(-np.abs(u))
    return np.where(u >= 0, small, 1.0 - small)


@frozen
class LaplaceGroupTails:
    """A person's k rows over a Poisson-subsampled Laplace body (epsilon =
    s / b per row): with w_j = C(k, j) q^j (1-q)^{k-j} and Lap(a) the unit
    Laplace law centred at a (outcomes in units of b),

        remove   P = sum_j w_j Lap(j eps)   against  Q = Lap(0),
        add      P = Lap(0)                 against  Q = sum_j w_j Lap(-j eps),
        replace  P = sum_j w_j Lap(j eps)   against  Q = sum_j w_j Lap(-j eps),

    written so that the loss l(y) = log dP/dQ (y) is non-decreasing in the
    outcome y (the addition pair is the removal pair reversed and reflected,
    y = -x; Lap(0) is even).

    Why it dominates (the argument of `GroupTails` with the Laplace density;
    Balle, Barthe & Gaboardi 2018 for the mixture over the j sampled rows of
    the person, Zhu, Dong & Wang 2022 for dominating pairs and their
    composition): given the other rows' sample S and the set T of the
    person's rows drawn (|T| = j, chance w_j), the body outputs Lap(c_S +
    a_T) against Lap(c_S) (removal), |a_T| <= j eps. The ratio Lap(a)/Lap(0)
    = e^{|y| - |y - a|} is non-decreasing in y for a >= 0, so for a set E of
    Lap(0)-mass p the upper half-line U_p of mass p is a most powerful test
    against every positive shift (Neyman-Pearson), Lap(-a)(E) <= Lap(a)(U_p)
    by reflection, and Lap(a)(U_p) grows with a: Lap(a_T)(E) <= Lap(j
    eps)(U_p), ONE set for every j. Likewise Lap(a_T)(E) >= Lap(-j eps)(U_p)
    for the addition and the replaced rows' side. So P(E) - gamma Q(E) <=
    P*(U_p) - gamma Q*(U_p) <= H_gamma(P* || Q*) at every gamma >= 0, and the
    mixture over S keeps it (joint convexity). Exact for a count (every row
    moves the query by +s). k = 1 is the one-row pair of `pld_pairs`
    (remove, add) and `pld_replace` (replace).

    The loss is constant left of ``_span()[0]`` and right of ``_span()[1]``
    (atoms of the loss) and strictly increasing between; its threshold is
    found by bisection there and `threshold_error` is the measured residual
    plus the rounding of the loss (its slope is at most 2)."""

    epsilon: float  # per row, rounded up
    rate: float  # 0 < q < 1, rounded up
    size: int  # k >= 1 rows of one person
    way: str = "remove"  # "remove", "add" or "replace"

    @property
    def base(self) -> LaplacePair:
        """The one-row pair: a bounded loss with no mass at infinity (`pld_grid`)."""
        return LaplacePair(self.epsilon)

    def _log_weights(self) -> Array:
        k, q = self.size, self.rate
        j = np.arange(k + 1, dtype=float)
        log_binomial = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1)
        return log_binomial + j * math.log(q) + (k - j) * math.log1p(-q)

    def _laws(self) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
        """(log weights, centres) of P and of Q, in the outcome y."""
        logw = self._log_weights()
        shifts = np.arange(self.size + 1, dtype=float) * self.epsilon
        point = (np.zeros(1), np.zeros(1))
        if self.way == "remove":
            return (logw, shifts), point
        if self.way == "add":
            return point, (logw, -shifts)
        return (logw, shifts), (logw, -shifts)

    def _span(self) -> tuple[float, float]:
        reach = self.size * self.epsilon
        if self.way == "remove":
            return 0.0, reach
        if self.way == "add":
            return -reach, 0.0
        return -reach, reach

    @staticmethod
    def _log_density(y: Array, law: tuple[Array, Array]) -> Array:
        """log sum_j w_j e^{-|y - c_j|} (the constant 1/2 cancels)."""
        logw, centres = law
        terms = logw[None, :] - np.abs(np.subtract.outer(y, centres))
        top = np.max(terms, axis=1)
        return top + np.log(np.sum(np.exp(terms - top[:, None]), axis=1))

    def loss_of(self, y: Array) -> Array:
        y = np.atleast_1d(np.asarray(y, dtype=float))
        p_law, q_law = self._laws()
        return self._log_density(y, p_law) - self._log_density(y, q_law)

    def _evaluation_error(self, y: Array) -> Array:
        """A bound of the rounding of l(y): a few ulp of each log-sum's parts."""
        parts = float(np.max(np.abs(self._log_weights()))) + np.abs(y) + 2 * self.size * self.epsilon
        return 32 * ULP * (parts + 2 * math.log(self.size + 2) + 4)

    def _solve(self, c: Array) -> tuple[Array, Array]:
        """t(c) with {l > c} = {Y > t} (-inf: every outcome, +inf: none), and
        |l(t) - c| bounded, per threshold."""
        c = np.atleast_1d(np.asarray(c, dtype=float))
        a, b = self._span()
        ends = self.loss_of(np.array([a, b]))
        everything, nothing = c < ends[0], c >= ends[1]
        lo, hi = np.full(c.shape, a), np.full(c.shape, b)
        for _ in range(_NEWTON_STEPS):
            mid = (lo + hi) / 2
            above = self.loss_of(mid) > c
            hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
            if np.all(hi - lo <= 4 * ULP * (np.abs(hi) + 1)):
                break
        values = self.loss_of(np.concatenate([lo, hi])).reshape(2, -1)
        residual = np.maximum(np.abs(values[0] - c), np.abs(values[1] - c)) + self._evaluation_error(hi)
        end_error = float(np.max(self._evaluation_error(np.array([a, b]))))
        t = np.where(everything, -np.inf, np.where(nothing, np.inf, hi))
        return t, np.where(everything | nothing, end_error, residual + end_error)

    def tails(self, eps: Array) -> Tails:
        t, _ = self._solve(eps)
        p_law, q_law = self._laws()
        finite = np.where(np.isfinite(t), t, 0.0)

        def sf(law: tuple[Array, Array]) -> tuple[Array, Array]:
            weights = np.exp(law[0])
            u = np.subtract.outer(finite, law[1])
            upper, lower = _laplace_sf(u) @ weights, _laplace_sf(-u) @ weights
            upper = np.where(t == -np.inf, 1.0, np.where(t == np.inf, 0.0, upper))
            lower = np.where(t == -np.inf, 0.0, np.where(t == np.inf, 1.0, lower))
            return upper, lower

        p_sf, p_cdf = sf(p_law)
        q_sf, q_cdf = sf(q_law)
        k = self.size
        # exp to a few ulp; the argument t - c_j within ulp (|t| + k eps), times
        # the hazard rate 1; the weights' logarithms within ulp of their size; the sum
        rel = (16 * ULP + 4 * ULP * (np.abs(finite) + k * self.epsilon + 1)
               + 8 * ULP * (float(np.max(np.abs(self._log_weights()))) + 1) + 4 * (k + 2) * ULP)
        return Tails(p_sf, p_cdf, q_sf, q_cdf, rel)

    def threshold_error(self, eps: Array) -> float:
        return _solved_threshold_error(self._solve, eps)

    def loss_range(self) -> tuple[float, float]:
        a, b = self._span()
        ends = self.loss_of(np.array([a, b]))
        return float(ends[0]), float(ends[1])
