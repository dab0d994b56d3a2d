"""A release run at exactly its mechanism's claimed delta is charged the
claim (review s27g: `privacy (1, 0.001)` run with `--delta 0.001` was
refused FZ603, the accountant's float delta lying just below 1/1000)."""

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

PROGRAM = """type R = { age : num };
mechanism noisy (q : vec[inf] num, eps : num) : num
  requires eps > 0
  requires len(q) <= 1
  privacy (eps, 0.001)
{
  return q[0] + lap(1 / eps);
}
def rel (db : bag R) : fuzzy num = noisy (tabulate [0] (fun t -> size db)) 1;
"""


def test_the_claimed_delta_itself_is_chargeable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.fz").write_text(PROGRAM)
    (tmp_path / "d.csv").write_text("age\n1\n2\n3\n")
    code = main(["run", str(tmp_path / "p.fz"), "rel", "--data", f"db={tmp_path / 'd.csv'}", "--budget", "5,0.5",
                 "--delta", "0.001", "--ledger", str(tmp_path / "l.sqlite"), "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    charged = json.loads(out)["charged"]
    assert float(charged["delta"]) <= 0.001 and float(charged["epsilon"]) <= 1.0
