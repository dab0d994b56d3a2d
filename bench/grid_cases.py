"""The cases of bench/accounting_grid.py: fuzzpy events, the same mechanisms as
dp-accounting events, and how to compute an independent reference.

Reference kinds (tests/dp_reference, mpmath and long double, sharing no code
with fuzzpy.accounting):
    gaussian   exact: Balle & Wang's formula at mu = sqrt(sum mu_i^2)
    discrete   exact: the enumerated loss of (subsampled) randomized response
    mixture    exact: a Gaussian composed with an enumerated discrete loss
    laplace    exact: the k-fold Laplace loss (atoms + Irwin-Hall-shaped density),
               composed with an enumerated discrete loss
    sampled-laplace  exact: one Poisson-subsampled Laplace mechanism (its
               likelihood ratio is monotone, so delta is a closed form)
    fourier    numerical: inversion of the moment generating function in long
               double at two tilts and periods agreeing to 1e-6 (subsampled
               Gaussians); bracketed by that agreement
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mpmath as mp
from dp_accounting import dp_event as E
from dp_accounting.pld import PLDAccountant
from dp_accounting.pld import privacy_loss_distribution as P
from dp_reference import exact, fourier, lattice_compose, renyi_upper, rigorous, trees

from fuzzpy.accounting.events import Event, Gaussian, Laplace, Repeat, Subsample, Verified

F = Fraction
AGREE = 1e-6  # relative agreement of the numerical inversions (`fourier`)
DELTAS = (1e-5, 1e-7, 1e-9, 1e-11, 1e-13, 1e-15)


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    delta: float
    events: tuple[Event, ...]
    dpa: Callable[[float], float]  # delta -> dp-accounting's PLD epsilon
    kind: str

    @property
    def key(self) -> str:
        return f"{self.name}|{self.delta:g}"


def _accountant(event: Callable[[], E.DpEvent]) -> Callable[[float], float]:
    """dp-accounting's PLD accountant (default settings) on an event."""

    def run(delta: float) -> float:
        accountant = PLDAccountant()
        accountant.compose(event())
        return float(accountant.get_epsilon(delta))

    return run


def _library(build: Callable[[], object]) -> Callable[[float], float]:
    """dp-accounting's PLD library, for what its accountant does not take
    (randomized response under add/remove, subsampled randomized response)."""
    return lambda delta: float(build().get_epsilon_for_delta(delta))


def _rr(eps: Fraction):
    """Binary randomized response at eps: dp-accounting's noise parameter p
    reports uniformly w.p. p, so P(true) = 1 - p/2 and p = 2 / (1 + e^eps)."""
    return P.from_randomized_response(2 / (1 + math.exp(float(eps))), 2)


def _sampled_rr(q: Fraction, eps: Fraction):
    """Poisson-subsampled randomized response: the pair (mixture, P0) on two
    outcomes; symmetric=False adds the swapped pair for the other direction."""
    p = math.exp(float(eps)) / (1 + math.exp(float(eps)))
    lower = {1: math.log(1 - p), 0: math.log(p)}
    mixture = (1 - float(q)) * (1 - p) + float(q) * p
    upper = {1: math.log(mixture), 0: math.log1p(-mixture)}
    return P.from_two_probability_mass_functions(lower, upper, symmetric=False)


def _repeat(n: int, event: Event) -> Event:
    return Repeat(n, (event,))


