"""Budgets and the composition rules that spend them across runs.

Runs against one dataset are chosen adaptively (the analyst sees one release
before asking for the next), and so may be their privacy parameters. A fixed-k
composition theorem does not cover that; a *privacy filter* does: a stopping
rule that refuses any release that would take the total past the budget.
Each rule below is such a filter, with the theorem that proves it valid:

* ``basic``: sum of the epsilons and sum of the deltas, each at most the
  budget's. Rogers, Roth, Ullman & Vadhan 2016 ("Privacy Odometers and
  Filters") prove basic composition a valid filter with adaptively chosen
  (eps_i, delta_i). Pure budgets are compared exactly (Fractions).
* ``zcdp``: for (eps, delta) budgets, delta > 0. The budget is converted
  *once*, when it is set, to the largest rho with rho-zCDP => (eps, delta)-DP
  (Canonne, Kamath & Steinke 2020, Cor. 13); releases are charged their rho
  and refused once the sum would exceed it. This is Feldman & Zrnic's Rényi
  filter (2021) at every order a at once (budget a * rho), hence a
  rho-zCDP filter; Whitehouse, Ramdas, Rogers & Wu 2023 extend such filters
  to fully adaptive composition. It needs every event to have a zCDP bound.

A refused release is not run, and later, cheaper ones may still fit: that is
the same filter, with the refused step counted as a mechanism of cost 0 (its
cost is a function of earlier, public choices), so the theorems' condition
"the costs of what ran sum to at most the budget, always" still holds.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

from fuzzpy.accounting.events import Event, Group, Repeat, Subsample
from fuzzpy.accounting.local import has_local, has_shuffled, local_epsilon_of, shuffle_method
from fuzzpy.language.figures import json_figure
from fuzzpy.ledger.costs import (
    CostUnavailable,
    approximate_epsilon,
    pure_epsilon,
    zcdp_rho,
)
from fuzzpy.ledger.errors import INVALID_BUDGET, ledger_error
from fuzzpy.ledger.policy import DEFAULT_DELTA
from fuzzpy.ledger.zcdp import zcdp_epsilon, zcdp_rho_budget
from fuzzpy.support.records import frozen

Exact = Fraction | float | int | str | Decimal


class BudgetError(ValueError):
    """A number or budget that cannot be used."""


def exact_number(value: Exact, what: str) -> Fraction:
    """A number as the user wrote it, exactly: a float is read as its shortest
    decimal (0.1 -> 1/10, not the binary double), text and decimals exactly."""
    try:
        if isinstance(value, Fraction):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise BudgetError(f"{what} must be a finite number, not {value}")
            return Fraction(repr(value))
        return Fraction(value.strip() if isinstance(value, str) else value)
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        raise BudgetError(f"{what} must be a number, not {value!r}") from exc


@frozen
class Budget:
    """A dataset's total privacy budget and the rule that spends it.

    ``epsilon`` and ``delta`` are stored as exact Fractions whatever was given.
    """

    epsilon: Exact
    delta: Exact = Fraction(0)
    rule: str = "basic"

    def __post_init__(self) -> None:
        try:
            self._normalise()
        except BudgetError as exc:
            raise ledger_error(INVALID_BUDGET, f"invalid budget: {exc}", None) from None

    def _normalise(self) -> None:
        epsilon = exact_number(self.epsilon, "epsilon")
        delta = exact_number(self.delta, "delta")
        object.__setattr__(self, "epsilon", epsilon)
        object.__setattr__(self, "delta", delta)
        if epsilon <= 0:
            raise BudgetError(f"epsilon must be positive, not {format_number(epsilon)}")
        if epsilon > Fraction(sys.float_info.max):  # shown and converted as a double
            raise BudgetError("epsilon is too large to be a number fuzzpy can show")
        if not 0 <= delta < 1:
            raise BudgetError(f"delta must be in [0, 1), not {format_number(delta)}")
        rule = rule_named(self.rule)
        rule.validate(self)

    @classmethod
    def parse(cls, text: str, rule: str = "basic") -> Budget:
        """``"1.0"`` or ``"1.0,1e-6"`` (epsilon[,delta]) as given to --budget."""
        parts = [part.strip() for part in text.split(",")]
        if len(parts) not in (1, 2) or not all(parts):
            message = f"invalid budget: a budget is EPS or EPS,DELTA, not {text!r}"
            raise ledger_error(INVALID_BUDGET, message, None)
        return cls(parts[0], parts[1] if len(parts) == 2 else "0", rule)

    def describe(self) -> str:
        # a limit: rounded down when inexact (a budget shown larger would allow more)
        text = f"eps={format_number(self.epsilon, up=False)}"
        if self.delta:
            text += f", delta={format_number(self.delta, up=False)}"
        return f"{text} ({self.rule})"

    def to_json(self) -> dict[str, object]:
        return {
            # a limit: the greatest double <= it (a budget shown larger would allow more)
            "epsilon": json_figure(self.epsilon, up=False),
            "delta": json_figure(self.delta, up=False),
            "rule": self.rule,
            "exact": {"epsilon": str(self.epsilon), "delta": str(self.delta)},
        }


@frozen
class Spend:
    """What releases consume, in a rule's currency, exactly: (epsilon, delta)
    under ``basic``; rho under ``zcdp`` (its epsilon and delta stay 0)."""

    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.epsilon + other.epsilon, self.delta + other.delta, self.rho + other.rho)

    def __sub__(self, other: Spend) -> Spend:
        return Spend(self.epsilon - other.epsilon, self.delta - other.delta, self.rho - other.rho)


@frozen
class ReleaseCost:
    """One release's charge (``spend``) and its guarantee on its own."""

    spend: Spend
    epsilon: Fraction
    delta: Fraction
    method: str
    # what the user should know about the charge (not stored): warning FZ604
    # (`errors.LOOSE_CHARGE`) when `run` shows it, a note of a refusal
    notes: tuple[str, ...] = ()


