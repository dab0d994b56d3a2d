"""Privacy loss distributions: a proven upper bound on epsilon at any delta.

The atoms of each neighbouring direction are turned into dominating pairs
(`pld_pairs`), put on a common grid pessimistically (`pld_grid`), composed
by a tilted FFT with a proven error bound (`pld_fft`), and the smallest
epsilon whose delta bound is within the target is returned (`pld_bound`).
Every approximation only increases delta:

* grid spacing, truncation and tilt are chosen from the events and the
  target delta (`_plan`): the tilt t minimises the Chernoff/Renyi bound
  (Canonne, Kamath & Steinke 2020, Prop. 12) of the discretised loss; the
  window holds all but a share ETA * delta of the composed mass on either
  side (Chernoff), and each part keeps all but ETA * delta / (parts * n);
* the mass cut off above is counted at +infinity, the mass below the window
  is added whenever epsilon falls below it, the mass below a part's range
  is moved up to it (`pld_grid`), and every bound (Chernoff, FFT error,
  rounding) is computed in the pessimistic direction.

Below DELTA_FLOOR, or for losses beyond LOSS_LIMIT, the PLD does not
answer (the tilted masses would leave the range of doubles); the
accountant's other methods do.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from fuzzpy.accounting.atoms import (
    ApproxAtom,
    Atoms,
    DiscreteGaussianAtom,
    GaussianAtom,
    GeometricAtom,
    GroupSubsampledAtom,
    LaplaceAtom,
    PureAtom,
    ReplaceSubsampledAtom,
    ShuffledAtom,
    SubsampledAtom,
)
from fuzzpy.accounting.pld_atomic import (
    AtomicTails,
    dgauss_group_pair,
    dgauss_replace_pair,
    dgauss_subsample_fits,
    dgauss_subsample_pair,
    geometric_group_pair,
    pure_group_pair,
    shuffle_pair,
)
from fuzzpy.accounting.pld_bound import DeltaBound
from fuzzpy.accounting.pld_fft import compose
from fuzzpy.accounting.pld_grid import GridPLD, discretise
from fuzzpy.accounting.pld_group import GroupTails, LaplaceGroupTails, ReplaceGroupTails
from fuzzpy.accounting.pld_pairs import (
    DEFAULT_DEPTH,
    ULP,
    BasePair,
    GaussianPair,
    LaplacePair,
    LossTails,
    RandomizedResponsePair,
    tail_depth,
)
from fuzzpy.accounting.pld_plan import Plan, Planner, renyi_bound, summary
from fuzzpy.accounting.pld_replace import ReplaceTails
from fuzzpy.accounting.pld_symmetric import SymmetrisedTails

# audited down to here (tests/test_accounting_deep_delta.py: k-fold Laplace and
# Laplace with Gaussians against exact references at 1e-300)
DELTA_FLOOR = 1e-300
LOSS_LIMIT = 1e5  # pairs with larger losses are left to the other methods
# a later direction whose Renyi bound is within this factor of the answer so
# far is likely below it: a coarse pass checks that first (speed only)
COARSE_FIRST = 1.25
# the fine pass sized by another direction's answer reaches this much below it
# (the two directions of DP-SGD differ by ~0.1-1%; a wider window costs little)
KNOWN_MARGIN = 0.02
TWIN_BOUNDS = 1.01
# DP-SGD's twin directions (`_twin_first`): the second's coarse answer, most
# often a little below the first's answer, sizes the first's fine window
# lifted by TWIN_LIFT (a window placed a little above the answer loses nothing,
# one a little below it is wider: on the 168 rows of bench/dpsgd_speed.py,
# 0.5% left two rows 1e-5 looser than the first's own coarse pass did, 2%
# none, 31 tighter); a second fine pass only when the answer is more than
# TWIN_SIZED_MARGIN below that coarse answer
TWIN_LIFT = 0.02
TWIN_SIZED_MARGIN = 1e-2
Direction = list[
    tuple[LossTails | SymmetrisedTails | ReplaceTails | GroupTails | ReplaceGroupTails | LaplaceGroupTails | AtomicTails, int]
]


# ---------------------------------------------------------------- atoms to pairs


def up(value: Fraction | float) -> float:
    """The smallest double >= an exact value (parameters rounded towards less
    privacy keep the pair dominating)."""
    rounded = float(value)
    return rounded if Fraction(rounded) >= Fraction(value) else math.nextafter(rounded, math.inf)


def _base_pair(
    atom: GaussianAtom | LaplaceAtom | PureAtom | ApproxAtom, depth: float = DEFAULT_DEPTH
) -> BasePair:
    if isinstance(atom, GaussianAtom):
        return GaussianPair(_mu(atom.rho), depth)
    if isinstance(atom, LaplaceAtom):
        return LaplacePair(up(atom.epsilon))
    if isinstance(atom, PureAtom):
        return RandomizedResponsePair(up(atom.epsilon))
    return RandomizedResponsePair(up(atom.epsilon), up(atom.delta))


def _mu(rho: Fraction) -> float:
    """sqrt(2 rho) rounded up (sqrt is correctly rounded; two steps up cover
    the rounding of 2 rho to a double)."""
    return math.nextafter(math.nextafter(math.sqrt(up(2 * rho)), math.inf), math.inf)


def directions(atoms: Atoms, delta: float = 0.0) -> list[Direction]:
    """The atoms' loss tails for the removal and (if any atom is asymmetric)
    the addition direction. A neighbouring pair is one or the other for every
    mechanism at once, so each direction composes on its own and the larger
    epsilon is the answer. Gaussians merge exactly into one (`atoms` docstring).
    Gaussian ranges are as deep as ``delta`` needs (`pld_pairs.tail_depth`)."""
    remove: Direction = []
    add: Direction = []
    one_way = False  # an asymmetric (one-directional) subsampled pair is among the atoms
    count = sum(atoms.values()) + 1
    rho = sum((a.rho * n for a, n in atoms.items() if isinstance(a, GaussianAtom)), Fraction(0))
    if rho > 0:
        mu = _mu(rho)
        remove.append((LossTails(GaussianPair(mu, tail_depth(delta, count, mu)), 1.0, True), 1))
    both: Direction = []
    for atom, n in atoms.items():
        atomic = _atomic_pair(atom, delta, count)
        if atomic is not None:
            # a symmetric pair on finitely many outcomes: the same in both directions (`pld_atomic`)
            remove.append((atomic, n))
            both.append(remove[-1])
            continue
        if isinstance(atom, ShuffledAtom | ReplaceSubsampledAtom) and not isinstance(
                getattr(atom, "inner", None), GaussianAtom | LaplaceAtom):
            raise ValueError("no PLD pair for this atom here (window too wide)")
        if isinstance(atom, ReplaceSubsampledAtom):
            # the replace-one pair is symmetric: the same in both directions (`pld_replace`)
            mu = _mu(atom.inner.rho) if isinstance(atom.inner, GaussianAtom) else 0.0
            inner = atom.inner
            if isinstance(inner, DiscreteGaussianAtom):  # `_atomic_pair` took it, or raised above
                continue
            pair = GaussianPair(mu, tail_depth(delta, count, mu)) if isinstance(inner, GaussianAtom) \
                else LaplacePair(up(inner.epsilon))
            remove.append((ReplaceTails(pair, up(atom.rate)), n))
            both.append(remove[-1])
        elif isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom):
            # the same mixture on the discrete Gaussian's PMF (`pld_atomic.dgauss_group_pair`)
            found = _dgauss_group(atom, delta, count)
            if found is None:
                raise ValueError("no PLD pair for this group over a subsampled discrete Gaussian (window too wide)")
            if atom.replace:  # symmetric: both directions
                remove.append((found[0], n))
                both.append(remove[-1])
                continue
            remove.append((found[0], n))
            add.append((found[1], n))
            one_way = True
        elif isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, GeometricAtom):
            # a person's k rows over a subsampled geometric: the mixture on its PMF (`pld_atomic`)
            group_ways = ("replace",) if atom.replace else ("remove", "add")
            exact_pairs = [geometric_group_pair(atom.inner.scale, atom.inner.shift, atom.rate, atom.size, way)
                           for way in group_ways]
            found_pairs = [pair if pair is not None  # too many outcomes: its pure epsilon's trade-off pair
                           else pure_group_pair(atom.inner.shift / atom.inner.scale, atom.rate, atom.size, way)
                           for pair, way in zip(exact_pairs, group_ways, strict=True)]
            remove.append((found_pairs[0], n))
            if atom.replace:  # symmetric: both directions
                both.append(remove[-1])
                continue
            add.append((found_pairs[1], n))
            one_way = True
        elif isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, PureAtom):
            # a person's k rows over a subsampled pure body: the trade-off pair (`pld_atomic.pure_group_pair`)
            if atom.replace:  # symmetric: both directions
                remove.append((pure_group_pair(atom.inner.epsilon, atom.rate, atom.size, "replace"), n))
                both.append(remove[-1])
                continue
            remove.append((pure_group_pair(atom.inner.epsilon, atom.rate, atom.size, "remove"), n))
            add.append((pure_group_pair(atom.inner.epsilon, atom.rate, atom.size, "add"), n))
            one_way = True
        elif isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, LaplaceAtom):
            # a person's k rows over a subsampled Laplace: the mixture of Laplace laws (`pld_group`)
            eps0, q = up(atom.inner.epsilon), up(atom.rate)
            if atom.replace:  # symmetric: both directions
                remove.append((LaplaceGroupTails(eps0, q, atom.size, "replace"), n))
                both.append(remove[-1])
                continue
            remove.append((LaplaceGroupTails(eps0, q, atom.size, "remove"), n))
            add.append((LaplaceGroupTails(eps0, q, atom.size, "add"), n))
            one_way = True
        elif isinstance(atom, GroupSubsampledAtom):
            # a person's k rows, each sampled on its own: the mixture pair both ways (`pld_group`)
            assert isinstance(atom.inner, GaussianAtom)
            mu = _mu(atom.inner.rho)
            pair = GaussianPair(mu, tail_depth(delta, count, atom.size * mu))
            if atom.replace:  # the person's rows replaced: symmetric, both directions (`pld_group`)
                remove.append((ReplaceGroupTails(pair, up(atom.rate), atom.size), n))
                both.append(remove[-1])
                continue
            remove.append((GroupTails(pair, up(atom.rate), atom.size, True), n))
            add.append((GroupTails(pair, up(atom.rate), atom.size, False), n))
            one_way = True
        elif isinstance(atom, SubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom):
            # the add/remove pair on the discrete Gaussian's PMF, one per direction (`pld_atomic`)
            ways = _dgauss_subsample(atom, delta, count)
            if ways is None or atom.either_way:  # (never built facing either way, `atoms.Flattener._subsample`)
                raise ValueError("no PLD pair for this subsampled discrete Gaussian (window too wide)")
            remove.append((ways[0], n))
            add.append((ways[1], n))
            one_way = True
        elif isinstance(atom, SubsampledAtom):
            assert not isinstance(atom.inner, DiscreteGaussianAtom)  # the branch above
            inner_mu = _mu(atom.inner.rho) if isinstance(atom.inner, GaussianAtom) else 0.0
            base, q = _base_pair(atom.inner, tail_depth(delta, count, inner_mu)), up(atom.rate)
            if atom.either_way:
                # a step whose pair may face either way: the symmetrised pair of
                # its removal pair dominates it in both orders (Zhu, Dong & Wang
                # 2022; `pld_symmetric`), the same in both directions
                symmetric_step = SymmetrisedTails(LossTails(base, q, True))
                remove.append((symmetric_step, n))
                add.append((symmetric_step, n))
                continue
            one_way = True
            remove.append((LossTails(base, q, True), n))
            add.append((LossTails(base, q, False), n))
        elif not isinstance(atom, GaussianAtom):
            remove.append((LossTails(_base_pair(atom), 1.0, True), n))
    if not add or not one_way:  # no asymmetric pair: the two directions are the same
        return [remove]
    # symmetric pairs (Gaussian, Laplace, randomized response) have the same
    # loss distribution in both directions
    symmetric = [(tails, n) for tails, n in remove if tails.rate >= 1]
    return [remove, add + symmetric + both]


def _atomic_pair(atom: object, delta: float, count: int) -> AtomicTails | None:
    """FMT 2021's pair of shuffled reports, or the replace-one pair of a
    subsampled discrete Gaussian with shifts +-s (`pld_atomic`): the cut tail
    of the latter at most a 1e-4 share of delta per atom."""
    if isinstance(atom, ShuffledAtom):
        return shuffle_pair(up(atom.epsilon0), atom.reports)
    if isinstance(atom, ReplaceSubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom):
        tail = 1e-4 * max(delta, DELTA_FLOOR) / count
        return dgauss_replace_pair(atom.inner.sigma, up(atom.rate), tail, atom.inner.shift)
    return None


def _dgauss_tail(delta: float, count: int) -> float:
    """The mass of N_Z(0) a subsampled discrete Gaussian's pair may cut on
    either side: a 1e-4 share of delta per atom."""
    return 1e-4 * max(delta, DELTA_FLOOR) / count


@functools.lru_cache(maxsize=2)  # (the pairs of a wide window are large)
def _dgauss_subsample(atom: SubsampledAtom, delta: float, count: int) -> tuple[AtomicTails, AtomicTails] | None:
    """The removal and addition pairs of a Poisson-subsampled discrete
    Gaussian (`pld_atomic.dgauss_subsample_pair`), each cut tail at most
    `_dgauss_tail`."""
    assert isinstance(atom.inner, DiscreteGaussianAtom)
    tail = _dgauss_tail(delta, count)
    pairs = [dgauss_subsample_pair(atom.inner.sigma, atom.inner.shift, up(atom.rate), tail, way) for way in (True, False)]
    if pairs[0] is None or pairs[1] is None:
        return None
    return pairs[0], pairs[1]


@functools.lru_cache(maxsize=2)
def _dgauss_group(atom: GroupSubsampledAtom, delta: float, count: int) -> tuple[AtomicTails, AtomicTails] | None:
    """A person's k rows over a Poisson-subsampled discrete Gaussian
    (`pld_atomic.dgauss_group_pair`): the removal and addition pairs, or the
    replace pair twice; each cut tail at most `_dgauss_tail`."""
    assert isinstance(atom.inner, DiscreteGaussianAtom)
    tail, rate = _dgauss_tail(delta, count), up(atom.rate)
    ways = ("replace", "replace") if atom.replace else ("remove", "add")
    pairs = [dgauss_group_pair(atom.inner.sigma, atom.inner.shift, rate, atom.size, tail, way) for way in ways]
    if pairs[0] is None or pairs[1] is None:
        return None
    return pairs[0], pairs[1]


# ---------------------------------------------------------------- composing


def _direction_epsilon(
    direction: Direction,
    delta: float,
    planner: Planner,
    enough: float = 0.0,
    known: float = 0.0,
    sized_by: float = math.inf,
    coarse_known: float | None = None,
) -> float:
    """One pass, sized by an estimate of the answer; or, when that estimate
    would make the window wide (a heavy upper tail wrapping around) or turns
    out too high, a coarse pass first whose answer sizes the fine one. Every
    pass gives a proven bound; the smallest is returned. With ``enough`` > 0
    (another direction's proven answer, near this one's Renyi bound) the
    coarse pass comes first either way, and when its bound is at most
    ``enough`` the fine passes are skipped: this direction cannot raise the
    answer, max(enough, coarse) = enough. ``known`` > 0 (another
    direction's proven answer) is what this one's must exceed to matter:
    the fine window reaches a little below it (or below the coarse answer,
    if lower), with no coarse pass of its own and no second fine pass for
    an answer below it (speed only; every pass is valid). ``sized_by``
    (finite: the twin direction's coarse answer, `_twin_first`) stands in
    for this direction's own coarse pass when one is needed, to size the
    fine one (it proves nothing about this direction); ``coarse_known`` is
    this direction's coarse answer when already found (`_twin_first`)."""
    coarse = None
    if enough > 0 and coarse_known is not None:
        coarse = coarse_known
        if coarse <= enough:
            return coarse
    elif enough > 0:
        hinted = _bound(direction, planner.hint())
        if hinted.delta(enough) <= delta:
            # this direction's proven delta at ``enough`` is within the target:
            # its epsilon is at most ``enough`` (one sum instead of a solve)
            return enough
        coarse = hinted.epsilon(delta)
        if coarse <= enough:
            return coarse
    estimate = planner.estimate()
    found = math.inf
    if known > 0:
        found = coarse if coarse is not None else math.inf
        estimate = min(known, found) * (1 - KNOWN_MARGIN)
    elif math.isfinite(sized_by):
        estimate = sized_by * (1 + TWIN_LIFT)
    elif planner.needs_hint(estimate):
        found = coarse if coarse is not None else _bound(direction, planner.hint()).epsilon(delta)
        estimate = found if math.isfinite(found) else planner.renyi_epsilon
    plan = planner.final(estimate)
    final = _bound(direction, plan).epsilon(delta)
    # (sized by the twin's coarse answer, a little above this one's most
    # often: a window reaching that little less far down loses nothing)
    replan_below = sized_by * (1 - TWIN_SIZED_MARGIN) if math.isfinite(sized_by) else estimate * (1 - 1e-3)
    if final < replan_below and math.isinf(found) and final > known:
        # the window was planned for a larger answer: plan again for this one
        found = _bound(direction, planner.final(final)).epsilon(delta)
    best = min(found, final)
    if not best <= planner.renyi_epsilon and planner.coarser_smooth():
        # the coarser Gaussian-only grid (`pld_plan.SMOOTH_VARIANCE_TOLERANCE`)
        # did worse than the Renyi estimate (a window too narrow for its tilt):
        # the fine grid, as for the other directions (speed only; both valid)
        best = min(best, _bound(direction, planner.final(estimate, fine=True)).epsilon(delta))
    return best


def _bound(direction: Direction, plan: Plan) -> DeltaBound:
    parts = [
        (discretise(tails, plan.interval, lo, hi, strides), n)
        for (tails, n), (lo, hi), strides in zip(direction, plan.cuts, plan.strides, strict=True)
    ]
    h = plan.interval
    # the float losses differ from the exact grid values by an ulp each
    edge = max(abs(plan.low), abs(plan.low + plan.size)) * h
    shift = sum(n * p.shift for p, n in parts) + 2 * ULP * edge
    first = max(math.floor(-shift / h) - 1, plan.low)  # only losses > -shift matter for eps >= 0
    composition = compose(parts, plan.tilt, plan.low, plan.size, first)
    losses = (composition.first + np.arange(composition.masses.size)) * h
    # `DeltaBound.delta` adds the mass below the window only when its
    # e0 = nextafter(eps - shift, -inf) < window_low; it is read at eps >= 0
    # only (e0 >= nextafter(-shift, -inf)), so below that its Chernoff bound
    # is never read: 1 (all the mass) stands in
    needs_below = plan.low * h > math.nextafter(-shift, -math.inf)
    above, below = _window_tails(parts, plan, needs_below)
    infinity = _infinity_mass(parts)
    # no single loss carries more than all the mass (NaN from overflow included:
    # fmin takes the number where the other is NaN)
    masses = np.fmin(composition.masses, 1.0)
    return DeltaBound(losses, masses, min(infinity + above, 1.0), below, plan.low * h, shift)


def _infinity_mass(parts: Sequence[tuple[GridPLD, int]]) -> float:
    """1 - prod (1 - p_inf)^n, rounded up."""
    log_finite = sum(n * math.log1p(-min(p.infinity_mass, 1.0)) for p, n in parts)
    # log1p of a subnormal mass errs by half a subnormal ulp (5e-324) per part and
    # step, absolute: that much is added (a fixed 1e-300 here made every delta
    # down to 1e-300 answer inf)
    pad = (sum(n for _, n in parts) + 1) * 5e-324
    return min(-math.expm1(log_finite) * (1 + 1e-12) + pad, 1.0)


def _window_tails(
    parts: Sequence[tuple[GridPLD, int]], plan: Plan, needs_below: bool = True
) -> tuple[float, float]:
    """Upper bounds of the composed finite mass at indices >= low + size and
    < low: zero beyond the composed support, else Chernoff's
    P(S >= u) <= e^{-tu} prod E[e^{tL}]^n (and likewise below; 1 without
    ``needs_below``)."""
    low, size = plan.low, plan.size
    interval = parts[0][0].interval
    support_low = sum(n * p.offset for p, n in parts)
    support_high = sum(n * p.last for p, n in parts)
    above = below = 0.0
    if support_high >= low + size:
        above = _chernoff(parts, plan.orders_above, (low + size) * interval)
    if support_low < low:
        below = _chernoff(parts, -plan.orders_below, (low - 1) * interval) if needs_below else 1.0
    return above, below


def _chernoff(parts: Sequence[tuple[GridPLD, int]], orders: np.ndarray, threshold: float) -> float:
    log_mgf = sum(n * p.log_mgf(orders) for p, n in parts)
    exponent = log_mgf - orders * threshold
    best = float(np.min(exponent + 1e-12 * (1 + np.abs(exponent))))
    return 1.0 if best >= 0 else min(math.exp(best) * (1 + 1e-12), 1.0)


# ---------------------------------------------------------------- public API


def epsilon(atoms: Atoms, delta: float) -> float | None:
    """A proven upper bound of epsilon at delta (None below DELTA_FLOOR)."""
    if not atoms:
        return 0.0
    if delta < DELTA_FLOOR:
        return None
    if any(isinstance(atom, DiscreteGaussianAtom) for atom in atoms):
        return None  # its pair is not one of `pld_pairs` (the zCDP, Renyi and exact methods answer)
    if any(isinstance(atom, SubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom)
           and (atom.either_way or not dgauss_subsample_fits(atom.inner.sigma, atom.inner.shift,
                                                            _dgauss_tail(delta, sum(atoms.values()) + 1)))
           for atom in atoms):
        return None  # no pair built for it (facing either way, or a window too wide)
    if any(isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom)
           and _dgauss_group(atom, delta, sum(atoms.values()) + 1) is None for atom in atoms):
        return None  # a person's group whose window (or its work) is too large: the group bound answers
    if delta >= 1:
        return 0.0
    found = directions(atoms, delta)
    if any(
        not abs(bound) < LOSS_LIMIT
        for d in found
        for tails, _ in d
        for bound in tails.loss_range()
        if math.isfinite(bound) or bound != -math.inf
    ):
        return None
    # cheap proven bounds first: the direction with the largest goes first,
    # and no Planner is built for a direction whose bound is already below
    # the answer (it cannot raise it)
    bounds = sorted(((renyi_bound(d, delta), d) for d in found if d), key=lambda bd: -bd[0])
    planners, sized_by = _twin_first(bounds, delta)
    best = 0.0
    for index, (bound, direction) in enumerate(bounds):
        if bound > best:
            # a second direction whose Renyi bound is close to the first's (the
            # two directions of DP-SGD: a relative 1e-4 apart) is about as
            # large and most often a little smaller: the coarse pass first too
            twin = best > 0 and bound >= bounds[0][0] / TWIN_BOUNDS
            enough = best if bound <= COARSE_FIRST * best or twin else 0.0
            planner = planners[index] if index < len(planners) else Planner(direction, delta)
            found_here = _direction_epsilon(
                direction,
                delta,
                planner,
                enough,
                best,
                sized_by if index == 0 else math.inf,
                sized_by if index == 1 and math.isfinite(sized_by) else None,
            )
            best = max(best, found_here)
    return best


def _twin_first(
    bounds: Sequence[tuple[float, Direction]], delta: float
) -> tuple[list[Planner], float]:
    """Twin directions (DP-SGD's two, whose Renyi bounds are within
    TWIN_BOUNDS): the second's coarse pass, which it runs anyway
    (`_direction_epsilon` with ``enough``), is run first, and its answer
    sizes the first's fine pass (the two answers differ by ~0.1-1%: the
    fine window hardly moves) in place of the first's own coarse pass and
    its Renyi-based estimate (`Planner.needs_hint`, `Planner.estimate`).
    Returns the planners built and that answer (inf if none).
    Speed only: every pass is valid whatever sized it (measured on the
    168 rows of bench/dpsgd_speed.py against the first's own coarse pass:
    31 epsilons smaller, by up to 7e-4 relative, five larger by at most
    3.3e-12 relative, the solve's own precision, `DeltaBound.epsilon`)."""
    if len(bounds) != 2 or not bounds[1][0] >= bounds[0][0] / TWIN_BOUNDS:
        return [], math.inf
    first, second = Planner(bounds[0][1], delta), Planner(bounds[1][1], delta)
    return [first, second], _bound(bounds[1][1], second.hint()).epsilon(delta)


def clear_caches() -> None:
    """Forget cached discretisations (for cold-start timings)."""
    discretise.cache_clear()
    summary.cache_clear()
    _dgauss_subsample.cache_clear()
