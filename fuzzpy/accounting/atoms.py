"""A flat normal form of privacy events: atoms with multiplicities.

The checker hands the accountant a tree of events (`fuzzpy.accounting.events`):
repeats, subsamples and groups of Laplace, Gaussian, exponential-mechanism
and verified events. Every accounting method works on a simpler view: a
multiset of *atoms*, each a single mechanism with a known worst-case pair of
output distributions, run some number of times (adaptively).

Flattening rules (each cites the fact that makes it exact or sound):

* ``Repeat(k, body)`` multiplies multiplicities (k adaptive runs are k more
  atoms to compose).
* ``Group(k, body)``: an additive-noise mechanism on a query of sensitivity s,
  on inputs at distance k, is the same mechanism on a query of sensitivity
  k s (the sensitivity is a Lipschitz constant), so Laplace and Gaussian
  atoms scale exactly; a pure eps-DP atom is (k eps)-DP on k-neighbours, and
  an (eps, delta)-DP atom is (k eps, (1 + e^eps + ... + e^{(k-1) eps}) delta)-DP (group privacy,
  Dwork & Roth 2014, Thm 2.2; Vadhan 2017, Lemma 2.2), k rounded up. A
  subsampled atom needs an (eps, delta) summary first: either each copy of
  it on its own (the copies share the site's delta), or -- `whole_groups` --
  the group's summarised part as one composed profile, grown once. The
  accountant tries both. ``Repeat(n, Group(k, B))`` is ``Group(k, Repeat(n, B))``
  (every run uses the database with sensitivity k), so both nestings get both.
* Several Gaussians on one database are one Gaussian of the combined
  sensitivity (their joint output is a multivariate Gaussian mechanism whose
  privacy loss is N(mu^2/2, mu^2) with mu^2 the sum of the (s_i/sigma_i)^2;
  Dong, Roth & Su 2022, Cor. 3.3), so a Gaussian-only body under `subsample`
  is one subsampled Gaussian.
* ``Subsample(q, body)`` of a single atom is a subsampled atom; of a pure
  body, a subsampled pure atom of the summed epsilon; nested rates multiply
  (a Poisson subsample of a Poisson subsample is Poisson at q1 q2). Any other
  body is summarised by its own tightest (eps, delta) at a small share of the
  target delta and becomes a subsampled (eps, delta) atom.
* Pair atoms (only with ``pair_atoms``; the accountant also tries the
  flattening without them and keeps the smaller figure): a replace-one
  Poisson subsample of the dataset with a Gaussian or Laplace body is a
  `ReplaceSubsampledAtom` (`pld_replace`), and a person's group of k rows
  over Poisson subsamples of the dataset (Gaussian, discrete Gaussian,
  Laplace, geometric or any pure body; a 1-stable derived bag with a
  Gaussian or pure body) is made of `GroupSubsampledAtom`s (`pld_group`,
  `pld_atomic`). Only the PLD and pure composition
  take them (`accountant.REPLACE_AWARE`), in summaries too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from fractions import Fraction

from fuzzpy.accounting.events import (
    DiscreteGaussian,
    Event,
    ExpMech,
    Gaussian,
    Geometric,
    Group,
    Laplace,
    LocalReports,
    RandomizedResponse,
    Repeat,
    Resampled,
    Sample,
    ShuffledReports,
    Staircase,
    Subsample,
    Verified,
)
from fuzzpy.accounting.rounding import MP_PREC, float_down, float_up, fraction_up_mp, mp_of
from fuzzpy.support.records import frozen


@frozen
class GaussianAtom:
    """Gaussian noise with rho = s^2 / (2 sigma^2); privacy loss N(rho, 2 rho)."""

    rho: Fraction

    @property
    def mu(self) -> float:
        """The Gaussian-DP parameter s / sigma (Dong, Roth & Su 2022), rounded
        up (a larger mu is a less private Gaussian: every bound stays valid)."""
        return mu_up(self.rho)


@frozen
class LaplaceAtom:
    """Laplace noise of scale b on a query of L1 sensitivity s: epsilon = s / b."""

    epsilon: Fraction


@frozen
class PureAtom:
    """A generic pure epsilon-DP mechanism. ``bounded_range`` marks the
    exponential mechanism, which is also epsilon-bounded-range and hence
    epsilon^2/8-zCDP (Cesar & Rogers 2021)."""

    epsilon: Fraction
    bounded_range: bool = False


@frozen
class GeometricAtom:
    """One `geometric[b]` release of an integer query moving by at most a whole
    ``shift`` per row: (shift / b)-DP. Only the inner body of a
    `GroupSubsampledAtom` (`pld_atomic.geometric_group_pair`, the mixture on
    its PMF); elsewhere a geometric is a `PureAtom`."""

    shift: int
    scale: Fraction


@frozen
class ApproxAtom:
    """A generic (epsilon, delta)-DP mechanism with delta > 0."""

    epsilon: Fraction
    delta: Fraction


@frozen
class DiscreteGaussianAtom:
    """The discrete Gaussian N_Z(0, sigma^2) on an integer query that moves
    by at most ``shift`` (a whole number): rho = shift^2 / (2 sigma^2)-zCDP
    (Canonne, Kamath & Steinke 2020, Sec. 2.1), with the exact privacy loss
    of one release known (CKS Thm 7; `accounting.discrete_gaussian`). The
    continuous Gaussian's profile is not used for it (not proven to bound
    it): the PLD and the analytic-Gaussian methods do not apply."""

    shift: int
    sigma: Fraction

    @property
    def rho(self) -> Fraction:
        return Fraction(self.shift) ** 2 / (2 * self.sigma**2)


BaseAtom = GaussianAtom | LaplaceAtom | PureAtom | ApproxAtom | DiscreteGaussianAtom


@frozen
class SubsampledAtom:
    """``inner`` run on a Poisson subsample of rate q, 0 < q < 1.
    ``either_way``: its pair may face either way from step to step
    (`events.Subsample.either_way`; the PLD composes both directions of
    every such step, `pld.directions`)."""

    rate: Fraction
    inner: BaseAtom
    either_way: bool = False


@frozen
class ReplaceSubsampledAtom:
    """A Gaussian or Laplace ``inner`` run on a Poisson subsample of rate q,
    0 < q < 1, of a bag whose neighbours differ by one replaced row: the
    pair ((1-q) A0 + q A+, (1-q) A0 + q A-) (`pld_replace`, where the proof
    is). Only the methods in `accountant.REPLACE_AWARE` take it; a
    flattening without it (group privacy over two steps) is always tried
    beside it."""

    rate: Fraction
    inner: GaussianAtom | LaplaceAtom | DiscreteGaussianAtom  # a discrete Gaussian of any whole shift


@frozen
class ShuffledAtom:
    """``reports`` (at least) shuffled eps0-LDP reports, as FMT 2021's pair
    (`pld_atomic.shuffle_pair`), for the PLD to compose across rounds; pure
    eps0 for pure composition. Taken only by `accountant.REPLACE_AWARE`; the
    flattening with each shuffle's own (eps, delta) is always tried beside it."""

    epsilon0: Fraction
    reports: int


