"""Review of issue 30's verification game (black-box findings): refutations
whose output is `no value returned`, hints whose shift is not a number, and
the other defects the reviewer reported, each pinned by a test written
against the CLI, the JSON document or the Python API."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from fuzzpy.api.program import loads
from fuzzpy.cli import main


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


# a path that falls off the end releases nothing; the refuter finds one (1-based q index 1 here)
FALLS_OFF = """
mechanism falls_off (xs : vec[inf] num, eps : num) : bool
  requires eps > 0
  privacy eps
{
  var k = 0;
  while (k < len(xs)) {
    if (xs[k] > 0) { return true; }
    k = k + 1;
  }
}
"""


@pytest.mark.parametrize("flags", [[], ["--json"], ["--explain"]])
def test_refutation_with_no_returned_value_is_reported_not_crashed(tmp_path: Path, flags: list[str]) -> None:
    path = tmp_path / "falls_off.fz"
    path.write_text(FALLS_OFF, encoding="utf-8")
    code, text = _run(["verify", *flags, str(path)])
    assert "FZ799" not in text and "IndexError" not in text
    if flags == ["--json"]:
        document = json.loads(text)["mechanisms"][0]
        assert document["verdict"] == "refuted"
        assert document["counterexample"]["output"] is None
    else:
        assert "refuted" in text
        assert "no value returned" in text
    assert code != 0


def test_api_counterexample_with_no_returned_value() -> None:
    result = loads(FALLS_OFF, "falls_off.fz").verify(fresh=True)[0]
    cx = result.counterexample
    assert cx is not None and cx["output"] is None
    assert any("no value returned" in line for line in result.steps)


ROSNM_WITH = """
mechanism pick (v : vec[inf] num, eps : num) : int
  requires eps > 0
  privacy eps
{{
  var best = 0;
  var arg = 0;
  var j = 0;
  while (j < len(v)) {{
    var c = v[j] + lapplus(2 / eps) align {align};
    if (j == 0 || c > best) {{ arg = j; best = c; }}
    j = j + 1;
  }}
  return arg;
}}
"""


@pytest.mark.parametrize("align", ["(false)", "(j == s ==> 1)", "(j < s && 1 < 2)"])
def test_a_condition_as_a_shift_is_a_located_type_error(tmp_path: Path, align: str) -> None:
    path = tmp_path / "pick.fz"
    path.write_text(ROSNM_WITH.format(align=align), encoding="utf-8")
    for flags in ([], ["--explain"], ["--json"]):  # rejected before any prover runs
        code, text = _run(["verify", *flags, str(path)])
        assert code != 0
        assert "FZ404" in text and "must be a number" in text, text
        assert "internal error" not in text
        assert (":10:" in text) or ('"line": 10' in text)  # located at the hint's line


RUNNING_SUM = """
mechanism running (xs : vec[1] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  var acc = 0;
  var n = 0;
  while (n < len(xs)) {
    acc = xs[n] + acc;
    n = n + 1;
  }
  return acc + lap(1 / eps);
}
"""


def _explained(text: str, name: str) -> list[str]:
    result = loads(text, f"{name}.fz").verify(fresh=True)[0]
    assert result.verdict.status == "proved"
    return result.steps


def test_a_self_assignment_names_the_value_before_it() -> None:
    """dist(e) is read after the statement: `acc = xs[n] + acc` must not say
    `acc2 - acc1 = dist(xs[n]) + dist(acc)` (that makes dist(xs[n]) = 0)."""
    steps = _explained(RUNNING_SUM, "running")
    line = next(s for s in steps if "acc = xs[n] + acc;" in s)
    assert "dist(acc before)" in line and "dist(acc))" not in line and "dist(acc) " not in line
    assert any("dist(x before)" in s for s in steps)  # the notation is explained


def test_a_draw_in_the_released_value_has_its_rule_and_its_cost() -> None:
    steps = _explained(RUNNING_SUM, "running")
    at = next(k for k, s in enumerate(steps) if "return acc + lap(1 / eps);" in s)
    assert "Laplace rule" in steps[at + 1]
    cost = steps[steps.index("    cost:"):]
    assert any("the draw at line 12" in s and "pays" in s for s in cost), cost
    assert any("(the draw at line 12)" in s and "<= eps" in s for s in cost), cost


def test_the_cheapest_claim_lists_a_draw_for_every_term() -> None:
    """svt_no_cutoff: the claim `eps + len(q) * eps / 4` was printed with no
    draw at all; every term must now name the draw it budgets, and the terms
    must be exactly the claim's."""
    root = Path(__file__).resolve().parent.parent / "examples" / "mechanisms" / "buggy"
    from fuzzpy.api.program import load

    result = load(root / "svt_no_cutoff.fz").verify(fresh=True)[0]
    cheaper = result.cheapest_claim()
    assert cheaper is not None
    terms = [c.split(": ", 1)[0] for c in cheaper.costs]
    assert " + ".join(terms) == cheaper.claim
    assert all("the draw at line" in c for c in cheaper.costs)
    assert any("trips" in c for c in cheaper.costs)  # the per-trip term says so


