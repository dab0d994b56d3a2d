"""`privacy (eps, delta)` claims on mechanisms whose draws are all Laplace
(review s27, refdelta item 1): refuted when an output's exact probabilities
break P1 <= e^eps P2 + delta (Dwork & Roth, Def. 2.4, on a one-output event),
and an "unknown" that never blames a Gaussian rule the program does not use."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import mpmath
import pytest

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl

# the reviewer's program: Laplace report-noisy-max, indices counted from the end
NOISY_MAX = """
mechanism argmax_lap (scores : vec[inf] num, eps : num) : int
  requires eps >= 1
  privacy (1, 0.001)
{
  var winner = -1;
  var top = 0;
  var k = len(scores);
  while (k > 0) {
    k = k - 1;
    var noisy = scores[k] + lap(2 / eps);
    if (winner == -1 || noisy > top) { winner = k; top = noisy; }
  }
  return winner;
}
"""


# the same leak on two answers, without a loop (fast enough for the default suite)
PICK = """
mechanism pick (a : vec[inf] num) : int
  requires len(a) == 2
  privacy (1, 0.01)
{
  if (a[0] + lap(1 / 2) > a[1] + lap(1 / 2)) { return 0; }
  return 1;
}
"""


def _decl(text: str) -> tuple[MechanismDecl, object]:
    program = parse_program(text, "laplace_delta.fz")
    return next(d for d in program.decls if isinstance(d, MechanismDecl)), program


@pytest.mark.slow
def test_an_approximate_claim_on_laplace_noisy_max_is_refuted_with_the_delta_inequality() -> None:
    decl, program = _decl(NOISY_MAX)
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "refuted", verdict.reason
    cx = verdict.counterexample
    assert cx is not None and cx.delta is not None and not cx.density
    with mpmath.workdps(50):
        right = mpmath.exp(mpmath.mpf(cx.eps.numerator) / cx.eps.denominator) * cx.p_neighbour \
            + mpmath.mpf(cx.delta.numerator) / cx.delta.denominator
        assert cx.p_inputs > right  # the refutation is true, with the claim's delta added
    assert cx.delta * 1000 == 1


def test_two_laplace_answers_break_the_approximate_claim_exactly() -> None:
    decl, program = _decl(PICK)
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "refuted", verdict.reason
    cx = verdict.counterexample
    assert cx is not None and cx.exact and cx.delta is not None and cx.delta * 100 == 1
    with mpmath.workdps(50):  # P1 = 1/2, P2 = e^-2 / 2 * (1 + 2) ... checked from the numbers themselves
        assert cx.p_inputs > mpmath.e * cx.p_neighbour + mpmath.mpf(1) / 100


def test_the_printed_refutation_shows_the_numbers_and_no_gaussian_note(tmp_path: Path) -> None:
    path = tmp_path / "pick.fz"
    path.write_text(PICK)
    out = io.StringIO()
    with redirect_stdout(out):
        main(["verify", str(path)])
    text = out.getvalue()
    assert "pick: refuted, privacy (1, 0.01)" in text
    assert "P[output | inputs] = 0.5 > e^eps * P[output | neighbour] + delta = 0.37788  (delta = 0.01)" in text
    assert "Gaussian" not in text


def test_a_delta_of_one_is_never_refuted_and_the_reason_names_no_gaussian_rule() -> None:
    # every mechanism is (eps, 1)-DP: no output can break P1 <= e^eps P2 + 1
    decl, program = _decl("mechanism sign (x : vec[inf] num) : bool\n  privacy (1, 1)\n"
                          "{ return x[0] + lap(1 / 2) > 0; }")
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "unknown"
    reason = verdict.reason or ""
    assert "Gaussian" not in reason and "gauss" not in reason
    assert "pure claim" in reason


def test_a_continuous_release_is_not_refuted_from_densities() -> None:
    # densities are not probabilities: a point of a continuous release says nothing against delta
    decl, program = _decl("mechanism noisy_first (xs : vec[inf] num) : num\n  privacy (1, 0.001)\n"
                          "{ return xs[0] + lap(1 / 4); }")
    verdict = verify_mechanism(decl, program)
    assert verdict.status != "refuted" or not verdict.counterexample.density
