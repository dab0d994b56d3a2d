"""Running imperative `mechanism` bodies (language design, section 5).

A mechanism called from a `def` collects its arguments in order and returns a
`fuzzy` value; sampling it runs the body. The body means what the verifier's
product program takes it to mean (docs/semantics.md, "Mechanisms"):

* arithmetic is exact: numbers are `Fraction`s (the arguments' floats are
  read as the dyadic rationals they are), a division by zero gives 0;
* noise `lap(b)` / `lapplus(b)` is exact continuous noise
  (`fuzzpy.runtime.lazy_reals`): a real number, refined only as far as a
  comparison or the final rounding needs, so that the verifier's alignments
  (shifts by any real amount) carry over to what runs;
* `q[k]` is entry k of q, or 0 when k is outside the vector (zero padding:
  a read never fails); `&&` and `||` short-circuit;
* the released value is converted to an `int` or the nearest `float` at the
  end (post-processing).

Proof hints (`align`, `invariant`, `dist`, `forall`) and `requires` clauses
that mention distances are for the verifier only.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.language import syntax as S
from fuzzpy.runtime import lazy_reals as R
from fuzzpy.runtime.exact import to_float
from fuzzpy.runtime.operations import binary
from fuzzpy.runtime.values import Function, Fuzzy, RuntimeFailure, Value
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

if TYPE_CHECKING:
    from fuzzpy.runtime.interpreter import Interpreter

#: A loop that runs this many iterations is reported instead of hanging.
MAX_ITERATIONS = 100_000_000

_CALLS = {
    "len": lambda v: Fraction(len(v)),
    "abs": R.absolute,
    "max": R.maximum,
    "min": R.minimum,
}
_ARITHMETIC = {"+": lambda a, b: R.add(a, b), "-": lambda a, b: R.add(a, b, -1), "*": R.multiply, "/": R.divide}


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
    """Exact numbers back to ints and (nearest) floats for the output."""
    if isinstance(value, R.Noisy):
        return R.to_float(value)
    if isinstance(value, Fraction):  # beyond the double range: saturated (docs/semantics.md, "Printing")
        return int(value) if value.denominator == 1 else to_float(value)
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
            if expr.name in self.interp.constants:  # the exact value the verifier used
                return self.interp.constants[expr.name]
            return exact(self.interp.eval(expr, {}))
        if isinstance(expr, S.Binary):
            return self._binary(expr)
        if isinstance(expr, S.Unary):
            value = self.expr(expr.operand)
            return R.negate(value) if expr.op == "-" else not value
        if isinstance(expr, S.BoolLit):
            return expr.value
        if isinstance(expr, S.Noise):
            return R.draw(expr.kind, self.expr(expr.scale), self.interp.source)
        if isinstance(expr, S.Index):
            return _entry(self.expr(expr.base), self.expr(expr.index))
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
        if expr.op == "==>":  # requires only (the verifier rejects it in statements)
            return (not self.expr(expr.left)) or bool(self.expr(expr.right))
        left, right = self.expr(expr.left), self.expr(expr.right)
        if _number(left) and _number(right):
            if expr.op in _ARITHMETIC:
                return _ARITHMETIC[expr.op](left, right)
            if expr.op in ("<", "<=", ">", ">=", "==", "!="):
                return R.compare(expr.op, left, right)
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


def _number(value: Value) -> bool:
    return isinstance(value, (Fraction, R.Noisy)) and not isinstance(value, bool)


def _entry(vector: Value, index: Value) -> Value:
    """Entry ``index`` of the vector, or 0 outside it (zero padding: never fails)."""
    if not isinstance(vector, list):
        raise RuntimeFailure("FZ514", "only a vector can be indexed")
    if isinstance(index, bool) or not isinstance(index, Fraction) or index.denominator != 1:
        return Fraction(0)
    k = int(index)
    return vector[k] if 0 <= k < len(vector) else Fraction(0)
