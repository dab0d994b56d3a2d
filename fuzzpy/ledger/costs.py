"""What one release costs, in the currencies the ledger's rules spend.

The accountant (`fuzzpy.accounting.accountant`) is the authority on a
release's pure epsilon, its zCDP rho and its tightest (epsilon, delta); this
module only asks it and turns its answers into exact Fractions (a float is
converted exactly, so the bound the accountant proved is kept as it is). The
accountant is imported on first use: showing a ledger does not need it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from types import ModuleType

from fuzzpy.accounting.events import Event
from fuzzpy.language.figures import text_up


class CostUnavailable(Exception):
    """The release's cost cannot be expressed in the currency a rule needs."""


def _accountant() -> ModuleType:
    from fuzzpy.accounting import accountant

    return accountant


def _exact(value: Fraction | float | None) -> Fraction | None:
    """An accountant number as an exact Fraction; None for none or infinity."""
    if value is None or isinstance(value, Fraction):
        return value
    number = float(value)
    return None if math.isinf(number) or math.isnan(number) else Fraction(number)


def pure_epsilon(events: Sequence[Event]) -> Fraction | None:
    """The release's pure epsilon (exact), or None if some event is not pure."""
    return _exact(_accountant().pure_epsilon(tuple(events)))


def zcdp_rho(events: Sequence[Event]) -> Fraction | None:
    """The release's rho-zCDP, or None if it has none (an event only
    (eps, delta)-DP with delta > 0: the filter needs plain zCDP)."""
    return _exact(_accountant().rho(tuple(events)))


def approximate_epsilon(events: Sequence[Event], delta: Fraction) -> tuple[Fraction, str]:
    """The smallest epsilon any valid method proves for this one release at
    ``delta`` (the release's events have fixed parameters, so every method of
    the accountant applies within it), and the method's name."""
    from fuzzpy.accounting.rounding import float_down

    # the guarantee is proved at a float no larger than the delta charged
    # (float() rounds to nearest, which may be above it)
    guarantee = _accountant().tightest(tuple(events), float_down(delta))
    epsilon = _exact(guarantee.epsilon)
    claimed = _verified_sum(events, delta)
    if claimed is not None and (epsilon is None or claimed <= epsilon):
        return claimed, "basic"
    if epsilon is None:
        raise CostUnavailable(f"no method proves a finite epsilon at delta={text_up(delta)}")
    return epsilon, str(guarantee.method)


def _verified_sum(events: Sequence[Event], delta: Fraction) -> Fraction | None:
    """Verified mechanisms' own (eps, delta) claims, added exactly (basic
    composition, Dwork & Roth 2014, Thm 3.16) when their deltas sum to at
    most ``delta``: a release at exactly its claim's delta (`privacy (1,
    0.001)` run with `--delta 0.001`) is charged the claim. The float path
    above proves its figures at a float at or below the delta, which for a
    claim of exactly 1/1000 lies below it (review s27g)."""
    from fuzzpy.accounting.events import Verified

    claims: list[tuple[Fraction, Fraction]] = []
    for event in events:
        if not isinstance(event, Verified) or not isinstance(event.epsilon, int | Fraction) \
                or not isinstance(event.delta, int | Fraction):
            return None
        claims.append((Fraction(event.epsilon), Fraction(event.delta)))
    if not claims or sum((d for _, d in claims), Fraction(0)) > delta:
        return None
    return sum((e for e, _ in claims), Fraction(0))
