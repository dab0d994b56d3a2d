"""Side conditions over static parameters that the term-by-term test leaves
open, decided by z3 (issue 27; DFuzz, Gaboardi et al. POPL 2013, discharges
its index constraints with an SMT solver the same way).

Every symbol stands for a positive real (a static parameter is positive at
each call; proving a condition for every positive real proves it for every
positive whole number too). A polynomial with a negative coefficient may
still be positive everywhere (`e*e - e + 1`), and a cost may be below a bound
without being below it coefficient by coefficient (`2*e` under `e*e + 1`):
z3's nonlinear real arithmetic (nlsat) decides such conditions. An answer is
one of "proved", "refuted" (with a witness) or "unknown" (a timeout, or z3
unavailable): only "proved" is accepted; the caller refuses the other two
with a located diagnostic.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from fuzzpy.language.symbolic import Poly
from fuzzpy.support.records import frozen

#: z3's time per question, in milliseconds (a refusal, never an acceptance, past it)
TIMEOUT_MS = 2000


@frozen
class Verdict:
    status: str  # "proved" | "refuted" | "unknown"
    witness: str = ""  # for "refuted": values of the parameters where the condition fails


def positive(p: Poly) -> Verdict:
    """p > 0 for every positive value of its symbols."""
    if p.positive:
        return Verdict("proved")
    if p.is_const:
        return Verdict("refuted", "")
    return _never(p, strict=True)


def at_most(small: Poly, big: Poly, naturals: frozenset[str] = frozenset()) -> Verdict:
    """small <= big for every positive value of their symbols; the symbols
    in ``naturals`` (`nat` indices) range over the whole numbers >= 1 only
    (DFuzz's index sorts, Gaboardi et al. POPL 2013), so `max(n, 1) <= n`
    style conditions that need n >= 1 are decided over the naturals."""
    if small.at_most(big):
        return Verdict("proved")
    difference = big - small
    if difference.is_const:
        return Verdict("refuted", "")
    if not naturals & difference.symbols():
        return _never(difference, strict=False)
    return _never(difference, strict=False, naturals=naturals)


def _never(p: Poly, strict: bool, naturals: frozenset[str] = frozenset()) -> Verdict:
    """Whether p > 0 (strict) or p >= 0 holds everywhere: z3 looks for a
    positive point where it fails."""
    try:
        import z3
    except ImportError:  # pragma: no cover - z3 is a dependency
        return Verdict("unknown")
    names = sorted(p.symbols())
    symbols = {name: (z3.ToReal(z3.Int(name)) if name in naturals else z3.Real(name)) for name in names}
    solver = z3.SolverFor("QF_NRA") if not naturals & set(names) else z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    for name in names:
        solver.add(symbols[name] >= 1 if name in naturals else symbols[name] > 0)
    value = _term(p, symbols, z3)
    solver.add(value <= 0 if strict else value < 0)
    answer = solver.check()
    if answer == z3.unsat:
        return Verdict("proved")
    if answer == z3.sat:
        model = solver.model()
        shown = ", ".join(f"{name} = {model.eval(symbols[name], model_completion=True)}" for name in names)
        return Verdict("refuted", shown)
    return Verdict("unknown")


def _term(p: Poly, symbols: dict[str, Any], z3: Any) -> Any:
    total = z3.RealVal(0)
    for monomial, coefficient in p.terms:
        term = _real(coefficient, z3)
        for name, power in monomial:
            for _ in range(abs(power)):  # a negative power divides (the symbol is positive)
                term = term * symbols[name] if power > 0 else term / symbols[name]
        total = total + term
    return total


def _real(x: Fraction, z3: Any) -> Any:
    return z3.Q(x.numerator, x.denominator)
