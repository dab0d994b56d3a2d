"""Running imperative `mechanism` bodies (language design, section 5).

A mechanism called from a `def` collects its arguments in order and returns a
`fuzzy` value; sampling it runs the body. Noise `lap(b)` and `lapplus(b)`
comes from the exact grid samplers (`fuzzpy.runtime.noise.lap_draw`): a shift
of a draw by a multiple a of the grid costs at most |a| / b, so the verifier's
alignment proofs carry over whenever the shifts are grid multiples (integer
queries and thresholds). Proof hints (`align`, `invariant`, `dist`, `forall`)
and `requires` clauses that mention distances are for the verifier only.

Arithmetic in a mechanism body is exact: numbers are `Fraction`s (the
arguments' floats are read as the dyadic rationals they are, noise draws are
grid multiples), so comparisons such as `q[i] + eta >= tt` decide exactly as
in the verifier's model of the reals, never by a floating-point rounding.
The released value is converted back to an `int` or `float` at the end
(post-processing).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from fuzzpy import syntax as S
from fuzzpy.runtime.noise import lap_draw, lapplus_draw
from fuzzpy.runtime.operations import binary, index_value
from fuzzpy.runtime.values import Function, Fuzzy, RuntimeFailure, Value

if TYPE_CHECKING:
    from fuzzpy.runtime.interpreter import Interpreter

#: A loop that runs this many iterations is reported instead of hanging.
MAX_ITERATIONS = 100_000_000

_CALLS = {
    "len": lambda v: len(v),
    "abs": abs,
    "max": max,
    "min": min,
}


class _Returned(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


def mechanism_function(decl: S.MechanismDecl, interp: Interpreter) -> Value:
    def call(*args: Value) -> Fuzzy:
        return Fuzzy(lambda: run_mechanism(decl, args, interp))

    if not decl.params:
        return Fuzzy(lambda: run_mechanism(decl, (), interp))
    return Function(decl.name, len(decl.params), call)


def run_mechanism(decl: S.MechanismDecl, args: tuple[Value, ...], interp: Interpreter) -> Value:
    env = {param.name: exact(arg) for param, arg in zip(decl.params, args, strict=True)}
    runner = _Runner(interp, env)
    for condition in decl.requires:
        if not _mentions_distance(condition) and not runner.expr(condition):
            raise RuntimeFailure("FZ519", f"the precondition of mechanism `{decl.name}` does not hold")
    try:
        runner.block(decl.body)
    except _Returned as done:
        return released(done.value)
    except ZeroDivisionError:
        raise RuntimeFailure("FZ512", f"division by zero in mechanism `{decl.name}`") from None
    return released(list(runner.outputs))


def exact(value: Value) -> Value:
    """Numbers (and vectors, lists of them) as exact rationals."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return Fraction(value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return [exact(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    return value


def released(value: Value) -> Value:
    """Exact rationals back to ints and floats for the output."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if isinstance(value, list):
        return [released(v) for v in value]
    if isinstance(value, tuple):
        return tuple(released(v) for v in value)
    return value


def _mentions_distance(expr: object) -> bool:
    if isinstance(expr, (S.Dist, S.Forall)):
        return True
    if hasattr(expr, "__dataclass_fields__"):
        return any(_mentions_distance(getattr(expr, f)) for f in expr.__dataclass_fields__)
    if isinstance(expr, tuple):
        return any(_mentions_distance(e) for e in expr)
    return False


class _Runner:
    def __init__(self, interp: Interpreter, env: dict[str, Value]) -> None:
        self.interp = interp
        self.env = env
        self.outputs: list[Value] = []

    # -- statements

    def block(self, stmts: tuple[S.Stmt, ...]) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, stmt: S.Stmt) -> None:
        if isinstance(stmt, S.VarDecl):
            self.env[stmt.name] = self.expr(stmt.expr)
        elif isinstance(stmt, S.Assign):
            self._assign(stmt)
        elif isinstance(stmt, S.IfStmt):
            self.block(stmt.then if self.expr(stmt.cond) else stmt.orelse)
        elif isinstance(stmt, S.While):
            iterations = 0
            while self.expr(stmt.cond):
                iterations += 1
                if iterations > MAX_ITERATIONS:
                    raise RuntimeFailure("FZ519", "a mechanism loop ran too many iterations")
                self.block(stmt.body)
        elif isinstance(stmt, S.ReturnStmt):
            raise _Returned(self.expr(stmt.expr))
        elif isinstance(stmt, S.Output):
            self.outputs.append(self.expr(stmt.expr))

    def _assign(self, stmt: S.Assign) -> None:
        value = self.expr(stmt.expr)
        if stmt.index is None:
            self.env[stmt.name] = value
            return
        target = self.env.get(stmt.name)
        position = int(self.expr(stmt.index))
        if isinstance(target, list):
            target = list(target)
        else:
            raise RuntimeFailure("FZ515", f"`{stmt.name}` is not a vector")
        if not 0 <= position < len(target):
            raise RuntimeFailure("FZ515", f"index {position} is out of range")
        target[position] = value
        self.env[stmt.name] = target

    # -- expressions

    def expr(self, expr: S.Expr) -> Value:
        if isinstance(expr, S.NumLit):
            return expr.value
        if isinstance(expr, S.Var):
            if expr.name in self.env:
                return self.env[expr.name]
            return exact(self.interp.eval(expr, {}))
        if isinstance(expr, S.Binary):
            return self._binary(expr)
        if isinstance(expr, S.Unary):
            value = self.expr(expr.operand)
            return -value if expr.op == "-" else not value
        if isinstance(expr, S.BoolLit):
            return expr.value
        if isinstance(expr, S.Noise):
            scale = Fraction(self.expr(expr.scale))
            if scale <= 0:
                raise RuntimeFailure("FZ517", "noise needs a positive scale")
            draw = lap_draw if expr.kind == "lap" else lapplus_draw
            return draw(scale, self.interp.source)
        if isinstance(expr, S.Index):
            return index_value(self.expr(expr.base), self.expr(expr.index))
        if isinstance(expr, S.Call):
            return self._call(expr)
        if isinstance(expr, S.If):
            return self.expr(expr.then if self.expr(expr.cond) else expr.orelse)
        if isinstance(expr, S.ListLit):
            return [self.expr(e) for e in expr.items]
        if isinstance(expr, S.Tuple):
            return tuple(self.expr(e) for e in expr.items)
        return exact(self.interp.eval(expr, dict(self.env)))

    def _binary(self, expr: S.Binary) -> Value:
        if expr.op == "&&":
            return bool(self.expr(expr.left)) and bool(self.expr(expr.right))
        if expr.op == "||":
            return bool(self.expr(expr.left)) or bool(self.expr(expr.right))
        left, right = self.expr(expr.left), self.expr(expr.right)
        if expr.op == "/":
            return left / right
        return binary(expr.op, left, right)

    def _call(self, expr: S.Call) -> Value:
        args = [self.expr(a) for a in expr.args]
        if expr.func in _CALLS:
            result = _CALLS[expr.func](*args)
            return result.item() if isinstance(result, np.generic) else result
        func: Value = self.interp.eval(S.Var(expr.func), {})
        for arg in args:
            func = func(released(arg))
        return exact(func)
