"""A mechanism's claim is printed in the statement language: `check` lists
a claim such as `abs(eps)` (a call only mechanisms have) without an internal
error (a black-box review found FZ799 there)."""

from fuzzpy.api import loads

SOURCE = """
mechanism scaled (q : vec[inf] num, eps : num) : num
  requires eps * eps > 0
  privacy abs(eps)
{
  return q[0] + lap(1 / abs(eps));
}
"""


def test_a_claim_with_a_call_is_listed() -> None:
    report = loads(SOURCE).check()
    claims = {m.name: m.claim for m in report.mechanisms}
    assert claims["scaled"] == "abs(eps)"
