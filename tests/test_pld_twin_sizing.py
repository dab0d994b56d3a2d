"""The PLD's speed paths (issue 25, item 5) keep every answer a valid, as-tight bound.

* DP-SGD's two directions: the second's coarse pass sizes the first's fine
  one (`pld._twin_first`); the answer must be what the plain order gives,
  and never below the proven reference brackets.
* `DeltaBound.epsilon` sums the bound at 0 only when its solve stops at the
  first node >= 0: small hand-made loss distributions whose answers are 0,
  or just above a node, are checked against the hockey-stick sum itself.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from fuzzpy.accounting import pld
from fuzzpy.accounting.accountant import atoms_of
from fuzzpy.accounting.events import Gaussian, Repeat, Subsample
from fuzzpy.accounting.pld_bound import DeltaBound

REFERENCE = Path(__file__).resolve().parent.parent / "bench" / "accounting_grid_reference.json"


def _dpsgd(q: str, sigma: str, steps: int):  # noqa: ANN202 - atoms
    return atoms_of([Repeat(steps, (Subsample(Fraction(q), (Gaussian(Fraction(1), Fraction(sigma)),)),))])


def _plain(atoms, delta: float, monkeypatch: pytest.MonkeyPatch) -> float:  # noqa: ANN001
    with monkeypatch.context() as patch:
        patch.setattr(pld, "_twin_first", lambda bounds, d: ([], math.inf))
        pld.clear_caches()
        found = pld.epsilon(atoms, delta)
    pld.clear_caches()
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("q", "sigma", "steps", "delta"),
    [("1/1000", "50", 1000, 1e-9), ("0.01", "50", 10_000, 1e-5), ("1/100", "2", 300, 1e-7)],
)
def test_twin_sizing_is_as_tight_as_the_plain_order(q, sigma, steps, delta, monkeypatch):
    atoms = _dpsgd(q, sigma, steps)
    pld.clear_caches()
    sized = pld.epsilon(atoms, delta)
    plain = _plain(atoms, delta, monkeypatch)
    assert sized is not None
    assert sized <= plain * (1 + 1e-9)
    # both are proven bounds on one grid family: they differ by the grid only
    assert sized >= plain * (1 - 1e-3)


def _reference() -> list[tuple[str, str, int, float, float]]:
    table = json.loads(REFERENCE.read_text())
    rows = []
    for key, value in table.items():
        name, delta = key.split("|")
        if not name.startswith("dp-sgd") or "sigma=2 " not in name + " ":
            continue
        fields = dict(part.split("=") for part in name.split()[1:])
        rows.append((fields["q"], fields["sigma"], int(fields["k"]), float(delta), float(value[0])))
    return sorted(rows)[::5]


@pytest.mark.parametrize(("q", "sigma", "steps", "delta", "lower"), _reference())
def test_dpsgd_answers_stay_above_the_reference_lower_bracket(q, sigma, steps, delta, lower):
    pld.clear_caches()
    found = pld.epsilon(_dpsgd(q, sigma, steps), delta)
    assert found is not None and found >= lower


def _hockey_stick(losses: np.ndarray, masses: np.ndarray, eps: float) -> float:
    above = losses > eps
    return float(np.sum(masses[above] * -np.expm1(eps - losses[above])))


@pytest.mark.parametrize(
    ("losses", "masses", "target", "zero"),
    [
        ([-0.25, 0.0, 0.5, 1.0], [0.1, 0.4, 0.3, 0.2], 0.3, True),  # delta(0) ~ 0.244
        ([-0.25, 0.0, 0.5, 1.0], [0.1, 0.4, 0.3, 0.2], 0.1, False),
        ([-0.25, 0.0, 0.5, 1.0], [0.1, 0.4, 0.3, 0.2], 0.01, False),
        ([-0.75, -0.5], [0.5, 0.5], 1e-9, True),  # every loss below 0
        ([0.125 * i for i in range(1, 41)], [1 / 40] * 40, 0.05, False),
    ],
)
def test_delta_bound_epsilon_is_the_smallest_valid_one(losses, masses, target, zero):
    grid, weights = np.array(losses), np.array(masses)
    bound = DeltaBound(grid, weights, 0.0, 0.0, float(grid[0]), 0.0)
    eps = bound.epsilon(target)
    assert (eps == 0.0) is zero
    assert bound.delta(eps) <= target
    assert _hockey_stick(grid, weights, eps) <= target
    if eps > 0:  # a little less is not enough (the solve is exact up to rounding)
        assert _hockey_stick(grid, weights, eps * (1 - 1e-9) - 1e-12) > target * (1 - 1e-9)
