"""The accountant: from privacy events to the tightest (eps, delta) it can prove.

Every method below is a valid upper bound on the privacy loss of the
(adaptive) composition of the events in exact arithmetic; each result also
says whether its floating-point evaluation is *proven* to round up (every
approximation and rounding error bounded and added). `tightest` reports the
smallest proven bound and names the method that gave it; unproven results
are listed by `guarantees` for comparison only. No estimate that is not an
upper bound (a central-limit approximation, an optimistic PLD) is ever used.

Methods (ids are stable; DESCRIPTIONS gives the reference):

    pure            pure composition: eps add (exact Fractions)
    exact-single    one pure, Laplace or subsampled Laplace mechanism, in closed form
    exact-gaussian  analytic Gaussian of the composed Gaussians (exact)
    exact-mixture   Gaussians with pure / (eps, delta) events: the analytic
                    Gaussian averaged over their enumerated loss (exact)
    exact-laplace   k-fold Laplace at small delta, closed form (exact)
    exact-subsampled  k-fold Poisson-subsampled pure events, binomial (exact)
    kov             also exact for k-fold pure or (eps, delta) events
    pld             privacy loss distributions, with proven error bounds
    rdp-sharp       Renyi DP with the sharp subsampled-Gaussian bound,
                    evaluated in extended precision at the best order
    basic           (eps, delta) add
    advanced        Dwork-Rothblum-Vadhan advanced composition
    kov             Kairouz-Oh-Viswanath optimal composition (heterogeneous
                    pure / (eps, delta) events: Murtagh-Vadhan, `heterogeneous`)
    zcdp            zCDP, Bun-Steinke conversion
    zcdp-cks        zCDP, Canonne-Kamath-Steinke conversion
    rdp             Renyi DP over an order grid (dp-accounting's subsampled
                    Gaussian), Balle et al. conversion

The composition theorems, the zCDP conversions, KOV and the analytic
Gaussian round in the safe direction (`rounding`, issue 14); the PLD, the
closed forms and rdp-sharp carry their own proofs (their modules). The grid
RDP is listed but not proven: its fractional subsampled-Gaussian orders come
from dp-accounting's series, whose truncation carries no error bound
(rdp-sharp computes the same bound with one).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction

from fuzzpy.accounting.atoms import (
    Atoms,
    DiscreteGaussianAtom,
    Flattener,
    GaussianAtom,
    GroupSubsampledAtom,
    LaplaceAtom,
    NotSummarisable,
    PureAtom,
    ReplaceSubsampledAtom,
    ShuffledAtom,
    SubsampledAtom,
    pure_part,
    replace_pure_epsilon,
    subsampled_pure_epsilon,
)
from fuzzpy.accounting.events import Event, Group, Repeat, Subsample, anywhere
from fuzzpy.accounting.rounding import float_up
from fuzzpy.support.records import frozen

DESCRIPTIONS: dict[str, str] = {
    "pure": "pure composition (Dwork, McSherry, Nissim & Smith 2006)",
    "exact-single": (
        "exact: one pure (randomized response), Laplace or subsampled Laplace mechanism, "
        "closed form"
    ),
    "basic": "basic composition (Dwork & Roth 2014, Thm 3.16)",
    "advanced": "advanced composition (Dwork, Rothblum & Vadhan 2010)",
    "fmt2021": "amplification by shuffling (Feldman, McMillan & Talwar 2021, numerically computed)",
    "kov": "optimal composition (Kairouz, Oh & Viswanath 2015; heterogeneous events: "
    "Murtagh & Vadhan 2016)",
    "zcdp": "zCDP, simple conversion (Bun & Steinke 2016, Prop. 1.3)",
    "zcdp-cks": "zCDP, tight conversion (Canonne, Kamath & Steinke 2020)",
    "rdp": "Renyi DP, improved conversion (Balle et al. 2020, Thm 21)",
    "pld": "privacy loss distribution, pessimistic connect-the-dots + tilted FFT, error bounded",
    "rdp-sharp": "Renyi DP per event (Mironov 2017; subsampled Gaussians by the sharp bound of "
    "Mironov, Talwar & Zhang 2019, other subsampled events amplified, Balle et al. 2018), "
    "CKS20 Prop. 12 conversion, certified at the best order",
    "exact-gaussian": "exact: analytic Gaussian (Balle & Wang 2018) of the composition",
    "exact-dgauss": "exact: one discrete Gaussian release, its privacy loss summed "
    "(Canonne, Kamath & Steinke 2020, Thm 7), certified",
    "exact-mixture": "exact: the analytic Gaussian (Balle & Wang 2018) averaged over the "
    "enumerated loss of the pure and (eps, delta) events it is composed with",
    "exact-laplace": "exact: k-fold Laplace (and pure events of one eps) in closed form, "
    "a positive series, at small delta",
    "exact-atomic": "exact: one Poisson-subsampled discrete Gaussian release, its dominating "
    "pair's atoms summed (no grid), certified",
    "exact-subsampled": "exact: k-fold Poisson-subsampled randomized response "
    "(Zhu, Dong & Wang 2022), binomial, certified",
    "none": "no method proves a finite epsilon at this delta",
}
#: shuffled reports: FMT 2021's (eps, delta) of the shuffle, alone or composed
SHUFFLE_LABEL = "fmt2021"
_SHUFFLE_DESCRIPTION = ("amplification by shuffling (Feldman, McMillan & Talwar 2021, the clone pair's "
                        "hockey-stick divergence, numerically)")
DESCRIPTIONS.update({f"{SHUFFLE_LABEL}+{name}": f"{_SHUFFLE_DESCRIPTION}, composed by {text}"
                     for name, text in list(DESCRIPTIONS.items()) if name != "none"})
DESCRIPTIONS[SHUFFLE_LABEL] = _SHUFFLE_DESCRIPTION

# Methods whose guarantee also holds when later releases (and their privacy
# parameters) are chosen adaptively, as a privacy filter: basic composition
# (Rogers, Roth, Ullman & Vadhan 2016, privacy filters) and zCDP (a zCDP
# filter: Whitehouse, Ramdas, Rogers & Wu 2023, "Fully adaptive composition"),
# converted once at the end; pure epsilon is basic composition with delta 0.
FILTER_METHODS: tuple[str, ...] = ("pure", "basic", "zcdp")


@frozen
class Guarantee:
    """The composition is (epsilon, delta)-DP, proved by ``method``; ``proven``
    says whether the float epsilon is proven to be at least the method's exact
    bound (else it is listed for comparison only)."""

    epsilon: float
    delta: float
    method: str
    proven: bool = True

    @property
    def description(self) -> str:
        return DESCRIPTIONS.get(self.method, self.method)


# ---------------------------------------------------------------- flattening


FULL_PART = 1.0 + 1e-9  # all of delta to the summaries, less a hair for the margins


def atoms_of(
    events: Iterable[Event],
    delta: float = 0.0,
    whole_groups: bool = False,
    part: float = 2.0,
    pair_atoms: bool = False,
    chains: bool = False,
) -> Atoms:
    """The events' atoms. Composite bodies under `subsample` / `group` and
    shuffled reports are summarised at equal shares of ``delta / part``
    (NotSummarisable without): half of it by default, the rest left to the
    composition; all of it (``part`` 1) when the summaries are all there is
    to compose (a lone shuffle's figure at the whole delta: FMT 2021's
    (eps, delta) itself; ``part`` a hair above 1, `FULL_PART`, so that the
    composition's safety margin still fits). ``whole_groups`` chooses how a group's summarised
    part is charged (`atoms.Flattener`)."""
    # events arrive restated for their neighbour relation (`accounting.neighbours.resolve`):
    # local reports are charged as they are, their epsilon a replace-one guarantee
    events = tuple(events)
    counter = Flattener(lambda body, d: 0.0, delta_share=1.0, whole_groups=whole_groups,
                        pair_atoms=pair_atoms, chains=chains)
    counter.flatten(events)
    if counter.sites == 0:
        return Flattener(pair_atoms=pair_atoms).flatten(events)
    share = delta / (part * counter.sites)
    summarise = lambda body, d: _tightest_atoms(body, d).epsilon  # noqa: E731
    return Flattener(summarise, share, whole_groups, pair_atoms, chains).flatten(events)


def atoms_options(events: Iterable[Event], delta: float) -> list[Atoms]:
    """Every valid flattening of the events: group privacy per atom and, when
    a group's body needs a summary, of the body's composed profile (either
    nesting of `group` and `loop` gives the same options). Raises
    NotSummarisable when none exists."""
    events = tuple(events)
    found: list[Atoms] = []
    from fuzzpy.accounting.local import has_shuffled

    # the whole of delta to the summaries: tried for shuffled reports only
    # (a lone shuffle's figure; elsewhere the extra summaries cost time)
    # (and for bootstraps amplified at a delta, `accounting.bootstrap`: a lone one's figure likewise)
    whole = has_shuffled(events) or _has_resampled(events)
    tries = ((False, 2.0, False), (True, 2.0, False)) + (((False, FULL_PART, False), (True, FULL_PART, False))
                                                         if whole else ())
    if _has_pairs(events):  # replace-one and group pairs of subsamples too (`REPLACE_AWARE`)
        tries += ((False, 2.0, True),)
    chained = _has_chains(events)  # one dataset behind several parameters: the chain of their guarantees too
    # the chain's routes summarised with their replace-one and group pairs too (a review of
    # issue 28 found `run --neighbours replace-one` chaining two replace-one subsamples each
    # at its group bound: 12.787 where the routes' own pairs chain to 5.345)
    chain_tries = [(False, 2.0, False, True), (False, FULL_PART, False, True)] if chained else []
    if chained and _has_pairs(events):
        chain_tries += [(False, 2.0, True, True), (False, FULL_PART, True, True)]
    for whole_groups, part, replace, chains in [t + (False,) for t in tries] + chain_tries:
        try:
            atoms = atoms_of(events, delta, whole_groups, part, replace, chains)
        except NotSummarisable:
            continue
        if atoms not in found:
            found.append(atoms)
    if not found:
        raise NotSummarisable("no flattening of the events has a finite summary")
    return found


def _has_chains(events: Iterable[Event]) -> bool:
    """Whether a group of parameters given one dataset (`events.Group.chained`) is among the events."""
    return anywhere(events, lambda e: isinstance(e, Group) and e.chained)


def _has_resampled(events: Iterable[Event]) -> bool:
    from fuzzpy.accounting.events import Resampled

    return anywhere(events, lambda e: isinstance(e, Resampled))


# ---------------------------------------------------------------- methods


def _pure(atoms: Atoms, delta: float) -> float | None:
    total = exact_pure(atoms)
    return None if total is None else float_up(total)


def exact_pure(atoms: Atoms) -> Fraction | None:
    total = Fraction(0)
    for atom, n in atoms.items():
        eps = pure_part(atom)
        if eps is None and isinstance(atom, SubsampledAtom):
            eps = subsampled_pure_epsilon(atom)
        if eps is None and isinstance(atom, ReplaceSubsampledAtom):
            eps = replace_pure_epsilon(atom)
        if eps is None and isinstance(atom, ShuffledAtom):  # eps0-LDP reports: eps0-DP (replace-one)
            eps = atom.epsilon0
        if eps is None:
            return None
        total += n * eps
    return total


def _exact_gaussian(atoms: Atoms, delta: float) -> float | None:
    if not atoms or not all(isinstance(atom, GaussianAtom) for atom in atoms):
        return None
    rho = sum((atom.rho * n for atom, n in atoms.items()), Fraction(0))
    return _module("gaussian").epsilon_for_delta(GaussianAtom(rho).mu, delta)  # mu rounded up


def _exact_single(atoms: Atoms, delta: float) -> float | None:
    """One pure, Laplace or Poisson-subsampled Laplace mechanism (closed_form,
    closed_subsampled)."""
    if len(atoms) != 1:
        return None
    ((atom, n),) = atoms.items()
    if n != 1:
        return None
    if isinstance(atom, LaplaceAtom):
        return _module("closed_form").laplace_epsilon(atom.epsilon, delta)
    if isinstance(atom, PureAtom):
        return _module("closed_form").randomized_response_epsilon(atom.epsilon, delta)
    if isinstance(atom, SubsampledAtom) and isinstance(atom.inner, LaplaceAtom):
        return _module("closed_subsampled").subsampled_laplace_epsilon(atom.rate, atom.inner.epsilon, delta)
    return None


Method = Callable[[Atoms, float], "float | None"]

# Costly methods that rarely beat the PLD: run after the others, and skipped
# when a float estimate from below of what they can give (FLOORS) is already
# above the best proven bound. Skipping never affects validity; the margin
# keeps it from costing tightness beyond a relative 1e-6. Basic composition
# is cheap to estimate but not to certify (mpmath, `gaussian`): it waits too,
# and keeps its place in the order ties are reported in (`_REPORTED_LATE`).
_AFTER_PLD = ("basic", "advanced", "kov", "rdp-sharp")
_REPORTED_LATE = ("advanced", "kov", "rdp-sharp")
FLOORS: dict[str, tuple[str, str]] = {
    "basic": ("composition", "basic_floor"),
    "advanced": ("composition", "advanced_floor"),
    "kov": ("composition", "kov_floor"),
    "rdp-sharp": ("renyi", "epsilon_floor"),
}
_FLOOR_MARGIN = 1e-6


def _cannot_win(name: str, atoms: Atoms, delta: float, best: float) -> bool:
    if not math.isfinite(best) or delta <= 0:
        return False
    module, function = FLOORS[name]
    try:
        with _module("np").errstate(all="ignore"):
            floor = getattr(_module(module), function)(atoms, delta)
    except (ArithmeticError, ValueError):
        return False
    return floor is not None and floor * (1 - _FLOOR_MARGIN) > best

def _module(name: str):  # noqa: ANN202 - a module of this package, or numpy
    """The methods' modules load numpy, scipy, mpmath and dp_accounting
    (seconds): they are imported when a figure first needs them, so that
    pure costs (what `fuzzpy check` mostly asks) start fast."""
    return importlib.import_module("numpy" if name == "np" else f"fuzzpy.accounting.{name}")


def _late(module: str, function: str) -> Method:
    def call(atoms: Atoms, delta: float) -> float | None:
        return getattr(_module(module), function)(atoms, delta)

    return call


def _needs_delta(method: Method) -> Method:
    def guarded(atoms: Atoms, delta: float) -> float | None:
        return None if delta <= 0 else method(atoms, delta)

    return guarded


@frozen
class _Entry:
    method: Method
    proven: bool


METHODS: dict[str, _Entry] = {
    "exact-gaussian": _Entry(_needs_delta(_exact_gaussian), True),
    "pure": _Entry(_pure, True),
    "exact-single": _Entry(_needs_delta(_exact_single), True),
    "exact-dgauss": _Entry(_needs_delta(_late("discrete_gaussian", "epsilon")), True),
    "exact-mixture": _Entry(_needs_delta(_late("gaussian_mixture", "epsilon")), True),
    "exact-laplace": _Entry(_needs_delta(_late("exact_composed", "laplace_epsilon")), True),
    "exact-subsampled": _Entry(
        _needs_delta(_late("exact_composed", "subsampled_pure_epsilon")), True
    ),
    "exact-atomic": _Entry(_needs_delta(_late("pld_atomic", "single_release_epsilon")), True),
    "basic": _Entry(_needs_delta(_late("composition", "basic")), True),
    "advanced": _Entry(_needs_delta(_late("composition", "advanced")), True),
    "kov": _Entry(_needs_delta(_late("composition", "kov")), True),
    "zcdp": _Entry(_needs_delta(lambda a, d: _module("zcdp").approximate_epsilon(a, d, tight=False)), True),
    "zcdp-cks": _Entry(_needs_delta(lambda a, d: _module("zcdp").approximate_epsilon(a, d, tight=True)), True),
    "rdp-sharp": _Entry(_needs_delta(_late("renyi", "epsilon")), True),
    "pld": _Entry(_needs_delta(_late("pld", "epsilon")), True),
    "rdp": _Entry(_needs_delta(_late("rdp", "epsilon")), False),
}
# the order `tightest` tries them in: exact answers first, then cheap bounds,
# then the PLD (unproven methods are not run by `tightest`)
_EXACT = ("exact-gaussian", "exact-single", "exact-dgauss", "exact-mixture", "exact-laplace", "exact-subsampled",
          "exact-atomic")


def _run(atoms: Atoms, delta: float, methods: Sequence[str], exact: Fraction | None = None) -> list[Guarantee]:
    """Each method's guarantee at ``delta`` (the largest float <= the exact
    delta asked, ``exact``); `basic` and `kov` also meet a delta equal to the
    exact 1 - prod (1 - delta_i) of fixed events, which no float below it
    reaches (`composition.boundary_epsilon`, issue 25). A figure proved at
    ``delta`` holds at the float nearest ``exact`` (``delta`` or the float
    above it), which it reports; one met at ``exact`` itself, the float >= it."""
    found = []
    reported = delta if exact is None else float(exact)
    for name in methods:
        entry = METHODS[name]
        try:
            with _module("np").errstate(all="ignore"):
                eps = entry.method(atoms, delta)
        except (ArithmeticError, ValueError):
            # numbers beyond a double (eps0 = 1e308, sigma = 1e-300): this method
            # proves nothing here; the others' bounds stay valid on their own
            continue
        if name in _AT_BOUNDARY and exact and (eps is None or math.isinf(eps)):  # delta 0: `pure`
            at_boundary = _module("composition").boundary_epsilon(atoms, exact)
            if at_boundary is not None:
                found.append(Guarantee(at_boundary, float_up(exact), name, entry.proven))
                continue
        if eps is not None and not math.isnan(eps):
            found.append(Guarantee(max(0.0, eps), reported, name, entry.proven))
    return found


#: the methods that answer at the exact boundary of fixed (eps, delta) events
_AT_BOUNDARY = ("basic", "kov")


def _has_bounded_range(atoms: Atoms) -> bool:
    """Whether an atom is an exponential mechanism (subsampled or not)."""
    for atom in atoms:
        inner = atom.inner if isinstance(atom, SubsampledAtom) else atom
        if isinstance(inner, PureAtom) and inner.bounded_range:
            return True
    return False


def _tightest_atoms(atoms: Atoms, delta: float, methods: Sequence[str] | None = None,
                    exact: Fraction | None = None) -> Guarantee:
    if not atoms:
        return Guarantee(0.0, delta if exact is None else float(exact), "pure")
    names = [name for name in (methods or METHODS) if METHODS[name].proven]
    if _has_pair_atoms(atoms):  # also for a body summarised inside a group or a subsample
        names = [name for name in names if name in REPLACE_AWARE]
    # an exact value cannot be beaten by any valid bound: stop there. The
    # closed forms take every pure atom for randomized response, exact for
    # eps-DP but not for the exponential mechanism, whose bounded range
    # proves more (Cesar & Rogers 2021; zcdp-cks, rdp-sharp): with one of
    # those, their value is one bound among the others
    bounded_range = _has_bounded_range(atoms)
    for name in _EXACT:
        if name in names and not bounded_range:
            # a finite one: an exact method that overflows says inf, which the others may beat
            closed = [g for g in _run(atoms, delta, [name], exact) if math.isfinite(g.epsilon)]
            if closed:
                return closed[0]
            names.remove(name)
    # KOV is the optimum for k-fold pure (or (eps, delta)) events (`exact_composed`)
    if "kov" in names and _module("exact_composed").kov_is_exact(atoms):
        optimum = [g for g in _run(atoms, delta, ["kov"], exact) if math.isfinite(g.epsilon)]
        if optimum:
            return optimum[0]
    costly = [name for name in _AFTER_PLD if name in names]
    found = [
        g for g in _run(atoms, delta, [n for n in names if n not in costly], exact) if math.isfinite(g.epsilon)
    ]
    for name in costly:
        best = min((g.epsilon for g in found), default=math.inf)
        if not _cannot_win(name, atoms, delta, best):
            found += [g for g in _run(atoms, delta, [name], exact) if math.isfinite(g.epsilon)]
    if not found:
        return Guarantee(math.inf, delta if exact is None else float(exact), "none")
    # a tie goes to the method listed first (the late ones after the others)
    order = [n for n in names if n not in _REPORTED_LATE] + [n for n in _REPORTED_LATE if n in names]
    return min(found, key=lambda g: (g.epsilon, order.index(g.method)))


# ---------------------------------------------------------------- public API


#: The methods that bound every step in both orders, so that they compose
#: steps whose pair faces either way from one step to the next
#: (`events.Subsample.either_way`): pure and (eps, delta) composition of
#: per-step guarantees, zCDP (Renyi divergences of both orders), and the PLD,
#: which composes both directions of every such step (`pld.directions`); the
#: exact compositions and the sharp Renyi bound take one direction for all.
ORIENTATION_FREE = ("pure", "exact-single", "basic", "advanced", "kov", "zcdp", "zcdp-cks", "pld")


#: The methods that take a replace-one subsampled atom (`atoms.ReplaceSubsampledAtom`),
#: a person's group over a subsampled Gaussian (`atoms.GroupSubsampledAtom`)
#: or FMT 2021's pair of shuffled reports (`atoms.ShuffledAtom`):
#: pure composition (the density-ratio bound of a Laplace body) and the PLD
#: (their pairs, `pld_replace`, `pld_group`). The other methods see the
#: flattening without them (group privacy), which `atoms_options` always offers too.
REPLACE_AWARE = ("pure", "pld", "exact-atomic")


def _has_pair_atoms(atoms: Atoms) -> bool:
    return any(isinstance(atom, ReplaceSubsampledAtom | GroupSubsampledAtom | ShuffledAtom)
               or isinstance(atom, SubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom)
               for atom in atoms)


def _has_pairs(events: Iterable[Event]) -> bool:
    """Whether a flattening with pair atoms may differ: a replace-one
    subsample, or a person's group of rows over a subsample."""
    from fuzzpy.accounting.events import DiscreteGaussian, ShuffledReports

    def pairs(event: object) -> bool:
        if isinstance(event, Subsample) and event.replace or isinstance(event, ShuffledReports):
            return True
        if isinstance(event, Subsample) and any(isinstance(e, DiscreteGaussian) for e in event.body):
            return True  # its add/remove pair (`pld_atomic.dgauss_subsample_pair`)
        return isinstance(event, Group) and bool(event.rows) and _has_subsample(event.body)

    return anywhere(events, pairs)


