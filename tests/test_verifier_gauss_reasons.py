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