class Rule(ABC):
    name: str
    summary: str

    def validate(self, budget: Budget) -> None:  # noqa: B027 - optional hook
        """Raise BudgetError if this rule cannot spend ``budget``."""

    @abstractmethod
    def capacity(self, budget: Budget) -> Spend:
        """The budget in this rule's currency (computed once, when it is set)."""

    @abstractmethod
    def cost(
        self, events: Sequence[Event], budget: Budget, release_delta: Fraction | None
    ) -> ReleaseCost:
        """The charge for one release; raises CostUnavailable if none exists."""

    @abstractmethod
    def fits(self, spent: Spend, cost: Spend, capacity: Spend) -> bool:
        """True if charging ``cost`` keeps the total within ``capacity``."""

    @abstractmethod
    def as_guarantee(self, amount: Spend, budget: Budget) -> tuple[Fraction, Fraction]:
        """An amount of this currency as (epsilon, delta), for people to read."""


class BasicRule(Rule):
    name = "basic"
    summary = (
        "sum of epsilons and of deltas (basic composition, a valid privacy filter "
        "for adaptively chosen runs: Rogers, Roth, Ullman & Vadhan 2016)"
    )

    def capacity(self, budget: Budget) -> Spend:
        return Spend(budget.epsilon, budget.delta)

    def cost(
        self, events: Sequence[Event], budget: Budget, release_delta: Fraction | None
    ) -> ReleaseCost:
        return labelled(self._cost(events, budget, release_delta), events)

    def _cost(
        self, events: Sequence[Event], budget: Budget, release_delta: Fraction | None
    ) -> ReleaseCost:
        pure = pure_epsilon(events)
        if pure is not None and not (budget.delta != 0 and has_shuffled(tuple(events))):
            # shuffled reports are pure only at their local epsilon: with a delta
            # to spend, their amplified (eps, delta) is charged instead
            return ReleaseCost(Spend(pure, Fraction(0)), pure, Fraction(0), "pure")
        if budget.delta == 0:
            raise CostUnavailable(
                "the release is only (eps, delta)-private but the budget is pure (delta = 0)"
            )
        # the delta policy (`fuzzpy.ledger.policy`): 1e-6 unless the caller chooses
        delta = DEFAULT_DELTA if release_delta is None else release_delta
        epsilon, method = approximate_epsilon(events, delta)
        return ReleaseCost(Spend(epsilon, delta), epsilon, delta, method)

    def fits(self, spent: Spend, cost: Spend, capacity: Spend) -> bool:
        total = spent + cost
        return total.epsilon <= capacity.epsilon and total.delta <= capacity.delta

    def as_guarantee(self, amount: Spend, budget: Budget) -> tuple[Fraction, Fraction]:
        return amount.epsilon, amount.delta