def _has_subsample(events: Iterable[Event]) -> bool:
    return any(isinstance(e, Subsample) or isinstance(e, Repeat) and _has_subsample(e.body) for e in events)


def _either_way(events: Iterable[Event]) -> bool:
    return anywhere(events, lambda e: isinstance(e, Subsample) and e.either_way)


def _allowed(events: tuple[Event, ...], atoms: Atoms, methods: Sequence[str] | None) -> Sequence[str] | None:
    """``methods`` (None: all), restricted to `ORIENTATION_FREE` when a step
    may face either way and there is more than one step (one step is bounded
    by the larger of its two directions, which every method takes)."""
    if _has_pair_atoms(atoms):
        methods = [name for name in (methods or METHODS) if name in REPLACE_AWARE]
    if sum(atoms.values()) <= 1 or not _either_way(events):
        return methods
    return [name for name in (methods or METHODS) if name in ORIENTATION_FREE]


def tightest(
    events: Iterable[Event], delta: float | Fraction, methods: Sequence[str] | None = None
) -> Guarantee:
    """The smallest epsilon any valid method proves for the events at ``delta``
    (restricted to ``methods`` if given, e.g. FILTER_METHODS; only proven
    results count). epsilon is ``inf`` (method "none") when no method proves a
    finite one, e.g. for approximate events at delta = 0.

    An exact ``delta`` (a Fraction, e.g. the 0.28 a user typed) is proved at
    the largest float <= it, and met exactly where it is the boundary
    1 - prod (1 - delta_i) of fixed events (`composition.boundary_epsilon`);
    the figure's delta is the float nearest it (>= it where met exactly). `check`, `run` and `budget` all
    come here (`charged_epsilon`)."""
    exact, delta = _exact_delta(delta)
    events = tuple(events)
    try:
        options = atoms_options(events, delta)
    except NotSummarisable:
        return Guarantee(math.inf, float(exact), "none")
    best = min((_tightest_atoms(atoms, delta, _allowed(events, atoms, methods), exact) for atoms in options),
               key=lambda g: g.epsilon)
    return _shuffle_labelled(events, best)


