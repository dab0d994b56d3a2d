"""`assume def`: a deterministic definition whose declared sensitivities are
its interface even where the rules infer more (Fuzz's trusted primitives,
Reed & Pierce, ICFP 2010: `cswp` is 1-sensitive in its pair, while the rules
give the `min`/`max` spelling 2).

"Proved" must be true, so a declaration the rules do not show is given to
z3 over the reals: with x' the neighbouring argument of every parameter and
d each type's metric (language design, section 2),

    d(f(x1, .., xn), f(x1', .., xn')) <= s1 d(x1, x1') + ... + sn d(xn, xn')

for the declared (or, where none is declared, the inferred) si; a parameter
of infinite sensitivity is the same in both runs. This is exactly what the
signature `(x1 :[s1] A1) -> ... -> B` asserts (the metric-space reading of
Fuzz's types, Reed & Pierce 2010, Sec. 3). z3 decides it for bodies of
numbers, integers, booleans, tuples, with-pairs and records built with arithmetic,
`min`, `max`, `abs`, `clip`, comparisons, `if`, `let` and calls of other
non-recursive definitions (read as their bodies): piecewise-linear
(and polynomial) real arithmetic, a decidable theory (Tarski; nlsat in z3).
The answer is one of:

* ``proved``: unsat, the declaration holds for every pair of arguments;
* ``refuted``: a counterexample (two arguments) where it fails: refused;
* ``unchecked``: a construct outside that fragment (a list, a recursive
  call, `exp`, ...) or z3 out of its resource limit: the
  declaration is an assumption, and every report that rests on it says so.

The budget is z3's deterministic resource limit (`rlimit`), never a time,
so the answer does not depend on the machine's load.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import Sens
from fuzzpy.support.records import frozen

#: z3's deterministic resource limit per declaration (a few seconds at most)
RLIMIT = 4_000_000

#: calls of other definitions read as their bodies, at most this deep
_MAX_CALL_DEPTH = 16

_UNARY_BUILTINS = frozenset({"abs"})
_BINARY_BUILTINS = frozenset({"min", "max"})


@frozen
class Assumption:
    """What an `assume def` declared beyond the rules, and how it stands."""

    definition: str
    #: each parameter whose declared bound is below the inferred one: (name, declared, inferred)
    claims: tuple[tuple[str, Sens, Sens], ...]
    status: str  # "typed" (the rules show it) | "proved" (z3) | "unchecked"
    reason: str = ""  # for "unchecked": why it could not be checked

    @property
    def checked(self) -> bool:
        return self.status != "unchecked"

    def claim_text(self) -> str:
        return ", ".join(f"{declared}-sensitive in {name}" for name, declared, _ in self.claims)

    def text(self) -> str:
        if self.status == "typed":
            return "assumed signature shown by the typing rules"
        if self.status == "proved":
            return f"assumed {self.claim_text()}: proved by z3 for every pair of arguments"
        return f"UNCHECKED ASSUMPTION: {self.claim_text()} (not proved: {self.reason})"


@frozen
class Verdict:
    status: str  # "proved" | "refuted" | "unchecked"
    detail: str = ""  # the counterexample, or why unchecked


@frozen
class _With:
    """A with-pair's two z3 values (its metric is the larger distance)."""

    left: Any
    right: Any


class Unsupported(Exception):
    """A construct outside the fragment z3 is given."""


def prove(
    decl: S.DefDecl,
    params: list[tuple[str, T.Type]],
    bounds: Mapping[str, Sens],
    result: T.Type,
    constants: Mapping[str, Fraction],
    defs: Mapping[str, S.DefDecl] | None = None,
) -> Verdict:
    """Whether the definition is ``bounds``-sensitive (the joint claim above).
    A call of another (non-recursive) definition of ``defs`` is read as its
    body, as the interpreter runs it."""
    try:
        import z3
    except ImportError:  # pragma: no cover - z3 is a dependency
        return Verdict("unchecked", "z3 is not available")
    try:
        return _prove(z3, decl, params, bounds, result, constants, defs or {})
    except Unsupported as why:
        return Verdict("unchecked", str(why))
    except z3.Z3Exception as exc:  # pragma: no cover - a sort clash z3 reports
        return Verdict("unchecked", f"z3 could not read the body ({exc})")


