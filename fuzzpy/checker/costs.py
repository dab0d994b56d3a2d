"""The privacy map: what a distribution-valued expression costs in each variable.

Duet's split (Near et al., OOPSLA 2019): the sensitivity map gives, for every
variable, how far an expression's *value* moves; the privacy map gives, for an
expression of type `fuzzy A`, what *releasing* it costs in each variable. Here a
cost is not a single number but the sequence of mechanism events performed
(`fuzzpy.accounting.events`), so that the accountant can compose them as
tightly as it can prove; or it is infinite, with the construct to blame.

Event sequences are concatenated lazily (a binary tree flattened once), so a
long chain of `sample`s is linear to check.
"""

from __future__ import annotations

import dataclasses
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
    Repeat,
    Sample,
    Staircase,
    Subsample,
    SymbolicApprox,
    SymbolicPure,
    Verified,
    replaced_move,
)
from fuzzpy.accounting.local import has_local
from fuzzpy.language import types as T
from fuzzpy.language.diagnostics import Label
from fuzzpy.language.sensitivity import ONE, Sens
from fuzzpy.language.source import Span
from fuzzpy.language.symbolic import Poly
from fuzzpy.support.records import frozen


@frozen
class Blame:
    """Why a cost is infinite: the construct, and a diagnostic code for it."""

    code: str
    span: Span
    message: str
    hint: str | None = None
    labels: tuple[Label, ...] = ()


class _Cat:
    __slots__ = ("left", "right")

    def __init__(self, left: EventTree, right: EventTree) -> None:
        self.left = left
        self.right = right


EventTree = tuple[Event, ...] | _Cat


class Cost:
    """A finite sequence of events, or infinity with its `Blame`.

    ``draw``: set only on a cost that is exactly ONE noise draw's event
    (`Laplace`, `Gaussian`, `Geometric`, `DiscreteGaussian`), to an identity
    shared by that draw's costs in every variable its query reads: two
    routes to one variable carrying the same ``draw`` are routes into the
    same draw (`merge_draw`). Every rule that builds a new cost (composition,
    a sampler, a loop) drops it; a call of a definition renews it
    (`retag`), since the definition's costs are shared by all its calls.

    ``parts``: set only on a composition of DIFFERENT draws (`then`,
    `compose_draws`), to those draws' single-draw costs: the variable's whole
    cost is exactly these independent draws, each reading it at its event's
    sensitivity, so a further route into them merges or composes part by
    part instead of by group privacy. Rules that build other costs drop it."""

    __slots__ = ("tree", "blame", "draw", "parts")

    def __init__(self, tree: EventTree = (), blame: Blame | None = None, draw: object | None = None,
                 parts: tuple[Cost, ...] | None = None) -> None:
        self.tree = tree
        self.blame = blame
        self.draw = draw
        self.parts = parts

    @property
    def is_infinite(self) -> bool:
        return self.blame is not None

    def events(self) -> tuple[Event, ...]:
        return flatten(self.tree)

    def __repr__(self) -> str:
        return "Cost(inf)" if self.blame else f"Cost({self.events()})"


CostCtx = dict[str, Cost]


def infinite(blame: Blame) -> Cost:
    return Cost((), blame)


def flatten(tree: EventTree) -> tuple[Event, ...]:
    if isinstance(tree, tuple):
        return tree
    out: list[Event] = []
    stack: list[EventTree] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            out.extend(node)
        else:
            stack.append(node.right)
            stack.append(node.left)
    return tuple(out)


def then(first: Cost | None, second: Cost | None) -> Cost:
    """Sequential composition (basic composition: the events concatenate)."""
    if first is None:
        assert second is not None
        return second
    if second is None:
        return first
    if first.blame is not None:
        return first
    if second.blame is not None:
        return second
    if first.tree == ():
        return second
    if second.tree == ():
        return first
    return Cost(_Cat(first.tree, second.tree), parts=_disjoint_parts(draw_parts(first), draw_parts(second)))