@frozen
class GroupSubsampledAtom:
    """An ``inner`` body run on a Poisson subsample of rate q, 0 < q < 1, of
    the dataset itself (or, for a Gaussian or pure body, of a 1-stable derived
    bag: `_derived_inner`), for a group of ``size`` rows of one person added
    or removed together: for a Gaussian the pair (sum_j Bin(k, q)(j) N(j mu),
    N(0)) and its reverse (`pld_group`, where the proof is), the same
    mixture for the other bodies (below). Taken, like
    `ReplaceSubsampledAtom`, only by `accountant.REPLACE_AWARE`."""

    rate: Fraction
    #: a Gaussian, or a discrete Gaussian on an integer query moving by at most
    #: its shift per row (`pld_atomic.dgauss_group_pair`, the same mixture on the PMF),
    #: one Laplace draw (`pld_group.LaplaceGroupTails`, the mixture of Laplace laws),
    #: one geometric (`pld_atomic.geometric_group_pair`, the mixture on its PMF),
    #: or any pure body at its epsilon (`pld_atomic.pure_group_pair`, the trade-off pair)
    inner: GaussianAtom | DiscreteGaussianAtom | LaplaceAtom | GeometricAtom | PureAtom
    size: int
    #: the person's k rows replaced (replace-one), not added or removed: the pair
    #: (sum_j Bin(k, q)(j) N(j mu), sum_j Bin(k, q)(j) N(-j mu)) (`pld_group.ReplaceGroupTails`)
    replace: bool = False


Atom = BaseAtom | SubsampledAtom | ReplaceSubsampledAtom | GroupSubsampledAtom | ShuffledAtom
Atoms = Counter  # Counter[Atom]: atom -> how many (adaptive) times it runs

# The epsilon a composite body of atoms proves at a given delta (`tightest`).
Summariser = Callable[[Counter, float], float]


def pure_total(atoms: Atoms) -> Fraction | None:
    """The summed epsilon of atoms that are all pure (basic composition of
    pure DP, Dwork & Roth 2014, Thm 3.16), else None."""
    total = Fraction(0)
    for atom, n in atoms.items():
        eps = pure_part(atom)
        if eps is None:
            return None
        total += n * eps
    return total


def pure_part(atom: Atom) -> Fraction | None:
    """The epsilon of a non-subsampled pure atom (exact), else None."""
    if isinstance(atom, LaplaceAtom | PureAtom):
        return atom.epsilon
    return None


