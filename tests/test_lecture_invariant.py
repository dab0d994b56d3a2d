"""Issue 30, "the printed game ... states the lecture's invariant clauses": loop
invariants regrouped as Gaboardi's slides write them (public equalities,
`i<1> < s => ...`, `i<1> >= s => (... \\/ max<1> != s)`, paid), and only ever printed
when the proof kernel accepts the regrouped formula in place of the proof's.

Written from the slides' side: the invariant is typed here from the lecture (in
SMT-LIB over the kernel's vocabulary, docs/verifier-kernel.md), not taken from
what the tool prints, and z3 is asked directly where a claim is purely logical.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
import z3

from fuzzpy.api.program import load
from fuzzpy.verifier import lecture
from fuzzpy.verifier.kernel import check
from fuzzpy.verifier.kernel.certificate import LoopInvariant

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "mechanisms"


# ---------------------------------------------------------------- the notation (no prover, no kernel)


@pytest.mark.parametrize("term, printed", [
    ("(= (- (to_real i.2) (to_real i.1)) 0.0)", "i<1> = i<2>"),
    ("(= (- best.2 best.1) 1.0)", "best<1> + 1 = best<2>"),
    ("(= (to_real 1) (- best.2 best.1))", "best<1> + 1 = best<2>"),
    ("(<= (ite (>= (- best.2 best.1) 0.0) (- best.2 best.1) (- (- best.2 best.1))) 1.0)",
     "|best<1> - best<2>| <= 1"),
    ("(not (= 1 i.1))", "i<1> != 1"),
    ("(not (<= i.1 %s))", "i<1> > s"),
    ("(=> (< i.1 %s) (= %cost 0.0))", "i<1> < s => paid = 0"),
    ("(let ((a!1 (< max.2 %s))) (and (< max.1 %s) a!1))", "max<1> < s /\\ max<2> < s"),
    ("(or (and (= max.1 %s) (= max.2 %s)) (distinct max.1 %s))", "(max<1> = s /\\ max<2> = s) \\/ max<1> != s"),
    ("(< (+ (to_real max.1) (- (to_real max.2) (to_real max.1))) (to_real %s))", "max<2> < s"),
    ("(<= %cost (+ %cost.entry (/ (* eps.1 (to_real count.1)) (to_real N.1))))",
     "paid <= paid0 + eps<1> * count<1> / N<1>"),
])
def test_terms_print_in_two_run_notation(term: str, printed: str) -> None:
    assert lecture.show(lecture.parse(term)) == printed


def test_an_unknown_ghost_is_not_printed_as_if_it_were_a_variable() -> None:
    with pytest.raises(lecture.Unshown):
        lecture.show(lecture.parse("(< %high.q i.1)"))


def _z3(term: str, names: dict[str, z3.ExprRef]) -> z3.BoolRef:
    return z3.And(*z3.parse_smt2_string(f"(assert {term})", decls=names))  # type: ignore[arg-type]


#: clauses over one index i against s, in the prover's forms (guards by case, by "max1 = s", none)
_GUARDS = ["(< i.1 %s)", "(= i.1 %s)", "(> i.1 %s)", "(<= i.1 %s)", "(not (< i.1 %s))", "(= max.1 %s)",
           "(and (= max.1 %s) (distinct %s 0))", "(not (= 1 i.1))", None]
_BODIES = ["(< max.1 %s)", "(< max.2 %s)", "(<= (- b.2 b.1) 1.0)", "(>= (- b.2 b.1) (- 1.0))",
           "(= (- b.2 b.1) 1.0)", "(= max.2 %s)", "(= %cost 0.0)", "(<= %cost 1.0)", "(>= max.1 1)",
           "(= (- (to_real i.2) (to_real i.1)) 0.0)"]


@pytest.mark.parametrize("seed", range(6))
def test_placing_clauses_around_the_split_is_an_equivalence(seed: int) -> None:
    """Every clause of a proof, put before/after s (nested guards where a clause holds
    in one case only), in the lecture's disjunctions, or in every case: the same
    formula as the proof's conjunction, for either split (z3, both directions)."""
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randint(4, 12)):
        guard, body = rng.choice(_GUARDS), rng.choice(_BODIES)
        parts.append(body if guard is None else f"(=> {guard} {body})")
    clauses = [c for k, p in enumerate(parts) for c in lecture._clauses(lecture.parse(p), p, False, k)]
    names = {n: z3.Int(n) for n in ("i.1", "i.2", "max.1", "max.2", "%s")}
    names.update({n: z3.Real(n) for n in ("b.1", "b.2", "%cost")})
    proof = _z3(f"(and {' '.join(parts)})", names)
    for before, op in ((frozenset({lecture.LT}), "<"), (frozenset({lecture.LT, lecture.EQ}), "<=")):
        items = lecture._items(clauses, "i.1", before, False, True, True)
        regrouped = _z3(lecture.smt(lecture.formula(items, [op, "i.1", "%s"])), names)
        solver = z3.Solver()
        solver.add(z3.Not(regrouped == proof))
        assert solver.check() == z3.unsat, (parts, op)


