"""Issue 23, item 4 (reach): shapes the held-out review found unproved, each
written in several styles, with non-private twins the prover must not prove.

* sums and means of `vec[inf]` entries (`|dist(s)|` grows by at most 1 per
  trip: `invariants` via `counters.accumulator_atoms`), with noise scales that
  are public expressions of lengths (`(len(q) + 1) / eps`);
* differences of one-sided noises (`lapplus(b) - lapplus(b)` is Laplace): the
  upward part `max(0, t)` of a target shift for each one-sided draw;
* a draw in an arm the two runs may not share (a noiseless private `if`):
  sampled by each run alone (apRHL's one-sided random assignment), in the
  prover and in the kernel;
* a Laplace draw whose sign a private test chooses (`x = e` or `x = 0 - e`):
  the neighbour's value is -eta where the runs disagree on the test (a
  "mirror" alignment; the density is symmetric).

Non-private twins are checked against the prover alone (`prover.search`):
the refuter refutes most of them, but a refutation must not be what stands
between a leak and "proved".
"""

from __future__ import annotations

import dataclasses

import pytest

import fuzzpy.verifier as verifier_package
from fuzzpy.checker.scope import static_constants, verify_mechanism
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier.kernel import check
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.prover import search


def _mechanism(params: str, claim: str, body: str, result: str = "num") -> str:
    return (f"mechanism arith ({params}) : {result}\n  requires eps > 0\n  privacy {claim}\n{{\n{body}\n}}\n")


def _decl(text: str) -> tuple[MechanismDecl, object]:
    program = parse_program(text, "arith.fz")
    return next(d for d in program.decls if isinstance(d, MechanismDecl)), program


def _verdict(text: str):  # noqa: ANN202
    decl, program = _decl(text)
    verifier_package._cache.clear()
    try:
        return verify_mechanism(decl, program, proof_seconds=20, refute_seconds=10)
    finally:
        verifier_package._cache.clear()


def _prover_proves(text: str) -> bool:
    decl, program = _decl(text)
    return search(analyse(decl, static_constants(program)), 20.0).proved  # type: ignore[arg-type]


Q = "q : vec[inf] num, eps : num"
Q1 = "q : vec[1] num, eps : num"

PRIVATE = {
    # sums and means
    "mean, counting up": (Q, "eps", """
  if (len(q) == 0) { return 0; }
  var s = 0;
  var i = 0;
  while (i < len(q)) { s = s + q[i]; i = i + 1; }
  return s / len(q) + lap(1 / eps);"""),
    "mean, counting down, the length in a local": ("data : vec[inf] num, eps : num", "eps", """
  var n = len(data);
  if (n < 1) { return lap(1 / eps); }
  var total = 0;
  var k = n;
  while (k > 0) {
    k = k - 1;
    total = total + data[k];
  }
  return total / n + lap(1 / eps);"""),
    "mean from the first entry on": ("xs : vec[inf] num, eps : num", "eps", """
  if (len(xs) == 0) { return 0; }
  var acc = xs[0];
  var j = 1;
  while (j < len(xs)) { acc = acc + xs[j]; j = j + 1; }
  var mean = acc / len(xs);
  return mean + lap(1 / eps);"""),
    "clipped sum at (len(q) + 1) / eps": (Q, "eps", """
  var s = 0;
  var i = 0;
  while (i < len(q)) { s = s + min(max(q[i], 0), 1); i = i + 1; }
  return s + lap((len(q) + 1) / eps);"""),
    "clipped sum at (len(q) + 2) / eps, clamp the other way round": (Q, "eps", """
  var total = 0;
  var i = 0;
  while (i < len(q)) { total = total + max(min(q[i], 1), 0 - 1); i = i + 1; }
  return total + lap((len(q) + 2) / eps);"""),
    # differences of one-sided noise
    "lapplus - lapplus inline": (Q, "eps", "  return q[0] + lapplus(1 / eps) - lapplus(1 / eps);"),
    "lapplus - lapplus in variables": (Q, "eps", """
  var up = lapplus(1 / eps);
  var down = lapplus(1 / eps);
  return q[0] + up - down;"""),
    "lapplus - lapplus as a noise variable": (Q, "eps", """
  var noise = lapplus(1 / eps) - lapplus(1 / eps);
  return q[0] + noise;"""),
    "lapplus - lapplus reordered": (Q, "eps", "  return 0 - lapplus(1 / eps) + q[0] + lapplus(1 / eps);"),
    "lapplus - lapplus histogram": (Q1, "eps", """
  var i = 0;
  while (i < len(q)) {
    output q[i] + lapplus(1 / eps) - lapplus(1 / eps);
    i = i + 1;
  }""", "list num"),
    # a draw in an arm the runs may not share
    "unused draw in a private if": (Q, "eps", """
  var x = 0;
  if (q[0] > 0) { var d = lap(1 / eps); x = 5; } else { x = 5; }
  return x + lap(1 / eps);"""),
    "one-sided draw overwritten after the if": (Q, "eps", """
  var junk = 0;
  if (q[0] > 3) { junk = lapplus(2 / eps); }
  junk = 1;
  return junk + q[0] + lap(1 / eps);"""),
    "unused draw under a public if inside a private one": (Q, "eps", """
  var y = 0;
  if (q[1] < q[0]) {
    if (len(q) > 3) { var z = lap(1); y = 1; } else { y = 1; }
  } else { y = 1; }
  return y + lap(1 / eps);"""),
    "unused draw, arms one apart": (Q, "eps", """
  var x = 0;
  if (q[0] > 0) { var d = lap(1 / eps); x = 5; } else { x = 6; }
  return x + lap(1 / eps);"""),
    "unused draw in a loop over vec[1]": (Q1, "eps", """
  var i = 0;
  while (i < len(q)) {
    var flag = false;
    if (q[i] > 0) { var scratch = lap(1 / eps); flag = true; } else { flag = true; }
    if (flag) { output q[i] + lap(1 / eps); }
    i = i + 1;
  }""", "list num"),
    # symmetric noise under a private sign
    "plus or minus the same draw": (Q, "eps", """
  var e = lap(1 / eps);
  var x = 0;
  if (q[0] > 0) { x = e; } else { x = 0 - e; }
  return x;"""),
    "a constant plus or minus the draw, two entries compared": (Q, "eps", """
  var noise = lap(2 / eps);
  var out = 0;
  if (q[0] >= q[1]) { out = noise + 3; } else { out = 3 - noise; }
  return out;"""),
}