def _prove(
    z3: Any, decl: S.DefDecl, params: list[tuple[str, T.Type]], bounds: Mapping[str, Sens], result: T.Type,
    constants: Mapping[str, Fraction], defs: Mapping[str, S.DefDecl],
) -> Verdict:
    if decl.recursive:
        raise Unsupported("the body is recursive")
    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    budget = z3.RealVal(0)
    side: list[Any] = []
    for name, ty in params:
        bound = bounds[name]
        left[name] = _fresh(z3, ty, f"{name}", side)
        if bound.is_inf or bound.value is None:
            right[name] = left[name]  # infinitely sensitive: the same argument in both runs
            continue
        right[name] = _fresh(z3, ty, f"{name}'", side)
        finite, same = _distance(z3, ty, left[name], right[name])
        side.extend(same)  # a discrete part that differs is at distance infinity: the claim holds there
        budget = budget + _real(z3, bound.value) * finite
    evaluator = _Evaluator(z3, constants, {n: d for n, d in defs.items() if n != decl.name})
    out_left = evaluator.eval(decl.body, left)
    out_right = evaluator.eval(decl.body, right)
    finite, same = _distance(z3, result, out_left, out_right)
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT)
    solver.add(*side)
    solver.add(z3.Or(finite > budget, *[z3.Not(s) for s in same]))
    answer = solver.check()
    if answer == z3.unsat:
        return Verdict("proved")
    if answer == z3.sat:
        model = solver.model()
        shown = "; ".join(
            f"{name} = {_show(model, left[name])} and {name}' = {_show(model, right[name])}"
            for name, _ in params if right[name] is not left[name]
        )
        return Verdict("refuted", shown)
    return Verdict("unchecked", "z3 gave no answer within its resource limit")


def _fresh(z3: Any, ty: T.Type, name: str, side: list[Any]) -> Any:
    """A z3 value of type ``ty`` (numbers and integers as reals; an integer is a whole real)."""
    if isinstance(ty, T.TInt):
        return z3.ToReal(z3.Int(name))
    if isinstance(ty, T.TNum):
        return z3.Real(name)
    if isinstance(ty, T.TBool):
        return z3.Bool(name)
    if isinstance(ty, T.TTuple):
        return tuple(_fresh(z3, item, f"{name}.{i + 1}", side) for i, item in enumerate(ty.items))
    if isinstance(ty, T.TRecord):
        return {field: _fresh(z3, item, f"{name}.{field}", side) for field, item in ty.fields}
    if isinstance(ty, T.TWith):
        return _With(_fresh(z3, ty.left, f"{name}.fst", side), _fresh(z3, ty.right, f"{name}.snd", side))
    raise Unsupported(f"a parameter of type `{ty}` (z3 is given numbers, booleans, tuples and records)")


def _distance(z3: Any, ty: T.Type, a: Any, b: Any) -> tuple[Any, list[Any]]:
    """The metric of ``ty`` between a and b: its finite part (a z3 real) and
    the equalities without which it is infinite (discrete parts)."""
    if isinstance(ty, (T.TNum, T.TInt)):
        return z3.If(a >= b, a - b, b - a), []
    if isinstance(ty, T.TBool):
        return z3.RealVal(0), [a == b]
    if isinstance(ty, T.TWith):  # max(d(a), d(b)); infinite if a discrete part of either differs
        (left, same_left), (right, same_right) = (_distance(z3, ty.left, a.left, b.left),
                                                  _distance(z3, ty.right, a.right, b.right))
        return z3.If(left >= right, left, right), same_left + same_right
    if isinstance(ty, T.TTuple):
        parts = [_distance(z3, item, x, y) for item, x, y in zip(ty.items, a, b, strict=True)]
    elif isinstance(ty, T.TRecord):
        parts = [_distance(z3, item, a[field], b[field]) for field, item in ty.fields]
    else:
        raise Unsupported(f"a result of type `{ty}`")
    total = z3.RealVal(0)
    same: list[Any] = []
    for finite, equal in parts:
        total = total + finite
        same += equal
    return total, same


