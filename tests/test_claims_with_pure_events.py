"""A verified claim at delta d composed with pure releases is (sum of eps,
d)-DP by basic composition (Dwork & Roth 2014, Thm 3.16). Review s29d: a
`ptr_median` at (1, 1e-6) then a Laplace of eps 0.5 in one branch was
reported infinite at delta 1e-6, every method working at the float just
below 1e-6 where the claim's own delta no longer fits."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.accounting.accountant import charged_epsilon
from fuzzpy.accounting.events import Geometric, Laplace, LocalReports, RandomizedResponse, Verified
from fuzzpy.cli import main

MICRO = Fraction(1, 10**6)


@pytest.mark.parametrize(("events", "expected"), [
    ((Verified("ptr_median", Fraction(1), MICRO), Laplace(Fraction(1), Fraction(2))), Fraction(3, 2)),
    ((Laplace(Fraction(3), Fraction(1)), Verified("m", Fraction(1, 4), MICRO / 2),
      Verified("m", Fraction(1, 4), MICRO / 2)), Fraction(7, 2)),
    ((RandomizedResponse(Fraction(1, 3), 2), Geometric(Fraction(2), Fraction(4)), Verified("m", Fraction(1), MICRO)),
     Fraction(11, 6)),
])
def test_claims_and_pure_events_add_at_the_claims_delta(events: tuple[object, ...], expected: Fraction) -> None:
    epsilon, _ = charged_epsilon(events, MICRO)  # type: ignore[arg-type]
    assert epsilon is not None and epsilon <= expected


def test_a_delta_below_the_claims_is_still_refused() -> None:
    epsilon, _ = charged_epsilon((Verified("m", Fraction(1), MICRO), Laplace(Fraction(1), Fraction(1))), MICRO / 2)
    assert epsilon is None


def test_local_reports_are_not_summed_as_add_remove_events() -> None:
    from fuzzpy.accounting.accountant import verified_claims_sum

    assert verified_claims_sum((Verified("m", Fraction(1), MICRO), LocalReports(Fraction(1))), MICRO) is None


@pytest.mark.slow  # ~3 s: the verifier proves ptr_median's claim
def test_check_reports_the_branch_at_its_basic_composition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.fz"
    src.write_text("def mid (ages : bag num) : fuzzy num = { sample a = ptr_median[0.5, 0.000001, 1] ages;\n"
                   "  case a of | inl m -> return m | inr u -> laplace[0.5] (size ages) };\n")
    assert main(["check", "--json", str(src)]) == 0
    found = json.loads(capsys.readouterr().out)["definitions"][0]["privacy"]["ages"]
    assert float(found["epsilon"]) == pytest.approx(1.5)
