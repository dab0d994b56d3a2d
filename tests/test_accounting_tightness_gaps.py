"""Issue 25, item 3: the accountant's tightness gaps, each against a reference
computed here from the theorem's own statement (not from fuzzpy's code).

* heterogeneous (eps_i, delta_i) events: Murtagh & Vadhan's optimal
  composition formula, written as a sum over subsets S of the events;
* group privacy of either nesting of `group` and `loop`;
* one exponential mechanism: the minimum over proven methods, checked from
  below by an eps-bounded-range pair with two outputs.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import mpmath
import pytest
from mpmath import mp, mpf

from fuzzpy.accounting.accountant import guarantees, tightest
from fuzzpy.accounting.events import ExpMech, Gaussian, Group, Laplace, Repeat, Subsample, Verified

mp.dps = 40  # this module's references; the verifier keeps its own 50 digits (refuter.refute)

# ---------------------------------------------------------------- heterogeneous (eps, delta)


def mv_excess(pairs: list[tuple[Fraction, Fraction]], eps: mpf, delta: mpf) -> mpf:
    """Murtagh & Vadhan 2016, Thm 1.4: the composition is (eps, delta)-DP iff
    prod(1+e^eps_i)^-1 sum_S max(e^{eps(S)} - e^eps e^{eps(not S)}, 0)
    <= 1 - (1 - delta) / prod (1 - delta_i). Returns left - right."""
    es = [mpf(e.numerator) / e.denominator for e, _ in pairs]
    log_kept = mpmath.fsum(mpmath.log1p(-mpf(d.numerator) / d.denominator) for _, d in pairs)
    kept, used = mpmath.exp(log_kept), -mpmath.expm1(log_kept)
    total = mpf(0)
    for chosen in itertools.product((False, True), repeat=len(es)):
        inside = mpmath.fsum(e for e, c in zip(es, chosen, strict=True) if c)
        outside = mpmath.fsum(e for e, c in zip(es, chosen, strict=True) if not c)
        total += max(mpmath.exp(inside) - mpmath.exp(eps + outside), 0)
    left = total / mpmath.fprod(1 + mpmath.exp(e) for e in es)
    # left <= 1 - (1 - delta) / kept, multiplied by kept (no cancellation at tiny delta)
    return left * kept + used - delta


def mv_epsilon(pairs: list[tuple[Fraction, Fraction]], delta: float) -> tuple[mpf, mpf]:
    """A bracket (lo, hi) of the optimal epsilon (inf, inf when none exists)."""
    d = mpf(delta)
    top = mpmath.fsum(mpf(e.numerator) / e.denominator for e, _ in pairs)
    if mv_excess(pairs, top, d) > 0:
        return mpf("inf"), mpf("inf")
    lo, hi = mpf(0), top
    if mv_excess(pairs, lo, d) <= 0:
        return lo, lo
    for _ in range(120):
        mid = (lo + hi) / 2
        if mv_excess(pairs, mid, d) <= 0:
            hi = mid
        else:
            lo = mid
    return lo, hi


def events_of(pairs: list[tuple[Fraction, Fraction]]) -> tuple[Verified, ...]:
    return tuple(Verified(f"m{i}", e, d) for i, (e, d) in enumerate(pairs))


def test_issue_case_is_exactly_three_at_one_minus_the_product():
    # dp-accounting's own test case: (1, 0.1) and (2, 0.2) at delta = 1 - 0.9 * 0.8
    pairs = [(Fraction(1), Fraction(1, 10)), (Fraction(2), Fraction(2, 10))]
    found = tightest(events_of(pairs), 0.28)
    assert found.epsilon == 3.0  # was inf: only delta >= 0.3 answered
    # just below 0.28 no epsilon exists: inf is the truth, not a gap
    assert math.isinf(tightest(events_of(pairs), 0.2799).epsilon)
    lo, hi = mv_epsilon(pairs, 0.29)
    assert lo <= tightest(events_of(pairs), 0.29).epsilon <= hi * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_random_heterogeneous_sets_match_the_subset_formula(seed: int):
    rng = random.Random(seed)
    pairs = [
        (Fraction(rng.randint(1, 40), 20), Fraction(rng.randint(0, 50), 1000))
        for _ in range(rng.randint(2, 7))
    ]
    kept = math.prod(1 - float(d) for _, d in pairs)
    for delta in (1 - kept + 1e-3, 1 - kept + 0.05, min(0.9, 1 - kept + 0.3)):
        found = tightest(events_of(pairs), delta)
        lo, hi = mv_epsilon(pairs, delta)
        # valid: the exact delta at the reported eps is within the target
        assert mv_excess(pairs, mpf(found.epsilon), mpf(delta)) <= 0
        assert found.epsilon >= lo
        # tight: within 1e-9 relative of the optimum
        assert found.epsilon <= float(hi) * (1 + 1e-9) + 1e-12, (pairs, delta, found)


@pytest.mark.parametrize("delta", [1e-20, 1e-60, 1e-200])
def test_heterogeneous_pure_events_at_tiny_delta(delta: float):
    # no delta_i: the condition is the randomized-response tail alone, far below
    # 2^-precision of 1 (a form 1 - kept (1 - tail) loses it and proves anything)
    pairs = [(Fraction(1, 3), Fraction(0)), (Fraction(1, 2), Fraction(0)), (Fraction(2, 3), Fraction(0))] * 3
    found = tightest(events_of(pairs), delta)
    assert mv_excess(pairs, mpf(found.epsilon), mpf(delta)) <= 0  # valid
    assert mv_excess(pairs, mpf(found.epsilon) * (1 - mpf(1e-9)), mpf(delta)) > 0  # tight


def test_many_events_still_answer_below_the_sum_of_their_deltas():
    # 2^14 loss values: beyond enumeration, basic composition combines the deltas
    # as 1 - prod(1 - delta_i) (sum 1.05e-4, product form 1.0499499...e-4)
    pairs = [(Fraction(i, 7), Fraction(i, 10**6)) for i in range(1, 15)]
    found = [g for g in guarantees(events_of(pairs), 1.04996e-4) if g.method == "basic"]
    assert found and found[0].epsilon == pytest.approx(15.0, rel=1e-12)
    assert found[0].epsilon >= 15.0
    assert math.isinf(tightest(events_of(pairs), 1.04994e-4).epsilon)


def test_mixed_with_a_gaussian_the_fixed_deltas_combine_as_a_product():
    # (1, 0.1) with a Gaussian: basic composition at delta = 0.1 + share, where the
    # share is what 1 - 0.9 (1 - s) <= delta leaves, i.e. s = (delta - 0.1) / 0.9
    events = (Verified("a", Fraction(1), Fraction(1, 10)), Gaussian(Fraction(1), Fraction(2)))
    basic = next(g for g in guarantees(events, 0.1 + 0.9 * 1e-3) if g.method == "basic")
    assert math.isfinite(basic.epsilon)
    # the Gaussian gets a delta of (just below) 1e-3: eps(mu = 1/2, 1e-3) ~ 1.79
    mu = mpf(1) / 2
    gaussian_eps = mpmath.findroot(
        lambda e: mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu) - mpf(1e-3),
        1.5,
    )
    assert basic.epsilon >= 1 + float(gaussian_eps)
    assert basic.epsilon <= (1 + float(gaussian_eps)) * (1 + 1e-6)


# ---------------------------------------------------------------- group privacy of any nesting

STEP = Subsample(Fraction(1, 100), (Gaussian(Fraction(1), Fraction(1)),))


def one_step_group_delta(eps: mpf, k: int = 2) -> mpf:
    """The exact hockey stick of one step on a pair at distance k (both
    removed rows in the subsample with probability q^2, ...): a lower
    reference, since composition and a larger group never lower it. P is the
    mixture, Q = N(0, 1); delta = int (P - e^eps Q)_+ by quadrature."""
    q = mpf(1) / 100
    weights = [mpmath.binomial(k, j) * q**j * (1 - q) ** (k - j) for j in range(k + 1)]

    def gap(x: mpf) -> mpf:
        p = mpmath.fsum(w * mpmath.npdf(x, j, 1) for j, w in enumerate(weights))
        return max(p - mpmath.exp(eps) * mpmath.npdf(x, 0, 1), 0)

    return mpmath.quad(gap, [-10, 0, 2, 4, 8, 40])


@pytest.mark.parametrize("steps", [10, 200])
def test_group_of_a_loop_is_finite_and_equals_the_loop_of_groups(steps: int):
    outer = tightest((Group(Fraction(2), (Repeat(steps, (STEP,)),)),), 1e-5)
    inner = tightest((Repeat(steps, (Group(Fraction(2), (STEP,)),)),), 1e-5)
    assert math.isfinite(outer.epsilon)  # was inf for the first nesting
    assert outer.epsilon == inner.epsilon  # the same mechanism, the same answer
    # valid: at least the ungrouped loop's, and at least one grouped step's exact eps
    alone = tightest((Repeat(steps, (STEP,)),), 1e-5).epsilon
    assert outer.epsilon >= alone
    assert one_step_group_delta(mpf(outer.epsilon)) <= 1e-5


def test_group_of_a_loop_is_no_looser_than_the_old_other_nesting():
    # issue 25: the loop of groups gave 14.73; the group of the loop was inf
    found = tightest((Group(Fraction(2), (Repeat(10, (STEP,)),)),), 1e-5)
    assert found.epsilon < 14.73
    # group privacy of the composed profile: (2 eps, 2 e^eps delta') with the
    # loop's own eps at delta' -- the value charged is one such pair
    for delta_inner in (1e-7, 2e-7, 1e-6):
        eps = tightest((Repeat(10, (STEP,)),), delta_inner).epsilon
        if 2 * math.exp(eps) * delta_inner <= 1e-5 / 2:
            assert found.epsilon <= 2 * eps * (1 + 1e-9)


def test_group_of_a_mixed_body_stays_valid_per_atom_and_whole():
    body = (STEP, Verified("v", Fraction(1, 2), Fraction(1, 10**8)), Gaussian(Fraction(1), Fraction(3)))
    found = tightest((Group(Fraction(3), (Repeat(5, body),)),), 1e-4)
    assert math.isfinite(found.epsilon)
    # at least the exact 3-fold group of the Gaussians alone (sensitivity 3, 5 runs)
    mu = mpf(3) / 3 * mpmath.sqrt(5)
    gauss = mpmath.ncdf(mu / 2 - mpf(found.epsilon) / mu) - mpmath.exp(found.epsilon) * mpmath.ncdf(
        -mu / 2 - mpf(found.epsilon) / mu
    )
    assert gauss <= 1e-4


# ---------------------------------------------------------------- the exponential mechanism


def bounded_range_lower(eps: float, target: float) -> float:
    """The largest eps' with delta(eps') > target over the two-output
    eps-bounded-range pairs (losses t and t - eps, 0 <= t <= eps): every
    valid bound for an eps-BR mechanism is at least this."""
    e = mpf(eps)

    def delta_at(prime: mpf) -> mpf:
        best = mpf(0)
        for i in range(1, 400):
            t = e * i / 400
            p = (mpmath.exp(e - t) - 1) / (mpmath.exp(e - t) - mpmath.exp(-t))
            best = max(best, p * max(1 - mpmath.exp(prime - t), 0))
        return best

    lo, hi = mpf(0), e
    for _ in range(60):
        mid = (lo + hi) / 2
        if delta_at(mid) > target:
            lo = mid
        else:
            hi = mid
    return float(lo)


@pytest.mark.parametrize(("eps", "delta"), [(3, 0.3), (1, 0.2), (Fraction(1, 2), 0.1)])
def test_one_exponential_mechanism_takes_the_best_proven_method(eps, delta):
    found = tightest((ExpMech(Fraction(eps)),), delta)
    listed = [g.epsilon for g in guarantees((ExpMech(Fraction(eps)),), delta) if g.proven]
    assert found.epsilon == min(listed)
    assert found.epsilon >= bounded_range_lower(float(eps), delta)


def test_exponential_mechanism_issue_case():
    found = tightest((ExpMech(Fraction(3)),), 0.3)
    assert found.epsilon < 1.99  # was 2.62, the randomized-response closed form
    assert found.method == "zcdp-cks"


# ---------------------------------------------------------------- Gaussians at tiny delta


def gaussian_delta(mu: mpf, e: mpf) -> mpf:
    """Balle & Wang's curve, valid for every real e."""
    return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)


