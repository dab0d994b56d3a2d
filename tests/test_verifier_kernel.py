"""The proof kernel (fuzzpy/verifier/kernel, docs/verifier-kernel.md).

* every mechanism the verifier proves (examples; the suite's fast entries by
  default, all with FUZZPY_MECHANISM_SUITE=all) carries a certificate the
  kernel accepts, also after a JSON round trip;
* faults injected into the prover's output are rejected: a dropped path (a
  prover whose merge keeps one arm), shifts off by one or of the wrong sign,
  a missing or weakened loop invariant, a claim below the cost paid, a
  one-sided draw shifted down, a certificate for another claim;
* `verify` says "proved" only when the kernel accepts, the cache keeps only
  such proofs, `verify --certificate` / `--json` show the certificate.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import fuzzpy.verifier as verifier_package
from fuzzpy.checker.scope import verify_mechanism
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.release.pipeline import load_source, parse
from fuzzpy.verifier.kernel import check
from fuzzpy.verifier.kernel.certificate import Certificate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples" / "mechanisms").glob("*.fz"))
SUITE = ROOT / "tests" / "mechanism_suite"
MANIFEST = json.loads((SUITE / "expected.json").read_text())["mechanisms"]
RUN_ALL = os.environ.get("FUZZPY_MECHANISM_SUITE", "") == "all"
PROVED = sorted(name for name, entry in MANIFEST.items()
                if isinstance(entry.get("recorded"), dict) and entry["recorded"].get("verdict") == "proved"
                and (RUN_ALL or entry.get("fast")))


def _one(program: object) -> MechanismDecl:
    return next(d for d in program.decls if isinstance(d, MechanismDecl))  # type: ignore[attr-defined]


def _from_text(text: str) -> tuple[MechanismDecl, object]:
    program = parse_program(text, "k.fz")
    return _one(program), program


def prover_certificate(decl: MechanismDecl, program: object) -> Certificate:
    """What the prover alone emits (no kernel in between): the input of fault injection."""
    from fuzzpy.checker.scope import static_constants
    from fuzzpy.verifier import export
    from fuzzpy.verifier.mirror import mirrored
    from fuzzpy.verifier.model import analyse
    from fuzzpy.verifier.prover import search

    info = analyse(decl, static_constants(program))  # type: ignore[arg-type]
    mirror = mirrored(decl, info)
    infos = [info] + ([analyse(mirror, static_constants(program))] if mirror is not None else [])  # type: ignore[arg-type]
    results = [search(each, 20.0) for each in infos]
    assert all(r.proved for r in results), [r.reason for r in results]
    sides = [results[0].trace.side] + [dataclasses.replace(r.trace.side, orientation="reversed") for r in results[1:]]
    return export.certificate(info, sides, info.whole)


def _side(cert: Certificate, **changes: object) -> Certificate:
    return dataclasses.replace(cert, sides=(dataclasses.replace(cert.sides[0], **changes),) + cert.sides[1:])


def _draws(cert: Certificate, change) -> Certificate:  # noqa: ANN001
    return _side(cert, draws=tuple(change(d) for d in cert.sides[0].draws))


# ---------------------------------------------------------------- every proof passes the kernel


@pytest.mark.parametrize("path", EXAMPLES + [SUITE / n for n in PROVED], ids=lambda p: p.stem)
def test_every_proved_mechanism_passes_the_kernel(path: Path) -> None:
    program = parse(load_source(path))
    decl = _one(program)
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "proved", verdict.reason
    assert verdict.certificate is not None
    again = Certificate.from_json(json.loads(json.dumps(verdict.certificate.to_json())))
    assert again == verdict.certificate
    decision = check(decl, program, again)
    assert decision.accepted, decision.reason


# ---------------------------------------------------------------- fault injection

NOISY_COUNT = """
// a private scalar released with Laplace noise (sensitivity 1)
mechanism noisy_count (n : num, eps : num) : num
  requires abs(dist(n)) <= 1
  requires eps > 0
  privacy CLAIM
{
  var r = n + lap(1 / eps);
  return r;
}
"""


def test_shift_off_by_one_or_of_the_wrong_sign_is_rejected() -> None:
    decl, program = _from_text(NOISY_COUNT.replace("CLAIM", "eps"))
    cert = prover_certificate(decl, program)
    assert check(decl, program, cert).accepted
    for wrong in (lambda s: f"({s}) + 1", lambda s: f"0 - ({s})", lambda s: "0"):
        bad = _draws(cert, lambda d, w=wrong: dataclasses.replace(d, shift=w(d.shift)))
        decision = check(decl, program, bad)
        assert not decision.accepted
        assert "returned values are equal" in decision.reason


def test_a_claim_below_the_cost_paid_is_rejected() -> None:
    decl, program = _from_text(NOISY_COUNT.replace("CLAIM", "eps"))
    cert = prover_certificate(decl, program)
    cheap, cheap_program = _from_text(NOISY_COUNT.replace("CLAIM", "eps * 0.999"))
    forged = dataclasses.replace(cert, claim="eps * 0.999")
    decision = check(cheap, cheap_program, forged)
    assert not decision.accepted and "cost <= claim" in decision.reason
    # the certificate of one claim is not a proof of another
    assert not check(cheap, cheap_program, cert).accepted


def test_a_missing_or_weakened_loop_invariant_is_rejected() -> None:
    program = parse(load_source(ROOT / "examples" / "mechanisms" / "sparse_vector.fz"))
    decl = _one(program)
    cert = prover_certificate(decl, program)
    assert check(decl, program, cert).accepted
    missing = check(decl, program, _side(cert, loops=()))
    assert not missing.accepted and "no invariant" in missing.reason
    (loop,) = cert.sides[0].loops
    weak = check(decl, program, _side(cert, loops=(dataclasses.replace(loop, invariant="true"),)))
    assert not weak.accepted
    # a wrong one: not even true on entry
    false = check(decl, program, _side(cert, loops=(dataclasses.replace(loop, invariant="(> %cost 1000.0)"),)))
    assert not false.accepted and "holds on entry" in false.reason


def test_a_one_sided_draw_shifted_down_is_rejected() -> None:
    program = parse(load_source(ROOT / "examples" / "mechanisms" / "report_noisy_max_exp.fz"))
    decl = _one(program)
    cert = prover_certificate(decl, program)
    assert any(d.kind == "lapplus" for d in cert.sides[0].draws)
    down = _draws(cert, lambda d: dataclasses.replace(d, shift=f"0 - ({d.shift})"))
    decision = check(decl, program, down)
    assert not decision.accepted and "one-sided noise" in decision.reason


def test_an_alignment_for_a_draw_that_is_not_there_or_missing_is_rejected() -> None:
    decl, program = _from_text(NOISY_COUNT.replace("CLAIM", "eps"))
    cert = prover_certificate(decl, program)
    assert not check(decl, program, _side(cert, draws=())).accepted
    moved = _draws(cert, lambda d: dataclasses.replace(d, at=dataclasses.replace(d.at, node=d.at.node + 1)))
    assert not check(decl, program, moved).accepted
    assert not check(decl, program, _draws(cert, lambda d: dataclasses.replace(d, kind="lapplus"))).accepted


# A leak of the merge bug's shape (issue 23), written as a stream with a
# public toggle: a branch on private data whose arm forks on a parameter.
STREAM_LEAK = """
mechanism toggled (rows : vec[inf] num, eps : num, wide : bool) : list num
  requires eps > 0
  privacy eps
{
  var bump = 0.0;
  if (rows[2] < 5) {
    if (wide) { bump = 0.0; } else { bump = 300.0; }
  }
  output bump + lap(1 / eps);
}
"""


def _dropping_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    """A faulty prover: a merged `if` keeps only the first path of its first arm
    (the shape of issue 23's bug), as if the runs never differed."""
    from fuzzpy.verifier import product

    def merge(self, stmt, cond, path):  # noqa: ANN001, ANN202
        return self.exec_block(stmt.then, [path.fork()])[0]

    monkeypatch.setattr(product.Product, "_merge_pure", merge)


def test_a_certificate_with_dropped_paths_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    decl, program = _from_text(STREAM_LEAK)
    _dropping_merge(monkeypatch)
    cert = prover_certificate(decl, program)  # the faulty prover "proves" the leak
    decision = check(decl, program, cert)
    assert not decision.accepted
    assert "released values are equal" in decision.reason or "cost <= claim" in decision.reason
    assert "run 1 then, run 2 else" in decision.reason or "run 1 else, run 2 then" in decision.reason
    # and `verify` does not say proved: the kernel's rejection makes it unknown
    verifier_package._cache.clear()
    verdict = verify_mechanism(decl, program)
    verifier_package._cache.clear()
    assert verdict.status != "proved"
    if verdict.status == "unknown":
        assert "proof kernel rejected" in (verdict.reason or "")


def test_issue_23_leak_is_not_proved() -> None:
    decl, program = _from_text("""
mechanism leak (q : vec[inf] num, eps : num) : num
  requires eps > 0
  privacy eps
{
  var x = 0;
  if (q[0] > 0) {
    if (len(q) < 7) { x = 0; } else { x = 1000; }
  }
  return x + lap(1 / eps);
}
""")
    verifier_package._cache.clear()
    assert verify_mechanism(decl, program).status != "proved"


def test_a_reversed_orientation_is_required_for_one_sided_relations() -> None:
    decl, program = _from_text("""
mechanism up_only (x : num, eps : num) : num
  requires dist(x) >= 0
  requires dist(x) <= 1
  requires eps > 0
  privacy eps
{
  return x + lap(1 / eps);
}
""")
    cert = prover_certificate(decl, program)
    assert [s.orientation for s in cert.sides] == ["forward", "reversed"]
    assert check(decl, program, cert).accepted
    only = dataclasses.replace(cert, sides=cert.sides[:1])
    decision = check(decl, program, only)
    assert not decision.accepted and "reversed" in decision.reason


# ---------------------------------------------------------------- verify, cache, CLI


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


def test_kernel_rejection_makes_verify_unknown_and_nothing_is_cached(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from fuzzpy.verifier.kernel import Decision

    monkeypatch.setenv("FUZZPY_CACHE", str(tmp_path))
    monkeypatch.setattr(verifier_package, "check", lambda *a: Decision(False, "an injected failure (line 1)"),
                        raising=False)
    path = ROOT / "examples" / "mechanisms" / "above_threshold.fz"
    verifier_package._cache.clear()
    code, text = _run(["verify", str(path)])
    verifier_package._cache.clear()
    assert code == 1
    assert "unknown" in text and "proof kernel rejected" in text and "an injected failure" in text
    assert not list(tmp_path.rglob("*.json"))


def test_verify_certificate_and_json_carry_the_certificate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FUZZPY_CACHE", str(tmp_path))
    path = ROOT / "examples" / "mechanisms" / "partial_sum.fz"
    verifier_package._cache.clear()
    code, text = _run(["verify", "--certificate", str(path)])
    assert code == 0
    first, _, rest = text.partition("\n")
    assert first.startswith("partial_sum: proved")
    printed = json.loads(rest)
    assert printed["rule"] == "alignment" and printed["sides"][0]["loops"]
    verifier_package._cache.clear()  # the next one is read from the disk cache, with its certificate
    code, text = _run(["verify", "--json", str(path)])
    mechanism = json.loads(text)["mechanisms"][0]
    assert mechanism["cached"] is True and mechanism["certificate"] == printed
    program = parse(load_source(path))
    assert check(_one(program), program, Certificate.from_json(mechanism["certificate"])).accepted
    verifier_package._cache.clear()
    code, text = _run(["verify", "--explain", str(path)])
    assert code == 0 and "for every path" in text
    verifier_package._cache.clear()


def test_a_proof_survives_moving_the_mechanism() -> None:
    """The caches key proofs by the syntax tree without positions: the
    certificate names nodes by their order, not by their place in the file."""
    text = NOISY_COUNT.replace("CLAIM", "eps")
    decl, program = _from_text(text)
    verifier_package._cache.clear()
    cert = verify_mechanism(decl, program).certificate
    moved, moved_program = _from_text("\n\n// moved\n" + text.replace("\n", "\n    "))
    assert verify_mechanism(moved, moved_program).certificate == cert  # the in-process cache
    assert check(moved, moved_program, cert).accepted
    verifier_package._cache.clear()


CLAMPED = """
mechanism clamp_release (x : num, eps : num) : num
  requires abs(dist(x)) <= 1
  requires eps > 0
  privacy eps
{
  var y = x;
  if (x > 10) { y = 10; }
  if (y < 0) { y = 0; }
  return y + lap(1 / eps);
}
"""


def test_branches_the_runs_may_take_apart_are_run_in_all_four_combinations() -> None:
    decl, program = _from_text(CLAMPED)
    verifier_package._cache.clear()
    verdict = verify_mechanism(decl, program)
    assert verdict.status == "proved" and verdict.certificate is not None
    cert = verdict.certificate
    assert [b.rule for b in cert.sides[0].branches] == ["either", "either"]
    decision = check(decl, program, cert)
    # 4 combinations at the first `if`; at the second, 4 each, except after
    # "both clamped to 10", where y is the same term in both runs: 2. None merged.
    assert decision.accepted and decision.paths == 3 * 4 + 2
    # claiming that the runs agree instead is an obligation, and it is false here (x = 10, x' = 10.5)
    agree = check(decl, program, _side(cert, branches=()))
    assert not agree.accepted and "both runs take the same branch" in agree.reason
    verifier_package._cache.clear()


@pytest.mark.parametrize("text", [
    # issue 23's shape with a bool result: the prover's merge kept one sub-path
    """
mechanism over_half (q : vec[inf] num, eps : num) : bool
  requires eps > 0
  privacy eps
{
  var x = 0;
  if (q[0] > 0) { if (len(q) < 7) { x = 0; } else { x = 1000; } }
  return x + lap(1 / eps) > 500;
}
""",
    # the same with the public fork on a parameter, in a stream
    STREAM_LEAK,
])
def test_leaks_of_the_merge_shape_are_never_proved(text: str) -> None:
    decl, program = _from_text(text)
    verifier_package._cache.clear()
    verdict = verify_mechanism(decl, program)
    verifier_package._cache.clear()
    assert verdict.status != "proved"
    if verdict.status == "unknown" and "kernel" in (verdict.reason or ""):
        assert "run 1 then, run 2 else" in verdict.reason or "run 1 else, run 2 then" in verdict.reason


def test_a_selector_whose_comparison_is_not_preserved_is_rejected() -> None:
    """CheckDP's selector `c ? A : B` is injective only if the coupling keeps c."""
    program = parse(load_source(ROOT / "examples" / "mechanisms" / "above_threshold.fz"))
    decl = _one(program)
    cert = prover_certificate(decl, program)
    assert any(d.selector == "branch" for d in cert.sides[0].draws)
    flat = _draws(cert, lambda d: dataclasses.replace(d, shift="0") if d.selector == "branch" else d)
    decision = check(decl, program, flat)
    assert not decision.accepted and "agrees in both runs" in decision.reason


def test_z3_unknown_is_never_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzzpy.verifier import solver

    decl, program = _from_text(NOISY_COUNT.replace("CLAIM", "eps"))
    cert = prover_certificate(decl, program)
    monkeypatch.setattr(solver, "check_valid", lambda *a, **k: solver.Outcome("unknown", reason="injected"))
    decision = check(decl, program, cert)
    assert not decision.accepted and "could not decide" in decision.reason
