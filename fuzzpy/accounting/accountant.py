"""The accountant: from privacy events to the tightest (eps, delta) it can prove.

Every method below is a valid upper bound on the privacy loss of the
(adaptive) composition of the events; `tightest` reports the smallest and
names the method that gave it. No estimate that is not an upper bound (a
central-limit approximation, an optimistic PLD) is ever used.

Methods (ids are stable; `describe(method)` gives the reference):

    pure            pure composition: eps add (exact Fractions)
    basic           (eps, delta) add
    advanced        Dwork-Rothblum-Vadhan advanced composition
    kov             Kairouz-Oh-Viswanath optimal homogeneous composition
    zcdp            zCDP, Bun-Steinke conversion
    zcdp-cks        zCDP, Canonne-Kamath-Steinke conversion
    rdp             Renyi DP over a dense order grid, Balle et al. conversion
    pld             privacy loss distributions, pessimistic, FFT
    exact-gaussian  analytic Gaussian of the composed Gaussians (exact)
"""

from __future__ import annotations

import importlib
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from fuzzpy.accounting.atoms import (
    Atoms,
    Flattener,
    GaussianAtom,
    NotSummarisable,
    SubsampledAtom,
    pure_part,
    subsampled_pure_epsilon,
)
from fuzzpy.accounting.events import Event

DESCRIPTIONS: dict[str, str] = {
    "pure": "pure composition (Dwork, McSherry, Nissim & Smith 2006)",
    "basic": "basic composition (Dwork & Roth 2014, Thm 3.16)",
    "advanced": "advanced composition (Dwork, Rothblum & Vadhan 2010)",
    "kov": "optimal homogeneous composition (Kairouz, Oh & Viswanath 2015)",
    "zcdp": "zCDP, simple conversion (Bun & Steinke 2016, Prop. 1.3)",
    "zcdp-cks": "zCDP, tight conversion (Canonne, Kamath & Steinke 2020)",
    "rdp": "Renyi DP, improved conversion (Balle et al. 2020, Thm 21)",
    "pld": "privacy loss distribution, pessimistic connect-the-dots + FFT",
    "exact-gaussian": "exact: analytic Gaussian (Balle & Wang 2018) of the composition",
    "none": "no method proves a finite epsilon at this delta",
}

# Methods whose guarantee also holds when later releases (and their privacy
# parameters) are chosen adaptively, as a privacy filter: basic composition
# (Rogers, Roth, Ullman & Vadhan 2016, privacy filters) and zCDP (a zCDP
# filter: Whitehouse, Ramdas, Rogers & Wu 2023, "Fully adaptive composition"),
# converted once at the end; pure epsilon is basic composition with delta 0.
FILTER_METHODS: tuple[str, ...] = ("pure", "basic", "zcdp")


@dataclass(frozen=True)
class Guarantee:
    """The composition is (epsilon, delta)-DP, proved by ``method``."""

    epsilon: float
    delta: float
    method: str

    @property
    def description(self) -> str:
        return DESCRIPTIONS.get(self.method, self.method)


# ---------------------------------------------------------------- flattening


def atoms_of(events: Iterable[Event], delta: float = 0.0) -> Atoms:
    """The events' atoms. Composite bodies under `subsample` / `group` are
    summarised at equal shares of half of ``delta`` (NotSummarisable without)."""
    events = tuple(events)
    sites = _SiteCounter()
    Flattener(sites.summarise, delta_share=1.0).flatten(events)
    if sites.count == 0:
        return Flattener().flatten(events)
    share = delta / (2 * sites.count)
    return Flattener(lambda body, d: _tightest_atoms(body, d).epsilon, share).flatten(events)


class _SiteCounter:
    """Counts the composite bodies a flattening summarises (first pass)."""

    def __init__(self) -> None:
        self.count = 0

    def summarise(self, body: Atoms, delta: float) -> float:
        self.count += 1
        return 0.0


# ---------------------------------------------------------------- methods


def _pure(atoms: Atoms, delta: float) -> float | None:
    total = exact_pure(atoms)
    return None if total is None else float_up(total)


def float_up(value: Fraction) -> float:
    """The smallest float >= an exact value (a float() may round down)."""
    try:
        rounded = float(value)
    except OverflowError:  # beyond the largest double: infinity is the float above it
        return math.inf if value > 0 else -sys.float_info.max
    return rounded if Fraction(rounded) >= value else math.nextafter(rounded, math.inf)


def exact_pure(atoms: Atoms) -> Fraction | None:
    total = Fraction(0)
    for atom, n in atoms.items():
        eps = pure_part(atom)
        if eps is None and isinstance(atom, SubsampledAtom):
            eps = subsampled_pure_epsilon(atom)
        if eps is None:
            return None
        total += n * eps
    return total


def _exact_gaussian(atoms: Atoms, delta: float) -> float | None:
    if not atoms or not all(isinstance(atom, GaussianAtom) for atom in atoms):
        return None
    rho = sum((atom.rho * n for atom, n in atoms.items()), Fraction(0))
    return _module("gaussian").epsilon_for_delta(GaussianAtom(rho).mu, delta)  # mu rounded up


Method = Callable[[Atoms, float], "float | None"]