def mixture_delta(mu: mpf, pure: list[Fraction], e: mpf) -> mpf:
    """A Gaussian with randomized responses: the sum over the 2^n sign choices."""
    es = [mpf(p.numerator) / p.denominator for p in pure]
    total = mpf(0)
    for signs in itertools.product((1, -1), repeat=len(es)):
        loss = mpmath.fsum(s * x for s, x in zip(signs, es, strict=True))
        mass = mpmath.fprod(
            mpmath.exp(x) / (1 + mpmath.exp(x)) if s == 1 else 1 / (1 + mpmath.exp(x))
            for s, x in zip(signs, es, strict=True)
        )
        total += mass * gaussian_delta(mu, e - loss)
    return total


def laplace_mixture_delta(mu: mpf, e0: mpf, e: mpf) -> mpf:
    """A Gaussian with one Laplace (s/b = e0): its loss under P = Lap(e0, 1) is
    +e0 w.p. 1/2, -e0 w.p. e^-e0 / 2, and 2x - e0 with density e^{x - e0}/2 on (0, e0)."""
    atoms = gaussian_delta(mu, e - e0) / 2 + mpmath.exp(-e0) / 2 * gaussian_delta(mu, e + e0)
    density = mpmath.quad(
        lambda x: mpmath.exp(x - e0) / 2 * gaussian_delta(mu, e - (2 * x - e0)), mpmath.linspace(0, e0, 5)
    )
    return atoms + density


