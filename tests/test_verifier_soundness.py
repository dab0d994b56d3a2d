"""Regressions for the soundness holes of issue 10: mechanisms that leak must
never be proved. Each class has the mechanism quoted in the issue, variants,
and a control (the same mechanism without the leak) that is proved under the
same time limits, so that "not proved" cannot come from a limit alone.

Checked: verdicts, counterexamples' validity, what `check` says of a leaking
mechanism called from a `def`, and what the runtime computes where the
product program now gives a construct a total meaning (reads outside a
vector are 0).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction

import pytest

import fuzzpy.verifier as verifier_package
from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.release.pipeline import load_source, parse
from fuzzpy.runtime.interpreter import Interpreter
from fuzzpy.runtime.mechanisms import run_mechanism
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.verifier import Verdict
from fuzzpy.verifier.mirror import symmetric
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.relation import neighbours


def _decl(text: str) -> tuple[MechanismDecl, object]:
    program = parse_program(text, "soundness.fz")
    return next(d for d in program.decls if isinstance(d, MechanismDecl)), program


#: CPU seconds for the prover: the controls are proved well within them.
PROOF_SECONDS = 3


def _verify(text: str, refute_seconds: float = 0.5) -> Verdict:
    decl, program = _decl(text)
    return verify_mechanism(decl, program, proof_seconds=PROOF_SECONDS, refute_seconds=refute_seconds)


def _valid_counterexample(text: str, verdict: Verdict) -> None:
    """A refutation names a pair the claim speaks about."""
    assert verdict.status == "refuted"
    cx = verdict.counterexample
    assert cx is not None
    info = analyse(_decl(text)[0])
    pairs = [(cx.params, cx.neighbour_params, cx.inputs, cx.neighbour),
             (cx.neighbour_params, cx.params, cx.neighbour, cx.inputs)]
    assert any(neighbours(info, *pair) for pair in pairs)


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


# ---------------------------------------------------------------- 1. obligations before and between loops

SVT_STREAM = """
mechanism svt (q : vec[inf] num, t : num, N : int, eps : num) : list num
  requires eps > 0
  requires N > 0
  privacy eps
{{
  var tt = t + lap(2 / eps);
  {before}
  var i = 0;
  var count = 0;
  while (i < len(q) && count < 1) {{
    if (q[i] + lap(4 / eps) >= tt) {{ output 1; count = count + 1; }} else {{ output 0; }}
    i = i + 1;
  }}
  {after}
}}
"""

FIRST_ANSWERS = """
mechanism first (q : vec[inf] num, t : num, eps : num) : list num
  requires eps > 0
  privacy eps
{{
  {before}
  var i = 0;
  while (i < len(q) && i < 1) {{
    output q[i] + lap(1 / eps);
    i = i + 1;
  }}
  {after}
}}
"""


def test_controls_without_the_leaks_are_proved() -> None:
    assert _verify(SVT_STREAM.format(before="", after="")).status == "proved"
    assert _verify(FIRST_ANSWERS.format(before="", after="")).status == "proved"


@pytest.mark.parametrize(("template", "before", "after"), [
    (SVT_STREAM, "if (N > 3) { output tt; }", ""),  # the noisy threshold, only for N > 3
    (SVT_STREAM, "if (N > 3) { output q[0]; }", ""),
    (FIRST_ANSWERS, "if (t > 5) { output q[0]; }", ""),  # an exact entry, only for t > 5
    (FIRST_ANSWERS, "", "if (t > 5) { output q[0]; }\n  var j = 0;\n  while (j < 0) { j = j + 1; }"),
    (FIRST_ANSWERS, "if (t > 5) { if (q[0] > 0) { output 1; } }", ""),  # branch agreement before a loop
], ids=["threshold before", "entry before", "entry before, public test", "between loops", "branch before"])
def test_obligations_before_and_between_loops_are_proved_for_every_parameter(
        template: str, before: str, after: str) -> None:
    assert _verify(template.format(before=before, after=after)).status != "proved"


def test_a_leak_before_a_loop_is_refused_when_called_from_a_def(tmp_path) -> None:  # noqa: ANN001
    text = SVT_STREAM.format(before="if (N > 3) { output tt; }", after="") + \
        "def f : fuzzy (list num) = svt [1, 2, 3] 2 5 1;\n"
    path = _write(tmp_path, text)
    program = parse(load_source(path))
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    # the verdict `check` will ask for, with this file's shorter limits (cached per process)
    assert verify_mechanism(decl, program, proof_seconds=PROOF_SECONDS, refute_seconds=0.5).status != "proved"
    code, output = _run(["check", "--json", path])
    assert code == 1
    assert "FZ310" in {d["code"] for d in json.loads(output)["diagnostics"]}


def _write(folder, text: str) -> str:  # noqa: ANN001
    path = folder / "mechanisms.fz"
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------- 2. noise in a loop guard

GUARD = """
mechanism g (q : vec[inf] num, t : num, eps : num) : int
  requires eps > 0
  privacy eps
{{
  var i = 0;
  while (i < len(q) && {test}) {{ i = i + 1; }}
  return i;
}}
"""


@pytest.mark.parametrize("test", [
    "q[i] + lap(8 / eps) < t",  # as quoted: no threshold noise, paid on every trip
    "lap(8 / eps) + q[i] < t",
    "q[i] < t + lap(8 / eps)",
])
def test_noise_in_a_loop_guard_is_paid_on_every_trip(test: str) -> None:
    assert _verify(GUARD.format(test=test)).status != "proved"


def test_public_noise_in_a_loop_guard_costs_nothing() -> None:
    assert _verify(GUARD.format(test="t + lap(8 / eps) > 0")).status == "proved"


# ---------------------------------------------------------------- 3. indexing: total reads, no crash channel

PREVIOUS = """
mechanism prev (q : vec[inf] num, i : int, eps : num) : list num
  requires eps > 0
  privacy eps
{{
  {body}
}}
"""


def _mechanism_output(text: str, args: tuple) -> object:
    decl, program = _decl(text)
    return run_mechanism(decl, args, Interpreter(program, SeededSource(5)))  # type: ignore[arg-type]


def test_a_read_before_the_first_entry_is_zero_in_the_proof_and_at_run_time() -> None:
    text = PREVIOUS.format(body="var prev = q[i - 1];\n  output (i == 0 ? prev : 0);")
    assert _verify(text).status == "proved"  # prev is 0 when i == 0: the output is always 0
    assert _mechanism_output(text, ([7, 11, 13], 0, 1)) == [0]  # not q[-1] = 13


@pytest.mark.parametrize("body", [
    "output q[i - 1];",
    "var prev = q[i - 1];\n  output (i == 1 ? prev : 0);",
    "output q[len(q) - 1];",
])
def test_an_exact_entry_is_not_proved_at_any_index(body: str) -> None:
    assert _verify(PREVIOUS.format(body=body)).status != "proved"


def test_a_read_past_the_end_is_not_a_crash_channel() -> None:
    text = """