def cases() -> list[Case]:
    found: list[Case] = []

    def add(family, name, events, dpa, kind, deltas=DELTAS):
        for d in deltas:
            found.append(Case(family, name, d, tuple(events), dpa, kind))

    for sigma in (F(1, 2), F(1), F(2), F(5), F(10)):
        for k in (1, 10, 100, 1000):
            add(
                "gaussian",
                f"gaussian sigma={float(sigma):g} k={k}",
                [_repeat(k, Gaussian(F(1), sigma))],
                _accountant(
                    lambda s=sigma, k=k: E.SelfComposedDpEvent(E.GaussianDpEvent(float(s)), k)
                ),
                "gaussian",
            )
    for eps0 in (F(1, 10), F(1, 2), F(1)):
        for k in (1, 5, 10):  # the exact k-fold Laplace grows costly beyond ~10
            add(
                "laplace",
                f"laplace eps0={float(eps0):g} k={k}",
                [_repeat(k, Laplace(F(1), 1 / eps0))],
                _accountant(
                    lambda e=eps0, k=k: E.SelfComposedDpEvent(E.LaplaceDpEvent(float(1 / e)), k)
                ),
                "laplace",
            )
    for eps0 in (F(1, 10), F(1, 2), F(1)):
        for k in (10, 100, 1000):
            add(
                "pure",
                f"pure eps0={float(eps0):g} k={k}",
                [_repeat(k, Verified("m", eps0))],
                _library(lambda e=eps0, k=k: _rr(e).self_compose(k)),
                "discrete",
            )
    for q in (F(1, 100), F(1, 10)):
        for eps0 in (F(1, 2), F(1)):
            for k in (100, 1000):
                add(
                    "subsampled pure",
                    f"subsampled pure q={float(q):g} eps0={float(eps0):g} k={k}",
                    [_repeat(k, Subsample(q, (Verified("m", eps0),)))],
                    _library(lambda q=q, e=eps0, k=k: _sampled_rr(q, e).self_compose(k)),
                    "discrete",
                )
    for q in (F(1, 100), F(1, 10)):
        for eps0 in (F(1, 2), F(1), F(2)):
            add(
                "subsampled laplace",
                f"subsampled laplace q={float(q):g} eps0={float(eps0):g}",
                [Subsample(q, (Laplace(F(1), 1 / eps0),))],
                _accountant(
                    lambda q=q, e=eps0: E.PoissonSampledDpEvent(
                        float(q), E.LaplaceDpEvent(float(1 / e))
                    )
                ),
                "sampled-laplace",
            )
    for q in (F(1, 1000), F(1, 100)):
        for sigma in (F(4, 5), F(1), F(2)):
            for k in (100, 300, 1000):
                add(
                    "dp-sgd",
                    f"dp-sgd q={float(q):g} sigma={float(sigma):g} k={k}",
                    [_repeat(k, Subsample(q, (Gaussian(F(1), sigma),)))],
                    _accountant(
                        lambda q=q, s=sigma, k=k: E.SelfComposedDpEvent(
                            E.PoissonSampledDpEvent(float(q), E.GaussianDpEvent(float(s))), k
                        )
                    ),
                    "fourier",
                )
    for mu in (F(1, 2), F(1), F(2)):
        for k, eps0 in ((10, F(1, 2)), (100, F(1, 10)), (30, F(1, 4)), (200, F(1, 20))):
            add(
                "mixture",
                f"gaussian mu={float(mu):g} + {k} x pure {float(eps0):g}",
                [Gaussian(F(1), 1 / mu), _repeat(k, Verified("m", eps0))],
                _library(
                    lambda mu=mu, k=k, e=eps0: P.from_gaussian_mechanism(float(1 / mu)).compose(
                        _rr(e).self_compose(k)
                    )
                ),
                "mixture",
            )
    for eps0, k, p_eps, p_k in ((F(1, 2), 10, F(1, 4), 5), (F(1), 5, F(1, 10), 20)):
        add(
            "mixture",
            f"{k} x laplace {float(eps0):g} + {p_k} x pure {float(p_eps):g}",
            [_repeat(k, Laplace(F(1), 1 / eps0)), _repeat(p_k, Verified("m", p_eps))],
            _library(
                lambda e=eps0, k=k, pe=p_eps, pk=p_k: (
                    P.from_laplace_mechanism(float(1 / e))
                    .self_compose(k)
                    .compose(_rr(pe).self_compose(pk))
                )
            ),
            "laplace",
        )
    return found


# ---------------------------------------------------------------- references


def reference(case: Case, hint: float) -> tuple[float, float]:
    """(lo, hi) containing the exact epsilon. ``hint`` (any rough answer)
    only sizes the numerical inversion's tilt."""
    with mp.workdps(40):
        if case.kind == "sampled-laplace":
            ((sampled,),) = [e.body for e in case.events]
            q, eps0 = F(case.events[0].rate), F(sampled.sensitivity) / F(sampled.scale)
            return exact.solve_epsilon(
                lambda e: max(exact.subsampled_laplace_delta(eps0, q, e, r) for r in (True, False)),
                case.delta,
            )
        if case.kind != "fourier":
            return exact.solve_epsilon(lambda e: trees.delta(case.events, e), case.delta)
        return _fourier_bracket(case, hint)


def rigorous_lower(case: Case, hint: float) -> float:
    """A proven lower end for a DP-SGD row's epsilon (tests/dp_reference/
    rigorous: a lattice pair below the step in Blackwell's order, composed
    with a bounded FFT error); ``hint`` (any rough epsilon) sizes the tilt."""
    steps, pairs = sampled_gaussian(case)
    h = rigorous.lattice_step(pairs)
    lowers = [rigorous.step_bounds(pair, h)[0] for pair in pairs]
    return lattice_compose.epsilon_lower(lowers, steps, case.delta, hint)


