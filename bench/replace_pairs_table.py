"""fuzzpy against independent references for the replace-one and group pairs
of Poisson subsampling (issue 28): prints a markdown table.

Run: PYTHONPATH=$PWD FUZZPY_CACHE=off /work/venv/bin/python bench/replace_pairs_table.py
(the references are those of tests/test_replace_subsample.py and
tests/test_group_subsample.py: dp-accounting's REPLACE Gaussian PLD,
privacy buckets, mpmath).
"""

import sys
from fractions import Fraction as F

sys.path.insert(0, "tests")
import test_group_subsample as G
import test_replace_subsample as R

from fuzzpy.accounting.events import Gaussian, Laplace

print("| pair | parameters | fuzzpy | reference low | reference high/exact | fuzzpy/high |")
print("|---|---|---|---|---|---|")
for sigma, q, steps, delta in [(2.0, 0.05, 150, 1e-6), (0.8, 0.01, 400, 1e-9), (5.0, 0.1, 40, 1e-5), (2.0, 0.1, 400, 1e-9)]:
    f = R._fuzzpy(Gaussian(F(1), F(sigma)), F(q), steps, delta).epsilon
    lo = R._gaussian_reference(sigma, q, steps, delta, False)
    hi = R._gaussian_reference(sigma, q, steps, delta, True)
    print(f"| replace-one Gaussian | sigma {sigma}, q {q}, {steps} steps, delta {delta} | {f:.6f} | {lo:.6f} | {hi:.6f} (dp-accounting) | {f/hi:.5f} |")
for eps0, q, steps, delta in [(1.0, 0.05, 100, 1e-5), (3.0, 0.2, 30, 1e-6), (0.3, 0.02, 200, 1e-6)]:
    f = R._fuzzpy(Laplace(F(1), 1 / F(eps0)), F(q), steps, delta).epsilon
    lo = R._laplace_reference(eps0, q, steps, delta, False)
    hi = R._laplace_reference(eps0, q, steps, delta, True)
    print(f"| replace-one Laplace | eps0 {eps0}, q {q}, {steps} steps, delta {delta} | {f:.6f} | {lo:.6f} | {hi:.6f} (buckets) | {f/hi:.5f} |")
for sigma, q, k, delta in [(1, F(1, 10), 2, 1e-6), (2, F(1, 20), 3, 1e-5), (5, F(3, 10), 2, 1e-6)]:
    f = G._fuzzpy(F(sigma), q, k, 1, delta).epsilon
    ex = G.exact_epsilon(delta, float(sigma), k, float(q))
    print(f"| group k={k} subsampled Gaussian, 1 step | sigma {sigma}, q {float(q)}, delta {delta} | {f:.6f} | {float(ex):.6f} | {float(ex):.6f} (mpmath) | {f/float(ex):.6f} |")
for sigma, q, k, steps, delta in [(2, F(1, 20), 2, 100, 1e-6), (3, F(1, 10), 3, 50, 1e-6)]:
    f = G._fuzzpy(F(sigma), q, k, steps, delta).epsilon
    lo = G.bucket_epsilon(delta, float(sigma), k, float(q), steps, False)
    hi = G.bucket_epsilon(delta, float(sigma), k, float(q), steps, True)
    print(f"| group k={k} subsampled Gaussian | sigma {sigma}, q {float(q)}, {steps} steps, delta {delta} | {f:.6f} | {lo:.6f} | {hi:.6f} (buckets) | {f/hi:.5f} |")
