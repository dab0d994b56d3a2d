"""Candidate loop invariants, drawn from the small family the benchmarks need.

verifier.md, "Loops without hints": distances that stay constant or bounded;
the privacy cost as an affine function of counters (v <= V0 + B * c, with V0
the cost on entry and B from the claim and the counter's bound); counter
bounds from the guard; for the pointwise rule the split on i < s / i = s /
i > s; for `vec[1]` inputs a ghost budget of distance already used. Each
candidate is a formula over one loop-head state; `prover.houdini` keeps the
largest inductive conjunction of them (Flanagan & Leino's Houdini, FME 2001).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fuzzpy.language.syntax import Binary, Expr, While
from fuzzpy.support.records import frozen
from fuzzpy.verifier import solver as z
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.solver import Term
from fuzzpy.verifier.walk import statements, stmt_expressions, sub_expressions


@dataclass
class View:
    """One state at the loop head, or after one trip through the body."""

    values: dict  # name -> Pair
    cost: Term
    entry_cost: Term
    budgets: dict  # name -> Budget
    bounds: dict[str, Term]  # text of a guard bound -> its value (loop constant)
    entries: dict[str, Term] = field(default_factory=dict)  # counter -> its value at loop entry (a ghost)
    memo: dict[object, Term] = field(default_factory=dict)  # noise-free tests (by text), atoms (by id) built here


@frozen
class Relevance:
    """Which loop variables a case split can matter for."""

    returned: frozenset[str]  # released (compared with the pointwise rule's output s)
    selected: frozenset[str]  # compared with s by a draw's alignment (`i == s ? ...`)
    indices: frozenset[str]  # index a `vec[1]` input
    #: integer expressions named by their text (`best - 1` returned, `i - 1 == s ? ...`),
    #: split on like variables; a view holds their values (`houdini.loop_view`)
    derived: tuple[str, ...] = ()
    descending: frozenset[str] = frozenset()  # counters the loop only ever decreases (`i = i - 1`)

    @property
    def pointwise(self) -> frozenset[str]:
        return self.returned | self.selected


@frozen
class Atom:
    label: str
    build: Callable[[View], Term]
    user: bool = False


def guard_conjuncts(cond: Expr) -> list[Expr]:
    if isinstance(cond, Binary) and cond.op == "&&":
        return guard_conjuncts(cond.left) + guard_conjuncts(cond.right)
    return [cond]


def guard_bounds(loop: While) -> list[Expr]:
    """Right-hand sides of `x < E` / `x <= E` in the guard (`E > x`, `E >= x`):
    the counters' limits, when the loop does not change them."""
    from fuzzpy.language.syntax import Assign, Var, VarDecl

    changing = {s.name for s in statements(loop.body) if isinstance(s, (VarDecl, Assign))}
    found: list[Expr] = []
    for conj in guard_conjuncts(loop.cond):
        bound = None
        if isinstance(conj, Binary) and conj.op in ("<", "<="):
            bound = conj.right
        if isinstance(conj, Binary) and conj.op in (">", ">="):
            bound = conj.left
        if bound is not None and not any(isinstance(e, Var) and e.name in changing for e in sub_expressions(bound)):
            found.append(bound)
    return found