ARGMAX_REQUIRING = """
mechanism arg (v : vec[inf] num, eps : num) : int
  requires eps > 0
  requires {req}
  privacy eps
{{
  var j = 0;
  var at = 0;
  var top = 0;
  while (j < len(v)) {{
    var c = v[j] + lapplus(2 / eps){align};
    if (j == 0 || c > top) {{ at = j; top = c; }}
    j = j + 1;
  }}
  return at;
}}
"""


def test_the_pointwise_output_in_requires_is_an_unknown_name(tmp_path: Path) -> None:
    path = tmp_path / "arg.fz"
    path.write_text(ARGMAX_REQUIRING.format(req="s >= 2", align=""), encoding="utf-8")
    code, text = _run(["verify", str(path)])
    assert code != 0 and "FZ401" in text and "`s`" in text and "requires" in text, text
    assert "unsupported" not in text


@pytest.mark.parametrize("align", [" align (1 / 0)", " align (j == s ? 2 : 0 / (3 - 3))"])
def test_a_hint_that_divides_by_zero_is_rejected_as_such(tmp_path: Path, align: str) -> None:
    path = tmp_path / "arg.fz"
    path.write_text(ARGMAX_REQUIRING.format(req="len(v) >= 0", align=align), encoding="utf-8")
    code, text = _run(["verify", str(path)])
    assert code != 0 and "FZ404" in text and "divides by zero" in text, text
    assert ":11:" in text


GUARD_DRAW = """
mechanism first_above (rows : vec[inf] num, cut : num, eps : num) : int
  requires eps > 0
  privacy eps
{
  var noisy_cut = cut + lap(2 / eps);
  var n = 0;
  while (n < len(rows) && rows[n] + lap(2 / eps) < noisy_cut) {
    n = n + 1;
  }
  return n;
}
"""


@pytest.mark.slow  # 10-30 s: the slow job runs it (the default suite keeps its 10 minutes)
def test_the_cheapest_claim_search_budgets_a_draw_in_a_loop_guard() -> None:
    result = loads(GUARD_DRAW, "first_above.fz").verify(fresh=True)[0]
    assert result.status == "refuted"
    cheaper = result.cheapest_claim()
    assert cheaper is not None
    assert any("line 8" in c for c in cheaper.costs), cheaper  # the guard's draw is budgeted
    assert cheaper.claim in ("eps + eps / 2", "eps / 2 + eps")


def test_a_claim_growing_with_the_input_beats_a_constant_one() -> None:
    """svt_no_cutoff is proved at `len(q) * eps / 4` (below eps for short
    inputs, so it was filtered out as `not above the refuted claim`)."""
    root = Path(__file__).resolve().parent.parent / "examples" / "mechanisms" / "buggy"
    from fuzzpy.api.program import load

    cheaper = load(root / "svt_no_cutoff.fz").verify(fresh=True)[0].cheapest_claim()
    assert cheaper is not None and cheaper.claim == "len(q) * eps / 4"
