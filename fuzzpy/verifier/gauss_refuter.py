"""Counterexamples to `privacy (eps, delta)` claims of mechanisms with Gaussian draws.

Not trusted for proofs, but a refutation must be TRUE, so every number is a
certified bound. Each run is executed on concrete inputs with the draws
symbolic (linear forms over independent N(0, sigma_i^2) draws); each
comparison of a linear form forks the path. A path's probability is
computed in closed form when its constraints are all on one direction
a . eta (then a . eta ~ N(0, sum a_i^2 sigma_i^2) and the path is an
interval of it): Phi(hi / s) - Phi(lo / s), evaluated by mpmath to 50 digits.
An output event S is a released value (discrete coordinates) with, for
each continuous coordinate, an interval around its value at a point of a
path of run 1 (half-widths 1/2 and 1/10); a path's part of S adds the
interval's two constraints, so a continuous release on the path's direction
stays in closed form. For the inputs, P[S] is the sum over the paths in
closed form (a lower bound); for the neighbour, that sum plus the whole mass
of every path whose part is not in closed form (an upper bound). A claim is
refuted at S only when

    P[S | inputs] > e^eps * P[S | neighbour] + delta

holds with both sides moved by 10^-30 the safe way (the evaluation's error is
far below). Equalities of linear forms have probability 0 (a path through
one is dropped from both sides' computed mass, and so counted in the
neighbour's upper bound). Laplace draws beside Gaussian ones and private
scalars: not searched (the verdict stays "unknown", with the reason); a
mechanism with Laplace draws only goes to `refuter.py`, which checks the same
inequality with exact probabilities.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import mpmath

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    BoolLit,
    Call,
    Expr,
    If,
    IfStmt,
    Index,
    MechanismDecl,
    Noise,
    NumLit,
    Output,
    ReturnStmt,
    Stmt,
    TyVec,
    Unary,
    Var,
    VarDecl,
    While,
)
from fuzzpy.verifier.kernel.inputs import neighbours
from fuzzpy.verifier.refuter import Counterexample
from fuzzpy.verifier.text import show

__all__ = ["refute_gaussian"]

#: a linear form over the draws: (coefficients by draw number, constant)
Lin = tuple[tuple[Fraction, ...], Fraction]
Value = Fraction | bool | Lin

MAX_PATHS = 4000
MAX_TRIPS = 64
_MARGIN = mpmath.mpf(10) ** -30


class _Stop(Exception):
    """This input cannot be evaluated (the reason)."""


class _State:
    def __init__(self, store: dict[str, Value]) -> None:
        self.store = store
        self.sigmas: list[Fraction] = []
        self.constraints: list[tuple[Lin, bool]] = []  # (form, True: form > 0; False: form <= 0)
        self.released: list[Value] = []
        self.done = False

    def fork(self) -> _State:
        other = _State(dict(self.store))
        other.sigmas = list(self.sigmas)
        other.constraints = list(self.constraints)
        other.released = list(self.released)
        other.done = self.done
        return other


def _lin(v: Value, n: int) -> Lin:
    if isinstance(v, tuple):
        coeffs = v[0] + (Fraction(0),) * (n - len(v[0]))
        return coeffs, v[1]
    if isinstance(v, bool):
        raise _Stop("a boolean in arithmetic")
    return (Fraction(0),) * n, v


def _norm(v: Lin) -> Value:
    return v[1] if all(c == 0 for c in v[0]) else v


class _Exec:
    def __init__(self, vectors: dict[str, list[Fraction]]) -> None:
        self.vectors = vectors

    def block(self, body: tuple[Stmt, ...], states: list[_State]) -> list[_State]:
        for stmt in body:
            after: list[_State] = []
            for st in states:
                after += [st] if st.done else self.stmt(stmt, st)
            states = after
            if len(states) > MAX_PATHS:
                raise _Stop("too many paths")
        return states

    def stmt(self, s: Stmt, st: _State) -> list[_State]:
        if isinstance(s, (VarDecl, Assign)):
            if isinstance(s, Assign) and s.index is not None:
                raise _Stop("assignment to a vector entry")
            out = []
            for st2, v in self.ev(s.expr, st):
                st2.store[s.name] = v
                out.append(st2)
            return out
        if isinstance(s, (Output, ReturnStmt)):
            out = []
            for st2, v in self.ev(s.expr, st):
                st2.released.append(v)
                st2.done = isinstance(s, ReturnStmt)
                out.append(st2)
            return out
        if isinstance(s, IfStmt):
            out = []
            for st2, c in self.ev(s.cond, st):
                out += self.block(s.then if c else s.orelse, [st2])
            return out
        if isinstance(s, While):
            live, finished = [st], []
            for _ in range(MAX_TRIPS):
                nxt = []
                for st2 in live:
                    for st3, c in self.ev(s.cond, st2):
                        if c:
                            nxt += self.block(s.body, [st3])
                        else:
                            finished.append(st3)
                live = [x for x in nxt if not x.done]
                finished += [x for x in nxt if x.done]
                if not live:
                    return finished
            raise _Stop("a loop runs too long")
        raise _Stop(f"the statement at line {s.span.line}")

    def ev(self, e: Expr, st: _State) -> Iterator[tuple[_State, Value]]:
        if isinstance(e, NumLit):
            yield st, Fraction(e.text)
        elif isinstance(e, BoolLit):
            yield st, e.value
        elif isinstance(e, Var):
            if e.name not in st.store:
                raise _Stop(f"`{e.name}` unknown")
            yield st, st.store[e.name]
        elif isinstance(e, Noise):
            if e.kind != "gauss":
                raise _Stop("a Laplace draw beside the Gaussian ones (this refuter integrates Gaussian draws only)")
            for st2, scale in self.ev(e.scale, st):
                if not isinstance(scale, Fraction) or scale <= 0:
                    raise _Stop("a Gaussian scale that is not a positive number")
                st2.sigmas.append(scale)
                n = len(st2.sigmas)
                yield st2, (tuple(Fraction(int(k == n - 1)) for k in range(n)), Fraction(0))
        elif isinstance(e, Index):
            if not (isinstance(e.base, Var) and e.base.name in self.vectors):
                raise _Stop("indexing")
            for st2, k in self.ev(e.index, st):
                if not isinstance(k, Fraction) or k.denominator != 1:
                    raise _Stop("a symbolic index")
                vec = self.vectors[e.base.name]
                yield st2, vec[int(k)] if 0 <= k < len(vec) else Fraction(0)
        elif isinstance(e, Call) and e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], Var) \
                and e.args[0].name in self.vectors:
            yield st, Fraction(len(self.vectors[e.args[0].name]))
        elif isinstance(e, Unary):
            for st2, v in self.ev(e.operand, st):
                if e.op == "-":
                    lin = _lin(v, len(st2.sigmas))
                    yield st2, _norm((tuple(-c for c in lin[0]), -lin[1]))
                else:
                    yield st2, not v
        elif isinstance(e, If):
            for st2, c in self.ev(e.cond, st):
                yield from self.ev(e.then if c else e.orelse, st2)
        elif isinstance(e, Binary):
            yield from self.binary(e, st)
        else:
            raise _Stop(f"`{show(e)}` at line {e.span.line}, which this refuter does not evaluate")

    def binary(self, e: Binary, st: _State) -> Iterator[tuple[_State, Value]]:
        if e.op in ("&&", "||", "==>"):
            for st2, a in self.ev(e.left, st):
                if (e.op == "&&" and not a) or (e.op == "||" and a) or (e.op == "==>" and not a):
                    yield st2, e.op != "&&"
                else:
                    yield from self.ev(e.right, st2)
            return
        for st2, a in self.ev(e.left, st):
            for st3, b in self.ev(e.right, st2):
                yield from self.combine(e.op, a, b, st3)

    def combine(self, op: str, a: Value, b: Value, st: _State) -> Iterator[tuple[_State, Value]]:
        if isinstance(a, bool) or isinstance(b, bool):
            if op in ("==", "!="):
                yield st, (a == b) == (op == "==")
                return
            raise _Stop("arithmetic on booleans")
        n = len(st.sigmas)
        la, lb = _lin(a, n), _lin(b, n)
        if op in ("+", "-"):
            sign = 1 if op == "+" else -1
            yield st, _norm((tuple(x + sign * y for x, y in zip(la[0], lb[0], strict=True)), la[1] + sign * lb[1]))
            return
        if op in ("*", "/"):
            if isinstance(b, Fraction):
                k = b if op == "*" else (1 / b if b != 0 else None)
                if k is None:
                    raise _Stop("division by 0")
                yield st, _norm((tuple(x * k for x in la[0]), la[1] * k))
                return
            if op == "*" and isinstance(a, Fraction):
                yield st, _norm((tuple(a * y for y in lb[0]), a * lb[1]))
                return
            raise _Stop("a product of draws")
        diff = (tuple(x - y for x, y in zip(la[0], lb[0], strict=True)), la[1] - lb[1])
        if all(c == 0 for c in diff[0]):
            yield st, _holds(op, diff[1])
            return
        if op in ("==", "!="):  # equal with probability 0
            yield st, op == "!="
            return
        # d > 0 / d >= 0 (same mass), d < 0 / d <= 0: fork on the sign of d
        positive = op in (">", ">=")
        up, down = st, st.fork()
        up.constraints.append((diff, True))
        down.constraints.append((diff, False))
        yield up, positive
        yield down, not positive


def _holds(op: str, d: Fraction) -> bool:
    return {"<": d < 0, "<=": d <= 0, ">": d > 0, ">=": d >= 0, "==": d == 0, "!=": d != 0}[op]


def _mass(st: _State) -> mpmath.mpf | None:
    """The path's probability in closed form, or None (constraints on several directions)."""
    if not st.constraints:
        return mpmath.mpf(1)
    n = len(st.sigmas)
    base = None
    lo, hi = -mpmath.inf, mpmath.inf
    for (coeffs, const), positive in st.constraints:
        coeffs = coeffs + (Fraction(0),) * (n - len(coeffs))
        if base is None:
            base = coeffs
        pivot = next(k for k, c in enumerate(base) if c != 0)
        ratio = coeffs[pivot] / base[pivot]
        if ratio == 0 or any(c != ratio * b for c, b in zip(coeffs, base, strict=True)):
            return None
        # coeffs . eta + const = ratio * Z + const, Z = base . eta; > 0 (positive) or <= 0
        cut = mpmath.mpf(-const.numerator) / const.denominator / (mpmath.mpf(ratio.numerator) / ratio.denominator)
        above = positive == (ratio > 0)  # Z > cut, else Z < cut
        lo, hi = (max(lo, cut), hi) if above else (lo, min(hi, cut))
    assert base is not None
    s2 = sum((c * c * sg * sg for c, sg in zip(base, st.sigmas, strict=True)), Fraction(0))
    s = mpmath.sqrt(mpmath.mpf(s2.numerator) / s2.denominator)
    if hi <= lo:
        return mpmath.mpf(0)
    return mpmath.ncdf(hi / s) - mpmath.ncdf(lo / s)


