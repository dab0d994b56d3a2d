"""The obligation a refutation breaks, read off its two paths (issue 30, item 3).

When the counterexample's output comes from one path on each input, with the
same draws and the same tests (only their constants differ), a coupling of
the two paths is a shift s of the draws (run 2 draws eta + s where run 1
draws eta; Zhang & Kifer 2017, LightDP, Thm. 1: it pays |s_k| / b_k per
Laplace draw of scale b_k, and a one-sided Lap+ draw admits only s_k >= 0).
It carries run 1's path onto run 2's when every test a . eta + d1 >= 0 of
run 1 implies run 2's a . (eta + s) + d2 >= 0, i.e. a . s >= d1 - d2, and it
keeps the output when each released value's change is absorbed: a . s = e1 - e2.
The cheapest such shift (a linear program, solved exactly by z3) is the cost
a proof of these two paths must pay; above the claim, or with no shift at
all, it names the obligation that fails: which draws must move, by how much,
and what that costs.
"""

from __future__ import annotations

from fractions import Fraction

import z3

from fuzzpy.support.records import frozen
from fuzzpy.verifier.concrete import Run, run_all
from fuzzpy.verifier.integrate import Linear
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.refuter import Counterexample, _output_mass


@frozen
class Shift:
    index: int  # the draw (eta<index + 1> in the derivation)
    kind: str  # "lap" | "lapplus"
    scale: Fraction
    by: Fraction
    pays: Fraction


@frozen
class PathObligation:
    """The cheapest shift of the counterexample's two paths, or the tests that no shift keeps."""

    shifts: tuple[Shift, ...]
    cost: Fraction | None  # None: no shift keeps both paths and the output
    conflict: tuple[str, ...]  # with no shift: the requirements that contradict each other
    claim: Fraction


def path_obligation(info: MechanismInfo, cx: Counterexample) -> PathObligation | None:
    """The obligation the counterexample's paths break, or None (several paths, different shapes, or paid)."""
    one = _single_path(info, cx.params, cx.inputs, cx.output)
    two = _single_path(info, cx.neighbour_params, cx.neighbour, cx.output)
    if one is None or two is None or len(one.draws) != len(two.draws) or len(one.constraints) != len(two.constraints):
        return None
    if any((a.kind, a.scale) != (b.kind, b.scale) for a, b in zip(one.draws, two.draws, strict=True)):
        return None
    needs: list[tuple[Linear, Fraction, bool, str]] = []  # a . s >= d (or == d), and what it keeps
    from fuzzpy.verifier.refuter import _linear_text

    for c1, c2 in zip(one.constraints, two.constraints, strict=True):
        if c1.coeffs != c2.coeffs:
            return None
        if c1.coeffs:
            needs.append((Linear.build(Fraction(0), dict(c1.coeffs)), c1.const - c2.const, False,
                          f"the test {_linear_text(c1)} >= 0"))
    for v1, v2 in zip(one.released, two.released, strict=True):
        if isinstance(v1, Linear) != isinstance(v2, Linear):
            return None
        if isinstance(v1, Linear) and isinstance(v2, Linear):
            if v1.coeffs != v2.coeffs:
                return None
            needs.append((Linear.build(Fraction(0), dict(v1.coeffs)), v1.const - v2.const, True,
                          f"the released value {_linear_text(v1)}"))
    found = _cheapest(one, needs)
    if found is None:
        return PathObligation((), None, _conflict(one, needs), cx.eps)
    shifts, cost = found
    if cost <= cx.eps:
        return None  # these two paths are paid for: the leak is elsewhere (several outputs' paths)
    return PathObligation(shifts, cost, (), cx.eps)


def _single_path(info: MechanismInfo, params: dict, vectors: dict, output: tuple[object, ...]) -> Run | None:
    """The one path that releases ``output`` with mass; with none (a neighbour that
    cannot produce it), the one path that releases it at all, of mass 0."""
    every = run_all(info, dict(params), {k: list(v) for k, v in vectors.items()}, target=output)
    every = [r for r in every if len(r.released) == len(output)]
    runs = [r for r in every if _output_mass([r], output).value != 0] or every
    return runs[0] if len(runs) == 1 else None


def _terms(form: Linear, shifts: list[z3.ArithRef]) -> z3.ArithRef:
    return z3.Sum([z3.RealVal(str(c)) * shifts[k] for k, c in form.coeffs])


def _base(run: Run) -> tuple[list[z3.ArithRef], list[z3.BoolRef]]:
    shifts = [z3.Real(f"s{k + 1}") for k in range(len(run.draws))]
    one_sided = [shifts[k] >= 0 for k, d in enumerate(run.draws) if d.kind == "lapplus"]
    return shifts, one_sided


def _cheapest(run: Run, needs: list[tuple[Linear, Fraction, bool, str]]) -> tuple[tuple[Shift, ...], Fraction] | None:
    shifts, one_sided = _base(run)
    paid = [z3.Real(f"p{k + 1}") for k in range(len(shifts))]
    opt = z3.Optimize()
    opt.set("rlimit", 2_000_000)  # a handful of inequalities: counted, never timed
    opt.add(*one_sided)
    for form, bound, equal, _ in needs:
        need = z3.RealVal(str(bound))
        opt.add(_terms(form, shifts) == need if equal else _terms(form, shifts) >= need)
    for s, p in zip(shifts, paid, strict=True):
        opt.add(p >= s, p >= -s)
    total = z3.Sum([p / z3.RealVal(str(draw.scale)) for p, draw in zip(paid, run.draws, strict=True)]) \
        if paid else z3.RealVal(0)
    opt.minimize(total)
    if opt.check() != z3.sat:
        return None
    model = opt.model()
    found = []
    cost = Fraction(0)
    for k, (s, draw) in enumerate(zip(shifts, run.draws, strict=True)):
        value = model.eval(s, model_completion=True)
        by = Fraction(value.numerator_as_long(), value.denominator_as_long())
        if by != 0:
            found.append(Shift(k, draw.kind, draw.scale, by, abs(by) / draw.scale))
            cost += abs(by) / draw.scale
    return tuple(found), cost


def _conflict(run: Run, needs: list[tuple[Linear, Fraction, bool, str]]) -> tuple[str, ...]:
    """The requirements on the shift that contradict each other (an unsat core)."""
    from fuzzpy.verifier.refuter import _fraction_text, _linear_text

    shifts, _ = _base(run)
    solver = z3.Solver()
    solver.set("rlimit", 2_000_000)
    solver.set("core.minimize", True)
    labels: dict[str, str] = {}
    for k, draw in enumerate(run.draws):
        if draw.kind == "lapplus":
            solver.assert_and_track(shifts[k] >= 0, f"side{k}")
            labels[f"side{k}"] = f"s{k + 1} >= 0 (eta{k + 1} is a one-sided Lap+ draw)"
    for n, (form, d, equal, what) in enumerate(needs):
        term = _terms(form, shifts)
        label = f"need{n}"
        solver.assert_and_track(term == z3.RealVal(str(d)) if equal else term >= z3.RealVal(str(d)), label)
        shown = _linear_text(form).replace("eta", "s")
        labels[label] = f"{shown} {'=' if equal else '>='} {_fraction_text(d)} (to keep {what})"
    if solver.check() != z3.unsat:
        return ()
    return tuple(labels[str(c)] for c in solver.unsat_core())