mechanism crash (q : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  if (q[0] > 1000) { var z = q[len(q)]; }
  return lap(1 / eps);
}
"""
    assert _verify(text).status == "proved"
    for q in ([0], [5000], [5000, 1], []):
        assert isinstance(_mechanism_output(text, (q, 1)), float)  # never a run-time failure


@pytest.mark.parametrize("guard", ["i < len(q) && q[i] * 0 < 1", "q[i] * 0 < 1 && i < len(q)"])
def test_a_read_in_the_loop_guard_does_not_hide_the_normal_exit(guard: str) -> None:
    text = f"""
mechanism hide (q : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{{
  var i = 0;
  while ({guard}) {{ i = i + 1; }}
  return q[0];
}}
"""
    assert _verify(text).status != "proved"


def test_a_vector_index_must_be_an_integer() -> None:
    text = PREVIOUS.format(body="output q[i / 2] + lap(1 / eps);")
    with pytest.raises(FuzzError) as caught:
        _verify(text)
    assert "FZ404" in {d.code for d in caught.value.diagnostics}


# ---------------------------------------------------------------- 4. forall and dist(q[e]) in requires

PINNED = """
mechanism pin (q : vec[inf] num, eps : num) : num
  requires eps > 0
  requires {relation}
  privacy eps
{{
  return {released};
}}
"""


@pytest.mark.parametrize("relation", ["forall i. dist(q[0]) == 0", "dist(q[0]) == 0"])
def test_a_precondition_on_one_entry_does_not_pin_the_others(relation: str) -> None:
    text = PINNED.format(relation=relation, released="q[1]")
    verdict = _verify(text, refute_seconds=8)
    _valid_counterexample(text, verdict)
    cx = verdict.counterexample
    assert cx is not None and cx.inputs["q"][0] == cx.neighbour["q"][0]


@pytest.mark.parametrize(("relation", "released"), [
    ("forall i. dist(q[0]) == 0", "q[0]"),
    ("dist(q[0]) == 0", "q[0]"),
    ("forall i. dist(q[i]) == 0", "q[1]"),
])
def test_pinned_entries_are_public(relation: str, released: str) -> None:
    assert _verify(PINNED.format(relation=relation, released=released)).status == "proved"


# ---------------------------------------------------------------- 5. one-sided relations under abs

ONE_SIDED = """
mechanism one (x : num, eps : num) : num
  requires eps > 0
  requires {relation}
  privacy eps
{{
  return x + lapplus(1 / eps);
}}
"""


@pytest.mark.parametrize(("relation", "expected"), [
    ("abs(dist(x)) <= 1", True),
    ("dist(x) <= 1 && dist(x) >= -1", True),
    ("dist(x) * dist(x) <= 1", True),
    ("abs(2 * dist(x) - 1) <= 1", False),  # 0 <= dist(x) <= 1
    ("abs(2 * dist(x) + 1) <= 1", False),  # -1 <= dist(x) <= 0
    ("abs(dist(x) - 0) <= 1 && dist(x) >= 0", False),
])
def test_symmetry_of_a_relation_is_decided_by_its_meaning(relation: str, expected: bool) -> None:
    assert symmetric(analyse(_decl(ONE_SIDED.format(relation=relation))[0])) is expected


def test_a_one_sided_relation_under_abs_is_proved_in_both_orientations(monkeypatch: pytest.MonkeyPatch) -> None:
    # -1 <= dist(x) <= 0: shifting the draw up by -dist(x) proves this orientation; the
    # reverse needs a negative shift of one-sided noise. With the refuter silenced, the
    # verdict must come from the prover alone.
    monkeypatch.setattr(verifier_package, "refute",
                        lambda info, seconds, max_length=6, quick=False, candidates=None: (None, "off"))
    verifier_package._cache.clear()
    verdict = _verify(ONE_SIDED.format(relation="abs(2 * dist(x) + 1) <= 1"))
    verifier_package._cache.clear()
    assert verdict.status == "unknown"
    text = ONE_SIDED.format(relation="abs(2 * dist(x) + 1) <= 1").replace("lapplus", "lap")
    assert _verify(text).status == "proved"


# ---------------------------------------------------------------- 7. contradictions, isolation

CONTRADICTION = """
mechanism contra (q : vec[inf] num, x : num, eps : num) : num
  requires eps > 0
  requires {relation}
  privacy eps
{{
  return q[0] + x;
}}
"""


@pytest.mark.parametrize("relation", [
    "eps < 0",
    "dist(x) >= 1 && dist(x) <= -1",
    "forall i. dist(q[i]) >= 2",
])
def test_a_vacuous_proof_says_so(relation: str, tmp_path) -> None:  # noqa: ANN001
    verdict = _verify(CONTRADICTION.format(relation=relation))
    assert verdict.status == "proved" and verdict.vacuous
    code, output = _run(["verify", "--json", _write(tmp_path, CONTRADICTION.format(relation=relation))])
    document = json.loads(output)
    assert code == 0
    assert document["mechanisms"][0]["reason"]
    assert [(d["code"], d["severity"]) for d in document["diagnostics"]] == [("FZ406", "warning")]


def test_an_ordinary_proof_is_not_vacuous() -> None:
    verdict = _verify(CONTRADICTION.format(relation="abs(dist(x)) <= 1").replace("q[0] + x", "x + lap(1 / eps)"))
    assert verdict.status == "proved" and not verdict.vacuous and verdict.reason is None


def test_an_internal_error_in_one_mechanism_keeps_the_others(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # noqa: ANN001
    real = verifier_package.search

    def broken(info, seconds):  # noqa: ANN001, ANN202
        if info.decl.name == "bad":
            raise RuntimeError("boom")
        return real(info, seconds)

    monkeypatch.setattr(verifier_package, "search", broken)
    verifier_package._cache.clear()
    text = "\n".join(
        f"mechanism {name} (x : num, eps : num) : num\n  requires eps > 0\n  requires abs(dist(x)) <= 1\n"
        f"  privacy eps\n{{\n  return x + lap({scale} / eps);\n}}\n"
        for name, scale in (("good", 1), ("bad", 1), ("also_good", 2))
    )
    code, output = _run(["verify", "--json", _write(tmp_path, text)])
    verdicts = {m["name"]: m["verdict"] for m in json.loads(output)["mechanisms"]}
    assert verdicts == {"good": "proved", "bad": "unknown", "also_good": "proved"}
    assert code == 1
    verifier_package._cache.clear()


# ---------------------------------------------------------------- 8. more of the same classes


def test_a_selector_decided_inside_a_merged_branch_is_not_trusted() -> None:
    # the comparison choosing the draw's alignment sits in a branch the two runs may
    # take differently; 100 eps of loss on `true` for the claim eps
    text = """
mechanism pend (x : num, t : num, eps : num) : bool
  requires eps > 0
  requires dist(x) <= 0
  requires dist(x) >= -1
  privacy eps
{
  var v = x + lap(1 / (100 * eps));
  var r = false;
  if (t > -1000) { if (v > t) { r = true; } }
  return r;
}
"""
    assert _verify(text, refute_seconds=8).status != "proved"


def test_division_by_zero_is_zero_at_run_time() -> None:
    text = """
mechanism div (q : vec[inf] num, eps : num) : list num
  requires eps > 0
  privacy eps
{
  output 1 / (q[0] - q[0]);
}
"""
    assert _verify(text).status == "proved"
    assert _mechanism_output(text, ([3], 1)) == [0]


def test_reads_outside_the_vector_have_distance_zero_in_a_proof() -> None:
    # entries past the end are the padding 0 in both runs: releasing one is private
    text = PREVIOUS.format(body="output q[len(q) + i * i];")
    assert _verify(text).status == "proved"
    assert _mechanism_output(text, ([4, 5], 0, Fraction(1))) == [0]


@pytest.mark.parametrize("claim", ["abs(x) * eps + eps", "eps + dist(x)", "eps + 0 * lap(1)"])
def test_a_claim_depending_on_private_data_is_refused(claim: str) -> None:
    text = ONE_SIDED.format(relation="abs(dist(x)) <= 1").replace("privacy eps", f"privacy {claim}")
    with pytest.raises(FuzzError) as caught:
        _verify(text)
    assert "FZ404" in {d.code for d in caught.value.diagnostics}


def test_a_stream_with_no_answer_for_a_short_prefix_is_searched_not_crashed() -> None:
    """Adversarial review of issue 10 (round 2, C1): a one-entry input that
    releases nothing made the refuter's long-input search index an empty
    output (an internal error, 'unknown'); the mechanism is not private."""
    text = """mechanism e1o (q : vec[inf] num, t : num, eps : num) : list bool
  requires eps > 0
  privacy eps
{
  var tt = t + lap(2 / eps);
  var count = 0;
  if (q[0] > 0.5) { count = 1; }
  var i = 1;
  while (i < len(q) && count < 2) {
    if (q[i] + lap(8 / eps) >= tt) { output true; count = count + 1; } else { output false; }
    i = i + 1;
  }
}
"""
    verdict = _verify(text, refute_seconds=8)
    assert "internal error" not in verdict.reason
    _valid_counterexample(text, verdict)
