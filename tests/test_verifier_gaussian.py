"""Approximate-DP mechanisms: `gauss(sigma) align d` draws, `privacy (eps, delta)` claims.

The kernel's Gaussian rule (docs/verifier-kernel.md, "Gaussian draws") is
checked against hand-built certificates: a shift that depends on the noise
(by data or by control), a draw the noise may skip, a lowered per-draw bound
or trip count, a share of epsilon the Laplace draws then overspend. The
examples of examples/mechanisms/gaussian/ keep their printed verdicts, and
a refutation's numbers are checked against an independent computation.
"""

from __future__ import annotations

import dataclasses
import io
import math
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier.gaussian import prove_gaussian
from fuzzpy.verifier.kernel import check
from fuzzpy.verifier.kernel.certificate import Certificate, DrawAlignment, Side, Where, numbering
from fuzzpy.verifier.kernel.gaussian import delta_up

ROOT = Path(__file__).resolve().parent.parent / "examples" / "mechanisms" / "gaussian"
PROVED = sorted(ROOT.glob("*.fz"))
BROKEN = sorted((ROOT / "buggy").glob("*.fz"))


def _decl(text: str) -> tuple[MechanismDecl, object]:
    program = parse_program(text, "g.fz")
    return next(d for d in program.decls if isinstance(d, MechanismDecl)), program


def _proved_cert(text: str) -> tuple[MechanismDecl, object, Certificate]:
    decl, program = _decl(text)
    cert, why = prove_gaussian(decl, program, {})
    assert cert is not None, why
    return decl, program, cert


def _side(cert: Certificate, **changes: object) -> Certificate:
    return dataclasses.replace(cert, sides=(dataclasses.replace(cert.sides[0], **changes),))


# ---------------------------------------------------------------- syntax


def test_an_approximate_claim_and_a_gaussian_draw_parse() -> None:
    decl, _ = _decl("mechanism m (x : vec[2] num) : list num privacy (0.5 * 2, 1e-6)\n"
                    "{ output x[0] + gauss(3) align (0 - dist(x[0])); }")
    assert decl.delta is not None
    noise = decl.body[0].expr.right  # type: ignore[attr-defined]
    assert noise.kind == "gauss" and noise.align is not None
    # `align` binds like `lap`'s: to one operand, so `gauss(3) align 0 - d` is (gauss(3) align 0) - d
    other, _ = _decl("mechanism m (x : vec[2] num) : list num privacy (1, 0)\n"
                     "{ output gauss(3) align 0 - dist(x[0]); }")
    assert other.body[0].expr.op == "-"  # type: ignore[attr-defined]


def test_align_after_a_call_that_is_not_a_draw_is_a_syntax_error() -> None:
    from fuzzpy.language.diagnostics import FuzzError

    with pytest.raises(FuzzError) as caught:
        _decl("mechanism m (x : vec[2] num) : int privacy 1 { return abs(x[0]) align 1; }")
    assert caught.value.diagnostics[0].code == "FZ101"


# ---------------------------------------------------------------- the kernel re-checks everything


SVT = """mechanism svt (q : vec[inf] num) : int
  requires len(q) <= 3
  privacy (1, 0.01)
{
  var tt = 1 + gauss(4) align 0;
  var out = -1;
  var i = 0;
  while (i < len(q)) {
    var eta = gauss(4) align -dist(q[i]);
    if (out == -1 && q[i] + eta >= tt) { out = i; }
    i = i + 1;
  }
  return out;
}"""


def test_the_proved_certificate_passes_and_its_numbers_are_rechecked() -> None:
    decl, program, cert = _proved_cert(SVT)
    assert check(decl, program, cert).accepted
    side = cert.sides[0]
    # a per-draw bound below |shift| / sigma = 1/4: rejected at the draw
    lowered = tuple(dataclasses.replace(d, bound="1/5") if d.shift != "0" else d for d in side.draws)
    decision = check(decl, program, _side(cert, draws=lowered))
    assert not decision.accepted and "within its bound" in decision.reason
    # fewer trips than the loop may make: rejected at the loop's entry
    fewer = tuple(dataclasses.replace(t, trips=2) for t in side.trips)
    decision = check(decl, program, _side(cert, trips=fewer))
    assert not decision.accepted and "at most 2 trips" in decision.reason
    # no trip bound at all: mu cannot be bounded
    assert not check(decl, program, _side(cert, trips=())).accepted
    # a Gaussian share of epsilon above the claim: the (zero) Laplace cost exceeds eps - E
    assert not check(decl, program, _side(cert, gauss_eps="2")).accepted
    # a smaller share: delta_mu(E) grows past the claimed delta
    assert not check(decl, program, _side(cert, gauss_eps="1/10")).accepted


