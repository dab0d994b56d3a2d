"""Issue 25 (c): the ledger's zcdp rule and Poisson-subsampled Gaussians.

zCDP has no amplification by subsampling, so the rule charges the full rho
(valid) and says, with warning FZ604, how far that is above the release's
tight cost and what to use instead. The tight cost is checked against an
independent Renyi upper bound (tests/dp_reference/renyi_upper.py).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from dp_reference.renyi_upper import epsilon_upper

from fuzzpy.accounting.events import Gaussian, Laplace, Repeat, Subsample
from fuzzpy.ledger.book import Ledger
from fuzzpy.ledger.rules import Budget

DELTA = Fraction(1, 10**5)


def dp_sgd(steps: int, rate: Fraction, sigma: Fraction) -> tuple[Repeat, ...]:
    return (Repeat(steps, (Subsample(rate, (Gaussian(Fraction(1), sigma),)),)),)


@pytest.fixture
def ledger(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite") as book:
        yield book


def test_fifty_dp_sgd_steps_are_charged_full_rho_and_warned(ledger):
    events = dp_sgd(50, Fraction(1, 100), Fraction(2))
    receipt = ledger.charge("train", events, Budget(40, DELTA, "zcdp"))
    # the full rho: 50 steps of 1 / (2 * 2^2) each, exactly
    assert receipt.cost.spend.rho == Fraction(50, 8)
    (note,) = receipt.cost.notes
    assert note.startswith("the zcdp rule charges subsampled steps") and "--rule basic" in note
    assert receipt.charged_json()["notes"] == [note]
    # the tight figure quoted is a proven bound below an independent Renyi bound
    upper, _ = epsilon_upper(Fraction(1, 100), Fraction(1, 2), 50, float(DELTA))
    tight = float(note.split("tight cost is eps=")[1].split(" ")[0].lstrip("~"))
    assert tight <= upper * (1 + 1e-5)
    assert float(receipt.cost.epsilon) > 1.5 * upper


def test_the_same_release_under_basic_costs_the_tight_value(ledger):
    events = dp_sgd(50, Fraction(1, 100), Fraction(2))
    receipt = ledger.charge("train", events, Budget(1, DELTA, "basic"), release_delta=DELTA)
    upper, _ = epsilon_upper(Fraction(1, 100), Fraction(1, 2), 50, float(DELTA))
    assert receipt.cost.epsilon <= Fraction(upper) and not receipt.cost.notes


@pytest.mark.parametrize(
    "events",
    [
        (Gaussian(Fraction(1), Fraction(3)),),  # nothing to amplify
        (Repeat(20, (Subsample(Fraction(1, 10), (Laplace(Fraction(1), Fraction(2)),)),)),),  # pure: amplified rho
        dp_sgd(1, Fraction(19, 20), Fraction(4)),  # rate 0.95: the full rho is near tight
    ],
)
def test_no_warning_where_the_charge_is_near_tight(ledger, events):
    quote = ledger.quote("d", events, Budget(40, DELTA, "zcdp"))
    assert quote.cost.notes == ()
    assert "notes" not in quote.charged_json()


def test_a_refusal_under_zcdp_says_why_the_cost_is_high(ledger):
    from fuzzpy.language.diagnostics import FuzzError

    events = dp_sgd(50, Fraction(1, 100), Fraction(2))
    with pytest.raises(FuzzError) as refused:
        ledger.quote("train", events, Budget(5, DELTA, "zcdp"))  # rho 6.25 > the budget's
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "FZ601"
    assert any("zCDP cannot credit subsampling" in note for note in diagnostic.notes)


SGD_PROGRAM = """\
type Row = { x : num };

def step (db : bag Row) (t : num) : fuzzy num =
  subsample[0.01] (fun b -> gauss[2] (sum[0, 1] (map (fun r -> r.x) b))) db;

def train (db : bag Row) : fuzzy num = loop[50] 0 (fun t -> step db t);
"""


def test_run_under_zcdp_warns_with_fz604(tmp_path, capsys):
    pytest.importorskip("fuzzpy.checker")
    from fuzzpy.cli import main

    program = tmp_path / "sgd.fz"
    program.write_text(SGD_PROGRAM)
    data = tmp_path / "rows.csv"
    data.write_text("x\n" + "".join(f"{i % 3}\n" for i in range(50)))
    argv = ["run", str(program), "train", "--data", f"db={data}", "--ledger", str(tmp_path / "l.sqlite"),
            "--budget", "40,1e-5", "--rule", "zcdp", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "warning[FZ604]" in captured.err and "--rule basic" in captured.err
    assert json.loads(captured.out)["warnings"][0].startswith("warning[FZ604]")


def test_a_refusal_against_a_fixed_zcdp_budget_gives_a_hint(ledger):
    """Review (a): a release over a fixed zcdp budget was refused with no
    hint; the hint's noise factor makes the release fit."""
    from fuzzpy.language.diagnostics import FuzzError

    budget = Budget(10, DELTA, "zcdp")  # rho ~1.7
    ledger.set_budget("clinic", budget)
    first = ledger.charge("clinic", (Gaussian(Fraction(1), Fraction(1)),), budget)
    assert first.cost.spend.rho == Fraction(1, 2)
    heavy = (Repeat(3, (Gaussian(Fraction(2), Fraction(3, 2)),)),)  # rho 3 * 4 / 4.5 = 8/3
    with pytest.raises(FuzzError) as refused:
        ledger.charge("clinic", heavy, budget)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "FZ601" and diagnostic.hint, diagnostic
    assert "--delta does not change rho" in diagnostic.hint
    factor = Fraction(diagnostic.hint.rsplit("at least ", 1)[1].lstrip("~"))
    scaled = (Repeat(3, (Gaussian(Fraction(2), Fraction(3, 2) * factor),)),)
    assert ledger.charge("clinic", scaled, budget).cost.spend.rho > 0  # it fits now
    with pytest.raises(FuzzError) as spent:
        ledger.charge("clinic", heavy, budget)
    assert "rho" in spent.value.diagnostics[0].hint
