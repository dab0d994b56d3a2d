"""Deep-delta audit (issue 25): every epsilon the API returns and `fuzzpy budget`
prints, from delta = 0.5 down to 1e-300, against references written here in
mpmath from the papers' formulas (none of fuzzpy's accounting code is used
to compute them).

What each reference is:

* Gaussian, k-fold: the analytic Gaussian at mu = sqrt(k)/sigma (Balle & Wang
  2018, Thm 8) -- exact.
* Laplace, k-fold: exact, from the Laplace transform of the loss. Per step the
  loss is eps0 - 2w, w = clip(Y, 0, eps0), Y standard Laplace (in units of
  the scale; the pair Lap(eps0, 1) vs Lap(0, 1)); W = sum w has transform
  2^-k (1+t)^-k sum_j C(k,j) t^j e^{-j(1+t) eps0} (2+t)^(k-j), i.e. for each j
  a shift by j eps0 of a signed combination of Gamma(m, 1) laws whose weights
  are the coefficients of (x-1)^j (x+1)^(k-j) (x = 1+t). With
  P(Gamma_m + Exp(2) <= u) = 2 e^-u sum_{n>=0} u^(m+1+2n)/(m+1+2n)!, the
  hockey-stick divergence is a finite sum of exact integers times u^i/i!,
  evaluated at k + 1500 bits (the signed weights reach 2^k).
* Exponential mechanism (eps-bounded range): a lower bound of the worst case,
  the k-fold composition of the two-point pair with losses t and t - eps
  (mass (e^eps - e^t)/(e^eps - 1) on t), maximised over t on a grid; a valid
  instance, so its epsilon is at most the truth (no 1% check).
* Poisson-subsampled Gaussian: one step exact (the optimal test is a
  half-line in either direction); k steps a lower bound, the test "sum of the
  outputs beyond c", whose law is exact (a binomial mixture of normals).
* (eps_i, delta_i) events (and pure ones): exact, 1 - prod (1 - delta_i)
  (1 - delta_RR(eps)) with delta_RR the composed randomized responses
  (Murtagh & Vadhan 2016, Thm 1.4), enumerated; with Gaussians, delta_RR is
  replaced by the analytic Gaussian averaged over the randomized-response
  loss (the four-point pair dominates every (eps_i, delta_i) mechanism, and is one).
* Laplace composed with Gaussians: a lower bound, E_W[delta_G(eps - k eps0 + 2W)]
  with W's CDF exact (the same expansion) and each bin's W moved to its top.

Every API and printed epsilon must be >= the reference (a lower end of a
bisection bracket); where the reference is exact (or, for the mixtures, a
lower bound of delta), epsilon / 1.01 must be refuted: its delta exceeds the target.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

import mpmath
import pytest
from mpmath import mp, mpf

from fuzzpy.accounting.accountant import guarantees, tightest
from fuzzpy.accounting.events import ExpMech, Gaussian, Laplace, Repeat, Subsample, Verified
from fuzzpy.cli import main

pytestmark = pytest.mark.slow

DELTAS = (0.5, 0.1, 1e-3, 1e-6, 1e-12, 1e-30, 1e-100, 1e-200, 1e-300)
TIGHT = 1.01
DPS = 80


# ---------------------------------------------------------------- generic search


def bracket(delta_of: Callable[[mpf], mpf], delta: float, top: mpf) -> tuple[mpf, mpf]:
    """(lo, hi) with delta_of(lo) > delta >= delta_of(hi), hi - lo <= 1e-13 (1 + hi);
    (0, 0) when eps = 0 already holds. delta_of decreases in eps."""
    target = mpf(delta)
    if delta_of(mpf(0)) <= target:
        return mpf(0), mpf(0)
    lo, hi = mpf(0), mpf(top)
    while delta_of(hi) > target:
        lo, hi = hi, hi * 2
    while hi - lo > mpf(10) ** -13 * (1 + hi):
        mid = (lo + hi) / 2
        if delta_of(mid) > target:
            lo = mid
        else:
            hi = mid
    return lo, hi


# ---------------------------------------------------------------- Gaussian


def _exact(value: Fraction) -> mpf:
    """A Fraction at the working precision."""
    return mpf(value.numerator) / value.denominator


def gaussian_delta(mu2: Fraction, eps: mpf, dps: int = DPS + 40) -> mpf:
    """Balle & Wang 2018, Thm 8 (any real eps), mu = sqrt(mu2) (mu2 exact:
    k / sigma^2 for k Gaussians of std sigma, sensitivity 1)."""
    with mp.workdps(dps):
        mu, eps = mpmath.sqrt(_exact(mu2)), mpf(eps)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


# ---------------------------------------------------------------- Laplace


@lru_cache(maxsize=8)
def _laplace_polys(k: int, count: int) -> tuple[tuple[int, ...], ...]:
    """The coefficients (index = power) of (x-1)^j (x+1)^(k-j), j < count."""
    poly = [math.comb(k, n) for n in range(k + 1)]
    out = [tuple(poly)]
    for _ in range(1, min(count, k + 1)):
        quotient = [0] * k  # poly = (x + 1) quotient
        quotient[k - 1] = poly[k]
        for n in range(k - 1, 0, -1):
            quotient[n - 1] = poly[n] - quotient[n]
        assert quotient[0] == poly[0]
        poly = [0] * (k + 1)
        for n in range(k):
            poly[n + 1] += quotient[n]
            poly[n] -= quotient[n]
        out.append(tuple(poly))
    return tuple(out)


@lru_cache(maxsize=8)
def _parity_sums(k: int, count: int) -> tuple[tuple[int, ...], ...]:
    """c_{j,i}, i = 1..k+1: sum of p_{j,k-m} over m <= i-1, m = i-1 (mod 2)."""
    rows = []
    for poly in _laplace_polys(k, count):
        sums, row = [0, 0], []
        for i in range(1, k + 2):
            m = i - 1
            sums[m % 2] += poly[k - m]
            row.append(sums[m % 2])
        rows.append(tuple(row))
    return tuple(rows)


@lru_cache(maxsize=8)
def _prefix_sums(k: int, count: int) -> tuple[tuple[int, ...], ...]:
    """D_{j,i}, i = 0..k: sum of p_{j,k-m} over m <= i."""
    rows = []
    for poly in _laplace_polys(k, count):
        total, row = 0, []
        for m in range(k + 1):
            total += poly[k - m]
            row.append(total)
        rows.append(tuple(row))
    return tuple(rows)


def _bits(k: int, u: mpf) -> int:
    return k + 1500 + int(3 * float(u)) + 64


def laplace_delta(k: int, eps0: Fraction, eps: mpf) -> mpf:
    """Exact delta(eps) of k-fold Laplace at eps0 (module docstring)."""
    reach = (k * _exact(eps0) - mpf(eps)) / 2  # only W < reach counts
    if reach <= 0:
        return mpf(0)
    jmax = min(k, int(mpmath.floor(reach / _exact(eps0))))
    rows = _parity_sums(k, k + 1 if jmax > k // 2 else max(jmax + 1, 2))
    with mp.workprec(_bits(k, reach)):
        eps0 = _exact(eps0)
        reach = (k * eps0 - mpf(eps)) / 2
        total = mpf(0)
        for j in range(jmax + 1):
            u = reach - j * eps0
            if u <= 0:
                break
            term, inner, row = mpf(1), mpf(0), rows[j]
            for i in range(1, k + 2):
                term = term * u / i
                inner += row[i - 1] * term
            if j == 0:  # c_{0,i} = 2^(k-1) for i > k + 1: the series' tail
                tail, i = mpf(0), k + 1
                while True:
                    i += 1
                    term = term * u / i
                    tail += term
                    if term <= tail * mpf(2) ** -mp.prec:
                        break
                inner += mpf(2) ** (k - 1) * tail
            total += math.comb(k, j) * inner
        return +(total * mpf(2) ** (1 - k) * mpmath.exp(-reach))


def laplace_cdf(k: int, eps0: Fraction, w: mpf) -> mpf:
    """P(W <= w) for W = sum of k clip(Y, 0, eps0) (the same expansion: P(Gamma_m <= u)
    = e^-u sum_{i>=m} u^i/i!, summed against the prefix sums D_{j,i})."""
    w = mpf(w)
    if w < 0:
        return mpf(0)
    jmax = min(k, int(mpmath.floor(w / _exact(eps0))))
    rows = _prefix_sums(k, k + 1 if jmax > k // 2 else max(jmax + 1, 2))
    with mp.workprec(2 * k + int(3 * float(w)) + 128):  # F >= 2^-k: cancellation of 2^k e^w at most
        e0 = _exact(eps0)
        total = mpf(0)
        for j in range(jmax + 1):
            u = w - j * e0
            if u < 0:
                break
            row = rows[j]
            term, inner, last = mpf(1), mpf(row[0]), mpf(0)
            for i in range(1, k + 1):
                term = term * u / i
                inner += row[i] * term
            if j == 0:  # D_{0,i} = 2^k for i >= k: the tail beyond i = k
                tail, i = mpf(0), k
                while True:
                    i += 1
                    term = term * u / i
                    tail += term
                    if term <= tail * mpf(2) ** -mp.prec or term == 0:
                        break
                last = mpf(2) ** k * tail
            total += math.comb(k, j) * (inner + last)  # the shift's e^{-j eps0} times e^{-u} is e^{-w}
        return +(total * mpf(2) ** -k * mpmath.exp(-w))


def laplace_gaussian_delta_lower(k: int, eps0: Fraction, mu2: Fraction, bins: int) -> Callable[[mpf], mpf]:
    """A lower bound of delta(eps) of k-fold Laplace composed with a Gaussian mu:
    E_W[delta_G(eps - k eps0 + 2W)] with each bin's W moved to its top (the
    mass above the last edge, none, and below: delta_G decreases)."""
    top = k * _exact(eps0)
    edges = [top * i / bins for i in range(bins + 1)]
    cdf = [laplace_cdf(k, eps0, w) for w in edges]
    masses = [cdf[0]] + [cdf[i] - cdf[i - 1] for i in range(1, bins + 1)]

    def delta_of(eps: mpf) -> mpf:
        with mp.workdps(DPS + 40):
            return mpmath.fsum(m * gaussian_delta(mu2, eps - top + 2 * w, 30) for m, w in zip(masses, edges, strict=True) if m > 0)

    return delta_of


# ---------------------------------------------------------------- randomized response and (eps, delta)


def rr_table(groups: list[tuple[Fraction, int]]) -> list[tuple[mpf, mpf]]:
    """(loss, mass) of composed randomized responses (eps_j, n_j), merged."""
    table: dict[mpf, mpf] = {mpf(0): mpf(1)}
    with mp.workdps(DPS):
        for e0, n in groups:
            e = _exact(e0)
            p = mpmath.exp(e) / (1 + mpmath.exp(e))
            rows = [((n - 2 * f) * e, mpmath.binomial(n, f) * p ** (n - f) * (1 - p) ** f) for f in range(n + 1)]
            merged: dict[mpf, mpf] = {}
            for loss, mass in table.items():
                for value, m in rows:
                    merged[loss + value] = merged.get(loss + value, mpf(0)) + mass * m
            table = merged
    return sorted(table.items())


def events_delta(groups: list[tuple[Fraction, int]], deltas: list[tuple[Fraction, int]],
                 mu2: Fraction = Fraction(0)) -> Callable[[mpf], mpf]:
    """Exact delta(eps) of (eps_i, delta_i) events composed, with a Gaussian
    mu = sqrt(mu2) if mu2 > 0."""
    table = rr_table(groups)
    with mp.workdps(DPS):
        kept = mpmath.fprod((1 - _exact(d)) ** n for d, n in deltas) if deltas else mpf(1)

    def delta_of(eps: mpf) -> mpf:
        with mp.workdps(DPS):
            if mu2 > 0:
                inner = mpmath.fsum(m * gaussian_delta(mu2, eps - loss) for loss, m in table)
            else:
                inner = mpmath.fsum(m * -mpmath.expm1(eps - loss) for loss, m in table if loss > eps)
            return 1 - kept * (1 - inner)

    return delta_of


# ---------------------------------------------------------------- exponential mechanism


def expmech_delta_lower(eps0: float, k: int) -> Callable[[mpf], mpf]:
    """max over t of the k-fold two-point bounded-range pair's delta(eps)."""
    with mp.workdps(DPS):
        e = mpf(eps0)
        ts = [e * i / 64 for i in range(1, 64)]
        tables = []
        for t in ts:
            p = (mpmath.exp(e) - mpmath.exp(t)) / mpmath.expm1(e)
            tables.append([(j * t + (k - j) * (t - e), mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j)) for j in range(k + 1)])

    def delta_of(eps: mpf) -> mpf:
        with mp.workdps(DPS):
            return max(mpmath.fsum(m * -mpmath.expm1(eps - loss) for loss, m in table if loss > eps) for table in tables)

    return delta_of


