"""Ledger speed: time of quote / charge / history as the history grows, and
throughput of concurrent processes charging one dataset.

    python bench/ledger.py [--releases 2000] [--processes 8]

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from fuzzpy.accounting.events import Gaussian, Laplace
from fuzzpy.ledger.book import Budget, Ledger

SMALL = (Laplace(Fraction(1), Fraction(10**6)),)  # 1e-6-DP: the budget never runs out
GAUSS = (Gaussian(Fraction(1), Fraction(1000)),)


def _timed(action, repeat: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - start) / repeat * 1000


def grow(path: Path, releases: int) -> None:
    print(f"{'history':>8}  {'quote ms':>9}  {'charge ms':>10}  {'history ms':>11}  rule")
    for rule, events, budget in (
        ("basic", SMALL, Budget(1000)),
        ("zcdp", GAUSS, Budget(1000, 1e-6, "zcdp")),
    ):
        with Ledger(path) as ledger:
            _grow_one(ledger, f"bench-{rule}", events, budget, releases)


def _grow_one(ledger: Ledger, dataset: str, events, budget: Budget, releases: int) -> None:  # type: ignore[no-untyped-def]
    done = 0
    for size in (10, 100, 1000, releases):
        while done < size:
            ledger.charge(dataset, events, budget, definition="bench")
            done += 1
        quote = _timed(lambda: ledger.quote(dataset, events, budget))
        charge = _timed(lambda: ledger.charge(dataset, events, budget), repeat=5)
        done += 5
        history = _timed(lambda: ledger.history(dataset), repeat=3)
        print(f"{size:>8}  {quote:>9.2f}  {charge:>10.2f}  {history:>11.1f}  {budget.rule}")


def _worker(path: str, count: int) -> None:
    with Ledger(path) as ledger:
        for _ in range(count):
            ledger.charge("shared", SMALL, Budget(1000))


def contend(path: Path, processes: int, each: int) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_worker, args=(str(path), each)) for _ in range(processes)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - start
    total = processes * each
    print(f"{processes} processes x {each} charges on one dataset: {total / elapsed:.0f} charges/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--releases", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        grow(Path(directory) / "grow.sqlite", args.releases)
        contend(Path(directory) / "contend.sqlite", args.processes, 50)


if __name__ == "__main__":
    main()
