"""The proof kernel's checker (docs/verifier-kernel.md).

    check(decl, program, certificate) -> Decision

The de Bruijn criterion (architecture.md): the proof search is large and
clever, this checker small and plain. It shares with the search only the
syntax tree (and its parser, for the certificate's expressions) and z3. It
re-derives the inputs and the neighbour relation from the mechanism, executes
the product program path by path (`product.py`), and discharges every
obligation with z3; `unknown` is never valid.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

import z3

from fuzzpy.language.syntax import (
    Dist,
    Expr,
    Forall,
    Index,
    MechanismDecl,
    Program,
    TyList,
    TyName,
    TyVec,
    Var,
    While,
)
from fuzzpy.support.records import frozen
from fuzzpy.verifier import solver
from fuzzpy.verifier.kernel.certificate import Certificate, LoopInvariant, Side, numbering
from fuzzpy.verifier.kernel.gaussian import delta_up, gauss_bound, gauss_sites, noisy_variables
from fuzzpy.verifier.kernel.inputs import (
    Reject,
    constants,
    fresh,
    local_sorts,
    neighbours,
    number,
    parse_head,
    parse_shift,
    scalar_sort,
    walk,
)
from fuzzpy.verifier.kernel.product import Env, KPath, Ob, Product, real
from fuzzpy.verifier.public_lists import as_vectors
from fuzzpy.verifier.text import show

__all__ = ["Decision", "check"]

#: z3's resource limit per obligation set (the prover's own, solver.RLIMIT)
RLIMIT = solver.RLIMIT


@frozen
class Decision:
    accepted: bool
    reason: str = ""  # the failed obligation and its path, when rejected
    paths: int = 0
    seconds: float = 0.0


def check(decl: MechanismDecl, program: Program | None, certificate: Certificate) -> Decision:
    # a public `list num` parameter is the vector that moves by 0 (`verifier.public_lists`,
    # a 20-line desugaring, part of what this kernel trusts): the mechanism as proved
    decl = as_vectors(decl)
    started = time.process_time()
    paths = 0
    try:
        consts = constants(program, decl)
        _same_precondition(decl, certificate)
        sides = {s.orientation: s for s in certificate.sides}
        if "forward" not in sides:
            raise Reject("the certificate has no proof for the neighbour relation as written")
        wanted = ["forward"] if _symmetric(decl, consts) else ["forward", "reversed"]
        for orientation in wanted:
            if orientation not in sides:
                raise Reject("the relation is one-sided and the certificate has no proof for it reversed")
            paths += _check_side(decl, consts, certificate, sides[orientation])
    except Reject as failure:
        return Decision(False, str(failure), paths, time.process_time() - started)
    except Exception as exc:  # noqa: BLE001 - whatever the kernel cannot check, it does not accept
        return Decision(False, f"the kernel cannot read the certificate ({type(exc).__name__}: {exc})", paths,
                        time.process_time() - started)
    return Decision(True, "", paths, time.process_time() - started)


def _same_precondition(decl: MechanismDecl, cert: Certificate) -> None:
    """The certificate proves the claim, under the precondition and rule, of this mechanism."""
    requires, claim, delta = parse_head(cert.requires, cert.claim, cert.delta)
    if cert.mechanism != decl.name or requires != decl.requires or claim != decl.privacy or delta != decl.delta:
        raise Reject("the certificate is about another mechanism, precondition or claim")
    if dict(cert.neighbours) != neighbours(decl):
        raise Reject("the certificate's neighbour relation is not the mechanism's")
    discrete = isinstance(decl.result, TyName) and decl.result.name in ("int", "bool")
    if cert.rule not in ("alignment", "pointwise") or (cert.rule == "pointwise" and not discrete):
        raise Reject(f"the rule `{cert.rule}` does not apply to this result type")


# ---------------------------------------------------------------- inputs and precondition


class _Inputs:
    """Symbolic inputs: scalars per run, vectors (values, distances), lengths."""

    def __init__(self, decl: MechanismDecl, consts: dict[str, Fraction]) -> None:
        self.one: dict[str, z3.ExprRef] = {}
        self.two: dict[str, z3.ExprRef] = {}
        self.vectors: dict[str, tuple[z3.FuncDeclRef, z3.FuncDeclRef, str]] = {}
        self.lengths: dict[str, z3.ExprRef] = {}
        kinds = neighbours(decl)
        for name, value in consts.items():
            self.one[name] = self.two[name] = number(value, value.denominator == 1)
        for p in decl.params:
            if isinstance(p.type, TyVec):
                self.vectors[p.name] = (z3.Function(f"val.{p.name}", z3.IntSort(), z3.RealSort()),
                                        z3.Function(f"dist.{p.name}", z3.IntSort(), z3.RealSort()), p.type.norm)
                self.lengths[p.name] = z3.Int(f"len.{p.name}")
                continue
            sort = scalar_sort(decl, p.name)
            self.one[p.name] = fresh(f"{p.name}.in", sort)
            moved = fresh(f"{p.name}.moved", sort) if kinds[p.name] == "private" else None
            self.two[p.name] = self.one[p.name] + moved if moved is not None else self.one[p.name]

    def relational(self, e: Expr, bound: dict[str, z3.ExprRef], reverse: bool) -> z3.ExprRef:
        """A precondition over this pair of runs. Forward: variables are run 1,
        dist(x) = x' - x. Reversed (the relation's converse): variables are
        run 2 and every distance is negated."""
        from fuzzpy.language.syntax import Binary, BoolLit, Call, NumLit, Unary
        from fuzzpy.verifier.kernel.product import OPS, absolute, ite

        def go(x: Expr) -> z3.ExprRef:
            if isinstance(x, NumLit):
                return number(x.value, x.is_int)
            if isinstance(x, BoolLit):
                return z3.BoolVal(x.value)
            if isinstance(x, Var) and x.name in bound:
                return bound[x.name]
            if isinstance(x, Var) and x.name in self.one:
                return (self.two if reverse else self.one)[x.name]
            if isinstance(x, Dist) and isinstance(x.expr, Var) and x.expr.name in self.one:
                d = self.two[x.expr.name] - self.one[x.expr.name]
                return -d if reverse else d
            if isinstance(x, Dist) and isinstance(x.expr, Index) and isinstance(x.expr.base, Var) \
                    and x.expr.base.name in self.vectors:
                d = self.vectors[x.expr.base.name][1](go(x.expr.index))
                return -d if reverse else d
            if isinstance(x, Binary):
                return OPS[x.op](go(x.left), go(x.right))
            if isinstance(x, Unary):
                return -go(x.operand) if x.op == "-" else z3.Not(go(x.operand))
            if isinstance(x, Call) and x.func == "abs" and len(x.args) == 1:
                return absolute(go(x.args[0]))
            if isinstance(x, Call) and x.func in ("max", "min") and len(x.args) == 2:
                a, b = go(x.args[0]), go(x.args[1])
                return ite(a >= b, a, b) if x.func == "max" else ite(a <= b, a, b)
            if isinstance(x, Call) and x.func == "len" and len(x.args) == 1 and isinstance(x.args[0], Var) \
                    and x.args[0].name in self.lengths:
                return self.lengths[x.args[0].name]
            raise Reject(f"`{show(x)}` in a precondition")

        return go(e)

    def background(self, decl: MechanismDecl, reverse: bool) -> list[z3.ExprRef]:
        facts = [n >= 0 for n in self.lengths.values()]
        # index -1 is outside every vector: it reads 0 (the `vec[1]` ghost starts there)
        facts += [f(z3.IntVal(-1)) == 0 for values, dists, _ in self.vectors.values() for f in (values, dists)]
        return facts + [self.relational(r, {}, reverse) for r in decl.requires if not isinstance(r, Forall)]


def _symmetric(decl: MechanismDecl, consts: dict[str, Fraction]) -> bool:
    """Is the converse of the neighbour relation the relation itself? (then
    one orientation proves both inequalities of DP: Dwork & Roth, Def. 2.4)"""
    if not any(isinstance(e, Dist) for r in decl.requires for e in walk(r)):
        return True
    inputs = _Inputs(decl, consts)
    assumed, goal = inputs.background(decl, False), []
    for r in decl.requires:
        if isinstance(r, Forall):
            k = z3.Int("k.any")
            assumed.append(inputs.relational(r.body, {r.var: k}, False))
            goal.append(inputs.relational(r.body, {r.var: k}, True))
        else:
            goal.append(inputs.relational(r, {}, True))
    return solver.check_valid(assumed, z3.And(*goal), RLIMIT).status == "valid"


# ---------------------------------------------------------------- one orientation


def _check_side(decl: MechanismDecl, consts: dict[str, Fraction], cert: Certificate, side: Side) -> int:
    reverse = side.orientation == "reversed"
    inputs = _Inputs(decl, consts)
    private = {n for n, k in neighbours(decl).items() if k == "private"}
    heads = [decl.privacy] + ([decl.delta] if decl.delta is not None else [])
    if any(isinstance(e, (Var,)) and e.name in private or isinstance(e, (Index, Dist)) for h in heads for e in walk(h)):
        raise Reject("the claim depends on private data")
    gauss = _gaussian(decl, cert, side)
    # the Laplace draws' pure cost stays within eps - E (E: the Gaussian draws' share, kernel/gaussian.py)
    claim = real(inputs.relational(decl.privacy, {}, False)) - z3.RealVal(gauss)
    s = None
    if cert.rule == "pointwise":
        s = z3.Bool("s") if isinstance(decl.result, TyName) and decl.result.name == "bool" else z3.Int("s")
    foralls = [r for r in decl.requires if isinstance(r, Forall)]

    def entry_facts(vector: str, k: z3.ExprRef, _d: z3.ExprRef) -> list[z3.ExprRef]:
        return [inputs.relational(r.body, {r.var: k}, reverse) for r in foralls]

    # vec[1] ghost: budget 1, no index read, an empty pass (high < low)
    budgets = {q: (z3.RealVal(1), z3.IntVal(-1), z3.IntVal(0), z3.IntVal(-1))
               for q, (_, _, norm) in inputs.vectors.items() if norm == "1"}
    start = KPath(dict(inputs.one), dict(inputs.two), z3.RealVal(0), inputs.background(decl, reverse),
                  budgets=budgets)
    sorts = local_sorts(decl, consts)
    env = Env(inputs.vectors, inputs.lengths, start, claim, s, sorts, frozenset(cert.whole),
              isinstance(decl.result, TyList), entry_facts)
    for name in cert.whole:
        if sorts.get(name) != "num":
            raise Reject(f"`{name}` is not a `num` local")
    numbers = numbering(decl)
    loops = _invariants(side, inputs, s, numbers)
    product = Product(env, side, loops, numbers)
    finished = product.run(decl.body)
    if decl.delta is not None or gauss_sites(decl.body, noisy_variables(decl.body)):
        finished.append(_delta_path(decl, side, inputs, start, numbers))
    for path in finished:
        _discharge(path, side.orientation)
    return len(finished)


def _gaussian(decl: MechanismDecl, cert: Certificate, side: Side) -> Fraction:
    """The Gaussian draws' preconditions (kernel/gaussian.py): their shifts are
    noise-free, the rule is plain alignment; returns E, the epsilon share."""
    noisy = noisy_variables(decl.body)
    sites = gauss_sites(decl.body, noisy)
    share = gauss_bound(side.gauss_eps, 0)
    if not sites:
        return share
    if cert.rule != "alignment":
        raise Reject("Gaussian draws are proved by plain alignment only (the pointwise rule would pay "
                     "delta once per output)")
    if decl.delta is None:
        raise Reject("a mechanism with Gaussian draws needs a claim `privacy (eps, delta)`")
    numbers = numbering(decl)
    by_node = {d.at.node: d for d in side.draws}
    for noise, _loop in sites:
        entry = by_node.get(numbers.get(id(noise), -1))
        if entry is None or entry.kind != "gauss":
            raise Reject(f"line {noise.span.line}: the certificate has no alignment for this `gauss` draw")
        for text in (entry.shift, entry.otherwise, entry.test):
            if text and any(isinstance(e, Var) and e.name in noisy for e in walk(parse_shift(text))):
                raise Reject(f"line {noise.span.line}: the Gaussian draw's shift `{text}` depends on a draw "
                             "(only noise-free shifts are allowed for Gaussian draws)")
    return share


def _delta_path(decl: MechanismDecl, side: Side, inputs: _Inputs, start: KPath, numbers: dict[int, int]) -> KPath:
    """mu^2 <= sum over Gaussian draws of R^2 (times the trips of its loop);
    the obligation delta >= delta_mu(E), rounded up (Balle & Wang 2018, Thm. 8)."""
    sites = gauss_sites(decl.body, noisy_variables(decl.body))
    bounds = {d.at.node: d.bound for d in side.draws}
    trips = {t.at.node: t.trips for t in side.trips}
    mu_squared = Fraction(0)
    for noise, loop in sites:
        r = gauss_bound(bounds.get(numbers.get(id(noise), -1), ""), noise.span.line)
        count = 1
        if loop is not None:
            count = trips.get(numbers.get(id(loop), -1), -1)
            if count < 0:
                raise Reject(f"line {loop.span.line}: the certificate bounds no trips of this loop")
        mu_squared += count * r * r
    bound = delta_up(mu_squared, gauss_bound(side.gauss_eps, 0))
    path = start.fork()
    path.trail.append("the privacy claim's delta")
    delta = real(inputs.relational(decl.delta, {}, False)) if decl.delta is not None else z3.RealVal(0)
    path.obs.append(Ob(f"delta >= delta_mu(E) = {float(bound):.6g} (mu^2 <= {mu_squared})",
                       delta >= z3.RealVal(bound), decl.span.line))
    return path


def _invariants(side: Side, inputs: _Inputs, s: z3.ExprRef | None,
                numbers: dict[int, int]) -> Callable[[While, KPath, KPath], z3.ExprRef]:
    """The certificate's invariant of a loop, over a path's state (vocabulary:
    docs/verifier-kernel.md). Several for one loop: their disjunction."""
    table: dict[int, list[LoopInvariant]] = {}
    for inv in side.loops:
        table.setdefault(inv.at.node, []).append(inv)

    def instance(loop: While, now: KPath, entry: KPath) -> z3.ExprRef:
        found = table.get(numbers.get(id(loop), -1))
        if not found:
            raise Reject(f"line {loop.span.line}: the certificate has no invariant for this loop")
        names = [n for n in now.one if n in now.two and n in entry.one]
        pairs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
        decls: dict[str, object] = {}

        def bind(name: str, value: z3.ExprRef) -> None:
            holder = z3.Const(f"{name}", value.sort())
            decls[name] = holder
            pairs.append((holder, value))

        for n in names:
            bind(f"{n}.1", now.one[n])
            bind(f"{n}.2", now.two[n])
            if n not in inputs.one:
                bind(f"{n}.entry", entry.one[n])
        bind("%cost", real(now.cost))
        bind("%cost.entry", real(entry.cost))
        if s is not None:
            bind("%s", s)
        for q, (values, dists, _) in inputs.vectors.items():
            decls[f"%val.{q}"], decls[f"%dist.{q}"] = values, dists
            bind(f"%len.{q}", inputs.lengths[q])
            if q in now.budgets:
                bind(f"%remaining.{q}", real(now.budgets[q][0]))
                bind(f"%last.{q}", now.budgets[q][1])
                bind(f"%lastd.{q}", dists(now.budgets[q][1]))
                bind(f"%low.{q}", now.budgets[q][2])
                bind(f"%high.{q}", now.budgets[q][3])
        formulas = []
        for inv in found:
            if any(word in inv.invariant for word in ("assert", "declare", "define", "push", "pop", "check-sat")):
                raise Reject(f"line {loop.span.line}: the invariant is not one SMT-LIB term")
            parsed = z3.parse_smt2_string(f"(assert {inv.invariant})", decls=decls)  # type: ignore[arg-type]
            formulas.append(z3.substitute(z3.And(*parsed), *pairs))
        return z3.Or(*formulas) if len(formulas) > 1 else formulas[0]

    return instance


def _discharge(path: KPath, orientation: str) -> None:
    """All of a path's obligations in one query; when z3 cannot decide that,
    each conjunct of each obligation alone (still never `unknown` as valid)."""
    if not path.obs:
        return
    outcome = solver.check_valid(path.facts, z3.And(*(o.formula for o in path.obs)), RLIMIT)
    if outcome.status == "valid":
        return
    where = "; ".join(path.trail) or "the first path"
    side = "" if orientation == "forward" else " (relation reversed)"
    if outcome.status == "invalid":
        failed = next((o for o in path.obs if not outcome.holds(o.formula)), path.obs[0])
        raise Reject(f"{failed.text} ({_at(failed.line)}) fails on the path [{where}]{side}")
    for ob in path.obs:
        parts = ob.formula.children() if z3.is_and(ob.formula) else [ob.formula]
        for part in parts:
            alone = solver.check_valid(path.facts, part, RLIMIT)
            if alone.status == "invalid":
                raise Reject(f"{ob.text} ({_at(ob.line)}) fails on the path [{where}]{side}")
            if alone.status == "unknown":
                raise Reject(f"z3 could not decide `{ob.text}` ({_at(ob.line)}) on the path [{where}]{side} "
                             f"({alone.reason})")


def _at(line: int) -> str:
    """Where an obligation sits: its line, or (0) the end of the mechanism's body."""
    return f"line {line}" if line > 0 else "at the end of the mechanism"