def _paths(decl: MechanismDecl, scalars: dict[str, Fraction], vectors: dict[str, list[Fraction]]) -> list[_State]:
    return _Exec(vectors).block(decl.body, [_State(dict(scalars))])


#: an output event: per released coordinate a value (discrete) or None, and a
#: closed interval (continuous coordinates) or None
Event = tuple[tuple[object, ...], tuple[tuple[Fraction, Fraction] | None, ...]]


def _event_mass(st: _State, event: Event) -> mpmath.mpf | None:
    """P[this path, and its release in the event], or None (not in closed form)."""
    values, boxes = event
    if len(st.released) != len(values):
        return mpmath.mpf(0)
    extra: list[tuple[Lin, bool]] = []
    for v, want, box in zip(st.released, values, boxes, strict=True):
        if box is None:
            if isinstance(v, tuple):  # a continuous value hits one point with probability 0
                return mpmath.mpf(0)
            if v != want:
                return mpmath.mpf(0)
        elif not isinstance(v, tuple):
            if not (isinstance(v, Fraction) and box[0] <= v <= box[1]):
                return mpmath.mpf(0)
        else:
            coeffs, c = v
            extra += [((coeffs, c - box[0]), True), ((coeffs, c - box[1]), False)]  # lo < v <= hi
    trial = st.fork()
    trial.constraints += extra
    return _mass(trial)


