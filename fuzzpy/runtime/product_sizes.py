"""Before the charge: can a mechanism's exact arithmetic outgrow its bound?

`lazy_reals` keeps every value computed from draws as an expanded polynomial
(or a quotient of two) and refuses (FZ519) a product of two expanded forms
with more than `MAX_PRODUCT_PAIRS` pairs of monomials. How many monomials a
value has depends on the rows (a coefficient `q[0]` that is 0 drops its
monomials) and on the path the noise takes, so that refusal, if it could
happen at run time, would come after the charge and on some neighbours only
(issue 29: `w = a + q[0] b + c` squared eight times ran on a count of 0 and
failed, charged, on a count of 1).

This module decides it from public information only (the mechanism's text,
the program's constants, its `requires`), the same on every dataset: an
abstract run of the body over upper bounds of each value's expanded form

* monomials of the numerator and of the denominator (the product rule
  |ab| <= |a| |b|, the sum rule |a + b| <= |a| + |b|), and never more than
  the monomials of degree <= d in k variables, C(k + d, d), d a bound on the
  degree and k on the number of draws the value reads (each draw site counts
  as many draws as the loops around it may run: `w = w * w` eight times over
  one draw keeps 257 monomials, not 2^256);
* both arms of every `if`, and loops run until nothing grows, for at most
  their trips when the guard is a counter `i < E` with E bounded by a
  number, a `requires` or a constant (else what still grows is taken as
  unbounded).

A product the abstract run cannot show to stay within the bound is refused
before the charge. Every bound is an upper bound of the runtime's sizes (the
same operations on the same shapes), so what passes never meets the runtime
refusal; what is refused is refused on every dataset alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction

from fuzzpy.language import syntax as S
from fuzzpy.runtime.lazy_reals import MAX_PRODUCT_PAIRS
from fuzzpy.support.records import frozen

#: sizes are saturated here: anything above the bound is "too large"
BIG = MAX_PRODUCT_PAIRS + 1
#: abstract passes over a loop body before what still grows is taken as unbounded
MAX_PASSES = 4096
_UNKNOWN_TRIPS_PASSES = 64


def _cap(n: int) -> int:
    return min(n, BIG)


@frozen
class Size:
    """Upper bounds of one value's expanded form (a vector: of any entry's)."""

    num: int
    den: int
    den_one: bool  # the denominator is exactly 1 (an affine or polynomial value)
    num_degree: int
    den_degree: int
    sites: frozenset[int]  # the draw sites (ids of `Noise` nodes) it may read

    @property
    def noisy(self) -> bool:
        return bool(self.sites)


CONST = Size(1, 1, True, 0, 0, frozenset())


def _join(a: Size, b: Size) -> Size:
    return Size(max(a.num, b.num), max(a.den, b.den), a.den_one and b.den_one,
                max(a.num_degree, b.num_degree), max(a.den_degree, b.den_degree), a.sites | b.sites)


@frozen
class Oversized:
    """A product that may exceed the bound: where, and the two sizes."""

    span: object
    left: int
    right: int


class _TooLarge(Exception):
    def __init__(self, found: Oversized) -> None:
        self.found = found


class _Sizer:
    def __init__(self, decl: S.MechanismDecl, constants: Mapping[str, Fraction]) -> None:
        self.decl = decl
        self.constants = constants
        self.executions: dict[int, int] = {}  # draw site -> how many draws it may make in a run
        self.trips: dict[int, int | None] = {}  # loop -> bound on its trips (None: unknown)
        self.span: object = decl.span

    # -- static facts: loop trips and draws per site

    def count_sites(self, stmts: tuple[S.Stmt, ...], times: int) -> None:
        for k, stmt in enumerate(stmts):
            inner = times
            if isinstance(stmt, S.While):
                trips = self._trips(stmt, stmts[:k])
                self.trips[id(stmt)] = trips
                inner = BIG if trips is None else _cap(times * trips)
                self._count_exprs(stmt.cond, _cap(times * ((trips or BIG) + 1)))  # the failing test too
                self.count_sites(stmt.body, inner)
            elif isinstance(stmt, S.IfStmt):
                self._count_exprs(stmt.cond, times)
                self.count_sites(stmt.then, times)
                self.count_sites(stmt.orelse, times)
            else:
                for part in (getattr(stmt, "expr", None), getattr(stmt, "index", None)):
                    if part is not None:
                        self._count_exprs(part, times)

    def _count_exprs(self, expr: S.Expr, times: int) -> None:
        for node in S.subtrees(expr):
            if isinstance(node, S.Noise):
                self.executions[id(node)] = max(self.executions.get(id(node), 0), times)

    def _trips(self, loop: S.While, before: tuple[S.Stmt, ...]) -> int | None:
        """max(0, E - i0) for a counter loop `i < E` (verifier.kernel.gaussian.counter_loop)
        whose E and i0 (the counter's last assignment before the loop, in its block) are known."""
        from fuzzpy.verifier.kernel.gaussian import counter_loop
        from fuzzpy.verifier.kernel.inputs import Reject

        try:
            counter, bound = counter_loop(loop)
        except Reject:
            return None
        first = None
        for s in reversed(before):
            if isinstance(s, (S.VarDecl, S.Assign)) and s.name == counter:
                first = self._known(s.expr) if getattr(s, "index", None) is None else None
                break
            if any(isinstance(n, (S.VarDecl, S.Assign)) and n.name == counter for n in S.subtrees(s)):
                break  # assigned in a branch or a loop in between: not known

        top = self._upper(bound)
        if first is None or top is None:
            return None
        return max(0, math.ceil(top - first))

    def _known(self, expr: S.Expr) -> Fraction | None:
        if isinstance(expr, S.NumLit):
            return Fraction(expr.value)
        if isinstance(expr, S.Var) and expr.name in self.constants and expr.name not in self._params():
            return self.constants[expr.name]
        if isinstance(expr, S.Unary) and expr.op == "-":
            inner = self._known(expr.operand)
            return None if inner is None else -inner
        return None

    def _params(self) -> set[str]:
        return {p.name for p in self.decl.params}

    def _upper(self, expr: S.Expr) -> Fraction | None:
        """A number E is at most: itself when known, else a `requires E <= c` (or `< c`)."""
        known = self._known(expr)
        if known is not None:
            return known
        for r in self.decl.requires:
            if isinstance(r, S.Binary) and r.op in ("<=", "<") and r.left == expr:
                c = self._known(r.right)
                if c is not None:
                    return c
        return None

    # -- the abstract run

    def block(self, stmts: tuple[S.Stmt, ...], env: dict[str, Size]) -> dict[str, Size]:
        for stmt in stmts:
            env = self.stmt(stmt, env)
        return env

    def stmt(self, stmt: S.Stmt, env: dict[str, Size]) -> dict[str, Size]:
        if isinstance(stmt, S.VarDecl):
            return {**env, stmt.name: self.expr(stmt.expr, env)}
        if isinstance(stmt, S.Assign):
            value = self.expr(stmt.expr, env)
            if stmt.index is not None:
                self.expr(stmt.index, env)
                value = _join(env.get(stmt.name, CONST), value)
            return {**env, stmt.name: value}
        if isinstance(stmt, S.IfStmt):
            self.expr(stmt.cond, env)
            return _join_envs(self.block(stmt.then, env), self.block(stmt.orelse, env))
        if isinstance(stmt, S.While):
            return self.loop(stmt, env)
        if isinstance(stmt, (S.ReturnStmt, S.Output)):
            self.expr(stmt.expr, env)
        return env

    def loop(self, loop: S.While, env: dict[str, Size]) -> dict[str, Size]:
        """The join of the states after 0, 1, ... trips: at most the trip bound, else
        until nothing grows (what still grows after a number of passes is saturated)."""
        trips = self.trips.get(id(loop))
        passes = MAX_PASSES if trips is not None and trips <= MAX_PASSES else _UNKNOWN_TRIPS_PASSES
        done = 0
        while True:
            self.expr(loop.cond, env)
            if trips is not None and done >= trips:
                return env
            after = _join_envs(env, self.block(loop.body, env))
            done += 1
            if after == env:
                return env
            if done >= passes:
                after = {name: _widen(env.get(name), size) for name, size in after.items()}
                if after == env:
                    return env
            env = after

    def expr(self, expr: S.Expr, env: dict[str, Size]) -> Size:
        self.span = getattr(expr, "span", self.span)
        if isinstance(expr, S.Var):
            return env.get(expr.name, CONST)
        if isinstance(expr, S.Noise):
            scale = self.expr(expr.scale, env)
            unit = Size(1, 1, True, 1, 0, frozenset({id(expr)}))
            self.span = expr.span
            return self.multiply(scale, unit)
        if isinstance(expr, S.Binary):
            return self._binary(expr, env)
        if isinstance(expr, S.Unary):
            return self.expr(expr.operand, env) if expr.op == "-" else _const_of(self.expr(expr.operand, env))
        if isinstance(expr, S.Index):
            self.expr(expr.index, env)
            return self.expr(expr.base, env)
        if isinstance(expr, S.If):
            self.expr(expr.cond, env)
            return _join(self.expr(expr.then, env), self.expr(expr.orelse, env))
        if isinstance(expr, (S.ListLit, S.Tuple)):
            sizes = [self.expr(e, env) for e in expr.items]
            out = CONST
            for size in sizes:
                out = _join(out, size)
            return out
        if isinstance(expr, S.Call):
            args = [self.expr(a, env) for a in expr.args]
            self.span = expr.span
            if expr.func in ("max", "min") and len(args) == 2:
                self.add(args[0], args[1])  # the comparison
                return _join(args[0], args[1])
            if expr.func == "abs" and len(args) == 1:
                return args[0]  # a sign, then a negation: no product
            return CONST  # len, or a definition called on released (exact) arguments
        return CONST

    def _binary(self, expr: S.Binary, env: dict[str, Size]) -> Size:
        left, right = self.expr(expr.left, env), self.expr(expr.right, env)
        self.span = expr.span
        if expr.op in ("+", "-"):
            return self.add(left, right)
        if expr.op == "*":
            return self.multiply(left, right)
        if expr.op == "/":
            return self.divide(left, right)
        if expr.op in ("<", "<=", ">", ">=", "==", "!="):
            self.add(left, right)  # the difference decides it
        return CONST

    # -- the runtime's operations on sizes (lazy_reals.add / multiply / divide)

    def _pairs(self, a: int, b: int) -> None:
        """lazy_reals._mul_terms refuses a * b pairs above the bound (a factor of one monomial never)."""
        if min(a, b) > 1 and a * b > MAX_PRODUCT_PAIRS:
            raise _TooLarge(Oversized(self.span, a, b))

    def _bounded(self, terms: int, degree: int, sites: frozenset[int]) -> int:
        draws = _cap(sum(self.executions.get(s, BIG) for s in sites))
        return min(_cap(terms), _monomials(draws, degree))

    def add(self, a: Size, b: Size) -> Size:
        if not a.noisy and not b.noisy:
            return CONST
        sites = a.sites | b.sites
        if a.den_one and b.den_one:  # the same denominator: no product
            degree = max(a.num_degree, b.num_degree)
            return Size(self._bounded(a.num + b.num, degree, sites), 1, True, degree, 0, sites)
        self._pairs(a.num, b.den)
        self._pairs(b.num, a.den)
        self._pairs(a.den, b.den)
        num_degree = max(a.num_degree + b.den_degree, b.num_degree + a.den_degree)
        den_degree = a.den_degree + b.den_degree
        return Size(self._bounded(a.num * b.den + b.num * a.den, num_degree, sites),
                    self._bounded(a.den * b.den, den_degree, sites), False, num_degree, den_degree, sites)

    def multiply(self, a: Size, b: Size) -> Size:
        if not a.noisy and not b.noisy:
            return CONST
        self._pairs(a.num, b.num)
        self._pairs(a.den, b.den)
        sites = a.sites | b.sites
        num_degree, den_degree = a.num_degree + b.num_degree, a.den_degree + b.den_degree
        return Size(self._bounded(a.num * b.num, num_degree, sites), self._bounded(a.den * b.den, den_degree, sites),
                    a.den_one and b.den_one, num_degree, den_degree, sites)

    def divide(self, a: Size, b: Size) -> Size:
        if not b.noisy:
            return self.multiply(a, CONST)
        self._pairs(a.num, b.den)
        self._pairs(a.den, b.num)
        sites = a.sites | b.sites
        num_degree, den_degree = a.num_degree + b.den_degree, a.den_degree + b.num_degree
        return Size(self._bounded(a.num * b.den, num_degree, sites), self._bounded(a.den * b.num, den_degree, sites),
                    False, num_degree, den_degree, sites)


def _const_of(size: Size) -> Size:
    return CONST


def _join_envs(a: dict[str, Size], b: dict[str, Size]) -> dict[str, Size]:
    out = dict(a)
    for name, size in b.items():
        out[name] = _join(out[name], size) if name in out else size
    return out


def _widen(before: Size | None, after: Size) -> Size:
    """What grew in a pass is taken as unbounded (saturated)."""
    if before is None or before == after:
        return after
    return replace(after,
                   num=BIG if after.num > before.num else after.num,
                   den=BIG if after.den > before.den else after.den,
                   num_degree=BIG if after.num_degree > before.num_degree else after.num_degree,
                   den_degree=BIG if after.den_degree > before.den_degree else after.den_degree)


def _monomials(draws: int, degree: int) -> int:
    """C(draws + degree, degree), saturated at BIG: the monomials of degree <= d in k variables."""
    small, large = sorted((draws, _cap(degree)))
    out = 1
    for i in range(1, small + 1):
        out = out * (large + i) // i  # C(large + i, i), exact at each step
        if out >= BIG:
            return BIG
    return out


def oversized_product(decl: S.MechanismDecl, constants: Mapping[str, Fraction]) -> Oversized | None:
    """The first product of the body that may exceed `MAX_PRODUCT_PAIRS` pairs of
    monomials on some input (None: none can, on any input)."""
    sizer = _Sizer(decl, constants)
    sizer.count_sites(decl.body, 1)
    env = {p.name: CONST for p in decl.params}
    try:
        for condition in decl.requires:
            sizer.expr(condition, env)
        sizer.block(decl.body, env)
    except _TooLarge as stop:
        return stop.found
    return None
