"""The verifier's only door to z3: term constructors and validity checks.

Every other verifier module builds terms through these functions (z3's own
operator overloading does the arithmetic), so the solver could be swapped by
rewriting this module alone.

Soundness rule (verifier.md): an `unknown` or a timeout from z3 is never read
as "valid"; callers get ``Outcome.status == "unknown"`` and must give up.
Every check is bounded by z3's deterministic resource limit, not by time
(`RLIMIT`); CPU time is only a safety cap.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from itertools import count

import z3

from fuzzpy.support.records import frozen

Term = z3.ExprRef
_fresh_ids = count()


def reset_names() -> None:
    """Restart fresh-name numbering, so that each proof attempt builds the same
    terms (z3's search depends on names); terms of different attempts never meet."""
    global _fresh_ids
    _fresh_ids = count()


def fresh_real(stem: str) -> Term:
    return z3.Real(f"{stem}!{next(_fresh_ids)}")


def fresh_int(stem: str) -> Term:
    return z3.Int(f"{stem}!{next(_fresh_ids)}")


def fresh_bool(stem: str) -> Term:
    return z3.Bool(f"{stem}!{next(_fresh_ids)}")


def fresh_of_sort(stem: str, like: Term) -> Term:
    """A fresh constant of the same sort as ``like``."""
    if is_bool(like):
        return fresh_bool(stem)
    if is_int(like):
        return fresh_int(stem)
    return fresh_real(stem)


def fresh_array(stem: str) -> z3.FuncDeclRef:
    """An uninterpreted function Int -> Real (a private vector or its distances)."""
    return z3.Function(f"{stem}!{next(_fresh_ids)}", z3.IntSort(), z3.RealSort())


def number(value: Fraction | int, integral: bool = False) -> Term:
    value = Fraction(value)
    if integral and value.denominator == 1:
        return z3.IntVal(value.numerator)
    return z3.RealVal(value)


def boolean(value: bool) -> Term:
    return z3.BoolVal(value)


def is_bool(term: Term) -> bool:
    return z3.is_bool(term)


def is_int(term: Term) -> bool:
    return z3.is_int(term)


def to_real(term: Term) -> Term:
    return z3.ToReal(term) if z3.is_int(term) else term


def ite(cond: Term, then: Term, orelse: Term) -> Term:
    if z3.is_int(then) != z3.is_int(orelse):
        then, orelse = to_real(then), to_real(orelse)
    return z3.If(cond, then, orelse)


def conj(*terms: Term) -> Term:
    """Conjunction, built through the C API (z3.And's Python coercions are slow)."""
    if not terms:
        return z3.BoolVal(True)
    if len(terms) == 1:
        return terms[0]
    ctx = terms[0].ctx
    asts = (z3.Ast * len(terms))(*(t.as_ast() for t in terms))
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(terms), asts), ctx)


def sum_of(*terms: Term) -> Term:
    return z3.Sum(*terms) if terms else z3.RealVal(0)


def disj(*terms: Term) -> Term:
    return z3.Or(*terms) if terms else z3.BoolVal(False)


def neg(term: Term) -> Term:
    return z3.Not(term)


def implies(left: Term, right: Term) -> Term:
    ctx = left.ctx
    return z3.BoolRef(z3.Z3_mk_implies(ctx.ref(), left.as_ast(), right.as_ast()), ctx)


def absolute(term: Term) -> Term:
    return z3.If(term >= 0, term, -term)


def maximum(left: Term, right: Term) -> Term:
    return ite(left >= right, left, right)


def minimum(left: Term, right: Term) -> Term:
    return ite(left <= right, left, right)


def divide(left: Term, right: Term) -> Term:
    """Real division (the mechanism language has no integer division)."""
    return to_real(left) / to_real(right)


def same(left: Term, right: Term) -> bool:
    """Structurally the same term (no solver involved)."""
    return left.eq(right)


def simplify(term: Term) -> Term:
    return z3.simplify(term)


def is_true(term: Term) -> bool:
    return z3.is_true(z3.simplify(term))


def is_false(term: Term) -> bool:
    return z3.is_false(z3.simplify(term))




@frozen
class Outcome:
    """Result of a validity check: "valid", "invalid" (with a model) or "unknown"."""

    status: str
    model: z3.ModelRef | None = None
    reason: str = ""
    context: z3.Context | None = None  # the fresh context the model lives in, if not the main one

    def value(self, term: Term) -> Term:
        assert self.model is not None
        if self.context is None:
            return self.model.eval(term, model_completion=True)
        found = self.model.eval(term.translate(self.context), model_completion=True)
        return found.translate(term.ctx)

    def holds(self, formula: Term) -> bool:
        return z3.is_true(self.value(formula))