# ---------------------------------------------------------------- the kernel decides (slow: proofs are searched)


def _proved(name: str):  # noqa: ANN202 - a VerifyResult
    [result] = load(EXAMPLES / f"{name}.fz").verify(fresh=True)
    assert result.proved
    return result


def _with(cert, term: str):  # noqa: ANN001, ANN202 - one loop, forward
    side = cert.sides[0]
    loop = side.loops[0]
    sides = (dataclasses.replace(side, loops=(LoopInvariant(loop.at, term, ("by hand",)),)), *cert.sides[1:])
    return dataclasses.replace(cert, sides=sides)


#: ROSNM's invariant as the slides print it (i is the index the loop reads next here,
#: q[i - 1]), and "paid": 0 until s is read, at most eps
SLIDES = """(and (= i.1 i.2)
  (=> (< i.1 %s) (and (< max.1 %s) (< max.2 %s) (<= (- best.1 best.2) 1.0) (<= (- best.2 best.1) 1.0)))
  (=> (>= i.1 %s) (or (and (= max.1 %s) (= max.2 %s) (= (+ best.1 1.0) best.2)) (distinct max.1 %s)))
  (=> (<= i.1 %s) (= %cost 0.0)) (<= %cost eps.1))"""


@pytest.mark.slow
def test_the_slides_invariant_as_printed_is_rejected_and_the_printed_fix_accepted() -> None:
    result = _proved("rosnm")
    decl, cert = result.decl, result.verdict.certificate
    assert not check(decl, result.program, _with(cert, SLIDES)).accepted
    # split one index later (i<1> <= s), and the output s = 0 (no index: max starts there) handled
    fixed = """(and (= i.1 i.2)
      (=> (<= i.1 %s) (and (< max.1 %s) (< max.2 %s) (<= (- best.1 best.2) 1.0) (<= (- best.2 best.1) 1.0)))
      (=> (> i.1 %s) (or (and (= max.1 %s) (= max.2 %s) (=> (distinct %s 0) (= (+ best.1 1.0) best.2)))
                         (distinct max.1 %s)))
      (>= i.1 1) (=> (distinct i.1 1) (>= max.1 1))
      (=> (<= i.1 %s) (= %cost 0.0)) (<= %cost eps.1))"""
    assert check(decl, result.program, _with(cert, fixed)).accepted
    without_zero = fixed.replace("(=> (distinct %s 0) (= (+ best.1 1.0) best.2))", "(= (+ best.1 1.0) best.2)")
    assert not check(decl, result.program, _with(cert, without_zero)).accepted  # fails at s = 0
    game = result.proof()
    [loop] = game.loops
    assert loop.lecture.checked and loop.lecture.split == "i<1> <= s"
    assert "i<1> < s" in loop.lecture.note and "not inductive" in loop.lecture.note
    assert any("max<1> = max<2> = s" in text and "\\/ max<1> != s" in text for text in loop.lecture.after)
    assert "paid <= eps" in loop.lecture.cost