NOT_PRIVATE = {
    "mean with half the noise": (Q, "eps", """
  if (len(q) == 0) { return 0; }
  var s = 0;
  var i = 0;
  while (i < len(q)) { s = s + q[i]; i = i + 1; }
  return s / len(q) + lap(1 / (2 * eps));"""),
    "doubled sum at (len(q) + 1) / eps": (Q, "eps", """
  var s = 0;
  var i = 0;
  while (i < len(q)) { s = s + 2 * q[i]; i = i + 1; }
  return s + lap((len(q) + 1) / eps);"""),
    "mean over len(q) - 1": (Q, "eps", """
  if (len(q) < 2) { return 0; }
  var s = 0;
  var i = 0;
  while (i < len(q)) { s = s + q[i]; i = i + 1; }
  return s / (len(q) - 1) + lap(1 / eps);"""),
    "each entry added twice": (Q, "eps", """
  var s = 0;
  var i = 0;
  while (i < len(q)) { s = s + q[i] + q[i]; i = i + 1; }
  return s + lap((len(q) + 1) / eps);"""),
    "sum with q[0] counted twice at len(q) / eps": (Q, "eps", """
  var s = q[0];
  var i = 0;
  while (i < len(q)) { s = s + q[i]; i = i + 1; }
  return s + lap(len(q) / eps);"""),
    "lapplus - lapplus at half the claim": (Q, "eps / 2", "  return q[0] + lapplus(1 / eps) - lapplus(1 / eps);"),
    "lapplus + lapplus": (Q, "eps", "  return q[0] + lapplus(1 / eps) + lapplus(1 / eps);"),
    "lapplus - lapplus of a doubled entry": (Q, "eps", "  return 2 * q[0] + lapplus(1 / eps) - lapplus(1 / eps);"),
    "lapplus - lapplus over two entries": (Q, "eps", """
  var a = lapplus(1 / eps);
  var b = lapplus(1 / eps);
  return q[0] + a - b + q[1];"""),
    "a draw in one arm, far off in the other": (Q, "eps", """
  var x = 0;
  if (q[0] > 0) { x = lap(1 / eps); } else { x = 100 + lap(1 / eps); }
  return x;"""),
    "noise or zero": (Q, "eps", """
  var x = 0;
  if (q[0] > 0) { x = lap(1 / eps); }
  return x;"""),
    "one-sided noise with a private sign": (Q, "eps", """
  var x = 0;
  if (q[0] > 0) { x = lapplus(1 / eps); } else { x = 0 - lapplus(1 / eps); }
  return x;"""),
    "unused draw, arms two apart": (Q, "eps", """
  var x = 0;
  if (q[0] > 0) { var d = lap(1 / eps); x = 5; } else { x = 7; }
  return x + lap(1 / eps);"""),
    "plus or minus one-sided noise in a variable": (Q, "eps", """
  var e = lapplus(1 / eps);
  var x = 0;
  if (q[0] > 0) { x = e; } else { x = 0 - e; }
  return x;"""),
    "plus or minus the draw, off by three": (Q, "eps", """
  var e = lap(1 / eps);
  var x = 0;
  if (q[0] > 0) { x = e + 3; } else { x = 0 - e; }
  return x;"""),
    "the draw or minus twice the draw": (Q, "eps", """
  var e = lap(1 / eps);
  var x = 0;
  if (q[0] > 0) { x = e; } else { x = 0 - 2 * e; }
  return x;"""),
    "the arm's draw is used": (Q, "eps", """
  var x = 0;
  if (q[0] > 0) { var d = lap(1 / eps); x = d + 5; } else { x = 5; }
  return x + lap(1 / eps);"""),
}


