"""`fuzzpy audit` (issue 30 item 6): an empirical lower bound on epsilon, beside the claim.

A leak found by the audit of a proved program is a soundness bug, so the
examples are audited: every buggy mechanism of examples/mechanisms/buggy/ that
the audit can catch must show a loss above its claim at 95% confidence, and the
proved ones must stay below theirs. Runs are kept small (20,000 a side; the
heavier cases are marked slow); bench/audit.py gives the full figures.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language import syntax as S
from fuzzpy.runtime import lanes
from fuzzpy.runtime.audit import (
    AuditError,
    audit_definition,
    audit_mechanism,
    clopper_pearson,
    directed_bound,
    loss_bound,
    ratio_events,
    safe_audit,
)
from fuzzpy.runtime.interpreter import Interpreter
from fuzzpy.runtime.mechanisms import run_mechanism
from fuzzpy.runtime.noise import laplace_grid
from fuzzpy.runtime.randomness import SeededSource

ROOT = Path(__file__).resolve().parent.parent
MECHANISMS = ROOT / "examples" / "mechanisms"
SMALL = {"samples": 20_000, "pilot": 4_000}


def _program(path: Path) -> S.Program:
    return parse_program(path.read_text(), str(path))


def _audit_example(path: Path, **options: object):  # type: ignore[no-untyped-def]
    return audit_mechanism(_program(path), path.stem, **{**SMALL, **options})  # type: ignore[arg-type]


# ---------------------------------------------------------------- the examples

#: Buggy mechanisms the audit catches with few runs (at least two run by default).
CAUGHT = [
    "histogram_wrong_scale",
    "svt_no_query_noise",
    "rnm_exp_release_value",
    pytest.param("partial_sum_half_noise", marks=pytest.mark.slow),
    pytest.param("svt_lee_clifton", marks=pytest.mark.slow),
    pytest.param("rnm_release_value", marks=pytest.mark.slow),
    pytest.param("smart_sum_no_block_noise", marks=pytest.mark.slow),
    pytest.param("svt_no_cutoff", marks=pytest.mark.slow),
    pytest.param("svt_release_query", marks=pytest.mark.slow),  # missed by the test suite's net (issue 23)
]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gap_svt_release_query", "adaptive_svt_release_query"])
def test_an_svt_releasing_its_noisy_query_is_caught_at_default_settings(name: str) -> None:
    """The leak adds up over the queries below the threshold, in the tails of several output
    patterns at once (docs/audit.md): it takes the claim's numbers high, a long query list,
    a free public number far from 0 and the union of the high-ratio cells."""
    path = MECHANISMS / "buggy" / f"{name}.fz"
    result = audit_mechanism(_program(path), name)
    assert result.leak and result.samples == 100_000, result.text()
    assert "top" in result.best.event  # a union of cells, not one threshold


def test_the_union_of_high_ratio_cells_is_a_candidate() -> None:
    """Outputs (a, v): a pattern a in 0..3 and a value v. On the second input v is pushed towards
    0 when a is odd; no one threshold on a or on v separates the inputs as well as the union
    "a odd and v high" does, which the cell events must find."""
    rng = np.random.default_rng(11)

    def outputs(n: int, second: bool) -> lanes.Outputs:
        a = rng.integers(0, 4, n).astype(float)
        v = rng.random(n)
        v = np.where(second & (a % 2 == 1), v**4, v)
        return lanes.Outputs(np.stack([a, v], axis=1), np.full(n, 2))

    first, second = outputs(8_000, False), outputs(8_000, True)
    atoms = [np.arange(4.0), np.array([])]
    events = ratio_events(first, second, atoms)
    assert events
    fresh = outputs(40_000, False), outputs(40_000, True)
    name, best = max(events, key=lambda e: np.log((e[1](fresh[0]).sum() + 1) / (e[1](fresh[1]).sum() + 1)))
    ratio = np.log((best(fresh[0]).sum() + 1) / (best(fresh[1]).sum() + 1))
    assert ratio > math.log(3), name  # at most log 4: v^4 has density 1/4 at v = 1
    probe = lanes.Outputs(np.array([[1.0, 0.97], [3.0, 0.97], [0.0, 0.97], [2.0, 0.2]]), np.full(4, 2))
    assert best(probe).tolist()[:2] == [True, True] and not best(probe)[2:].any()


def test_fixed_arguments_are_the_audits_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, str(MECHANISMS / "partial_sum.fz"), "partial_sum", "--arg", "eps=0.25",
                        "--arg", "q=3", "--samples", "2000", "--pilot", "400", "--json", "--no-verify")
    document = json.loads(out)
    assert code == 0 and document["claim"]["epsilon"] == 0.25
    for event in document["tested"]:
        assert event["pair"].count("eps=1/4") == 2 and event["pair"].startswith("(eps=1/4, q=[0 0 0])")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("name", ["gap_svt_release_query", "adaptive_svt_release_query"])
def test_the_release_query_svts_are_caught_at_every_seed(name: str, seed: int) -> None:
    """At 100,000 runs these two were caught at some seeds only (adaptive's bound 2.84 against
    3 at seed 1): the best event's confirmation on three times the runs catches them at each."""
    path = MECHANISMS / "buggy" / f"{name}.fz"
    result = audit_mechanism(_program(path), name, seed=seed)
    assert result.leak and result.confidence == 0.95, result.text()