@pytest.mark.parametrize("body, why", [
    # the shift reads a draw's value (data dependence)
    ("var a = gauss(4) align 0; var b = q[0] + gauss(4) align a; return 0;", "depends on a draw"),
    # the shift reads a variable set under a noisy branch (control dependence)
    ("var a = q[0] + gauss(4) align 0; var c = 0; if (a > 0) { c = 1; } "
     "var b = q[1] + gauss(4) align c; return 0;", "depends on a draw"),
    # the draw runs only when the noise says so
    ("var a = q[0] + gauss(4) align 0; var b = 0; if (a > 0) { b = q[1] + gauss(4) align 1; } return 0;",
     "under a condition that depends"),
    # the draw may be skipped by `&&`
    ("var a = q[0] + gauss(4) align 0; var b = a > 0 && q[1] + gauss(4) align 1 > 0; return 0;",
     "under `&&`"),
])
def test_a_gaussian_shift_that_depends_on_the_noise_is_rejected(body: str, why: str) -> None:
    text = f"mechanism m (q : vec[inf] num) : int privacy (1, 0.5) {{ {body} }}"
    decl, program = _decl(text)
    numbers = numbering(decl)
    from fuzzpy.language.syntax import Noise
    from fuzzpy.verifier.kernel.inputs import walk

    draws = []
    for stmt in _walk_stmts(decl.body):
        for top in (getattr(stmt, "expr", None), getattr(stmt, "cond", None)):
            for e in walk(top) if top is not None else ():
                if isinstance(e, Noise):
                    shift = "0" if e.align is None else _text(e.align)
                    draws.append(DrawAlignment(Where.of(e, numbers), "gauss", shift, bound="1"))
    cert = Certificate("m", "1", "alignment", (), (("q", "vec[inf]"),), (),
                       (Side("forward", tuple(draws), (), (), (), "1"),), "0.5")
    decision = check(decl, program, cert)
    assert not decision.accepted
    assert why in decision.reason


def _text(e: object) -> str:
    from fuzzpy.verifier.text import show

    return show(e)  # type: ignore[arg-type]


def _walk_stmts(body: tuple) -> list:
    out = []
    for s in body:
        out.append(s)
        out += _walk_stmts(getattr(s, "then", ()) + getattr(s, "orelse", ()) + getattr(s, "body", ()))
    return out


def test_a_gaussian_selector_or_the_pointwise_rule_is_rejected() -> None:
    decl, program, cert = _proved_cert(SVT)
    side = cert.sides[0]
    with_selector = tuple(dataclasses.replace(d, selector="state", test="i == 0", otherwise="0") for d in side.draws)
    decision = check(decl, program, _side(cert, draws=with_selector))
    assert not decision.accepted and "selector" in decision.reason
    decision = check(decl, program, dataclasses.replace(cert, rule="pointwise"))
    assert not decision.accepted and "plain alignment" in decision.reason


def test_a_pure_claim_with_a_gaussian_draw_is_unknown_not_proved() -> None:
    decl, program = _decl("mechanism m (q : vec[inf] num) : list num privacy 1 "
                          "{ output q[0] + gauss(8) align -dist(q[0]); }")
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "unknown"
    assert "privacy (eps, delta)" in (verdict.reason or "")


# ---------------------------------------------------------------- delta_mu, rounded up


@pytest.mark.parametrize("mu2, e", [(Fraction(1, 8), Fraction(1)), (Fraction(2), Fraction(1, 2)),
                                    (Fraction(9), Fraction(3)), (Fraction(1, 100), Fraction(0))])
def test_delta_mu_is_an_upper_bound_close_to_the_exact_value(mu2: Fraction, e: Fraction) -> None:
    # an independent form: delta = P[L > e] - e^e P'[L > e], L ~ N(mu^2/2, mu^2) the privacy loss
    with mpmath.workdps(80):
        mu = mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator)
        eps = mpmath.mpf(e.numerator) / e.denominator
        tail = 1 - mpmath.ncdf((eps - mu**2 / 2) / mu)
        tail_other = 1 - mpmath.ncdf((eps + mu**2 / 2) / mu)
        exact = tail - mpmath.exp(eps) * tail_other
        bound = delta_up(mu2, e)
        assert mpmath.mpf(bound.numerator) / bound.denominator >= exact
        assert mpmath.mpf(bound.numerator) / bound.denominator - exact < mpmath.mpf(10) ** -38