def solve(delta_of, target: float, lo: float, hi: float) -> float:
    lo_m, hi_m = mpf(lo), mpf(hi)
    for _ in range(80):
        mid = (lo_m + hi_m) / 2
        if delta_of(mid) > target:
            lo_m = mid
        else:
            hi_m = mid
    return float(hi_m)


TINY = [1e-25, 1e-30, 1e-100, 1e-199, 1e-250, 1e-300]


@pytest.mark.parametrize("delta", TINY)
def test_gaussians_with_pure_events_are_exact_at_every_delta(delta: float):
    # ten Gaussians at sigma 3 (one of sigma 3 / sqrt(10)) with two pure events
    events = (
        Repeat(10, (Gaussian(Fraction(1), Fraction(3)),)),
        Verified("a", Fraction(1, 2)),
        Verified("b", Fraction(1, 5)),
    )
    found = tightest(events, delta)
    mu = mpmath.sqrt(10) / 3
    pure = [Fraction(1, 2), Fraction(1, 5)]
    assert mixture_delta(mu, pure, mpf(found.epsilon)) <= delta  # valid
    exact = solve(lambda e: mixture_delta(mu, pure, e), delta, 0.0, 100.0)
    assert found.epsilon <= exact * (1 + 1e-9)  # tight (was the Renyi bound below 1e-23)


