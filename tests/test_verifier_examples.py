"""Every example mechanism gets its expected verdict; refutations are checked
independently (neighbour validity, ratio against e^eps at the reported eps)."""

from __future__ import annotations

import io
import math
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.language.syntax import MechanismDecl, TyVec
from fuzzpy.release.pipeline import load_source, parse

ROOT = Path(__file__).resolve().parent.parent / "examples" / "mechanisms"
CORRECT = sorted(ROOT.glob("*.fz"))
BUGGY = sorted((ROOT / "buggy").glob("*.fz"))


def decl_text(path: Path) -> str:
    return "\n".join(line.split("//", 1)[0] for line in path.read_text().splitlines())


def _mechanism(path: Path) -> tuple[MechanismDecl, object]:
    program = parse(load_source(path))
    decls = [d for d in program.decls if isinstance(d, MechanismDecl)]
    assert len(decls) == 1
    return decls[0], program


def test_every_benchmark_is_present() -> None:
    assert len(CORRECT) >= 12
    assert len(BUGGY) >= 11


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.stem)
def test_correct_mechanism_is_proved(path: Path) -> None:
    import fuzzpy.verifier

    decl, program = _mechanism(path)
    # proved here, with its trace: an earlier test in this process may have left a
    # verdict read from the proof cache in memory, which carries no trace
    fuzzpy.verifier._cache.clear()
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "proved", verdict.reason
    assert verdict.counterexample is None
    assert verdict.claim == decl.privacy
    draws = decl_text(path).count("lap(") + decl_text(path).count("lapplus(")
    assert verdict.proof is not None
    assert len(verdict.proof.alignments) == draws  # one alignment per noise draw
    assert verdict.proof.claim == decl_text(path).split("privacy ", 1)[1].split("\n", 1)[0].strip()


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_buggy_mechanism_is_refuted_with_a_valid_counterexample(path: Path) -> None:
    decl, program = _mechanism(path)
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "refuted", verdict.reason
    cx = verdict.counterexample
    assert cx is not None
    # the neighbour is a neighbour: same length, distance within the norm
    norms = {p.name: p.type.norm for p in decl.params if isinstance(p.type, TyVec)}
    for name, values in cx.inputs.items():
        other = cx.neighbour[name]
        assert len(other) == len(values)
        deltas = [abs(b - a) for a, b in zip(values, other, strict=False)]
        if norms[name] == "1":
            assert sum(deltas) <= 1
        else:
            assert max(deltas, default=Fraction(0)) <= 1
    # the reported eps is the claim at the reported parameters, and the ratio beats e^eps
    assert cx.eps > 0
    assert cx.p_inputs > 0
    if cx.infinite:
        assert cx.p_neighbour == 0 or cx.ratio == math.inf
    else:
        assert cx.p_inputs / cx.p_neighbour > math.exp(float(cx.eps))
        assert cx.log_ratio > float(cx.eps)


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


@pytest.mark.parametrize("path", CORRECT + BUGGY, ids=lambda p: p.stem)
def test_cli_output_matches_expected(path: Path) -> None:
    code, text = _run(["verify", str(path)])
    expected = path.with_suffix(".verify.expected").read_text()
    assert code == (1 if path.parent.name == "buggy" else 0)
    assert text == expected
