"""Every proved mechanism of examples/ and of the tests, run on neighbouring
inputs at the edge of its `requires` (tests/mechanism_harness.py): the
samples prove no privacy loss above the claim, and the refuter finds no
counterexample. A mutant with every noise scale halved is caught.

A test that adds a proved mechanism should add it to `FROM_TESTS`.
"""

from __future__ import annotations

from pathlib import Path

import mechanism_harness as H
import pytest
import test_verifier_conformance as conformance
import test_verifier_soundness as soundness
import test_verifier_units as units

from fuzzpy.frontend.parser import parse_program
from fuzzpy.pipeline import load_source, parse
from fuzzpy.syntax import MechanismDecl, Program
from fuzzpy.verifier import verify_mechanism
from fuzzpy.verifier.mirror import mirrored
from fuzzpy.verifier.model import analyse, static_constants
from fuzzpy.verifier.refuter import refute

ROOT = Path(__file__).resolve().parent.parent / "examples"

FROM_TESTS = {
    "rnm_argmin": conformance.ARG_RNM.format(requires="", noise="lap(2 / eps)"),
    "rnm_monotone_up": conformance.ARG_RNM.format(requires="  requires forall i. dist(q[i]) >= 0\n",
                                                  noise="lap(1 / eps)"),
    "rnm_monotone_down": conformance.ARG_RNM.format(requires="  requires forall i. dist(q[i]) <= 0\n",
                                                    noise="lap(1 / eps)"),
    "counted_releases": conformance._scalar(
        "  var k = 0;\n  while (k < N) { output x + lap(1 / eps); k = k + 1; }", result="list num",
        extra="N : int, ", more="  requires N >= 1\n").replace("privacy eps", "privacy N * eps"),
    "align_hint": conformance._scalar("  return x + lap(1 / eps) align (0 - dist(x));"),
    "hinted_above_threshold": units._hinted(threshold="align 1", invariant="invariant dist(tt) == 1"),
    "static_scale": "let scale = 2;\nmechanism m (q : vec[1] num, eps : num) : num\n  requires eps > 0\n"
                    "  privacy eps\n{\n  return q[0] + lap(scale / eps);\n}\n",
    "lee_clifton_true_cost": (ROOT / "mechanisms" / "buggy" / "svt_lee_clifton.fz").read_text().replace(
        "  privacy eps\n", "  privacy (1 + 6 * N) * eps / 4\n"),
    "svt_stream": soundness.SVT_STREAM.format(before="", after=""),
    "first_answer": soundness.FIRST_ANSWERS.format(before="", after=""),
    "public_guard_noise": soundness.GUARD.format(test="t + lap(8 / eps) > 0"),
    "previous_entry": soundness.PREVIOUS.format(body="var prev = q[i - 1];\n  output (i == 0 ? prev : 0);"),
    "pinned_entry": soundness.PINNED.format(relation="dist(q[0]) == 0", released="q[0] + lap(1 / eps)"),
    "one_sided_laplace": soundness.ONE_SIDED.format(relation="abs(2 * dist(x) + 1) <= 1").replace("lapplus", "lap"),
    "padding_release": soundness.PREVIOUS.format(body="output q[len(q) + i * i] + lap(1 / eps);"),
}


def _from_file(path: Path) -> list[tuple[str, MechanismDecl, Program]]:
    program = parse(load_source(path))
    return [(f"{path.stem}.{d.name}", d, program) for d in program.decls if isinstance(d, MechanismDecl)]


def _from_text(name: str, text: str) -> tuple[str, MechanismDecl, Program]:
    program = parse_program(text, f"{name}.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return name, decl, program


def _corpus() -> list[tuple[str, MechanismDecl, Program]]:
    found = []
    for path in sorted((ROOT / "mechanisms").glob("*.fz")) + sorted(ROOT.glob("*.fz")):
        found += _from_file(path)
    found += [_from_text(name, text) for name, text in FROM_TESTS.items()]
    return found


CORPUS = _corpus()


def test_the_corpus_has_the_examples_and_the_tests() -> None:
    assert len(CORPUS) >= 25


@pytest.mark.slow
@pytest.mark.parametrize(("name", "decl", "program"), CORPUS, ids=[c[0] for c in CORPUS])
def test_proved_mechanism_is_private_on_neighbours_at_the_edge(name: str, decl: MechanismDecl,
                                                                program: Program) -> None:
    assert verify_mechanism(decl, program).status == "proved", name
    finding = H.harness(decl, program)
    assert finding.loss <= finding.claim, (
        f"{name}: loss >= {finding.loss:.3f} > claim {finding.claim} on {finding.pair} for {finding.events}")


@pytest.mark.parametrize(("name", "decl", "program"), CORPUS, ids=[c[0] for c in CORPUS])
def test_the_refuter_finds_nothing_against_a_proved_mechanism(name: str, decl: MechanismDecl,
                                                               program: Program) -> None:
    info = analyse(decl, static_constants(program))
    mirror = mirrored(decl, info)
    for each in [info] + ([analyse(mirror, static_constants(program))] if mirror is not None else []):
        counterexample, _why = refute(each, 1.5, max_length=4)
        assert counterexample is None, name


MUTANTS = ["partial_sum.partial_sum", "report_noisy_max.report_noisy_max", "rnm_argmin", "first_answer"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MUTANTS)
def test_the_harness_catches_halved_noise(name: str) -> None:
    _name, decl, program = next(c for c in CORPUS if c[0] == name)
    finding = H.harness(H.halve_noise(decl), program)  # type: ignore[arg-type]
    assert finding.loss > finding.claim, f"{name}: the mutant shows only {finding.loss:.3f}"