def _exact_delta(delta: float | Fraction) -> tuple[Fraction, float]:
    """(the exact delta, the largest float <= it), checked to lie in [0, 1]."""
    from fuzzpy.accounting.rounding import float_down

    exact = delta if isinstance(delta, Fraction) else Fraction(float(delta))
    if not 0 <= exact <= 1:
        raise ValueError(f"delta must lie in [0, 1], got {float(delta)}")
    return exact, float_down(exact)


def charged_epsilon(events: Sequence[Event], delta: Fraction) -> tuple[Fraction | None, str]:
    """The epsilon one release is charged (`run`) and reported (`check`,
    `budget`) at an exact ``delta``, and the method's name; None when no
    method bounds it. One function for both, so they cannot disagree.

    The accountant's figure is proved at the largest float <= delta (float()
    rounds to nearest, which may lie above it); verified mechanisms' own
    claims are added exactly (`verified_claims_sum`), so a release at exactly
    its claim's delta is charged the claim."""
    guarantee = tightest(tuple(events), Fraction(delta))
    found = float(guarantee.epsilon)
    epsilon = None if math.isinf(found) or math.isnan(found) else Fraction(found)
    claimed = verified_claims_sum(events, delta)
    if claimed is not None and (epsilon is None or claimed <= epsilon):
        return claimed, "basic"
    return epsilon, str(guarantee.method)