class _Bernoulli:
    """A plan's sampler: one 0/1 coordinate, P[1] = p on the first input and q on the second."""

    def __init__(self, p: float, q: float) -> None:
        self.p, self.q = p, q
        self.runs: list[int] = []

    def __call__(self, pair: object, second: bool, n: int, seed: int) -> lanes.Outputs:
        self.runs.append(n)
        hits = np.random.default_rng(seed % 2**32).random(n) < (self.q if second else self.p)
        return lanes.Outputs(hits.astype(float).reshape(n, 1), np.ones(n, dtype=int))


def _confirmation(bound: float, estimate: float, p: float, q: float) -> tuple[object, _Bernoulli]:
    from fuzzpy.runtime.audit import EventResult, _confirm, _Plan

    draw = _Bernoulli(p, q)
    plan = _Plan("b", "mechanism", [object()], [1.0], 0.0, draw, "numpy")  # type: ignore[list-item]
    tested = [EventResult("pair", "x == 1", 300, 100, 1000, bound, estimate, 1.0, ((0, 1), (0, 1)))]
    chosen = [(0.0, 0, ("x == 1", lambda o: o.values[:, 0] == 1))]
    return _confirm(plan, chosen, tested, tested[0], 1000, 0.015, seed=3), draw  # type: ignore[arg-type]


def test_a_near_leak_is_confirmed_on_three_times_the_runs_and_a_clear_case_is_not() -> None:
    confirmed, draw = _confirmation(0.8, 1.1, 0.3, 0.3 / math.e ** 1.5)
    assert confirmed is not None and confirmed.n == 3000 and draw.runs == [3000, 3000]
    assert "confirmed on 3000 fresh runs a side" in confirmed.event and confirmed.bound > 1.0
    for bound, estimate in ((1.2, 1.3), (0.3, 0.5)):  # a leak already, or far from one: no runs spent
        confirmed, draw = _confirmation(bound, estimate, 0.3, 0.1)
        assert confirmed is None and draw.runs == []


def test_a_directed_bound_covers_at_its_level() -> None:
    """Both one-sided bounds at alpha: on events whose true loss is exactly 1, the bound
    exceeds 1 in at most about 2 alpha of the trials (it is conservative)."""
    rng = np.random.default_rng(11)
    p1, n, alpha = 0.05, 3000, 0.025
    p2 = p1 / math.e
    k1, k2 = rng.binomial(n, p1, 2000), rng.binomial(n, p2, 2000)
    over = sum(directed_bound(int(a), int(b), n, alpha) > 1.0 for a, b in zip(k1, k2, strict=True))
    assert over / 2000 <= 2 * alpha
    assert directed_bound(0, 5, n, alpha) == 0.0 and directed_bound(40, 0, n, alpha) > 0


@pytest.mark.parametrize("name", CAUGHT)
def test_a_buggy_mechanism_shows_a_loss_above_its_claim(name: str) -> None:
    result = _audit_example(MECHANISMS / "buggy" / f"{name}.fz")
    assert result.leak, f"{name}: lower bound {result.best.bound:.3f} <= claim {result.best.claim}"
    assert result.confidence == 0.95 and result.best.bound > result.best.claim
    assert result.lower >= result.best.bound


PROVED = [
    "report_noisy_max",
    "partial_sum",
    *[pytest.param(p.stem, marks=pytest.mark.slow) for p in sorted(MECHANISMS.glob("*.fz"))
      if p.stem not in ("report_noisy_max", "partial_sum")],
]


@pytest.mark.parametrize("name", PROVED)
def test_a_proved_mechanism_stays_below_its_claim(name: str) -> None:
    result = _audit_example(MECHANISMS / f"{name}.fz")
    assert not result.leak, f"{name}: the audit proves {result.best.bound:.3f} > {result.best.claim} ({result.best.event})"


def test_a_tight_claim_is_approached() -> None:
    """partial_sum's loss is exactly eps at a one-entry move: the audit gets a good part of it."""
    result = _audit_example(MECHANISMS / "partial_sum.fz", samples=50_000)
    assert 0.5 < max(e.bound / e.claim for e in result.tested) <= 1


