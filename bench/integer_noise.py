"""Integer releases (issue 29): the cost of one draw and of its accounting.

    python bench/integer_noise.py [ROUNDS]

* one scalar draw of `geometric[eps]` (`samplers.geometric_noise`) and of
  `dgauss[sigma]` (`samplers.discrete_gaussian`, the exact-rational path for a
  non-integer sigma), beside the grid releases they stand in for
  (`noise.laplace_release_one`; `noise.gauss_release` of one number):
  microseconds per draw, the medians of interleaved rounds of 2,000 draws;
* the accountant's `exact-dgauss` figure for one release (CKS 2020 Thm 7,
  summed over the integers) at delta 1e-6, by sigma: milliseconds, cold.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from fuzzpy.accounting import events as E
from fuzzpy.accounting.accountant import tightest
from fuzzpy.runtime.noise import gauss_release, laplace_release_one
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.samplers import discrete_gaussian, geometric_noise

DRAWS = 2000


def _per_draw(draw: Callable[[SeededSource], object], seed: int) -> float:
    source = SeededSource(seed)
    start = time.process_time()
    for _ in range(DRAWS):
        draw(source)
    return (time.process_time() - start) / DRAWS * 1e6


CASES: dict[str, Callable[[SeededSource], object]] = {
    "geometric[1/2]": lambda s: geometric_noise(Fraction(1, 2), 1, s),
    "geometric[1/3]": lambda s: geometric_noise(Fraction(1, 3), 1, s),
    "laplace[1/2] (grid)": lambda s: laplace_release_one(7, Fraction(2), s),
    "dgauss[4]": lambda s: discrete_gaussian(Fraction(16), 1, s),
    "dgauss[3/2]": lambda s: discrete_gaussian(Fraction(9, 4), 1, s),
    "gauss[4] (grid)": lambda s: gauss_release(np.array([7]), Fraction(4), s),
}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for r in range(rounds):
        for name, draw in CASES.items():
            times[name].append(_per_draw(draw, r))
    print(f"one draw, microseconds (median of {rounds} interleaved rounds of {DRAWS}):")
    for name, values in times.items():
        print(f"  {name:22} {statistics.median(values):8.1f}")
    print("exact-dgauss, one release at delta 1e-6 (ms, cold):")
    for sigma in (Fraction(1, 2), Fraction(2), Fraction(20), Fraction(200), Fraction(2000)):
        start = time.perf_counter()
        g = tightest([E.DiscreteGaussian(Fraction(1), sigma)], 1e-6)
        print(f"  sigma {float(sigma):7g}: eps {g.epsilon:.6g} by {g.method:13} {1e3 * (time.perf_counter() - start):8.1f}")


if __name__ == "__main__":
    main()
