"""A released noisy value that pins its draw onto the border of a test must be
counted in one path only (review s29b, INVALID 1): `if (e > 0) return x; else
return x;` on x = q[0] + Lap(2/eps) is eps/2-DP, yet both arms were counted at
e = 0 and the density doubled, refuting a private mechanism. Here: the exact
density of such programs, summed over their paths, equals the mechanism's own
density; private programs in that shape are never refuted; the buggy ones
still are, and a density's refutation carries the event it was re-checked on.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier.concrete import run_all
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.refuter import _output_mass, refute


def _info(text: str):  # noqa: ANN202 - MechanismInfo
    program = parse_program(text, "borders.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return analyse(decl, {})


def _density(text: str, first: int, output: int, eps: int = 1) -> mpmath.mpf:
    info = _info(text)
    params = {"eps": Fraction(eps)}
    vectors = {"q": [Fraction(first)]}
    whole = run_all(info, params, vectors)  # every path, then only those that can release it
    target = run_all(info, params, vectors, target=(Fraction(output),))
    a, b = _output_mass(whole, (Fraction(output),)), _output_mass(target, (Fraction(output),))
    assert a.value == b.value
    return a.value


TWO_ARMS = """
mechanism two_arms (q : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy {claim}
{{
  var e = lap(2 / eps);
  var x = q[0] + e;
  {split}
}}"""

SPLITS = {
    "e > 0, both arms": "if (e > 0) { return x; } else { return x; }",
    "e >= 0, both arms": "if (e >= 0) { return x; } else { return x; }",
    "e < 0, early return": "if (e < 0) { return x; }\n  return x;",
    "x > q[0]": "if (x > q[0]) { return x; } else { return x; }",
    "0 <= e, reversed sides": "if (0 <= e) { return x; }\n  return x;",
    "three ways": "if (e > 0) { return x; } else { if (e == 0) { return x; } else { return x; } }",
    "three ways, two tests": "if (x > q[0]) { return x; }\n  if (x >= q[0]) { return x; }\n  return x;",
    "a test that always holds": "if (e > 0 || e <= 0) { return x; }\n  return x;",
}


@pytest.mark.parametrize("split", SPLITS.values(), ids=SPLITS.keys())
def test_a_pinned_border_point_counts_once(split: str) -> None:
    """q[0] + Lap(2) released at its noise-free value: density 1/4, however the
    body splits on the draw's sign (was 1/2: both sides counted at e = 0)."""
    text = TWO_ARMS.format(claim="eps / 2", split=split)
    assert mpmath.almosteq(_density(text, 0, 0), mpmath.mpf(1) / 4, rel_eps=mpmath.mpf(10) ** -40)
    assert mpmath.almosteq(_density(text, 1, 0), mpmath.exp(-mpmath.mpf(1) / 2) / 4, rel_eps=mpmath.mpf(10) ** -40)


@pytest.mark.parametrize("claim", ["eps / 2", "eps"])
@pytest.mark.parametrize("split", list(SPLITS.values())[:5], ids=list(SPLITS.keys())[:5])
def test_private_splits_on_the_noise_are_not_refuted(split: str, claim: str) -> None:
    found, _ = refute(_info(TWO_ARMS.format(claim=claim, split=split)), 30.0, max_length=1, quick=True,
                      candidates=400)
    assert found is None, (found.inputs, found.neighbour, found.output, found.p_inputs, found.p_neighbour)


def test_noise_compared_with_zero_in_a_loop_is_not_refuted() -> None:
    text = """
mechanism looped (q : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  var e = lap(1 / eps);
  var x = q[0] + e;
  var i = 0;
  var hits = 0;
  while (i < 3) {
    if (e >= 0) { hits = hits + 1; }
    i = i + 1;
  }
  return x;
}"""
    found, _ = refute(_info(text), 30.0, max_length=1, quick=True, candidates=400)
    assert found is None, (found.output, found.p_inputs, found.p_neighbour)


def test_one_sided_noise_keeps_its_own_density() -> None:
    """Lap+(1) released at q[0]: density 1 (was 3: three overlapping paths)."""
    text = """
mechanism one_sided (q : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  var e = lapplus(1 / eps);
  var x = q[0] + e;
  if (x > q[0] || x <= q[0]) { return x; }
  return x;
}"""
    assert _density(text, 0, 0) == 1
    found, _ = refute(_info(text), 30.0, max_length=1, quick=True, candidates=400)
    assert found is not None and found.infinite and found.p_inputs == 1  # it does leak: q = 1 never gives 0
    assert found.window is not None and found.window.p_inputs > 0 and found.window.p_neighbour == 0


def test_a_leak_at_a_border_is_still_refuted_on_an_event() -> None:
    """Twice the noise on one side of 0: a real leak, refuted with its window."""
    text = """
mechanism lopsided (q : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  var e = lap(1 / eps);
  if (q[0] + e > 0) { return q[0] + e; }
  return q[0] + e + e;
}"""
    found, why = refute(_info(text), 30.0, max_length=1, quick=True, candidates=400)
    assert found is not None, why
    assert found.window is not None
    window = found.window
    assert window.p_neighbour == 0 or window.p_inputs / window.p_neighbour > mpmath.e ** float(found.eps)


# ------------------------------------------------------------ the obligation a refutation breaks


def _obligation(text: str):  # noqa: ANN202 - PathObligation | None
    from fuzzpy.verifier.path_shift import path_obligation

    info = _info(text)
    found, why = refute(info, 30.0, max_length=2, quick=True, candidates=2000)
    assert found is not None, why
    return path_obligation(info, found)


def test_a_too_cheap_claim_names_the_shift_its_paths_need() -> None:
    obligation = _obligation("""
mechanism halved (xs : vec[inf] num, budget : num) : num
  requires budget > 0
  privacy budget / 3
{
  return xs[0] + lap(1 / budget);
}""")
    assert obligation is not None and obligation.cost is not None
    (shift,) = obligation.shifts
    assert abs(shift.by) == 1 and shift.pays == obligation.cost > obligation.claim


def test_a_noiseless_comparison_has_no_shift() -> None:
    """Stoddard et al.'s SVT without query noise (Lyu, Su & Li 2017, Alg. 5): the
    threshold's draw would have to move up for one answer and down for the other."""
    obligation = _obligation("""
mechanism bare (xs : vec[inf] num, budget : num) : list bool
  requires budget > 0
  privacy budget
{
  var cut = lap(2 / budget);
  var at = 0;
  while (at < len(xs)) {
    output xs[at] >= cut;
    at = at + 1;
  }
}""")
    assert obligation is not None and obligation.cost is None and len(obligation.conflict) >= 2


def test_a_one_sided_draw_cannot_move_down() -> None:
    obligation = _obligation("""
mechanism upward (xs : vec[inf] num, budget : num) : num
  requires budget > 0
  privacy budget
{
  return xs[0] + lapplus(1 / budget);
}""")
    assert obligation is not None and obligation.cost is None
    assert any("one-sided" in need for need in obligation.conflict)