class Flattener:
    """Turns an event tree into atoms. ``summarise(body, delta)`` gives the
    epsilon of a composite body at ``delta`` (the accountant's `tightest`);
    ``delta_share`` is the delta each composite body may use in total, over
    all the times it is repeated."""

    def __init__(
        self,
        summarise: Summariser | None = None,
        delta_share: float = 0.0,
        whole_groups: bool = False,
        pair_atoms: bool = False,
        chains: bool = False,
    ) -> None:
        self._summarise = summarise
        # a chained group (`events.Group.chained`) as the chain of its routes' own
        # (eps, delta) summaries (`_chain`); without, the group rule of its whole body
        self._chains = chains
        # a replace-one Poisson subsample (`events.Subsample.replace`) of a
        # Gaussian or Laplace body as its replace-one pair; without, and for
        # any other body, group privacy over its two add/remove steps
        self._pair_atoms = pair_atoms
        self._delta_share = delta_share
        self._multiplicity = 1  # product of the enclosing repeat counts
        # group privacy of the grouped body's summarised part as one composed
        # (eps, delta) profile (else of each of its atoms): both are valid,
        # the accountant tries both (`accountant.atoms_options`)
        self._whole_groups = whole_groups
        self.sites = 0  # composite bodies summarised (each gets one delta share)

    def flatten(self, events: Iterable[Event]) -> Atoms:
        atoms: Atoms = Counter()
        for event in events:
            atoms.update(self._event(event))
        return atoms

    # -- one event
    def _event(self, event: Event) -> Atoms:
        if isinstance(event, Laplace):
            return Counter({LaplaceAtom(Fraction(event.epsilon)): 1})
        if isinstance(event, Gaussian):
            rho = Fraction(event.sensitivity) ** 2 / (2 * Fraction(event.sigma) ** 2)
            return Counter({GaussianAtom(rho): 1}) if rho > 0 else Counter()
        if isinstance(event, ExpMech):
            return Counter({PureAtom(Fraction(event.epsilon), bounded_range=True): 1})
        if isinstance(event, Geometric | Staircase):  # pure: s/b (Ghosh et al. 2009), eps ceil(s) (Geng & Viswanath 2016)
            epsilon = Fraction(event.epsilon)
            return Counter({PureAtom(epsilon): 1}) if epsilon > 0 else Counter()
        if isinstance(event, DiscreteGaussian):  # integer shifts of at most ceil(s) (CKS 2020)
            shift = math.ceil(Fraction(event.sensitivity))
            return Counter({DiscreteGaussianAtom(shift, Fraction(event.sigma)): 1}) if shift > 0 else Counter()
        if isinstance(event, Verified):
            return Counter({_verified_atom(event): 1})
        if isinstance(event, RandomizedResponse | LocalReports):  # pure eps (`accounting.local`)
            return Counter({PureAtom(Fraction(event.epsilon)): 1}) if event.epsilon > 0 else Counter()
        if isinstance(event, ShuffledReports):
            if self._pair_atoms and event.reports >= 2 and event.epsilon > 0:
                # FMT 2021's pair itself, composed by the PLD (`pld_atomic.shuffle_pair`)
                return Counter({ShuffledAtom(Fraction(event.epsilon), int(event.reports)): 1})
            return Counter({self._shuffled(event): 1})
        if isinstance(event, Repeat):
            if event.count <= 0:
                return Counter()
            hoisted = self._hoisted(event)
            if hoisted is not None:
                return self._nested_group(hoisted.size, hoisted.body)
            self._multiplicity *= event.count
            try:
                body = self.flatten(event.body)
            finally:
                self._multiplicity //= event.count
            return Counter({atom: n * event.count for atom, n in body.items()})
        if isinstance(event, Group) and event.size == 1 and not event.rows:
            routed = _several_routes(event.body)
            if routed is not None:
                return routed
        if isinstance(event, Group) and event.chained and self._chains:
            chained = self._chain(event)
            if chained is not None:
                return chained
        if isinstance(event, Group):
            paired = self._group_pairs(event) if self._pair_atoms and event.rows else None
            if paired is not None:
                return paired
            return self._nested_group(Fraction(event.size), event.body)
        if isinstance(event, Subsample) and event.replace:
            return self._replace_subsample(event)
        if isinstance(event, Subsample):
            return self._subsample(Fraction(event.rate), event.body, event.either_way)
        if isinstance(event, Resampled):
            return self._resampled(event)
        if isinstance(event, Sample):  # not resolved for a relation: the add/remove bound, unamplified
            from fuzzpy.accounting.neighbours import unamplified

            return self._event(unamplified(event))
        raise TypeError(f"not a privacy event: {event!r}")

    def _nested_group(self, size: Fraction, body: tuple[Event, ...]) -> Atoms:
        """A group inside a group of size k is one group of the product: its
        input moves j per unit of the outer input, which moves k (sensitivities
        multiply, Reed & Pierce 2010). Charged on its own, beside the rest of
        the body (composition on the same pair of databases); grouping the
        inner group's (eps, delta) summary again would leave it no delta."""
        body = tuple(self._hoisted(e) or e if isinstance(e, Repeat) else e for e in body)
        # a replace-one subsample without a pair is two add/remove steps, Group(2, .):
        # inside this group it joins the inner groups, one group of the product (k
        # replacements are 2k steps, Dwork & Roth 2014, Thm 2.2), its summary fitted
        # to the share once. Grouping the distance-2 summary again grew its delta past
        # the share (review s30 F: a subsampled PTR median under replace-one and
        # --group 2 had no finite epsilon, where 4 steps give (1.976, 9.7e-6))
        body = tuple(_replace_group(e) if isinstance(e, Subsample) and e.replace
                     and self._replace_pair(e) is None else e for e in body)
        inner = [e for e in body if isinstance(e, Group)]
        rest = tuple(e for e in body if not isinstance(e, Group))
        atoms = self._group(size, rest) if rest else Counter()
        for group in inner:
            routed = _several_routes(group.body) if group.size == 1 and not group.rows else None
            if routed is not None:  # k steps of one pure eps mechanism: pure k eps (Dwork & Roth 2014, Thm 2.2)
                atoms.update({PureAtom(size * atom.epsilon): n for atom, n in routed.items()
                              if isinstance(atom, PureAtom)})
                continue
            atoms.update(self._event(Group(size * Fraction(group.size), group.body)))
        return atoms

    def _hoisted(self, event: Repeat) -> Group | None:
        """`loop[n]` of groups of one size k is the group of the loop: both say
        that every run uses the database with sensitivity k (the checker
        emits the first form, `checker.costs.scale_event`). Only when charging
        whole groups, where the second form is tighter."""
        if not self._whole_groups or not event.body:
            return None
        if not all(isinstance(e, Group) for e in event.body):
            return None
        sizes = {Fraction(e.size) for e in event.body}
        if len(sizes) != 1:
            return None
        inner = tuple(e for group in event.body for e in group.body)
        return Group(sizes.pop(), (Repeat(event.count, inner),))

    def _group(self, size: Fraction, body: tuple[Event, ...]) -> Atoms:
        shuffles = _shuffles_only(body)
        if shuffles is not None and self._whole_groups and self._summarise is not None and self._delta_share > 0:
            # the rounds composed as one profile (FMT 2021's pairs through the PLD,
            # `pld_atomic.shuffle_pair`), grown once over the k replacements (Dwork &
            # Roth 2014, Thm 2.2): a review found each round grown apart, 2.52
            # against 1.69 for two rounds and k = 2; the per-round form stays a try
            rounds: Atoms = Counter()
            for event, copies in shuffles:
                rounds[ShuffledAtom(Fraction(event.epsilon), event.reports)] += copies
            return Counter({self._group_summary(rounds, math.ceil(size), 1): 1})
        if shuffles is not None and not self._pair_atoms and self._summarise is not None and self._delta_share > 0:
            found: Atoms = Counter()
            for event, copies in shuffles:
                found[self._shuffled_group(event, math.ceil(size), copies)] += copies
            return found
        try:
            return self._group_atoms(size, self.flatten(body))
        except NotSummarisable:
            if self._summarise is None or self._delta_share <= 0:
                raise
        # the body's own summaries (a subsample of a composite body) took a whole
        # share each, more than the group's grown summary can absorb when the body's
        # epsilon is large (review s28: a replace-one subsample of a Gaussian and two
        # Laplace draws had no finite figure): flatten it again with smaller shares,
        # taken from its own (its deltas are inside the group's summary and grown)
        share = self._delta_share
        for factor in (Fraction(1, 100), Fraction(1, 10**4), Fraction(1, 10**6)):
            self._delta_share = float(Fraction(share) * factor / math.ceil(size))
            try:
                body_atoms = self.flatten(body)
            finally:
                self._delta_share = share
            try:
                return self._group_atoms(size, body_atoms)
            except NotSummarisable:
                continue
        raise NotSummarisable("the grouped body has no finite summary")

    def _group_atoms(self, size: Fraction, atoms: Atoms) -> Atoms:
        scaled: Atoms = Counter()
        summarised: Atoms = Counter()
        for atom, n in atoms.items():
            exact = _group_exact(atom, size)
            if exact is not None:
                scaled[exact] += n
            elif self._whole_groups:
                summarised[atom] += n
            else:  # each of the n copies gets 1/n of this site's delta share
                scaled[self._group_summary(Counter({atom: 1}), math.ceil(size), n)] += n
        if summarised:
            scaled[self._group_summary(summarised, math.ceil(size), 1)] += 1
        return scaled

    def _subsample(self, rate: Fraction, body: tuple[Event, ...], either_way: bool = False) -> Atoms:
        if rate <= 0:
            return Counter()
        inner = self.flatten(body)
        if rate >= 1 or not inner:
            return inner
        single = _single_atom(inner)
        if self._pair_atoms and not either_way and isinstance(single, DiscreteGaussianAtom):
            # its add/remove pair on the discrete Gaussian's PMF (`pld_atomic.dgauss_subsample_pair`),
            # a pair atom: only `accountant.REPLACE_AWARE` take it, the summary below is tried beside it
            return Counter({SubsampledAtom(rate, single): 1})
        if any(isinstance(atom, DiscreteGaussianAtom) for atom in inner):
            # the other methods have no subsampled discrete-Gaussian pair: the body's (eps, delta) summary
            return Counter({SubsampledAtom(rate, self._summary(inner), either_way): 1})
        if single is not None and not isinstance(single, ReplaceSubsampledAtom | GroupSubsampledAtom):
            return Counter({_subsampled(rate, single, either_way): 1})
        if all(isinstance(atom, GaussianAtom) for atom in inner):
            rho = sum((atom.rho * n for atom, n in inner.items()), Fraction(0))
            return Counter({SubsampledAtom(rate, GaussianAtom(rho), either_way): 1})
        if all(pure_part(atom) is not None for atom in inner):
            epsilon = sum((pure_part(atom) * n for atom, n in inner.items()), Fraction(0))
            return Counter({SubsampledAtom(rate, PureAtom(epsilon), either_way): 1})
        return Counter({SubsampledAtom(rate, self._summary(inner), either_way): 1})

    def _group_pairs(self, group: Group) -> Atoms | None:
        """A person's k rows (``Group.rows``) through a body of Laplace and
        Gaussian events and Poisson subsamples of the dataset itself with
        Gaussian bodies, in loops: the subsamples as `GroupSubsampledAtom`s,
        the others scaled exactly (module docstring); None for any other
        body, or one without such a subsample (the plain group rule)."""
        size = Fraction(group.size)
        if size.denominator != 1 or size < 2:
            return None
        found = _group_pair_atoms(group.body, int(size))
        if found is None or not any(isinstance(atom, GroupSubsampledAtom) for atom in found):
            return None
        return found

    def _replace_subsample(self, event: Subsample) -> Atoms:
        """A Poisson subsample under replace-one (`pld_replace`): its pair for
        a Gaussian (Gaussians merge, module docstring) or a single Laplace
        body; else, or without ``pair_atoms``, the subsample at add/remove
        distance 2 (group privacy, Dwork & Roth 2014, Thm 2.2)."""
        paired = self._replace_pair(event)
        if paired is not None:
            return paired
        return self._event(_replace_group(event))

    def _replace_pair(self, event: Subsample) -> Atoms | None:
        """The replace-one pair atoms of a Poisson subsample (`_replace_subsample`),
        or None when it has none here (then: group privacy over two steps)."""
        rate = Fraction(event.rate)
        if self._pair_atoms and 0 < rate < 1:
            inner = Flattener().flatten(event.body) if _plain_body(event.body) else Counter()
            single = _single_atom(inner)
            if inner and all(isinstance(atom, GaussianAtom) for atom in inner):
                rho = sum((atom.rho * n for atom, n in inner.items()), Fraction(0))
                return Counter({ReplaceSubsampledAtom(rate, GaussianAtom(rho)): 1})
            if isinstance(single, LaplaceAtom):
                return Counter({ReplaceSubsampledAtom(rate, single): 1})
            dgauss = _single_dgauss(event.body)
            if dgauss is not None:  # the mixture pair on the discrete Gaussian's PMF (`pld_atomic`)
                return Counter({ReplaceSubsampledAtom(rate, dgauss): 1})
            pure = _pure_body(event.body)
            if pure is not None:  # any pure body: the sup of the pair's ratio (`replace_pure_epsilon`)
                return Counter({PureAtom(_replace_pure(rate, pure)): 1})
        return None

    def _summary(self, body: Atoms) -> ApproxAtom:
        """A composite body as one (eps, delta)-DP atom (its tightest guarantee)."""
        if self._summarise is None or self._delta_share <= 0:
            raise NotSummarisable("a composite body needs a delta to be summarised")
        self.sites += 1
        # proved at a float delta no larger than the share, and charged that float
        delta = float_down(Fraction(self._delta_share) / self._multiplicity)
        epsilon = self._summarise(body, delta)
        if not math.isfinite(epsilon):
            raise NotSummarisable("the composite body has no finite epsilon")
        return ApproxAtom(_fraction_up(epsilon), Fraction(delta))

    def _resampled(self, event: Resampled) -> Atoms:
        """`bootstrap[m]` of n public rows under replace-one: the amplified
        profile of sampling with replacement (Balle, Barthe & Gaboardi 2018,
        `accounting.bootstrap`) at this site's share of delta, or its pure
        bound; a body it has no profile for keeps group privacy over 2m
        add/remove steps (`neighbours`)."""
        from fuzzpy.accounting.bootstrap import body_kind, bootstrap_epsilon

        steps = 1 if event.per_replacement else 2  # add/remove steps per replaced row (`events.Resampled`)
        unamplified = Group(Fraction(steps * event.draws), event.body)
        found = body_kind(event.body)
        if found is None:
            return self._event(unamplified)
        kind, unit = found
        pure = None if kind == "gaussian" else bootstrap_epsilon(kind, unit, event.draws, event.rows, 0.0, steps)
        if self._summarise is None or self._delta_share <= 0:
            if pure is None:  # no delta to summarise at (zCDP, pure views): the group bound, valid too
                return self._event(unamplified)
            return Counter({PureAtom(pure): 1}) if pure > 0 else Counter()
        self.sites += 1
        delta = float_down(Fraction(self._delta_share) / self._multiplicity)
        try:
            epsilon = bootstrap_epsilon(kind, unit, event.draws, event.rows, delta, steps)
        except ArithmeticError:
            epsilon = None
        if pure is not None and (epsilon is None or pure <= epsilon):
            return Counter({PureAtom(pure): 1}) if pure > 0 else Counter()
        if epsilon is None:
            return self._event(unamplified)
        return Counter({ApproxAtom(epsilon, Fraction(delta)): 1})

    def _shuffled(self, event: ShuffledReports) -> Atom:
        """Shuffled eps0-LDP reports: (eps, delta) at this site's share of delta
        (Feldman, McMillan & Talwar 2021, `accounting.shuffle`), or eps0 itself
        (LDP implies central eps0) when no delta is available or shuffling
        does not help."""
        epsilon0 = Fraction(event.epsilon)
        if self._summarise is None or self._delta_share <= 0:
            return PureAtom(epsilon0)
        from fuzzpy.accounting.shuffle import shuffle_epsilon

        self.sites += 1
        delta = float_down(Fraction(self._delta_share) / self._multiplicity)
        epsilon = shuffle_epsilon(epsilon0, event.reports, delta)
        if epsilon >= epsilon0 or delta <= 0:
            return PureAtom(epsilon0)
        return ApproxAtom(epsilon, Fraction(delta))

    def _shuffled_group(self, event: ShuffledReports, k: int, copies: int) -> Atom:
        """k replaced reports of a shuffle (a person's k rows): group privacy over
        k replace-one steps of FMT 2021's (eps, delta) (Dwork & Roth 2014, Thm 2.2;
        Vadhan 2017, Lemma 2.2: (k eps, k e^{(k-1) eps} delta)), the shuffle's
        delta chosen so that the grown delta fits this site's share (the same
        fixed point as `_group_summary`); k eps0 when that is smaller. Taking the
        amplified figure at the whole share and growing it afterwards overshoots
        the share, and the group fell back to k eps0."""
        from fuzzpy.accounting.shuffle import shuffle_epsilon

        epsilon0 = Fraction(event.epsilon)
        self.sites += 1
        share = Fraction(self._delta_share) / (self._multiplicity * copies)
        inner = share / k
        for _ in range(4):  # a smaller inner delta gives a larger eps: a few rounds settle it
            epsilon = shuffle_epsilon(epsilon0, event.reports, float_down(inner))
            inner = share / _fraction_up(_growth(k, float(epsilon)))
        proved_at = float_down(inner)
        epsilon = shuffle_epsilon(epsilon0, event.reports, proved_at)
        if epsilon >= epsilon0 or proved_at <= 0:
            return PureAtom(epsilon0 * k)
        return _approx_group(epsilon, Fraction(proved_at), k)

    def _chain(self, event: Group) -> Atoms | None:
        """One dataset behind k parameters (`events.Group.chained`): the
        datasets (x, .., x) and (x', .., x') are joined by k steps that each
        move ONE parameter, the others held fixed, and the checker's events
        of parameter i bound the definition in that parameter whatever the
        others are: step i is (eps_i, delta_i)-close. Unrolled as in group
        privacy (Dwork & Roth 2014, Thm 2.2; Vadhan 2017, Lemma 2.2, with a
        different guarantee per step): P[M(x..x) in S] <= e^{eps_1 + .. +
        eps_k} P[M(x'..x') in S] + sum_i e^{eps_1 + .. + eps_{i-1}} delta_i,
        and the same for the reverse order through the mirrored chain
        (x'.., x, ..). One inner delta for every route, chosen so that the
        grown sum fits this site's share (the fixed point of
        `_group_summary`), the routes in increasing order of epsilon (a
        small eps early grows the later deltas least). None for a pure
        body (`_several_routes` charges the sum) or a malformed one."""
        if self._summarise is None or self._delta_share <= 0:
            return None
        if not all(isinstance(route, Repeat) and route.count == 1 for route in event.body):
            return None
        if math.ceil(Fraction(event.size)) != len(event.body) or len(event.body) < 2:
            return None
        routes = [self.flatten(route.body) for route in event.body if isinstance(route, Repeat)]
        if pure_total(Counter({a: n for r in routes for a, n in r.items()})) is not None:
            return None
        self.sites += 1
        share = Fraction(self._delta_share) / self._multiplicity
        first = [self._summarise(r, float_down(share / len(routes))) for r in routes]
        if not all(math.isfinite(e) for e in first):
            raise NotSummarisable("a route of the chained group has no finite epsilon")
        ordered = [routes[i] for i in sorted(range(len(routes)), key=lambda i: first[i])]
        # the first step's delta: an equal inner delta for every step, or a share t of the
        # whole to the first (its e^{eps_1} grows every later delta), the rest equal
        options = [self._chain_steps(ordered, share, t) for t in (None, Fraction(1, 2), Fraction(9, 10))]
        found = [atom for atom in options if atom is not None]
        if not found:
            raise NotSummarisable("a route of the chained group has no finite epsilon")
        return Counter({min(found, key=lambda atom: atom.epsilon): 1})

    def _chain_steps(self, routes: list[Atoms], share: Fraction, first_share: Fraction | None) -> ApproxAtom | None:
        """The chain's atom (`_approx_chain`) with the first step at
        ``first_share`` of the share (None: the same inner delta as the
        others) and the later steps at one inner delta whose grown sum fits
        the rest (a fixed point, as `_group_summary`)."""
        assert self._summarise is not None
        head: list[Fraction] = []
        rest, tail = routes, share
        first_delta: Fraction | None = None
        if first_share is not None:
            first_delta = Fraction(float_down(share * first_share))
            epsilon = self._summarise(routes[0], float(first_delta))
            if not math.isfinite(epsilon):
                return None
            head, rest, tail = [_fraction_up(epsilon)], routes[1:], share - first_delta
        reach = float(sum(head, Fraction(0)))
        inner = tail / len(rest)
        for _ in range(4):  # a smaller inner delta gives larger epsilons: a few rounds settle it
            epsilons = [self._summarise(r, float_down(inner)) for r in rest]
            if not all(math.isfinite(e) for e in epsilons):
                return None
            inner = tail / _fraction_up(_chain_growth(epsilons, reach))
        proved_at = Fraction(float_down(inner))
        epsilons = [self._summarise(r, float(proved_at)) for r in rest]
        if not all(math.isfinite(e) for e in epsilons):
            return None
        steps = head + [_fraction_up(e) for e in epsilons]
        deltas = ([first_delta] if first_delta is not None else []) + [proved_at] * len(rest)
        return _approx_chain(steps, deltas)

    def _group_summary(self, body: Atoms, k: int, copies: int) -> ApproxAtom:
        """Group privacy of a body's (eps, delta) summary, (k eps, k e^{(k-1) eps} delta)
        (Dwork & Roth 2014, Thm 2.2; Vadhan 2017, Lemma 2.2), for one of ``copies``
        copies of it (the copies share the site's delta): the summary's delta
        is chosen so that the grown delta fits the share."""
        if self._summarise is None or self._delta_share <= 0:
            raise NotSummarisable("a grouped subsample needs a delta to be summarised")
        self.sites += 1
        share = Fraction(self._delta_share) / (self._multiplicity * copies)
        inner = share / k
        for _ in range(4):  # fixed point: a smaller inner delta gives a larger eps
            epsilon = self._summarise(body, float_down(inner))
            if not math.isfinite(epsilon):
                raise NotSummarisable("the grouped body has no finite epsilon")
            inner = share / _fraction_up(_growth(k, epsilon))  # any inner delta is valid
        # the summary is proved at a float delta, and charged that float. The
        # fixed point's own answer may overshoot the share (the other half of
        # delta, left to the composition, may absorb that; the charge is exact
        # either way and only the total decides); the whole-group flattening
        # instead insists on fitting, so that a large k still gets an answer:
        # the accountant keeps the better of the two
        proved_at = float_down(inner)
        if self._whole_groups:
            proved_at, epsilon = self._fitting(body, k, float(share), proved_at)
        else:
            epsilon = self._summarise(body, proved_at)
        return _approx_group(_fraction_up(epsilon), Fraction(proved_at), k)

    def _fitting(self, body: Atoms, k: int, share: float, start: float) -> tuple[float, float]:
        """An inner delta whose grown delta k e^{(k-1) eps} delta fits the share
        (with a margin: `_approx_group` computes the charge exactly), and its eps.
        The fixed point above may overshoot when eps grows fast as delta falls
        (large k): then down by factors of 100, and back up by bisection in
        log delta (the largest fitting delta found gives the smallest eps)."""

        def fits(delta: float) -> tuple[bool, float]:
            epsilon = self._summarise(body, delta)
            ok = math.isfinite(epsilon) and _growth(k, epsilon) * delta <= share * (1 - 1e-6)
            return ok, epsilon

        ok, epsilon = fits(start)
        if ok:
            return start, epsilon
        high, low = start, start
        for _ in range(40):
            low = low / 100
            if low < 1e-300:
                raise NotSummarisable("no inner delta fits the grouped body's share")
            ok, epsilon = fits(low)
            if ok:
                break
            high = low
        else:
            raise NotSummarisable("no inner delta fits the grouped body's share")
        for _ in range(6):
            middle = math.sqrt(low * high)
            middle_ok, middle_epsilon = fits(middle)
            if middle_ok:
                low, epsilon = middle, middle_epsilon
            else:
                high = middle
        return low, epsilon