@pytest.mark.slow
def test_a_wrong_regrouping_is_rejected() -> None:
    """What the tool prints for the student's proof, with the run-2 best one lower
    instead of one higher after s, or split one index too early: the kernel says no."""
    result = _proved("rosnm_student_proof")
    [loop] = result.proof().loops
    shown = loop.lecture
    assert shown.checked and shown.split == "i<1> <= s"
    cert = result.verdict.certificate
    assert check(result.decl, result.program, _with(cert, shown.smt)).accepted
    assert "(= (to_real 1) (- best.2 best.1))" in shown.smt
    flipped = shown.smt.replace("(= (to_real 1) (- best.2 best.1))", "(= (to_real 1) (- best.1 best.2))")
    assert not check(result.decl, result.program, _with(cert, flipped)).accepted
    early = shown.smt.replace("(<= i.1 %s)", "(< i.1 %s)")
    assert early != shown.smt
    assert not check(result.decl, result.program, _with(cert, early)).accepted


def _proved_examples() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.glob("*.fz") if "while" in p.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name", _proved_examples())
def test_every_examples_regrouped_invariant_is_kernel_accepted(name: str) -> None:
    """All loops replaced at once by what is printed: one certificate, accepted."""
    [result] = load(EXAMPLES / f"{name}.fz").verify(fresh=True)
    if not result.proved:
        pytest.skip(f"{name} is not proved")
    game = result.proof()
    cert = result.verdict.certificate
    for loop in game.loops:
        assert loop.lecture is not None and loop.lecture.checked, (name, loop.lecture)
        assert loop.lecture.formula and loop.lecture.cost
        side = next(s for s in cert.sides if s.orientation == loop.orientation)
        k = [i for i, inv in enumerate(side.loops) if inv.at.line == loop.line][0]
        loops = list(side.loops)
        loops[k] = LoopInvariant(loops[k].at, loop.lecture.smt, ())
        new_side = dataclasses.replace(side, loops=tuple(loops))
        cert = dataclasses.replace(cert, sides=tuple(new_side if s is side else s for s in cert.sides))
        if cert.rule == "alignment":  # no s: no before/after split
            assert loop.lecture.split == "" and not loop.lecture.before and not loop.lecture.after
    assert check(result.decl, result.program, cert).accepted, name


@pytest.mark.slow
def test_json_and_the_api_carry_the_regrouped_clauses() -> None:
    import io
    from contextlib import redirect_stdout

    from fuzzpy.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["verify", "--json", "--explain", str(EXAMPLES / "rosnm_student_proof.fz")]) == 0
    [mechanism] = json.loads(out.getvalue())["mechanisms"]
    shown = mechanism["proof"]["loops"][0]["lecture"]
    assert shown["checked"] and shown["split"] == "i<1> <= s"
    assert shown["public"] == ["i<1> = i<2>"]
    assert any("max<1> < s" in t for t in shown["before"])
    assert shown["smt"].startswith("(and ")
    api = _proved("rosnm_student_proof").proof()
    assert json.loads(json.dumps(dataclasses.asdict(api.loops[0].lecture))) == shown


def test_a_regrouping_the_kernel_did_not_accept_is_never_printed() -> None:
    """Rendering alone: a lecture-shaped invariant marked unchecked gives way to the
    clauses as the kernel needs them, with a line saying why."""
    from fuzzpy.verifier.game import Clause, GameProof, LoopClauses
    from fuzzpy.verifier.report import game_lines

    unchecked = lecture.Lecture(False, "i<1> < s", ("i<1> = i<2>",), ("max<1> < s",), (), (), ("paid <= eps",),
                                ("   i<1> = i<2>", "/\\ i<1> < s => (max<1> < s)"), "(and true)",
                                note="the kernel rejects every regrouping tried")
    loop = LoopClauses(7, "i < k", "forward", (Clause("i<1> = i<2>", ""), Clause("max<2> == s", "max<1> == s")), 40, True,
                       unchecked)
    game = GameProof("m", "eps", "pointwise", (), "", (), (loop,), (), ("forward",))
    text = "\n".join(game_lines(game))
    assert "i<1> < s => (max<1> < s)" not in text and "lecture's shape (" not in text
    assert "not shown in the lecture's shape: the kernel rejects every regrouping tried" in text
    assert "when max<1> == s:" in text and "max<2> == s" in text
    checked = dataclasses.replace(unchecked, checked=True)
    shown = "\n".join(game_lines(dataclasses.replace(game, loops=(dataclasses.replace(loop, lecture=checked),))))
    assert "/\\ i<1> < s => (max<1> < s)" in shown and "when max<1> == s:" not in shown