def _events(st: _State) -> list[Event]:
    """Events around what a path of run 1 releases: its discrete values, and
    for continuous ones intervals of half-width 1/2 and 1/10 around their
    value at a point of the path's region (on the path's one direction)."""
    if not any(isinstance(v, tuple) for v in st.released):
        return [(tuple(st.released), (None,) * len(st.released))]
    forms = [f for f, _ in st.constraints] + [v for v in st.released if isinstance(v, tuple)]
    n = len(st.sigmas)
    base = next(f[0] for f in forms)
    base = base + (Fraction(0),) * (n - len(base))
    pivot = next((k for k, c in enumerate(base) if c != 0), None)
    if pivot is None:
        return []
    low: Fraction | None = None
    high: Fraction | None = None
    for (coeffs, const), positive in st.constraints:
        ratio = (coeffs + (Fraction(0),) * (n - len(coeffs)))[pivot] / base[pivot]
        if ratio == 0:
            return []
        cut = -const / ratio
        if positive == (ratio > 0):
            low = cut if low is None else max(low, cut)
        else:
            high = cut if high is None else min(high, cut)
    s2 = sum((c * c * sg * sg for c, sg in zip(base, st.sigmas, strict=True)), Fraction(0))
    sd = Fraction(float(s2) ** 0.5).limit_denominator(1000) or Fraction(1)
    z = (low + high) / 2 if low is not None and high is not None else \
        low + sd if low is not None else high - sd if high is not None else Fraction(0)
    found: list[Event] = []
    for width in (Fraction(1, 2), Fraction(1, 10)):
        values: list[object] = []
        boxes: list[tuple[Fraction, Fraction] | None] = []
        for v in st.released:
            if isinstance(v, tuple):
                coeffs = v[0] + (Fraction(0),) * (n - len(v[0]))
                k = coeffs[pivot] / base[pivot]
                if any(c != k * b for c, b in zip(coeffs, base, strict=True)):
                    return found
                centre = k * z + v[1]
                values.append(None)
                boxes.append((centre - width, centre + width))
            else:
                values.append(v)
                boxes.append(None)
        found.append((tuple(values), tuple(boxes)))
    return found


