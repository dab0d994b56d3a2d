"""What the ledger hands back: quotes, receipts, history entries, refusals."""

from __future__ import annotations

from dataclasses import field
from fractions import Fraction
from pathlib import Path

from fuzzpy.accounting.events import Event
from fuzzpy.accounting.neighbours import TEXTS as NEIGHBOURS_TEXTS
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.figures import NEIGHBOURS_TEXT, json_figure
from fuzzpy.ledger.errors import OVER_BUDGET, ledger_error
from fuzzpy.ledger.event_codec import events_to_data
from fuzzpy.ledger.rules import (
    Budget,
    ReleaseCost,
    Spend,
    format_number,
    rule_named,
)
from fuzzpy.support.records import frozen


def amount_json(amount: Spend, budget: Budget, up: bool = True) -> dict[str, object]:
    """An amount of a budget's currency as JSON: (epsilon, delta) always, and
    rho under the zcdp rule; numbers as floats plus exact fractions. The floats
    are on the safe side (`json_figure`): a cost or what is spent the least
    double >= it, what remains (``up=False``) the greatest double <= it."""
    epsilon, delta = rule_named(budget.rule).as_guarantee(amount, budget)
    document: dict[str, object] = {"epsilon": json_figure(epsilon, up), "delta": json_figure(delta, up)}
    exact = {"epsilon": str(epsilon), "delta": str(delta)}
    if budget.rule == "zcdp":
        document["rho"] = json_figure(amount.rho, up)
        exact["rho"] = str(amount.rho)
    document["exact"] = exact
    return document


def describe_amount(amount: Spend, budget: Budget, up: bool = True) -> str:
    """An amount as text: a cost or what is spent rounded up (the default),
    what remains or a total rounded down (``up=False``): issue 25."""
    epsilon, delta = rule_named(budget.rule).as_guarantee(amount, budget)
    text = f"eps={format_number(epsilon, up)}"
    if delta:
        text += f", delta={format_number(delta, up)}"
    if budget.rule == "zcdp":
        return f"rho={format_number(amount.rho, up)} ({text})"
    return text


@frozen
class Quote:
    """A release's cost against a dataset's budget; ``spent`` is before it."""

    dataset: str
    budget: Budget
    cost: ReleaseCost
    spent: Spend
    capacity: Spend
    #: the neighbour relation the charge is for ("add-remove-one" or "replace-one":
    #: `fuzzpy.ledger.neighbours`); keyword-only, so `Receipt` adds its fields after it
    neighbours: str = field(default="add-remove-one", kw_only=True)
    #: the dataset's rows-per-person policy (`ledger.persons`): the charge is its group cost over k
    rows_per_person: int = field(default=1, kw_only=True)

    @property
    def remaining(self) -> Spend:
        """What would remain after this release."""
        return self.capacity - self.spent - self.cost.spend

    def charged_json(self) -> dict[str, object]:
        document = amount_json(self.cost.spend, self.budget)
        document["method"] = self.cost.method
        if self.cost.notes:
            document["notes"] = list(self.cost.notes)
        return document

    def remaining_json(self) -> dict[str, object]:
        return amount_json(self.remaining, self.budget, up=False)

    def to_json(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "budget": self.budget.to_json(),
            "charged": self.charged_json(),
            "spent_before": amount_json(self.spent, self.budget),
            "remaining": self.remaining_json(),
            "rows_per_person": self.rows_per_person,
        }


@frozen
class Receipt(Quote):
    """A committed charge: the quote it passed, its row id and time (UTC)."""

    id: int
    time: str

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "time": self.time, **super().to_json()}


@frozen
class Entry:
    """One past release, with what remained of the budget after it."""

    id: int
    dataset: str
    time: str
    program: str | None
    program_sha256: str | None
    definition: str | None
    events: tuple[Event, ...]
    budget: Budget
    cost: ReleaseCost
    remaining: Spend
    data_sha256: str | None = None
    seeded: bool | None = None  # None: recorded before the ledger kept it
    status: str | None = None  # "charged" (nothing shown yet) or "released"; None: not recorded
    released: object = None  # the released value as JSON data, once released
    row_rules: dict[str, object] | None = None  # what the row rules did: for the data owner only
    arguments: dict[str, str] | None = None  # the run's public arguments as given (`--arg`); None: none recorded
    neighbours: str = "add-remove-one"  # the relation the dataset's charges are for (`fuzzpy.ledger.neighbours`)
    #: the unchecked `assume def`s (name, claim) the charge rests on (FZ318); () : none
    assumptions: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, object]:
        """Everything but the row rules' counts, which are the owner's
        (`fuzzpy dataset show`)."""
        charged = amount_json(self.cost.spend, self.budget)
        charged["method"] = self.cost.method
        return {
            "id": self.id,
            "time": self.time,
            "program": self.program,
            "program_sha256": self.program_sha256,
            "definition": self.definition,
            "data_sha256": self.data_sha256,
            "seeded": self.seeded,
            "private": None if self.seeded is None else not self.seeded,
            "status": self.status,
            "released": self.released,
            "charged": charged,
            "remaining": amount_json(self.remaining, self.budget, up=False),
            "events": events_to_data(self.events),
            "arguments": self.arguments,
            "unchecked_assumptions": [{"definition": n, "claim": c} for n, c in self.assumptions],
        }


def over_budget_error(quote: Quote, path: Path, hint: str | None = None,
                      neighbours: str = "add-remove-one") -> FuzzError:
    """FZ601: the release's cost, what is spent and the total, in numbers."""
    budget = quote.budget
    rule = rule_named(budget.rule)
    left = quote.capacity - quote.spent
    left = Spend(*(max(value, Fraction(0)) for value in (left.epsilon, left.delta, left.rho)))
    message = (
        f"refused: this release costs {describe_amount(quote.cost.spend, budget)} but dataset "
        f"{quote.dataset!r} has spent {describe_amount(quote.spent, budget)} of its total "
        f"{describe_amount(quote.capacity, budget, up=False)} ({describe_amount(left, budget, up=False)} left)"
    )
    notes = (
        f"budget rule {rule.name}: {rule.summary}",
        *quote.cost.notes,
        NEIGHBOURS_TEXTS.get(neighbours, NEIGHBOURS_TEXT),
        "nothing was charged",
    )
    return ledger_error(OVER_BUDGET, message, path, notes=notes, hint=hint)