def _growth(k: int, epsilon: float) -> float:
    """The group's delta factor 1 + e^eps + ... + e^{(k-1) eps} (`_approx_group`)
    as a float, at least its true value (capped: beyond it no inner delta is a
    double; infinite for a huge k, e.g. `check --group 1000000`: see `_fraction_up`)."""
    if epsilon <= 0:
        return float(k)
    top = min(k * epsilon, 700.0)
    return math.expm1(top) / math.expm1(epsilon) * (1 + 1e-12) if top < 700.0 else math.exp(700.0)


class NotSummarisable(ValueError):
    """A composite body could not be reduced to one (eps, delta) atom."""


def _several_routes(body: tuple[Event, ...]) -> Atoms | None:
    """A group of size 1 is what the checker emits for the pure events of one
    variable reached by several routes (`checker.costs.pure_routes`): one
    draw may read several of them, so they are not independent releases.
    Their pure epsilons add (Dwork & Roth 2014, Thm 2.2's argument), and the
    whole is charged as one eps-DP mechanism: within the worst case for its
    eps (Kairouz, Oh & Viswanath 2015), never the composed curve of the
    events as if independent. None when the body is not pure."""
    from fuzzpy.accounting.accountant import pure_epsilon

    epsilon = pure_epsilon(body)
    if epsilon is None:
        return None
    return Counter({PureAtom(Fraction(epsilon)): 1}) if epsilon > 0 else Counter()


