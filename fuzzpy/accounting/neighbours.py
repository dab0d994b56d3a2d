"""Neighbour relations: the events of a release restated for the relation a
guarantee is given under, before any accounting.

The checker states every cost for **add/remove-one** neighbours (the bag
metric: a dataset and the same dataset with one row more or less; language
design section 4). A dataset may instead be protected under
**replace-one** neighbours (two datasets of the same public size n that
differ in one row's value; Steinke's chapter, Sec. 6.2). `resolve` turns a
definition's events into events whose add/remove accounting is a valid
bound for the relation asked for; the accountant, the checker's report and
the ledger then need no other notion of relation.

Rules (each sound for every event the checker produces):

* replace-one, any event `e` on the whole dataset: a replacement is a
  removal followed by an addition, two add/remove steps, so the
  group-privacy bound at distance 2 holds (Dwork & Roth 2014, Thm 2.2).
  Laplace, Gaussian and exponential-mechanism events are restated at twice
  their sensitivity, which is that bound exactly (the query moves by at most
  2s); under replace-one, a Laplace count costs 2 eps.
* replace-one, `choose[m]` (`Sample`, without replacement) of the dataset
  itself (``direct``) with a public row count n > m: charged as a Poisson
  subsample at rate m/n of the body at distance 2,
  ``Subsample(m/n, (Group(2, body),))``. Why: the sample of D includes the
  replaced row with probability q = m/n; conditioned on the other rows of
  the sample (B and one more row y), the outputs are P = (1-q) M(B+y) +
  q M(B+x) and Q = (1-q) M(B+y) + q M(B+x'), three batches pairwise at bag
  distance at most 2. By Balle, Barthe & Gaboardi (NeurIPS 2018, Thm 2,
  advanced joint convexity) H_{e^eps'}(P||Q) <= q H_{e^eps}(body at distance
  2) for e^eps' = 1 + q (e^eps - 1), the WOR-under-substitution bound of their
  Thm 10; this is exactly what the accountant's Poisson pair at rate q of
  the distance-2 body gives in its removal direction (Zhu, Dong & Wang 2022,
  Thm 9: the pair ((1-q) Q0 + q P0, Q0)), and its addition direction is
  also attained (swap x and x'; take y with x's value), so one step's
  figure is the tight one for a Gaussian body. Over many steps the
  direction may change from step to step (which row has a twin in the
  batch is up to the data and the adaptively chosen gradients), so the
  event is marked ``either_way``: the PLD composes every such step as the
  symmetrised pair of its removal pair (`pld_symmetric`: the least pair
  dominating the step in both orders, Zhu, Dong & Wang 2022, Thm 10 and
  Sec. 5), whose divergence is the removal pair's at every eps >= 0; the
  other methods used bound both orders of every step (pure, (eps, delta)
  composition, zCDP). Composing one direction for all steps is not valid
  here (docs/semantics.md, "Neighbour relations").
* A Laplace, Gaussian, geometric or discrete Gaussian event whose query's
  move under one replaced row of its bag is known (``replaced``, set by the
  checker for counts and clamped sums of the bag itself: docs/semantics.md;
  each of these is calibrated to its query's sensitivity alone, so the
  same draw on a query that moves by r is the event at sensitivity r) is
  charged that move
  where the rules above charge distance 2: on the dataset under
  replace-one, and in a `choose[m]` body, whose coupled samples differ by
  one replaced row (under replace-one) or by one replaced or one added row
  (under add/remove, a dataset of at most m rows being sampled whole): the
  move, or max(move, s). The query moves by at most that between any two
  of the three batches of the Thm 10 argument above, which is all it uses.
* `choose[m]` in every other case (add/remove neighbours, whose sizes
  differ so m/n would reveal n; a sample of a derived bag, whose size is not
  public; no row count given): not amplified. The samples of neighbours can
  be coupled to be equal or to differ by one replaced row (Balle et al.
  2018, Sec. 5), so the body at distance 2 bounds it: `Group(2, body)`.
  Under replace-one of a derived bag the bag itself may differ by two rows,
  hence a further factor 2.
* `bootstrap[m]` (with replacement): the added or replaced row can be drawn
  up to m times; coupling each draw of the neighbour with one of the
  dataset, the samples (both of m rows) differ by at most m replaced rows,
  2m add/remove steps: `Group(2m, body)`, not amplified; under replace-one
  the same for the dataset itself without a row count (K draws of the
  replaced row are K replacements), twice that again for a derived bag.
  Under replace-one of the dataset itself with a public row count n:
  `Resampled(m, n, body, per_replacement=True)`, the replaced row drawn
  j ~ Binomial(m, 1/n) times and the body's group profile at j
  replacements mixed (Balle, Barthe & Gaboardi 2018, Thm 10;
  `accounting.bootstrap`), for Gaussian, Laplace and pure bodies (others
  keep the group bound over m replacements). The body is restated for ONE
  replaced row of the sample as in `choose[m]` (a count or clamped sum at
  its replace-one move, anything else at distance 2), and j replaced rows
  are j such steps: the query moves by at most j times its move (triangle
  inequality), and group privacy over j steps covers the rest.
* Poisson `subsample[q]` of the dataset itself (``direct``) under
  replace-one: the sample holds the replaced row with probability q (its old
  value on one side, its new on the other) and is otherwise the same, so
  the outputs are (1-q) M(S) + q M(S + x) against (1-q) M(S) + q M(S + x'):
  `Subsample(q, body, replace=True)`, charged the replace-one pair of a
  Gaussian or Laplace body ((1-q) A0 + q A+ vs (1-q) A0 + q A-, proof in
  `pld_replace`; the REPLACE_ONE pair of dp-accounting) by the PLD, and
  group privacy over two steps otherwise (`atoms.Flattener`). Of a derived
  bag (a filter, a let, a lambda's parameter): group privacy over the two
  steps of the whole subsampled event, `Group(2, (Subsample(q, body),))`,
  sound whatever one replaced row does to the derived bag.
* Local and shuffled reports (`LocalReports`, `ShuffledReports`) are
  replace-one releases by nature: every row gives one report, so the number
  of reports is the number of rows, and adding or removing a row is seen
  with certainty. Under replace-one they are charged as they are (their
  epsilon is a replace-one guarantee: Kasiviswanathan et al. 2011; Feldman,
  McMillan & Talwar 2021); under add/remove no finite cost exists and
  `resolve` refuses them (`LocalNeedsReplaceOne`). Randomized response
  itself is private for ANY two inputs: unchanged under both relations.
* Group privacy over k rows (`check --group k`, a dataset's rows-per-person
  k) composes with the relation: a person's change is k steps of the
  relation in force (k rows added/removed, or k rows replaced), so the
  group bound is taken over k steps of the relation's own cost (Dwork &
  Roth 2014, Thm 2.2, which holds for any metric whose distance-k pairs are
  joined by k neighbour steps). A `Group` holding local reports is
  therefore restated body by body, `Group(k, resolve(body))` (k replacements
  of one report each: k eps); any other `Group(k, .)` under replace-one is
  the same bound as `Group(2, Group(k, .))`, 2k add/remove steps.
* Inside a subsample, group or sample body the events are costs in the
  sampled bag under add/remove (the checker's metric) and stay so; only
  `Repeat`s keep the relation of the events around them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction

from fuzzpy.accounting.events import (
    ONE_QUERY,
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
    at_move,
    replaced_move,
)
from fuzzpy.accounting.local import has_local
from fuzzpy.support.records import frozen

ADD_REMOVE = "add-remove-one"
REPLACE_ONE = "replace-one"
RELATIONS = (ADD_REMOVE, REPLACE_ONE)

#: the relation as a phrase after a figure ("(1, 1e-06)-DP in db, add/remove-one neighbours"):
#: what the Python API's `Cost`, `Charge`, `Release` and `Entry` say (issue 25)
PHRASES = {
    ADD_REMOVE: "add/remove-one neighbours",
    REPLACE_ONE: "replace-one neighbours",
}


def phrase(relation: str) -> str:
    """``relation`` ("add-remove-one", "replace-one") as said after a figure."""
    return PHRASES.get(relation, f"{relation} neighbours")


TEXTS = {
    ADD_REMOVE: "neighbours: datasets differing by adding or removing one row (the bag metric)",
    REPLACE_ONE: "neighbours: datasets of the same size differing by replacing one row (replace-one)",
}


@frozen
class Neighbours:
    """The relation a report's figures are for, with the dataset's public
    row count where the relation makes it public (replace-one)."""

    relation: str = ADD_REMOVE
    rows: int | None = None
    #: per bag parameter (`--rows db=N`): (name, rows) pairs, by name; ``rows`` is then None
    named: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"unknown neighbour relation {self.relation!r}; one of {', '.join(RELATIONS)}")
        counts = [self.rows] if self.rows is not None else [n for _, n in self.named]
        if counts and (min(counts) < 0 or self.relation != REPLACE_ONE):
            raise ValueError("a public row count is given only for replace-one neighbours (sizes are equal)")
        if self.rows is not None and self.named:
            raise ValueError("one row count for every bag parameter, or one per parameter, not both")

    @staticmethod
    def of(relation: str, rows: int | Mapping[str, int] | None) -> Neighbours:
        """The relation with ``rows``: one count (every bag parameter) or one per parameter name."""
        if rows is None or isinstance(rows, int):
            return Neighbours(relation, rows)
        return Neighbours(relation, None, tuple(sorted((str(k), int(v)) for k, v in rows.items())))

    def for_parameter(self, name: str | None) -> Neighbours:
        """The relation for the dataset passed as bag parameter ``name``: its
        own row count (None: a parameter given none is not amplified)."""
        if not self.named:
            return self
        return Neighbours(self.relation, dict(self.named).get(name) if name is not None else None)

    def text(self) -> str:
        """The line every report prints under its figures."""
        text = TEXTS[self.relation]
        if self.rows is not None:
            text += f"; n = {self.rows} rows, public"
        elif self.named:
            text += "; " + ", ".join(f"n = {n} rows in {name}" for name, n in self.named) + ", public"
        return text

    def to_json(self) -> dict[str, object]:
        return {"neighbours": self.relation, "rows": dict(self.named) if self.named else self.rows}

    def resolve(self, events: tuple[Event, ...]) -> tuple[Event, ...]:
        return resolve(events, self.relation, self.rows)


DEFAULT = Neighbours()

LOCAL_NEEDS_REPLACE_ONE = (
    "local and shuffled reports are private only for replace-one neighbours (one report per row: the "
    "number of reports gives a row added or removed away)"
)


class LocalNeedsReplaceOne(ValueError):
    """Local or shuffled reports asked for under add/remove-one neighbours:
    no finite cost exists (module docstring)."""


def relation_of_release(events: tuple[Event, ...], asked: str | None) -> str | None:
    """The relation a release is for when none is asked: replace-one if it
    releases local reports (the only relation they are private for), else
    ``asked`` (None: the dataset's own)."""
    if asked is None and has_local(events):
        return REPLACE_ONE
    return asked


def relation_of(events: tuple[Event, ...], asked: str) -> str:
    """The relation a figure for ``events`` is for when ``asked`` is in force:
    replace-one for a release of local or shuffled reports, whatever was
    asked (under add/remove the number of reports reveals n: no finite
    figure exists, so theirs is always a replace-one figure), else
    ``asked``. Every surface labels its figures with this (check, budget,
    run, ledger; issue 28)."""
    return REPLACE_ONE if has_local(events) else asked


def resolve(events: tuple[Event, ...], relation: str = ADD_REMOVE, rows: int | None = None) -> tuple[Event, ...]:
    """``events`` (costs for add/remove neighbours of the sampled bags, as
    the checker gives them) as events whose add/remove accounting bounds
    the cost for neighbours under ``relation`` of a dataset with ``rows``
    rows (None: unknown). No `Sample` event remains (module docstring)."""
    if relation not in RELATIONS:
        raise ValueError(f"unknown neighbour relation {relation!r}")
    if rows is not None and rows < 0:
        raise ValueError("a row count is not negative")
    return tuple(_top(e, relation, rows) for e in events)


def _top(event: Event, relation: str, rows: int | None) -> Event:
    if isinstance(event, Repeat):
        return Repeat(event.count, tuple(_top(e, relation, rows) for e in event.body))
    if isinstance(event, RandomizedResponse):
        return event  # private for any two inputs (Warner 1965): the same under both relations
    if has_local((event,)):
        if relation != REPLACE_ONE:
            raise LocalNeedsReplaceOne(LOCAL_NEEDS_REPLACE_ONE)
        if isinstance(event, LocalReports | ShuffledReports):
            return event  # already a replace-one guarantee (module docstring)
        if isinstance(event, Group):
            # k replacements, each costing the body's replace-one cost (Dwork & Roth 2014, Thm 2.2)
            return Group(event.size, tuple(_top(e, relation, rows) for e in event.body))
        # the checker puts local reports under no other event (FZ301); refuse rather than guess
        raise LocalNeedsReplaceOne("local reports under a sampler have no replace-one rule here")
    if relation == ADD_REMOVE:
        return _inner(event)
    if isinstance(event, Group) and event.chained:
        # one variable reached by several routes (`events.Group.chained`): a replaced
        # row replaces it in one route after the other, each step bounded by that
        # route's events restated for replace-one (as `run` restates each parameter's
        # events before it chains them); read as a plain group, two replace-one steps
        # of each route's body, the bound it also has (Dwork & Roth 2014, Thm 2.2)
        return Group(event.size, tuple(_top(e, relation, rows) for e in event.body), chained=True)
    if isinstance(event, Group) and event.rows:
        # a person's k rows (`check --group k`, a dataset's rows per person): k
        # replacements, each the relation's own step, so the body restated for
        # replace-one under the group (Dwork & Roth 2014, Thm 2.2 over the
        # replace-one metric); the same events `run` charges (resolve, then the group)
        return Group(event.size, tuple(_top(e, relation, rows) for e in event.body), rows=True)
    if isinstance(event, Sample) and event.direct and event.replacement:
        if rows is not None and rows > 0:
            # the replaced row drawn j ~ Binomial(m, 1/n) times, amplified (Balle, Barthe &
            # Gaboardi 2018, Thm 10; `accounting.bootstrap`)
            # the body for one replaced row of the sample, the query's own replace-one move where
            # known (as for `choose[m]`): j replaced rows are j such steps (review s30a)
            body = _coupled(_inner_all(event.body), replace_only=True)
            return Resampled(event.size, rows, body, per_replacement=True) if body else Repeat(1, ())
        # the replaced row drawn K <= m times: K replacements, 2K steps (module docstring)
        return Group(Fraction(2 * event.size), _inner_all(event.body))
    if isinstance(event, Sample) and event.direct and not event.replacement:
        # the samples differ by one replaced row (same sizes): the body at distance 2,
        # a Laplace count or clamped sum at its replace-one sensitivity (module docstring)
        body = _coupled(_inner_all(event.body), replace_only=True)
        if rows is not None and rows > event.size:
            # Balle, Barthe & Gaboardi 2018, Thm 10; Zhu, Dong & Wang 2022 (module docstring)
            return Subsample(Fraction(event.size, rows), body, either_way=True)
        return _one(body)  # the whole dataset, or n unknown
    if isinstance(event, Subsample) and event.direct and not event.either_way:
        # the replaced row is in the sample with probability q, x on one side and x'
        # on the other: the replace-one pair (`pld_replace`; Zhu, Dong & Wang 2022)
        rate, body = _nested_poisson(event)
        return Subsample(rate, _inner_all(body), replace=True)
    return _doubled(_inner(event))


def _nested_poisson(event: Subsample) -> tuple[Fraction, tuple[Event, ...]]:
    """A Poisson subsample whose whole body is a Poisson subsample of the
    sampled bag itself (``direct``), and so on down: each row is kept by both
    independent coins, with probability q1 q2, so the nest is one Poisson
    subsample at the product rate (Balle, Barthe & Gaboardi 2018, Sec. 3:
    Poisson subsampling is a product of independent Bernoulli(q) choices per
    row). Returns (rate, innermost body)."""
    rate, body = Fraction(event.rate), event.body
    while len(body) == 1 and isinstance(body[0], Subsample) and body[0].direct \
            and not body[0].either_way and not body[0].replace:
        rate *= Fraction(body[0].rate)
        body = body[0].body
    return rate, body


def _doubled(event: Event) -> Event:
    """An add/remove event at replace-one distance: two steps (Dwork & Roth
    2014, Thm 2.2), exact for the calibrated mechanisms (sensitivity 2s)."""
    move = replaced_move(event)
    if isinstance(event, ONE_QUERY) and move is not None:
        # the query's own replace-one sensitivity, at most 2s (module docstring)
        return at_move(event, move)
    if isinstance(event, Laplace):
        return Laplace(event.sensitivity * 2, event.scale)
    if isinstance(event, Gaussian):
        return Gaussian(event.sensitivity * 2, event.sigma)
    if isinstance(event, Geometric):
        return Geometric(event.sensitivity * 2, event.scale)
    if isinstance(event, Staircase):  # a replaced row moves the query by at most 2s: ceil(2s) steps
        return Staircase(event.sensitivity * 2, event.step_epsilon)
    if isinstance(event, DiscreteGaussian):
        return DiscreteGaussian(event.sensitivity * 2, event.sigma)
    if isinstance(event, ExpMech):
        return ExpMech(event.epsilon * 2)
    if isinstance(event, Repeat):
        return Repeat(event.count, tuple(_doubled(e) for e in event.body))
    return Group(Fraction(2), (event,))


def _coupled(events: tuple[Event, ...], replace_only: bool) -> tuple[Event, ...]:
    """The body of a sample without replacement on coupled samples that
    differ by one replaced row (``replace_only``) or by one replaced or one
    added row: a Laplace query whose replace-one sensitivity r is known
    (`events.Laplace.replaced`) at r, or max(r, s); every other event at
    distance 2 (group privacy), the whole body at once when no such Laplace
    is in it (module docstring)."""
    if not _has_replaced(events):
        return (Group(Fraction(2), events),)
    found: list[Event] = []
    for event in events:
        if isinstance(event, Repeat):
            found.append(Repeat(event.count, _coupled(event.body, replace_only)))
        elif isinstance(event, ONE_QUERY) and (move := replaced_move(event)) is not None:
            moved = move if replace_only else max(move, Fraction(event.sensitivity))
            if moved > 0:
                found.append(at_move(event, moved))
        else:
            found.append(Group(Fraction(2), (event,)))
    return tuple(found)


def _has_replaced(events: tuple[Event, ...]) -> bool:
    return any(
        replaced_move(e) is not None or isinstance(e, Repeat) and _has_replaced(e.body) for e in events
    )


def _one(events: tuple[Event, ...]) -> Event:
    """A tuple of events as one (a single run of them)."""
    return events[0] if len(events) == 1 else Repeat(1, events)


def _inner_all(events: tuple[Event, ...]) -> tuple[Event, ...]:
    return tuple(_inner(e) for e in events)


def unamplified(event: Event) -> Event:
    """An event for add/remove neighbours of its bag, without `Sample`: what
    any accounting of an unresolved event uses (module docstring)."""
    return _inner(event)


def _inner(event: Event) -> Event:
    """An event under add/remove neighbours of its bag, without `Sample`."""
    if isinstance(event, Sample):
        body = _inner_all(event.body)
        # the samples can be coupled to differ by one replaced row (without
        # replacement) or by up to m replaced rows (with): module docstring
        if event.replacement:
            return Group(Fraction(2 * event.size), body)
        # without: one row replaced, or (a dataset of at most m rows) one added
        return _one(_coupled(body, replace_only=False))
    if isinstance(event, Repeat):
        return Repeat(event.count, _inner_all(event.body))
    if isinstance(event, Subsample):  # keeps `direct` (and `either_way`, set only here)
        return dataclasses.replace(event, body=_inner_all(event.body))
    if isinstance(event, Group):  # keeps `rows`
        return dataclasses.replace(event, body=_inner_all(event.body))
    return event


def has_sample(events: tuple[Event, ...]) -> bool:
    """Whether a fixed-size sample is among the events (reports say how it
    was charged)."""
    for event in events:
        if isinstance(event, Sample):
            return True
        if isinstance(event, Repeat | Subsample | Group) and has_sample(event.body):
            return True
    return False
