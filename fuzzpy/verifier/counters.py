"""Counters and flags of a loop: the cost invariant in the coding styles of the literature.

verifier.md asks for "the cost as an affine function of counters". Sources
count answers in many ways: `count = count + 1` against `count < N`; a float
counter (`count = 0.0`, ShadowDP); a countdown (`left = left - 1`,
`left > 0`); a budget counter in units of eps that starts at 2N eps and stops
at `cost <= 4N eps - 2 eps` (CheckDP's adaptive SVT), possibly through a
`done` flag set when the budget runs out. All are a *counter* c: every
assignment to it in the loop body is `c = c + d` (or `- d`) with d fixed
during the loop, compared somewhere in the loop with a loop constant B. From
c's value c0 at loop entry, its last value c_end (B moved by a step, and by 1
when c is whole), the candidate cost invariant is

    cost <= V0 + (claim - V0) * (c - c0) / (c_end - c0)

(V0 the cost on entry): the counter's progress pays for the claim left after
the loop's entry. A flag set under a test of a counter gets the candidates
"flag ==> test" and "!flag ==> !test", which carry the test's bound to the
loop guard. Houdini keeps whichever candidates are inductive.
"""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    BoolLit,
    Expr,
    IfStmt,
    NumLit,
    Unary,
    Var,
    VarDecl,
    While,
)
from fuzzpy.support.records import frozen
from fuzzpy.verifier import solver as z
from fuzzpy.verifier.invariants import Atom, View, guard_conjuncts
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.solver import Term
from fuzzpy.verifier.text import show, show_signed_sum
from fuzzpy.verifier.walk import additive_terms, has_noise, statements, sub_expressions

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@frozen
class Counter:
    name: str
    steps: tuple[Expr, ...]  # d of every `c = c + d` (a `c = c - d` gives the expression `-d`)
    limits: tuple[Expr, ...]  # loop constants c is compared with


@frozen
class FlagTest:
    flag: str
    value: bool  # the literal assigned under the test
    test: Expr  # the `if` condition


def _assigned(loop: While) -> set[str]:
    return {s.name for s in statements(loop.body) if isinstance(s, (VarDecl, Assign))}


def _loop_constant(expr: Expr, changing: set[str]) -> bool:
    return not has_noise(expr) and not any(isinstance(e, Var) and e.name in changing for e in sub_expressions(expr))


def _step(stmt: VarDecl | Assign, changing: set[str]) -> Expr | None:
    """d when ``stmt`` is `c = c + d`, `c = d + c` or `c = c - d` (as `-d`), d a loop constant."""
    expr = stmt.expr
    if not (isinstance(expr, Binary) and expr.op in ("+", "-")):
        return None
    if isinstance(expr.left, Var) and expr.left.name == stmt.name and _loop_constant(expr.right, changing):
        return expr.right if expr.op == "+" else Unary("-", expr.right, expr.right.span)
    if expr.op == "+" and isinstance(expr.right, Var) and expr.right.name == stmt.name \
            and _loop_constant(expr.left, changing):
        return expr.left
    return None


def _conditions(loop: While) -> list[Expr]:
    tests = list(guard_conjuncts(loop.cond))
    for stmt in statements(loop.body):
        if isinstance(stmt, IfStmt):
            tests += guard_conjuncts(stmt.cond)
    return tests


def loop_counters(info: MechanismInfo, loop: While) -> list[Counter]:
    changing = _assigned(loop)
    found = []
    for name in sorted(changing):
        if info.locals.get(name) not in ("int", "num"):
            continue
        updates = [s for s in statements(loop.body) if isinstance(s, (VarDecl, Assign)) and s.name == name]
        steps = [_step(s, changing) for s in updates]
        if not steps or any(s is None for s in steps) or any(isinstance(s, VarDecl) for s in updates):
            continue
        limits: dict[str, Expr] = {}
        for test in _conditions(loop):
            for side in _compared_with(test, name):
                if _loop_constant(side, changing):
                    limits.setdefault(show(side), side)
        if limits:
            unique = {show(s): s for s in steps if s is not None}
            found.append(Counter(name, tuple(unique.values()), tuple(limits.values())))
    return found


def _compared_with(test: Expr, name: str) -> list[Expr]:
    sides = []
    for e in sub_expressions(test):
        if isinstance(e, Binary) and e.op in _FLIP:
            if isinstance(e.left, Var) and e.left.name == name:
                sides.append(e.right)
            if isinstance(e.right, Var) and e.right.name == name:
                sides.append(e.left)
    return sides


def flag_tests(info: MechanismInfo, loop: While) -> list[FlagTest]:
    """`if (test) { flag = true; }` inside the loop, flag a `bool` local."""
    found = []
    for stmt in statements(loop.body):
        if not isinstance(stmt, IfStmt) or has_noise(stmt.cond):
            continue
        for inner in stmt.then:
            if isinstance(inner, Assign) and info.locals.get(inner.name) == "bool" and isinstance(inner.expr, BoolLit):
                found.append(FlagTest(inner.name, inner.expr.value, stmt.cond))
    return found


def loop_constants(counters: list[Counter]) -> list[Expr]:
    """The expressions a view must evaluate for the counter atoms."""
    exprs: dict[str, Expr] = {}
    for counter in counters:
        for e in counter.steps + counter.limits:
            exprs.setdefault(show(e), e)
    return list(exprs.values())


