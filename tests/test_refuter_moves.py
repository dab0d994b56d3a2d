"""The refuter's reach on leaks that need more than the first values it tries
(issue 23, "Must show": non-private mechanisms refuted with an exact
counterexample): claims below 0, public numbers away from 0 and 1, `vec[2]`
inputs, two private vectors moving together or against each other, and a
loop that only runs on inputs longer than the short ones searched first.
Every counterexample found is re-checked here against the neighbour
relation (`relation.neighbours`) and, where the leak has a closed form, its
ratio against that closed form; and private twins are never refuted.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier.concrete import run_all
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.refuter import Counterexample, _output_mass, refute
from fuzzpy.verifier.relation import neighbours
from fuzzpy.verifier.report import refutation_lines


def _info(text: str):  # noqa: ANN202 - MechanismInfo
    program = parse_program(text, "stranger.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return analyse(decl, {})


def _refuted(text: str) -> tuple[object, Counterexample]:
    info = _info(text)
    found, why = refute(info, 20.0, candidates=20_000)
    assert found is not None, why
    assert neighbours(info, found.params, found.neighbour_params, found.inputs, found.neighbour)
    assert found.infinite or found.log_ratio > float(found.eps)
    return info, found


def _unrefuted(text: str) -> None:
    found, _ = refute(_info(text), 20.0, candidates=20_000)
    assert found is None, (found.inputs, found.neighbour, found.output, found.log_ratio)


# ------------------------------------------------------------ claims below 0


@pytest.mark.parametrize("claim", ["budget - 3", "0 - budget", "-1"])
def test_a_claim_below_zero_is_refuted_by_any_output(claim: str) -> None:
    text = f"""
mechanism constant_answer (rows : vec[inf] num, budget : num) : int
  requires budget > 0
  privacy {claim}
{{
  return 7;
}}"""
    _, cx = _refuted(text)
    assert cx.eps < 0
    # the one output, with probability 1 under both inputs: the ratio is exactly 1
    assert cx.output == (Fraction(7),) and cx.p_inputs == 1 and cx.p_neighbour == 1
    shown = "\n".join(refutation_lines(cx, stream=False))
    assert "a claim below 0 is false for every mechanism" in shown
    assert "ratio = 1 >" in shown


def test_a_negative_claim_on_a_noisy_release_is_refuted() -> None:
    text = """
mechanism noisy_total (data : vec[inf] num, e : num) : num
  requires e > 0 && e < 10
  privacy e - 20
{
  var total = 0;
  var k = 0;
  while (k < len(data)) { total = total + data[k]; k = k + 1; }
  return total + lap(len(data) / e);
}"""
    _, cx = _refuted(text)
    assert cx.eps < 0 and cx.density


# ------------------------------------------------------------ public numbers


def test_a_claim_that_does_not_name_the_budget_is_refuted_above_one() -> None:
    # privacy 1, but the noise is Lap(1/b): for b = 2 the ratio is e^2 > e
    text = """
mechanism fixed_claim (xs : vec[inf] num, b : num) : num
  requires b > 0
  privacy 1
{
  return xs[0] + lap(1 / b);
}"""
    _, cx = _refuted(text)
    assert cx.params["b"] > 1
    assert cx.log_ratio == pytest.approx(float(cx.params["b"]))


def test_a_public_width_below_one_is_tried() -> None:
    text = """
mechanism widths (xs : vec[inf] num, width : num, eps : num) : num
  requires eps > 0
  requires width > 0
  privacy eps
{
  return xs[0] + lap(width / eps);
}"""
    _, cx = _refuted(text)
    assert 0 < cx.params["width"] < 1
    assert cx.log_ratio == pytest.approx(float(cx.params["eps"] / cx.params["width"]))


def test_a_public_gain_bounded_only_above_is_tried_negative() -> None:
    text = """
mechanism gain (xs : vec[inf] num, g : num, eps : num) : num
  requires eps > 0 && g <= 1
  privacy eps
{
  return g * xs[0] + lap(1 / eps);
}"""
    _, cx = _refuted(text)
    assert cx.params["g"] < -1


def test_a_public_width_bounded_below_by_its_requires_is_private() -> None:
    _unrefuted("""
mechanism wide_enough (xs : vec[inf] num, width : num, eps : num) : num
  requires eps > 0
  requires width >= 1
  privacy eps
{
  return xs[0] + lap(width / eps);
}""")


# ------------------------------------------------------------ vectors


def test_an_l2_vector_moves_every_entry_under_its_norm() -> None:
    # three entries in a vec[2]: their sum moves by up to sqrt(3) > 1
    text = """
