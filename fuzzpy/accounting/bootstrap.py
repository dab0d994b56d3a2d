"""`bootstrap[m]` of a dataset of public size n under replace-one: the
amplified profile of sampling with replacement.

Balle, Barthe & Gaboardi ("Privacy amplification by subsampling", NeurIPS
2018, Thm 10 and the with-replacement case of Sec. 5): couple the m draws of
two replace-one neighbours index by index; the replaced row is drawn j times,
j ~ Binomial(m, 1/n), and the two samples then differ in exactly j places (j
replaced rows), the same in both. With eta = P(j >= 1) = 1 - (1 - 1/n)^m,
advanced joint convexity over the mixture in j gives, for every eps >= 0,

    H_{e^eps'}(M(S(D)) || M(S(D'))) <= sum_{j >= 1} b_j delta_j(eps),
    eps' = log(1 + eta (e^eps - 1)),  b_j = C(m, j) n^-j (1 - 1/n)^(m-j),

where delta_j is the body's privacy profile on samples j replaced rows apart,
that is 2j add/remove steps of the sampled bag (the body's events are costs
under add/remove, `neighbours`): a Gaussian at sensitivity 2 j s (the
Gaussian profile of mu_j = 2 j mu, Balle & Wang 2018), a Laplace body at 2 j
eps0 (its profile 1 - e^{(eps - 2 j eps0)/2}), any other pure body at 2 j eps0
(randomized response's profile, the largest of any pure mechanism: Kairouz,
Oh & Viswanath 2015). The figure at a target delta is the eps' of the
smallest eps whose sum is at most delta (bisection in mpmath, the sum
certified with a margin; the binomial tail beyond J, J chosen so that it
is negligible, counted with delta_j = 1). A pure body also has the pure
bound eps' at eps = 2 m eps0 (delta 0). Bodies of other events keep the
unamplified group bound over 2m steps (`neighbours`).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from mpmath import mp

from fuzzpy.accounting.events import Event
from fuzzpy.accounting.rounding import MP_PREC, fraction_up_mp, mp_of

#: the sum is certified below delta with this relative margin (mpmath at MP_PREC bits)
MARGIN = mpmath.mpf("1e-12")
_BISECTIONS = 80


def _gaussian_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """The Gaussian profile at eps for mu = s / sigma (Balle & Wang 2018, Thm 8)."""
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def _laplace_delta(epsilon: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """The Laplace profile of a query moving by epsilon * scale."""
    return mpmath.mpf(0) if eps >= epsilon else -mpmath.expm1((eps - epsilon) / 2)


def _pure_delta(epsilon: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """The largest profile of an epsilon-DP mechanism: randomized response's."""
    if eps >= epsilon:
        return mpmath.mpf(0)
    return (mpmath.exp(epsilon) - mpmath.exp(eps)) / (1 + mpmath.exp(epsilon))


KINDS = {"gaussian": _gaussian_delta, "laplace": _laplace_delta, "pure": _pure_delta}


def _weights(draws: int, rows: int) -> tuple[list[mpmath.mpf], mpmath.mpf]:
    """b_1 .. b_J and the mass beyond J (at most 1e-40 of eta, or J = m)."""
    p = mpmath.mpf(1) / rows
    eta = -mpmath.expm1(draws * mpmath.log1p(-p))
    weights: list[mpmath.mpf] = []
    held = mpmath.mpf(0)
    for j in range(1, draws + 1):
        b = mpmath.binomial(draws, j) * p**j * (1 - p) ** (draws - j)
        weights.append(b)
        held += b
        if eta - held <= eta * mpmath.mpf("1e-40"):
            break
    return weights, max(eta - held, mpmath.mpf(0))