@pytest.mark.parametrize("delta", TINY)
def test_gaussian_with_laplace_is_within_one_percent(delta: float):
    events = (Gaussian(Fraction(1), Fraction(1)), Laplace(Fraction(1), Fraction(1)))
    found = tightest(events, delta)
    mu, e0 = mpf(1), mpf(1)
    assert laplace_mixture_delta(mu, e0, mpf(found.epsilon)) <= delta  # valid
    # within 1%: the exact delta at eps / 1.01 is still above the target
    assert laplace_mixture_delta(mu, e0, mpf(found.epsilon) / mpf(1.01)) > delta


@pytest.mark.parametrize("delta", [1e-300, 1e-250, 1e-100, 1e-30])
def test_k_fold_gaussian_is_the_analytic_gaussian_at_sigma_over_root_k(delta: float):
    found = tightest((Repeat(16, (Gaussian(Fraction(1), Fraction(2)),)),), delta)
    mu = mpf(4) / 2  # sigma / sqrt(k) = 1/2
    assert gaussian_delta(mu, mpf(found.epsilon)) <= delta
    exact = solve(lambda e: gaussian_delta(mu, e), delta, 0.0, 200.0)
    assert found.epsilon <= exact * (1 + 1e-9)


@pytest.mark.parametrize("delta", [1e-25, 1e-30, 1e-100])
def test_dp_sgd_below_1e23_is_answered_by_the_pld(delta: float):
    from dp_reference.renyi_upper import epsilon_upper

    events = (Repeat(100, (STEP,)),)
    found = tightest(events, delta)
    assert found.method == "pld"  # was rdp-sharp: the Gaussian tails were cut at 10 sigma
    upper, _ = epsilon_upper(Fraction(1, 100), Fraction(1), 100, delta)
    assert found.epsilon <= upper


def test_the_certificates_do_not_lose_a_tiny_tail_against_one():
    # below 2^-precision of 1, 1 - kept (1 - tail) rounded to 0 with kept = 1: the
    # certificates then "proved" any epsilon, 0 included
    from fuzzpy.accounting import gaussian_mixture, heterogeneous

    groups = ((1 / 3, 3), (0.5, 3))
    assert not heterogeneous.holds(groups, (), 1e-60, 0.0)
    assert not heterogeneous.holds(groups, (), 1e-60, 2.0)  # the answer is ~2.5: 2 is below it
    assert not gaussian_mixture.holds(1.0, groups, (), 1e-60, 10.0)
    eps = tightest((Gaussian(Fraction(1), Fraction(1)), *events_of([(Fraction(1, 3), Fraction(0))] * 3),
                    *events_of([(Fraction(1, 2), Fraction(0))] * 3)), 1e-60).epsilon
    assert gaussian_mixture.holds(1.0, groups, (), 1e-60, eps)
    assert not gaussian_mixture.holds(1.0, groups, (), 1e-60, eps * (1 - 1e-9))