def linear_epsilon(events: tuple[Event, ...], integral: bool = False) -> Fraction | None:
    """The pure epsilon a function value's type may carry per unit of its
    argument's distance (Reed & Pierce 2010: cost eps * d at distance d), or
    None (an infinite sensitivity). Only Laplace, geometric and exponential-
    mechanism draws (and repetitions of them) cost eps * d at every distance
    d: their privacy loss is their query's shift over the scale (Dwork & Roth
    2014, Thm 3.6; McSherry & Talwar 2007). Every other pure event costs its
    whole epsilon at any distance up to 1 and is group-charged beyond
    (`scale_event`: eps * ceil(d)): the staircase (Geng & Viswanath 2016),
    randomized response (`rr`, `krr`: eps for ANY two inputs, Warner 1965), a
    verified mechanism (proved for `abs(dist(x)) <= 1`), a subsample, a
    group. No epsilon per unit bounds such a step at distances below 1
    (reviews: `(fun x -> staircase[1] x)` at a 1/2-sensitive value charged
    1/2, `(fun v -> rr[1] (v > 3))` at `size db / 1000` charged 0.001, where
    the truth is 1 each). ``integral``: the argument's metric takes only
    whole distances (a bag, an int, a bool, ...: `integral_metric`); a move
    there is 0 or at least 1 and at most s * d, so eps * s * d bounds eps *
    ceil(move) and the epsilon stays linear."""
    if not integral and not _linear(events):
        return None
    return pure_epsilon(events)


#: the pure events whose cost is eps times the shift of their query
_LINEAR = (Laplace, Geometric, ExpMech, SymbolicPure)


def _linear(events: tuple[Event, ...]) -> bool:
    for event in events:
        if isinstance(event, Repeat):
            if not _linear(event.body):
                return False
        elif not isinstance(event, _LINEAR):
            return False
    return True


def integral_metric(ty: T.Type) -> bool:
    """Whether every distance in ``ty``'s metric is a whole number (0, 1, 2,
    ... or infinity): bags (rows), ints, bools, strings, unit, and tuples,
    records, sums and lists of those. Not `num`, vectors (an L2 norm of
    whole moves is not whole), functions or distributions."""
    if isinstance(ty, (T.TBag, T.TInt, T.TBool, T.TString, T.TUnit)):
        return True
    if isinstance(ty, T.TTuple):
        return all(integral_metric(t) for t in ty.items)
    if isinstance(ty, T.TRecord):
        return all(integral_metric(t) for _, t in ty.fields)
    if isinstance(ty, (T.TWith, T.TSum)):
        return integral_metric(ty.left) and integral_metric(ty.right)
    if isinstance(ty, T.TList):
        return integral_metric(ty.elem)
    return False


def draw_parts(cost: Cost) -> tuple[Cost, ...] | None:
    """The independent draws a cost is exactly (itself if one draw), or None."""
    if cost.blame is not None:
        return None
    if cost.parts is not None:
        return cost.parts
    if cost.draw is not None and len(cost.events()) == 1:
        return (cost,)
    return None


def _disjoint_parts(first: tuple[Cost, ...] | None, second: tuple[Cost, ...] | None) -> tuple[Cost, ...] | None:
    """Two compositions of draws as one, when no draw is in both (the same
    draw twice in a composition is not a composition of independent draws)."""
    if first is None or second is None or {id(p.draw) for p in first} & {id(p.draw) for p in second}:
        return None
    return first + second


#: The events whose cost is a function of their query's sensitivity alone,
#: linear in it as the noise is calibrated: one draw reading a variable at
#: sensitivities s1 and s2 is the same event at s1 + s2 (`merge_draw`).
_ONE_DRAW = (Laplace, Gaussian, Geometric, Staircase, DiscreteGaussian)


def one_draw(event: Event, draw: object) -> Cost:
    """The cost of one noise draw's event in one variable, marked with the
    draw's identity when its events can be merged (`merge_draw`)."""
    return Cost((event,), draw=draw if isinstance(event, _ONE_DRAW) else None)


def untagged(cost: Cost | None) -> Cost | None:
    """The same cost without its draw identity (it no longer is one draw)."""
    if cost is None or cost.draw is None:
        return cost
    return Cost(cost.tree, cost.blame)