def verified_claims_sum(events: Sequence[Event], delta: Fraction) -> Fraction | None:
    """Verified mechanisms' own (eps, delta) claims, added exactly (basic
    composition, Dwork & Roth 2014, Thm 3.16) when their deltas sum to at
    most ``delta``, with the pure epsilon of every other event (delta 0)
    added too; None if some event is neither (review s27g). Review s29d: a
    `ptr_median` claim (1, 1e-6) and a Laplace of eps 0.5 in one branch were
    reported infinite at delta 1e-6 (every method's float delta fell just
    below the claim's), where basic composition gives (1.5, 1e-6)."""
    from fuzzpy.accounting.events import LocalReports, Resampled, Sample, ShuffledReports, Verified

    claims: list[tuple[Fraction, Fraction]] = []
    verified = False
    for event in events:
        if isinstance(event, Verified):
            if not isinstance(event.epsilon, int | Fraction) or not isinstance(event.delta, int | Fraction):
                return None
            claims.append((Fraction(event.epsilon), Fraction(event.delta)))
            verified = True
            continue
        if isinstance(event, LocalReports | ShuffledReports | Sample | Resampled):
            return None  # accounted under their own neighbour relation or sampling rate
        eps = pure_epsilon((event,))
        if eps is None:
            return None
        claims.append((eps, Fraction(0)))
    if not verified or sum((d for _, d in claims), Fraction(0)) > delta:
        return None
    return sum((e for e, _ in claims), Fraction(0))