def _verified_atom(event: Verified) -> Atom:
    if event.delta > 0:
        return ApproxAtom(Fraction(event.epsilon), Fraction(event.delta))
    return PureAtom(Fraction(event.epsilon))


def _group_pair_atoms(events: tuple[Event, ...], k: int) -> Atoms | None:
    atoms: Atoms = Counter()
    for event in events:
        if isinstance(event, Repeat):
            inner = _group_pair_atoms(event.body, k)
            if inner is None:
                return None
            atoms.update({atom: n * event.count for atom, n in inner.items()})
        elif isinstance(event, Subsample) and (event.direct or event.replace) and not event.either_way \
                and 0 < event.rate < 1 and _group_inner(event.body) is not None:
            body_atom = _group_inner(event.body)
            assert body_atom is not None
            atoms[GroupSubsampledAtom(Fraction(event.rate), body_atom, k, bool(event.replace))] += 1
        elif isinstance(event, Subsample) and not (event.direct or event.replace or event.either_way) \
                and 0 < event.rate < 1 and _derived_inner(event.body) is not None:
            # a sample of a 1-stable derived bag (`filter`, `map`, a `let`, `local`, a bucket of
            # `split` or `group`; a c-stable one arrives inside Group(c): the group rule): every
            # such transformation of the language adds a row of it for a row of the dataset
            # added, so the person's k rows are at most k added rows, nested, and the same
            # mixture bounds it (`_derived_inner`). Not `join[k]` (2k-stable: a row added may
            # push a kept row out, so its bags do not nest and no mixture is claimed for it)
            derived_atom = _derived_inner(event.body)
            assert derived_atom is not None
            atoms[GroupSubsampledAtom(Fraction(event.rate), derived_atom, k, False)] += 1
        else:  # any other event: its own atoms on k-fold neighbours, composed beside the pairs
            scaled_atoms = _group_exact_atoms(event, k)
            if scaled_atoms is None:
                return None
            atoms.update(scaled_atoms)
    return atoms