mechanism sum3 (v : vec[2] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  if (len(v) != 3) { return 0; }
  return v[0] + v[1] + v[2] + lap(1 / eps);
}"""
    _, cx = _refuted(text)
    moved = [b - a for a, b in zip(cx.inputs["v"], cx.neighbour["v"], strict=True)]
    assert sum(d * d for d in moved) <= 1
    assert cx.log_ratio > 1.7 * float(cx.eps)


def test_an_l2_vector_read_at_one_entry_is_private() -> None:
    _unrefuted("""
mechanism first_entry (v : vec[2] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  return v[0] + lap(1 / eps);
}""")


def test_two_private_vectors_moving_together() -> None:
    text = """
mechanism paired (xs : vec[inf] num, ys : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  return xs[0] + ys[0] + lap(1 / eps);
}"""
    _, cx = _refuted(text)
    assert cx.log_ratio == pytest.approx(2 * float(cx.eps))


def test_two_private_vectors_moving_against_each_other() -> None:
    text = """
mechanism gap (xs : vec[inf] num, ys : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  return xs[0] - ys[0] + lap(1 / eps);
}"""
    _, cx = _refuted(text)
    assert cx.log_ratio == pytest.approx(2 * float(cx.eps))


def test_two_private_vectors_with_the_claim_they_need_are_private() -> None:
    _unrefuted("""
mechanism gap_ok (xs : vec[inf] num, ys : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy 2 * eps
{
  return xs[0] - ys[0] + lap(1 / eps);
}""")


# ------------------------------------------------------------ long inputs


def test_a_loop_behind_a_length_gate_past_the_short_lengths() -> None:
    # for 12 entries and more, each noisy draw is released only when the
    # noisy test passes: a released -1/2 at entry 0 cannot come from q[0] = 0
    text = """
mechanism gated_stream (q : vec[inf] num, eps : num) : list num
  requires eps > 0
  privacy eps
{
  if (len(q) > 11) {
    var j = 0;
    while (j < len(q)) {
      var noise = lap(1 / eps);
      if (q[j] + noise > 0) { output noise; } else { output -1; }
      j = j + 1;
    }
  }
}"""
    _, cx = _refuted(text)
    assert len(cx.inputs["q"]) == 12
    assert cx.infinite


def test_target_paths_cut_by_a_pinned_draw_keep_every_probability() -> None:
    # the same output's mass with the target (paths cut early) and from
    # every path listed: equal, exactly
    text = """
mechanism chain (q : vec[inf] num, eps : num) : list num
  requires eps > 0
  privacy 3 * eps
{
  var j = 0;
  while (j < len(q)) {
    var d = lap(1 / eps);
    if (q[j] + d > 0) { output d; } else { output 5; }
    if (d < 1) { output 2; } else { output 3; }
    j = j + 1;
  }
}"""
    info = _info(text)
    params, vectors = {"eps": Fraction(1)}, {"q": [Fraction(0), Fraction(1, 2), Fraction(-1)]}
    every = run_all(info, dict(params), vectors)
    for point in [(Fraction(1, 2), Fraction(2), Fraction(5), Fraction(2), Fraction(3, 2), Fraction(3)),
                  (Fraction(5), Fraction(2), Fraction(-1, 4), Fraction(2), Fraction(5), Fraction(3)),
                  (Fraction(-1, 4), Fraction(2), Fraction(5), Fraction(2), Fraction(5), Fraction(2))]:
        cut = run_all(info, dict(params), vectors, target=point)
        with mpmath.workdps(50):
            full, pinned = _output_mass(every, point), _output_mass(cut, point)
        assert (full.atoms, full.value) == (pinned.atoms, pinned.value)
        assert len(cut) <= len(every)
    assert math.isfinite(len(every))


def test_a_length_gate_computed_by_the_body_is_crossed() -> None:
    # the threshold 2^4 = 16 appears in no literal: it is the value the body
    # compares len(xs) with on a one-entry input
    text = """
mechanism computed_gate (xs : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  var limit = 2;
  var k = 1;
  while (k < 4) { limit = limit * 2; k = k + 1; }
  if (len(xs) <= limit) { return 0; }
  return 3 * xs[len(xs) - 1] + lap(1 / eps);
}"""
    _, cx = _refuted(text)
    assert len(cx.inputs["xs"]) == 17
    assert cx.log_ratio == pytest.approx(3 * float(cx.eps))


def test_a_budget_gate_is_crossed_at_the_literal_it_is_compared_with() -> None:
    text = """
mechanism big_budget_only (amount : num, eps : num) : num
  requires eps > 0
  requires abs(dist(amount)) <= 1
  privacy eps
{
  if (eps <= 12) { return 0; }
  return amount * 2 + lap(1 / eps);
}"""
    _, cx = _refuted(text)
    assert cx.params["eps"] > 12
