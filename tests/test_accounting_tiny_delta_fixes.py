"""Regressions from the deep-delta audit (issue 25): figures that were inf, or
left to looser methods, at deltas far below 1e-30. Exact values from
tests/test_accounting_deep_delta.py's mpmath references (k-fold Laplace by its
Laplace transform, bisected to 1e-9 relative)."""

from __future__ import annotations

import math
import re
from fractions import Fraction as F

import pytest

from fuzzpy.accounting import composition, pld
from fuzzpy.accounting.accountant import atoms_of, guarantees, tightest
from fuzzpy.accounting.events import Laplace, Repeat, Verified
from fuzzpy.cli import main

LAPLACE_1000 = [Repeat(1000, (Laplace(F(1), F(10)),))]
# exact epsilon of 1000-fold Laplace(eps0 = 1/10) at delta 1e-300 lies in this bracket
EXACT_1E300 = (99.9580302952, 99.9580303905)


def test_kov_answers_at_the_top_loss_when_the_float_product_rounds_below_it():
    # 1000 * 0.1 rounds to 100.0, below the exact top loss 1000 * 0.1000000000000000055:
    # the check there failed and KOV answered inf
    eps = composition.kov_epsilon(0.1, 0.0, 1000, 1e-300)
    assert math.isfinite(eps) and eps >= 100.0


def test_basic_composition_of_pure_events_holds_at_every_delta():
    # pure events use no delta: basic composition is sum eps at any delta (was inf below ~1e-30)
    atoms = atoms_of(LAPLACE_1000, 1e-300)
    for delta in (1e-20, 1e-40, 1e-300):
        assert composition.basic(atoms, delta) == composition.basic(atoms, 1e-3)
        assert 100.0 <= composition.basic(atoms, delta) < 100.0 * (1 + 1e-12)


def test_pld_answers_at_1e_300_within_a_millionth_of_exact():
    eps = pld.epsilon(atoms_of(LAPLACE_1000, 1e-300), 1e-300)
    assert eps is not None and EXACT_1E300[1] <= eps <= EXACT_1E300[0] * (1 + 1e-6)
    found = tightest(LAPLACE_1000, 1e-300)
    assert found.method == "pld" and found.epsilon == eps


@pytest.mark.slow  # ~3.5 s: every method, rdp-sharp and advanced included
def test_no_printed_method_is_infinite_for_pure_laplace_at_1e_300(capsys):
    assert main(["budget", "--laplace", "0.1", "--rounds", "1000", "--delta", "1e-300"]) == 0
    printed = dict(re.findall(r"^\s+(\S+)\s+eps =\s+(\S+)\s", capsys.readouterr().out, re.M))
    assert printed and "inf" not in printed.values(), printed
    assert all(float(value) >= EXACT_1E300[1] for value in printed.values())


def test_heterogeneous_events_answer_near_their_top_loss():
    # pure events of two sizes and an (eps, delta) one: Murtagh-Vadhan, finite at 1e-300
    events = [Repeat(1000, (Verified("a", F(1, 10), F(0)),)), Verified("b", F(3, 10), F(1, 10**305))]
    found = {g.method: g.epsilon for g in guarantees(events, 1e-300)}
    assert math.isfinite(found["kov"]) and 100.3 <= found["kov"] <= 100.3 * (1 + 1e-12)
    assert math.isfinite(found["basic"])
