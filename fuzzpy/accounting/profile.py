"""Views of a composition's privacy beyond one (eps, delta): its privacy
profile, its trade-off curve, zCDP's rho and the Renyi curve (issue 29, item 6).

Every figure here is a bound the accountant proves, rounded toward safety:

* privacy profile: for each delta of a grid, the tightest proven epsilon at
  that delta (`accountant.tightest`), so every point (eps, delta) is a valid
  (eps, delta)-DP guarantee -- delta(eps) <= delta (Steinke 2022, sec. 3.2);
* trade-off curve: an (eps, delta)-DP mechanism is f-DP for
  f(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))
  (Dong, Roth & Su 2022, Prop. 2.5; Kairouz, Oh & Viswanath 2015), and a
  mechanism f_i-DP for every i is max_i f_i-DP; a composition of Gaussian
  mechanisms alone is mu-GDP with mu = sqrt(sum (s_i / sigma_i)^2), exactly
  G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (ibid., Cor. 3.3). A trade-off
  value is a lower bound on a test's type II error: rounded down;
* rho: the events' zCDP (Bun & Steinke 2016), rounded up;
* Renyi curve: eps(alpha) of the composition (Mironov 2017, Prop. 1), each
  order's value raised by its floating-point error bound (`rdp`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from fuzzpy.accounting.events import Event

PROFILE_DELTAS: tuple[float, ...] = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10, 1e-12)
TRADEOFF_ALPHAS: tuple[float, ...] = (0.0, 0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)
RENYI_ORDERS: tuple[float, ...] = (1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0)

# a relative and an absolute margin far above the rounding of the few float
# operations in one trade-off value (exp, products, Phi): beta is rounded down
_BETA_MARGIN = 1e-12


@dataclass(frozen=True)
class ProfilePoint:
    """The composition is (epsilon, delta)-DP, proved by ``method``."""

    epsilon: float
    delta: float
    method: str


@dataclass(frozen=True)
class TradeoffPoint:
    """No test telling the neighbours apart with type I error ``alpha`` has
    type II error below ``beta``."""

    alpha: float
    beta: float


@dataclass(frozen=True)
class PrivacyViews:
    profile: tuple[ProfilePoint, ...]
    tradeoff: tuple[TradeoffPoint, ...]
    tradeoff_source: str
    gdp_mu: float | None
    rho: Fraction | None
    renyi: tuple[tuple[float, float], ...]
    subsampled: bool = False  # rho is then the releases' without amplification

    def to_json(self) -> dict[str, object]:
        return {
            "profile": [{"epsilon": _json_number(p.epsilon), "delta": p.delta, "method": p.method}
                        for p in self.profile],
            "tradeoff": [{"alpha": t.alpha, "beta": t.beta} for t in self.tradeoff],
            "tradeoff_source": self.tradeoff_source,
            "gdp_mu": self.gdp_mu,
            "rho": None if self.rho is None else _rho_up(self.rho),
            "rho_amplified": not self.subsampled,
            "renyi": [{"order": a, "epsilon": _json_number(e)} for a, e in self.renyi],
        }


def _json_number(value: float) -> float | str:
    return value if math.isfinite(value) else "inf"


def _rho_up(rho: Fraction) -> float:
    from fuzzpy.accounting.accountant import float_up

    return float_up(rho)


def privacy_profile(
    events: Sequence[Event],
    deltas: Iterable[float] = PROFILE_DELTAS,
    progress: Callable[[str], None] | None = None,
) -> tuple[ProfilePoint, ...]:
    """(eps, delta) at each delta, the tightest proven; a pure composition
    also gives its (eps, 0). Points with no finite epsilon are left out."""
    from fuzzpy.accounting.accountant import float_up, pure_epsilon, tightest

    points: list[ProfilePoint] = []
    pure = pure_epsilon(events)
    if pure is not None:
        points.append(ProfilePoint(float_up(pure), 0.0, "pure"))
    deltas = tuple(deltas)
    for i, delta in enumerate(deltas, 1):
        if progress is not None:
            progress(f"profile: delta {i} of {len(deltas)} ({delta:g})")
        found = tightest(events, delta)
        if math.isfinite(found.epsilon):
            points.append(ProfilePoint(found.epsilon, delta, found.method))
    return tuple(points)


def gaussian_mu(events: Sequence[Event]) -> float | None:
    """mu when the events are Gaussian mechanisms only (mu-GDP, Dong, Roth &
    Su 2022, Cor. 3.3: mu^2 adds, and mu^2 = 2 rho), rounded up; else None."""
    from fuzzpy.accounting.accountant import atoms_of
    from fuzzpy.accounting.atoms import GaussianAtom, NotSummarisable

    try:
        atoms = atoms_of(events)
    except NotSummarisable:
        return None
    if not atoms or not all(isinstance(atom, GaussianAtom) for atom in atoms):
        return None
    rho = sum((atom.rho * n for atom, n in atoms.items()), Fraction(0))
    return GaussianAtom(rho).mu


def tradeoff_from_profile(points: Sequence[ProfilePoint], alphas: Iterable[float] = TRADEOFF_ALPHAS) -> tuple[TradeoffPoint, ...]:
    """max over the profile's points of f_{eps, delta}(alpha), rounded down."""
    curve = []
    for alpha in alphas:
        if alpha <= 0:  # f(0) = 1 - the least delta (1 for a pure point): exact, not rounded
            least = min((p.delta for p in points), default=1.0)
            curve.append(TradeoffPoint(alpha, 1.0 if least == 0 else _down(1 - least)))
            continue
        best = 0.0
        for p in points:
            if not math.isfinite(p.epsilon):
                continue
            # e^eps can overflow for a huge epsilon: its terms are then 0
            grow = math.exp(p.epsilon) if p.epsilon < 700 else math.inf
            first = 1 - p.delta - grow * alpha
            second = (1 - p.delta - alpha) / grow
            best = max(best, first, second)
        curve.append(TradeoffPoint(alpha, _down(best)))
    return tuple(curve)