def sampled_gaussian(case: Case) -> tuple[int, list[rigorous.SampledGaussian]]:
    """A DP-SGD row's step count and one step's two directions."""
    (repeat,) = case.events
    (subsample,) = repeat.body
    (gaussian,) = subsample.body
    rate = F(subsample.rate)
    mu = F(gaussian.sensitivity) / F(gaussian.sigma)
    return repeat.count, [rigorous.SampledGaussian(rate, mu, remove) for remove in (True, False)]


def rigorous_upper(case: Case, hint: float) -> tuple[float, float]:
    """(lattice, renyi): two proven upper ends for a DP-SGD row's epsilon.
    lattice: tests/dp_reference/rigorous's connect-the-dots pair above each
    step in Blackwell's order, composed with a bounded FFT error (tight);
    renyi: the step's exact RDP at integer orders with CKS20's conversion
    (loose, but with no lattice or FFT in the argument). ``hint`` (any rough
    epsilon) sizes the tilt only."""
    steps, pairs = sampled_gaussian(case)
    h = rigorous.lattice_step(pairs)
    uppers = [rigorous.step_bounds(pair, h, upper=True)[1] for pair in pairs]
    lattice = lattice_compose.epsilon_upper(uppers, steps, case.delta, hint)
    renyi, _ = renyi_upper.epsilon_upper(pairs[0].rate, pairs[0].mu, steps, case.delta)
    return lattice, renyi


def _fourier_bracket(case: Case, hint: float) -> tuple[float, float]:
    """Both directions, each by two inversion settings; delta taken as the
    larger setting times (1 + AGREE) for hi and the smaller times (1 - AGREE)
    for lo, after checking the settings agree within AGREE (or, failing
    that, 10 or 100 AGREE: long double leaves up to ~1e-5 at delta = 1e-15
    when epsilon is small)."""
    mix = trees.flatten(case.events)
    settings = [
        fourier.inversions(trees.fourier_components(mix, remove), hint) for remove in (True, False)
    ]

    for agree in (AGREE, 10 * AGREE):
        try:
            return _bracket(case, hint, settings, agree)
        except RuntimeError:  # at delta ~ 1e-15 long double can leave a few 1e-6
            pass
    return _bracket(case, hint, settings, 100 * AGREE)


def _bracket(case: Case, hint: float, settings, agree: float) -> tuple[float, float]:
    def curve(eps: mp.mpf, pick) -> mp.mpf:
        values = []
        for pair in settings:
            a, b = (s.delta(float(eps)) for s in pair)
            # far below the target, only the side of delta matters (both are below)
            if max(a, b) > 1e-3 * case.delta and abs(a - b) > agree * max(a, b):
                raise RuntimeError(f"inversion settings disagree at {float(eps)}: {a}, {b}")
            values.append(pick(a, b))
        return mp.mpf(max(values))

    hi = _solve_near(lambda e: curve(e, max) * (1 + agree), case.delta, hint)[1]
    lo = _solve_near(lambda e: curve(e, min) * (1 - agree), case.delta, hint)[0]
    return lo, hi


def _solve_near(delta_of, delta: float, hint: float) -> tuple[float, float]:
    """(lo, hi) with delta_of(lo) > delta >= delta_of(hi), hi - lo <= 1e-10 hi,
    by bisection from a bracket grown around ``hint``: the inversion's tilt
    suits epsilons near the hint only (far below it the integrand overflows)."""
    step = 1e-4 * max(hint, 1e-6)
    lo, hi = hint - step, hint + step
    while delta_of(max(lo, 0.0)) <= delta:
        if lo <= 0:
            return 0.0, 0.0
        lo, step = hint - 4 * step, 4 * step
    lo = max(lo, 0.0)
    while delta_of(hi) > delta:
        lo, hi, step = hi, hi + step, 4 * step
    # Illinois (regula falsi) on log delta, kept bracketed
    target = math.log(delta)

    def gap(eps: float) -> float:
        value = float(delta_of(eps))
        return (math.log(value) if value > 0 else -1e6) - target

    g_lo, g_hi, side = gap(lo), gap(hi), 0
    while hi - lo > 1e-10 * hi:
        mid = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        g_mid = gap(mid)
        if g_mid > 0:
            lo, g_lo = mid, g_mid
            g_hi, side = (g_hi / 2 if side == -1 else g_hi), -1
        else:
            hi, g_hi = mid, g_mid
            g_lo, side = (g_lo / 2 if side == 1 else g_lo), 1
    return lo, hi
