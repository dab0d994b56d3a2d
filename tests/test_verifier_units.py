"""Unit checks of the verifier's pieces: exact probabilities, hints, diagnostics,
the CLI's JSON and --explain output, and the per-process cache."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from scipy import integrate

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier.concrete import run_all
from fuzzpy.verifier.integrate import Linear, NoiseDraw, path_mass
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.refuter import _output_mass

ROOT = Path(__file__).resolve().parent.parent / "examples" / "mechanisms"


@pytest.fixture(autouse=True)
def _fifty_digits() -> Iterator[None]:
    """The verifier states its probabilities at 50 digits (refuter.refute
    sets them); direct calls of `path_mass` here do the same."""
    with mpmath.workdps(50):
        yield



def _decl(text: str) -> tuple[MechanismDecl, object]:
    program = parse_program(text, "test.fz")
    return next(d for d in program.decls if isinstance(d, MechanismDecl)), program


# ---------------------------------------------------------------- exact probabilities


def test_single_draw_probabilities_are_exact() -> None:
    lap = [NoiseDraw("lap", Fraction(2))]
    half = path_mass(lap, [Linear.draw(0)], [])  # P(eta >= 0)
    assert abs(half.value - mpmath.mpf("0.5")) < mpmath.mpf(10) ** -40
    exp = [NoiseDraw("lapplus", Fraction(2))]
    tail = path_mass(exp, [Linear.draw(0) - Linear.of(Fraction(1))], [])  # P(eta >= 1)
    assert abs(tail.value - mpmath.exp(mpmath.mpf(-1) / 2)) < mpmath.mpf(10) ** -40


def test_comparison_of_two_draws_and_a_released_density() -> None:
    draws = [NoiseDraw("lap", Fraction(1)), NoiseDraw("lap", Fraction(3))]
    greater = path_mass(draws, [Linear.draw(0) - Linear.draw(1)], [])  # P(eta0 >= eta1)
    assert abs(greater.value - mpmath.mpf("0.5")) < mpmath.mpf(10) ** -30
    density = path_mass(draws[:1], [], [(Linear.draw(0), Fraction(1))])  # density of eta0 at 1
    assert density.atoms == 0
    assert abs(density.value - mpmath.exp(-1) / 2) < mpmath.mpf(10) ** -40


def test_lee_clifton_counterexample_is_exact() -> None:
    """verifier.md: length 2, q = (1, 0), q' = (2, -1), output (no, yes), log-ratio ~1.24 at eps = 1."""
    decl, program = _decl((ROOT / "buggy" / "svt_lee_clifton.fz").read_text())
    info = analyse(decl)
    params = {"t": Fraction(0), "N": Fraction(1), "eps": Fraction(1)}
    output = (False, True)
    masses = []
    for q in ((1, 0), (2, -1)):
        runs = run_all(info, dict(params), {"q": [Fraction(x) for x in q]})
        masses.append(_output_mass(runs, output).value)
    log_ratio = float(mpmath.log(masses[0] / masses[1]))
    assert log_ratio == pytest.approx(1.2412355939823185, abs=1e-12)
    assert log_ratio > 1.0

    # independent check by numerical integration of the same event:
    # threshold T ~ Lap(4), queries eta_i ~ Lap(4/3); no: q0 + eta0 < T, yes: q1 + eta1 >= T
    def cdf(x: float, b: float) -> float:
        return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)

    def probability(q0: float, q1: float) -> float:
        def integrand(x: float) -> float:
            return math.exp(-abs(x) / 4) / 8 * cdf(x - q0, 4 / 3) * (1 - cdf(x - q1, 4 / 3))

        return integrate.quad(integrand, -math.inf, math.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]

    assert float(masses[0]) == pytest.approx(probability(1, 0), rel=1e-8)
    assert float(masses[1]) == pytest.approx(probability(2, -1), rel=1e-8)


# ---------------------------------------------------------------- hints

ABOVE = """
mechanism above_threshold (q : vec[inf] num, t : num, eps : num) : int
  requires eps > 0
  privacy eps
{{
  var tt = t + lap(2 / eps) {threshold};
  var i = 0;
  var out = -1;
  while (i < len(q) && out == -1) {invariant} {{
    var eta = lap(4 / eps) {query};
    if (q[i] + eta >= tt) {{ out = i; }}
    i = i + 1;
  }}
  return out;
}}
"""


def _hinted(threshold: str = "", invariant: str = "", query: str = "") -> str:
    return ABOVE.format(threshold=threshold, invariant=invariant, query=query)


def test_correct_hints_are_accepted() -> None:
    decl, program = _decl(_hinted(threshold="align 1", invariant="invariant dist(tt) == 1"))
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "proved"
    assert verdict.proof is not None and verdict.proof.alignments[0][2] == "1"


def test_wrong_align_hint_fails() -> None:
    decl, program = _decl(_hinted(query="align 0"))
    verdict = verify_mechanism(decl, program, proof_seconds=4, refute_seconds=1)
    assert verdict.status != "proved"
    assert verdict.reason


