"""Epsilon against the number of rounds, one curve per accounting method."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from fuzzpy.accounting.accountant import DESCRIPTIONS, METHODS, atoms_of
from fuzzpy.accounting.events import Event

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


def plot_rounds(
    events_for: Callable[[int], Sequence[Event]],
    max_rounds: int,
    delta: float,
    out: str,
    title: str = "",
    progress: Callable[[str], None] | None = None,
) -> dict[str, list[float]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rounds = round_grid(max_rounds)
    table = curves(events_for, rounds, delta, progress)
    figure, axes = plt.subplots(figsize=(8, 5.5))
    for name, values in table.items():
        axes.plot(rounds, values, label=DESCRIPTIONS[name], **_STYLES[name])
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("number of rounds k")
    axes.set_ylabel(f"epsilon at delta = {delta:g}")
    axes.set_title(title or "privacy loss against rounds")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out, dpi=120)
    plt.close(figure)
    return table