# ---------------------------------------------------------------- subsampled Gaussian


def subsampled_one_step(q: Fraction, sigma: Fraction) -> Callable[[mpf], mpf]:
    """Exact delta(eps) of one Poisson-subsampled Gaussian, the larger direction.
    With mu = 1/sigma, the mixture M = (1-q) N(0,1) + q N(mu,1) against N = N(0,1):
    the likelihood ratio is increasing in x, so each optimal set is a half-line."""
    with mp.workdps(DPS):
        mu, qq = 1 / _exact(sigma), _exact(q)

    def remove(eps: mpf) -> mpf:  # H_{e^eps}(M || N): x > c with (1-q) + q e^{mu c - mu^2/2} = e^eps
        ratio = (mpmath.exp(eps) - (1 - qq)) / qq
        c = (mpmath.log(ratio) + mu**2 / 2) / mu
        return (1 - qq) * mpmath.ncdf(-c) + qq * mpmath.ncdf(mu - c) - mpmath.exp(eps) * mpmath.ncdf(-c)

    def add(eps: mpf) -> mpf:  # H_{e^eps}(N || M): x < c with 1 = e^eps ((1-q) + q e^{mu c - mu^2/2})
        inner = mpmath.exp(-eps) - (1 - qq)
        if inner <= 0:
            return mpf(0)
        c = (mpmath.log(inner / qq) + mu**2 / 2) / mu
        return mpmath.ncdf(c) - mpmath.exp(eps) * ((1 - qq) * mpmath.ncdf(c) + qq * mpmath.ncdf(c - mu))

    def delta_of(eps: mpf) -> mpf:
        with mp.workdps(DPS + 40):
            return max(remove(eps), add(eps))

    return delta_of


