"""A Poisson-subsampled discrete Gaussian under the zcdp rule is charged its
un-amplified rho (review s28: `run --rule zcdp` refused it FZ603, the
subsampled body having no (eps, 0) summary). Subsampling never raises the
Renyi divergence of any order (the joint convexity argument in
`accounting.accountant.rho`), so the body's rho is a valid charge."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.accounting.accountant import rho
from fuzzpy.accounting.events import DiscreteGaussian, Gaussian, Laplace, Subsample
from fuzzpy.cli import main


def test_the_subsampled_body_keeps_its_own_rho() -> None:
    body = (DiscreteGaussian(1, 3), DiscreteGaussian(Fraction(3, 2), 4))
    # ceil(s)^2 / (2 sigma^2): 1/18 + 4/32
    assert rho([Subsample(Fraction(1, 20), body)]) == Fraction(1, 18) + Fraction(1, 8)
    assert rho([Subsample(Fraction(1, 20), body), Gaussian(1, 2)]) == Fraction(1, 18) + Fraction(1, 8) + Fraction(1, 8)


def test_a_pure_body_is_still_charged_its_amplified_rho_when_smaller() -> None:
    alone = rho([Laplace(1, 1)])
    sampled = rho([Subsample(Fraction(1, 100), (Laplace(1, 1),))])
    assert alone is not None and sampled is not None and sampled < alone


def test_a_replace_one_sample_is_charged_the_body_at_distance_two() -> None:
    # the replaced row in the sample on both sides: two add/remove steps, 2^2 rho (group privacy)
    assert rho([Subsample(Fraction(1, 20), (DiscreteGaussian(1, 3),), replace=True)]) == 4 * Fraction(1, 18)


@pytest.mark.slow
def test_run_under_the_zcdp_rule_charges_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "s.fz"
    program.write_text("type T = { v : int };\n"
                       "def noisy_share (rows : bag T) : fuzzy int =\n"
                       "  subsample[1/4] (fun part -> dgauss[5] (size part)) rows;\n")
    data = tmp_path / "t.csv"
    data.write_text("v\n" + "\n".join(str(i) for i in range(40)) + "\n")
    code = main(["run", str(program), "noisy_share", "--data", f"rows={data}", "--budget", "3,0.0001",
                 "--rule", "zcdp", "--ledger", str(tmp_path / "l.sqlite"), "--seed", "7", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert Fraction(str(json.loads(out)["charged"]["rho"])) == Fraction(1, 50)