class ZcdpRule(Rule):
    name = "zcdp"
    summary = (
        "sum of zCDP rho against the budget converted once to rho (a Rényi/zCDP "
        "privacy filter: Feldman & Zrnic 2021; Whitehouse, Ramdas, Rogers & Wu 2023)"
    )

    def validate(self, budget: Budget) -> None:
        if budget.delta == 0:
            raise BudgetError("the zcdp rule needs delta > 0 (zCDP gives no pure epsilon)")

    def capacity(self, budget: Budget) -> Spend:
        return Spend(rho=zcdp_rho_budget(budget.epsilon, budget.delta))

    def cost(
        self, events: Sequence[Event], budget: Budget, release_delta: Fraction | None
    ) -> ReleaseCost:
        rho = zcdp_rho(events)
        if rho is None:
            raise CostUnavailable(
                "an event of this release has no zCDP bound (e.g. a mechanism proved "
                "only (eps, delta) with delta > 0); use a budget under the basic rule"
            )
        epsilon = zcdp_epsilon(rho, budget.delta)
        notes = unamplified_note(events, epsilon, budget.delta)
        return labelled(ReleaseCost(Spend(rho=rho), epsilon, budget.delta, "zCDP", notes), events)

    def fits(self, spent: Spend, cost: Spend, capacity: Spend) -> bool:
        return spent.rho + cost.rho <= capacity.rho

    def as_guarantee(self, amount: Spend, budget: Budget) -> tuple[Fraction, Fraction]:
        if amount.rho <= 0:
            return Fraction(0), Fraction(0)
        return zcdp_epsilon(amount.rho, budget.delta), budget.delta


REPLACE_ONE_LABEL = "replace-one neighbours"


def labelled(cost: ReleaseCost, events: Sequence[Event]) -> ReleaseCost:
    """A charge for local reports names its relation, and, when shuffling
    amplified it below the reports' local epsilon, FMT 2021 (`accounting.local`)."""
    events = tuple(events)
    if not has_local(events):
        return cost
    method = cost.method
    local = local_epsilon_of(events)
    if has_shuffled(events) and local is not None and cost.epsilon < local:
        method = shuffle_method(events, method)
    return dataclasses.replace(cost, method=f"{method}, {REPLACE_ONE_LABEL}")


# A charge this many times the release's tight epsilon is worth a warning.
LOOSE_FACTOR = Fraction(3, 2)


def unamplified_note(events: Sequence[Event], epsilon: Fraction, delta: Fraction) -> tuple[str, ...]:
    """Under the zcdp rule a Poisson-subsampled Gaussian (or (eps, delta) body)
    is charged its un-amplified rho: zCDP has no amplification by subsampling
    (the subsampled Gaussian's D_alpha / alpha tends to the full rho as
    alpha grows, Mironov, Talwar & Zhang 2019, Sec. 3.3), so that rho is the
    valid charge. When it is far above the release's tight epsilon at the
    budget's delta, say so, and what to use instead."""
    if not subsampled_unamplified(events):
        return ()
    try:
        tight, method = approximate_epsilon(events, delta)
    except CostUnavailable:
        return ()
    if epsilon <= tight * LOOSE_FACTOR:
        return ()
    return (
        "the zcdp rule charges subsampled steps their un-amplified rho (zCDP cannot credit "
        f"subsampling): this release costs eps={format_number(epsilon)} at delta="
        f"{format_number(delta)} on its own under it, while its tight cost is "
        f"eps={format_number(tight)} ({method}); a dataset registered with --rule basic "
        "charges the tight value",
    )


