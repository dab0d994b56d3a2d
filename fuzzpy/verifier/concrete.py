"""Run a mechanism on concrete inputs with the noise left symbolic.

Every noise draw becomes a variable; numeric values are `Linear` forms over
the draws; a comparison whose sides depend on draws splits the run into two
paths, each remembering the linear constraint it assumed. The result is the
list of all paths with their outputs, ready for `integrate.path_mass`.
Equalities between continuous values have probability zero and are taken to
be false. Everything is exact (Fractions). Reads outside a vector give 0 and
a division by 0 gives 0, as at run time (docs/semantics.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    BoolLit,
    Call,
    Expr,
    If,
    IfStmt,
    Index,
    Noise,
    NumLit,
    Output,
    ReturnStmt,
    Stmt,
    Unary,
    Var,
    VarDecl,
    While,
)
from fuzzpy.verifier.integrate import Linear, NoiseDraw
from fuzzpy.verifier.model import MechanismInfo

Value = Fraction | bool | Linear
MAX_TRIPS = 200


class Stuck(Exception):
    """The run cannot be represented exactly (non-linear noise, bad index, ...)."""


@dataclass
class Run:
    values: dict[str, Value]
    draws: list[NoiseDraw] = field(default_factory=list)
    constraints: list[Linear] = field(default_factory=list)  # each means ">= 0" (or "> 0": `strict`)
    outputs: list[Value] = field(default_factory=list)
    result: Value | None = None
    done: bool = False
    #: draws a released value pins to the target output (``x + e`` released as
    #: 3 fixes e = 3 - x); only when a target is given, to cut paths of mass 0
    fixed: dict[int, Fraction] = field(default_factory=dict)
    #: the positions in ``constraints`` that mean "> 0": a test's two sides partition
    #: the draws (`e > 0` true is open at 0, false closed), so a released value that
    #: pins the draws onto the border counts in one path only (review s29b: a
    #: density counted twice refuted a private mechanism)
    strict: set[int] = field(default_factory=set)

    def fork(self) -> Run:
        return Run(dict(self.values), list(self.draws), list(self.constraints), list(self.outputs),
                   self.result, self.done, dict(self.fixed), set(self.strict))

    def assume(self, form: Linear, strict: bool) -> None:
        """Add the constraint ``form > 0`` (``strict``) or ``form >= 0``."""
        if strict:
            self.strict.add(len(self.constraints))
        self.constraints.append(form)

    @property
    def strictness(self) -> list[bool]:
        return [k in self.strict for k in range(len(self.constraints))]

    @property
    def released(self) -> tuple[Value, ...]:
        return tuple(self.outputs) if self.result is None else (self.result,)


def run_all(
    info: MechanismInfo,
    scalars: dict[str, Value],
    vectors: dict[str, list[Fraction]],
    target: tuple[object, ...] | None = None,
    max_runs: int | None = None,
    first: bool = False,
) -> list[Run]:
    """Every path of the mechanism on these inputs (only those that can release
    ``target``, when it is given: paths are cut as soon as an output differs).
    More than ``max_runs`` paths raise `Stuck`; with ``first``, the first
    ``max_runs`` paths in depth-first order are returned instead (some of
    the outputs, for a long input whose paths are too many to list: each
    path is exact, the list is not complete)."""
    executor = _Executor(info, vectors, target, lazy=first)
    start = Run(dict(scalars))
    runs = []
    for run in executor.block(info.decl.body, start):
        runs.append(run)
        if max_runs is not None and len(runs) >= max_runs and first:
            break
        if max_runs is not None and len(runs) > max_runs:
            raise Stuck(f"more than {max_runs} paths")
    return runs


def length_thresholds(info: MechanismInfo, scalars: dict[str, Value], vectors: dict[str, list[Fraction]],
                      max_runs: int = 64) -> set[Fraction]:
    """The values `len(v)` is compared with on these inputs (`if (len(q) < kk)`
    with kk computed by the body: its value), from the first paths, depth
    first; the lengths worth trying on either side of such a test."""
    executor = _Executor(info, vectors, None, lazy=True)
    executor.thresholds = set()
    count = 0
    try:
        for _ in executor.block(info.decl.body, Run(dict(scalars))):
            count += 1
            if count >= max_runs:
                break
    except (Stuck, ArithmeticError, RecursionError):
        pass
    return executor.thresholds


def _linear(value: Value) -> Linear:
    if isinstance(value, Linear):
        return value
    if isinstance(value, bool):
        raise Stuck("a boolean used as a number")
    return Linear.of(value)


def _pinned_value(form: Linear, fixed: dict[int, Fraction]) -> Fraction | None:
    """The value of ``form`` when every draw in it is fixed, else None."""
    if not fixed or any(i not in fixed for i, _ in form.coeffs):
        return None
    return form.const + sum((c * fixed[i] for i, c in form.coeffs), Fraction(0))


def _open(run: Run, form: Linear) -> bool:
    """False when ``form >= 0`` and the path's constraints on the same single
    draw admit no value of it (strictly: an interval with lo > hi), so that
    the path with it has probability 0; True otherwise (also whenever a
    constraint involves several draws: no test is made)."""
    if len(form.coeffs) != 1:
        return True
    (index, _), = form.coeffs
    low: Fraction | None = None
    high: Fraction | None = None
    for c in (*run.constraints, form):
        if len(c.coeffs) != 1 or c.coeffs[0][0] != index:
            continue
        coeff = c.coeffs[0][1]
        edge = -c.const / coeff  # coeff * e + const >= 0
        if coeff > 0:
            low = edge if low is None else max(low, edge)
        else:
            high = edge if high is None else min(high, edge)
    return low is None or high is None or low <= high


def _holds(value: Fraction | None, strict: bool) -> bool:
    """A constraint whose draws are all fixed at ``value`` (None: some draw free) holds."""
    return value is None or value > 0 or (value == 0 and not strict)


def _normal(value: Linear) -> Value:
    return value.const if value.is_constant else value


class _Executor:
    def __init__(self, info: MechanismInfo, vectors: dict[str, list[Fraction]],
                 target: tuple[object, ...] | None, lazy: bool = False) -> None:
        self.info = info
        self.vectors = vectors
        self.target = target
        self.lazy = lazy  # one path at a time (depth first), not statement by statement
        self.thresholds: set[Fraction] | None = None  # `length_thresholds` records here

    def _may_release(self, position: int, value: Value) -> bool:
        if self.target is None:
            return True
        if position >= len(self.target):
            return False
        expected = self.target[position]
        if isinstance(value, Linear):
            return isinstance(expected, Fraction)
        if isinstance(value, bool) or isinstance(expected, bool):
            return isinstance(value, bool) and isinstance(expected, bool) and value == expected
        return isinstance(expected, Fraction) and value == expected

    def _pin(self, run: Run, position: int, value: Value) -> bool:
        """Record the draw a released one-draw value fixes (target mode), and
        say whether the path can still release the target: False when the
        fixed values break a constraint the path assumed, strictly (the set
        of draws the path stands for, on the target's equation, is then empty:
        its mass is 0, so dropping it changes no probability)."""
        if self.target is None or not isinstance(value, Linear) or len(value.coeffs) != 1:
            return True
        expected = self.target[position]
        assert isinstance(expected, Fraction)
        (index, coeff), = value.coeffs
        pinned = (expected - value.const) / coeff
        if run.fixed.get(index, pinned) != pinned:
            return False
        run.fixed[index] = pinned
        return all(_holds(_pinned_value(c, run.fixed), k in run.strict) for k, c in enumerate(run.constraints))

    # ------------------------------------------------------------ statements

    def block(self, body: tuple[Stmt, ...], run: Run) -> Iterator[Run]:
        if self.lazy:
            yield from self._depth_first(body, 0, run)
            return
        runs = [run]
        for stmt in body:
            nxt: list[Run] = []
            for r in runs:
                if r.done:
                    nxt.append(r)
                else:
                    nxt.extend(self.stmt(stmt, r))
            runs = nxt
        yield from runs

    def _depth_first(self, body: tuple[Stmt, ...], at: int, run: Run) -> Iterator[Run]:
        if at == len(body) or run.done:
            yield run
            return
        for r in self.stmt(body[at], run):
            yield from self._depth_first(body, at + 1, r)

    def stmt(self, stmt: Stmt, run: Run) -> Iterator[Run]:
        if isinstance(stmt, (VarDecl, Assign)):
            for r, value in self.eval(stmt.expr, run):
                r.values[stmt.name] = value
                yield r
        elif isinstance(stmt, Output):
            for r, value in self.eval(stmt.expr, run):
                if self._may_release(len(r.outputs), value) and self._pin(r, len(r.outputs), value):
                    r.outputs.append(value)
                    yield r
        elif isinstance(stmt, ReturnStmt):
            for r, value in self.eval(stmt.expr, run):
                if self._may_release(0, value) and self._pin(r, 0, value):
                    r.result, r.done = value, True
                    yield r
        elif isinstance(stmt, IfStmt):
            for r, cond in self.eval(stmt.cond, run):
                yield from self.block(stmt.then if cond else stmt.orelse, r)
        elif isinstance(stmt, While):
            yield from self.loop(stmt, run, 0)
        else:
            raise Stuck(type(stmt).__name__)

    def loop(self, stmt: While, run: Run, trips: int) -> Iterator[Run]:
        if trips > MAX_TRIPS:
            raise Stuck("the loop runs too long on a short input")
        for r, cond in self.eval(stmt.cond, run):
            if not cond or r.done:
                yield r
                continue
            for after in self.block(stmt.body, r):
                yield from (after,) if after.done else self.loop(stmt, after, trips + 1)

    # ------------------------------------------------------------ expressions

    def eval(self, expr: Expr, run: Run) -> Iterator[tuple[Run, Value]]:
        if isinstance(expr, (NumLit, BoolLit)):
            yield run, expr.value
        elif isinstance(expr, Var):
            if expr.name not in run.values:
                raise Stuck(f"`{expr.name}` read before assignment")
            yield run, run.values[expr.name]
        elif isinstance(expr, Binary):
            yield from self.binary(expr, run)
        elif isinstance(expr, Unary):
            for r, v in self.eval(expr.operand, run):
                yield r, (not v) if expr.op != "-" else _normal(-_linear(v))
        elif isinstance(expr, If):
            for r, cond in self.eval(expr.cond, run):
                yield from self.eval(expr.then if cond else expr.orelse, r)
        elif isinstance(expr, Index):
            yield from self.index(expr, run)
        elif isinstance(expr, Call):
            yield from self.call(expr, run)
        elif isinstance(expr, Noise):
            for r, scale in self.eval(expr.scale, run):
                if isinstance(scale, (Linear, bool)) or scale <= 0:
                    raise Stuck("the noise scale is not a positive number here")
                r.draws.append(NoiseDraw(expr.kind, scale))
                yield r, Linear.draw(len(r.draws) - 1)
        else:
            raise Stuck(type(expr).__name__)

    def binary(self, expr: Binary, run: Run) -> Iterator[tuple[Run, Value]]:
        op = expr.op
        if op in ("&&", "||"):
            for r, left in self.eval(expr.left, run):
                if (op == "&&" and not left) or (op == "||" and left):
                    yield r, bool(left)
                else:
                    yield from self.eval(expr.right, r)
            return
        for r1, left in self.eval(expr.left, run):
            for r2, right in self.eval(expr.right, r1):
                if self.thresholds is not None and op in ("<", "<=", ">", ">=", "==", "!="):
                    self._note_length_test(expr, left, right)
                yield from self.combine(op, left, right, r2)

    def _note_length_test(self, expr: Binary, left: Value, right: Value) -> None:
        for side, other in ((expr.left, right), (expr.right, left)):
            if isinstance(side, Call) and side.func == "len" and isinstance(other, Fraction) \
                    and not isinstance(other, bool):
                assert self.thresholds is not None
                self.thresholds.add(other)

    def combine(self, op: str, left: Value, right: Value, run: Run) -> Iterator[tuple[Run, Value]]:
        if op in ("==", "!=") and (isinstance(left, bool) or isinstance(right, bool)):
            yield run, (left == right) if op == "==" else (left != right)
            return
        a, b = _linear(left), _linear(right)
        if op == "+":
            yield run, _normal(a + b)
        elif op == "-":
            yield run, _normal(a - b)
        elif op == "*":
            if not a.is_constant and not b.is_constant:
                raise Stuck("a product of two noisy values")
            yield run, _normal(a.scale(b.const) if b.is_constant else b.scale(a.const))
        elif op == "/":
            if not b.is_constant:
                raise Stuck("division by a noisy value")
            yield run, _normal(a.scale(1 / b.const)) if b.const != 0 else Fraction(0)  # x / 0 = 0, as at run time
        else:
            yield from self.compare(op, a - b, run)

    def compare(self, op: str, diff: Linear, run: Run) -> Iterator[tuple[Run, Value]]:
        """Split on the sign of ``left - right``; ties have probability zero."""
        if diff.is_constant:
            d = diff.const
            yield run, {"<": d < 0, "<=": d <= 0, ">": d > 0, ">=": d >= 0, "==": d == 0, "!=": d != 0}[op]
            return
        if op in ("==", "!="):
            yield run, op == "!="
            return
        truth = op in (">", ">=")
        # which side is open at 0: `>` and `<=` hold at a tie on the negative side
        # (diff <= 0), `>=` and `<` on the positive one (diff >= 0)
        positive_strict = op in (">", "<=")
        pinned = _pinned_value(diff, run.fixed)
        if pinned is not None:  # target mode: the draws are fixed, the other side has mass 0
            positive = pinned > 0 or (pinned == 0 and not positive_strict)
            run.assume(diff if positive else -diff, positive_strict if positive else not positive_strict)
            yield run, truth if positive else not truth
            return
        if self.target is not None or self.lazy:
            # a branch whose one-draw constraint leaves its draw no value has mass 0
            sides = [(form, value, strict) for form, value, strict in
                     ((diff, truth, positive_strict), (-diff, not truth, not positive_strict)) if _open(run, form)]
            if len(sides) == 1:
                run.assume(sides[0][0], sides[0][2])
                yield run, sides[0][1]
                return
        positive_run, negative_run = run.fork(), run
        positive_run.assume(diff, positive_strict)
        negative_run.assume(-diff, not positive_strict)
        yield positive_run, truth
        yield negative_run, not truth

    def index(self, expr: Index, run: Run) -> Iterator[tuple[Run, Value]]:
        if not isinstance(expr.base, Var) or expr.base.name not in self.vectors:
            raise Stuck("indexing something that is not a vector parameter")
        vector = self.vectors[expr.base.name]
        for r, k in self.eval(expr.index, run):
            if isinstance(k, (Linear, bool)):
                raise Stuck("a noisy index")
            inside = k.denominator == 1 and 0 <= k < len(vector)
            yield r, vector[int(k)] if inside else Fraction(0)  # zero padding, as at run time

    def call(self, expr: Call, run: Run) -> Iterator[tuple[Run, Value]]:
        if expr.func == "len":
            base = expr.args[0]
            if not isinstance(base, Var) or base.name not in self.vectors:
                raise Stuck("len() of something that is not a vector")
            yield run, Fraction(len(self.vectors[base.name]))
            return
        if expr.func == "abs":
            for r, v in self.eval(expr.args[0], run):
                a = _linear(v)
                for r2, nonneg in self.compare(">=", a, r):
                    yield r2, _normal(a if nonneg else -a)
            return
        if expr.func in ("max", "min"):
            for r1, left in self.eval(expr.args[0], run):
                for r2, right in self.eval(expr.args[1], r1):
                    a, b = _linear(left), _linear(right)
                    for r3, first in self.compare(">=" if expr.func == "max" else "<=", a - b, r2):
                        yield r3, _normal(a if first else b)
            return
        raise Stuck(f"call of `{expr.func}`")