def build_pool(
    info: MechanismInfo,
    loop: While,
    names: list[str],
    claim: Term,
    output: Term | None,
    prices: list[Term],
    guard_terms: list[tuple[str, Callable[[View], Term]]],
    bounds: list[str],
    entry_constant: Term | None,
    case_guards: list[tuple[str, Callable[[View], Term]]] = (),  # type: ignore[assignment]
    relevant: Relevance | None = None,
) -> list[Atom]:
    """All candidate atoms for one loop (guarded and unguarded).

    ``case_guards`` (tests like `i == 0` in the body) also guard the relations
    between integer variables ("after the first trip, best < i"). ``relevant``
    narrows the case splits to the variables they can matter for (the pool's
    size is what a proof costs)."""
    ints = [n for n in names if info.locals.get(n) == "int" or n in info.whole]
    derived = [n for n in (relevant.derived if relevant is not None else ()) if n not in ints]
    split = [n for n in ints + derived if relevant is None or n in relevant.pointwise]
    returned = [n for n in ints + derived if relevant is None or n in relevant.returned]
    selected = [n for n in ints + derived if relevant is None or n in relevant.selected]
    descending = relevant.descending if relevant is not None else frozenset()
    indices = [n for n in ints + derived if relevant is None or n in relevant.indices]
    nums = [n for n in names if info.locals.get(n) == "num" and n not in info.whole]
    bools = [n for n in names if info.locals.get(n) == "bool"]
    distance = _distance_atoms(ints + nums) + [
        Atom(f"{b}' == {b}", lambda v, b=b: v.values[b].one == v.values[b].two) for b in bools
    ]
    budget = _budget_atoms(info, ints + [n for n in derived if n in indices], nums, claim, prices, descending)
    counters = _counter_atoms(ints, claim, bounds)
    relations = _int_relations(info, ints)
    pointwise = _pointwise_atoms(split, output) if output is not None and z.is_int(output) else []
    costs = _cost_atoms(claim)
    if entry_constant is not None:
        costs.append(Atom(f"V0 == {z.pretty(entry_constant)}", lambda v: v.entry_cost == entry_constant))
    unguarded = distance + budget + counters + relations + pointwise + costs
    guards = list(guard_terms)
    narrow: list[tuple[str, Callable[[View], Term]]] = []  # case splits that guard only a few atoms
    for q, norm in info.vectors.items():
        if norm != "1":
            continue
        for n in indices:
            # before the first read of a new pass over q, and after it
            relation = ">" if n in descending else "<"
            side = _pass_side(q, n, relation)
            narrow += [(f"reads of {q} so far {relation} {n}", side),
                       (f"!(reads of {q} so far {relation} {n})", lambda v, a=side: z.neg(a(v)))]
    if output is not None and z.is_int(output):
        # the pointwise case split (verifier.md): the index of the draws against s,
        # the released value at s
        for n in selected:
            narrow += [
                (f"{n} < s", lambda v, n=n: v.values[n].one < output),
                (f"{n} == s", lambda v, n=n: v.values[n].one == output),
                (f"{n} > s", lambda v, n=n: v.values[n].one > output),
            ]
        for n in returned:
            narrow.append((f"{n} == s", lambda v, n=n: v.values[n].one == output))
            narrow += [
                (f"{n} == s != {c}", lambda v, n=n, c=c: z.conj(v.values[n].one == output, output != c))
                for c in sorted(info.int_constants) if c < 0 or c in _initial_literals(info, n)
            ]
            # "the draw at s has happened": s is behind the counter (ahead of it when counting down)
            narrow += [
                (f"{n} == s > {m}", lambda v, n=n, m=m: z.conj(v.values[n].one == output, output > v.values[m].one))
                if m in descending else
                (f"{n} == s < {m}", lambda v, n=n, m=m: z.conj(v.values[n].one == output, output < v.values[m].one))
                for m in selected if m != n and case_guards
            ]
    narrow = list({label: (label, g) for label, g in narrow}.values())
    kept = set(returned) | {n for n in names if n not in ints}
    light = [a for a in distance if a.label.split("(")[-1].split(")")[0] in kept or "'" in a.label]
    if output is not None:
        light += _spare_atoms(info, nums)
    guarded = [
        Atom(f"{label} ==> {atom.label}", lambda v, g=g, a=atom: z.implies(g(v), _built(a, v)))
        for label, g in guards + list(case_guards)
        for atom in distance + costs + counters + pointwise
    ] + [
        Atom(f"{label} ==> {atom.label}", lambda v, g=g, a=atom: z.implies(g(v), _built(a, v)))
        for label, g in narrow
        for atom in light + costs + pointwise
    ] + [
        Atom(f"{label} ==> {atom.label}", lambda v, g=g, a=atom: z.implies(g(v), _built(a, v)))
        for label, g in case_guards
        for atom in relations
    ]
    return unguarded + guarded


def _built(atom: Atom, view: View) -> Term:
    """``atom`` on ``view``, built once however many guards it appears under."""
    key = id(atom)
    if key not in view.memo:
        view.memo[key] = atom.build(view)
    return view.memo[key]


def _initial_literals(info: MechanismInfo, name: str) -> set[int]:
    """The integer literals a local is declared with (`var best = 0;` before a
    1-based loop: 0 then means "nothing chosen yet", as -1 does elsewhere)."""
    from fuzzpy.language.syntax import NumLit, VarDecl

    return {int(s.expr.value) for s in statements(info.decl.body)
            if isinstance(s, VarDecl) and s.name == name and isinstance(s.expr, NumLit) and s.expr.is_int}


