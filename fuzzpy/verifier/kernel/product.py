"""Plain symbolic execution of the product program under a certificate.

Both runs are executed side by side (a store per run); a path is a list of
facts (what holds on it) and obligations (what the proof must show on it).
No merging and no search: every `if` forks, every loop is cut by the
certificate's invariant, every draw takes the certificate's shift.
The rules, with their sources, are in docs/verifier-kernel.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import z3

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    BoolLit,
    Call,
    Dist,
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
from fuzzpy.verifier.kernel.certificate import DrawAlignment, Side
from fuzzpy.verifier.kernel.gaussian import counter_loop, gauss_bound
from fuzzpy.verifier.kernel.inputs import Reject, number, parse_shift, parse_test, statements, walk
from fuzzpy.verifier.text import show

Term = z3.ExprRef
Runs = tuple[int, ...]
BOTH: Runs = (1, 2)




def real(t: Term) -> Term:
    return z3.ToReal(t) if z3.is_int(t) else t


def absolute(t: Term) -> Term:
    return z3.If(t >= 0, t, -t)


def ite(c: Term, a: Term, b: Term) -> Term:
    if z3.is_int(a) != z3.is_int(b):
        a, b = real(a), real(b)
    return z3.If(c, a, b)


OPS: dict[str, Callable[[Term, Term], Term]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: real(a) / real(b),
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "&&": lambda a, b: z3.And(a, b), "||": lambda a, b: z3.Or(a, b),
    "==>": lambda a, b: z3.Implies(a, b),
}


@dataclass
class Ob:
    text: str
    formula: Term
    line: int


@dataclass
class KPath:
    one: dict[str, Term]
    two: dict[str, Term]
    cost: Term
    facts: list[Term]
    obs: list[Ob] = field(default_factory=list)
    pending: list[tuple[int, Term, Term, Term]] = field(default_factory=list)
    #: vec[1]: (remaining, last index, lowest and highest index of the pass; empty when high < low)
    budgets: dict[str, tuple[Term, Term, Term, Term]] = field(default_factory=dict)
    trail: list[str] = field(default_factory=list)

    def fork(self) -> KPath:
        return KPath(dict(self.one), dict(self.two), self.cost, list(self.facts), list(self.obs),
                     list(self.pending), dict(self.budgets), list(self.trail))

    def store(self, run: int) -> dict[str, Term]:
        return self.one if run == 1 else self.two


@dataclass
class Env:
    """The symbolic inputs (inputs.py builds them from the mechanism)."""

    vectors: dict[str, tuple[z3.FuncDeclRef, z3.FuncDeclRef, str]]  # name -> (values, distances, norm)
    lengths: dict[str, Term]
    start: KPath
    claim: Term
    s: Term | None
    sorts: dict[str, str]
    whole: frozenset[str]
    stream: bool
    entry_facts: Callable[[str, Term, Term], list[Term]]  # `forall` instances at a read index


_fresh = [0]


def fresh_like(stem: str, like: Term) -> Term:
    _fresh[0] += 1
    name = f"k!{stem}!{_fresh[0]}"
    return z3.Bool(name) if z3.is_bool(like) else z3.Int(name) if z3.is_int(like) else z3.Real(name)


@cache
def _shift_expr(text: str) -> Expr:
    return parse_shift(text)


@cache
def _test_expr(text: str) -> Expr:
    return parse_test(text)


class Product:
    def __init__(self, env: Env, side: Side, invariant: Callable[[While, KPath, KPath], Term],
                 numbers: dict[int, int]) -> None:
        self.env = env
        self.numbers = numbers  # id(node) -> its number (certificate.numbering)
        self.draws = {d.at.node: d for d in side.draws}
        self.branches = {b.at.node: b.rule for b in side.branches}
        self.selectors = {d.test_at.node for d in side.draws if d.selector == "branch" and d.test_at is not None}
        self.invariant = invariant  # (loop, path now, path entering) -> the invariant over the path
        self.finished: list[KPath] = []
        self.solo = 0  # > 0 while one run executes an arm alone (`either`)
        #: loops with Gaussian draws -> the certificate's bound on their trips (checked at entry)
        self.trips = {t.at.node: t.trips for t in side.trips}

    # ------------------------------------------------------------ statements

    def key(self, node: object) -> int:
        return self.numbers.get(id(node), -1)

    def run(self, body: tuple[Stmt, ...]) -> list[KPath]:
        for path in self.block(body, [self.env.start.fork()]):
            if not self.env.stream:
                path.obs.append(Ob("every path ends with `return`", z3.BoolVal(False), 0))
            self.finish(path, 0)
        return self.finished

    def finish(self, path: KPath, line: int) -> None:
        self.resolve_rest(path)
        path.obs.append(Ob("cost <= claim", real(path.cost) <= self.env.claim, line))
        self.finished.append(path)

    def block(self, body: tuple[Stmt, ...], paths: list[KPath]) -> list[KPath]:
        for stmt in body:
            paths = [after for path in paths for after in self.stmt(stmt, path)]
        return paths

    def stmt(self, stmt: Stmt, path: KPath) -> list[KPath]:
        line = stmt.span.line
        if isinstance(stmt, (VarDecl, Assign)):
            if isinstance(stmt, Assign) and stmt.index is not None:
                raise Reject(f"line {line}: assignment to a vector entry")
            self.assign(stmt.name, self.ev(stmt.expr, path, BOTH), path, BOTH, line)
            return [path]
        if isinstance(stmt, Output):
            one, two = self.ev(stmt.expr, path, BOTH)
            path.obs.append(Ob("released values are equal", one == two, line))  # LightDP Thm. 1
            return [path]
        if isinstance(stmt, ReturnStmt):
            one, two = self.ev(stmt.expr, path, BOTH)
            s = self.env.s
            if s is None:
                path.obs.append(Ob("returned values are equal", one == two, line))
            else:  # the pointwise rule (Barthe et al. CCS 2016, Thm. 3)
                path.obs.append(Ob("out = s implies out' = s", z3.Implies(one == s, two == s), line))
            self.finish(path, line)
            return []
        if isinstance(stmt, IfStmt):
            return self.branch(stmt, path)
        if isinstance(stmt, While):
            return self.loop(stmt, path)
        raise Reject(f"line {line}: a statement the kernel does not read")

    def assign(self, name: str, terms: tuple[Term, ...], path: KPath, runs: Runs, line: int) -> None:
        sort = self.env.sorts.get(name)
        for run, term in zip(runs, terms, strict=True):
            if sort == "num":
                term = real(term)
            elif (sort == "int") != z3.is_int(term) or (sort == "bool") != z3.is_bool(term):
                raise Reject(f"line {line}: `{name}` receives a value of another sort")
            if name in self.env.whole:
                path.obs.append(Ob(f"`{name}` holds a whole number", z3.IsInt(term), line))
            path.store(run)[name] = term

    # ------------------------------------------------------------ branches

    def branch(self, stmt: IfStmt, path: KPath) -> list[KPath]:
        one, two = self.ev(stmt.cond, path, BOTH)
        line = stmt.span.line
        if not one.eq(two) and self.branches.get(self.key(stmt)) == "either" and self.divergence_safe(stmt):
            return self.either(stmt, path, one, two)
        if not one.eq(two):  # both runs must take the same arm (LightDP's branch rule)
            path.obs.append(Ob("both runs take the same branch", one == two, line))
        then = path.fork()
        then.facts.append(one)
        then.trail.append(f"line {line}: then")
        path.facts.append(z3.Not(one))
        path.trail.append(f"line {line}: else")
        return self.block(stmt.then, [then]) + self.block(stmt.orelse, [path])

    def either(self, stmt: IfStmt, path: KPath, one: Term, two: Term) -> list[KPath]:
        """The runs may take different arms: all four combinations, each run
        executing its own arm alone (arms only assign: `divergence_safe`)."""
        found = []
        for first in (True, False):
            for second in (True, False):
                split = path.fork()
                split.facts += [one if first else z3.Not(one), two if second else z3.Not(two)]
                arms = ("then" if first else "else", "then" if second else "else")
                split.trail.append(f"line {stmt.span.line}: run 1 {arms[0]}, run 2 {arms[1]}")
                for mid in self.alone(stmt.then if first else stmt.orelse, [split], 1):
                    found += self.alone(stmt.then if second else stmt.orelse, [mid], 2)
        return found

    def alone(self, body: tuple[Stmt, ...], paths: list[KPath], run: int) -> list[KPath]:
        self.solo += 1
        try:
            return self._alone(body, paths, run)
        finally:
            self.solo -= 1

    def _alone(self, body: tuple[Stmt, ...], paths: list[KPath], run: int) -> list[KPath]:
        for stmt in body:
            after = []
            for path in paths:
                if isinstance(stmt, (VarDecl, Assign)):
                    self.assign(stmt.name, self.ev(stmt.expr, path, (run,)), path, (run,), stmt.span.line)
                    after.append(path)
                    continue
                assert isinstance(stmt, IfStmt)
                (cond,) = self.ev(stmt.cond, path, (run,))
                then = path.fork()
                then.facts.append(cond)
                then.trail.append(f"line {stmt.span.line}: run {run} then")
                path.facts.append(z3.Not(cond))
                path.trail.append(f"line {stmt.span.line}: run {run} else")
                after += self._alone(stmt.then, [then], run) + self._alone(stmt.orelse, [path], run)
            paths = after
        return paths

    def divergence_safe(self, stmt: IfStmt) -> bool:
        """Arms that only assign (no release, loop, `vec[1]` read or
        alignment-selecting comparison; a draw is sampled by the run alone,
        `draw_alone`): each run can execute its own alone."""
        def ok(body: tuple[Stmt, ...]) -> bool:
            for s in body:
                if isinstance(s, IfStmt):
                    if not (self.pure(s.cond) and ok(s.then) and ok(s.orelse)):
                        return False
                elif not (isinstance(s, (VarDecl, Assign)) and getattr(s, "index", None) is None and self.pure(s.expr)):
                    return False
            return True

        return ok(stmt.then) and ok(stmt.orelse)

    def pure(self, expr: Expr) -> bool:
        for e in walk(expr):
            if isinstance(e, Noise) and e.kind not in ("lap", "lapplus"):
                return False
            if isinstance(e, Binary) and self.key(e) in self.selectors:
                return False
            if isinstance(e, Index) and isinstance(e.base, Var) and self.env.vectors.get(e.base.name, ("", "", ""))[2] == "1":
                return False
        return True

    # ------------------------------------------------------------ loops

    def loop(self, loop: While, entering: KPath) -> list[KPath]:
        """apRHL's while rule, in lockstep: the invariant holds on entry, the
        guard agrees, every trip preserves the invariant, the rest of the
        program runs from the invariant and the negated guard."""
        line = loop.span.line
        if any(isinstance(s, While) for s in statements(loop.body)):
            raise Reject(f"line {line}: a nested loop")
        self.resolve_rest(entering)
        if self.key(loop) in self.trips:  # a loop with Gaussian draws: at most N trips (kernel/gaussian.py)
            counter, bound = counter_loop(loop)
            for run in BOTH:
                if counter not in entering.store(run):
                    raise Reject(f"line {line}: the loop counter `{counter}` is not set before the loop")
                (limit,) = self.ev(bound, entering, (run,))
                start = entering.store(run)[counter]
                entering.obs.append(Ob(f"the loop makes at most {self.trips[self.key(loop)]} trips",
                                       real(limit) - real(start) <= self.trips[self.key(loop)], line))
        entering.obs.append(Ob("the loop invariant holds on entry", self.invariant(loop, entering, entering), line))
        self.finished.append(entering)
        head = entering.fork()
        head.obs, head.cost = [], z3.Real(f"k!cost!{line}")
        head.trail.append(f"line {line}: the loop head after any number of trips")
        for name in _assigned(loop.body):
            for run in BOTH:
                if name in head.store(run):
                    # a whole `num` local: a whole number, as a real (same meaning as IsInt, easier for z3)
                    like = z3.IntVal(0) if name in self.env.whole else head.store(run)[name]
                    head.store(run)[name] = real(fresh_like(f"{name}{run}", like)) if name in self.env.whole \
                        else fresh_like(f"{name}{run}", like)
        for q in head.budgets:
            if self.mentions_vector(loop, q):
                head.budgets[q] = (fresh_like(f"rem_{q}", z3.RealVal(0)), fresh_like(f"last_{q}", z3.IntVal(0)),
                                   fresh_like(f"low_{q}", z3.IntVal(0)), fresh_like(f"high_{q}", z3.IntVal(0)))
        head.facts.append(self.invariant(loop, head, entering))
        one, two = self.ev(loop.cond, head, BOTH)
        head.obs.append(Ob("both runs agree on the loop condition", one == two, line))
        trip = head.fork()
        trip.facts.append(one)
        trip.trail.append(f"line {line}: one more trip")
        for after in self.block(loop.body, [trip]):
            self.resolve_rest(after)
            after.obs.append(Ob("the trip preserves the loop invariant", self.invariant(loop, after, entering), line))
            self.finished.append(after)
        head.facts.append(z3.Not(one))
        head.trail.append(f"line {line}: the loop ends")
        return [head]

    def mentions_vector(self, loop: While, q: str) -> bool:
        """Does a trip read q: in the guard, the body, or a shift of a draw there?"""
        tops = [loop.cond] + [getattr(s, n) for s in statements(loop.body) for n in ("expr", "cond")
                              if getattr(s, n, None) is not None]
        texts = []
        for e in (e for top in tops for e in walk(top)):
            if isinstance(e, Var) and e.name == q:
                return True
            cert = self.draws.get(self.key(e)) if isinstance(e, Noise) else None
            if cert is not None:
                texts += [cert.shift, cert.otherwise, cert.test]
        return any(isinstance(e, Var) and e.name == q for t in texts for e in walk(_shift_expr(t or "0")))

    # ------------------------------------------------------------ expressions

    def ev(self, e: Expr, path: KPath, runs: Runs) -> tuple[Term, ...]:
        if isinstance(e, NumLit):
            return (number(e.value, e.is_int),) * len(runs)
        if isinstance(e, BoolLit):
            return (z3.BoolVal(e.value),) * len(runs)
        if isinstance(e, Var):
            if any(e.name not in path.store(r) for r in runs):
                raise Reject(f"line {e.span.line}: `{e.name}` is read before it is assigned on some path")
            return tuple(path.store(r)[e.name] for r in runs)
        if isinstance(e, Binary):
            found = tuple(OPS[e.op](a, b) for a, b in zip(self.ev(e.left, path, runs), self.ev(e.right, path, runs),
                                                          strict=True))
            self.select(e, found, path, runs)
            return found
        if isinstance(e, Unary):
            return tuple(-t if e.op == "-" else z3.Not(t) for t in self.ev(e.operand, path, runs))
        if isinstance(e, If):
            parts = [self.ev(x, path, runs) for x in (e.cond, e.then, e.orelse)]
            return tuple(ite(c, a, b) for c, a, b in zip(*parts, strict=True))
        if isinstance(e, Call):
            return self.call(e, path, runs)
        if isinstance(e, Index):
            return self.read(e, path, runs)
        if isinstance(e, Noise):
            if runs != BOTH and self.solo and self.key(e) != -1:
                return self.draw_alone(e, path, runs)
            if runs != BOTH:
                raise Reject(f"line {e.span.line}: a draw in one run only")
            return self.draw(e, path)
        raise Reject(f"line {e.span.line}: `{show(e)}`")

    def call(self, e: Call, path: KPath, runs: Runs) -> tuple[Term, ...]:
        if e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], Var) and e.args[0].name in self.env.lengths:
            return (self.env.lengths[e.args[0].name],) * len(runs)
        args = [self.ev(a, path, runs) for a in e.args]
        if e.func == "abs" and len(args) == 1:
            return tuple(absolute(t) for t in args[0])
        if e.func in ("max", "min") and len(args) == 2:
            pick = (lambda a, b: ite(a >= b, a, b)) if e.func == "max" else (lambda a, b: ite(a <= b, a, b))
            return tuple(pick(a, b) for a, b in zip(*args, strict=True))
        raise Reject(f"line {e.span.line}: call of `{e.func}`")

    def read(self, e: Index, path: KPath, runs: Runs) -> tuple[Term, ...]:
        """Reads are total: outside 0 <= k < len(q) an entry is 0 in both runs
        (docs/semantics.md); inside, the `requires forall` hold at k."""
        if not (isinstance(e.base, Var) and e.base.name in self.env.vectors):
            raise Reject(f"line {e.span.line}: indexing something that is not a vector parameter")
        name = e.base.name
        values, dists, norm = self.env.vectors[name]
        indices = self.ev(e.index, path, runs)
        if not all(z3.is_int(k) for k in indices):
            raise Reject(f"line {e.span.line}: a vector index that is not an integer")
        for k in indices:
            inside = z3.And(k >= 0, k < self.env.lengths[name])
            path.facts.append(z3.Implies(z3.Not(inside), z3.And(values(k) == 0, dists(k) == 0)))
            path.facts += [z3.Implies(inside, f) for f in self.env.entry_facts(name, k, dists(k))]
        if norm == "1":
            if runs != BOTH:
                raise Reject(f"line {e.span.line}: a `vec[1]` read in one run only")
            path.obs.append(Ob("both runs read the same entry", indices[0] == indices[1], e.span.line))
            self.charge(name, indices[0], path)
            k = indices[0]
            return (values(k), values(k) + dists(k))
        out = []
        for run, k in zip(runs, indices, strict=True):
            path.facts.append(absolute(dists(k)) <= 1)  # vec[inf], vec[2]: each entry moves by at most 1
            out.append(values(k) if run == 1 else values(k) + dists(k))
        return tuple(out)

    def charge(self, name: str, k: Term, path: KPath) -> None:
        """`vec[1]`: the entries of a pass lie in [low, high], each read outside
        the interval so far (a pass going up, going down, or both ways), so
        they are distinct and their distances sum to at most 1; a read inside
        it starts a new pass (budget 1 again); re-reading the last index is free."""
        remaining, last, low, high = path.budgets[name]
        d = self.env.vectors[name][1](k)
        empty = high < low
        outside = z3.Or(empty, k > high, k < low)
        available = z3.If(outside, remaining, z3.RealVal(1))
        same = z3.And(k == last, z3.Not(empty))  # the entry the pass read last: counted already
        path.facts.append(z3.Implies(z3.Not(same), absolute(d) <= available))
        low2 = z3.If(same, low, z3.If(z3.And(outside, z3.Not(empty), low < k), low, k))
        high2 = z3.If(same, high, z3.If(z3.And(outside, z3.Not(empty), high > k), high, k))
        path.budgets[name] = (z3.If(same, remaining, available - absolute(d)), k, low2, high2)

    # ------------------------------------------------------------ draws and selectors

    def draw(self, noise: Noise, path: KPath) -> tuple[Term, ...]:
        line = noise.span.line
        cert = self.draws.get(self.key(noise))
        if cert is None or cert.kind != noise.kind or noise.kind not in ("lap", "lapplus", "gauss"):
            raise Reject(f"line {line}: the certificate has no alignment for this `{noise.kind}` draw")
        one, two = self.ev(noise.scale, path, BOTH)
        path.obs.append(Ob("the noise scale is the same in both runs", one == two, line))
        path.obs.append(Ob("the noise scale is positive", real(one) > 0, line))
        if noise.kind == "gauss":
            return self.gauss(noise, cert, path, real(one))
        shift = self.shift(cert, path, line)
        flip = self.mirror(cert, noise, path, line)
        if noise.kind == "lapplus":  # one-sided noise: shifts >= 0 keep the support; cost a / b
            path.obs.append(Ob("one-sided noise is shifted up (shift >= 0)", shift >= 0, line))
            path.cost = path.cost + shift / real(one)
        else:  # Laplace: cost |a| / b (LightDP, Zhang & Kifer 2017, Thm. 1)
            path.cost = path.cost + absolute(shift) / real(one)
        eta = fresh_like(f"eta{line}", z3.RealVal(0))
        if noise.kind == "lapplus":  # its support is [0, inf): a fact about run 1's draw
            path.facts.append(eta >= 0)
        if flip is not None:
            return (eta, ite(flip, -eta, eta) + shift)
        return (eta, eta + shift)

    def gauss(self, noise: Noise, cert: DrawAlignment, path: KPath, sigma: Term) -> tuple[Term, ...]:
        """A Gaussian draw (kernel/gaussian.py): a plain translation whose shift
        the dependence analysis showed noise-free; no pure cost; the obligation
        |shift| <= R * sigma, R the certificate's bound, which enters mu^2."""
        line = noise.span.line
        if cert.selector or cert.mirror:
            raise Reject(f"line {line}: a Gaussian draw's alignment may not use a selector or a mirror "
                         "(its shift would depend on the noise)")
        bound = gauss_bound(cert.bound, line)
        shift = self.shift(cert, path, line)
        path.obs.append(Ob("the Gaussian shift is within its bound (|shift| <= bound * sigma)",
                           absolute(shift) <= z3.RealVal(bound) * sigma, line))
        eta = fresh_like(f"eta{line}", z3.RealVal(0))
        return (eta, eta + shift)

    def mirror(self, cert: DrawAlignment, noise: Noise, path: KPath, line: int) -> Term | None:
        """Where the runs disagree on the certificate's `mirror` test (evaluated
        on both runs' states at the draw), run 2 gets -eta + shift: for each
        fixed past a bijection of the line that preserves Laplace(0, b)'s
        density up to exp(|shift| / b), as a translation does (the density is
        symmetric; LightDP's alignments need only be injective and
        measure-preserving up to that factor, Zhang & Kifer 2017, Thm. 1)."""
        if not cert.mirror:
            return None
        if noise.kind != "lap" or cert.selector != "":
            raise Reject(f"line {line}: a mirrored alignment is for a Laplace draw without a selector")
        test = _test_expr(cert.mirror)
        for e in walk(test):
            if isinstance(e, (Noise, Dist)) or (isinstance(e, Index) and isinstance(e.base, Var)
                                               and self.env.vectors.get(e.base.name, ("", "", ""))[2] == "1"):
                raise Reject(f"line {line}: a mirror test may not draw, read `vec[1]` or name dist()")
        one, two = self.ev(test, path, BOTH)
        if not (z3.is_bool(one) and z3.is_bool(two)):
            raise Reject(f"line {line}: a mirror test that is not a condition")
        return one != two

    def draw_alone(self, noise: Noise, path: KPath, runs: Runs) -> tuple[Term, ...]:
        """A draw in an arm one run executes alone: sampled in that run only,
        uncoupled, at no cost -- apRHL's one-sided random assignment (Barthe
        et al., POPL 2012: a lossless sampling on one side; what follows must
        hold for every value in the support)."""
        line = noise.span.line
        (scale,) = self.ev(noise.scale, path, runs)
        path.obs.append(Ob("the noise scale is positive", real(scale) > 0, line))
        eta = fresh_like(f"eta{line}.run{runs[0]}", z3.RealVal(0))
        if noise.kind == "lapplus":
            path.facts.append(eta >= 0)
        return (eta,)

    def shift(self, cert: DrawAlignment, path: KPath, line: int) -> Term:
        then = self.align(_shift_expr(cert.shift), path)
        if cert.selector == "":
            return then
        other = self.align(_shift_expr(cert.otherwise), path)
        if cert.selector == "state":  # a test of the state at the draw: a translation per state
            (test,) = self.ev(_test_expr(cert.test), path, (1,))
            return ite(test, then, other)
        if cert.selector == "pointwise" and self.env.s is not None:
            (index,) = self.ev(_shift_expr(cert.test), path, (1,))
            return ite(index == self.env.s, then, other)
        if cert.selector == "branch" and cert.test_at is not None:
            # chosen by a later comparison that must agree in both runs (CheckDP,
            # Wang et al. 2020): each region is translated into itself
            chosen = fresh_like(f"shift{line}", z3.RealVal(0))
            path.pending.append((cert.test_at.node, chosen, then, other))
            return chosen
        raise Reject(f"line {line}: unknown selector `{cert.selector}`")

    def align(self, e: Expr, path: KPath) -> Term:
        """The `align` language: dist(e) is e's value in run 2 minus run 1; the rest is run 1."""
        return real(self.hint(e, path))

    def hint(self, e: Expr, path: KPath) -> Term:
        """A term of the `align` language. Under the pointwise rule `s`, where no
        variable has that name, is the fixed output: the rule lets alignments
        depend on it (Barthe et al., LICS 2016; one translation per s)."""
        if isinstance(e, Dist):
            one, two = self.ev(e.expr, path, BOTH)
            return real(two) - real(one)
        if isinstance(e, Var) and e.name == "s" and self.env.s is not None and "s" not in path.store(1):
            return self.env.s
        if isinstance(e, Binary):
            return OPS[e.op](self.hint(e.left, path), self.hint(e.right, path))  # z3 mixes Int and Real
        if isinstance(e, Unary):
            inner = self.hint(e.operand, path)
            return -inner if e.op == "-" else z3.Not(inner)
        if isinstance(e, If):
            return ite(self.hint(e.cond, path), self.hint(e.then, path), self.hint(e.orelse, path))
        if isinstance(e, Call) and e.func == "abs" and len(e.args) == 1:
            return absolute(real(self.hint(e.args[0], path)))
        return self.ev(e, path, (1,))[0]

    def select(self, e: Binary, found: tuple[Term, ...], path: KPath, runs: Runs) -> None:
        here = self.key(e)
        chosen = [p for p in path.pending if p[0] == here]
        if not chosen:
            return
        if runs != BOTH:
            raise Reject(f"line {e.span.line}: an alignment-selecting comparison in one run only")
        for entry in chosen:
            path.pending.remove(entry)
            path.facts.append(entry[1] == ite(found[0], entry[2], entry[3]))
        path.obs.append(Ob("the comparison selecting an alignment agrees in both runs", found[0] == found[1],
                           e.span.line))

    def resolve_rest(self, path: KPath) -> None:
        """Selectors whose comparison was not reached take their other shift."""
        for _, chosen, _then, other in path.pending:
            path.facts.append(chosen == other)
        path.pending.clear()


def _assigned(body: tuple[Stmt, ...]) -> list[str]:
    return sorted({s.name for s in statements(body) if isinstance(s, (VarDecl, Assign))})