# ---------------------------------------------------------------- mechanisms written here

WRONG_CLAIM = """
mechanism release (x : num, eps : num) : num
  requires abs(dist(x)) <= 1
  requires eps > 0
  privacy eps / 2
{
  return x + lap(1 / eps);
}
"""


def test_a_mechanism_claiming_half_its_cost_is_caught() -> None:
    result = audit_mechanism(parse_program(WRONG_CLAIM, "w.fz"), "release", **SMALL)  # type: ignore[arg-type]
    eps = float(Fraction(result.best.pair.split("eps=")[1].split(")")[0]))
    assert result.leak and result.best.claim == eps / 2  # the claim at the pair's own eps
    assert "x=" in result.best.pair


def test_the_same_mechanism_at_its_true_cost_is_not() -> None:
    program = parse_program(WRONG_CLAIM.replace("privacy eps / 2", "privacy eps"), "r.fz")
    result = audit_mechanism(program, "release", **SMALL)  # type: ignore[arg-type]
    assert not result.leak and 0 < result.best.bound <= result.best.claim


RANDOMISED_RESPONSE = """
mechanism coin (x : num, eps : num) : bool
  requires abs(dist(x)) <= 1
  requires eps > 0
  privacy eps
{
  return x + lap(1 / eps) >= 0.5;
}
"""


def test_a_bool_release_is_audited_by_its_outcomes() -> None:
    result = audit_mechanism(parse_program(RANDOMISED_RESPONSE, "rr.fz"), "coin", **SMALL)  # type: ignore[arg-type]
    assert not result.leak
    assert "== " in result.best.event  # a discrete event: "output == ..." or "out[0] == ..."


def test_the_runs_use_the_runtimes_exact_grid() -> None:
    """Every draw is the discrete Laplace on `lap_draw`'s grid: the outputs of
    `return x + lap(1/eps)` at x = 0 are whole multiples of 2^e."""
    program = parse_program(WRONG_CLAIM, "w.fz")
    decl = next(d for d in program.decls if isinstance(d, S.MechanismDecl))
    out = lanes.sample(decl, {}, {"x": Fraction(0), "eps": Fraction(1)}, 5_000, SeededSource(3))
    e, _ = laplace_grid(Fraction(1), 1)
    units = out.values[:, 0] / 2.0**e
    assert np.all(units == np.round(units))
    exact = [float(run_mechanism(decl, (Fraction(0), Fraction(1)), Interpreter(program, SeededSource(s))))  # type: ignore[arg-type]
             for s in range(400)]
    assert stats.ks_2samp(out.values[:, 0], exact).pvalue > 1e-3  # the same law as the one-run runtime


# ---------------------------------------------------------------- definitions over a bag

COUNTS = """
type Row = { age : num, weight : num };
def heavy (r : Row) : bool = r.weight > 80;
def loud (db : bag Row) : fuzzy num = laplace[2.0] (size (filter heavy db));
def both (db : bag Row) : fuzzy (num, num) = {
  sample a = laplace[1.0] (size db);
  sample b = laplace[1.0] (size (filter heavy db));
  return (a, b)
};
def grid (k : num) (db : bag Row) : fuzzy num = laplace[1.0] (size db + k);
"""


def test_a_definition_is_audited_on_datasets_one_row_apart() -> None:
    result = audit_definition(parse_program(COUNTS, "c.fz"), "loud", samples=3_000, pilot=1_000)
    assert result.kind == "definition" and result.best.claim == 2.0 and not result.leak
    assert result.best.bound > 0.3  # a row over the filter's threshold (81) moves the count
    assert "81" in result.best.pair or "1e+06" in result.best.pair


@pytest.mark.slow
def test_a_composed_definition_stays_below_its_summed_cost() -> None:
    result = audit_definition(parse_program(COUNTS, "c.fz"), "both", samples=3_000, pilot=1_000)
    assert result.best.claim == 2.0 and not result.leak


def test_a_definition_with_other_parameters_is_refused_clearly() -> None:
    with pytest.raises(AuditError, match="give --arg k=VALUE"):
        safe_audit(lambda: audit_definition(parse_program(COUNTS, "c.fz"), "grid", samples=200))
    with pytest.raises(AuditError, match="no definition `nope`"):
        safe_audit(lambda: audit_definition(parse_program(COUNTS, "c.fz"), "nope", samples=200))


# ---------------------------------------------------------------- the statistics


def test_clopper_pearson_bounds_cover_at_their_level() -> None:
    rng = np.random.default_rng(5)
    p, n, alpha = 0.03, 2_000, 0.05
    misses = sum(not (lo <= p <= up) for lo, up in
                 (clopper_pearson(int(k), n, alpha / 2) for k in rng.binomial(n, p, 2_000)))
    assert misses / 2_000 <= alpha + 0.015