def gaussian_tradeoff(mu: float, alphas: Iterable[float] = TRADEOFF_ALPHAS) -> tuple[TradeoffPoint, ...]:
    """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), rounded down."""
    from scipy.stats import norm

    curve = []
    for alpha in alphas:
        if alpha <= 0 or alpha >= 1:  # G_mu(0) = 1, G_mu(1) = 0 exactly
            curve.append(TradeoffPoint(alpha, 1.0 if alpha <= 0 else 0.0))
            continue
        beta = float(norm.cdf(norm.ppf(1 - alpha) - mu))
        curve.append(TradeoffPoint(alpha, _down(beta)))
    return tuple(curve)


def _down(beta: float) -> float:
    return max(0.0, min(1.0, beta * (1 - _BETA_MARGIN) - _BETA_MARGIN))


def renyi_curve(events: Sequence[Event], orders: Iterable[float] = RENYI_ORDERS) -> tuple[tuple[float, float], ...]:
    """eps(alpha) at each order, certified in mpmath and rounded up
    (`renyi.certified_divergence`), when no event has a delta of its own; ()
    otherwise (an (eps, delta) event has no Renyi curve)."""
    from fuzzpy.accounting import renyi
    from fuzzpy.accounting.accountant import atoms_of
    from fuzzpy.accounting.atoms import NotSummarisable

    try:
        atoms = atoms_of(events)
    except NotSummarisable:
        return ()
    values = []
    for order in orders:
        value, delta = renyi.certified_divergence(atoms, order)
        if delta != 0:
            return ()
        values.append((order, value))
    return tuple(values)


def views(events: Sequence[Event], progress: Callable[[str], None] | None = None) -> PrivacyViews:
    from fuzzpy.accounting.accountant import rho

    profile = privacy_profile(events, progress=progress)
    mu = gaussian_mu(events)
    if mu is not None:
        tradeoff, source = gaussian_tradeoff(mu), "exact: Gaussian differential privacy (Dong, Roth & Su 2022, Cor. 3.3)"
    else:
        tradeoff = tradeoff_from_profile(profile)
        source = "from the privacy profile's points (Dong, Roth & Su 2022, Prop. 2.5)"
    return PrivacyViews(profile, tradeoff, source, mu, rho(events), renyi_curve(events), _subsampled(events))


def _subsampled(events: Sequence[Event]) -> bool:
    from fuzzpy.accounting.accountant import atoms_of
    from fuzzpy.accounting.atoms import NotSummarisable, SubsampledAtom

    try:
        return any(isinstance(atom, SubsampledAtom) for atom in atoms_of(events))
    except NotSummarisable:
        return False