def _distance_atoms(names: list[str]) -> list[Atom]:
    atoms: list[Atom] = []
    for n in names:
        def d(v: View, n: str = n) -> Term:
            return z.to_real(v.values[n].two) - z.to_real(v.values[n].one)

        atoms += [
            Atom(f"dist({n}) == 0", lambda v, d=d: d(v) == 0),
            Atom(f"dist({n}) == 1", lambda v, d=d: d(v) == 1),
            Atom(f"dist({n}) == -1", lambda v, d=d: d(v) == -1),
            Atom(f"dist({n}) <= 1", lambda v, d=d: d(v) <= 1),
            Atom(f"dist({n}) >= -1", lambda v, d=d: d(v) >= -1),
            Atom(f"dist({n}) >= 1", lambda v, d=d: d(v) >= 1),
            Atom(f"dist({n}) >= 0", lambda v, d=d: d(v) >= 0),
            Atom(f"dist({n}) <= 0", lambda v, d=d: d(v) <= 0),
        ]
    return atoms


def _pass_side(q: str, n: str, relation: str) -> Callable[[View], Term]:
    """"Every index read in this pass over q is below n" (`<`, `<=`) or above it
    (`>`, `>=`); true of an empty pass: the next read at n extends the pass."""
    compare = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
               ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[relation]

    def side(v: View) -> Term:
        budget = v.budgets[q]
        edge = budget.high if relation in ("<", "<=") else budget.low
        return z.disj(budget.high < budget.low, compare(edge, v.values[n].one))

    return side


def _budget_atoms(info: MechanismInfo, ints: list[str], nums: list[str], claim: Term, prices: list[Term],
                  descending: frozenset[str] = frozenset()) -> list[Atom]:
    atoms: list[Atom] = []
    for q, norm in info.vectors.items():
        if norm != "1":
            continue

        def used(v: View, q: str = q) -> Term:
            return 1 - v.budgets[q].remaining

        for n in ints:
            # a counter going up reads above the pass so far, one going down below it
            for relation in ((">", ">=") if n in descending else ("<",)):
                atoms.append(Atom(f"reads of {q} so far {relation} {n}", _pass_side(q, n, relation)))
        atoms.append(Atom(f"the last read of {q} is in its pass",
                          lambda v, q=q: z.disj(v.budgets[q].high < v.budgets[q].low,
                                                z.conj(v.budgets[q].low <= v.budgets[q].last_index,
                                                       v.budgets[q].last_index <= v.budgets[q].high))))
        atoms.append(Atom(f"|distance of the last read of {q}| <= used({q})",
                          lambda v, q=q, u=used: z.absolute(v.budgets[q].last_dist) <= u(v)))
        atoms.append(Atom(f"used({q}) <= 1", lambda v, u=used: u(v) <= 1))
        atoms.append(Atom(f"used({q}) >= 0", lambda v, u=used: u(v) >= 0))
        atoms.append(Atom(f"COST <= V0 + ({z.pretty(claim)}) * used({q})",
                          lambda v, u=used: v.cost <= v.entry_cost + claim * u(v)))
        if len(nums) > 1:
            atoms.append(Atom(" + ".join(f"|dist({n})|" for n in nums) + f" <= used({q})",
                              lambda v, u=used: z.sum_of(*(z.absolute(v.values[n].two - v.values[n].one)
                                                           for n in nums)) <= u(v)))
        for n in nums:
            def d(v: View, n: str = n) -> Term:
                return v.values[n].two - v.values[n].one

            atoms.append(Atom(f"|dist({n})| <= used({q})", lambda v, d=d, u=used: z.absolute(d(v)) <= u(v)))
            for price in prices:
                atoms.append(Atom(
                    f"COST + ({z.pretty(price)}) * |dist({n})| <= V0 + ({z.pretty(claim)}) * used({q})",
                    lambda v, d=d, u=used, p=price: v.cost + p * z.absolute(d(v)) <= v.entry_cost + claim * u(v),
                ))
    return atoms