def test_non_inductive_invariant_hint_fails() -> None:
    decl, program = _decl(_hinted(invariant="invariant dist(tt) == 0"))
    verdict = verify_mechanism(decl, program, proof_seconds=4, refute_seconds=1)
    assert verdict.status != "proved"
    assert "invariant" in (verdict.reason or "")


# ---------------------------------------------------------------- diagnostics


@pytest.mark.parametrize(
    ("body", "result", "code"),
    [
        ("return q[0] + lap(1 / epsilon);", "num", "FZ401"),
        ("output q[0] + lap(1 / eps);", "num", "FZ403"),
        ("return q[0] + lap(0 - eps);", "num", "FZ402"),
        ("return q[0] > lap(1 / eps);", "num", "FZ403"),
        ("output q[0] + lap(1 / eps) > 0;", "list num", "FZ403"),  # a stream of numbers holding a bool
        ("var k = 0; output k; output q[0] + lap(1 / eps) >= 1;", "list int", "FZ403"),
    ],
)
def test_malformed_mechanisms_get_a_diagnostic_with_a_span(body: str, result: str, code: str) -> None:
    text = f"mechanism m (q : vec[inf] num, eps : num) : {result}\n  requires eps > 0\n  privacy eps\n{{\n  {body}\n}}\n"
    decl, program = _decl(text)
    with pytest.raises(FuzzError) as caught:
        verify_mechanism(decl, program)
    codes = [d.code for d in caught.value.diagnostics]
    assert code in codes
    span = next(d.span for d in caught.value.diagnostics if d.code == code)
    assert span.file == "test.fz" and span.line >= 1


def test_static_constants_from_the_program_are_used() -> None:
    text = "let scale = 2;\nmechanism m (q : vec[1] num, eps : num) : num\n  requires eps > 0\n  privacy eps\n" \
        "{\n  return q[0] + lap(scale / eps);\n}\n"
    decl, program = _decl(text)
    assert verify_mechanism(decl, program).status == "proved"


# ---------------------------------------------------------------- CLI


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


def test_json_has_the_design_page_shape() -> None:
    code, text = _run(["verify", "--json", str(ROOT / "partial_sum.fz"),
                       str(ROOT / "buggy" / "partial_sum_half_noise.fz")])
    assert code == 1
    document = json.loads(text)
    assert document["ok"] is False and document["diagnostics"] == []
    proved, refuted = document["mechanisms"]
    assert isinstance(proved.pop("cached"), bool)  # beside the page's fields: whether the proof came from the cache
    assert proved.pop("certificate")["mechanism"] == "partial_sum"  # and the proof the kernel accepted
    assert proved.pop("proof")["rule"] == "alignment"  # and that proof as data (issue 30)
    assert proved == {"name": "partial_sum", "claim": "eps", "verdict": "proved",
                      "counterexample": None, "reason": None}
    assert refuted["verdict"] == "refuted"
    cx = refuted["counterexample"]
    assert set(cx) >= {"inputs", "neighbour", "output", "eps", "ratio"}
    assert cx["ratio"] > math.exp(cx["eps"])
    assert isinstance(cx["inputs"]["q"], list)


def test_exit_codes() -> None:
    assert _run(["verify", str(ROOT / "prefix_sum.fz")])[0] == 0
    assert _run(["verify", str(ROOT / "buggy" / "svt_no_query_noise.fz")])[0] == 1
    assert _run(["verify", "/nonexistent/file.fz"])[0] == 2


def test_explain_builds_the_proof_like_a_lecture() -> None:
    code, text = _run(["verify", "--explain", str(ROOT / "report_noisy_max.fz")])
    assert code == 0
    lines = text.strip().splitlines()
    assert lines[-1].strip().startswith("cost <= eps for every path")
    assert any("pointwise" in line for line in lines)
    assert any("loop invariant at line" in line for line in lines)
    assert any("case i<1> == s: Laplace rule" in line for line in lines)
    code, text = _run(["verify", "--explain=summary", str(ROOT / "report_noisy_max.fz")])
    lines = text.strip().splitlines()
    assert lines[-1].strip() == "cost <= eps for every path"
    assert any("invariant at the loop head" in line for line in lines)
    assert any("i == s ? 1 - dist(q[i]) : 0" in line for line in lines)


def test_verdicts_are_cached_per_mechanism() -> None:
    decl, program = _decl((ROOT / "partial_sum.fz").read_text())
    assert verify_mechanism(decl, program) is verify_mechanism(decl, program)


def test_symbolic_number_of_answers_in_the_claim() -> None:
    """Lee & Clifton's SVT is private at its true cost (1 + 6N) eps / 4, N symbolic."""
    text = (ROOT / "buggy" / "svt_lee_clifton.fz").read_text().replace(
        "  privacy eps\n", "  privacy (1 + 6 * N) * eps / 4\n"
    )
    decl, program = _decl(text)
    assert verify_mechanism(decl, program).status == "proved"