def retag(cost: Cost | None, fresh: dict[int, object]) -> Cost | None:
    """A definition's cost at one call: its draw identity renewed (one new
    identity per draw of the definition and per call), so that routes into
    two calls are never taken for routes into one draw."""
    if cost is None:
        return cost
    if cost.parts is not None:
        parts = tuple(retag(p, fresh) for p in cost.parts)
        return Cost(cost.tree, cost.blame, parts=parts)  # type: ignore[arg-type]
    if cost.draw is None:
        return cost
    draw = fresh.setdefault(id(cost.draw), object())
    return Cost(cost.tree, cost.blame, draw)


def merge_draw(costs: list[Cost]) -> tuple[Cost, tuple[Fraction, ...]] | None:
    """Several routes by which one variable reaches ONE noise draw, or None.

    Every cost must be that same draw's single event (same identity, same
    kind and noise scale): the variable's whole cost by each route is that
    draw. The Fuzz let rule read inside the draw (Reed & Pierce 2010, the
    let/substitution rule: a deterministic alias `let a = e` is replaced by
    e, and the sensitivities of the query in the variable add, r_a * s_e +
    s_db) makes the query's sensitivity in the variable the SUM of the
    routes' sensitivities, and the mechanism is calibrated to that one
    sensitivity (Laplace: Dwork et al. 2006; Gaussian: mu = s / sigma, Dong,
    Roth & Su 2022 / Balle & Wang 2018). Returns the merged cost and the
    routes' sensitivities (for `check --explain`)."""
    if len(costs) < 2:
        return None
    draw = costs[0].draw
    if draw is None or any(c.draw is not draw or c.blame is not None for c in costs):
        return None
    events = [c.events() for c in costs]
    if any(len(evs) != 1 for evs in events):
        return None
    merged = merge_events([evs[0] for evs in events])
    if merged is None:
        return None
    return Cost((merged[0],), draw=draw), merged[1]


def compose_draws(costs: list[Cost]) -> Cost | None:
    """Several routes of one variable into two or more DIFFERENT draws, each
    route's whole cost exactly one draw's event, or None. A route whose whole
    cost is draw D is read by D alone, so each draw reads the variable only
    through the routes carrying its identity: substituting the variable for
    every route (Reed & Pierce 2010's let/substitution rule) gives each draw
    the sum of its routes' sensitivities, and the draws' noises are
    independent: their composition (Dwork & Roth 2014, Thm 3.14 and 3.16;
    the accountant's composition of independent events) is the exact cost.
    A review found `lg db db` (a Laplace draw on one route, a Gaussian on the
    other) charged by group privacy, 4.18 against a true 2.02.
    A route whose cost is itself such a composition (``parts``) counts as
    the routes of its parts: a third alias of one database stays exact
    (reviewer F: 29.8 where the exact chained figure was 7.18)."""
    found = [draw_parts(c) for c in costs]
    if len(costs) < 2 or any(p is None for p in found):
        return None
    groups: dict[int, list[Cost]] = {}
    for part in (p for parts in found for p in parts or ()):
        groups.setdefault(id(part.draw), []).append(part)
    if len(groups) < 2:
        return None
    merged_parts: list[Cost] = []
    for group in groups.values():
        merged = merge_draw(group) if len(group) > 1 else (group[0], ())
        if merged is None:
            return None
        merged_parts.append(merged[0])
    composed = Cost(merged_parts[0].tree)
    for part in merged_parts[1:]:
        composed = Cost(_Cat(composed.tree, part.tree))
    composed.parts = tuple(merged_parts)
    return composed