def subsampled_sum_test(q: Fraction, sigma: Fraction, k: int) -> Callable[[mpf], mpf]:
    """A lower bound of k-fold delta(eps): the set {sum x_i > c} (remove) and
    {sum x_i < c} (add), the sum's law exact, the best c on a grid."""
    with mp.workdps(DPS):
        mu, qq = 1 / _exact(sigma), _exact(q)
        root = mpmath.sqrt(k)
        weights = [mpmath.binomial(k, b) * qq**b * (1 - qq) ** (k - b) for b in range(k + 1)]
        spread = float(k * q / sigma + 40 * (1 + math.sqrt(k)))
        grid = [mpf(-spread + 2 * spread * i / 200) for i in range(201)]

        sides = []
        for c in grid:
            # each tail from its own side (1 - a tail near 1 would lose it)
            above_m = mpmath.fsum(w * mpmath.ncdf((b * mu - c) / root) for b, w in enumerate(weights) if w > 0)
            below_m = mpmath.fsum(w * mpmath.ncdf((c - b * mu) / root) for b, w in enumerate(weights) if w > 0)
            sides.append((above_m, mpmath.ncdf(-c / root), mpmath.ncdf(c / root), below_m))

    def delta_of(eps: mpf) -> mpf:
        with mp.workdps(DPS):
            scale = mpmath.exp(eps)
            return max(max(a - scale * b, c - scale * d) for a, b, c, d in sides)

    return delta_of


