"""What one release costs, as the ledger's composition rules need it.

The accountant (`fuzzpy.accounting.accountant`) is the authority: the ledger
asks it for a release's pure epsilon, its zCDP rho, and its tightest
(epsilon, delta). Until a function exists there, a small conservative bound
below is used instead; every bound is a valid upper bound (never tighter than
the accountant's), so switching to the accountant can only charge less.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from types import ModuleType

from fuzzpy.accounting.events import (
    Event,
    ExpMech,
    Gaussian,
    Group,
    Laplace,
    Repeat,
    Subsample,
    Verified,
)
from fuzzpy.accounting.ledger_zcdp import zcdp_epsilon


class CostUnavailable(Exception):
    """The release's cost cannot be expressed in the currency a rule needs."""


def _accountant_function(name: str) -> Callable[..., object] | None:
    module: ModuleType | None
    try:
        module = importlib.import_module("fuzzpy.accounting.accountant")
    except ImportError:
        module = None
    function = getattr(module, name, None) if module is not None else None
    return function if callable(function) else None


def _exact(value: object) -> Fraction | None:
    """An accountant number as an exact Fraction (floats are taken exactly)."""
    if value is None:
        return None
    if isinstance(value, Fraction):
        return value
    number = float(value)  # type: ignore[arg-type]
    return None if math.isinf(number) or math.isnan(number) else Fraction(number)


# ---------------------------------------------------------------- pure epsilon


def pure_epsilon(events: Sequence[Event]) -> Fraction | None:
    """The release's pure epsilon (exact), or None if some event is not pure."""
    function = _accountant_function("pure_epsilon")
    if function is not None:
        return _exact(function(tuple(events)))
    return _fallback_pure_epsilon(events)


def _fallback_pure_epsilon(events: Sequence[Event]) -> Fraction | None:
    total = Fraction(0)
    for event in events:
        cost = _event_pure_epsilon(event)
        if cost is None:
            return None
        total += cost  # basic composition (Dwork, McSherry, Nissim & Smith 2006)
    return total


def _event_pure_epsilon(event: Event) -> Fraction | None:
    if isinstance(event, Laplace):
        return Fraction(event.epsilon)
    if isinstance(event, ExpMech):
        return Fraction(event.epsilon)
    if isinstance(event, Verified):
        return Fraction(event.epsilon) if event.delta == 0 else None
    if isinstance(event, Repeat):
        body = _fallback_pure_epsilon(event.body)
        return None if body is None else event.count * body
    if isinstance(event, Group):
        body = _fallback_pure_epsilon(event.body)
        # group privacy: k-fold neighbours cost k eps (Dwork & Roth 2014, Thm 2.2)
        return None if body is None else Fraction(event.size) * body
    if isinstance(event, Subsample):
        # a Poisson subsample of neighbours is a mixture of neighbours: never
        # more than the body's cost (amplification is the accountant's job)
        return _fallback_pure_epsilon(event.body)
    return None


# ---------------------------------------------------------------- zCDP rho


def zcdp_rho(events: Sequence[Event]) -> Fraction | None:
    """The release's rho-zCDP (exact where the events give it), or None."""
    function = _accountant_function("rho")
    if function is not None:
        return _exact(function(tuple(events)))
    return _fallback_rho(events)


def _fallback_rho(events: Sequence[Event]) -> Fraction | None:
    total = Fraction(0)
    for event in events:
        cost = _event_rho(event)
        if cost is None:
            return None
        total += cost  # zCDP composes additively (Bun & Steinke 2016, Lemma 2.3)
    return total


def _event_rho(event: Event) -> Fraction | None:
    if isinstance(event, Gaussian):
        # Bun & Steinke 2016, Prop. 1.6: s^2 / (2 sigma^2)
        return Fraction(event.sensitivity) ** 2 / (2 * Fraction(event.sigma) ** 2)
    if isinstance(event, Repeat):
        body = _fallback_rho(event.body)
        return None if body is None else event.count * body
    if isinstance(event, Group):
        body = _fallback_rho(event.body)
        # Bun & Steinke 2016, Prop. 1.9: k-fold neighbours cost k^2 rho
        return None if body is None else Fraction(event.size) ** 2 * body
    if isinstance(event, Subsample):
        return _fallback_rho(event.body)  # never more than the body (see above)
    pure = _event_pure_epsilon(event)
    # Bun & Steinke 2016, Prop. 1.4: eps-DP implies eps^2/2-zCDP
    return None if pure is None else pure**2 / 2


# ---------------------------------------------------------------- (eps, delta)


def approximate_epsilon(events: Sequence[Event], delta: Fraction) -> tuple[Fraction, str]:
    """The smallest epsilon the accountant proves for the release at delta,
    rounded to an exact Fraction (floats convert exactly), and its method."""
    function = _accountant_function("tightest")
    if function is not None:
        guarantee = function(tuple(events), float(delta))
        epsilon = _exact(getattr(guarantee, "epsilon", None))
        if epsilon is None:
            raise CostUnavailable("the accountant proves no finite epsilon at this delta")
        return epsilon, str(getattr(guarantee, "method", "accountant"))
    rho = _fallback_rho(events)
    if rho is None:
        raise CostUnavailable("these events need the accountant, which is not available")
    return zcdp_epsilon(rho, delta), "zCDP (Canonne-Kamath-Steinke 2020 conversion)"