def merge_events(events: list[Event]) -> tuple[Event, tuple[Fraction, ...]] | None:
    """The events of several routes into ONE draw (the caller knows they
    are: `merge_draw`, `run`'s parameters given one dataset) as that draw's
    single event at the summed sensitivity, with the summands; None unless
    all are of one kind with one noise scale."""
    first = events[0]
    scale = _noise_scale(first)
    if scale is None or any(type(e) is not type(first) or _noise_scale(e) != scale for e in events):
        return None
    parts = tuple(Fraction(e.sensitivity) for e in events)  # type: ignore[union-attr]
    total = sum(parts, Fraction(0))
    merged: Event
    moves = [Fraction(getattr(e, "replaced", -1)) for e in events]
    if all(m >= 0 for m in moves) and isinstance(first, Laplace | Gaussian | Geometric | DiscreteGaussian):
        # each route's replace-one move known: a replaced row moves the draw's query by at most
        # their sum (through one route after the other, the triangle inequality), as the
        # sensitivities add (review of issue 28: `let b = db` read twice in one Gaussian draw
        # of counts was charged 10.997 under replace-one, though a count does not move)
        replaced = sum(moves, Fraction(0))
        kind = type(first)
        if isinstance(first, Laplace | Geometric):
            return kind(total, first.scale, replaced), parts
        return kind(total, first.sigma, replaced), parts
    if isinstance(first, Laplace):  # the replace-one form of the sum is not known: 2 s (events.Laplace)
        merged = Laplace(total, first.scale)
    elif isinstance(first, Geometric):
        merged = Geometric(total, first.scale)
    elif isinstance(first, Staircase):  # eps ceil(s1 + s2): a function of the summed shift, not linear
        merged = Staircase(total, first.step_epsilon)
    elif isinstance(first, Gaussian):
        merged = Gaussian(total, first.sigma)
    else:
        assert isinstance(first, DiscreteGaussian)
        merged = DiscreteGaussian(total, first.sigma)
    return merged, parts


def draw_numbers(costs: dict[str, Cost | None]) -> dict[str, int]:
    """For a definition's parameters: which of them cost exactly one noise
    draw's event, numbered by draw (`result.CheckedDef.draws`)."""
    numbers: dict[int, int] = {}
    out: dict[str, int] = {}
    for name, cost in costs.items():
        if cost is None or cost.draw is None or cost.blame is not None or len(cost.events()) != 1:
            continue
        out[name] = numbers.setdefault(id(cost.draw), len(numbers))
    return out


def _noise_scale(event: Event) -> Fraction | None:
    if isinstance(event, (Laplace, Geometric)):
        return Fraction(event.scale)
    if isinstance(event, Staircase):
        return Fraction(event.step_epsilon)
    if isinstance(event, (Gaussian, DiscreteGaussian)):
        return Fraction(event.sigma)
    return None


def chain(first: Cost | None, second: Cost | None) -> Cost:
    """Two costs of ONE variable that reach it by two routes (a `let` alias
    and the variable itself, a sampler's bag and a capture, a loop's state
    and a capture): one noise draw may read both routes (`gauss[s] (sum a +
    sum db)` with `a = db`), so they are not independent releases. A row of
    the variable moves both routes: a chain of two steps, each bounded by
    the composed guarantee of both. Pure costs add along it; any other cost
    is group privacy over the two steps of the composition (Dwork & Roth
    2014, Thm 2.2; a fifth adversarial review found the composition charged
    a Gaussian mu sqrt(2) for a true 2 mu). When both routes are the same
    single draw, a deterministic alias's rule (`blocks._alias`) charges that
    draw once at the summed sensitivity instead (`merge_draw`); this chain
    is for every other shape."""
    if first is None or second is None or first.blame is not None or second.blame is not None:
        return then(first, second)
    events = first.events() + second.events()
    if first.events() and second.events() and _approx_symbolic(events):
        # an (eps, delta) over parameters on two routes: group privacy over the two steps,
        # (2 eps, (1 + e^eps) delta), is no polynomial (each call's figure is listed instead)
        return Cost((Group(Fraction(2), events),))
    if not first.events() or not second.events() or is_symbolic(events):  # symbolic epsilons are pure
        return then(first, second)
    if pure_epsilon(events) is not None and not has_local(events):
        return Cost((pure_routes(events),))
    # the two routes as a chain (`events.Group.chained`): step one moves the first route
    # with the second held fixed, step two the second, and each route's events bound the
    # definition in that route whatever the other is, so step i costs route i's own
    # guarantee (as `run` charges one dataset behind two parameters); read as a plain
    # group it is the bound above, which the accountant keeps trying (review of issue 28:
    # a `let b = db` read beside `db` by two subsamples was 6.568 by the plain group)
    return Cost((Group(Fraction(2), (Repeat(1, first.events()), Repeat(1, second.events())), chained=True),))


