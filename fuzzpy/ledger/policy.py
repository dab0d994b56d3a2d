"""The delta policy, and what a refusal suggests instead.

One default for every approximate (eps, delta) figure: `check` and `budget`
report it, and `run` charges it, at ``DEFAULT_DELTA`` (1e-6, the language
design's default, section 7) unless ``--delta`` says otherwise; pure releases
cost (eps, 0). The ledger stores the delta each release was charged at.

When the ledger refuses a release (FZ601 over budget, FZ603 an approximate
release against a pure budget), `refusal_hint` says what would work: another
``--delta`` (the delta left, if the release's epsilon there fits the epsilon
left), or the budget a first release would need.

This module is imported while the command line is parsed: the accountant is
imported only when a hint is computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fuzzpy.accounting.events import Event
    from fuzzpy.ledger.rules import Budget, ReleaseCost, Spend

DEFAULT_DELTA = Fraction(1, 10**6)
DEFAULT_DELTA_TEXT = "1e-6"

def usable_delta(most: Fraction) -> Fraction:
    """``most`` if it is a short decimal (as a user would type it), else
    ``most`` rounded down to 3 significant digits."""
    from fuzzpy.ledger.rules import format_number

    if not format_number(most).startswith("~"):
        return most
    scale = Fraction(10) ** (math.floor(math.log10(most)) - 2)
    return math.floor(most / scale) * scale


def delta_that_fits(events: Sequence[Event], epsilon_left: Fraction, delta_left: Fraction,
                    ) -> tuple[Fraction, Fraction] | None:
    """The delta left (as a user would type it) with the release's epsilon
    there, if that epsilon fits ``epsilon_left``; else None. Epsilon falls as
    delta grows, so no smaller delta would fit where this one does not."""
    from fuzzpy.ledger.costs import CostUnavailable, approximate_epsilon

    delta = usable_delta(delta_left)
    try:
        epsilon = approximate_epsilon(events, delta)[0]
    except CostUnavailable:
        return None
    return (delta, epsilon) if epsilon <= epsilon_left else None


#: An epsilon above this is no meaningful privacy (e^10 ~ 22026: one row may change the odds of an output
#: by that factor); a cost beyond it is most often a noise scale not multiplied by the query's sensitivity.
LARGE_EPSILON = 10


def refusal_hint(events: Sequence[Event], budget: Budget, cost: ReleaseCost, left: Spend,
                 budget_fixed: bool) -> str | None:
    """What would work instead of a release refused as over budget."""
    from fuzzpy.language.figures import text_up
    from fuzzpy.ledger.rules import format_number

    spent_out = left.rho <= 0 if budget.rule == "zcdp" else left.epsilon <= 0
    if budget_fixed and spent_out:  # review s27c: say it plainly, once, rather than a hint that cannot work
        return ("the dataset's budget is spent: no release on it can run again, now or later (a dataset's "
                "budget is fixed by its first release or its registration and is never raised; every "
                "value released so far stays in `fuzzpy ledger`)")

    if budget.rule == "zcdp":
        if not budget_fixed:
            return "raise --budget (the zcdp rule charges rho; --delta does not change it)"
        return _zcdp_fixed_hint(cost.spend.rho, left.rho)
    if cost.spend.delta == 0:
        if budget_fixed:
            return None
        hint = f"raise --budget to at least {text_up(cost.spend.epsilon)}"
        if cost.spend.epsilon > LARGE_EPSILON:  # review s27c: never a bare suggestion of eps=50000
            hint = (f"this release costs eps={text_up(cost.spend.epsilon)}, which is no meaningful privacy (above "
                    f"{LARGE_EPSILON}): scale its noise by the query's sensitivity (`laplace[eps]` of a "
                    f"`sum[lo, hi]` costs eps * (hi - lo)) rather than raise the budget; {hint} only to publish "
                    "the value nearly as it is")
        return hint
    suggestion = delta_that_fits(events, left.epsilon, left.delta) if left.delta > 0 else None
    options = []
    if not budget_fixed:
        # a value that suffices: both parts rounded up, as a user can type them
        options.append(f"raise --budget (e.g. --budget {text_up(cost.spend.epsilon, 4)},"
                       f"{text_up(max(cost.spend.delta, Fraction(budget.delta)))})")
    if suggestion is not None:
        delta, epsilon = suggestion
        options.append(f"use --delta {format_number(delta, up=False)} (costs eps = {text_up(epsilon, 4)})")
    elif left.delta == 0:
        options.append("the dataset's delta is spent: only pure releases (laplace, expmech) still fit")
    else:
        options.append(f"no --delta up to the {format_number(left.delta, up=False)} left makes the epsilon fit")
    return "; ".join(options) or None


def _zcdp_fixed_hint(needed: Fraction, left: Fraction) -> str:
    """A fixed zcdp budget: what is left, and how much more noise would fit.
    A Gaussian's rho is Delta^2 / (2 sigma^2) (Bun & Steinke 2016, Prop. 1.6):
    sigma times c divides it by c^2, so c >= sqrt(needed / left) fits."""
    from fuzzpy.language.figures import text_down, text_up

    if left <= 0:
        return "the dataset's zcdp budget is spent: no further release fits (--delta does not change rho)"
    factor = math.nextafter(math.sqrt(float(needed / left)) * (1 + 1e-12), math.inf)
    return (f"the release needs rho = {text_up(needed)} and {text_down(left)} is left (--delta does not "
            f"change rho): use fewer rounds or more noise, e.g. every Gaussian sigma times at least "
            f"{text_up(factor, 4)}")


def pure_budget_hint(budget_fixed: bool) -> str:
    """FZ603 under the basic rule: an approximate release, a pure budget."""
    if budget_fixed:
        return ("this dataset's budget has delta = 0: only pure releases (laplace, expmech) can be "
                "charged to it")
    return (f"give the budget a delta, e.g. --budget EPS,{DEFAULT_DELTA_TEXT} (the release is charged "
            f"at --delta, default {DEFAULT_DELTA_TEXT})")