def test_the_claim_at_the_computed_delta_is_proved_and_just_below_it_is_not() -> None:
    # two queries, sigma 1: mu^2 = 2, so the least delta at eps = 1 is delta_mu(1), about 0.2863
    least = delta_up(Fraction(2), Fraction(1))
    template = ("mechanism m (q : vec[inf] num) : int requires len(q) <= 2 privacy (1, {})\n"
                "{{ var best = 0 - 1; var bestv = 0; var i = 0;\n"
                "   while (i < len(q)) {{ var v = q[i] + gauss(1) align -dist(q[i]);\n"
                "     if (best == -1 || v > bestv) {{ best = i; bestv = v; }} i = i + 1; }}\n"
                "   return best; }}")
    decl, program = _decl(template.format(f"{least.numerator}/{least.denominator}"))
    assert verify_mechanism(decl, program).status == "proved"
    below = least - Fraction(1, 10**6)
    decl, program = _decl(template.format(f"{below.numerator}/{below.denominator}"))
    assert verify_mechanism(decl, program).status != "proved"


def test_laplace_draws_keep_their_pure_cost_beside_gaussian_ones() -> None:
    text = """mechanism mixed (q : vec[inf] num) : list num
      requires len(q) <= 4
      privacy ({eps}, 0.001)
    {{
      output q[0] + lap(2) align -dist(q[0]);
      var i = 0;
      while (i < len(q)) {{ output q[i] + gauss(4) align -dist(q[i]); i = i + 1; }}
    }}"""
    decl, program = _decl(text.format(eps=2))
    assert verify_mechanism(decl, program).status == "proved"
    # the Gaussian part alone needs about 1.37 at this delta; 1.5 leaves less than the Laplace draw's 1/2
    decl, program = _decl(text.format(eps=1.5))
    assert verify_mechanism(decl, program).status == "unknown"


def test_a_vec1_input_streamed_with_gaussian_noise_is_proved() -> None:
    decl, program = _decl("""mechanism counts (q : vec[1] num) : list num
      requires len(q) <= 3
      privacy (1, 0.09)
    {
      var i = 0;
      while (i < len(q)) { output q[i] + gauss(2) align -dist(q[i]); i = i + 1; }
    }""")
    assert verify_mechanism(decl, program).status == "proved"


# ---------------------------------------------------------------- examples and refutations


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


@pytest.mark.parametrize("path", PROVED + BROKEN, ids=lambda p: p.stem)
def test_gaussian_examples_print_their_expected_verdicts(path: Path) -> None:
    code, text = _run(["verify", str(path)])
    assert text == path.with_suffix(".verify.expected").read_text()
    assert code == (1 if path.parent.name == "buggy" else 0)
    assert ("proved" in text.splitlines()[0]) == (path.parent.name != "buggy")


def test_a_refutation_is_true_by_an_independent_computation() -> None:
    decl, program = _decl((ROOT / "buggy" / "gauss_rnm_claim_too_small.fz").read_text())
    verdict = verify_mechanism(decl, program)
    cx = verdict.counterexample
    assert verdict.status == "refuted" and cx is not None and cx.delta == Fraction(1, 100)
    # two queries with N(0, 1) noise: P[best = 0] = P[q0 + e0 >= q1 + e1] = Phi((q0 - q1) / sqrt 2)
    (q,) = cx.inputs.values()
    (r,) = cx.neighbour.values()
    assert len(q) == 2 and cx.output == (Fraction(0),)
    p1 = 0.5 * math.erfc(-(q[0] - q[1]) / 2)  # Phi(x / sqrt 2) = erfc(-x / 2) / 2
    p2 = 0.5 * math.erfc(-(r[0] - r[1]) / 2)
    assert p1 > math.exp(float(cx.eps)) * p2 + float(cx.delta) + 0.1
    assert abs(float(cx.p_inputs) - p1) < 1e-12 and abs(float(cx.p_neighbour) - p2) < 1e-12


# ---------------------------------------------------------------- statistics (slow)