def pure_routes(events: tuple[Event, ...]) -> Event:
    """Pure events of one variable reached by several routes, as ONE pure
    event at their summed epsilon. The sum is valid (a row moves the routes
    one after the other, each step within the composed guarantee: Dwork &
    Roth 2014, Thm 2.2's argument), but the events are not independent
    releases: one draw may read several routes, so the (eps, delta) curve
    of their composition would be too small for delta > 0 (`l2 db db` with
    draws at eps 1 and 0.5: composed as three independent Laplace(0.5)s,
    (0.797, 0.1); the two draws themselves need eps 1.098 at delta 0.1).
    An eps-DP mechanism is within the worst case for its eps (Kairouz, Oh &
    Viswanath 2015), which is what the accountant charges a group of one
    (`accounting.atoms._several_routes`); the events stay visible (the
    neighbour harness reads their sensitivities)."""
    assert pure_epsilon(events) is not None
    return Group(Fraction(1), events)


def then_into(target: CostCtx, earlier: CostCtx) -> CostCtx:
    """``earlier`` happens before ``target``; updates ``target`` in place."""
    for name, cost in earlier.items():
        target[name] = then(cost, target.get(name))
    return target


def join(a: Cost | None, b: Cost | None) -> Cost:
    """Only one of two branches runs. Equal or nested event lists give the
    larger; otherwise both lists together are a sound (loose) upper bound,
    since running both costs at least as much as running either."""
    if a is None:
        assert b is not None
        return b
    if b is None:
        return a
    if a.blame is not None:
        return a
    if b.blame is not None:
        return b
    ea, eb = a.events(), b.events()
    same = a.draw is b.draw  # one draw on both branches: still that draw
    if _contains(ea, eb):
        return a if same else Cost(a.tree)
    if _contains(eb, ea):
        return b if same else Cost(b.tree)
    return Cost(_Cat(ea, eb))


def join_ctx(a: CostCtx, b: CostCtx) -> CostCtx:
    if len(a) < len(b):
        a, b = b, a
    for name, cost in b.items():
        a[name] = join(a.get(name), cost)
    return a


def _contains(big: tuple[Event, ...], small: tuple[Event, ...]) -> bool:
    remaining = list(big)
    for event in small:
        if event in remaining:
            remaining.remove(event)
        else:
            return False
    return True


# ---------------------------------------------------------------- scaling by a sensitivity


def scale_cost(cost: Cost, factor: Sens, blame: Blame, keep_direct: bool = False) -> Cost | None:
    """The cost in v of using, at sensitivity ``factor`` in v, something whose
    cost in its own input is ``cost``. None when it costs nothing."""
    if factor.is_zero:
        return None
    if cost.blame is not None:
        return cost
    events = cost.events()
    if not events:
        return None
    if has_local(events) and not (keep_direct and factor == ONE):
        # local reports are private for replace-one changes of the very bag
        # they randomise; through any substitution (a filter, a split, a
        # subsample, a call with another bag) the number of reports may change
        # with one row. A call passing its own bag variable as it is keeps them
        # (`def once (db) = rep db`): its rows are the callee's
        return infinite(Blame(
            "FZ301",
            blame.span,
            "local or shuffled reports are private only for a change of one row's value in the bag they "
            "randomise; here that bag is another value, which may have one report more or less",
            hint="call `local` / `shuffle` on the database parameter itself (or on `map f db`)",
        ))
    if factor.is_inf:
        return infinite(blame)
    if cost.parts is not None:
        return _scale_parts(cost.parts, factor, blame, keep_direct)
    if not (keep_direct and factor == ONE):  # re-expressed in another bag: its size is not the sample's
        events = indirect(events)
    if factor == ONE:
        return _same_draw(Cost(events), cost)
    return _same_draw(Cost(tuple(scale_event(e, factor) for e in events)), cost)


def _scale_parts(parts: tuple[Cost, ...], factor: Sens, blame: Blame, keep_direct: bool) -> Cost | None:
    """A composition of independent draws used at ``factor``: each draw's
    event scales linearly (what `scale_cost` does to each event alike), and
    they stay the same draws."""
    scaled: Cost | None = None
    for part in parts:
        one = scale_cost(part, factor, blame, keep_direct)
        if one is None:
            continue
        scaled = then(scaled, one) if scaled is not None else one
    return scaled