def _probability(states: list[_State], event: Event, upper: bool) -> mpmath.mpf:
    """P[release in event]: a lower bound (paths not in closed form left out)
    or an upper bound (each such path counted whole, or all the mass not in
    closed form when the path's own mass is not either)."""
    total = mpmath.mpf(0)
    unknown = mpmath.mpf(1)
    for st in states:
        whole = _mass(st)
        if whole is not None:
            unknown -= whole
        part = _event_mass(st, event)
        if part is not None:
            total += part
        elif upper and whole is not None:
            total += whole
    return total + (max(mpmath.mpf(0), unknown) if upper else 0)


def _shown(event: Event) -> tuple[object, ...]:
    return tuple(v if box is None else f"in [{box[0]}, {box[1]}]"
                 for v, box in zip(event[0], event[1], strict=True))


def _number(e: Expr | None, env: dict[str, Fraction]) -> Fraction | None:
    from fuzzpy.verifier.gaussian import _value  # the same reading of numeric claims

    return _value(e, env)


def _candidates(decl: MechanismDecl, constants: dict[str, Fraction]) -> Iterator[tuple[dict, dict, dict]]:
    kinds = neighbours(decl)
    vecs = [p.name for p in decl.params if isinstance(p.type, TyVec)]
    scalars = [p.name for p in decl.params if not isinstance(p.type, TyVec)]
    if any(kinds[s] == "private" for s in scalars):
        raise _Stop("a private scalar parameter")
    if len(vecs) > 1:
        raise _Stop("several vector parameters")
    values = [Fraction(1), Fraction(2), Fraction(1, 2), Fraction(4), Fraction(8)]
    for picked in itertools.product(values, repeat=len(scalars)):
        env = {**constants, **dict(zip(scalars, picked, strict=True))}
        if not _requires_hold(decl, env, None, None):
            continue
        if not vecs:
            yield env, {}, {}
            continue
        q = vecs[0]
        norm = kinds[q]
        for length in (1, 2, 3):
            for pattern in itertools.product((0, 1), repeat=length):
                base = [Fraction(x) for x in pattern]
                moves = itertools.product((-1, 0, 1), repeat=length) if norm == "vec[inf]" else \
                    [tuple(d if k == j else 0 for k in range(length)) for j in range(length) for d in (-1, 1)]
                for move in moves:
                    if not any(move):
                        continue
                    other = [b + d for b, d in zip(base, move, strict=True)]
                    if _requires_hold(decl, env, base, other, q):
                        yield env, {q: base}, {q: other}