def _text(case: tuple[str, ...]) -> str:
    params, claim, body, *rest = case
    return _mechanism(params, claim, body, *rest)


def text_of(name: str) -> str:
    """A proved shape's source (the statistical net, tests/test_mechanism_neighbours.py, runs them too)."""
    return _text(PRIVATE[name])


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_private_shape_is_proved_and_the_kernel_accepts(name: str) -> None:
    verdict = _verdict(_text(PRIVATE[name]))
    assert verdict.status == "proved", verdict.reason
    assert verdict.certificate is not None


@pytest.mark.parametrize("name", sorted(NOT_PRIVATE))
def test_non_private_twin_is_not_proved_by_the_prover(name: str) -> None:
    assert not _prover_proves(_text(NOT_PRIVATE[name]))


@pytest.mark.parametrize("name", ["mean with half the noise", "lapplus - lapplus at half the claim",
                                  "unused draw, arms two apart"])
def test_non_private_twin_is_refuted(name: str) -> None:
    assert _verdict(_text(NOT_PRIVATE[name])).status == "refuted"


def test_kernel_rejects_a_draw_sampled_alone_whose_value_leaks() -> None:
    """The certificate of the unused-draw proof, checked against the same shape
    where the arm's draw becomes the released value: the one-sided sampling
    is uncoupled, so the release differs: no shift of the last draw makes
    it agree within the claim, and the kernel says so."""
    proved, program = _decl(_text(PRIVATE["unused draw in a private if"]))
    verifier_package._cache.clear()
    cert = verify_mechanism(proved, program).certificate
    verifier_package._cache.clear()
    assert cert is not None and [b.rule for b in cert.sides[0].branches] == ["either"]
    leak_text = _text(PRIVATE["unused draw in a private if"]).replace("x = 5; } else", "x = d; } else")
    leak, leak_program = _decl(leak_text)
    decision = check(leak, leak_program, cert)
    assert not decision.accepted and "run 1 then" in decision.reason
    # and claiming that the runs take the same arm is an obligation that fails
    same = dataclasses.replace(cert, sides=(dataclasses.replace(cert.sides[0], branches=()),))
    decision = check(proved, program, same)
    assert not decision.accepted and "both runs take the same branch" in decision.reason


def test_kernel_rejects_a_mirror_on_one_sided_noise_or_a_wrong_test() -> None:
    """The mirror is sound for Laplace only, and only where the test decides the sign."""
    text = _text(PRIVATE["plus or minus the same draw"])
    decl, program = _decl(text)
    verifier_package._cache.clear()
    cert = verify_mechanism(decl, program).certificate
    verifier_package._cache.clear()
    assert cert is not None and cert.sides[0].draws[0].mirror == "q[0] > 0"
    assert check(decl, program, cert).accepted
    # the same certificate for one-sided noise is refused
    one_sided, one_program = _decl(text.replace("lap(1 / eps)", "lapplus(1 / eps)"))
    forged = dataclasses.replace(cert, sides=(dataclasses.replace(
        cert.sides[0], draws=(dataclasses.replace(cert.sides[0].draws[0], kind="lapplus"),)),))
    decision = check(one_sided, one_program, forged)
    assert not decision.accepted and "Laplace" in decision.reason
    # mirroring on a test that does not choose the sign: the release differs
    other = dataclasses.replace(cert, sides=(dataclasses.replace(
        cert.sides[0], draws=(dataclasses.replace(cert.sides[0].draws[0], mirror="q[1] > 0"),)),))
    decision = check(decl, program, other)
    assert not decision.accepted and "returned values are equal" in decision.reason
    # a mirror test may not read dist() (it is a test of the state, in both runs)
    peeking = dataclasses.replace(cert, sides=(dataclasses.replace(
        cert.sides[0], draws=(dataclasses.replace(cert.sides[0].draws[0], mirror="dist(q[0]) > 0"),)),))
    assert not check(decl, program, peeking).accepted


def test_kernel_rejects_a_one_sided_shift_that_goes_down() -> None:
    """lapplus - lapplus: the prover moves each draw up by its own part; a
    certificate moving one down by the whole distance is rejected."""
    decl, program = _decl(_text(PRIVATE["lapplus - lapplus inline"]))
    verifier_package._cache.clear()
    cert = verify_mechanism(decl, program).certificate
    verifier_package._cache.clear()
    assert cert is not None
    draws = cert.sides[0].draws
    down = (dataclasses.replace(draws[0], shift="(0 - dist(q[0]))"), dataclasses.replace(draws[1], shift="0"))
    forged = dataclasses.replace(cert, sides=(dataclasses.replace(cert.sides[0], draws=down),))
    decision = check(decl, program, forged)
    assert not decision.accepted and "shifted up" in decision.reason