def _replace_group(event: Subsample) -> Group:
    """A replace-one Poisson subsample as group privacy over its two add/remove
    steps (the sample differs by one row removed and one added; Dwork & Roth
    2014, Thm 2.2): valid for any body."""
    return Group(Fraction(2), (Subsample(event.rate, event.body),))


def _derived_inner(body: tuple[Event, ...]) -> GaussianAtom | PureAtom | None:
    """What a person's group charges a Poisson subsample of a DERIVED bag by:
    Gaussians merged (`pld_group.GroupTails`), or any pure body at its
    basic-composition epsilon (the trade-off pair, `pld_atomic.pure_group_pair`);
    None for anything else (the group rule). Neither exact 1-D pair of one
    Laplace or geometric draw is used here: the checker charges parallel
    buckets (`split`, `group`) as one event, and the person's rows may fall in
    several of them, which the two pairs do not cover; the Gaussian's does
    (the buckets' shifts of L2 norms j_i s make a shift of norm at most
    (j_1 + j_2 + ...) s, Neyman-Pearson's bound then that of the 1-D shift), and
    the trade-off pair uses only that the joint release is (j eps)-DP for j
    sampled rows, wherever they fall (basic composition)."""
    if _plain_body(body):
        inner = Flattener().flatten(body)
        if inner and all(isinstance(atom, GaussianAtom) for atom in inner):
            return GaussianAtom(sum((atom.rho * n for atom, n in inner.items()), Fraction(0)))
    pure = _pure_body(body)
    return PureAtom(pure) if pure is not None else None


