"""Issue 23, item 4: reach on shapes the literature writes, each with its
non-private twin refuted (a new "proved" shape must not prove its leak).

Proved now: a draw under `max`/`min`/`abs` (a clamp written as a call), two
draws in one expression, one-sided noise known to be >= 0. Refuted now: leaks
that need a move by the whole bound of a `requires` (3), a fractional or a
mixed-sign move, a vector entry at one of the program's literals, an input
longer than 6 when the program mentions such a length, and an integer
parameter past a literal its copy is compared with.
"""

from __future__ import annotations

import pytest

from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.verifier import Verdict
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.relation import neighbours

HEAD = """mechanism reach ({params}) : num
  requires eps > 0
  {requires}
  privacy {claim}
{{
  {body}
}}
"""

X = "x : num, eps : num"
Q = "q : vec[inf] num, eps : num"


def _text(params: str, requires: str, claim: str, body: str) -> str:
    return HEAD.format(params=params, requires=requires, claim=claim, body=body)


def _verify(text: str) -> Verdict:
    # named apart from the other files' mechanisms: verdicts are cached per
    # mechanism within a process, and theirs used shorter limits
    program = parse_program(text, "reach.fz")
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return verify_mechanism(decl, program, proof_seconds=3, refute_seconds=10)


#: (name, private version, its non-private twin)
PAIRS = [
    ("max with a constant",
     (X, "requires abs(dist(x)) <= 1", "eps", "return max(x + lap(1 / eps), 0);"),
     (X, "requires abs(dist(x)) <= 2", "eps", "return max(x + lap(1 / eps), 0);")),
    ("abs",
     (X, "requires abs(dist(x)) <= 1", "eps", "return abs(x + lap(1 / eps));"),
     (X, "requires abs(dist(x)) <= 2", "eps", "return abs(x + lap(1 / eps));")),
    ("min of an entry",
     (Q, "", "eps", "return min(q[0] + lap(1 / eps), 5);"),
     (Q, "", "eps", "return min(q[0] + lap(0.5 / eps), 5);")),
    ("max with a private other side",
     (X.replace("x : num", "x : num, y : num"), "requires abs(dist(x)) <= 1", "eps",
      "return max(x + lap(1 / eps), 0 - 4);"),
     (X.replace("x : num", "x : num, y : num"), "requires abs(dist(x)) <= 1\n  requires abs(dist(y)) <= 1", "eps",
      "return max(x + lap(1 / eps), y);")),
    ("negated inside abs",
     (X, "requires abs(dist(x)) <= 1", "eps", "return 0 - abs(0 - x + lap(1 / eps));"),
     (X, "requires abs(dist(x)) <= 1", "eps", "return 0 - abs(0 - x + lap(0.25 / eps));")),
    ("two draws, one shifted",
     (X, "requires abs(dist(x)) <= 1", "eps", "return x + lap(2 / eps) + lap(2 / eps);"),
     (X, "requires abs(dist(x)) <= 3", "eps", "return x + lap(2 / eps) + lap(2 / eps);")),
    ("two draws, half the claim",
     (X, "requires abs(dist(x)) <= 1", "eps / 2", "return lap(2 / eps) + x + lap(2 / eps);"),
     (X, "requires abs(dist(x)) <= 1", "eps / 2", "return lap(1 / eps) + x + lap(1 / eps);")),
    ("one-sided noise is never negative",
     (X, "requires abs(dist(x)) <= 1", "eps",
      "var n = lapplus(1 / eps);\n  if (n < 0) { return x; }\n  return x + lap(1 / eps);"),
     (X, "requires abs(dist(x)) <= 1", "eps",
      "var n = lap(1 / eps);\n  if (n < 0) { return x; }\n  return x + lap(1 / eps);")),
]


@pytest.mark.parametrize("name", [p[0] for p in PAIRS])
def test_the_private_shape_is_proved(name: str) -> None:
    private = next(p[1] for p in PAIRS if p[0] == name)
    verdict = _verify(_text(*private))
    assert verdict.status == "proved", verdict.reason


@pytest.mark.parametrize("name", [p[0] for p in PAIRS])
def test_its_non_private_twin_is_refuted(name: str) -> None:
    twin = next(p[2] for p in PAIRS if p[0] == name)
    text = _text(*twin)
    verdict = _verify(text)
    assert verdict.status == "refuted", verdict.reason
    _valid(text, verdict)


def _valid(text: str, verdict: Verdict) -> None:
    cx = verdict.counterexample
    assert cx is not None
    info = analyse(next(d for d in parse_program(text, "reach.fz").decls if isinstance(d, MechanismDecl)))
    pairs = [(cx.params, cx.neighbour_params, cx.inputs, cx.neighbour),
             (cx.neighbour_params, cx.params, cx.neighbour, cx.inputs)]
    assert any(neighbours(info, *pair) for pair in pairs)


LEAKS = [
    ("length 7, the issue's reproducer", Q, "var x = 0;\n  if (q[0] > 0) {\n    if (len(q) < 7) { x = 0; } "
     "else { x = 1000; }\n  }\n  return x + lap(1 / eps);"),
    ("length 9 in a local", Q, "var n = len(q);\n  var x = 0;\n  if (q[1] > 0) { if (n >= 9) { x = 1000; } }\n"
     "  return x + lap(1 / eps);"),
    ("an entry at a literal", Q, "var x = 0;\n  if (q[0] >= 50) { if (q[0] < 51) { x = 1000; } }\n"
     "  return x + lap(1 / eps);"),
    ("a fractional move", Q, "var x = 0;\n  if (q[0] > 0 && q[0] < 1) { x = 1000; }\n  return x + lap(1 / eps);"),
    ("a mixed-sign move", Q, "var x = 0;\n  if (len(q) >= 3) { if (q[0] - q[1] + q[2] >= 3) { x = 1000; } }\n"
     "  return x + lap(1 / eps);"),
    ("an int parameter past a copy's literal", "q : vec[inf] num, k : int, eps : num",
     "var m = k;\n  var x = 0;\n  if (q[0] > 0) { if (m > 3) { x = 1000; } }\n  return x + lap(1 / eps);"),
    ("a half move of a scalar", X.replace("x : num", "x : num"),
     "var x2 = 0;\n  if (x > 0 && x < 1) { x2 = 1000; }\n  return x2 + x + lap(1 / eps);"),
]


@pytest.mark.parametrize("name", [leak[0] for leak in LEAKS])
def test_the_refuter_reaches_the_leak(name: str) -> None:
    params, body = next((p, b) for n, p, b in LEAKS if n == name)
    requires = "requires abs(dist(x)) <= 1" if params.startswith("x :") else ""
    text = _text(params, requires, "eps", body)
    verdict = _verify(text)
    assert verdict.status == "refuted", verdict.reason
    _valid(text, verdict)