def test_nested_groups_are_one_group_of_the_product_in_every_nesting():
    six = tightest((Group(Fraction(6), (Repeat(5, (STEP,)),)),), 1e-6)
    assert math.isfinite(six.epsilon)  # large k: the summary's delta is searched, not guessed
    for events in (
        (Repeat(5, (Group(Fraction(2), (Group(Fraction(3), (STEP,)),)),)),),
        (Group(Fraction(2), (Repeat(5, (Group(Fraction(3), (STEP,)),)),)),),
        (Group(Fraction(3), (Group(Fraction(2), (Repeat(5, (STEP,)),)),)),),
    ):
        assert tightest(events, 1e-6).epsilon == six.epsilon  # was inf: the inner summary regrouped
    # valid: one step on a pair at distance 6 already needs this much
    assert one_step_group_delta(mpf(six.epsilon), 6) <= 1e-6
    assert six.epsilon >= tightest((Repeat(5, (STEP,)),), 1e-6).epsilon


# ---------------------------------------------------------------- review findings (issue 25)


def test_a_tiny_sigma_subsampled_gaussian_shows_no_raw_integration_warning():
    """Review (b): sigma = 0.001 under subsampling made scipy's quadrature
    print IntegrationWarnings; such an order now gives no bound (inf), so
    nothing is printed and every figure stays a bound."""
    import warnings

    from fuzzpy.accounting import rdp
    from fuzzpy.accounting.atoms import GaussianAtom, SubsampledAtom

    rdp.subsampled_gaussian_curve_with_error.cache_clear()
    events = [Subsample(Fraction(1, 100), (Gaussian(Fraction(1), Fraction(1, 1000)),))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = guarantees(events, 1e-5)
        curve, error = rdp.subsampled_gaussian_curve_with_error(0.01, 1000.0)
    assert found and all(g.epsilon >= 0 for g in found)
    # at every order the value is a bound or no bound at all; never NaN
    assert not any(math.isnan(v) for v in curve + error)
    # the remove direction puts mass q on losses ~ mu^2 / 2 = 5e5: nothing
    # proves much less (a loss above eps with probability ~q > delta)
    assert tightest(events, 1e-5).epsilon > 4e5
    atoms = {SubsampledAtom(Fraction(1, 100), GaussianAtom(Fraction(500000))): 1}
    assert rdp.epsilon(atoms, 1e-5) > 4e5


def test_the_budget_command_prints_no_integration_warning(capsys):
    import warnings

    from fuzzpy.accounting import rdp
    from fuzzpy.cli import main

    rdp.subsampled_gaussian_curve_with_error.cache_clear()
    with warnings.catch_warnings(record=True) as caught:  # what would reach stderr
        warnings.simplefilter("always")
        assert main(["budget", "--gaussian", "0.001", "--subsample", "0.01", "--delta", "1e-5"]) == 0
    captured = capsys.readouterr()
    assert not caught and "Warning" not in captured.err and "tightest" in captured.out


@pytest.mark.parametrize(("eps0", "rounds", "delta"), [("0.1", 60, 0.3), ("1", 10, 0.45)])
def test_k_fold_laplace_at_large_delta_is_exact(eps0, rounds, delta):
    """Review (e): at delta 0.3 the PLD answered inf for 60-fold Laplace(0.1)
    (the grid's last node fell an ulp short of the loss +eps0, putting its
    atom -- half the mass -- at +infinity), leaving KOV, above the exact
    value (0 here). Against tests/dp_reference's exact k-fold Laplace."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from dp_reference.exact import LaplaceComposition, solve_epsilon

    from fuzzpy.accounting.calibrate import laplace_events

    lo, hi = solve_epsilon(LaplaceComposition(Fraction(eps0), rounds).delta, delta)
    found = tightest(laplace_events(1 / Fraction(eps0), rounds), delta)
    assert found.epsilon >= lo * (1 - 1e-9)
    assert found.epsilon <= hi * 1.01 + 1e-9, found
