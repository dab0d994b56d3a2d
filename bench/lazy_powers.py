"""Powers of noisy values in a mechanism's exact arithmetic (review s28: a
Gaussian mechanism squaring its noisy value 8 times ran to the time limit
after the charge).

    python bench/lazy_powers.py [--squarings K] [--seeds N]

For `lap` and `gauss` draws w = 3 + 8X, squared K times, prints per seed the
CPU seconds to release w^(2^K) as a double and the digits each draw needed
(a counted measure, independent of load). Before the fix (intervals of the
expanded polynomial) K = 7 took up to 36 s and 456 digits for a Gaussian;
K = 8 did not finish.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from fuzzpy.runtime import lazy_reals as R
from fuzzpy.runtime.randomness import SeededSource


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--squarings", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    for kind in ("lap", "gauss"):
        for seed in range(args.seeds):
            start = time.process_time()
            w = R.add(Fraction(3), R.draw(kind, Fraction(8), SeededSource(seed)))
            for _ in range(args.squarings):
                w = R.multiply(w, w)
            assert isinstance(w, R.Noisy)
            released = R.to_float(w)
            digits = max(d.known for d in w.draws.values())
            print(f"{kind:5} seed {seed}: {released:.6g}  {time.process_time() - start:.3f} s CPU  {digits} digits")


if __name__ == "__main__":
    main()
