"""Privacy costs as data: the mechanism events a definition performs.

The checker's privacy map turns a definition into a tuple of events per
database; the accountant (``fuzzpy.accounting``) turns events into the
tightest (epsilon, delta) guarantee it can prove. Numbers are exact
`Fraction`s where the language gives them exactly.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from fractions import Fraction

from fuzzpy.language.symbolic import Poly
from fuzzpy.support.records import frozen

Number = Fraction


@frozen
class Laplace:
    """Laplace noise of scale b on a query of L1 sensitivity s: pure (s/b)-DP
    (Dwork, McSherry, Nissim & Smith 2006)."""

    sensitivity: Number
    scale: Number
    # how far the query moves when one row of the charged bag is replaced by
    # another (the bag's size kept), where the checker knows it from the
    # query's form (`checker.noise.replace_sensitivity`: a count moves by 0
    # or 1, `sum[lo, hi]` by hi - lo); negative: not known (then 2 s)
    replaced: Number = Fraction(-1)

    @property
    def epsilon(self) -> Number:
        return self.sensitivity / self.scale


@frozen
class Gaussian:
    """Gaussian noise of std sigma on a query of L2 sensitivity s:
    rho = s^2 / (2 sigma^2) zCDP (Bun & Steinke 2016, Prop. 1.6)."""

    sensitivity: Number
    sigma: Number
    replaced: Number = Fraction(-1)  # as `Laplace.replaced`: the query's replace-one move, if known


@frozen
class Geometric:
    """Two-sided geometric (discrete Laplace) noise, P(k) proportional to
    exp(-|k| / b), on an integer query of L1 sensitivity s: pure (s/b)-DP
    (Ghosh, Roughgarden & Sundararajan 2009). Not a `Laplace`: for s = 1
    its privacy loss is +-(1/b) exactly, the randomized-response pair, whose
    profile is above the continuous Laplace's; the accountant charges it as
    a generic pure (s/b)-DP mechanism (`atoms.PureAtom`)."""

    sensitivity: Number
    scale: Number
    replaced: Number = Fraction(-1)  # as `Laplace.replaced`: the query's replace-one move, if known

    @property
    def epsilon(self) -> Number:
        return self.sensitivity / self.scale


@frozen
class Staircase:
    """Staircase noise (Geng & Viswanath, "The optimal noise-adding mechanism
    in differential privacy", IEEE Trans. IT 2016) with steps of width 1 and
    a density falling by e^-eps from one step to the next, on a query of
    sensitivity s: pure (eps * ceil(s))-DP. The density is a step function,
    so a shift of any size up to one step width may cross one step (costing
    the whole eps, not eps * s), and a shift of s crosses at most ceil(s)
    steps. Not a `Laplace`: the accountant charges it as a generic pure
    mechanism (`atoms.PureAtom`)."""

    sensitivity: Number
    step_epsilon: Number
    # as `Laplace.replaced`: the query's replace-one move, if known; a query
    # moving by r crosses at most ceil(r) steps, whatever moved it
    replaced: Number = Fraction(-1)

    @property
    def epsilon(self) -> Number:
        return Fraction(self.step_epsilon) * max(math.ceil(Fraction(self.sensitivity)), 0)


@frozen
class DiscreteGaussian:
    """Discrete Gaussian noise N_Z(0, sigma^2) on an integer query of L2
    sensitivity s: (s'^2 / (2 sigma^2))-zCDP with s' = ceil(s) the largest
    integer shift (Canonne, Kamath & Steinke 2020, Sec. 2.1: the zCDP of the
    discrete Gaussian; the exact (eps, delta) profile of one release, Thm 7). Not a `Gaussian`: the
    continuous Gaussian's privacy profile is not proven to bound it, so the
    accountant uses the exact discrete loss or the zCDP bound
    (`atoms.DiscreteGaussianAtom`)."""

    sensitivity: Number
    sigma: Number
    replaced: Number = Fraction(-1)  # as `Laplace.replaced`: the query's replace-one move, if known


@frozen
class ExpMech:
    """Exponential mechanism at eps with a score of sensitivity s: pure
    (eps * s)-DP as the language defines it (McSherry & Talwar 2007)."""

    epsilon: Number


@frozen
class Verified:
    """A mechanism proved (epsilon, delta)-DP by the coupling verifier."""

    name: str
    epsilon: Number
    delta: Number = Fraction(0)


@frozen
class Repeat:
    """`count` sequential (possibly adaptive) runs of ``body`` (`loop[k]`)."""

    count: int
    body: tuple[Event, ...]


@frozen
class Subsample:
    """``body`` run on a Poisson subsample of rate q (`subsample[q]`).

    ``either_way``: the step's pair of output distributions may face either
    way from one step to the next (a fixed-size sample under replace-one,
    `fuzzpy.accounting.neighbours`): each step is bounded by the subsampled
    pair of one direction or the other, so only methods that bound both
    orders of every step compose such steps (the accountant's
    `ORIENTATION_FREE`); a PLD composed per direction does not.

    ``direct``: the subsampled bag is the parameter the cost is charged to,
    unchanged (set by the checker, cleared by any re-expression of the cost,
    as for `Sample.direct`). ``replace``: the event is restated for
    replace-one neighbours of that bag (`fuzzpy.accounting.neighbours`): the
    sample holds the replaced row (old value on one side, new on the other)
    with probability q, and the accountant charges the replace-one pair of
    Poisson subsampling (`accounting.pld_replace`) where it has one, else
    group privacy over two add/remove steps."""

    rate: Number
    body: tuple[Event, ...]
    either_way: bool = False
    direct: bool = False
    replace: bool = False


@frozen
class Sample:
    """``body`` run on a fixed-size sample of ``size`` rows of a bag: drawn
    without replacement (`sample[m]`) or, ``replacement`` set, with
    replacement (`bootstrap[m]`). The sampling rate m/n depends on the
    bag's size n, which add/remove neighbours do not share, so the event
    records the size and is resolved for a neighbour relation (and a public
    row count) by `fuzzpy.accounting.neighbours.resolve` before any
    accounting. ``direct``: the sampled bag is the parameter the cost is
    charged to, unchanged (its size is the dataset's); any re-expression of
    the cost in another variable clears it (`checker.costs.scale_cost`)."""

    replacement: bool
    size: int
    direct: bool
    body: tuple[Event, ...]


@frozen
class Resampled:
    """``body`` run on ``draws`` rows drawn uniformly with replacement from a
    dataset of ``rows`` rows, its size public: `bootstrap[m]` of the dataset
    itself under replace-one, as `fuzzpy.accounting.neighbours.resolve`
    restates it (amplified: Balle, Barthe & Gaboardi 2018,
    `accounting.bootstrap`). The body's events are costs under add/remove
    of the sample, one replaced row two steps; ``per_replacement``: they
    are the body's costs for ONE replaced row of the sample already (a
    count or clamped sum at its replace-one move, anything else at distance
    2: `neighbours._coupled`), so j replaced rows are j such steps (review
    s30a: the factor 2 on top charged a count of the sample, which never
    moves, 17.65)."""

    draws: int
    rows: int
    body: tuple[Event, ...]
    per_replacement: bool = False


@frozen
class Group:
    """``body`` where the database is used with sensitivity k > 1: group
    privacy over k-fold neighbours (Dwork & Roth 2014, Thm 2.2).

    ``rows``: the k steps are k rows of one person added or removed
    together (`check --group k`, a dataset's rows per person), so the two
    datasets nest; a Poisson subsample of the dataset itself in the body
    then draws each of the k rows independently (`accounting.pld_group`).

    ``chained``: one dataset behind k parameters of one definition (`run`
    with `--data a=x --data b=x`), the body one ``Repeat(1, route)`` per
    parameter holding that parameter's events; the k steps of the chain
    move one parameter each, so step i costs route i's own guarantee (the
    accountant's `atoms.Flattener._chain`). Read as a plain group, the same
    events and the same bound as before."""

    size: Number
    body: tuple[Event, ...]
    rows: bool = False
    chained: bool = False


@frozen
class SymbolicPure:
    """A pure release whose epsilon is a polynomial over a definition's
    static parameters (`laplace[eps]` or `expmech[eps]` with `eps` a
    parameter), on a query of sensitivity s: (epsilon * s)-DP once the
    parameters have values (DFuzz, Gaboardi et al. POPL 2013). Only in the
    symbolic cost of a definition checked once for all its calls: every call
    is checked again at its own numbers, so the accountant never meets one
    (it refuses it, `atoms.Flattener`)."""

    sensitivity: Number
    epsilon: Poly


@frozen
class SymbolicApprox:
    """`gauss_dp[s, eps, delta]` with eps or delta a polynomial over a
    definition's static parameters, on a query whose L2 sensitivity is at
    most s: (epsilon, delta)-DP once the parameters have values, by the
    construction of its sigma (the analytic Gaussian calibration, Balle &
    Wang 2018, Thm 8, `calibrate.gauss_dp_sigma`). Like `SymbolicPure`, only
    in the symbolic cost of a definition checked once for all its calls:
    each call is checked again at its numbers, where the event is the
    `Gaussian` of the computed sigma; the accountant never meets one."""

    epsilon: Poly
    delta: Poly


@frozen
class RandomizedResponse:
    """k-ary randomized response at eps (`rr[eps]` for k = 2, `krr[eps, k]`):
    pure eps-DP for ANY two inputs, whatever their distance (Warner 1965;
    Wang, Blocki, Li & Jha 2017)."""

    epsilon: Number
    categories: int


@frozen
class LocalReports:
    """Every row of a bag randomised once by an eps-LDP randomiser and all the
    reports released (`local`): eps-DP in the central model for replace-one
    neighbours, the number of rows being public (Kasiviswanathan et al. 2011;
    parallel composition over rows). Under add/remove the number of reports
    gives the size away: an event list holding one is accounted under
    replace-one (`accounting.local.replace_one_view`)."""

    epsilon: Number


@frozen
class ShuffledReports:
    """`LocalReports` released in random order, at least ``reports`` of them
    (`shuffle[n]`): amplified by shuffling (Feldman, McMillan & Talwar 2021;
    `accounting.shuffle`), replace-one neighbours."""

    epsilon: Number
    reports: int



#: the kinds whose event is one noise draw calibrated to one query's
#: sensitivity, with the query's replace-one move where the checker knows it
#: (``replaced``, negative when not known)
ONE_QUERY = (Laplace, Gaussian, Geometric, Staircase, DiscreteGaussian)


def replaced_move(event: object) -> Number | None:
    """The query's move under one replaced row of its bag, if known."""
    move = getattr(event, "replaced", None) if isinstance(event, ONE_QUERY) else None
    return None if move is None or move < 0 else Fraction(move)


def at_move(event: Laplace | Gaussian | Geometric | Staircase | DiscreteGaussian, move: Number) -> Event:
    """The same draw on a query that moves by ``move`` (its replace-one form
    forgotten); no cost at all for a query that does not move."""
    if move == 0:
        return Repeat(0, ())
    return dataclasses.replace(event, sensitivity=Fraction(move), replaced=Fraction(-1))

Event = (
    Laplace | Gaussian | Geometric | Staircase | DiscreteGaussian | ExpMech | Verified | Repeat | Subsample | Sample | Resampled
    | Group | SymbolicPure | SymbolicApprox
    | RandomizedResponse | LocalReports | ShuffledReports
)


def anywhere(events: Iterable[object], found: Callable[[object], bool]) -> bool:
    """Whether an event among ``events``, or nested in the body of one (a
    repeat, subsample, group, ...), is ``found``."""
    for event in events:
        if found(event):
            return True
        body = getattr(event, "body", None)
        if body is not None and anywhere(body, found):
            return True
    return False


def _any_pair_split(events: tuple[Event, ...]) -> tuple[tuple[Event, ...], tuple[Event, ...]]:
    """``events`` as (the central randomized responses, at top level or in a
    loop, the rest); a loop's body is split the same way (composition adds
    the same atoms in any order)."""
    any_pair: list[Event] = []
    rest: list[Event] = []
    for event in events:
        if isinstance(event, RandomizedResponse):
            any_pair.append(event)
        elif isinstance(event, Repeat):
            inner, other = _any_pair_split(event.body)
            if inner:
                any_pair.append(Repeat(event.count, inner))
            if other:
                rest.append(Repeat(event.count, other))
        else:
            rest.append(event)
    return tuple(any_pair), tuple(rest)


def person_group(size: int | Fraction, events: tuple[Event, ...]) -> tuple[Event, ...]:
    """A release's events for a person holding up to ``size`` rows
    (`check --group k`, a dataset's rows per person): `Group(k, events,
    rows=True)`, except that a central randomized response (`rr`, `krr` on
    a bit or category computed from the data, the whole released value) is
    eps-DP for ANY two inputs, so for any group: it stays outside the group
    at eps (Warner 1965; Dwork & Roth 2014, Sec. 3.2: the ratio of any
    output's probabilities under any two inputs is at most e^eps). The
    rest composes with it (Dwork & Roth 2014, Thm 3.16), each part bounded
    for inputs k steps apart (issue 28: rr[1] at --group 3 was charged 3)."""
    if size <= 1 or not events:
        return events
    any_pair, rest = _any_pair_split(events)
    return any_pair + ((Group(Fraction(size), rest, rows=True),) if rest else ())
