"""A pure cost that is a STEP of the distance (randomized response, k-ary
randomized response, a verified mechanism proved for `abs(dist(x)) <= 1`,
the staircase) cannot travel in a function type, whose epsilon is charged
per unit of the argument's distance (review s29d, UNSOUND 2: `(fun v -> rr[1]
(v > 3))` at `size db / 1000` was charged 0.001 while a move of 0.001 can flip
`v > 3`, the truth being 1). Such a function value on a real-valued argument
or capture is refused; direct calls keep their whole-step charge, Laplace
stays linear, and whole-distance metrics (a bag, an int) keep the linear
charge (a move there is 0 or at least 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main

PRELUDE = """
type Visit = { minutes : num, ward : int };
def total (vs : bag Visit) : num = sum[0, 0.01] (map (fun v -> v.minutes) vs);
def flip (e : num) (t : num) : fuzzy bool = rr[e] (t > 3);
def pick (t : num) : fuzzy int = krr[1, 3] (if t > 3 then 2 else 0);
mechanism above (x : num, eps : num) : bool
  requires abs(dist(x)) <= 1
  requires eps > 0
  privacy eps
{
  var b = false;
  if (x + lap(2 / eps) >= 3) { b = true; }
  return b;
}
def wrap (t : num) : fuzzy bool = above t 1;
def wrap2 (e : num) (t : num) : fuzzy bool = above t e;
"""

#: each accepted before at 0.01 (0.02 in the loop) per neighbour
THROUGH_VALUES = {
    "rr in a let-bound lambda": "def q (vs : bag Visit) : fuzzy bool = { let g = fun (t : num) -> rr[1] (t > 3); g (total vs) };",
    "rr in a lambda applied at once": "def q (vs : bag Visit) : fuzzy bool = (fun (t : num) -> rr[1] (t > 3)) (total vs);",
    "a partially applied definition": "def q (vs : bag Visit) : fuzzy bool = { let g = flip 1; g (total vs) };",
    "krr in a definition used as a value": "def q (vs : bag Visit) : fuzzy int = { let g = pick; g (total vs) };",
    "a verified mechanism in a lambda": "def q (vs : bag Visit) : fuzzy bool = { let g = fun (t : num) -> above t 1; g (total vs) };",
    "inside loop": "def q (vs : bag Visit) : fuzzy bool = loop[2] false (fun s -> (fun (t : num) -> rr[1] (t > 3)) (total vs));",
    "krr on a branch": "def q (vs : bag Visit) : fuzzy int = (fun (t : num) -> krr[1, 3] (if t > 3 then 2 else 0)) (total vs);",
}


ACCEPTED = {  # name: (body, epsilon)
    "direct rr": ("def q1 (vs : bag Visit) : fuzzy bool = flip 1 (total vs);", 1.0),  # a direct call: one whole step
    "direct mechanism": ("def q2 (vs : bag Visit) : fuzzy bool = above (total vs) 1;", 1.0),
    "laplace lambda": ("def q3 (vs : bag Visit) : fuzzy num = (fun (t : num) -> laplace[1] t) (total vs);", 0.01),
    "rr on rows": ("def q4 (vs : bag Visit) : fuzzy bool = (fun (b : bag Visit) -> rr[1] (size b > 3)) vs;", 1.0),
    "krr on an int": ("def q5 (vs : bag Visit) : fuzzy int = (fun (i : int) -> krr[1, 3] i) (size vs);", 1.0),
    # the private input of `requires abs(dist(x)) <= 1` is not a static parameter of a wrapper
    # (review s29d UX: FZ202 "noise scale depends on db")
    "a wrapped mechanism": ("def q6 (vs : bag Visit) : fuzzy bool = wrap (total vs);", 1.0),
    "a wrapped mechanism at a static eps": ("def q7 (vs : bag Visit) : fuzzy bool = wrap2 0.5 (total vs);", 0.5),
    "a wrapped mechanism, three steps": ("def q8 (vs : bag Visit) : fuzzy bool = wrap (300 * total vs);", 3.0),
}


def _check(tmp: Path, bodies: list[str]) -> tuple[int, str, str]:
    import contextlib
    import io

    src = tmp / "q.fz"
    src.write_text(PRELUDE + "\n".join(bodies) + "\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["check", "--json", str(src)])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> dict[int, set[str]]:
    """One check of every spelling, each its own definition on its own line:
    the codes of the errors reported on each line."""
    bodies = [body.replace("def q ", f"def q{i} ", 1) for i, body in enumerate(THROUGH_VALUES.values())]
    code, out, _ = _check(tmp_path_factory.mktemp("refused"), bodies)
    assert code != 0
    codes: dict[int, set[str]] = {}
    for diagnostic in json.loads(out)["diagnostics"]:
        codes.setdefault(diagnostic["span"]["line"], set()).add(diagnostic["code"])
    return codes


@pytest.mark.parametrize("name", sorted(THROUGH_VALUES))
def test_a_step_cost_through_a_function_value_is_refused(name: str, refused: dict[int, set[str]]) -> None:
    line = PRELUDE.count("\n") + list(THROUGH_VALUES).index(name) + 1
    assert refused.get(line, set()) & {"FZ301", "FZ306"}, refused


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    code, out, err = _check(tmp_path_factory.mktemp("accepted"), [body for body, _ in ACCEPTED.values()])
    assert code == 0, err
    return {d["name"]: d for d in json.loads(out)["definitions"]}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_what_stays_accepted_is_charged_at_least_a_step(name: str, accepted: dict[str, dict[str, object]]) -> None:
    body, epsilon = ACCEPTED[name]
    found = accepted[body.split()[1]]
    privacy = found["privacy"]
    assert isinstance(privacy, dict)
    assert float(privacy["vs"]["epsilon"]) == pytest.approx(epsilon)