def _real(z3: Any, x: Fraction) -> Any:
    return z3.Q(x.numerator, x.denominator)


def _show(model: Any, value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(model, v) for v in value) + ")"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_show(model, v)}" for k, v in value.items()) + " }"
    if isinstance(value, _With):
        return f"<{_show(model, value.left)}, {_show(model, value.right)}>"
    shown = model.eval(value, model_completion=True)
    try:
        fraction = shown.as_fraction()
    except AttributeError:
        return str(shown)
    return str(fraction.numerator) if fraction.denominator == 1 else f"{fraction.numerator}/{fraction.denominator}"


class _Evaluator:
    """The body as a z3 term, read by the interpreter's meaning of each construct."""

    def __init__(self, z3: Any, constants: Mapping[str, Fraction], defs: Mapping[str, S.DefDecl]) -> None:
        self.z3 = z3
        self.constants = constants
        self.defs = defs
        self.depth = 0

    def eval(self, e: S.Expr, env: dict[str, Any]) -> Any:  # noqa: C901, PLR0911, PLR0912 - one case per construct
        z3 = self.z3
        if isinstance(e, S.NumLit):
            return _real(z3, e.value)
        if isinstance(e, S.BoolLit):
            return z3.BoolVal(e.value)
        if isinstance(e, S.Var):
            if e.name in env:
                return env[e.name]
            if e.name in self.constants:
                return _real(z3, self.constants[e.name])
            raise Unsupported(f"`{e.name}` is not a parameter, a local, a constant or a call read by z3")
        if isinstance(e, S.Ann):
            return self.eval(e.expr, env)
        if isinstance(e, S.Tuple):
            return tuple(self.eval(item, env) for item in e.items)
        if isinstance(e, S.WithPair):
            return _With(self.eval(e.left, env), self.eval(e.right, env))
        if isinstance(e, S.RecordLit):
            return {name: self.eval(item, env) for name, item in e.fields}
        if isinstance(e, S.Field):
            record = self.eval(e.expr, env)
            if not isinstance(record, dict) or e.name not in record:
                raise Unsupported(f"the field `{e.name}`")
            return record[e.name]
        if isinstance(e, S.Unary):
            operand = self.eval(e.operand, env)
            return -operand if e.op == "-" else z3.Not(operand)
        if isinstance(e, S.Binary):
            return self._binary(e, env)
        if isinstance(e, S.If):
            return _choose(z3, self.eval(e.cond, env), self.eval(e.then, env), self.eval(e.orelse, env))
        if isinstance(e, S.Block):
            return self._block(e, env)
        if isinstance(e, S.App):
            return self._app(e, env)
        raise Unsupported(f"the construct at {e.span.line}:{e.span.col} (z3 is given arithmetic, `min`, `max`, "
                          "`abs`, `clip`, comparisons, `if`, `let`, tuples and records)")

    def _binary(self, e: S.Binary, env: dict[str, Any]) -> Any:
        z3 = self.z3
        a, b = self.eval(e.left, env), self.eval(e.right, env)
        op = e.op
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            divisor = self._static(e.right)
            if divisor is None or divisor == 0:
                raise Unsupported("a division by a number that is not a non-zero constant")
            return a / _real(z3, divisor)
        if op in ("==", "!="):
            equal = _equal(z3, a, b)
            return equal if op == "==" else z3.Not(equal)
        comparisons = {"<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
                       "&&": lambda: z3.And(a, b), "||": lambda: z3.Or(a, b)}
        if op in comparisons:
            return comparisons[op]()
        raise Unsupported(f"the operator `{op}`")

    def _block(self, e: S.Block, env: dict[str, Any]) -> Any:
        local = dict(env)
        for stmt in e.stmts:
            if isinstance(stmt, S.LetStmt):
                local[stmt.name] = self.eval(stmt.expr, local)
            elif isinstance(stmt, S.LetTuple):
                value = self.eval(stmt.expr, local)
                if not isinstance(value, tuple) or len(value) != len(stmt.names):
                    raise Unsupported("a `let (..)` of a value that is not a tuple")
                local.update(zip(stmt.names, value, strict=True))
            else:
                raise Unsupported("a `sample` (an `assume def` is deterministic)")
        return self.eval(e.result, local)

    def _app(self, e: S.App, env: dict[str, Any]) -> Any:
        z3 = self.z3
        func: S.Expr = e.func
        args: list[S.Expr] = [e.arg]
        while isinstance(func, S.App):
            args = [func.arg, *args]
            func = func.func
        if isinstance(func, S.Prim) and func.name == "clip" and len(args) == 1 and len(func.static_args) == 2:
            lo, hi = (self._static(a) for a in func.static_args)
            if lo is None or hi is None:
                raise Unsupported("`clip` bounds that are not constants")
            x = self.eval(args[0], env)
            return z3.If(x < _real(z3, lo), _real(z3, lo), z3.If(x > _real(z3, hi), _real(z3, hi), x))
        if isinstance(func, S.Var) and func.name not in env and func.name in self.defs:
            return self._call(self.defs[func.name], [self.eval(a, env) for a in args])
        if isinstance(func, S.Var) and func.name not in env:
            values = [self.eval(a, env) for a in args]
            if func.name in ("fst", "snd") and len(values) == 1:
                return _component(values[0], func.name == "fst")
            if func.name in _UNARY_BUILTINS and len(values) == 1:
                (x,) = values
                return z3.If(x >= 0, x, -x)
            if func.name in _BINARY_BUILTINS and len(values) == 2:
                x, y = values
                return z3.If(x <= y, x, y) if func.name == "min" else z3.If(x >= y, x, y)
            raise Unsupported(f"the body calls `{func.name}`, which z3 is not given (only `min`, `max`, `abs`, `clip`)")
        raise Unsupported(f"the application at {e.span.line}:{e.span.col}")

    def _call(self, callee: S.DefDecl, values: list[Any]) -> Any:
        """A call of another definition with all its arguments: its body with
        the parameters bound to them (the interpreter's call by value; a
        parameter's name hides a constant of that name, as in `check`)."""
        if callee.recursive or len(values) != len(callee.params) or self.depth >= _MAX_CALL_DEPTH:
            raise Unsupported(f"the call of `{callee.name}` (recursive, partial, or nested too deeply)")
        self.depth += 1
        try:
            return self.eval(callee.body, {p.name: v for p, v in zip(callee.params, values, strict=True)})
        finally:
            self.depth -= 1

    def _static(self, e: S.Expr) -> Fraction | None:
        if isinstance(e, S.NumLit):
            return e.value
        if isinstance(e, S.Var):
            return self.constants.get(e.name)
        if isinstance(e, S.Unary) and e.op == "-":
            inner = self._static(e.operand)
            return None if inner is None else -inner
        if isinstance(e, S.Binary) and e.op in "+-*/":
            a, b = self._static(e.left), self._static(e.right)
            if a is None or b is None or (e.op == "/" and b == 0):
                return None
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else a}[e.op]
        return None


def _component(pair: Any, first: bool) -> Any:
    if isinstance(pair, _With):
        return pair.left if first else pair.right
    if isinstance(pair, tuple) and len(pair) == 2:
        return pair[0] if first else pair[1]
    raise Unsupported("`fst`/`snd` of a value that is not a pair")


def _choose(z3: Any, cond: Any, a: Any, b: Any) -> Any:
    if isinstance(a, _With) and isinstance(b, _With):
        return _With(_choose(z3, cond, a.left, b.left), _choose(z3, cond, a.right, b.right))
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(_choose(z3, cond, x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return {k: _choose(z3, cond, a[k], b[k]) for k in a}
    if isinstance(a, (tuple, dict, _With)) or isinstance(b, (tuple, dict, _With)):
        raise Unsupported("branches of different shapes")
    return z3.If(cond, a, b)


def _equal(z3: Any, a: Any, b: Any) -> Any:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return z3.And(*[_equal(z3, x, y) for x, y in zip(a, b, strict=True)])
    if isinstance(a, dict) and isinstance(b, dict):
        return z3.And(*[_equal(z3, a[k], b[k]) for k in a])
    return a == b