def _shuffle_labelled(events: tuple[Event, ...], found: Guarantee) -> Guarantee:
    """Name FMT 2021 in the method of a figure that summarises shuffled
    reports at a delta (the composition method alone would hide it)."""
    from fuzzpy.accounting.events import ShuffledReports
    from fuzzpy.accounting.local import has_shuffled

    if found.delta <= 0 or not math.isfinite(found.epsilon) or found.method in ("pure", "exact-single") \
            or not has_shuffled(events):
        return found
    if len(events) == 1 and isinstance(events[0], ShuffledReports):
        return dataclasses.replace(found, method=SHUFFLE_LABEL)
    return dataclasses.replace(found, method=f"{SHUFFLE_LABEL}+{found.method}")


def guarantees(events: Iterable[Event], delta: float | Fraction) -> list[Guarantee]:
    """What every applicable method gives (exact and unproven ones included),
    tightest first; `Guarantee.proven` tells which `tightest` may use. An
    exact ``delta`` is read as in `tightest`."""
    exact, at = _exact_delta(delta)
    events = tuple(events)
    try:
        options = atoms_options(events, at)
    except NotSummarisable:
        return []
    found = [g for atoms in options if atoms
             for g in _run(atoms, at, list(_allowed(events, atoms, None) or METHODS), exact)]
    best: dict[str, Guarantee] = {}
    for g in found:  # per method, the better flattening
        if g.method not in best or g.epsilon < best[g.method].epsilon:
            best[g.method] = g
    return sorted(best.values(), key=lambda g: g.epsilon)