def _same_draw(scaled: Cost, original: Cost) -> Cost:
    """``scaled`` keeps ``original``'s draw identity when it is still that
    one draw's event (a sensitivity scales the event linearly)."""
    if original.draw is None:
        return scaled
    events = scaled.events()
    if len(events) == 1 and isinstance(events[0], _ONE_DRAW):
        scaled.draw = original.draw
    return scaled


def indirect(events: tuple[Event, ...]) -> tuple[Event, ...]:
    """The events with every fixed-size sample marked as not of the charged
    variable's own rows (`events.Sample.direct`): the rate m/n is known only
    for a sample of the dataset itself."""
    def one(event: Event) -> Event:
        if isinstance(event, Sample) and event.direct:
            return Sample(event.replacement, event.size, False, event.body)
        if isinstance(event, Subsample) and event.direct:
            return dataclasses.replace(event, direct=False)
        if isinstance(event, ONE_QUERY) and replaced_move(event) is not None:  # its form was of the variable's own rows
            return dataclasses.replace(event, replaced=Fraction(-1))
        if isinstance(event, Repeat):
            return Repeat(event.count, indirect(event.body))
        return event

    return tuple(one(e) for e in events)


def scale_event(event: Event, factor: Sens) -> Event:
    """An event on an input that moves ``factor`` times as far.

    Laplace, Gaussian and the exponential mechanism are calibrated to the
    sensitivity of their query, which scales linearly (the sensitivity of a
    composition is the product, Reed & Pierce 2010). Other events are proved
    for neighbours at distance 1: beyond that, group privacy over
    ceil(factor) steps (Dwork & Roth 2014, Thm 2.2)."""
    assert factor.value is not None
    k = factor.value
    if isinstance(event, Laplace):
        return Laplace(event.sensitivity * k, event.scale)
    if isinstance(event, Gaussian):
        return Gaussian(event.sensitivity * k, event.sigma)
    if isinstance(event, Geometric):  # an integer query moving k times as far
        return Geometric(event.sensitivity * k, event.scale)
    if isinstance(event, Staircase):  # a query moving k times as far crosses ceil(k s) steps
        return Staircase(event.sensitivity * k, event.step_epsilon)
    if isinstance(event, DiscreteGaussian):
        return DiscreteGaussian(event.sensitivity * k, event.sigma)
    if isinstance(event, ExpMech):
        return ExpMech(event.epsilon * k)
    if isinstance(event, SymbolicPure):  # calibrated like Laplace: linear in the sensitivity
        return SymbolicPure(event.sensitivity * k, event.epsilon)
    if isinstance(event, Repeat):
        return Repeat(event.count, tuple(scale_event(e, factor) for e in event.body))
    if k <= 1:
        return event
    # ceil of the true factor: sqrt(n) sqrt(n) is n (`Sens.ceiling`, review s30 B)
    return Group(Fraction(factor.ceiling()), (event,))


# ---------------------------------------------------------------- pure epsilon


def pure_epsilon(events: tuple[Event, ...]) -> Fraction | None:
    """The exact pure epsilon of a sequence of events, or None if some event
    is not pure; the accountant owns the rule (basic composition, with
    subsampled pure events amplified and rounded up)."""
    from fuzzpy.accounting.accountant import pure_epsilon as accountant_pure_epsilon

    return accountant_pure_epsilon(events)


def is_symbolic(events: tuple[Event, ...]) -> bool:
    """Whether some event's epsilon is a polynomial over parameters."""
    return any(
        isinstance(e, (SymbolicPure, SymbolicApprox))
        or (isinstance(e, (Repeat, Subsample, Sample, Group)) and is_symbolic(e.body))
        for e in events
    )


