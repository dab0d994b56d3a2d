"""The true delta of a small family of fuzzpy event trees, computed independently.

Supported: lists of events and `Repeat`s of single events, where an event is
`Gaussian`, `Laplace`, `ExpMech`, pure `Verified`, or `Subsample` of one
`Gaussian`, `Laplace`-free pure event. Each mechanism is replaced by its
worst-case pair (see `exact`); a neighbouring pair removes or adds one
person for all mechanisms at once, so delta is the larger of the two
directions' curves (symmetric mechanisms are the same in both).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath as mp

from dp_reference import exact, fourier
from fuzzpy.accounting.events import ExpMech, Gaussian, Laplace, Repeat, Subsample, Verified


class Unsupported(ValueError):
    pass


@dataclass
class Mix:
    """Counts of each kind of mechanism."""

    gaussian_mu2: Fraction = Fraction(0)
    pure: Counter = field(default_factory=Counter)  # eps -> count
    laplace: Counter = field(default_factory=Counter)  # eps0 -> count
    sampled_pure: Counter = field(default_factory=Counter)  # (q, eps) -> count
    sampled_gaussian: Counter = field(default_factory=Counter)  # (q, mu) -> count


def flatten(events, times: int = 1, mix: Mix | None = None) -> Mix:
    mix = mix or Mix()
    for event in events:
        if isinstance(event, Repeat):
            flatten(event.body, times * event.count, mix)
        elif isinstance(event, Gaussian):
            mix.gaussian_mu2 += (
                times * Fraction(event.sensitivity) ** 2 / Fraction(event.sigma) ** 2
            )
        elif isinstance(event, Laplace):
            mix.laplace[Fraction(event.sensitivity) / Fraction(event.scale)] += times
        elif _pure(event):
            mix.pure[Fraction(event.epsilon)] += times
        elif isinstance(event, Subsample) and len(event.body) == 1:
            _sampled(event.rate, event.body[0], times, mix)
        else:
            raise Unsupported(repr(event))
    return mix


def _pure(event) -> bool:
    """A pure event: its worst case is randomized response at its epsilon."""
    return isinstance(event, ExpMech) or (isinstance(event, Verified) and event.delta == 0)


def _sampled(rate, inner, times: int, mix: Mix) -> None:
    q = Fraction(rate)
    if isinstance(inner, Gaussian):
        mu = Fraction(inner.sensitivity) / Fraction(inner.sigma)
        mix.sampled_gaussian[(q, mu)] += times
    elif _pure(inner):
        mix.sampled_pure[(q, Fraction(inner.epsilon))] += times
    else:
        raise Unsupported(repr(inner))


def _discrete(mix: Mix, remove: bool) -> exact.Discrete:
    points: exact.Discrete = [(mp.mpf(0), mp.mpf(1))]
    for eps, n in mix.pure.items():
        points = exact.convolve(points, exact.randomized_response(eps, n))
    for (q, eps), n in mix.sampled_pure.items():
        points = exact.convolve(points, exact.subsampled_response(eps, q, n, remove))
    return points


def delta(events, epsilon: float) -> mp.mpf:
    """The composition's exact (or, with subsampled Gaussians, numerically
    converged) delta at epsilon: the larger over the two directions."""
    mix = flatten(events)
    directions = [True, False] if (mix.sampled_pure or mix.sampled_gaussian) else [True]
    return max(_direction_delta(mix, mp.mpf(epsilon), remove) for remove in directions)


def _direction_delta(mix: Mix, eps: mp.mpf, remove: bool) -> mp.mpf:
    if mix.sampled_gaussian:
        return mp.mpf(_fourier_delta(mix, float(eps), remove))
    points = _discrete(mix, remove)
    if mix.laplace:
        if len(mix.laplace) > 1 or mix.gaussian_mu2:
            raise Unsupported("Laplace with Gaussians or several Laplace scales")
        ((eps0, n),) = mix.laplace.items()
        return exact.LaplaceComposition(eps0, n).delta(eps, points)
    if mix.gaussian_mu2:
        return exact.gaussian_mixture_delta(exact.mpf(mix.gaussian_mu2) ** 0.5, points, eps)
    return exact.discrete_delta(points, eps)


def _fourier_delta(mix: Mix, eps: float, remove: bool) -> float:
    return fourier.converged_delta(fourier_components(mix, remove), eps)


def fourier_components(mix: Mix, remove: bool) -> list[fourier.Component]:
    """The log-MGFs of one direction's mechanisms (for `fourier`)."""
    if mix.laplace:
        raise Unsupported("Laplace with subsampled Gaussians")
    components: list[fourier.Component] = []
    if mix.gaussian_mu2:
        components.append((fourier.gaussian(math.sqrt(mix.gaussian_mu2)), 1))
    for eps0, n in mix.pure.items():
        components.append((fourier.randomized_response(float(eps0)), n))
    for (q, eps0), n in mix.sampled_pure.items():
        components.append((fourier.subsampled_response(float(q), float(eps0), remove), n))
    for (q, mu), n in mix.sampled_gaussian.items():
        components.append((fourier.SubsampledGaussian(float(q), float(mu), remove), n))
    return components