def _requires_hold(decl: MechanismDecl, env: dict[str, Fraction], base: list[Fraction] | None,
                   other: list[Fraction] | None, q: str = "") -> bool:
    for r in decl.requires:
        value = _check(r, env, base, other, q)
        if value is False or (value is not True and base is not None):  # no vectors yet: a pre-filter
            return False
    return True


def _check(e: Expr, env: dict[str, Fraction], base: list[Fraction] | None, other: list[Fraction] | None,
           q: str) -> object:
    """A `requires` clause on concrete inputs (None: cannot tell, treated as not holding)."""
    from fuzzpy.language.syntax import Dist, Forall

    def go(x: Expr, bound: dict[str, Fraction]) -> Any:
        if isinstance(x, NumLit):
            return Fraction(x.text)
        if isinstance(x, Var):
            return bound.get(x.name, env.get(x.name))
        if isinstance(x, Call) and x.func == "len" and base is not None:
            return Fraction(len(base)) if x.args and isinstance(x.args[0], Var) and x.args[0].name == q else None
        if isinstance(x, Call) and x.func == "abs" and len(x.args) == 1:
            v = go(x.args[0], bound)
            return abs(v) if isinstance(v, Fraction) else None
        if isinstance(x, Dist) and isinstance(x.expr, Index) and base is not None and other is not None:
            k = go(x.expr.index, bound)
            if isinstance(k, Fraction) and 0 <= k < len(base):
                return other[int(k)] - base[int(k)]
            return Fraction(0)
        if isinstance(x, Forall) and base is not None:
            return all(go(x.body, {**bound, x.var: Fraction(k)}) is True for k in range(len(base)))
        if isinstance(x, Unary):
            v = go(x.operand, bound)
            return -v if x.op == "-" and isinstance(v, Fraction) else (not v if isinstance(v, bool) else None)
        if isinstance(x, Binary):
            a, b = go(x.left, bound), go(x.right, bound)
            if a is None or b is None:
                return None
            ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b if b else None,
                   "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
                   "==": lambda: a == b, "!=": lambda: a != b, "&&": lambda: a and b, "||": lambda: a or b,
                   "==>": lambda: (not a) or b}
            return ops[x.op]() if x.op in ops else None
        return None

    return go(e, {})


def refute_gaussian(decl: MechanismDecl, constants: dict[str, Fraction]) -> tuple[Counterexample | None, str]:
    """A certified counterexample, or None and what the search did."""
    checked = 0
    skipped = ""
    try:
        for env, inputs, neighbour in _candidates(decl, constants):
            eps = _number(decl.privacy, env)
            delta = _number(decl.delta, env) if decl.delta is not None else Fraction(0)
            if eps is None or delta is None:
                return None, "no counterexample searched (the claim is not a number at the candidate parameters)"
            try:
                with mpmath.workdps(50):
                    found = _violation(decl, env, inputs, neighbour, eps, delta)
            except _Stop as why:
                skipped = str(why)
                continue
            checked += 1
            if found is not None:
                return found, ""
    except _Stop as why:
        return None, f"no counterexample searched ({why})"
    if checked == 0 and skipped:
        return None, f"no counterexample searched (no input pair could be evaluated: {skipped})"
    if checked == 0:
        return None, ("no counterexample searched (no input pair this search tries -- entries 0 or 1, length up "
                      "to 3, each entry moved by at most 1 -- was shown to satisfy the `requires`)")
    tail = f"; some inputs could not be evaluated ({skipped})" if skipped else ""
    return None, f"no counterexample among {checked} input pairs of length up to 3{tail}"


def _violation(decl: MechanismDecl, env: dict[str, Fraction], inputs: dict, neighbour: dict, eps: Fraction,
               delta: Fraction) -> Counterexample | None:
    first = _paths(decl, env, inputs)
    second = _paths(decl, env, neighbour)
    e_eps = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
    d = mpmath.mpf(delta.numerator) / delta.denominator
    seen: set[Event] = set()
    for st in first:
        for event in _events(st):
            if event in seen:
                continue
            seen.add(event)
            low = _probability(first, event, upper=False)
            high = _probability(second, event, upper=True)
            if low - _MARGIN > e_eps * (high + _MARGIN) + d:
                return Counterexample(env, env, inputs, neighbour, _shown(event), eps, low, high, False, high == 0,
                                      delta)
    return None