def subsampled_unamplified(events: Sequence[Event]) -> bool:
    """Whether an event is a subsample whose zCDP is not amplified (a body with
    a Gaussian or an (eps, delta) part; subsampled pure bodies are)."""
    for event in events:
        if isinstance(event, Subsample) and pure_epsilon(event.body) is None:
            return True
        if isinstance(event, Repeat | Group | Subsample) and subsampled_unamplified(event.body):
            return True
    return False


def zcdp_measure_cost(events: Sequence[Event], budget: Budget, delta: Fraction) -> ReleaseCost:
    """A release whose definition declares `privacy zcdp[delta]`, under the
    basic rule: its rho-zCDP (Bun & Steinke 2016) converted at that delta
    (`accountant.zcdp_guarantee`, the figure `check` reports), charged as
    (eps, delta) -- or what the accountant proves for its events at that
    delta (the basic rule's own charge), when that is smaller: both are valid
    (eps, delta)-DP guarantees of the same release (review s29e L1: a
    geometric[1] declared zcdp[1e-6] is 1-DP, its conversion 4.99)."""
    if budget.delta == 0:
        raise CostUnavailable("the definition is measured in zCDP, which gives no pure epsilon, but the budget is pure")
    try:
        converted: ReleaseCost | None = _zcdp_converted(events, delta)
        why = None
    except CostUnavailable as exc:
        converted, why = None, exc
    try:
        proved: ReleaseCost | None = BasicRule().cost(events, budget, delta)
    except CostUnavailable:
        proved = None
    if proved is not None and proved.spend.delta <= delta and (
            converted is None or proved.spend.epsilon < converted.spend.epsilon):
        below = "" if converted is None else f", below its zCDP conversion eps={format_number(converted.spend.epsilon)}"
        return dataclasses.replace(proved, method=f"{ZCDP_MEASURE}: {proved.method}{below}")
    if converted is None:
        raise why or CostUnavailable("its rho-zCDP gives no finite epsilon at this delta")
    return converted


def _zcdp_converted(events: Sequence[Event], delta: Fraction) -> ReleaseCost:
    """The release's rho-zCDP converted at ``delta`` (Bun & Steinke 2016, Prop. 1.3
    as `accountant.zcdp_guarantee` applies it)."""
    from fuzzpy.accounting.accountant import zcdp_guarantee

    found = zcdp_guarantee(tuple(events), delta)
    if found is None:
        raise CostUnavailable("an event of this release has no zCDP bound")
    _rho, epsilon = found
    if not math.isfinite(epsilon):
        raise CostUnavailable("its rho-zCDP gives no finite epsilon at this delta")
    exact = Fraction(epsilon)
    return labelled(ReleaseCost(Spend(exact, delta), exact, delta, ZCDP_MEASURE), events)


#: The method of a charge made in a definition's declared zCDP measure (stored with the charge: `audit` reads it)
ZCDP_MEASURE = "zCDP (declared measure)"


RULES: dict[str, Rule] = {rule.name: rule for rule in (BasicRule(), ZcdpRule())}


def rule_named(name: str) -> Rule:
    try:
        return RULES[name]
    except KeyError:
        known = ", ".join(sorted(RULES))
        raise BudgetError(f"unknown composition rule {name!r} (known: {known})") from None


def format_number(value: Fraction, up: bool = True) -> str:
    """A Fraction as a short decimal: exact when it has one (0.1, 1e-06),
    else 6 significant digits prefixed by '~', rounded up (a cost, the
    default) or down (what remains of a budget; ``up=False``), as
    `fuzzpy.language.figures.ledger_text` says."""
    from fuzzpy.language.figures import ledger_text

    return ledger_text(value, up)
