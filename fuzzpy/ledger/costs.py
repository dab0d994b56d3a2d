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
    the accountant applies within it), and the method's name: the
    accountant's `charged_epsilon`, which `check` reports too."""
    epsilon, method = _accountant().charged_epsilon(tuple(events), delta)
    if epsilon is None:
        raise CostUnavailable(f"no method proves a finite epsilon at delta={text_up(delta)}")
    return epsilon, method