# ---------------------------------------------------------------- the cases


def _printed(capsys, *argv: str) -> list[tuple[str, float]]:
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    found = [(m.group(1), float(m.group(2))) for m in re.finditer(r"^\s+(\S+)\s+eps =\s+(\S+)\s", out, re.M)]
    assert found, out
    return found


def _check(label: str, figures: list[tuple[str, float]], delta_of: Callable[[mpf], mpf], delta: float,
           exact: bool) -> None:
    """Every figure valid: the reference's delta at the smallest is within the target
    (delta decreases in eps, so every larger figure holds too); and, where the
    reference is exact or a lower bound of delta, the smallest over 1.01 refuted."""
    finite = [(method, eps) for method, eps in figures if math.isfinite(eps)]
    if not finite:
        return
    method, best = min(finite, key=lambda f: f[1])
    assert best >= 0, (label, delta, method, best)
    at_best = delta_of(mpf(best))
    assert at_best <= delta, f"{label} at {delta:g}: {method} eps {best!r} has delta {mpmath.nstr(at_best, 8)}"
    if exact and best > 0:
        below = delta_of(mpf(best) / TIGHT)
        assert below > delta, f"{label} at {delta:g}: {method} eps {best!r} more than 1% above exact"


def _api_figures(events: list, delta: float) -> list[tuple[str, float]]:
    found = [(g.method, g.epsilon) for g in guarantees(events, delta)]
    g = tightest(events, delta)
    return found + [("tightest:" + g.method, g.epsilon)]


@pytest.mark.parametrize("sigma, rounds", [(0.5, 1), (2.0, 10), (20.0, 100)])
def test_gaussian(capsys, sigma, rounds):
    mu2 = rounds / Fraction(sigma) ** 2
    events = [Repeat(rounds, (Gaussian(Fraction(1), Fraction(sigma)),))]
    for delta in DELTAS:
        figures = _api_figures(events, delta)
        figures += _printed(capsys, "budget", "--gaussian", str(sigma), "--rounds", str(rounds), "--delta", repr(delta))
        _check(f"gaussian {sigma} x {rounds}", figures, lambda e: gaussian_delta(mu2, e), delta, True)


