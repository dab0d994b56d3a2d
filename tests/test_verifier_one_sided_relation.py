"""A relation the prover reads as symmetric but the kernel does not (a value
constraint such as `requires x >= 0` beside `abs(dist(x)) <= 1`): the prover
then proves the relation reversed too, and the kernel checks both orientations.
Before, the verdict was "unknown: internal error: the proof kernel rejected the
prover's proof" for a private mechanism (review a31).
"""

from __future__ import annotations

import pytest

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier import Verdict

TEMPLATE = """\
mechanism shifted (reading : num, budget : num) : num
  requires budget > 0
  requires abs(dist(reading)) <= 1
  requires {constraint}
  privacy budget
{{
  var noisy = reading + lap({scale} / budget);
  return noisy;
}}
"""


def _verdict(text: str) -> Verdict:
    program = parse_program(text, "<one-sided>")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return verify_mechanism(decl, program, proof_seconds=20, refute_seconds=10)


@pytest.mark.parametrize("constraint", ["reading >= 0", "reading <= 100", "0 <= reading"])
def test_a_value_constraint_beside_the_distance_is_proved_through_the_kernel(constraint: str) -> None:
    verdict = _verdict(TEMPLATE.format(constraint=constraint, scale="1"))
    assert verdict.status == "proved", verdict.reason
    assert verdict.certificate is not None


@pytest.mark.parametrize("constraint", ["reading >= 0", "reading <= 100"])
def test_half_the_noise_is_still_not_proved(constraint: str) -> None:
    verdict = _verdict(TEMPLATE.format(constraint=constraint, scale="0.5"))
    assert verdict.status != "proved", verdict.reason
