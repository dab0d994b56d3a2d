"""Proof search: alignments by counterexample-guided enumeration, invariants by Houdini.

For each choice of alignments (simplest first, `alignment.combinations`) we
first run the product program with loops unrolled a few times and the
parameters fixed (a cheap bounded check, linear arithmetic); a choice that
survives is then proved for symbolic parameters and unbounded length: every
loop gets the strongest inductive conjunction of candidate invariants
(`invariants.build_pool`), and every obligation of every path is checked
valid with z3. An `unknown` from z3 stops the attempt (never read as valid).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.syntax import Dist, Forall, Var, While
from fuzzpy.verifier import export
from fuzzpy.verifier import solver as z
from fuzzpy.verifier.alignment import Alignment, candidates, combinations
from fuzzpy.verifier.houdini import InvariantLoops, LoopProof, ProofFailed
from fuzzpy.verifier.kernel.certificate import Side
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.product import Inputs, Obligation, Pair, Path, Product, Unsupported, relational
from fuzzpy.verifier.text import show
from fuzzpy.verifier.walk import sub_expressions

UNROLL = 5
MAX_UNROLLED_PATHS = 32
#: The proof search's budget is counted, not timed (which mechanisms are proved
#: must not depend on the machine's load): alignments screened, alignments
#: carried to a proof, and z3's resource limit per check (`solver.RLIMIT`).
#: Its CPU seconds are only a safety cap a normal search never reaches.
MAX_SCREENED = 120
MAX_PROOF_ATTEMPTS = 4


@dataclass
class ProofTrace:
    alignments: list[tuple[int, str, str, str]]  # (line, draw text, alignment, cost rule)
    loops: list[LoopProof]
    paths: list[str]
    pointwise: bool
    claim: str
    split_on: list[str] = field(default_factory=list)  # counters compared with s (pointwise rule)
    side: Side | None = None  # the proof as a certificate entry, for the kernel (export.py)


@dataclass
class SearchResult:
    proved: bool
    trace: ProofTrace | None = None
    reason: str = ""
    tried: int = 0


# ---------------------------------------------------------------- inputs


def private_scalars(info: MechanismInfo) -> set[str]:
    names = set()
    for req in info.decl.requires:
        for e in sub_expressions(req):
            if isinstance(e, Dist) and isinstance(e.expr, Var) and e.expr.name in info.scalars:
                names.add(e.expr.name)
    return names


def make_inputs(info: MechanismInfo, fixed: dict[str, Fraction] | None = None) -> Inputs:
    z.reset_names()
    private = private_scalars(info)
    scalars: dict[str, Pair] = {}
    for name, sort in info.scalars.items():
        if name in info.constants or name in (fixed or {}):
            value = info.constants[name] if name in info.constants else (fixed or {})[name]
            term = z.number(value, integral=sort == "int")
            scalars[name] = Pair(term, term)
            continue
        one = {"int": z.fresh_int, "bool": z.fresh_bool}.get(sort, z.fresh_real)(f"param_{name}")
        two = one + {"int": z.fresh_int}.get(sort, z.fresh_real)(f"dparam_{name}") if name in private else one
        scalars[name] = Pair(one, two)
    vectors = {q: (z.fresh_array(f"vec_{q}"), z.fresh_array(f"dvec_{q}")) for q in info.vectors}
    lengths = {q: z.fresh_int(f"param_len_{q}") for q in info.vectors}
    output = None
    if info.pointwise:
        output = z.fresh_int("out_s") if info.result_sort == "int" else z.fresh_bool("out_s")
    bare = Inputs(scalars, vectors, lengths, (), output, z.number(0))
    background = [n >= 0 for n in lengths.values()]
    background += [relational(req, {}, bare) for req in info.decl.requires if not isinstance(req, Forall)]
    claim = z.to_real(relational(info.decl.privacy, {}, bare))
    return Inputs(scalars, vectors, lengths, tuple(background), output, claim)


def screening_values(info: MechanismInfo, small_ints: bool = False) -> dict[str, Fraction] | None:
    """Concrete values for the numeric parameters (so the bounded check is linear).

    Integer parameters get 2 (branches on counters are exercised) or, with
    ``small_ints``, 1 (so that costs per answer are largest).
    """
    ints = [Fraction(1), Fraction(2), Fraction(3)] if small_ints else [Fraction(2), Fraction(1), Fraction(3)]
    choices = {"num": [Fraction(1), Fraction(2), Fraction(1, 2)], "int": ints}
    fixed: dict[str, Fraction] = {}
    for name, sort in info.scalars.items():
        if sort not in choices or name in info.constants:
            continue
        for value in choices[sort]:
            trial = dict(fixed, **{name: value})
            if z.satisfiable(list(make_inputs(info, trial).background)).status == "invalid":
                fixed = trial
                break
    return fixed


# ---------------------------------------------------------------- loops: unrolling


def unrolled(depth: int):  # noqa: ANN201 - returns a LoopHandler
    def handle(product: Product, loop: While, paths: list[Path]) -> list[Path]:
        finished = [p for p in paths if p.returned]
        current = [(p, p.cost) for p in paths if not p.returned]
        for trip in range(depth + 1):
            staying = []
            for path, entry in current:
                guard = product.eval(loop.cond, path)
                path.obligations.append(Obligation("guard", guard.one == guard.two, loop.cond.span,
                                                   "both runs agree on the loop condition"))
                leaving = path.fork()
                leaving.facts.append(z.neg(guard.one))
                finished.append(leaving)
                if trip < depth:
                    path.facts.append(guard.one)
                    staying.append((path, entry))
            if len(staying) > MAX_UNROLLED_PATHS:  # bounded check: longer runs are not explored
                staying = []
            current = []
            for path, entry in staying:
                for after in product.exec_block(loop.body, [path]):
                    product.resolve_all_pending(after)  # selectors of this trip only
                    if after.returned:
                        finished.append(after)
                    else:
                        current.append((after, entry))
        return finished

    return handle


def screen(info: MechanismInfo, alignments: dict[int, Alignment],
           fixed: tuple[dict[str, Fraction], dict[str, Fraction]]) -> bool:
    """Bounded check: no violated obligation within 1, then `UNROLL` loop trips.

    Most wrong alignments already fail in the first trip, where the check is cheap.
    """
    for depth, values in ((1, fixed[0]), (UNROLL, fixed[1])):
        inputs = make_inputs(info, values)
        product = Product(info, inputs, alignments, unrolled(depth))
        for path in product.run():
            bad = z.conj(*path.facts, z.neg(z.conj(*(o.formula for o in path.obligations))))
            if z.satisfiable([bad]).status != "valid":
                return False
    return True


# ---------------------------------------------------------------- search


def prove_with(info: MechanismInfo, alignments: dict[int, Alignment], deadline: float,
               dead: dict[int, set[str]] | None = None, fixed: dict[str, Fraction] | None = None,
               ) -> tuple[ProofTrace, dict[int, set[str]]]:
    """Prove with these alignments; returns the trace and, per loop, the
    candidate invariants Houdini dropped. With ``fixed`` parameter values the
    queries are linear: a proof for symbolic parameters specialises to one
    for the fixed values, so what fails there fails everywhere, and what is
    dropped there is dropped everywhere (the maximal inductive subset only
    grows when parameters are fixed)."""
    inputs = make_inputs(info, fixed)
    loops = InvariantLoops(info, inputs, deadline, {k: set(v) for k, v in (dead or {}).items()})
    product = Product(info, inputs, alignments, loops.handle)
    paths = product.run()
    for path in paths + loops.side_paths:
        _discharge(path)
    trace = _trace(info, alignments, loops, paths, inputs, product.sampled_alone)
    trace.side = export.side("forward", info, alignments, loops.exports, product.merged)
    return trace, loops.dead


def _discharge(path: Path) -> None:
    if not path.obligations:
        return
    goal = z.conj(*(o.formula for o in path.obligations))
    outcome = z.check_valid(path.facts, goal)
    if outcome.status == "valid":
        return
    if outcome.status == "unknown":
        raise ProofFailed(f"z3 could not decide a proof obligation ({outcome.reason})")
    for obligation in path.obligations:
        if not outcome.holds(obligation.formula):
            raise ProofFailed(f"{obligation.text} fails (line {obligation.where.line})")  # type: ignore[attr-defined]
    raise ProofFailed("a proof obligation fails")


def _trace(info: MechanismInfo, alignments: dict[int, Alignment], loops: InvariantLoops,
           paths: list[Path], inputs: Inputs, alone: set[int] = frozenset()) -> ProofTrace:  # type: ignore[assignment]
    rows = []
    for site in info.draws:
        rule = "one-sided: shift >= 0, pays shift / scale" if site.noise.kind == "lapplus" else "pays |shift| / scale"
        shift = alignments[site.index].describe(site)
        if site.index in alone:  # in an arm the runs may not share (product._draw_alone)
            shift, rule = "none", "sampled by each run on its own (its arm may differ): pays nothing"
        rows.append((site.noise.span.line, f"{site.noise.kind}({show(site.noise.scale)})", shift, rule))
    path_lines = []
    seen: set[str] = set()
    for path in loops.side_paths + paths:
        line = _path_line(info, alignments, path)
        if line is not None and line not in seen:
            seen.add(line)
            path_lines.append(line)
    split = sorted({a.selector.variable for a in alignments.values() if a.selector is not None
                    and a.selector.kind == "pointwise" and isinstance(a.selector.index, Var)})
    return ProofTrace(rows, loops.proofs, path_lines, inputs.output is not None, show(info.decl.privacy), split)


def _path_line(info: MechanismInfo, alignments: dict[int, Alignment], path: Path) -> str | None:
    """`[branches taken] a2 = dist(tt) - dist(q[i]): pays |a2| / (4 / eps)`."""
    if not path.draws:
        return None
    taken = {id(getattr(stmt, "cond", stmt)): branch for stmt, branch in path.trail}
    where = ", ".join(show(stmt.cond) if branch else f"!({show(stmt.cond)})" for stmt, branch in path.trail)
    shifts, costs = [], []
    for record in path.draws:
        site = info.draws[record.site]
        alignment = alignments[record.site]
        shift = alignment.describe(site)
        selector = alignment.selector
        if selector is not None and selector.kind == "branch" and id(selector.node) in taken:
            chosen = alignment.then if taken[id(selector.node)] else alignment.orelse
            shift = chosen.describe(site) if chosen is not None else "0"
        name = f"a{record.site + 1}"
        shifts.append(f"{name} = {shift}")
        if shift != "0":
            bar = name if record.kind == "lapplus" else f"|{name}|"
            costs.append(f"{bar} / ({show(site.noise.scale)})")
    label = path.label or "outside loops"
    head = f"{label}, when {where}: " if where else f"{label}: "
    return f"{head}{'; '.join(shifts)}; pays {' + '.join(costs) or 'nothing'}"


def search(info: MechanismInfo, seconds: float) -> SearchResult:
    """Try alignments simplest first: bounded check, then a proof with the
    parameters fixed (linear, cheap, and it prunes the invariant candidates),
    then the proof for symbolic parameters. Never proves on an exception."""
    deadline = time.process_time() + seconds  # a safety cap: the budget is MAX_SCREENED / MAX_PROOF_ATTEMPTS
    options = [candidates(info, site) for site in info.draws]
    try:
        first, second = screening_values(info), screening_values(info, small_ints=True)
    except Unsupported as exc:
        return SearchResult(False, reason=f"unsupported in a precondition or the claim: {exc}")
    if first is None or second is None:
        return SearchResult(False, reason="the preconditions admit no small parameter values to test with")
    last_reason = "no alignment passed the bounded check"
    attempts = tried = 0
    for _score, choice in combinations(options):
        if time.process_time() > deadline or tried >= MAX_SCREENED or attempts >= MAX_PROOF_ATTEMPTS:
            break
        tried += 1
        alignments = dict(enumerate(choice))
        try:
            if not screen(info, alignments, (first, second)):
                continue
            dead: dict[int, set[str]] = {}
            for values in (first, second):
                _trace_fixed, dead = prove_with(info, alignments, deadline, dead, values)
            attempts += 1
            trace, _dead = prove_with(info, alignments, deadline, dead)
            return SearchResult(True, trace, tried=tried)
        except ProofFailed as failure:
            last_reason = str(failure)
        except Unsupported as exc:
            last_reason = f"unsupported in the product program: {exc}"
        except Exception as exc:  # a verifier bug must not stop the search, nor prove anything
            last_reason = f"internal error in the prover: {type(exc).__name__}: {exc}"
    if time.process_time() > deadline:
        last_reason = f"time limit reached ({last_reason})"
    return SearchResult(False, reason=last_reason, tried=tried)


def vacuity(info: MechanismInfo) -> str | None:
    """Why a proof would be vacuous: the `requires` admit no parameters, or no
    neighbouring inputs with non-empty vectors. None when they admit some (or
    when z3 cannot tell)."""
    try:
        inputs = make_inputs(info)
    except Unsupported:
        return None
    background = list(inputs.background)
    if z.satisfiable(background).status == "valid":
        return "vacuous: no parameter values satisfy the `requires` (they contradict each other)"
    entries = []
    for name, n in inputs.lengths.items():
        k = z.fresh_int(f"index_{name}")
        d = inputs.vectors[name][1](k)  # type: ignore[operator]
        entries += [n >= 1, k >= 0, k < n, d <= 1, d >= -1]
        for req in info.decl.requires:
            if isinstance(req, Forall):
                try:
                    entries.append(relational(req.body, {req.var: k}, inputs))
                except Unsupported:
                    continue
    if entries and z.satisfiable(background + entries).status == "valid":
        return "vacuous: no neighbouring inputs with non-empty vectors satisfy the `requires`"
    return None


def scale_diagnostics(info: MechanismInfo) -> list[Diagnostic]:
    """FZ402 for every noise scale (over the parameters) that `requires` does not keep positive."""
    try:
        inputs = make_inputs(info)
    except Unsupported:
        return []  # the proof search reports the unsupported precondition
    found = []
    for site in info.draws:
        scale = site.noise.scale
        names = {e.name for e in sub_expressions(scale) if isinstance(e, Var)}
        if not names <= set(info.scalars):
            continue  # depends on local state: checked as a proof obligation instead
        try:
            term = z.to_real(relational(scale, {}, inputs))
        except Unsupported:
            continue
        outcome = z.check_valid(list(inputs.background), term > 0)
        if outcome.status == "invalid":
            found.append(Diagnostic(
                "FZ402", f"the noise scale `{show(scale)}` is not positive for every parameter value allowed",
                scale.span, hint="add a precondition such as `requires eps > 0`, or fix the scale",
            ))
    return found