def _spare_atoms(info: MechanismInfo, nums: list[str]) -> list[Atom]:
    """`dist(x) >= 1 - used(q)`: x is ahead by at least what any entry of the
    `vec[1]` input q not read yet can move (the best value of a noisy max over
    `vec[1]`, once the draw at s was shifted by the spare budget), and
    `dist(x) <= used(q)` (before it: at most what the entries read moved)."""
    atoms = []
    for q, norm in info.vectors.items():
        if norm != "1":
            continue
        for n in nums:
            def d(v: View, n: str = n) -> Term:
                return v.values[n].two - v.values[n].one

            atoms.append(Atom(f"dist({n}) >= 1 - used({q})", lambda v, q=q, d=d: d(v) >= v.budgets[q].remaining))
            atoms.append(Atom(f"dist({n}) <= used({q})", lambda v, q=q, d=d: d(v) <= 1 - v.budgets[q].remaining))
    return atoms


def _counter_atoms(ints: list[str], claim: Term, bounds: list[str]) -> list[Atom]:
    atoms: list[Atom] = []
    for n in ints:
        atoms.append(Atom(f"{n} >= 0", lambda v, n=n: v.values[n].one >= 0))
        atoms.append(Atom(f"{n} >= -1", lambda v, n=n: v.values[n].one >= -1))
        atoms.append(Atom(f"{n} >= 1", lambda v, n=n: v.values[n].one >= 1))

    def bound_atoms(n: str, text: str) -> list[Atom]:
        def x(v: View) -> Term:
            return z.to_real(v.values[n].one)

        def k(v: View) -> Term:
            return z.to_real(v.bounds[text])

        return [
            Atom(f"{n} <= {text}", lambda v: x(v) <= k(v)),
            Atom(f"{n} < {text}", lambda v: x(v) < k(v)),
            Atom(f"COST <= V0 + (claim - V0) * {n} / ({text})",
                 lambda v: v.cost <= v.entry_cost + (claim - v.entry_cost) * x(v) / k(v)),
            Atom(f"COST <= V0 + claim * {n} / ({text})",
                 lambda v: v.cost <= v.entry_cost + claim * x(v) / k(v)),
        ]

    for n in ints:
        for text in bounds:
            atoms += bound_atoms(n, text)
    return atoms


def _int_relations(info: MechanismInfo, ints: list[str]) -> list[Atom]:
    atoms: list[Atom] = []
    for a in ints:
        for b in ints:
            if a == b:
                continue
            atoms.append(Atom(f"{a} < {b}", lambda v, a=a, b=b: v.values[a].one < v.values[b].one))
            atoms.append(Atom(f"{a} <= {b}", lambda v, a=a, b=b: v.values[a].one <= v.values[b].one))
            atoms.append(Atom(f"{a}' < {b}'", lambda v, a=a, b=b: v.values[a].two < v.values[b].two))
        for c in sorted(info.int_constants):
            atoms.append(Atom(
                f"({a} == {c}) == ({a}' == {c})",
                lambda v, a=a, c=c: (v.values[a].one == c) == (v.values[a].two == c),
            ))
    return atoms


def _pointwise_atoms(ints: list[str], s: Term) -> list[Atom]:
    atoms: list[Atom] = []
    for n in ints:
        atoms += [
            Atom(f"{n} < s", lambda v, n=n: v.values[n].one < s),
            Atom(f"{n} <= s", lambda v, n=n: v.values[n].one <= s),
            Atom(f"{n} != s", lambda v, n=n: v.values[n].one != s),
            Atom(f"{n}' < s", lambda v, n=n: v.values[n].two < s),
            Atom(f"{n}' == s", lambda v, n=n: v.values[n].two == s),
            Atom(f"{n} == s ==> {n}' == s", lambda v, n=n: z.implies(v.values[n].one == s, v.values[n].two == s)),
        ]
    return atoms


def _cost_atoms(claim: Term) -> list[Atom]:
    return [
        Atom("COST <= claim", lambda v: v.cost <= claim),
        Atom("COST == 0", lambda v: v.cost == 0),
        Atom("COST == V0", lambda v: v.cost == v.entry_cost),
        Atom("COST <= V0", lambda v: v.cost <= v.entry_cost),
        Atom("COST >= V0", lambda v: v.cost >= v.entry_cost),
        Atom("V0 <= claim", lambda v: v.entry_cost <= claim),
        Atom("V0 >= 0", lambda v: v.entry_cost >= 0),
    ]


def noises_in(loop: While) -> list:
    """The draws of one loop trip: in the guard and in the body."""
    from fuzzpy.language.syntax import Noise

    tops = [loop.cond] + [top for s in statements(loop.body) for top in stmt_expressions(s)]
    return [e for top in tops for e in sub_expressions(top) if isinstance(e, Noise)]