def symbolic_epsilon(events: tuple[Event, ...]) -> Poly | None:
    """The pure epsilon of events some of whose epsilons are polynomials,
    as a polynomial: basic composition adds (Dwork & Roth 2014, Thm 3.16),
    `loop[k]` multiplies by k, an event on a query of sensitivity s costs
    s times its epsilon (DFuzz, Gaboardi et al. POPL 2013: the cost of a
    release is its index term scaled by the sensitivity). Events without a
    symbol are summed by the accountant's exact pure rule. None when some
    part is not pure, or a symbol sits where the cost is not linear in it
    (under `group` or `subsample`, which the checker refuses)."""
    total = Poly()
    for event in events:
        if isinstance(event, SymbolicPure):
            total = total + event.epsilon.scale(event.sensitivity)
        elif isinstance(event, SymbolicApprox):  # its epsilon; its delta: `symbolic_delta`
            total = total + event.epsilon
        elif isinstance(event, Repeat) and is_symbolic(event.body):
            body = symbolic_epsilon(event.body)
            if body is None:
                return None
            total = total + body.scale(Fraction(event.count))
        elif is_symbolic((event,)):
            return None
        else:
            pure = pure_epsilon((event,))
            if pure is None:
                return None
            total = total + Poly.const(pure)
    return total


def _approx_symbolic(events: tuple[Event, ...]) -> bool:
    return any(isinstance(e, SymbolicApprox) or (isinstance(e, (Repeat, Subsample, Sample, Group))
                                                 and _approx_symbolic(e.body)) for e in events)


def symbolic_delta(events: tuple[Event, ...]) -> Poly | None:
    """The delta that goes with `symbolic_epsilon`: basic composition adds
    the deltas as it adds the epsilons (Dwork & Roth 2014, Thm 3.16), a
    pure event adds none, `loop[k]` multiplies by k. None where that is not
    the composition's delta (a numeric Gaussian, a group, a subsample)."""
    total = Poly()
    for event in events:
        if isinstance(event, SymbolicApprox):
            total = total + event.delta
        elif isinstance(event, Repeat) and is_symbolic(event.body):
            body = symbolic_delta(event.body)
            if body is None:
                return None
            total = total + body.scale(Fraction(event.count))
        elif is_symbolic((event,)) and not isinstance(event, SymbolicPure) or not isinstance(event, SymbolicPure) and pure_epsilon((event,)) is None:
            return None
    return total


def describe_event(event: Event) -> str:
    """A short human form: `Laplace(sens 1, scale 10)`."""
    if isinstance(event, SymbolicPure):
        return f"pure(eps {event.epsilon}, sensitivity {_num(event.sensitivity)})"
    if isinstance(event, SymbolicApprox):
        return f"calibrated Gaussian(eps {event.epsilon}, delta {event.delta})"
    if isinstance(event, Laplace):
        return f"Laplace(sensitivity {_num(event.sensitivity)}, scale {_num(event.scale)})"
    if isinstance(event, Gaussian):
        return f"Gaussian(sensitivity {_num(event.sensitivity)}, sigma {_num(event.sigma)})"
    if isinstance(event, Geometric):
        return f"Geometric(sensitivity {_num(event.sensitivity)}, eps {_num(1 / event.scale)})"
    if isinstance(event, Staircase):
        return f"Staircase(sensitivity {_num(event.sensitivity)}, eps {_num(event.step_epsilon)} per step)"
    if isinstance(event, DiscreteGaussian):
        return f"DiscreteGaussian(sensitivity {_num(event.sensitivity)}, sigma {_num(event.sigma)})"
    if isinstance(event, ExpMech):
        return f"ExpMech(eps {_num(event.epsilon)})"
    if isinstance(event, Verified):
        delta = f", delta {_num(event.delta)}" if event.delta else ""
        return f"{event.name}(eps {_num(event.epsilon)}{delta}, verified)"
    if isinstance(event, Repeat):
        return f"{event.count} x [{describe_events(event.body)}]"
    if isinstance(event, Subsample):
        return f"subsample q={_num(event.rate)} [{describe_events(event.body)}]"
    if isinstance(event, Sample):
        how = "bootstrap" if event.replacement else "choose"
        return f"{how} m={event.size} [{describe_events(event.body)}]"
    if isinstance(event, Group) and event.size == 1 and not event.rows:
        return f"several routes, their pure epsilons added [{describe_events(event.body)}]"
    if isinstance(event, Group):
        return f"group {_num(event.size)} [{describe_events(event.body)}]"
    return repr(event)


def describe_events(events: tuple[Event, ...]) -> str:
    return ", ".join(describe_event(e) for e in events) if events else "nothing"


def _num(x: Fraction) -> str:
    return str(Sens.of(x))