LAPLACE_CASES = [
    ("1", 1, DELTAS),
    ("0.5", 10, DELTAS),
    ("0.25", 60, DELTAS),
    ("0.1", 1000, (1e-30, 1e-100, 1e-200, 1e-300)),
]


@pytest.mark.parametrize("eps0, rounds, deltas", LAPLACE_CASES)
def test_laplace(capsys, eps0, rounds, deltas):
    e0 = Fraction(eps0)
    events = [Repeat(rounds, (Laplace(Fraction(1), 1 / e0),))]
    for delta in deltas:
        figures = _api_figures(events, delta)
        figures += _printed(capsys, "budget", "--laplace", eps0, "--rounds", str(rounds), "--delta", repr(delta))
        _check(f"laplace {eps0} x {rounds}", figures, lambda e: laplace_delta(rounds, e0, e), delta, True)


@pytest.mark.parametrize("eps0, rounds", [("1", 1), ("0.3", 10)])
def test_exponential_mechanism(eps0, rounds):
    events = [Repeat(rounds, (ExpMech(Fraction(eps0)),))]
    delta_of = expmech_delta_lower(float(eps0), rounds)
    for delta in DELTAS:
        _check(f"expmech {eps0} x {rounds}", _api_figures(events, delta), delta_of, delta, False)


@pytest.mark.parametrize("q, sigma, rounds", [("0.01", "1", 1), ("0.1", "2", 1), ("0.01", "1", 100)])
def test_subsampled_gaussian(capsys, q, sigma, rounds):
    events = [Repeat(rounds, (Subsample(Fraction(q), (Gaussian(Fraction(1), Fraction(sigma)),)),))]
    exact = rounds == 1
    q_, sigma_ = Fraction(q), Fraction(sigma)
    delta_of = subsampled_one_step(q_, sigma_) if exact else subsampled_sum_test(q_, sigma_, rounds)
    for delta in DELTAS:
        figures = _api_figures(events, delta)
        figures += _printed(capsys, "budget", "--gaussian", sigma, "--subsample", q,
                            "--rounds", str(rounds), "--delta", repr(delta))
        _check(f"subsampled gaussian q={q} sigma={sigma} x {rounds}", figures, delta_of, delta, exact)


EVENT_CASES = {
    # (eps, delta, count) events of several sizes, pure events among them; sigma of a Gaussian
    "heterogeneous": ([("1", Fraction(1, 10**8), 2), ("0.5", Fraction(0), 3), ("0.25", Fraction(1, 10**40), 4)], None),
    "pure-mix": ([("0.7", Fraction(0), 5), ("0.2", Fraction(0), 10)], None),
    "with-gaussian": ([("0.5", Fraction(1, 10**20), 2), ("1", Fraction(0), 2)], "2"),
}


@pytest.mark.parametrize("name", list(EVENT_CASES))
def test_events(name):
    pairs, sigma = EVENT_CASES[name]
    events: list = [Repeat(n, (Verified(f"m{i}", Fraction(e), d),)) for i, (e, d, n) in enumerate(pairs)]
    mu2 = Fraction(0)
    if sigma is not None:
        events.append(Gaussian(Fraction(1), Fraction(sigma)))
        mu2 = 1 / Fraction(sigma) ** 2
    groups = [(Fraction(e), n) for e, _, n in pairs]
    deltas = [(d, n) for _, d, n in pairs if d > 0]
    delta_of = events_delta(groups, deltas, mu2)
    for delta in DELTAS:
        figures = _api_figures(events, delta)
        if delta_of(mpf(10) ** 6) > delta:  # the deltas alone exceed the target
            assert all(math.isinf(eps) for _, eps in figures), (name, delta, figures)
            continue
        _check(name, figures, delta_of, delta, True)


@pytest.mark.parametrize("eps0, rounds, sigma, gaussians", [("0.5", 20, "2", 5)])
def test_laplace_with_gaussians(eps0, rounds, sigma, gaussians):
    events = [Repeat(rounds, (Laplace(Fraction(1), 1 / Fraction(eps0)),)),
              Repeat(gaussians, (Gaussian(Fraction(1), Fraction(sigma)),))]
    lower = laplace_gaussian_delta_lower(rounds, Fraction(eps0), gaussians / Fraction(sigma) ** 2, 1600)
    for delta in DELTAS:
        _check("laplace + gaussian", _api_figures(events, delta), lower, delta, True)