def pure_epsilon(events: Iterable[Event]) -> Fraction | None:
    """The exact pure epsilon of the events (basic composition of pure DP,
    which is tight for pure DP in general), or None if some event is not
    pure. Subsampled pure events are amplified, rounded up to a Fraction.
    A replace-one Poisson subsample of a pure body is charged the sup of its
    mixture pair's density ratio (`atoms.replace_pure_epsilon`), never above
    the group bound of the other flattening (the smaller of the two is kept)."""
    events = tuple(events)
    try:
        plain = exact_pure(atoms_of(events))
    except NotSummarisable:
        return None
    if plain is None or not _has_pairs(events):
        return plain
    try:
        paired = exact_pure(atoms_of(events, pair_atoms=True))
    except NotSummarisable:
        return plain
    return plain if paired is None else min(plain, paired)


def rho(events: Iterable[Event]) -> Fraction | None:
    """The events' total rho-zCDP (Bun & Steinke 2016), exact or rounded up
    (the tight pure and Laplace values, `zcdp.atom_rho`), or None when an
    event is only approximately DP (delta > 0).

    A Poisson-subsampled body (add/remove neighbours) is charged the smaller
    of its amplified summary's rho, when it has one, and the body's own rho:
    subsampling never costs more in zCDP. With S the sample of D and
    D' = D + {x}, M(S(D')) = (1 - q) M(S) + q M(S + {x}) for the same S, so
    for each alpha > 1, e^((alpha-1) D_alpha), an f-divergence, is jointly
    convex (van Erven & Harremoes 2014, Thm 13): averaging over S and the
    mixture gives e^((alpha-1) D_alpha) <= (1 - q) + q e^((alpha-1) alpha rho)
    <= e^((alpha-1) alpha rho), either way round (the un-amplified end of
    Steinke 2022, Sec. 6.5)."""
    total = Fraction(0)
    for event in events:
        found = _one_rho(event)
        if found is None:
            return None
        total += found
    return total


