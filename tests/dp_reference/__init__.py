"""Independent reference values for the accountant's tests and benchmarks.

Written from the formulas, sharing no code with `fuzzpy.accounting`:

* `exact`    -- closed forms in mpmath: the Gaussian (Balle & Wang 2018),
                compositions of randomized response by enumerating the
                privacy loss, Gaussian with randomized response, the k-fold
                Laplace mechanism (its loss is atoms plus a density
                proportional to e^{l/2}, whose sums are Irwin-Hall shaped);
* `fourier`  -- compositions with Poisson-subsampled Gaussians, by inverting
                the moment generating function numerically in long double;
* `trees`    -- fuzzpy event trees (a small family) to those computations.
"""