@pytest.mark.slow
def test_the_empirical_privacy_loss_of_gaussian_noisy_max_stays_below_its_proved_claim() -> None:
    """Two queries, sigma 1, claim (1, delta_mu(1)) with mu^2 = 2, proved; sampled
    (numpy, seeded) on the pair the bound is tight for: q = (0, 0) against
    (-1, 1), where P[best = 0] - e P'[best = 0] equals delta_mu(1) exactly.
    The estimate must stay below the claim (plus 5 standard errors) and come
    close to it (the proof's delta is not loose here)."""
    import numpy as np

    least = delta_up(Fraction(2), Fraction(1))
    decl, program = _decl(
        "mechanism m (q : vec[inf] num) : int requires len(q) <= 2 "
        f"privacy (1, {least.numerator}/{least.denominator})\n"
        "{ var best = 0 - 1; var bestv = 0; var i = 0;\n"
        "  while (i < len(q)) { var v = q[i] + gauss(1) align -dist(q[i]);\n"
        "    if (best == -1 || v > bestv) { best = i; bestv = v; } i = i + 1; }\n"
        "  return best; }")
    assert verify_mechanism(decl, program).status == "proved"

    def noisy_max(q: list[float], n: int, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(q)[None, :] + rng.normal(0.0, 1.0, size=(n, len(q)))
        # the first index wins ties, as `v > bestv` keeps the earlier one
        return np.argmax(values, axis=1)

    from mechanism_harness import clopper_pearson  # the neighbour harness's one-sided bounds

    rng = np.random.default_rng(20260311)
    n = 400_000
    first = noisy_max([0.0, 0.0], n, rng)
    second = noisy_max([-1.0, 1.0], n, rng)
    bound = float(least)
    for output in (0, 1):
        k1, k2 = int(np.sum(first == output)), int(np.sum(second == output))
        (low1, high1), (low2, high2) = clopper_pearson(k1, n, 1e-6), clopper_pearson(k2, n, 1e-6)
        # the empirical loss at (eps = 1, delta) stays below: no event beats e P' + delta, either way
        assert low1 <= math.e * high2 + bound
        assert low2 <= math.e * high1 + bound
    p1, p2 = float(np.mean(first == 0)), float(np.mean(second == 0))
    assert p1 - math.e * p2 > bound - 0.01  # tight: the proof's delta is what this pair needs


def test_explain_shows_the_gaussian_rule_not_a_laplace_game() -> None:
    code, text = _run(["verify", "--explain", str(ROOT / "gauss_above_threshold.fz")])
    assert code == 0
    assert "Laplace rule" not in text and "the Gaussian rule" in text
    assert "at most 8 trips" in text and "Balle & Wang" in text


def test_json_counterexample_carries_delta() -> None:
    import json

    code, text = _run(["verify", "--json", str(ROOT / "buggy" / "gauss_svt_data_branch.fz")])
    assert code == 1
    (found,) = json.loads(text)["mechanisms"]
    assert found["verdict"] == "refuted" and found["counterexample"]["delta"] == 0.0004
    assert found["claim"] == "(1, 0.0004)"


def test_a_continuous_release_is_refuted_by_an_interval_event() -> None:
    """The gaps of all queries against one noisy threshold: q = (0, 0) releases
    two equal gaps, its neighbour (-1, 0) two gaps 1 apart, so the event "both
    gaps in [v - 1/2, v + 1/2]" has probability 0 for the neighbour."""
    decl, program = _decl((ROOT / "buggy" / "gauss_svt_gap_threshold_only.fz").read_text())
    verdict = verify_mechanism(decl, program)
    cx = verdict.counterexample
    assert verdict.status == "refuted" and cx is not None and verdict.stream
    assert cx.p_neighbour == 0 and len(cx.output) == 2
    # recompute P[inputs]: tt = t + N(0, 64); both gaps -t - e fall in [lo, hi] iff e in [-t - hi, -t - lo]
    lo, hi = (Fraction(x) for x in str(cx.output[0]).removeprefix("in [").removesuffix("]").split(", "))
    t = cx.params["t"]
    q = cx.inputs["q"]
    assert q[0] == q[1]

    def phi(x: Fraction) -> float:
        return 0.5 * math.erfc(-float(x) / 8 / math.sqrt(2))

    low_e, high_e = q[0] - t - hi, q[0] - t - lo
    assert high_e <= q[0] - t  # both queries pass the threshold there
    assert abs(float(cx.p_inputs) - (phi(high_e) - phi(low_e))) < 1e-12


def test_explaining_a_gaussian_refutation_shows_no_laplace_derivation() -> None:
    code, text = _run(["verify", "--explain", str(ROOT / "buggy" / "gauss_rnm_claim_too_small.fz")])
    assert code == 1
    assert "Lap(" not in text and "derivation" not in text and "no claim above" not in text
    assert "e^eps * P[output | neighbour] + delta" in text


def test_a_malformed_gaussian_mechanism_gets_the_usual_diagnostics() -> None:
    from fuzzpy.language.diagnostics import FuzzError

    decl, program = _decl("mechanism m (q : vec[inf] num) : int privacy (1, 0.1)\n"
                          "{ var v = q[0] + gauss(zz) align -dist(q[0]); return 0; }")
    with pytest.raises(FuzzError) as caught:
        verify_mechanism(decl, program)
    assert caught.value.diagnostics[0].code == "FZ401"


@pytest.mark.slow  # about 2 s (the default suite stays under 10 minutes)
def test_a_selector_style_gaussian_alignment_is_unknown_with_the_reason() -> None:
    """SVT's usual alignment (shift the hit's noise by 2, chosen by the noisy
    comparison) is not available for Gaussian draws: unknown, saying why."""
    decl, program = _decl("""mechanism m (q : vec[inf] num) : int
      requires len(q) <= 4
      privacy (1, 0.01)
    {
      var tt = 0 + gauss(4) align 1;
      var out = -1;
      var i = 0;
      var eta = 0;
      while (i < len(q)) {
        eta = gauss(4) align (q[i] + eta >= tt ? 2 : 0);
        if (out == -1 && q[i] + eta >= tt) { out = i; }
        i = i + 1;
      }
      return out;
    }""")
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "unknown"
    assert "selectors and the pointwise rule are not available" in (verdict.reason or "")


def test_the_runtime_draws_a_gaussian_exactly_and_refuses_an_unknown_draw() -> None:
    """A proved Gaussian mechanism runs (tests/test_mechanism_gaussian_runtime.py checks
    the law); a draw the runtime does not know is refused, never replaced by another."""
    from fuzzpy.runtime import lazy_reals
    from fuzzpy.runtime.randomness import SeededSource
    from fuzzpy.runtime.values import RuntimeFailure

    assert isinstance(lazy_reals.draw("gauss", Fraction(1), SeededSource(7)), lazy_reals.Noisy)
    with pytest.raises(RuntimeFailure) as caught:
        lazy_reals.draw("dgauss", Fraction(1), SeededSource(7))
    assert caught.value.code == "FZ527"


@pytest.mark.slow  # the pure proof of noisy max: seconds
def test_a_laplace_mechanism_with_an_approximate_claim_is_proved_by_its_pure_proof() -> None:
    decl, program = _decl((Path(__file__).resolve().parent.parent / "examples" / "mechanisms"
                           / "report_noisy_max.fz").read_text().replace("privacy eps", "privacy (eps, 1e-9)"))
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "proved" and verdict.certificate is not None
    assert verdict.certificate.delta == "1e-9" or Fraction(verdict.certificate.delta) == Fraction(1, 10**9)
    assert check(decl, program, verdict.certificate).accepted
    # the same certificate does not prove a negative delta
    negative = dataclasses.replace(verdict.certificate, delta="0 - 1")
    decl_negative, program_negative = _decl(_text_of(decl).replace("privacy (eps, 1e-9)", "privacy (eps, 0 - 1)"))
    assert not check(decl_negative, program_negative, negative).accepted


def _text_of(decl: MechanismDecl) -> str:
    from fuzzpy.frontend.printer import print_decl

    return print_decl(decl)


def test_a_student_invariant_is_never_taken_unchecked() -> None:
    # review s27e: a false `invariant` hint (false on entry) was "proved": the Gaussian
    # rule used its own invariant and never read the hint
    decl, program = _decl("mechanism m (q : vec[inf] num) : list num\n  requires len(q) <= 4\n"
                          "  privacy (1, 0.2)\n{\n  var i = 0;\n  var c = 5;\n"
                          "  while (i < len(q)) invariant c == 7 && i < 0 {\n"
                          "    output q[i] + gauss(4) align (0 - dist(q[i]));\n    i = i + 1;\n  }\n}\n")
    verdict = verify_mechanism(decl, program)
    assert verdict.status != "proved"