def zcdp_guarantee(events: Iterable[Event], delta: Fraction) -> tuple[Fraction, float] | None:
    """A release in rho-zCDP (a definition's declared measure, `privacy
    zcdp[delta]`): (rho, eps) with rho the events' total (`rho`: composition
    adds rho, Bun & Steinke 2016, Lemma 2.3) and eps its (eps, delta)
    conversion at ``delta`` (Canonne, Kamath & Steinke 2020, Cor. 13, each
    order's value rounded up; delta read rounded down, which only raises
    eps). None when an event has no zCDP bound. `check` reports and `run`
    charges exactly these numbers."""
    from fuzzpy.accounting.rounding import float_down

    total = rho(events)
    if total is None:
        return None
    if total == 0:
        return Fraction(0), 0.0
    return total, float(_module("zcdp").epsilon_cks(float_up(total), float_down(delta)))


def _one_rho(event: Event) -> Fraction | None:
    try:
        found, delta = _module("zcdp").total_rho(atoms_of((event,)))
        summarised = found if delta == 0 else None
    except NotSummarisable:
        summarised = None
    if isinstance(event, Group):
        return _group_rho(event, summarised)
    if not isinstance(event, Subsample):
        return summarised
    inner = rho(event.body)
    if inner is None:
        return summarised
    if event.replace:
        # Poisson under replace-one: (1-q) M(S) + q M(S + x) against (1-q) M(S) + q M(S + x'); the
        # same convexity bounds it by the pair M(S + x), M(S + x'), two add/remove steps of the body:
        # zCDP's group privacy at distance 2 is 2^2 rho (Bun & Steinke 2016, Prop. 27)
        inner *= 4
    # a fixed-size sample under replace-one (`either_way`): its body is restated at distance 2 already
    # (`accounting.neighbours`), and the pair is again a mixture of the same kind
    return inner if summarised is None else min(inner, summarised)


