"""The interpreter of the functional language (`def`s, blocks, lambdas...).

Call-by-value with curried functions (`Function`). `fuzzy` values are
samplers (`Fuzzy`): `laplace[eps] e` evaluates e now and returns a sampler;
`sample x = m;` runs it. The same evaluator serves single values and whole
columns: when `map`, `filter`, `split` or `group` apply a function to a bag,
the row variable is bound to the bag's columns, and arithmetic, comparisons,
`&&`, `if` and field access become numpy operations over every row at once
(see `fuzzpy.runtime.primitives.apply_to_rows`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from fuzzpy import syntax as S
from fuzzpy.runtime.operations import (
    ARITH,
    SumColumn,
    as_vector,
    binary,
    index_value,
    is_columnar,
    select_rows,
)
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.values import (
    Function,
    Fuzzy,
    Inl,
    Inr,
    NotVectorisable,
    Record,
    RuntimeFailure,
    Value,
    WithPair,
)
from fuzzpy.runtime.vectors import is_per_row_number, vector_column

Env = dict[str, Value]

#: How many `if`/`case`s whose rows disagree one column evaluation may take
#: both branches of (a recursion that branches on per-row data would otherwise
#: unfold for every row at once); past it, the caller goes row by row.
MAX_SPLIT_BRANCHES = 256
RECURSION_LIMIT = 20_000


class Interpreter:
    """Evaluates one program's definitions with one source of randomness."""

    def __init__(
        self,
        program: S.Program,
        source: RandomSource,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        from fuzzpy.runtime.primitives import builtin_functions

        # Each level of a `def rec` takes a dozen Python frames: allow deep ones.
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
        self.program = program
        self.source = source
        self.warn = warn or (lambda message: None)
        self.constants: dict[str, Fraction] = {}
        self.globals: Env = {}
        self._builtins = builtin_functions(self)
        self._warned: set[str] = set()
        self.split_branches_left = MAX_SPLIT_BRANCHES
        #: The number of rows while a function runs over columns, else None.
        self.column_rows: int | None = None
        self._load_declarations()

    # ------------------------------------------------------------ declarations

    def _load_declarations(self) -> None:
        from fuzzpy.runtime.mechanisms import mechanism_function

        for decl in self.program.decls:
            if isinstance(decl, S.LetDecl):
                exact = self.static(decl.expr)
                self.constants[decl.name] = exact
                self.globals[decl.name] = _number(exact)
            elif isinstance(decl, S.DefDecl):
                self.globals[decl.name] = self._def_value(decl)
            elif isinstance(decl, S.MechanismDecl):
                self.globals[decl.name] = mechanism_function(decl, self)

    def _def_value(self, decl: S.DefDecl) -> Value:
        if not decl.params:
            return _Deferred(lambda: self.eval(decl.body, {}))
        names = [p.name for p in decl.params]

        def call(*args: Value) -> Value:
            return self.eval(decl.body, dict(zip(names, args, strict=True)))

        return Function(decl.name, len(names), call)

    def definition(self, name: str) -> Value:
        return self._lookup(name, {}, S.Var(name))

    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warn(message)

    # ------------------------------------------------------------ static numbers

    def static(self, expr: S.Expr) -> Fraction:
        """An exact static number (`laplace[..]`, `sum[..]`, `let` constants)."""
        if isinstance(expr, S.NumLit):
            return expr.value
        if isinstance(expr, S.Var) and expr.name in self.constants:
            return self.constants[expr.name]
        if isinstance(expr, S.Unary) and expr.op == "-":
            return -self.static(expr.operand)
        if isinstance(expr, S.Binary) and expr.op in ("+", "-", "*", "/"):
            left, right = self.static(expr.left), self.static(expr.right)
            if expr.op == "/":
                if right == 0:
                    raise RuntimeFailure("FZ512", "division by zero in a static number")
                return left / right
            return ARITH[expr.op](left, right)
        if isinstance(expr, S.Ann):
            return self.static(expr.expr)
        value = self.eval(expr, {})
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return Fraction(value)
        raise RuntimeFailure("FZ513", "a static number was expected here")

    # ------------------------------------------------------------ expressions

    def eval(self, expr: S.Expr, env: Env) -> Value:
        method = getattr(self, "_eval_" + type(expr).__name__, None)
        if method is None:
            raise RuntimeFailure("FZ514", f"`{type(expr).__name__}` cannot be evaluated in a def")
        return method(expr, env)

    def _eval_NumLit(self, expr: S.NumLit, env: Env) -> Value:
        return int(expr.value) if expr.is_int else float(expr.value)

    def _eval_InfLit(self, expr: S.InfLit, env: Env) -> Value:
        return float("inf")

    def _eval_BoolLit(self, expr: S.BoolLit, env: Env) -> Value:
        return expr.value

    def _eval_StringLit(self, expr: S.StringLit, env: Env) -> Value:
        return expr.value

    def _eval_UnitLit(self, expr: S.UnitLit, env: Env) -> Value:
        return None

    def _eval_Var(self, expr: S.Var, env: Env) -> Value:
        return self._lookup(expr.name, env, expr)

    def _lookup(self, name: str, env: Env, expr: S.Expr) -> Value:
        if name in env:
            return env[name]
        if name in self.globals:
            value = self.globals[name]
            return value.force() if isinstance(value, _Deferred) else value
        if name in self._builtins:
            return self._builtins[name]
        raise RuntimeFailure("FZ514", f"`{name}` is not defined")

    def _eval_Binary(self, expr: S.Binary, env: Env) -> Value:
        op = expr.op
        if op in ("&&", "||"):
            return self._logical(op, expr, env)
        left, right = self.eval(expr.left, env), self.eval(expr.right, env)
        return binary(op, left, right)

    def _logical(self, op: str, expr: S.Binary, env: Env) -> Value:
        left = self.eval(expr.left, env)
        if isinstance(left, np.ndarray):
            right = self.eval(expr.right, env)
            combine = np.logical_and if op == "&&" else np.logical_or
            return combine(left, right)
        if (op == "&&" and not left) or (op == "||" and left):
            return bool(left)
        right = self.eval(expr.right, env)
        return right if isinstance(right, np.ndarray) else bool(right)

    def _eval_Unary(self, expr: S.Unary, env: Env) -> Value:
        value = self.eval(expr.operand, env)
        if expr.op == "-":
            return -as_vector(value)
        if isinstance(value, np.ndarray):
            return np.logical_not(value)
        return not value

    def _eval_If(self, expr: S.If, env: Env) -> Value:
        cond = self.eval(expr.cond, env)
        if isinstance(cond, np.ndarray):
            # Both branches even when every row agrees: whether a function runs
            # over columns or row by row (which the user is told) must not
            # depend on the data.
            return self._both_branches(expr, cond, env)
        return self.eval(expr.then if cond else expr.orelse, env)

    def _both_branches(self, expr: S.If, cond: np.ndarray, env: Env) -> Value:
        """Rows disagree: compute both branches for every row and pick per row."""
        self._spend_split()
        then, orelse = self.eval(expr.then, env), self.eval(expr.orelse, env)
        return select_rows(cond, then, orelse)

    def _spend_split(self) -> None:
        if self.split_branches_left <= 0:
            raise NotVectorisable
        self.split_branches_left -= 1

    def _eval_ListLit(self, expr: S.ListLit, env: Env) -> Value:
        items = [self.eval(item, env) for item in expr.items]
        n = self.column_rows
        if n is not None and any(is_per_row_number(item) and item.shape[0] == n for item in items):
            return vector_column(items, n)  # `[1, r.x, r.y]` over columns: a vector per row
        return items

    def _eval_Tuple(self, expr: S.Tuple, env: Env) -> Value:
        return tuple(self.eval(item, env) for item in expr.items)

    def _eval_Prim(self, expr: S.Prim, env: Env) -> Value:
        from fuzzpy.runtime.primitives import primitive

        return primitive(self, expr, [self.static(a) for a in expr.static_args])

    def _eval_App(self, expr: S.App, env: Env) -> Value:
        func = self.eval(expr.func, env)
        arg = self.eval(expr.arg, env)
        if not callable(func):
            raise RuntimeFailure("FZ514", "a value that is not a function is applied")
        return func(arg)

    def _eval_Lambda(self, expr: S.Lambda, env: Env) -> Value:
        def body(arg: Value) -> Value:
            return self.eval(expr.body, {**env, expr.param: arg})

        return Function("fun", 1, body)

    def _eval_Field(self, expr: S.Field, env: Env) -> Value:
        record = self.eval(expr.expr, env)
        if not isinstance(record, Record):
            raise RuntimeFailure("FZ510", f"`.{expr.name}` applied to a value that is not a record")
        return record.get(expr.name)

    def _eval_RecordLit(self, expr: S.RecordLit, env: Env) -> Value:
        return Record({name: self.eval(e, env) for name, e in expr.fields})

    def _eval_WithPair(self, expr: S.WithPair, env: Env) -> Value:
        return WithPair(self.eval(expr.left, env), self.eval(expr.right, env))

    def _eval_Cons(self, expr: S.Cons, env: Env) -> Value:
        head, tail = self.eval(expr.head, env), self.eval(expr.tail, env)
        return [head, *list(tail)]

    def _eval_CaseSum(self, expr: S.CaseSum, env: Env) -> Value:
        value = self.eval(expr.scrutinee, env)
        if isinstance(value, Inl):
            return self.eval(expr.left_body, {**env, expr.left_var: value.value})
        if isinstance(value, Inr):
            return self.eval(expr.right_body, {**env, expr.right_var: value.value})
        if isinstance(value, bool):  # `bool` is unit + unit: inl = true
            body, var = (expr.left_body, expr.left_var) if value else (expr.right_body, expr.right_var)
            return self.eval(body, {**env, var: None})
        if isinstance(value, SumColumn):
            return self._case_over_rows(expr, value, env)
        raise NotVectorisable if is_columnar(value) else RuntimeFailure(
            "FZ514", "`case ... of inl | inr` on a value that is not a sum"
        )

    def _case_over_rows(self, expr: S.CaseSum, value: SumColumn, env: Env) -> Value:
        """`case` over a column of sums: both branches over all rows, picked per row."""
        if value.left is None or value.right is None:
            raise NotVectorisable
        self._spend_split()
        left = self.eval(expr.left_body, {**env, expr.left_var: value.left})
        right = self.eval(expr.right_body, {**env, expr.right_var: value.right})
        return select_rows(value.is_left, left, right)

    def _eval_CaseList(self, expr: S.CaseList, env: Env) -> Value:
        value = self.eval(expr.scrutinee, env)
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        items = list(value)
        if not items:
            return self.eval(expr.nil_body, env)
        inner = {**env, expr.head_var: items[0], expr.tail_var: items[1:]}
        return self.eval(expr.cons_body, inner)

    def _eval_Return(self, expr: S.Return, env: Env) -> Value:
        value = self.eval(expr.expr, env)
        return Fuzzy(lambda: value)

    def _eval_Ann(self, expr: S.Ann, env: Env) -> Value:
        return self.eval(expr.expr, env)

    def _eval_Block(self, expr: S.Block, env: Env) -> Value:
        if not any(isinstance(s, S.SampleStmt) for s in expr.stmts):
            return self.eval(expr.result, self._run_statements(expr.stmts, env))

        def draw() -> Value:
            inner = self._run_statements(expr.stmts, env)
            return sample(self.eval(expr.result, inner))

        return Fuzzy(draw)

    def _run_statements(self, stmts: tuple[S.BlockStmt, ...], env: Env) -> Env:
        env = dict(env)
        for stmt in stmts:
            value = self.eval(stmt.expr, env)
            if isinstance(stmt, S.SampleStmt):
                env[stmt.name] = sample(value)
            elif isinstance(stmt, S.LetTuple):
                parts = tuple(value)
                if len(parts) != len(stmt.names):
                    raise RuntimeFailure("FZ514", "`let (...)` takes apart a tuple of another size")
                env.update(zip(stmt.names, parts, strict=True))
            else:
                env[stmt.name] = value
        return env

    def _eval_Index(self, expr: S.Index, env: Env) -> Value:
        base, index = self.eval(expr.base, env), self.eval(expr.index, env)
        return index_value(base, index)

    def _eval_Call(self, expr: S.Call, env: Env) -> Value:
        func: Value = self._lookup(expr.func, env, expr)
        for arg in expr.args:
            func = func(self.eval(arg, env))
        return func


class _Deferred:
    """A parameterless `def`, evaluated on first use."""

    def __init__(self, compute: Callable[[], Value]) -> None:
        self._compute = compute
        self._done = False
        self._value: Value = None

    def force(self) -> Value:
        if not self._done:
            self._value = self._compute()
            self._done = True
        return self._value


def sample(value: Value) -> Value:
    if not isinstance(value, Fuzzy):
        raise RuntimeFailure("FZ514", "`sample` expects a `fuzzy` value")
    return value.sample()


def _number(value: Fraction) -> int | float:
    return int(value) if value.denominator == 1 else float(value)