def test_the_bound_is_zero_without_evidence_and_honours_delta() -> None:
    assert loss_bound(500, 500, 1_000, 1_000, 0.01) == 0.0
    pure = loss_bound(900, 100, 1_000, 1_000, 0.01)
    assert 1.5 < pure < math.log(9)
    assert loss_bound(900, 100, 1_000, 1_000, 0.01, delta=0.5) < pure


# ---------------------------------------------------------------- the command line


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_reports_both_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, str(MECHANISMS / "buggy" / "histogram_wrong_scale.fz"), "histogram_wrong_scale",
                        "--samples", "20000", "--pilot", "4000", "--json", "--no-verify", "--seed", "7")
    document = json.loads(out)
    assert code == 1 and document["leak"] is True and document["ok"] is False
    assert document["claim"]["epsilon"] == 0.5 and document["lower_bound"] > 0.5
    assert document["confidence"] == 0.95 and document["seed"] == 7 and document["verified"] is None
    assert len(document["tested"]) == 4


def test_cli_text_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    source = tmp_path / "ok.fz"
    source.write_text(WRONG_CLAIM.replace("privacy eps / 2", "privacy eps"))
    plot = tmp_path / "audit.png"
    code, out, _ = _cli(capsys, str(source), "release", "--samples", "5000", "--plot", str(plot),
                        "--confidence", "0.99")
    assert code == 0, out
    assert re.search(r"upper bound: eps = [0-9.]+  \(proved by verify", out) and "confidence 0.99" in out
    assert "consistent with the claim" in out
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_cli_plot_without_matplotlib_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code, _, err = _cli(capsys, str(MECHANISMS / "partial_sum.fz"), "partial_sum", "--plot", str(tmp_path / "p.png"))
    assert code == 2 and "matplotlib" in err and "fuzzpy[plot]" in err and "Traceback" not in err


@pytest.mark.parametrize(("argv", "message"), [
    (["{mech}", "nope"], "no definition or mechanism `nope`"),
    (["{mech}", "partial_sum", "--confidence", "1.5"], "confidence"),
    (["{mech}", "partial_sum", "--samples", "ten"], "not a whole number"),
    (["{mech}", "partial_sum", "--samples", "5"], "between 100"),
    (["{missing}", "x"], "missing.fz"),
    (["{bad}", "x"], "FZ"),
    (["{grid}", "grid"], "give --arg k=VALUE"),
    (["{grid}", "grid", "--arg", "k"], "NAME=VALUE"),
    (["{grid}", "grid", "--arg", "k=1", "--arg", "k=2"], "twice"),
    (["{grid}", "grid", "--arg", "k=one"], "not a number"),
    (["{grid}", "grid", "--arg", "db=1"], "a bag is the data"),
    (["{mech}", "partial_sum", "--arg", "eps=-1"], "at the fixed values"),
    (["{mech}", "partial_sum", "--arg", "N=1"], "no parameter `N`"),
    (["{mech}", "partial_sum", "--arg", "q=0.5"], "whole number"),
    (["{mech}", "partial_sum", "--plot", "{tmp}/p.txt"], ".png"),
])
def test_cli_bad_input_is_a_message_not_a_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    argv: list[str], message: str) -> None:
    (tmp_path / "bad.fz").write_text("def f (x : num) : num = x +;\n")
    (tmp_path / "grid.fz").write_text(COUNTS)
    paths = {"mech": str(MECHANISMS / "partial_sum.fz"), "missing": str(tmp_path / "missing.fz"),
             "bad": str(tmp_path / "bad.fz"), "grid": str(tmp_path / "grid.fz"), "tmp": str(tmp_path)}
    code, out, err = _cli(capsys, *[a.format(**paths) for a in argv])
    assert code == 2 or (code == 1 and "{bad}" in argv), (code, out, err)
    assert message in err and "Traceback" not in err + out


def test_the_python_api_audits_and_refuses_as_the_cli_does() -> None:
    import fuzzpy

    program = fuzzpy.loads(COUNTS, "counts.fz")
    result = program.audit("loud", samples=600, pilot=300, seed=2)
    assert result.kind == "definition" and result.best.claim == 2.0
    assert result.to_json()["samples"] == 600 and "audit of definition `loud`" in result.text()
    with pytest.raises(fuzzpy.InvalidInput) as refused:
        program.audit("grid", samples=200)
    assert refused.value.exit_code == 2 and "give --arg k=VALUE" in str(refused.value)
    fixed = program.audit("grid", samples=600, pilot=300, args={"k": 2.5})
    assert fixed.best.claim == 1.0 and not fixed.leak
    with pytest.raises(fuzzpy.InvalidInput):
        program.audit("loud", confidence=1.0)
