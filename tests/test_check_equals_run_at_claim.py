"""`check --delta D` reports what `run --delta D` charges, by one function
(`accounting.accountant.charged_epsilon`; review s28: `check --delta 1e-7
examples/busiest_age_bracket.fz` said FZ314 while `run` charged the
mechanism's claim (1, 1e-7): check's float 1e-7 lies just below 1/10^7)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.cli import main

ROOT = Path(__file__).resolve().parent.parent
PEOPLE = ROOT / "examples" / "data" / "people.csv"

TWO_CLAIMS = """type R = { age : num };
mechanism first (q : vec[inf] num, e : num) : num
  requires e > 0
  requires len(q) <= 1
  privacy (e, 3/10000)
{ return q[0] + lap(1 / e); }
mechanism second (q : vec[inf] num, e : num) : num
  requires e > 0
  requires len(q) <= 1
  privacy (e, 0.0007)
{ return q[0] + lap(1 / e); }
def both (db : bag R) : fuzzy num = {
  sample a = first (tabulate [0] (fun t -> size db)) 1;
  sample b = second (tabulate [0] (fun t -> size db)) (1/4);
  return a - b
};
"""


def _checked_epsilon(capsys: pytest.CaptureFixture[str], program: Path, name: str, delta: str) -> Fraction:
    code = main(["check", "--delta", delta, "--json", str(program)])
    out = capsys.readouterr().out
    assert code == 0, out
    found = next(d for d in json.loads(out)["definitions"] if d["name"] == name)
    return Fraction(str(found["privacy"]["db"]["epsilon"]))


def _charged_epsilon(capsys: pytest.CaptureFixture[str], program: Path, name: str, delta: str, data: Path,
                     ledger: Path) -> Fraction:
    code = main(["run", str(program), name, "--data", f"db={data}", "--budget", "9,0.01", "--delta", delta,
                 "--ledger", str(ledger), "--seed", "3", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return Fraction(str(json.loads(out)["charged"]["epsilon"]))


@pytest.mark.slow  # the accountant's methods at 1e-7: seconds
def test_check_accepts_a_claim_at_exactly_its_delta(capsys: pytest.CaptureFixture[str]) -> None:
    program = ROOT / "examples" / "busiest_age_bracket.fz"
    assert _checked_epsilon(capsys, program, "busiest_bracket", "1e-7") == 1  # was FZ314, "no finite epsilon"
    assert _checked_epsilon(capsys, program, "busiest_bracket", "1/10000000") == 1


@pytest.mark.slow
def test_check_accepts_a_claim_at_exactly_its_delta_as_run_charges_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = ROOT / "examples" / "busiest_age_bracket.fz"
    checked = _checked_epsilon(capsys, program, "busiest_bracket", "1e-7")
    charged = _charged_epsilon(capsys, program, "busiest_bracket", "0.0000001", PEOPLE, tmp_path / "l.sqlite")
    assert checked == charged == 1


@pytest.mark.slow
def test_two_claims_whose_deltas_add_up_to_the_delta(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 0.0003 + 0.0007 in floats is 0.0009999999999999998; exactly it is 1/1000
    program = tmp_path / "two.fz"
    program.write_text(TWO_CLAIMS)
    data = tmp_path / "rows.csv"
    data.write_text("age\n30\n41\n52\n")
    checked = _checked_epsilon(capsys, program, "both", "1/1000")
    charged = _charged_epsilon(capsys, program, "both", "0.001", data, tmp_path / "l.sqlite")
    assert checked == charged <= Fraction(5, 4)
