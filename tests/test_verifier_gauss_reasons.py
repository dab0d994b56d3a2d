"""What an "unknown" Gaussian verdict tells its reader (review s27, refdelta item 2):
a missing `align` hint is named with the hint to add, and no internal class
name (`expression Call`) reaches the reason: the source text does."""

from __future__ import annotations

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl


def _verdict(text: str):  # noqa: ANN202 - a Verdict
    program = parse_program(text, "reasons.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return verify_mechanism(decl, program)


# noisy arg-max over the scores, the draw written first and no `align`
UNALIGNED = """
mechanism loudest (scores : vec[inf] num, s : num) : int
  requires s >= 10
  requires len(scores) <= 4
  privacy (1, 0.001)
{
  var at = 0;
  var best = gauss(s) + scores[0];
  var j = 1;
  while (j < len(scores)) {
    var y = gauss(s) + scores[j];
    if (y > best) { at = j; best = y; }
    j = j + 1;
  }
  return at;
}
"""


def test_a_gaussian_draw_without_align_is_named_with_the_hint_to_add() -> None:
    verdict = _verdict(UNALIGNED)
    assert verdict.status == "unknown"
    reason = verdict.reason or ""
    assert "needs an `align` on every Gaussian draw" in reason
    assert "add `align (0 - dist(scores[0]))`" in reason and "line 8" in reason
    assert "selectors" not in reason and "kernel rejected" not in reason


def test_the_suggested_hint_proves_the_mechanism() -> None:
    fixed = UNALIGNED.replace("gauss(s) + scores[0]", "gauss(s) align (0 - dist(scores[0])) + scores[0]")
    fixed = fixed.replace("gauss(s) + scores[j]", "gauss(s) align (0 - dist(scores[j])) + scores[j]")
    assert _verdict(fixed).status == "proved"


def test_a_call_the_refuter_cannot_evaluate_is_named_by_its_source_text() -> None:
    verdict = _verdict("mechanism folded (v : vec[inf] num, s : num) : num\n  requires s >= 8\n"
                       "  privacy (1, 0.001)\n{\n  return abs(v[0]) + gauss(s) align -dist(v[0]);\n}\n")
    reason = verdict.reason or ""
    assert verdict.status == "unknown"
    assert "Call" not in reason and "expression " not in reason
    assert "`abs(v[0])`" in reason


# review s28a gs4/gs1: a Gaussian scale read from a private scalar was blamed on a
# missing lower bound though `requires p >= 8` was there; the scale differs between runs
def test_a_private_scale_is_named_as_private_not_as_unbounded() -> None:
    verdict = _verdict("mechanism wide (p : num) : bool\n  requires p >= 8 && p <= 200\n"
                       "  requires abs(dist(p)) <= 200\n  privacy (1, 0.0004)\n{\n"
                       "  var x = gauss(8 + 100 * p) align 0;\n  return x > 50;\n}\n")
    reason = verdict.reason or ""
    assert verdict.status == "unknown"
    assert "no positive lower bound" not in reason
    assert "line 6: the Gaussian scale `8 + 100 * p` depends on the private input `p`" in reason


def test_a_lower_bound_inside_a_conjunction_is_read() -> None:
    verdict = _verdict("mechanism ranged (s : num, v : num) : bool\n  requires s >= 8 && s <= 200\n"
                       "  requires abs(dist(v)) <= 1\n  privacy (1, 0.0004)\n{\n"
                       "  var x = v + gauss(s) align (0 - dist(v));\n  return x > 50;\n}\n")
    assert verdict.status == "proved"


MIXED = """
mechanism two (q : vec[inf] num) : list num
  privacy (1, 0.0004)
{
  output q[0] + gauss(8) align -dist(q[0]);
  output q[1] + lap(1) align -dist(q[1]);
}
"""


def test_a_gauss_laplace_mix_over_the_claim_says_the_shares_do_not_fit() -> None:
    reason = _verdict(MIXED).reason or ""
    assert "selectors" not in reason and "line 0" not in reason and "0 input pairs" not in reason
    assert "the Gaussian draws take E ~ 0.29" in reason and "does not fit" in reason
    assert "at the end of the mechanism" in reason
    assert "no counterexample searched (no input pair could be evaluated: a Laplace draw" in reason


def test_a_laplace_draw_without_align_beside_gauss_is_named() -> None:
    reason = _verdict(MIXED.replace(" align -dist(q[1])", "").replace("(1, ", "(2, ")).reason or ""
    assert "line 6: the Laplace draw `lap(1)` has no `align`" in reason and "selectors" not in reason
