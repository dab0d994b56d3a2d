"""Accountant tightness and speed, side by side with dp-accounting (and
prv-accountant when installed), in one run.

    python bench/accounting.py [--repeats N]

Rows: 1000-fold Gaussian sigma=1 at delta=1e-5; DP-SGD (Poisson q=0.01,
sigma=0.8, 10,000 steps) at delta=1e-5; 100-fold Laplace eps0=0.5 at
delta=1e-6. Columns: epsilon and wall time of fuzzpy's `tightest` (with the
method that won), dp-accounting's PLD accountant at its default settings,
its RDP accountant, and prv-accountant's upper bound (eps_error 0.01,
delta_error delta/1000). Each timing is the best of N runs, every run from
cold caches (fuzzpy's discretisation and RDP caches are cleared); a
computation slower than 5 s is timed once.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from dp_accounting import dp_event
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from fuzzpy.accounting import pld, rdp
from fuzzpy.accounting.accountant import tightest
from fuzzpy.accounting.events import Event, Gaussian, Laplace, Repeat, Subsample


@dataclass(frozen=True)
class Row:
    name: str
    delta: float
    events: tuple[Event, ...]
    dp_event: dp_event.DpEvent
    count: int
    prv: Callable[[], object] | None


def rows() -> list[Row]:
    one = Fraction(1)
    return [
        Row(
            "Gaussian sigma=1, 1000-fold",
            1e-5,
            (Repeat(1000, (Gaussian(one, one),)),),
            dp_event.GaussianDpEvent(1.0),
            1000,
            lambda: _prv().GaussianMechanism(1.0),
        ),
        Row(
            "DP-SGD q=0.01 sigma=0.8, 10k steps",
            1e-5,
            (Repeat(10000, (Subsample(Fraction(1, 100), (Gaussian(one, Fraction(4, 5)),)),)),),
            dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(0.8)),
            10000,
            lambda: _prv().PoissonSubsampledGaussianMechanism(0.01, 0.8),
        ),
        Row(
            "Laplace eps0=0.5, 100-fold",
            1e-6,
            (Repeat(100, (Laplace(one, Fraction(2)),)),),
            dp_event.LaplaceDpEvent(2.0),
            100,
            lambda: _prv().LaplaceMechanism(0.5),  # its parameter is eps0
        ),
    ]


def _prv():
    import prv_accountant.privacy_random_variables as prvs

    return prvs


def timed(
    fn: Callable[[], float], repeats: int, reset: Callable[[], None] = lambda: None
) -> tuple[float, float]:
    best, value = float("inf"), float("nan")
    for _ in range(repeats):
        reset()
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
        if best > 5.0:  # a slow reference: one run tells enough
            break
    return value, best


def _reset_fuzzpy() -> None:
    pld.discretise.cache_clear()
    rdp.subsampled_gaussian_curve.cache_clear()


def fuzzpy_eps(row: Row) -> Callable[[], float]:
    holder: dict[str, str] = {}

    def run() -> float:
        g = tightest(row.events, row.delta)
        holder["method"] = g.method
        return g.epsilon

    run.method = holder  # type: ignore[attr-defined]
    return run


def dpa_pld(row: Row) -> Callable[[], float]:
    def run() -> float:
        accountant = PLDAccountant()
        accountant.compose(row.dp_event, row.count)
        return accountant.get_epsilon(row.delta)

    return run


def dpa_rdp(row: Row) -> Callable[[], float]:
    def run() -> float:
        accountant = RdpAccountant()
        accountant.compose(row.dp_event, row.count)
        return accountant.get_epsilon(row.delta)

    return run


def prv_upper(row: Row) -> Callable[[], float] | None:
    try:
        from prv_accountant import PRVAccountant
    except ImportError:
        return None

    def run() -> float:
        accountant = PRVAccountant(
            prvs=[row.prv()],
            max_self_compositions=[row.count],
            eps_error=0.01,
            delta_error=row.delta / 1000,
        )
        return accountant.compute_epsilon(row.delta, [row.count])[2]

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="best of N timings (default 3)")
    parser.add_argument("--skip-prv", action="store_true", help="leave prv-accountant out")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)

    header = f"{'row':36} {'fuzzpy eps':>12} {'time':>8}  {'method':15} {'dpa PLD':>12} {'time':>8} {'dpa RDP':>12} {'time':>8} {'prv upper':>12} {'time':>8}"
    print(header)
    print("-" * len(header))
    verdicts = []
    for row in rows():
        ours_fn = fuzzpy_eps(row)
        ours, ours_t = timed(ours_fn, args.repeats, _reset_fuzzpy)
        ref, ref_t = timed(dpa_pld(row), args.repeats)
        rdp_eps, rdp_t = timed(dpa_rdp(row), args.repeats)
        prv_fn = None if args.skip_prv else prv_upper(row)
        prv_eps, prv_t = timed(prv_fn, 1) if prv_fn else (float("nan"), float("nan"))
        method = ours_fn.method["method"]  # type: ignore[attr-defined]
        print(
            f"{row.name:36} {ours:12.6f} {ours_t:7.3f}s  {method:15} {ref:12.6f} {ref_t:7.3f}s "
            f"{rdp_eps:12.6f} {rdp_t:7.3f}s {prv_eps:12.6f} {prv_t:7.3f}s"
        )
        verdicts.append((row.name, ours <= ref, ours_t <= ref_t, ours - ref, ref_t / ours_t))
    print()
    for name, tighter, faster, gap, speedup in verdicts:
        print(
            f"{name:36} eps <= dp-accounting PLD: {'yes' if tighter else 'NO '} ({gap:+.2e})   "
            f"time <= dp-accounting PLD: {'yes' if faster else 'NO '} ({speedup:.1f}x faster)"
        )


if __name__ == "__main__":
    main()
