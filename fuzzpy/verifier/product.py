"""The product program: both runs of a mechanism executed side by side.

Every value is a `Pair` (its value in this run and in the neighbouring run;
the distance is ``two - one``). A noise draw eta becomes eta + a in the second
run, where the shift a comes from the draw's alignment, and the privacy cost
grows by |a| / scale (Laplace) or a / scale with a >= 0 (one-sided noise)
(randomness alignments: LightDP, Zhang & Kifer POPL 2017, Thm. 1; one-sided
rule: Albarghouthi & Hsu POPL 2018). What the proof needs is collected as
`Obligation`s on each path: both runs take the same branch where it matters,
released values agree (or, for a discrete result fixed to s, "out = s implies
out' = s": the pointwise rule of Barthe et al., CCS 2016), and the final cost
is at most the claim. Loops are delegated to a handler (invariants or
unrolling), so this module only knows straight-line code and branches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    BoolLit,
    Call,
    Dist,
    Expr,
    Forall,
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
from fuzzpy.support.records import frozen
from fuzzpy.verifier import solver as z
from fuzzpy.verifier.alignment import Alignment, DrawEnv
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.solver import Term
from fuzzpy.verifier.text import show
from fuzzpy.verifier.walk import block_is_pure, statements, stmt_expressions, sub_expressions


class Unsupported(Exception):
    """A construct the product construction cannot express; the verdict is unknown."""


@frozen
class Pair:
    one: Term
    two: Term

    @property
    def dist(self) -> Term:
        return self.two - self.one


@frozen
class Obligation:
    kind: str  # "branch" | "release" | "support" | "scale" | "cost" | "guard" | "order"
    formula: Term
    where: object  # a Span
    text: str


@frozen
class Budget:
    """Ghost state of a `vec[1]` input: distance not yet used, last index read,
    and the interval [low, high] of the indices read in this pass (empty
    while high < low)."""

    remaining: Term
    last_index: Term
    last_dist: Term
    low: Term
    high: Term


@frozen
class DrawRecord:
    site: int
    shift: Term
    scale: Term
    kind: str


@dataclass
class Path:
    values: dict[str, Pair]
    cost: Term
    facts: list[Term] = field(default_factory=list)
    obligations: list[Obligation] = field(default_factory=list)
    pending: dict[int, list[tuple[Term, Term, Term]]] = field(default_factory=dict)
    budgets: dict[str, Budget] = field(default_factory=dict)
    draws: list[DrawRecord] = field(default_factory=list)
    returned: bool = False
    trail: list[tuple[object, bool]] = field(default_factory=list)  # (IfStmt, branch taken)
    label: str = ""  # how a proof explanation names this path

    def fork(self) -> Path:
        return Path(
            dict(self.values), self.cost, list(self.facts), list(self.obligations),
            {k: list(v) for k, v in self.pending.items()}, dict(self.budgets), list(self.draws), self.returned,
            list(self.trail), self.label,
        )


@frozen
class Inputs:
    """The symbolic inputs shared by all paths: parameters, vectors, lengths, s."""

    scalars: dict[str, Pair]
    vectors: dict[str, tuple[object, object]]  # name -> (values fn, distance fn)
    lengths: dict[str, Term]
    background: tuple[Term, ...]
    output: Term | None  # the fixed output s of the pointwise rule
    claim: Term


LoopHandler = Callable[["Product", While, list[Path]], list[Path]]


class Product:
    """Symbolic execution of the product program for one choice of alignments."""

    def __init__(
        self, info: MechanismInfo, inputs: Inputs, alignments: dict[int, Alignment], loop_handler: LoopHandler
    ) -> None:
        self.info = info
        self.inputs = inputs
        self.alignments = alignments
        self.loop_handler = loop_handler
        self.site_of = {id(site.noise): site for site in info.draws}
        self.merged: list[object] = []  # the `if`s merged (runs may take different arms): certificate
        self.alone = 0  # > 0 while merged arms run: each run samples its own draws (`_draw_alone`)
        self.sampled_alone: set[int] = set()  # draw sites met only so (for the explanation)

    # ------------------------------------------------------------ entry

    def initial_path(self) -> Path:
        values = dict(self.inputs.scalars)
        budgets = {
            name: Budget(z.number(1), z.number(-1, integral=True), z.number(0), z.number(0, integral=True),
                         z.number(-1, integral=True))
            for name, norm in self.info.vectors.items()
            if norm == "1"
        }
        return Path(values, z.number(0), list(self.inputs.background), budgets=budgets)

    def run(self) -> list[Path]:
        paths = self.exec_block(self.info.decl.body, [self.initial_path()])
        for path in paths:
            self.finish(path)
        return paths

    def finish(self, path: Path) -> None:
        self.resolve_all_pending(path)
        span = self.info.decl.privacy.span
        path.obligations.append(Obligation("cost", path.cost <= self.inputs.claim, span, "cost <= claim"))

    # ------------------------------------------------------------ statements

    def exec_block(self, body: tuple[Stmt, ...], paths: list[Path]) -> list[Path]:
        for stmt in body:
            live = [p for p in paths if not p.returned]
            done = [p for p in paths if p.returned]
            paths = done + self.exec_stmt(stmt, live) if live else paths
        return paths

    def exec_stmt(self, stmt: Stmt, paths: list[Path]) -> list[Path]:
        if isinstance(stmt, While):
            return self.loop_handler(self, stmt, paths)
        result: list[Path] = []
        for path in paths:
            result.extend(self._exec_one(stmt, path))
        return result

    def _exec_one(self, stmt: Stmt, path: Path) -> list[Path]:
        if isinstance(stmt, (VarDecl, Assign)):
            value = self.eval(stmt.expr, path)
            path.values[stmt.name] = self._coerce(stmt.name, value)
            return [path]
        if isinstance(stmt, Output):
            value = self.eval(stmt.expr, path)
            path.obligations.append(Obligation("release", _equal(value), stmt.span, "released values agree"))
            return [path]
        if isinstance(stmt, ReturnStmt):
            value = self.eval(stmt.expr, path)
            self.resolve_all_pending(path)
            path.obligations.append(self._release_obligation(value, stmt))
            path.returned = True
            return [path]
        if isinstance(stmt, IfStmt):
            return self._exec_if(stmt, path)
        raise Unsupported(f"the statement at line {stmt.span.line}")

    def _release_obligation(self, value: Pair, stmt: ReturnStmt) -> Obligation:
        s = self.inputs.output
        if s is None:
            return Obligation("release", _equal(value), stmt.span, "returned values agree")
        formula = z.implies(value.one == s, value.two == s)
        return Obligation("release", formula, stmt.span, "out = s implies out' = s")

    def _exec_if(self, stmt: IfStmt, path: Path) -> list[Path]:
        cond = self.eval(stmt.cond, path)
        self.resolve_pending(id(stmt), cond.one, path)
        public = cond.one is cond.two  # the same term in both runs: they always agree
        if not public and self._mergeable(stmt):
            merged = self._merge_pure(stmt, cond, path)
            if merged is not None:
                self.merged.append(stmt)
                return [merged]
        if not public:
            path.obligations.append(
                Obligation("branch", cond.one == cond.two, stmt.cond.span, "both runs take the same branch")
            )
        decided = z.simplify(z.conj(cond.one, cond.two))
        if z.is_true(decided):
            path.trail.append((stmt, True))
            return self.exec_block(stmt.then, [path])
        if z.is_false(z.simplify(z.disj(cond.one, cond.two))):
            path.trail.append((stmt, False))
            return self.exec_block(stmt.orelse, [path])
        then_path, else_path = path.fork(), path
        then_path.facts.append(cond.one)
        else_path.facts.append(z.neg(cond.one))
        then_path.trail.append((stmt, True))
        else_path.trail.append((stmt, False))
        return self.exec_block(stmt.then, [then_path]) + self.exec_block(stmt.orelse, [else_path])

    def _mergeable(self, stmt: IfStmt) -> bool:
        """Arms that only assign; a draw in them only when its alignment is the
        shift 0 -- the search's way of saying "sample it in each run alone"
        (`_draw_alone`); a draw aligned otherwise needs both runs in its arm."""
        if not (block_is_pure(stmt.then, draws=True) and block_is_pure(stmt.orelse, draws=True)):
            return False
        for inner in statements(stmt.then + stmt.orelse):
            for top in stmt_expressions(inner):
                for e in sub_expressions(top):
                    if isinstance(e, Noise) and not self._zero_alignment(e):
                        return False
        return True

    def _zero_alignment(self, noise: Noise) -> bool:
        site = self.site_of.get(id(noise))
        if site is None:
            return False
        alignment = self.alignments[site.index]
        return alignment.selector is None and alignment.then.kind == "const" and alignment.then.value == 0

    def _merge_pure(self, stmt: IfStmt, cond: Pair, path: Path) -> Path | None:
        """Assignment-only branches may differ between the runs: merge with if-then-else.

        Each run's state after the `if` is the if-then-else, on that run's own
        condition, of the states after the two arms; an `if` nested in an arm
        is merged the same way (never forked), so the merged state covers
        every run through the arms and no branch fact of an arm is assumed
        (issue 23: keeping one sub-path of an arm that forks, and assuming
        its branch fact, treated the dropped runs as impossible).

        None when they cannot be merged (a `vec[1]` read, or a selector decided
        inside): then both runs must take the same branch, as for any other.
        """
        merged = path.fork()
        if not self._merge_arms(stmt, cond, merged):
            return None
        return merged

    def _merge_arms(self, stmt: IfStmt, cond: Pair, path: Path) -> bool:
        """Merge ``stmt`` (pure arms) into ``path`` in place; False when it cannot be."""
        arms = []
        for body in (stmt.then, stmt.orelse):
            arm = path.fork()
            self.alone += 1
            try:
                ok = self._exec_merged_block(body, arm)
            finally:
                self.alone -= 1
            if not ok:
                return False
            if arm.budgets != path.budgets:
                return False  # a vec[1] input is read inside: its budget would depend on the run
            if _pending_count(arm) != _pending_count(path):
                # the selector would be decided in one run's branch only: the
                # alignment could stop being injective
                return False
            arms.append(arm)
        then_path, else_path = arms
        base_facts, base_obligations = len(path.facts), len(path.obligations)
        # the facts an arm adds are facts about the inputs (reads' padding and
        # bounds, `forall` instances), true whichever arm runs; they are still
        # guarded, never assumed of runs that skip the arm
        some_then = z.disj(cond.one, cond.two)
        some_else = z.disj(z.neg(cond.one), z.neg(cond.two))
        path.facts = path.facts + [
            z.implies(some_then, f) for f in then_path.facts[base_facts:]
        ] + [z.implies(some_else, f) for f in else_path.facts[base_facts:]]
        path.obligations = path.obligations + [
            replace(o, formula=z.implies(some_then, o.formula)) for o in then_path.obligations[base_obligations:]
        ] + [replace(o, formula=z.implies(some_else, o.formula)) for o in else_path.obligations[base_obligations:]]
        values = {}
        for name in set(then_path.values) & set(else_path.values):
            a, b = then_path.values[name], else_path.values[name]
            if a is b:
                values[name] = a
            elif a.one is a.two and b.one is b.two and cond.one is cond.two:
                same = z.ite(cond.one, a.one, b.one)  # public: still the same term in both runs
                values[name] = Pair(same, same)
            else:
                values[name] = Pair(z.ite(cond.one, a.one, b.one), z.ite(cond.two, a.two, b.two))
        path.values = values  # a local declared in one arm only is not readable after the `if`
        return True

    def _exec_merged_block(self, body: tuple[Stmt, ...], path: Path) -> bool:
        """Run an assignment-only block as one path: nested `if`s are merged, never forked."""
        for stmt in body:
            if isinstance(stmt, (VarDecl, Assign)):
                self._exec_one(stmt, path)
            elif isinstance(stmt, IfStmt):
                if id(stmt) in path.pending:
                    return False  # a selector decided inside the merge
                cond = self.eval(stmt.cond, path)
                if not self._merge_arms(stmt, cond, path):
                    return False
            else:
                return False  # not pure (block_is_pure said otherwise: refuse, never guess)
        return True

    def _coerce(self, name: str, value: Pair) -> Pair:
        if self.info.locals.get(name) == "num":
            return Pair(z.to_real(value.one), z.to_real(value.two))
        return value

    # ------------------------------------------------------------ selectors

    def resolve_pending(self, node_id: int, cond_one: Term, path: Path) -> None:
        for shift, then, orelse in path.pending.pop(node_id, []):
            path.facts.append(shift == z.ite(cond_one, then, orelse))

    def resolve_all_pending(self, path: Path) -> None:
        for entries in path.pending.values():
            for shift, _then, orelse in entries:
                path.facts.append(shift == orelse)
        path.pending.clear()

    # ------------------------------------------------------------ expressions

    def eval(self, expr: Expr, path: Path) -> Pair:
        if isinstance(expr, NumLit):
            term = z.number(expr.value, integral=expr.is_int)
            return Pair(term, term)
        if isinstance(expr, BoolLit):
            term = z.boolean(expr.value)
            return Pair(term, term)
        if isinstance(expr, Var):
            if expr.name not in path.values:
                raise Unsupported(f"`{expr.name}` is read before it is assigned on some path")
            return path.values[expr.name]
        if isinstance(expr, Binary):
            return self._binary(expr, path)
        if isinstance(expr, Unary):
            inner = self.eval(expr.operand, path)
            fn = (lambda t: -t) if expr.op == "-" else z.neg
            if inner.one is inner.two:
                same = fn(inner.one)
                return Pair(same, same)
            return Pair(fn(inner.one), fn(inner.two))
        if isinstance(expr, If):
            cond, then, orelse = (self.eval(e, path) for e in (expr.cond, expr.then, expr.orelse))
            return Pair(z.ite(cond.one, then.one, orelse.one), z.ite(cond.two, then.two, orelse.two))
        if isinstance(expr, Index):
            return self.read(expr, path)
        if isinstance(expr, Call):
            return self._call(expr, path)
        if isinstance(expr, Noise):
            return self.draw(expr, path)
        raise Unsupported(f"`{show(expr)}` (line {expr.span.line})")

    def _binary(self, expr: Binary, path: Path) -> Pair:
        left, right = self.eval(expr.left, path), self.eval(expr.right, path)
        op = BINARY[expr.op]
        if left.one is left.two and right.one is right.two:  # the same in both runs: build it once
            same = op(left.one, right.one)
            result = Pair(same, same)
        else:
            result = Pair(op(left.one, right.one), op(left.two, right.two))
        if id(expr) in path.pending:  # a comparison that selects a draw's alignment
            self.resolve_pending(id(expr), result.one, path)
            # the selector must be preserved by the coupling: then each region is
            # translated into itself and the alignment is injective
            path.obligations.append(Obligation("branch", result.one == result.two, expr.span,
                                               "the comparison selecting an alignment agrees in both runs"))
        return result

    def _call(self, expr: Call, path: Path) -> Pair:
        if expr.func == "len":
            base = expr.args[0]
            if not (isinstance(base, Var) and base.name in self.inputs.lengths):
                raise Unsupported("len() of something that is not a vector parameter")
            n = self.inputs.lengths[base.name]
            return Pair(n, n)
        args = [self.eval(a, path) for a in expr.args]
        if expr.func == "abs" and len(args) == 1:
            return Pair(z.absolute(args[0].one), z.absolute(args[0].two))
        if expr.func in ("max", "min") and len(args) == 2:
            fn = z.maximum if expr.func == "max" else z.minimum
            return Pair(fn(args[0].one, args[1].one), fn(args[0].two, args[1].two))
        raise Unsupported(f"call of `{expr.func}` with {len(args)} arguments")

    def read(self, expr: Index, path: Path) -> Pair:
        """`q[k]`: entry k, or 0 (in both runs) when k is outside the vector.

        Reads are total (docs/semantics.md, "Mechanisms"): the runtime pads
        every vector with zeros on both sides, so an index outside
        0 <= k < len(q) reads 0 and never fails. The out-of-range case is
        a fact about the padding, never an assumption that the index is in range.
        """
        if not isinstance(expr.base, Var) or expr.base.name not in self.inputs.vectors:
            raise Unsupported("indexing something that is not a vector parameter")
        name = expr.base.name
        index = self.eval(expr.index, path)
        if not (z.is_int(index.one) and z.is_int(index.two)):
            raise Unsupported("a vector index that is not an integer expression")
        path.obligations.append(
            Obligation("guard", index.one == index.two, expr.index.span, "both runs read the same entry")
        )
        k = index.one
        values, dists = self.inputs.vectors[name]
        n = self.inputs.lengths[name]
        inside = z.conj(k >= 0, k < n)
        path.facts.append(z.implies(z.neg(inside), z.conj(values(k) == 0, dists(k) == 0)))  # type: ignore[operator]
        if name in path.budgets:
            d = self._read_budgeted(name, k, dists, path, expr)
        else:
            d = dists(k)  # type: ignore[operator]
            path.facts.append(z.conj(d <= 1, d >= -1))
        for fact in self.forall_facts(name, k, d):
            path.facts.append(z.implies(inside, fact))
        one = values(k)  # type: ignore[operator]
        return Pair(one, one + d)

    def _read_budgeted(self, name: str, k: Term, dists: object, path: Path, expr: Index) -> Term:
        """`vec[1]`: each entry read is charged once against the unit distance budget.

        Within one pass (each read outside the interval of the indices read so
        far in it: a pass going up, going down, or outwards; a re-read of the
        last index is free) the distances charged are those of distinct
        entries, whose absolute values sum to at most 1; a read inside the
        interval starts a new pass with a fresh budget of 1.
        """
        budget = path.budgets[name]
        fresh = dists(k)  # type: ignore[operator]
        # a read inside the pass's interval starts a new pass over the input:
        # the entries of one pass are distinct, so their distances again sum
        # to at most 1 (every fact stated here is true of the distance vector)
        empty = budget.high < budget.low
        same = z.conj(k == budget.last_index, z.neg(empty))  # the entry the pass read last: counted already
        outside = z.disj(empty, k > budget.high, k < budget.low)
        available = z.ite(outside, budget.remaining, z.number(1))
        path.facts.append(z.implies(z.neg(same), z.absolute(fresh) <= available))
        d = z.ite(same, budget.last_dist, fresh)
        remaining = z.ite(same, budget.remaining, available - z.absolute(fresh))
        extend = z.conj(outside, z.neg(empty))
        # named, not nested: a run of reads would otherwise build ever deeper terms
        low, high = z.fresh_int(f"low_{name}"), z.fresh_int(f"high_{name}")
        path.facts.append(low == z.ite(same, budget.low, z.ite(z.conj(extend, budget.low < k), budget.low, k)))
        path.facts.append(high == z.ite(same, budget.high, z.ite(z.conj(extend, budget.high > k), budget.high, k)))
        path.budgets[name] = Budget(remaining, k, d, low, high)
        return d

    def forall_facts(self, vector: str, k: Term, d: Term) -> list[Term]:
        """Instances at index k of every `requires forall i. ...`.

        `dist(q[i])` at the index just read is the distance the read uses
        (``d``); any other entry `dist(q[e])` is that entry's distance.
        """
        def entry(name: str, index: Term) -> Term:
            if name == vector and z.same(index, k):
                return d
            return self.inputs.vectors[name][1](index)  # type: ignore[operator]

        return [relational(req.body, {req.var: k}, self.inputs, entry)
                for req in self.info.decl.requires if isinstance(req, Forall)]

    # ------------------------------------------------------------ noise

    def _draw_alone(self, noise: Noise, scale: Pair, path: Path) -> Pair:
        """A draw in an arm the two runs may not both take: each run samples it
        on its own, uncoupled and free (apRHL's one-sided random assignment,
        Barthe et al. POPL 2012: a lossless sampling in one run costs nothing;
        the proof holds for every value in the support). When both runs take
        the arm the two values are independent (the product coupling)."""
        one, two = z.fresh_real(f"eta_alone{noise.span.line}"), z.fresh_real(f"eta_alone{noise.span.line}_2")
        for term in (scale.one, scale.two):
            path.obligations.append(Obligation("scale", z.to_real(term) > 0, noise.scale.span,
                                               "the noise scale is positive"))
        if noise.kind == "lapplus":
            path.facts += [one >= 0, two >= 0]
        return Pair(one, two)

    def draw(self, noise: Noise, path: Path) -> Pair:
        site = self.site_of[id(noise)]
        scale = self.eval(noise.scale, path)
        if self.alone:
            self.sampled_alone.add(site.index)
            return self._draw_alone(noise, scale, path)
        eta = z.fresh_real(f"eta{site.index}")
        span = noise.span
        path.obligations.append(Obligation("scale", scale.one == scale.two, noise.scale.span,
                                           "the noise scale is the same in both runs"))
        path.obligations.append(Obligation("scale", z.to_real(scale.one) > 0, noise.scale.span,
                                           "the noise scale is positive"))
        alignment = self.alignments[site.index]
        env = DrawEnv(self, site, path)
        then = alignment.then.term(env)
        if alignment.selector is None:
            shift = z.simplify(then)
        else:
            orelse = alignment.orelse.term(env) if alignment.orelse is not None else z.number(0)
            selected = alignment.selector.now(env)
            if selected is not None:
                shift = z.ite(selected, then, orelse)
            else:
                # decided by a branch evaluated later in this run: a name fixed then
                shift = z.fresh_real(f"shift{site.index}")
                node_id = id(alignment.selector.node)
                path.pending.setdefault(node_id, []).append((shift, then, orelse))
        if noise.kind == "lapplus":
            # one-sided noise: only non-negative shifts keep the support (cost a / b)
            path.obligations.append(Obligation("support", shift >= 0, span, "one-sided noise is shifted up"))
            # its value lies in its support [0, inf) (docs/semantics.md): a
            # fact about this run's draw; the neighbour's eta + shift is then
            # in it too by the obligation above
            path.facts.append(eta >= 0)
            path.cost = path.cost + z.divide(shift, scale.one)
        else:
            path.cost = path.cost + z.divide(z.absolute(shift), scale.one)
        path.draws.append(DrawRecord(site.index, shift, scale.one, noise.kind))
        if alignment.mirror is not None and noise.kind == "lap" and alignment.selector is None:
            # where the runs disagree on the test, run 2 draws -eta (Laplace is symmetric)
            test = self.eval(alignment.mirror, path)
            return Pair(eta, z.ite(test.one != test.two, -eta, eta) + shift)
        return Pair(eta, eta + shift)


def relational(expr: Expr, bound: dict[str, Term], inputs: Inputs,
               entry: Callable[[str, Term], Term] | None = None, sign: int = 1) -> Term:
    """Translate a precondition: variables mean this run, dist(x) the difference.

    `dist(q[e])` is the distance of entry e of vector q (``entry`` gives it;
    by default the vector's distance function at e). ``sign = -1`` negates
    every distance: the relation with the neighbours' roles swapped.
    """

    def go(e: Expr) -> Term:
        if isinstance(e, NumLit):
            return z.number(e.value, integral=e.is_int)
        if isinstance(e, BoolLit):
            return z.boolean(e.value)
        if isinstance(e, Var):
            if e.name in bound:
                return bound[e.name]
            if e.name in inputs.scalars:
                return inputs.scalars[e.name].one
            raise Unsupported(f"`{e.name}` in a precondition")
        if isinstance(e, Dist):
            inner = e.expr
            if isinstance(inner, Var) and inner.name in inputs.scalars:
                return _signed(sign, inputs.scalars[inner.name].dist)
            if isinstance(inner, Index) and isinstance(inner.base, Var) and inner.base.name in inputs.vectors:
                index = go(inner.index)
                if not z.is_int(index):
                    raise Unsupported("dist() of a vector entry at an index that is not an integer")
                name = inner.base.name
                found = entry(name, index) if entry is not None else inputs.vectors[name][1](index)  # type: ignore[operator]
                return _signed(sign, found)
            raise Unsupported("dist() of this expression in a precondition")
        if isinstance(e, Binary):
            return BINARY[e.op](go(e.left), go(e.right))
        if isinstance(e, Unary):
            return -go(e.operand) if e.op == "-" else z.neg(go(e.operand))
        if isinstance(e, Call) and e.func == "abs" and len(e.args) == 1:
            return z.absolute(go(e.args[0]))
        if isinstance(e, Call) and e.func in ("max", "min") and len(e.args) == 2:
            fn = z.maximum if e.func == "max" else z.minimum
            return fn(go(e.args[0]), go(e.args[1]))
        if isinstance(e, Call) and e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], Var) \
                and e.args[0].name in inputs.lengths:
            return inputs.lengths[e.args[0].name]
        raise Unsupported(f"`{show(e)}` in a precondition")

    return go(expr)


def _pending_count(path: Path) -> int:
    return sum(len(entries) for entries in path.pending.values())


def _signed(sign: int, term: Term) -> Term:
    return term if sign == 1 else -term


def _equal(value: Pair) -> Term:
    return value.one == value.two


BINARY: dict[str, Callable[[Term, Term], Term]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": z.divide,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "&&": lambda a, b: z.conj(a, b),
    "||": lambda a, b: z.disj(a, b),
    "==>": lambda a, b: z.disj(z.neg(a), b),
}