def _group_rho(event: Group, summarised: Fraction | None) -> Fraction | None:
    """A group of k steps (a person's k rows, a replacement's two steps, a
    chain of parameters read as a plain group): its body rho-zCDP for one
    step is k^2 rho-zCDP for inputs k steps apart (Bun & Steinke 2016,
    Prop. 1.9 / Prop. 27, group privacy), unamplified, for any body with a
    zCDP bound (a subsampled one too: issue 28, where a group over a
    subsampled or sampled Gaussian had none). k is read rounded up (a
    distance of at most k steps); the atoms' own figure when smaller."""
    inner = rho(event.body)
    if inner is None:
        return summarised
    steps = math.ceil(Fraction(event.size))
    grouped = steps * steps * inner
    return grouped if summarised is None else min(grouped, summarised)


def compose_releases(
    releases: Iterable[Sequence[Event]], delta: float, methods: Sequence[str] | None = None
) -> Guarantee:
    """The tightest guarantee for several releases on one dataset (composition
    across runs is composition of all their events)."""
    return tightest(combined_events(releases), delta, methods)


def combined_events(releases: Iterable[Sequence[Event]]) -> tuple[Event, ...]:
    return tuple(event for release in releases for event in release)


def atoms_summary(events: Iterable[Event]) -> Counter:
    """The flattened atoms (for display and tests)."""
    return atoms_of(events)