#: z3's deterministic resource limit ("rlimit") per check: the budget that decides
#: whether a hard check gives up, so that which checks are decided does not
#: depend on the machine's load. Linear and Houdini checks spend about 2-3
#: million units per CPU second here; the verifier's checks on the examples and
#: the literature suite spend at most 5.5 million (examples/mechanisms/README.md).
RLIMIT = 10_000_000
#: CPU seconds of the checking thread: only a safety cap. nlsat (nonlinear real
#: arithmetic) counts its units some twenty times more slowly, so a hard
#: nonlinear check may reach this cap first (it then gives up all the same).
CPU_CAP_SECONDS = 10.0
#: the reason of an `unknown` that the CPU safety cap (not the rlimit) ended
CPU_CAP_REASON = "CPU time cap reached"


def check_valid(
    assumptions: Sequence[Term], goal: Term, rlimit: int = RLIMIT, cap_seconds: float = CPU_CAP_SECONDS
) -> Outcome:
    """Is ``assumptions => goal`` valid? Searches for a model of its negation.

    ``rlimit`` bounds z3's work (counted, relative to the context's count so
    far); ``cap_seconds`` bounds the CPU time of this thread (`_CpuWatchdog`;
    z3's wall-clock `timeout` where per-thread clocks are missing).
    """
    outcome = _check(list(assumptions), goal, rlimit, cap_seconds, None)
    if outcome.status == "unknown" and outcome.reason != CPU_CAP_REASON:
        # z3's search depends on the history of its context (the order terms
        # were created in): a check that runs out of its budget after many
        # others may be easy on its own. Ask once more in a fresh context,
        # so that what is decided depends on the query alone. Whether to ask
        # again depends on the counted budget only, never on the CPU time
        # spent, which a loaded machine inflates.
        fresh = _check(list(assumptions), goal, rlimit, cap_seconds, z3.Context())
        if fresh.status != "unknown":
            return fresh
    return outcome


def _check(assumptions: list[Term], goal: Term, rlimit: int, cap_seconds: float, ctx: z3.Context | None) -> Outcome:
    if ctx is not None:
        assumptions = [a.translate(ctx) for a in assumptions]
        goal = goal.translate(ctx)
    solver = z3.Solver(ctx=ctx) if ctx is not None else z3.Solver()
    solver.set("rlimit", rlimit)
    solver.add(*assumptions)
    solver.add(z3.Not(goal))
    capped = [False]
    if not _WATCHDOG.available:
        solver.set("timeout", int(cap_seconds * 1000))
        result = solver.check()
    else:
        with _WATCHDOG.limit(solver.ctx, cap_seconds) as capped:
            result = solver.check()
    if result == z3.unsat:
        return Outcome("valid")
    if result == z3.sat:
        return Outcome("invalid", solver.model(), context=ctx)
    return Outcome("unknown", reason=CPU_CAP_REASON if capped[0] else solver.reason_unknown())


class _CpuWatchdog:
    """Interrupts a z3 check once the calling thread has used its CPU budget.

    z3's own `timeout` is wall-clock time, which a loaded machine exhausts
    early. One daemon thread reads the checking thread's CPU clock every few
    milliseconds and calls `Context.interrupt` (thread-safe in z3) when the
    budget is spent; the check then returns `unknown`, never a verdict.
    Without per-thread CPU clocks (not POSIX) the wall-clock timeout is used.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._job: tuple[int, float, z3.Context, list[bool]] | None = None
        self._thread: threading.Thread | None = None
        self.available = hasattr(time, "pthread_getcpuclockid")

    @contextmanager
    def limit(self, ctx: z3.Context, seconds: float) -> Iterator[list[bool]]:
        """Within the block, the check is interrupted after ``seconds`` of
        CPU; the yielded flag's one element says whether that happened."""
        clock = time.pthread_getcpuclockid(threading.get_ident())
        start = time.clock_gettime(clock)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="z3-cpu-watchdog", daemon=True)
                self._thread.start()
            fired = [False]
            self._job = (clock, start + seconds, ctx, fired)
            self._lock.notify()
        try:
            yield fired
        finally:
            with self._lock:
                self._job = None

    def _watch(self) -> None:
        while True:
            with self._lock:
                while self._job is None:
                    self._lock.wait()
                clock, deadline, ctx, fired = self._job
                if time.clock_gettime(clock) > deadline:
                    fired[0] = True
                    ctx.interrupt()
                    self._job = None
                    continue
            time.sleep(0.002)


_WATCHDOG = _CpuWatchdog()


def satisfiable(assumptions: Sequence[Term], rlimit: int = RLIMIT) -> Outcome:
    """A model of the assumptions ("invalid" carries it), "valid" when there is none."""
    return check_valid(assumptions, z3.BoolVal(False), rlimit)


def pretty(term: Term) -> str:
    """A readable rendering of a (simplified) term, with fresh-name suffixes removed."""
    text = str(z3.simplify(term, som=False))
    text = re.sub(r"!\d+", "", text)
    return text.replace("ToReal(", "(").replace("\n", " ")


def constant_names(term: Term) -> set[str]:
    """Stems (before the `!` suffix) of the uninterpreted constants in a term."""
    names: set[str] = set()
    stack, seen = [term], set()
    while stack:
        node = stack.pop()
        if node.get_id() in seen:
            continue
        seen.add(node.get_id())
        if z3.is_const(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            names.add(node.decl().name().split("!")[0])
        stack.extend(node.children())
    return names
