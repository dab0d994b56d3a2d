"""Exact noise samplers: draws per second (CPU time), 10^6 draws each.

    python bench/samplers.py            # 5 interleaved rounds
    python bench/samplers.py 9          # 9 rounds
    python bench/samplers.py --old      # also the one-candidate-at-a-time Gaussian (about 15 s a round)

Cases (each a fresh `SeededSource`, and at the runtime's scale also
`SecureSource`, the operating system's generator every private run uses):

* exact discrete Laplace, scale t = 2^32 + 5 (the runtime's grid puts every
  scale near 2^32 units: `fuzzpy.runtime.noise`)
* exact discrete Gaussian, sigma = 2^32 + 5, in batches (`discrete_gaussian_array`)
* the same Gaussian one candidate at a time with exact rationals
  (`discrete_gaussian_fractions`, the sampler before the batches), with --old
* both samplers again at a small scale (t = sigma = 3)

The rounds are interleaved (Laplace, Gaussian, Laplace, ...) so that the load of
a shared machine falls on both alike; the medians are printed, and the
Gaussian's time over the Laplace's (issue 24: within 2x).

Seen (`python bench/samplers.py 3`, load average ~19 on 2 CPUs): at the
runtime's scale 2^32 + 5 the Gaussian is 0.72x the Laplace (0.281 s vs
0.392 s per 10^6 draws; secure source 0.90x); at scale 3, 2.13x (0.284 s
vs 0.133 s: the Laplace's uniform draws below 3 are cheap; no run uses
such a scale).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction

from fuzzpy.runtime.randomness import SecureSource, SeededSource
from fuzzpy.runtime.samplers import (
    discrete_gaussian_array,
    discrete_gaussian_fractions,
    discrete_laplace,
)

DRAWS = 10**6
LARGE = 2**32 + 5
SMALL = 3


def cpu_seconds(case: Callable[[int], object], seed: int) -> float:
    started = time.process_time()
    case(seed)
    return time.process_time() - started


def main(rounds: int, old: bool) -> None:
    cases: dict[str, Callable[[int], object]] = {
        f"Laplace t = {LARGE}": lambda seed: discrete_laplace(LARGE, DRAWS, SeededSource(seed)),
        f"Gaussian sigma = {LARGE}": lambda seed: discrete_gaussian_array(Fraction(LARGE) ** 2, DRAWS,
                                                                           SeededSource(seed)),
        f"Laplace t = {LARGE}, secure": lambda seed: discrete_laplace(LARGE, DRAWS, SecureSource()),
        f"Gaussian sigma = {LARGE}, secure": lambda seed: discrete_gaussian_array(Fraction(LARGE) ** 2, DRAWS,
                                                                                   SecureSource()),
        f"Laplace t = {SMALL}": lambda seed: discrete_laplace(SMALL, DRAWS, SeededSource(seed)),
        f"Gaussian sigma = {SMALL}": lambda seed: discrete_gaussian_array(Fraction(SMALL) ** 2, DRAWS,
                                                                           SeededSource(seed)),
    }
    if old:
        cases[f"Gaussian sigma = {LARGE}, one at a time"] = lambda seed: discrete_gaussian_fractions(
            Fraction(LARGE) ** 2, DRAWS, SeededSource(seed))
    times: dict[str, list[float]] = {name: [] for name in cases}
    for seed in range(rounds):
        for name, case in cases.items():
            times[name].append(cpu_seconds(case, seed))
    median = {name: statistics.median(found) for name, found in times.items()}
    print(f"{DRAWS:,} draws, median CPU of {rounds} interleaved rounds")
    for name, seconds in median.items():
        print(f"  {name:42} {seconds:7.3f} s   {DRAWS / seconds:12,.0f} draws/s")
    for scale, kind in ((LARGE, ""), (LARGE, ", secure"), (SMALL, "")):
        ratio = median[f"Gaussian sigma = {scale}{kind}"] / median[f"Laplace t = {scale}{kind}"]
        print(f"  Gaussian / Laplace at scale {scale}{kind}: {ratio:.2f}x (goal <= 2x)")
    if old:
        speedup = median[f"Gaussian sigma = {LARGE}, one at a time"] / median[f"Gaussian sigma = {LARGE}"]
        print(f"  batches over one at a time: {speedup:.1f}x faster")


if __name__ == "__main__":
    counts = [int(a) for a in sys.argv[1:] if a.isdigit()]
    main(counts[0] if counts else 5, "--old" in sys.argv)
