"""Epsilon against the number of rounds, one curve per accounting method."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from fuzzpy.accounting.accountant import METHODS, atoms_of
from fuzzpy.accounting.events import Event
from fuzzpy.accounting.profile import PrivacyViews, gaussian_tradeoff, tradeoff_from_profile

# drawing order and style: the exact curve (when known) on top, dashed
_STYLES: dict[str, dict[str, object]] = {
    "basic": {"color": "#999999"},
    "advanced": {"color": "#bb7733"},
    "kov": {"color": "#aa3377"},
    "zcdp": {"color": "#66ccee", "linestyle": ":"},
    "zcdp-cks": {"color": "#4477aa"},
    "rdp": {"color": "#228833"},
    "rdp-sharp": {"color": "#117733", "linestyle": "-."},
    "pld": {"color": "#ee6677", "linewidth": 2.5},
    "exact-gaussian": {"color": "#000000", "linestyle": "--"},
}


def round_grid(max_rounds: int, points: int = 24) -> list[int]:
    grid = np.unique(np.round(np.geomspace(1, max_rounds, points)).astype(int))
    return [int(k) for k in grid]


def curves(
    events_for: Callable[[int], Sequence[Event]],
    rounds: Sequence[int],
    delta: float,
    progress: Callable[[str], None] | None = None,
) -> dict[str, list[float]]:
    """eps(k) for each method that applies at every k (nan where it does not)."""
    table: dict[str, list[float]] = {name: [] for name in _STYLES}
    for i, k in enumerate(rounds, 1):
        if progress is not None:
            progress(f"plot: point {i} of {len(rounds)} (k = {k})")
        atoms = atoms_of(events_for(k), delta)
        for name in _STYLES:
            eps = METHODS[name].method(atoms, delta)
            table[name].append(math.nan if eps is None or math.isinf(eps) else eps)
    return {name: values for name, values in table.items() if not all(map(math.isnan, values))}


# legend labels: what a reader needs to tell the curves apart (the
# references are in `budget`'s table and in DESCRIPTIONS)
_LABELS: dict[str, str] = {
    "basic": "basic composition",
    "advanced": "advanced composition",
    "kov": "optimal composition (KOV)",
    "zcdp": "zCDP, simple conversion",
    "zcdp-cks": "zCDP, CKS conversion",
    "rdp": "Renyi DP (order grid)",
    "rdp-sharp": "Renyi DP (sharp, certified)",
    "pld": "privacy loss distribution",
    "exact-gaussian": "exact (analytic Gaussian)",
}


def _pyplot():  # noqa: ANN202 - matplotlib is optional (the `plot` extra)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def rounds_figure(table: dict[str, list[float]], rounds: Sequence[int], delta: float, title: str):  # noqa: ANN201
    """The figure of `plot_rounds`: one panel, the legend in its own column
    on the right (never over the curves, never off the page)."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(10, 5.5), layout="constrained")
    for name, values in table.items():
        axes.plot(rounds, values, label=_LABELS.get(name, name), **_STYLES[name])
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("number of rounds k")
    axes.set_ylabel(f"epsilon at delta = {delta:g}")
    axes.set_title(title or "privacy loss against rounds", fontsize=10, wrap=True)
    axes.grid(True, which="both", alpha=0.3)
    figure.legend(loc="outside right upper", fontsize=9, title="accounting method")
    return figure


def plot_rounds(
    events_for: Callable[[int], Sequence[Event]],
    max_rounds: int,
    delta: float,
    out: str,
    title: str = "",
    progress: Callable[[str], None] | None = None,
) -> dict[str, list[float]]:
    rounds = round_grid(max_rounds)
    table = curves(events_for, rounds, delta, progress)
    figure = rounds_figure(table, rounds, delta, title)
    figure.savefig(out, dpi=120)
    _pyplot().close(figure)
    return table


def profile_figure(views: PrivacyViews, title: str):  # noqa: ANN201
    """Three panels: the privacy profile delta(eps), the trade-off curve
    (with the line of perfect privacy, beta = 1 - alpha) and the Renyi curve."""
    plt = _pyplot()
    figure, (left, middle, right) = plt.subplots(1, 3, figsize=(13, 4.5), layout="constrained")
    points = [p for p in views.profile if p.delta > 0]
    left.plot([p.epsilon for p in points], [p.delta for p in points], "o-", color="#ee6677")
    left.set_yscale("log")
    left.set_xlabel("epsilon")
    left.set_ylabel("delta")
    left.set_title("privacy profile: (eps, delta)-DP at each point", fontsize=10)
    left.grid(True, which="both", alpha=0.3)
    dense = tuple(float(a) for a in np.concatenate([[0.0], np.geomspace(1e-4, 1.0, 80)]))
    curve = gaussian_tradeoff(views.gdp_mu, dense) if views.gdp_mu is not None else tradeoff_from_profile(views.profile, dense)
    middle.plot([0, 1], [1, 0], ":", color="#999999", label="perfect privacy")
    label = f"f-DP (Gaussian DP, mu = {views.gdp_mu:.4g})" if views.gdp_mu is not None else "f-DP from the profile"
    middle.plot([t.alpha for t in curve], [t.beta for t in curve], "-", color="#4477aa", label=label)
    middle.set_xlim(0, 1)
    middle.set_ylim(0, 1.02)
    middle.set_aspect("equal")
    middle.set_xlabel("type I error alpha")
    middle.set_ylabel("least type II error beta")
    middle.set_title("trade-off curve", fontsize=10)
    middle.grid(True, alpha=0.3)
    middle.legend(loc="upper right", fontsize=8)
    if views.renyi:
        right.plot([a for a, _ in views.renyi], [e for _, e in views.renyi], "o-", color="#228833")
        right.set_xscale("log", base=2)
        right.set_xticks([a for a, _ in views.renyi], [f"{a:g}" for a, _ in views.renyi])
        right.minorticks_off()
        values = [e for _, e in views.renyi if e > 0]
        if values and max(values) > 100 * min(values):
            right.set_yscale("log")
        right.set_xlabel("order alpha")
        right.set_ylabel("Renyi epsilon(alpha)")
        right.set_title("Renyi curve" + (f" (rho = {float(views.rho):.4g})" if views.rho is not None else ""), fontsize=10)
        right.grid(True, which="both", alpha=0.3)
    else:
        right.axis("off")
        right.text(0.5, 0.5, "no Renyi curve:\nan event has a delta of its own", ha="center", va="center")
    figure.suptitle(title, fontsize=11)
    return figure


def plot_profile(views: PrivacyViews, out: str, title: str) -> None:
    figure = profile_figure(views, title)
    figure.savefig(out, dpi=120)
    _pyplot().close(figure)
