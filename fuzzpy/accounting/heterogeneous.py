"""Optimal composition of heterogeneous (eps_i, delta_i)-DP events.

Murtagh & Vadhan 2016 ("The complexity of computing the optimal composition
of differential privacy", Thm 1.4, extending Kairouz, Oh & Viswanath 2015,
Thm 3.3 to heterogeneous parameters): the composition of k mechanisms,
mechanism i (eps_i, delta_i)-DP, is (eps, delta)-DP for every choice of them
iff

    1 - prod_i (1 - delta_i) (1 - delta_RR(eps)) <= delta,

where delta_RR is the hockey-stick curve of the composition of randomized
responses: mechanism i's privacy loss is +eps_i with probability
p_i = e^eps_i / (1 + e^eps_i), else -eps_i, and
delta_RR(eps) = E[(1 - e^{eps - L})_+]. Each (eps_i, delta_i) event is
dominated by the four-point pair "eps_i-randomized response with probability
1 - delta_i, a loss of +-infinity with probability delta_i", which is itself
(eps_i, delta_i)-DP: the bound is attained, hence exact. At eps = sum eps_i,
delta_RR = 0: delta = 1 - prod (1 - delta_i) (the issue-25 case (1, 0.1) with
(2, 0.2): eps = 3 exactly at delta = 0.28).

Events of one eps_i are grouped (a binomial number of flips); the loss takes
prod (n_j + 1) values, enumerated when that is at most MAX_POINTS.

Rigour: a candidate is found in floats (`discrete`), then `holds` checks it
in mpmath at MP_PREC bits, from the exact (float) eps_i and Fraction
delta_i: every mass is a product of binomial terms each within a relative
2^-(MP_PREC - 8) of exact, every loss is exact at that precision (a sum of
at most a few integer multiples of doubles), and the sum of positive terms
loses no more; the 2^-100 margin multiplied in covers all of it. When the
check fails the candidate is raised, as `optimal.certified` does.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp, mpf

from fuzzpy.accounting import discrete
from fuzzpy.accounting.atoms import ApproxAtom, Atoms, LaplaceAtom, PureAtom
from fuzzpy.accounting.optimal import randomized_response
from fuzzpy.accounting.rounding import MP_MARGIN, MP_PREC, float_up, fraction_up_mp, mp_of

MAX_POINTS = 4096
_MAX_RAISES = 60

Groups = tuple[tuple[float, int], ...]  # (eps_j rounded up, how many events)


def profile(atoms: Atoms) -> tuple[Groups, tuple[tuple[Fraction, int], ...]] | None:
    """The atoms' epsilons grouped, and their deltas; None unless every atom
    is pure (a Laplace or exponential mechanism taken as eps-DP: a valid
    bound) or (eps, delta), with at most MAX_POINTS loss values."""
    groups: dict[float, int] = {}
    deltas: list[tuple[Fraction, int]] = []
    for atom, n in atoms.items():
        if not isinstance(atom, LaplaceAtom | PureAtom | ApproxAtom):
            return None
        eps = float_up(atom.epsilon)
        if eps > 0:
            groups[eps] = groups.get(eps, 0) + n
        if isinstance(atom, ApproxAtom) and atom.delta > 0:
            deltas.append((atom.delta, n))
    if math.prod(n + 1 for n in groups.values()) > MAX_POINTS:
        return None
    return tuple(sorted(groups.items())), tuple(deltas)


def is_exact(atoms: Atoms) -> bool:
    """Whether the answer is the optimum: every atom pure or (eps, delta),
    no exponential mechanism (whose bounded range proves more) and no
    Laplace (whose loss is not two-point)."""
    return all(
        isinstance(atom, ApproxAtom) or isinstance(atom, PureAtom) and not atom.bounded_range
        for atom in atoms
    )


def epsilon(atoms: Atoms, delta: float) -> float | None:
    """The optimal epsilon of the composition at ``delta``, a proven upper
    bound (inf when delta < 1 - prod (1 - delta_i)); None where it does not apply."""
    found = profile(atoms)
    if found is None or not 0 < delta < 1:
        return None
    groups, deltas = found
    used = _used(deltas)
    if used > delta:  # (at used == delta, eps = sum eps_i may hold: `holds` decides)
        return math.inf
    # sum eps_i rounded up (a float sum may round below it, where the top loss still counts)
    top = float_up(sum((Fraction(e) * n for e, n in groups), Fraction(0)))
    candidate = _candidate(groups, float(used), delta)
    return _certified(groups, deltas, delta, min(candidate, top), top)


def _used(deltas: tuple[tuple[Fraction, int], ...]) -> float:
    """1 - prod (1 - delta_i)^{n_i}, rounded up."""
    with mp.workprec(MP_PREC):
        log_kept = mpmath.fsum(n * mpmath.log1p(-mp_of(d)) for d, n in deltas)
        return min(float_up(fraction_up_mp(-mpmath.expm1(log_kept))), 1.0)


def _candidate(groups: Groups, used: float, delta: float) -> float:
    losses, log_masses = np.zeros(1), np.zeros(1)
    for eps, n in groups:
        values, m = randomized_response(eps, n)
        losses = (losses[:, None] + values[None, :]).ravel()
        log_masses = (log_masses[:, None] + m[None, :]).ravel()
    order = np.argsort(losses, kind="stable")
    inner = (delta - used) / (1 - used)
    return discrete.epsilon_for_delta_log(losses[order], log_masses[order], 0.0, inner)


def _certified(
    groups: Groups, deltas: tuple[tuple[Fraction, int], ...], delta: float, eps: float, top: float
) -> float:
    """The smallest eps >= the candidate found by raising it at which `holds`
    proves the condition; ``top`` = sum eps_i always holds when delta >= used."""
    if math.isnan(eps) or math.isinf(eps):
        return math.inf
    minimum = max(abs(eps), 1.0) * 2.0**-48
    for _ in range(_MAX_RAISES):
        if eps >= top:
            return top if holds(groups, deltas, delta, top) else math.inf
        if holds(groups, deltas, delta, eps):
            return eps
        eps += minimum
        minimum *= 2
    return math.inf


def holds(
    groups: Groups, deltas: tuple[tuple[Fraction, int], ...], delta: float, eps: float
) -> bool:
    """Whether an upper bound of 1 - prod (1 - delta_i) (1 - delta_RR(eps)) is <= delta."""
    with mp.workprec(MP_PREC + 16):
        target = mpf(eps)
        log_kept = mpmath.fsum(n * mpmath.log1p(-mp_of(d)) for d, n in deltas)
        tail = _rr_tail(groups, target)
        # 1 - kept (1 - tail) = used + kept tail, used = 1 - kept = -expm1(log kept):
        # no difference of numbers near 1 (which loses a tail below 2^-precision)
        bound = (-mpmath.expm1(log_kept) + mpmath.exp(log_kept) * tail) * (1 + MP_MARGIN)
        return bool(bound <= mpf(delta))


def loss_rows(e0: float, n: int) -> list[tuple[mpf, mpf]]:
    """The privacy loss of n compositions of one e0-randomized response: the
    values (n - 2 flips) e0 with their binomial masses (Kairouz, Oh &
    Viswanath 2015, Thm. 3.3), at the working precision."""
    e = mpf(e0)
    log_p, log_q = -mpmath.log1p(mpmath.exp(-e)), -mpmath.log1p(mpmath.exp(e))
    rows = []
    for flips in range(n + 1):
        log_binomial = mpmath.loggamma(n + 1) - mpmath.loggamma(flips + 1) - mpmath.loggamma(n - flips + 1)
        rows.append(((n - 2 * flips) * e, mpmath.exp(log_binomial + (n - flips) * log_p + flips * log_q)))
    return rows


def _rr_tail(groups: Groups, eps: mpf) -> mpf:
    """delta_RR(eps): the sum over loss values L > eps of P(L) (1 - e^{eps - L})."""
    tables = [loss_rows(e0, n) for e0, n in groups]
    total = mpf(0)
    for combination in itertools.product(*tables):
        loss = mpmath.fsum(value for value, _ in combination)
        if loss > eps:
            total += mpmath.fprod(m for _, m in combination) * -mpmath.expm1(eps - loss)
    return total