def _profile(kind: str, unit: mpmath.mpf, weights: list[mpmath.mpf], rest: mpmath.mpf,
             eps: mpmath.mpf, steps: int = 2) -> mpmath.mpf:
    """sum_j b_j delta_j(eps), the tail beyond J at delta_j = 1."""
    one = KINDS[kind]
    return mpmath.fsum(b * one(steps * (j + 1) * unit, eps) for j, b in enumerate(weights)) + rest


def bootstrap_epsilon(kind: str, unit: Fraction, draws: int, rows: int, delta: float, steps: int = 2) -> Fraction:
    """eps' (rounded up, an exact Fraction) at which ``draws`` draws with
    replacement from ``rows`` public rows of a body of the given ``kind``
    ("gaussian": ``unit`` = mu = s / sigma; "laplace", "pure": ``unit`` =
    its epsilon per step) are (eps', delta)-DP under replace-one (module
    docstring), one replaced row being ``steps`` steps of the unit (2
    add/remove steps; 1 for a body already stated per replaced row,
    `events.Resampled.per_replacement`). ``delta`` 0: the pure bound
    (``kind`` not Gaussian)."""
    if draws < 1 or rows < 1:
        raise ValueError("a bootstrap draws at least once from at least one row")
    with mp.workprec(MP_PREC):
        unit_mp = mp_of(unit)
        p = mpmath.mpf(1) / rows
        eta = -mpmath.expm1(draws * mpmath.log1p(-p))
        top = steps * draws * unit_mp  # the body's epsilon at the largest distance (pure bodies)
        if kind != "gaussian":
            pure = fraction_up_mp(mpmath.log1p(eta * mpmath.expm1(top)))
            if delta <= 0:
                return pure
        elif delta <= 0:
            raise ValueError("a Gaussian body has no pure bound")
        weights, rest = _weights(draws, rows)
        target = mpmath.mpf(delta) * (1 - MARGIN)
        if rest >= target:
            raise ArithmeticError("the binomial tail alone exceeds delta")
        low, high = mpmath.mpf(0), top if kind != "gaussian" else mpmath.mpf(1)
        if kind == "gaussian":
            while _profile(kind, unit_mp, weights, rest, high, steps) > target:
                high *= 2
                if high > 1e6:
                    raise ArithmeticError("no epsilon below 1e6")
        if _profile(kind, unit_mp, weights, rest, low, steps) <= target:
            return Fraction(0)
        for _ in range(_BISECTIONS):
            middle = (low + high) / 2
            if _profile(kind, unit_mp, weights, rest, middle, steps) <= target:
                high = middle
            else:
                low = middle
        found = fraction_up_mp(mpmath.log1p(eta * mpmath.expm1(high)))
        return found if kind == "gaussian" else min(found, pure)


def mu_of(rho: Fraction) -> Fraction:
    """mu = sqrt(2 rho) as a Fraction rounded up (a larger mu is less private)."""
    with mp.workprec(MP_PREC):
        return fraction_up_mp(mpmath.sqrt(2 * mp_of(rho)))


def body_kind(body: tuple[Event, ...]) -> tuple[str, Fraction] | None:
    """The profile family of a bootstrapped body, with its unit: Gaussians
    only (one Gaussian of the combined sensitivity, `atoms`: mu), one
    Laplace event (its epsilon), pure events only (their summed epsilon:
    pure composition); None for any other body."""
    from fuzzpy.accounting.atoms import (
        Flattener,
        GaussianAtom,
        LaplaceAtom,
        NotSummarisable,
        pure_total,
    )

    try:
        atoms = Flattener().flatten(body)
    except NotSummarisable:
        return None
    if not atoms:
        return None
    if all(isinstance(atom, GaussianAtom) for atom in atoms):
        return "gaussian", mu_of(sum((atom.rho * n for atom, n in atoms.items()), Fraction(0)))
    if len(atoms) == 1 and isinstance(next(iter(atoms)), LaplaceAtom) and sum(atoms.values()) == 1:
        return "laplace", next(iter(atoms)).epsilon
    total = pure_total(atoms)
    return None if total is None else ("pure", total)
