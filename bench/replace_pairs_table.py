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

# the tight brief's pairs (tests/test_tight_replace_pairs.py: mpmath, dp-accounting PMFs, buckets)
import test_tight_replace_pairs as T  # noqa: E402

from fuzzpy.accounting import accountant  # noqa: E402
from fuzzpy.accounting.events import Repeat, ShuffledReports  # noqa: E402
from fuzzpy.accounting.neighbours import REPLACE_ONE, resolve  # noqa: E402

for q, eps0 in [("0.1", "1"), ("0.02", "3")]:
    src = f"def w(db : bag num) : fuzzy num = subsample[{q}] (fun b -> laplace[{eps0}] (sum[-1, 1] b)) db;\n"
    f = T._checked(src, "w", pure=True)
    ex = T._ratio_sup(float(q), float(eps0))
    old = 2 * __import__("math").log1p(float(q) * __import__("math").expm1(float(eps0)))
    print(f"| replace-one Laplace, pure (check) | eps0 {eps0}, q {q} (was {old:.6f}) | {f:.6f} | {ex:.6f} | {ex:.6f} (mpmath sup) | {f/ex:.6f} |")
for sigma, q in [(2, F(1, 10)), (1, F(1, 5))]:
    f = T._dgauss_fuzzpy(sigma, q, 1, 1e-6).epsilon
    ex = T._dgauss_exact_epsilon(float(sigma), float(q), 1e-6)
    print(f"| replace-one subsampled dgauss, 1 step | sigma {sigma}, q {float(q)}, delta 1e-6 | {f:.6f} | {ex:.6f} | {ex:.6f} (mpmath sum) | {f/ex:.6f} |")
f = T._dgauss_fuzzpy(1, F(1, 5), 20, 1e-6).epsilon
p, r = T._dgauss_masses(1.0, 0.2)
lo, hi = T._pmf_reference(p, r, 20, 1e-6, False), T._pmf_reference(p, r, 20, 1e-6, True)
print(f"| replace-one subsampled dgauss | sigma 1, q 0.2, 20 steps, delta 1e-6 | {f:.6f} | {lo:.6f} | {hi:.6f} (dp-accounting PMF) | {f/hi:.5f} |")
for eps0, n, rounds in [(1.0, 200, 8), (2.0, 120, 3), (1.0, 1000, 10)]:
    ev = (Repeat(rounds, (ShuffledReports(F(eps0), n),)),)
    f = accountant.tightest(resolve(ev, REPLACE_ONE), 1e-6).epsilon
    p, r = T._shuffle_masses(eps0, n)
    lo, hi = T._pmf_reference(p, r, rounds, 1e-6, False), T._pmf_reference(p, r, rounds, 1e-6, True)
    print(f"| shuffled rounds (FMT pair) | eps0 {eps0}, n {n}, {rounds} rounds, delta 1e-6 | {f:.6f} | {lo:.6f} | {hi:.6f} (dp-accounting PMF) | {f/hi:.5f} |")
for sigma, q, k, steps in [(2, F(1, 10), 2, 1), (2, F(1, 20), 2, 150), (2, F(1, 20), 3, 150)]:
    f = accountant.tightest(resolve(T._person_events(sigma, q, steps, k), REPLACE_ONE), 1e-6).epsilon
    lo = T._group_replace_reference(float(sigma), float(q), k, steps, 1e-6, False)
    hi = T._group_replace_reference(float(sigma), float(q), k, steps, 1e-6, True)
    print(f"| replace-one, k={k} rows per person, subsampled Gaussian | sigma {sigma}, q {float(q)}, {steps} steps, delta 1e-6 | {f:.6f} | {lo:.6f} | {hi:.6f} (buckets) | {f/hi:.5f} |")

# the add/remove pair of a Poisson-subsampled discrete Gaussian, and replace-one of shift 2 by the
# replace pair with shifts +-2 (dgsub brief; tests/test_dgauss_subsample_pair.py: mpmath sums, dp-accounting PMFs)
import test_dgauss_subsample_pair as D  # noqa: E402

for sigma, q, shift, delta in [(2, F(1, 10), 1, 1e-6), (3, F(1, 4), 2, 1e-5), (1, F(1, 50), 1, 1e-9)]:
    f = D._fuzzpy(sigma, q, shift, 1, delta)
    ex = D._one_round_exact(float(sigma), float(q), shift, delta)
    print(f"| add/remove subsampled dgauss, 1 step | sigma {sigma}, q {float(q)}, shift {shift}, delta {delta} | {f:.6f} | {ex:.6f} | {ex:.6f} (mpmath sum) | {f/ex:.6f} |")
for sigma, q, shift, steps, delta in [(2, F(1, 10), 1, 50, 1e-6), (4, F(1, 20), 3, 200, 1e-8)]:
    f = D._fuzzpy(sigma, q, shift, steps, delta)
    lo = D._dp_accounting(float(sigma), float(q), shift, steps, delta, False)
    hi = D._dp_accounting(float(sigma), float(q), shift, steps, delta, True)
    print(f"| add/remove subsampled dgauss | sigma {sigma}, q {float(q)}, shift {shift}, {steps} steps, delta {delta} | {f:.6f} | {lo:.6f} | {hi:.6f} (dp-accounting PMF) | {f/hi:.5f} |")
for delta in (1e-3, 1e-6, 1e-12):
    f = D._fuzzpy(2, F(1, 10), 2, 1, delta, REPLACE_ONE)
    lo = D._replace_lower(2.0, 0.1, 2, delta)
    print(f"| replace-one subsampled dgauss, shift 2 (replace pair +-2) | sigma 2, q 0.1, delta {delta} | {f:.6f} | {lo:.6f} | {lo:.6f} (mpmath sum) | {f/lo:.6f} |")
