"""One dataset behind two parameters of a `run` (`--data a=d --data b=d`),
charged the chain of the two parameters' own guarantees (issue 28).

Moving from (x, x) to (x', x') one parameter at a time, step one costs what
the definition costs in `a` and step two what it costs in `b`: (eps_a +
eps_b, delta_a + e^eps_a delta_b). Before, the group rule over both steps
was applied to BOTH parameters' events together (2 steps of the composition
of 100 Gaussians: 35.57 below, where the chain gives about 22.4).

The references are Balle & Wang's exact Gaussian curve (scipy), never the
accountant:

* validity: a definition whose ONE draw per round reads both parameters
  (`gauss[4] (sum a + sum b)`) has the same per-parameter events as one
  with a draw per parameter, and on one dataset its rounds are Gaussians of
  twice the shift: 50 rounds at mu = 2 sqrt(50) / 4; the charge must cover it;
* tightness: the best chain over every split of delta between the steps.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from scipy.stats import norm

from fuzzpy.accounting import accountant
from fuzzpy.accounting.events import Gaussian, Group, Repeat
from fuzzpy.cli import main

PROGRAM = """
def apart (a : bag num) (b : bag num) : fuzzy num =
  loop[50] 0 (fun t -> { sample x = gauss[4] (sum[-1, 1] a); sample y = gauss[4] (sum[-1, 1] b); return x + y });
def shared (a : bag num) (b : bag num) : fuzzy num =
  loop[50] 0 (fun t -> gauss[4] (sum[-1, 1] a + sum[-1, 1] b));
"""

DELTA = 1e-6


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The least eps with Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) <= delta."""
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        gap = norm.cdf(-mid / mu + mu / 2) - math.exp(mid) * norm.cdf(-mid / mu - mu / 2)
        lo, hi = (mid, hi) if gap > delta else (lo, mid)
    return hi


def best_chain(mu: float, delta: float, grid: int = 60) -> float:
    """min over delta_1 of eps(mu, delta_1) + eps(mu, (delta - delta_1) e^-eps_1)
    (delta_1 on a grid: the minimum found is at least the true one)."""
    best = math.inf
    for i in range(1, grid):
        first = delta * i / grid
        eps1 = gaussian_epsilon(mu, first)
        best = min(best, eps1 + gaussian_epsilon(mu, (delta - first) * math.exp(-eps1)))
    return best


def test_the_accountant_charges_the_chain_of_two_routes() -> None:
    """The events `run` records for one dataset behind two parameters, each
    of whose costs is 50 Gaussian draws (`events.Group.chained`)."""
    route = (Repeat(50, (Gaussian(Fraction(1), Fraction(4)),)),)
    chained = (Group(Fraction(2), (Repeat(1, route), Repeat(1, route)), chained=True),)
    found = accountant.tightest(chained, DELTA).epsilon
    assert found >= gaussian_epsilon(2 * math.sqrt(50) / 4, DELTA) * (1 - 1e-9)  # one draw reading both
    assert found <= 22.4245 * 1.01  # the best chain (`best_chain`; slow test below)
    # read as a plain group of both routes' events, as before: 35.5663
    assert accountant.tightest((Group(Fraction(2), route + route),), DELTA).epsilon > 35.5


@pytest.fixture(scope="module")
def charged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    root = tmp_path_factory.mktemp("chain")
    program, data, ledger = root / "p.fz", root / "d.csv", root / "l.sqlite"
    program.write_text(PROGRAM)
    data.write_text("v\n" + "\n".join(["0.25", "-1", "1"] * 7) + "\n")
    out: dict[str, float] = {}
    for name in ("apart", "shared"):
        name_ledger = ledger.with_name(f"{name}.sqlite")
        assert main(["dataset", "register", "d", str(data), "--budget", "100,1e-5", "--ledger", str(name_ledger)]) == 0
        assert main(["run", str(program), name, "--data", "a=d", "--data", "b=d",
                     "--ledger", str(name_ledger), "--json"]) == 0  # charged at the default delta, 1e-6
        out[name] = _charged_epsilon(name_ledger)
    return out


def _charged_epsilon(ledger: Path) -> float:
    """The release's epsilon as the ledger stored it (an exact fraction)."""
    import sqlite3

    with sqlite3.connect(ledger) as connection:
        (epsilon,) = connection.execute("SELECT epsilon FROM releases").fetchone()
    return float(Fraction(epsilon))


@pytest.mark.slow
def test_the_chain_covers_one_draw_reading_both(charged: dict[str, float]) -> None:
    truth = gaussian_epsilon(2 * math.sqrt(50) / 4, DELTA)  # 22.4245
    assert charged["shared"] >= truth * (1 - 1e-9), (charged, truth)
    assert charged["apart"] >= truth * (1 - 1e-9), (charged, truth)  # the same events


@pytest.mark.slow
def test_the_chain_is_near_its_best_split(charged: dict[str, float]) -> None:
    best = best_chain(math.sqrt(50) / 4, DELTA)
    assert charged["apart"] <= best * 1.01, (charged, best)
    assert charged["apart"] < 35.5663 / 1.5  # the group of both parameters' events, before