def _group_inner(body: tuple[Event, ...]) -> GaussianAtom | DiscreteGaussianAtom | LaplaceAtom | GeometricAtom | PureAtom | None:
    """What a person's group charges a Poisson subsample's body by: a discrete
    Gaussian's PMF pair (`pld_atomic.dgauss_group_pair`), one geometric's
    (`pld_atomic.geometric_group_pair`), Gaussians merged
    into one (`pld_group.GroupTails`), one Laplace draw (the mixture of
    Laplace laws, `pld_group.LaplaceGroupTails`), any other pure body at its
    basic-composition epsilon (the trade-off pair, `pld_atomic.pure_group_pair`);
    None for anything else (the group rule)."""
    dgauss = _single_dgauss(body)
    if dgauss is not None:
        return dgauss
    if len(body) == 1 and isinstance(body[0], Geometric) and Fraction(body[0].sensitivity).denominator == 1 \
            and body[0].sensitivity >= 1 and body[0].scale > 0:
        # its mixture on the PMF (`pld_atomic.geometric_group_pair`)
        return GeometricAtom(int(body[0].sensitivity), Fraction(body[0].scale))
    if _plain_body(body):
        inner = Flattener().flatten(body)
        single = _single_atom(inner)
        if isinstance(single, LaplaceAtom) and single.epsilon > 0:
            return single
        if inner and all(isinstance(atom, GaussianAtom) for atom in inner):
            return GaussianAtom(sum((atom.rho * n for atom, n in inner.items()), Fraction(0)))
    pure = _pure_body(body)
    return PureAtom(pure) if pure is not None else None


def _group_exact_atoms(event: Event, k: int) -> Atoms | None:
    """An event's atoms each on k-fold neighbours by its exact group rule
    (`_group_exact`: Laplace k eps, Gaussian k^2 rho, pure k eps, (eps, delta)
    by Dwork & Roth 2014, Thm 2.2), composed with the rest of the group's
    body on the same pair of datasets; None when one needs a summary."""
    try:
        flat = Flattener().flatten((event,))
    except (NotSummarisable, TypeError):
        return None
    atoms: Atoms = Counter()
    for atom, n in flat.items():
        scaled = _group_exact(atom, Fraction(k))
        if scaled is None:
            return None
        atoms[scaled] += n
    return atoms


def _shuffles_only(events: tuple[Event, ...]) -> list[tuple[ShuffledReports, int]] | None:
    """The body's shuffles with their repeat counts, when it holds nothing
    else (shuffles, loops of shuffles); else None."""
    found: list[tuple[ShuffledReports, int]] = []
    for event in events:
        if isinstance(event, ShuffledReports):
            found.append((event, 1))
        elif isinstance(event, Repeat) and event.count > 0:
            inner = _shuffles_only(event.body)
            if inner is None:
                return None
            found += [(e, n * event.count) for e, n in inner]
        else:
            return None
    return found or None


def _single_dgauss(events: tuple[Event, ...]) -> DiscreteGaussianAtom | None:
    """The body's one discrete Gaussian release on an integer query moving by
    at most a whole s (a count, `dgauss[sigma] (size b)`: s = 1), else None:
    the replace-one pair of `pld_atomic.dgauss_replace_pair` with shifts +-s
    (its proof covers every shift |a| <= s, `pld_atomic` SHIFT_DOMINATION)."""
    if len(events) != 1 or not isinstance(events[0], DiscreteGaussian):
        return None
    atoms = Flattener().flatten(events)
    single = _single_atom(atoms)
    return single if isinstance(single, DiscreteGaussianAtom) and single.shift >= 1 else None


def _plain_body(events: tuple[Event, ...]) -> bool:
    """Whether a body is only Laplace, Gaussian and loops of them (flattened
    without summaries or groups)."""
    return all(
        isinstance(e, Laplace | Gaussian) or isinstance(e, Repeat) and _plain_body(e.body) for e in events
    )


def replace_pure_epsilon(atom: ReplaceSubsampledAtom) -> Fraction | None:
    """A Laplace (pure eps) body under replace-one Poisson subsampling:
    log((1 - q + q e^eps) / (1 - q + q e^-eps)), rounded up; never above
    2 eps. The pair is Balle, Barthe & Gaboardi 2018 (Sec. 5, Poisson
    subsampling under substitution): P = (1-q) A0 + q A1, Q = (1-q) A0 + q A2
    with A0 = M(S), A1 = M(S + x), A2 = M(S + x').

    Derivation of the sup of dP/dQ (ours). Write r1 = dA1/dA0 and
    r2 = dA2/dA0; the body is eps-DP under add/remove, so both lie in
    [e^-eps, e^eps] almost everywhere, and dP/dQ = ((1-q) + q r1) / ((1-q) +
    q r2), increasing in r1 and decreasing in r2, hence at most
    g = ((1-q) + q e^eps) / ((1-q) + q e^-eps) everywhere: a pure bound.
    It is attained for the Laplace body itself: with A0 = Lap(0, b),
    A1 = Lap(s, b), A2 = Lap(-s, b) (a query that moves by +s and -s with
    x and x'; eps = s / b) at every t >= s, r1 = e^{s/b} and r2 = e^{-s/b}
    (each density a multiple of e^{-t/b} there), so the ratio equals g on a
    half-line of positive mass and no smaller pure epsilon holds. Against
    the group bound 2 log(1 + q (e^eps - 1)): g <= (1 + q (e^eps - 1))^2
    since (1 + q (a - 1)) (1 - q (1 - 1/a)) = 1 + q (1 - q) (a - 1)^2 / a >= 1
    (a = e^eps), so this is never the looser of the two."""
    if not isinstance(atom.inner, LaplaceAtom):
        return None
    return _replace_pure(atom.rate, atom.inner.epsilon)


def _replace_pure(rate: Fraction, epsilon: Fraction) -> Fraction:
    """log((1 - q + q e^eps) / (1 - q + q e^-eps)) rounded up, at most 2 eps:
    the derivation above uses only that the body is eps-DP under add/remove
    of the sampled bag, so it holds for every pure body (two Laplace draws, a
    geometric, an exponential mechanism: a review found them charged the
    group bound, 0.597 against 0.380)."""
    import mpmath
    from mpmath import mp

    with mp.workprec(MP_PREC):
        q, eps = mp_of(rate), mp_of(epsilon)
        value = mpmath.log1p(q * mpmath.expm1(eps)) - mpmath.log1p(q * mpmath.expm1(-eps))
        return min(2 * epsilon, fraction_up_mp(value))


def _pure_body(events: tuple[Event, ...]) -> Fraction | None:
    """The pure epsilon of a body under add/remove of its bag by basic
    composition (Dwork & Roth 2014, Thm 3.16), when every event in it is a
    pure mechanism (no sampler, group, local report or delta), else None."""
    try:
        total = pure_total(Flattener().flatten(events))
    except NotSummarisable:
        return None
    return total if total is not None and total > 0 else None


