"""fuzzpy's RDP method against dp-accounting's RDP accountant (its default
orders), epsilon only: how much the order grid costs or gains.

    python bench/rdp_orders.py

Each row prints fuzzpy's RDP epsilon (method "rdp" alone), dp-accounting's,
and their ratio (below 1: fuzzpy tighter).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from fractions import Fraction

from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from fuzzpy.accounting.accountant import tightest
from fuzzpy.accounting.events import Event, Gaussian, Laplace, Repeat, Subsample

ONE = Fraction(1)


def dpsgd(q: float, sigma: float, steps: int) -> tuple[tuple[Event, ...], list]:
    step = Subsample(Fraction(q), (Gaussian(ONE, Fraction(sigma)),))
    event = dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))
    return (Repeat(steps, (step,)),), [(event, steps)]


def laplace(eps0: float, k: int) -> tuple[tuple[Event, ...], list]:
    return (Repeat(k, (Laplace(ONE, 1 / Fraction(eps0)),)),), [(dp_event.LaplaceDpEvent(1 / eps0), k)]


def mixture(sigma: float, k: int, eps0: float, m: int) -> tuple[tuple[Event, ...], list]:
    events = (Repeat(k, (Gaussian(ONE, Fraction(sigma)),)), Repeat(m, (Laplace(ONE, 1 / Fraction(eps0)),)))
    dpa = [(dp_event.GaussianDpEvent(sigma), k), (dp_event.LaplaceDpEvent(1 / eps0), m)]
    return events, dpa


ROWS: Sequence[tuple[str, float, tuple]] = (
    ("DP-SGD q=0.01 sigma=0.5 1000", 1e-5, dpsgd(0.01, 0.5, 1000)),
    ("DP-SGD q=0.01 sigma=0.8 10000", 1e-5, dpsgd(0.01, 0.8, 10000)),
    ("DP-SGD q=0.1 sigma=0.8 1000", 1e-5, dpsgd(0.1, 0.8, 1000)),
    ("DP-SGD q=0.001 sigma=2 10000", 1e-9, dpsgd(0.001, 2.0, 10000)),
    ("Laplace 0.5 x100", 1e-6, laplace(0.5, 100)),
    ("Laplace 0.1 x1000", 1e-6, laplace(0.1, 1000)),
    ("Gauss s=10 x100 + Laplace 0.1 x50", 1e-6, mixture(10.0, 100, 0.1, 50)),
    ("Gauss s=2 x10 + Laplace 1 x5", 1e-8, mixture(2.0, 10, 1.0, 5)),
)


def dpa_rdp(composed: list, delta: float) -> float:
    accountant = RdpAccountant()
    for event, count in composed:
        accountant.compose(event, count)
    return accountant.get_epsilon(delta)


def main() -> None:
    logging.getLogger("absl").setLevel(logging.ERROR)  # dp-accounting's dropped orders
    print(f"{'row':38} {'delta':>7} {'fuzzpy rdp':>12} {'dp-acc rdp':>12} {'ratio':>8}")
    for name, delta, (events, composed) in ROWS:
        ours = tightest(events, delta, ["rdp"]).epsilon
        theirs = dpa_rdp(composed, delta)
        print(f"{name:38} {delta:7.0e} {ours:12.6f} {theirs:12.6f} {ours / theirs:8.4f}")


if __name__ == "__main__":
    main()
