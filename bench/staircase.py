"""The staircase mechanism (issue 29): its error against Laplace's, and the cost of a draw.

    python bench/staircase.py [FIGURE.png]

* E|X| and the variance of `staircase[eps]` (gamma* = 1 / (1 + e^(eps/2)),
  steps of width 1) beside Laplace noise of scale 1/eps -- both eps-DP for a
  count -- by eps: the closed forms (summed from the density, Geng &
  Viswanath 2016) and the means of 4,000 exact draws on the runtime's grid
  (`staircase.staircase_release_one`). At a large eps the staircase's error
  falls like e^(-eps/2), Laplace's like 1/eps: the point of the mechanism.
* microseconds per draw (medians of interleaved rounds of 1,000 draws)
  beside `noise.laplace_release_one`, by eps.
* with FIGURE.png: both errors against eps on a log scale (matplotlib).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction

from fuzzpy.runtime.noise import laplace_release_one
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.staircase import staircase_release_one

EPSILONS = (0.5, 1, 2, 4, 6, 8, 10, 12, 16, 20)
DRAWS = 4000


def staircase_moments(eps: float, gamma: float | None = None) -> tuple[float, float]:
    """(E|X|, E X^2) from the density, summed step by step (Delta = 1)."""
    b = math.exp(-eps)
    g = 1 / (1 + math.exp(eps / 2)) if gamma is None else gamma
    a = (1 - b) / (2 * (g + (1 - g) * b))
    first = second = 0.0
    for k in range(0, 20000):
        inner, outer = a * b ** k, a * b ** (k + 1)
        first += 2 * (inner * ((k + g) ** 2 - k**2) / 2 + outer * ((k + 1) ** 2 - (k + g) ** 2) / 2)
        second += 2 * (inner * ((k + g) ** 3 - k**3) / 3 + outer * ((k + 1) ** 3 - (k + g) ** 3) / 3)
        if b ** k < 1e-300:
            break
    return first, second


def _empirical(eps: float, seed: int) -> tuple[float, float]:
    source = SeededSource(seed)
    draws = [float(staircase_release_one(0, Fraction(eps), None, source)) for _ in range(DRAWS)]
    return statistics.fmean(abs(x) for x in draws), statistics.fmean(x * x for x in draws)


def _per_draw(draw: Callable[[SeededSource], object], seed: int, count: int = 1000) -> float:
    source = SeededSource(seed)
    start = time.process_time()
    for _ in range(count):
        draw(source)
    return (time.process_time() - start) / count * 1e6


def main(argv: list[str]) -> None:
    print(f"{'eps':>5} | {'E|X| staircase':>15} {'(drawn)':>10} {'E|X| Laplace':>13} {'ratio':>8} | "
          f"{'var staircase':>14} {'(drawn)':>10} {'var Laplace':>12} {'ratio':>9}")
    rows = []
    for i, eps in enumerate(EPSILONS):
        mean, square = staircase_moments(eps)
        drawn_mean, drawn_square = _empirical(eps, 100 + i)
        lap_mean, lap_var = 1 / eps, 2 / eps**2
        rows.append((eps, mean, lap_mean))
        print(f"{eps:>5g} | {mean:>15.4g} {drawn_mean:>10.4g} {lap_mean:>13.4g} {mean / lap_mean:>8.3g} | "
              f"{square:>14.4g} {drawn_square:>10.4g} {lap_var:>12.4g} {square / lap_var:>9.3g}")
    print()
    print(f"{'eps':>5} | {'staircase us/draw':>18} {'laplace us/draw':>16}")
    for eps in (1, 4, 10, 20):
        st, lap = [], []
        for r in range(5):  # interleaved rounds: the load shifts both alike
            st.append(_per_draw(lambda s, e=eps: staircase_release_one(0, Fraction(e), None, s), r))
            lap.append(_per_draw(lambda s, e=eps: laplace_release_one(0, Fraction(1, e), s), r))
        print(f"{eps:>5g} | {statistics.median(st):>18.1f} {statistics.median(lap):>16.1f}")
    if argv:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        ax.semilogy([r[0] for r in rows], [r[1] for r in rows], "o-", label="staircase, gamma*")
        ax.semilogy([r[0] for r in rows], [r[2] for r in rows], "s--", label="Laplace, scale 1/eps")
        ax.set_xlabel("eps (a count: sensitivity 1)")
        ax.set_ylabel("expected |noise|")
        ax.set_title("eps-DP noise for a count: expected error")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(argv[0], dpi=120)
        print(f"\nfigure: {argv[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