def counter_atoms(info: MechanismInfo, counters: list[Counter], claim: Term) -> list[Atom]:
    atoms: list[Atom] = []
    for counter in counters:
        c = counter.name
        whole = info.locals.get(c) == "int" or c in info.whole

        def value(v: View, c: str = c) -> Term:
            return z.to_real(v.values[c].one)

        def start(v: View, c: str = c) -> Term:
            return z.to_real(v.entries[c])

        atoms += [Atom(f"{c} >= {c} at entry", lambda v, x=value, s=start: x(v) >= s(v)),
                  Atom(f"{c} <= {c} at entry", lambda v, x=value, s=start: x(v) <= s(v))]
        for limit in counter.limits:
            for step in counter.steps:
                ends = [(_sum_text(limit, step, 0), 0)]
                if whole:
                    ends += [(_sum_text(limit, step, -1), -1), (_sum_text(limit, step, 1), 1)]
                for text, shift in ends:
                    def end(v: View, b: str = show(limit), d: str = show(step), k: int = shift) -> Term:
                        return z.to_real(v.bounds[b]) + z.to_real(v.bounds[d]) + k

                    atoms += [
                        Atom(f"{c} <= {text}", lambda v, x=value, e=end: x(v) <= e(v)),
                        Atom(f"{c} >= {text}", lambda v, x=value, e=end: x(v) >= e(v)),
                        Atom(_progress_text(c, text, show(step).startswith("-")),
                             lambda v, x=value, s=start, e=end: v.cost <= v.entry_cost
                             + (claim - v.entry_cost) * (x(v) - s(v)) / (e(v) - s(v))),
                    ]
    return atoms


def accumulator_atoms(info: MechanismInfo, counters: list[Counter], names: list[str]) -> list[Atom]:
    """A sum over the entries read so far (`s = s + q[i]`, `s = s + min(max(q[i], 0), 1)`)
    drifts by at most 1 per trip under `vec[inf]` (each entry moves by at most 1):
    `|dist(s)| <= |c - c at entry|` and `|dist(s)| <= c` for a counter c of unit
    step (the sensitivity of a sum of n entries is n: Dwork & Roth 2014, §3.3).
    Houdini keeps them only where inductive, whatever the body adds."""
    atoms: list[Atom] = []
    accumulators = [n for n in names if info.locals.get(n) == "num" and all(n != c.name for c in counters)]
    for counter in counters:
        steps = {show(s) for s in counter.steps}
        if steps not in ({"1"}, {"-1"}, {"-(1)"}):
            continue
        c, up = counter.name, steps == {"1"}
        for n in accumulators:
            def within(v: View, bound: Term, n: str = n) -> Term:
                d = z.to_real(v.values[n].two) - z.to_real(v.values[n].one)
                return z.conj(d <= bound, -d <= bound)  # |d| <= bound, without a case split

            def trips(v: View, c: str = c, up: bool = up) -> Term:
                x, x0 = z.to_real(v.values[c].one), z.to_real(v.entries[c])
                return x - x0 if up else x0 - x

            atoms.append(Atom(f"|dist({n})| <= " + (f"{c} - {c} at entry" if up else f"{c} at entry - {c}"),
                              lambda v, w=within, t=trips: w(v, t(v))))
            if up:
                atoms.append(Atom(f"|dist({n})| <= {c}",
                                  lambda v, w=within, c=c: w(v, z.to_real(v.values[c].one))))
    return atoms


def _progress_text(c: str, end: str, down: bool) -> str:
    """The cost atom's label: the counter's progress as a fraction of its range."""
    if down:
        span = f"{c} at entry" if end == "0" else f"{c} at entry - ({end})"
        return f"COST <= V0 + (claim - V0) * ({c} at entry - {c}) / ({span})"
    span = f"{end}" if end == "0" else f"{end} - {c} at entry"
    return f"COST <= V0 + (claim - V0) * ({c} - {c} at entry) / ({span})"


def _sum_text(limit: Expr, step: Expr, extra: int) -> str:
    """`limit + step + extra` as a reader would write it (`N`, `4 * N * eps`, `len(q) + 1`)."""
    constant = Fraction(extra)
    pieces: list[tuple[int, str]] = []
    for sign, term in additive_terms(limit) + additive_terms(step):
        if isinstance(term, NumLit):
            constant += sign * term.value
        else:
            pieces.append((sign, show(term, 4)))
    if constant:
        pieces.append((1 if constant > 0 else -1, str(abs(constant))))
    return show_signed_sum(pieces)


def flag_atoms(flags: list[FlagTest], evaluate) -> list[Atom]:  # noqa: ANN001 - (Expr, View) -> Term
    atoms = []
    for flag in flags:
        def is_set(v: View, f: FlagTest = flag) -> Term:
            value = v.values[f.flag].one
            return value if f.value else z.neg(value)

        def test(v: View, f: FlagTest = flag) -> Term:
            return evaluate(f.test, v)

        name = flag.flag if flag.value else f"!{flag.flag}"
        unset = f"!{flag.flag}" if flag.value else flag.flag
        atoms += [
            Atom(f"{name} ==> {show(flag.test)}", lambda v, s=is_set, t=test: z.implies(s(v), t(v))),
            Atom(f"{unset} ==> !({show(flag.test)})", lambda v, s=is_set, t=test: z.implies(z.neg(s(v)), z.neg(t(v)))),
        ]
    return atoms
