"""The ledger's API: budgets, exact boundaries, refusals, history."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from fuzzpy.accounting.events import Gaussian, Laplace, Verified
from fuzzpy.commands.common import exit_code_for
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.book import Budget, Ledger, dataset_key, default_ledger_path
from fuzzpy.ledger.rules import RULES, Spend, rule_named

TENTH = (Laplace(Fraction(1), Fraction(10)),)  # 0.1-DP


def codes(error: pytest.ExceptionInfo[FuzzError]) -> list[str]:
    return [d.code for d in error.value.diagnostics]


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    with Ledger(tmp_path / "ledger.sqlite") as opened:
        yield opened


def test_ten_tenths_fit_a_budget_of_one_exactly(ledger: Ledger) -> None:
    for _ in range(10):
        ledger.charge("people", TENTH, Budget(1.0))
    with pytest.raises(FuzzError) as refused:
        ledger.charge("people", TENTH, Budget(1.0))
    assert codes(refused) == ["FZ601"]
    assert exit_code_for(refused.value.diagnostics) == 3
    ((name, budget, spent, remaining),) = ledger.datasets()
    assert spent == Spend(Fraction(1), Fraction(0)) and remaining == Spend()
    assert len(ledger.history("people")) == 10


def test_float_budget_is_read_as_the_decimal_the_user_wrote(ledger: Ledger) -> None:
    assert Budget(0.3).epsilon == Fraction(3, 10)
    for _ in range(3):
        ledger.charge("d", TENTH, Budget(0.3))
    with pytest.raises(FuzzError):
        ledger.quote("d", TENTH, Budget(0.3))


def test_over_budget_refusal_charges_nothing_and_quote_writes_nothing(ledger: Ledger) -> None:
    ledger.charge("d", TENTH, Budget(0.25))
    ledger.charge("d", TENTH, Budget(0.25))
    before = ledger.path.read_bytes()
    with pytest.raises(FuzzError) as quoted:
        ledger.quote("d", TENTH, Budget(0.25))
    with pytest.raises(FuzzError) as charged:
        ledger.charge("d", TENTH, Budget(0.25))
    assert codes(quoted) == codes(charged) == ["FZ601"]
    assert ledger.path.read_bytes() == before
    assert [e.id for e in ledger.history()] == [1, 2]
    quote = ledger.quote("d", (Laplace(Fraction(1), Fraction(20)),), Budget(0.25))
    assert quote.remaining == Spend(Fraction(0), Fraction(0))
    assert ledger.path.read_bytes() == before


def test_refusal_names_cost_spent_and_total(ledger: Ledger) -> None:
    ledger.charge("d", TENTH, Budget(0.15))
    with pytest.raises(FuzzError) as refused:
        ledger.quote("d", TENTH, Budget(0.15))
    message = refused.value.diagnostics[0].message
    assert "0.1" in message and "0.15" in message and "0.05" in message


def test_budget_is_fixed_by_the_first_release(ledger: Ledger) -> None:
    ledger.charge("d", TENTH, Budget(1))
    with pytest.raises(FuzzError) as different:
        ledger.charge("d", TENTH, Budget(2))
    assert codes(different) == ["FZ602"]
    with pytest.raises(FuzzError) as other_rule:
        ledger.quote("d", TENTH, Budget(1, 1e-6, "zcdp"))
    assert codes(other_rule) == ["FZ602"]
    ledger.charge("d", TENTH, Budget("1.0"))  # same budget written differently
    ledger.charge("d", TENTH)  # no budget: the stored one
    assert ledger.budget("d") == Budget(1)
    assert len(ledger.history("d")) == 3


def test_no_budget_anywhere_is_a_usage_error(ledger: Ledger) -> None:
    with pytest.raises(FuzzError) as missing:
        ledger.quote("new", TENTH)
    assert codes(missing) == ["FZ715"]
    assert exit_code_for(missing.value.diagnostics) == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: Budget(0),
        lambda: Budget(-1),
        lambda: Budget(1, 1),
        lambda: Budget(1, -0.1),
        lambda: Budget(float("inf")),
        lambda: Budget(1, 0, "zcdp"),
        lambda: Budget(1, 0, "advanced"),
        lambda: Budget.parse("1,2,3"),
        lambda: Budget.parse("one"),
    ],
)
def test_invalid_budgets_are_usage_errors(make) -> None:
    with pytest.raises(FuzzError) as invalid:
        make()
    assert codes(invalid) == ["FZ714"]
    assert exit_code_for(invalid.value.diagnostics) == 2


def test_budget_parse_is_exact() -> None:
    assert Budget.parse("1.0,1e-6") == Budget(Fraction(1), Fraction(1, 10**6))
    assert Budget.parse(" 0.5 ").delta == 0
    assert Budget.parse("2,1e-5", "zcdp").rule == "zcdp"


def test_approximate_release_against_a_pure_budget_is_refused(ledger: Ledger) -> None:
    with pytest.raises(FuzzError) as refused:
        ledger.quote("d", (Gaussian(Fraction(1), Fraction(5)),), Budget(1))
    assert codes(refused) == ["FZ603"]


def test_basic_rule_spends_delta_as_well(ledger: Ledger) -> None:
    budget = Budget(10, 1e-6)
    noisy = (Gaussian(Fraction(1), Fraction(100)),)
    first = ledger.charge("d", noisy, budget, release_delta="5e-7")
    assert first.cost.spend.delta == Fraction(5, 10**7)
    assert 0 < first.cost.spend.epsilon < 1
    ledger.charge("d", noisy, budget, release_delta="5e-7")
    with pytest.raises(FuzzError) as refused:
        ledger.quote("d", noisy, budget, release_delta="1e-12")
    assert codes(refused) == ["FZ601"]  # epsilon is left, delta is not
    ledger.charge("d", TENTH, budget)  # a pure release still fits


def test_default_release_delta_is_the_policy_delta_whatever_the_budget(ledger: Ledger) -> None:
    """The delta policy: an approximate release is charged at 1e-6 unless the
    caller chooses, as `check` reports it (not a share of the budget's delta)."""
    for dataset, budget in (("d", Budget(5, 1e-4)), ("e", Budget(5, 1e-6))):
        receipt = ledger.charge(dataset, (Gaussian(Fraction(1), Fraction(50)),), budget)
        assert receipt.cost.spend.delta == Fraction(1, 10**6)
    with pytest.raises(FuzzError) as refused:  # 1e-6 does not fit a budget of 1e-7 ...
        ledger.quote("f", (Gaussian(Fraction(1), Fraction(50)),), Budget(5, 1e-7))
    assert codes(refused) == ["FZ601"]
    hint = refused.value.diagnostics[0].hint
    assert hint is not None and "use --delta 1e-07" in hint  # ... and the refusal says what would
    assert ledger.quote("f", (Gaussian(Fraction(1), Fraction(50)),), Budget(5, 1e-7),
                        release_delta="1e-7").cost.spend.delta == Fraction(1, 10**7)


def test_zcdp_rule_admits_exactly_floor_capacity_over_rho(ledger: Ledger) -> None:
    budget = Budget(1, 1e-6, "zcdp")
    capacity = rule_named("zcdp").capacity(budget).rho
    release = (Gaussian(Fraction(1), Fraction(10)),)  # rho = 1/200 exactly
    fitting = int(capacity / Fraction(1, 200))
    assert fitting >= 2
    for _ in range(fitting):
        ledger.charge("d", release, budget)
    with pytest.raises(FuzzError) as refused:
        ledger.charge("d", release, budget)
    assert codes(refused) == ["FZ601"]
    ((_, _, spent, remaining),) = ledger.datasets()
    assert spent.rho == fitting * Fraction(1, 200)
    assert 0 <= remaining.rho < Fraction(1, 200)


def test_zcdp_rule_beats_basic_for_many_small_releases(ledger: Ledger) -> None:
    """The filter's point: over 100 releases of 0.02-DP each fit (eps=1,
    delta=1e-6) under zCDP, where basic composition stops at 50."""
    budget = Budget(1, 1e-6, "zcdp")
    small = (Laplace(Fraction(1), Fraction(50)),)
    charged = ledger.quote("d", small, budget).cost.spend.rho
    fitting = int(rule_named("zcdp").capacity(budget).rho / charged)
    assert fitting > 100
    for _ in range(fitting):
        ledger.charge("d", small, budget)
    with pytest.raises(FuzzError):
        ledger.charge("d", small, budget)


def test_zcdp_rule_charges_the_tight_laplace_rho(ledger: Ledger) -> None:
    """A Laplace release with sensitivity/scale 1/2 is charged
    rho = eps + e^-eps - 1 (Harrison & Manurangsi 2025), rounded up, not
    BS16's eps^2/2: 15% less, so more releases fit."""
    budget = Budget(10, 1e-6, "zcdp")
    half = (Laplace(Fraction(1), Fraction(2)),)
    charged = ledger.quote("d", half, budget).cost.spend.rho
    with mpmath.workprec(200):
        exact = mpmath.mpf(0.5) + mpmath.exp(-0.5) - 1
        assert exact <= fraction_to_mp(charged) <= exact * (1 + mpmath.mpf(2) ** -50)
    capacity = rule_named("zcdp").capacity(budget).rho
    fitting = int(capacity / charged)
    assert fitting > int(capacity / Fraction(1, 8))  # more than at eps^2/2 = 1/8
    for _ in range(fitting):
        ledger.charge("d", half, budget)
    with pytest.raises(FuzzError) as refused:
        ledger.charge("d", half, budget)
    assert codes(refused) == ["FZ601"]


def fraction_to_mp(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def test_zcdp_refuses_events_without_a_zcdp_bound(ledger: Ledger) -> None:
    approx = (Verified("m", Fraction(1, 2), Fraction(1, 10**9)),)
    with pytest.raises(FuzzError) as refused:
        ledger.quote("d", approx, Budget(1, 1e-6, "zcdp"))
    assert codes(refused) == ["FZ603"]


@pytest.mark.parametrize("rule", sorted(RULES))
def test_rules_accept_at_equality_and_refuse_just_past_it(rule: str) -> None:
    filter_rule = RULES[rule]
    tiny = Fraction(1, 10**30)
    capacity = Spend(Fraction(1), Fraction(1, 10**6), Fraction(1, 40))
    cost = Spend(Fraction(1, 10), Fraction(1, 10**7), Fraction(1, 400))
    spent = capacity - cost
    assert filter_rule.fits(spent, cost, capacity)
    past = Spend(spent.epsilon + tiny, spent.delta + tiny, spent.rho + tiny)
    assert not filter_rule.fits(past, cost, capacity)


def test_charge_many_is_all_or_nothing(ledger: Ledger) -> None:
    ledger.charge("b", TENTH, Budget(0.1))
    with pytest.raises(FuzzError) as refused:
        ledger.charge_many([("a", TENTH, Budget(1)), ("b", TENTH, Budget(0.1))])
    assert codes(refused) == ["FZ601"]
    assert ledger.history("a") == [] and ledger.budget("a") is None
    receipts = ledger.charge_many([("a", TENTH, Budget(1)), ("c", TENTH, Budget(1))])
    assert [r.dataset for r in receipts] == ["a", "c"]


def test_history_keeps_events_program_and_remaining(ledger: Ledger, tmp_path: Path) -> None:
    program = tmp_path / "count.fz"
    program.write_text("def noisy ...\n")
    events = (Laplace(Fraction(2), Fraction(40)), Verified("svt", Fraction(1, 20)))
    receipt = ledger.charge("d", events, Budget(1), program=program, definition="noisy")
    (entry,) = ledger.history()
    assert entry.events == events
    assert entry.program == str(program) and entry.definition == "noisy"
    assert entry.program_sha256 == dataset_key(program).removeprefix("sha256:")
    assert entry.cost.spend == receipt.cost.spend == Spend(Fraction(1, 10), Fraction(0))
    assert entry.remaining == Spend(Fraction(9, 10), Fraction(0))
    # the stored events reproduce the stored charge under the dataset's rule
    recomputed = rule_named("basic").cost(entry.events, entry.budget, None)
    assert recomputed.spend == entry.cost.spend
    document = receipt.to_json()
    assert document["charged"]["exact"]["epsilon"] == "1/10"
    assert document["remaining"]["epsilon"] == pytest.approx(0.9)


def test_default_path_honours_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FUZZPY_LEDGER", str(tmp_path / "mine.sqlite"))
    assert default_ledger_path() == tmp_path / "mine.sqlite"
    monkeypatch.delenv("FUZZPY_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_ledger_path() == tmp_path / "data" / "fuzzpy" / "ledger.sqlite"
    with Ledger() as opened:  # creates the directory
        assert opened.path.exists()