def _module(name: str):  # noqa: ANN202 - one of this package's method modules
    """The approximate methods' modules load numpy, scipy and dp_accounting
    (about a second): they are imported when an approximate figure is first
    needed, so that pure costs (what `fuzzpy check` mostly asks) stay fast."""
    return importlib.import_module(f"fuzzpy.accounting.{name}")


def _method(module: str, function: str, **options: object) -> Method:
    def call(atoms: Atoms, delta: float) -> float | None:
        return getattr(_module(module), function)(atoms, delta, **options)

    return call


def _needs_delta(method: Method) -> Method:
    def guarded(atoms: Atoms, delta: float) -> float | None:
        return None if delta <= 0 else method(atoms, delta)

    return guarded


METHODS: dict[str, Method] = {
    "exact-gaussian": _needs_delta(_exact_gaussian),
    "pure": _pure,
    "basic": _needs_delta(_method("composition", "basic")),
    "advanced": _needs_delta(_method("composition", "advanced")),
    "kov": _needs_delta(_method("composition", "kov")),
    "zcdp": _needs_delta(_method("zcdp", "approximate_epsilon", tight=False)),
    "zcdp-cks": _needs_delta(_method("zcdp", "approximate_epsilon", tight=True)),
    "rdp": _needs_delta(_method("rdp", "epsilon")),
    "pld": _needs_delta(_method("pld", "epsilon")),
}


def _run(atoms: Atoms, delta: float, methods: Sequence[str]) -> list[Guarantee]:
    import numpy as np

    found = []
    for name in methods:
        try:
            with np.errstate(all="ignore"):
                eps = METHODS[name](atoms, delta)
        except (ArithmeticError, ValueError):
            # numbers beyond a double (eps0 = 1e308, sigma = 1e-300): this method
            # proves nothing here; the others' bounds stay valid on their own
            continue
        if eps is not None and not math.isnan(eps):
            found.append(Guarantee(max(0.0, eps), delta, name))
    return found


def _tightest_atoms(atoms: Atoms, delta: float, methods: Sequence[str] | None = None) -> Guarantee:
    if not atoms:
        return Guarantee(0.0, delta, "pure")
    names = list(methods or METHODS)
    # the exact value cannot be beaten by any valid bound: stop there
    if "exact-gaussian" in names:
        exact = _run(atoms, delta, ["exact-gaussian"])
        if exact and math.isfinite(exact[0].epsilon):  # inf: it overflowed, the others may not
            return exact[0]
        names.remove("exact-gaussian")
    found = [g for g in _run(atoms, delta, names) if math.isfinite(g.epsilon)]
    if not found:
        return Guarantee(math.inf, delta, "none")
    return min(found, key=lambda g: g.epsilon)


# ---------------------------------------------------------------- public API


def tightest(
    events: Iterable[Event], delta: float, methods: Sequence[str] | None = None
) -> Guarantee:
    """The smallest epsilon any valid method proves for the events at ``delta``
    (restricted to ``methods`` if given, e.g. FILTER_METHODS). epsilon is
    ``inf`` (method "none") when no method proves a finite one, e.g. for
    approximate events at delta = 0."""
    delta = float(delta)
    if not 0 <= delta <= 1:
        raise ValueError(f"delta must lie in [0, 1], got {delta}")
    try:
        atoms = atoms_of(events, delta)
    except NotSummarisable:
        return Guarantee(math.inf, delta, "none")
    return _tightest_atoms(atoms, delta, methods)


def guarantees(events: Iterable[Event], delta: float) -> list[Guarantee]:
    """What every applicable method proves (the exact one included), tightest first."""
    try:
        atoms = atoms_of(events, float(delta))
    except NotSummarisable:
        return []
    found = _run(atoms, float(delta), list(METHODS)) if atoms else []
    return sorted(found, key=lambda g: g.epsilon)


def pure_epsilon(events: Iterable[Event]) -> Fraction | None:
    """The exact pure epsilon of the events (basic composition of pure DP,
    which is tight for pure DP in general), or None if some event is not
    pure. Subsampled pure events are amplified, rounded up to a Fraction."""
    try:
        return exact_pure(atoms_of(events))
    except NotSummarisable:
        return None


def rho(events: Iterable[Event]) -> Fraction | None:
    """The events' total rho-zCDP (Bun & Steinke 2016), exact or rounded up
    (the tight pure and Laplace values, `zcdp.atom_rho`), or None when an
    event is only approximately DP (delta > 0)."""
    try:
        total, delta = _module("zcdp").total_rho(atoms_of(events))
    except NotSummarisable:
        return None
    return total if delta == 0 else None


def compose_releases(
    releases: Iterable[Sequence[Event]], delta: float, methods: Sequence[str] | None = None
) -> Guarantee:
    """The tightest guarantee for several releases on one dataset (composition
    across runs is composition of all their events)."""
    return tightest(combined_events(releases), delta, methods)


def combined_events(releases: Iterable[Sequence[Event]]) -> tuple[Event, ...]:
    return tuple(event for release in releases for event in release)


def atoms_summary(events: Iterable[Event]) -> Counter:
    """The flattened atoms (for display and tests)."""
    return atoms_of(events)