def _single_atom(atoms: Atoms) -> Atom | None:
    if len(atoms) == 1:
        ((atom, n),) = atoms.items()
        if n == 1:
            return atom
    return None


def _subsampled(rate: Fraction, atom: Atom, either_way: bool = False) -> SubsampledAtom:
    if isinstance(atom, SubsampledAtom):  # Poisson of Poisson is Poisson(q1 q2)
        return SubsampledAtom(rate * atom.rate, atom.inner, either_way or atom.either_way)
    return SubsampledAtom(rate, atom, either_way)


def _group_exact(atom: Atom, size: Fraction) -> Atom | None:
    """The atom on size-fold neighbours (module docstring, group rule), or None
    for a subsampled atom whose group privacy needs an (eps, delta) summary."""
    if isinstance(atom, GaussianAtom):
        return GaussianAtom(atom.rho * size * size)
    if isinstance(atom, LaplaceAtom):
        return LaplaceAtom(atom.epsilon * size)
    whole = math.ceil(size)
    if isinstance(atom, DiscreteGaussianAtom):  # an integer query moving by k steps of at most s
        return DiscreteGaussianAtom(atom.shift * whole, atom.sigma)
    if isinstance(atom, PureAtom):
        return PureAtom(atom.epsilon * whole, atom.bounded_range)
    if isinstance(atom, ApproxAtom):
        return _approx_group(atom.epsilon, atom.delta, whole)
    if isinstance(atom, ReplaceSubsampledAtom):  # k steps of its replace-one pure bound, or a summary
        replaced = replace_pure_epsilon(atom)
        return None if replaced is None else PureAtom(replaced * whole)
    if isinstance(atom, GroupSubsampledAtom):
        return None
    if isinstance(atom, ShuffledAtom):  # k replaced reports, each eps0-LDP: k eps0
        return PureAtom(atom.epsilon0 * whole)
    epsilon = subsampled_pure_epsilon(atom)
    if epsilon is not None:
        return PureAtom(epsilon * whole)
    return None


def _approx_group(epsilon: Fraction, delta: Fraction, k: int) -> ApproxAtom:
    # (k eps, (1 + e^eps + ... + e^{(k-1) eps}) delta): k steps of the chain
    # P[M(x0) in S] <= e^eps P[M(x1) in S] + delta, unrolled (the proof of Vadhan
    # 2017, Lemma 2.2, whose k e^{(k-1) eps} delta bounds this sum; a review found
    # the looser form leaving a 2-sensitive PTR median unbounded at 1e-5); delta
    # rounded up (in mpmath: e^{k eps} leaves the float range from k eps = 710)
    import mpmath
    from mpmath import mp

    with mp.workprec(MP_PREC):
        e = mp_of(epsilon)
        factor = mpmath.mpf(k) if e == 0 else mpmath.expm1(k * e) / mpmath.expm1(e)
        grown = factor * mp_of(delta)
        bounded = Fraction(1) if grown >= 1 else fraction_up_mp(grown)
    return ApproxAtom(epsilon * k, min(bounded, Fraction(1)))


def _chain_growth(epsilons: list[float], reach: float = 0.0) -> float:
    """e^{r} + e^{r + eps_1} + e^{r + eps_1 + eps_2} + ... (one term per
    step, r = ``reach`` the epsilons of the steps before) as a float, at
    least its true value (capped as `_growth`)."""
    total = 0.0
    for eps in [0.0] + epsilons[:-1]:
        reach += max(eps, 0.0)
        total += math.exp(min(reach, 700.0))
    return total * (1 + 1e-12)


def _approx_chain(epsilons: list[Fraction], deltas: list[Fraction]) -> ApproxAtom:
    """(sum eps_i, sum_i e^{eps_1 + .. + eps_{i-1}} delta_i) for a chain of
    steps each (eps_i, delta_i)-close (`Flattener._chain`); delta rounded up
    in mpmath, as `_approx_group`."""
    import mpmath
    from mpmath import mp

    with mp.workprec(MP_PREC):
        grown, reach = mpmath.mpf(0), mpmath.mpf(0)
        for eps, delta in zip(epsilons, deltas, strict=True):
            grown += mpmath.exp(reach) * mp_of(delta)
            reach += mp_of(eps)
        grown *= 1 + mpmath.mpf(2) ** (8 - MP_PREC)  # the roundings of the sum, each a relative 2^-MP_PREC
        bounded = Fraction(1) if grown >= 1 else fraction_up_mp(grown)
    return ApproxAtom(sum(epsilons, Fraction(0)), min(bounded, Fraction(1)))


def _fraction_up(x: float) -> Fraction:
    """An exact Fraction at least x (x is a float computed with ~1 ulp error);
    NotSummarisable when no finite one is (an epsilon or a group's growth
    beyond the doubles: the cost is infinite, not an accountant failure)."""
    above = math.nextafter(math.nextafter(x, math.inf), math.inf)
    if not math.isfinite(above):
        raise NotSummarisable("the bound is beyond the largest double")
    return Fraction(above)


def mu_up(rho: Fraction) -> float:
    """sqrt(2 rho) rounded up: the float 2 rho rounded up, then sqrt (correctly
    rounded) moved one float up."""
    return math.nextafter(math.sqrt(float_up(2 * rho)), math.inf)


def amplified_epsilon_up(rate: Fraction, epsilon: Fraction) -> Fraction:
    """log(1 + q (e^eps - 1)) for Poisson subsampling at rate q of an eps-DP
    mechanism (Balle, Barthe & Gaboardi 2018), as a Fraction rounded up, never
    above eps. In mpmath from the exact inputs: in floats the rounding of q
    and eps is amplified by e^eps / (e^eps - 1) and can exceed a few ulps of
    a small result."""
    if rate >= 1:
        return epsilon
    import mpmath
    from mpmath import mp

    with mp.workprec(MP_PREC):
        value = mpmath.log1p(mp_of(rate) * mpmath.expm1(mp_of(epsilon)))
        return min(epsilon, fraction_up_mp(value))


def subsampled_pure_epsilon(atom: SubsampledAtom) -> Fraction | None:
    """Amplification by Poisson subsampling of a pure eps-DP mechanism:
    log(1 + q (e^eps - 1)) (Balle, Barthe & Gaboardi 2018, Poisson subsampling), as an exact
    Fraction rounded up, never above eps."""
    if not isinstance(atom.inner, LaplaceAtom | PureAtom):
        return None
    return amplified_epsilon_up(atom.rate, atom.inner.epsilon)
