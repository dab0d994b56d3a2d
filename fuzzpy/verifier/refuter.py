"""Counterexamples: two neighbouring short inputs and an output whose exact
probabilities differ by more than e^eps.

Search order (verifier.md, "Refuting"): input lengths 1, 2, 3, 4; 0/1
patterns; their worst neighbours (every entry moved by +1 or -1, or a single
entry moved, as the norm allows); outputs enumerated from the paths of the
first run (discrete values as they are, continuous values at a few points
around the noise-free value). Parameters get small concrete values (the ones
in the claim first 1, then 2). Probabilities come from `integrate.path_mass`.
A last phase (issue 23) tries what leaks on unseen programs needed: vector
entries at the program's own literals, shaped vectors (a single 1, ramps),
fractional and mixed-sign moves, scalar moves by the literals of their
bounds and by halves, integer parameters one past a literal of the body.

Also (issue 23): a public number is tried away from 0 and 1 (2, 1/2, -5, 4,
1/4, the literals of its `requires`), each value filtered by the `requires`
about that parameter alone; a claim parameter at the literals it is compared
with; a claim below 0 is refuted by any output (the event "any output" has
probability 1 under both inputs); `vec[2]` inputs move every entry by just
under 1/sqrt(n); two private vectors move together and against each other;
lengths past 6 that the program writes, or that its `len(q)` tests compare
with (values computed by its public code included), are searched with every
move; a long input whose paths are too many to list gives the outputs of
its first paths, depth first, each output's probability still exact.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from fractions import Fraction

import mpmath

from fuzzpy.language.syntax import Expr, Forall, MechanismDecl, NumLit, TyName, Var
from fuzzpy.support.records import frozen
from fuzzpy.verifier.concrete import Run, Stuck, Value, run_all
from fuzzpy.verifier.integrate import ZERO, Linear, Mass, Unsupported, path_mass
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.relation import evaluate, neighbours, within_norm
from fuzzpy.verifier.walk import statements, stmt_expressions, sub_expressions

MAX_LENGTH = 6
MAX_RUNS = 400  # paths listed per input; beyond, outputs are evaluated one by one
MAX_TARGET_RUNS = 20_000


@frozen
class Window:
    """The event "every continuous released value within [t + low, t + high] of
    its target t, the discrete ones equal", and its two probabilities."""

    low: Fraction
    high: Fraction
    p_inputs: mpmath.mpf
    p_neighbour: mpmath.mpf


@frozen
class Counterexample:
    params: dict[str, Fraction]
    neighbour_params: dict[str, Fraction]
    inputs: dict[str, list[Fraction]]
    neighbour: dict[str, list[Fraction]]
    output: tuple[object, ...]
    eps: Fraction
    p_inputs: mpmath.mpf
    p_neighbour: mpmath.mpf
    density: bool  # probabilities are densities (continuous output)
    infinite: bool  # the neighbour cannot produce the output at all
    #: `privacy (eps, delta)`: the claim's delta; p_inputs is then a lower and p_neighbour an upper
    #: bound, and the refutation is p_inputs > e^eps p_neighbour + delta (gauss_refuter.py)
    delta: Fraction | None = None
    #: an (eps, delta) refutation whose probabilities are exact closed forms (the
    #: Laplace refuter's), not a lower and an upper bound (gauss_refuter.py)
    exact: bool = False
    #: the `bool` scalar parameters (held as 0/1 by the search, printed true/false)
    flags: tuple[str, ...] = ()
    #: a density's refutation checked on an event of positive probability
    #: (`confirm_density`): the window around each continuous released value,
    #: and the event's probabilities on the inputs and on the neighbour
    window: Window | None = None

    @property
    def ratio(self) -> float:
        if self.infinite:
            return math.inf
        return float(self.p_inputs / self.p_neighbour)

    @property
    def log_ratio(self) -> float:
        if self.infinite:
            return math.inf
        return float(mpmath.log(self.p_inputs) - mpmath.log(self.p_neighbour))


# ---------------------------------------------------------------- concrete expressions


def _evaluate(expr: Expr, env: dict[str, Fraction], dists: dict[str, Fraction]) -> Fraction | bool:
    """A precondition or claim at concrete parameters (no vectors known yet)."""
    return evaluate(expr, env, dists)  # type: ignore[arg-type]


def _claim_params(info: MechanismInfo) -> set[str]:
    return {e.name for e in sub_expressions(info.decl.privacy) if isinstance(e, Var)}


def parameter_choices(info: MechanismInfo, limit: int = 48) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    """Small concrete parameter values satisfying `requires` (with neighbour distances).

    Each parameter has a short list of values, its base value first: a claim
    parameter (eps) 1, 1/2, 2; an integer 1, 2, 3; another number 0, 1; and
    for a number compared with a literal of the body (`if (t > 5)`) that
    literal and its neighbours 1 away, so both sides of the test are reached.
    Combinations are tried by how many parameters leave their base value
    (one, then two, ...), up to ``limit``. A `requires` over `len(q)` is
    checked later, once the input length is chosen.
    """
    from fuzzpy.verifier.prover import private_scalars

    claim = _claim_params(info)
    private = private_scalars(info)
    names = list(info.scalars)
    literals = _compared_literals(info)
    scaling = _scaling_names(info)
    options: dict[str, list[Fraction]] = {}
    for name in names:
        sort = info.scalars[name]
        if name in info.constants:
            values = [info.constants[name]]
        elif name in claim and sort == "int":
            values = [Fraction(1), Fraction(2)]
        elif name in claim:
            # `if (eps < 7) { return 0; }`: the body is reached only at 7 and above; `if (eps <
            # 0.1)`: only below 0.1, which v - 1 misses (a review's leaks at small eps): v / 2 too
            near = [v + d for v in literals.get(name, []) for d in (Fraction(0), Fraction(1), Fraction(-1))]
            near += [v / 2 for v in literals.get(name, [])]
            values = [Fraction(1), Fraction(1, 2), Fraction(2)] + [v for v in near if v > 0]
        elif sort == "int":
            # N = 2: two answers may cost twice; `if (N > 3)`: both sides of the test
            near = [v + d for v in literals.get(name, []) for d in (Fraction(0), Fraction(1), Fraction(-1))]
            values = [Fraction(1), Fraction(2), Fraction(3)] + [v for v in near if v.denominator == 1]
        elif sort == "bool":
            values = [Fraction(1)]
        else:
            # a number compared with a literal (`x >= 3`) changes behaviour only next to it; a
            # public factor or scale (`c * q[0]`, `lap(c / eps)`, an `eps` the claim does not
            # name) leaks at a value above or below 1, or negative (`requires t <= 1` only)
            near = [v + d for v in literals.get(name, []) for d in (Fraction(0), Fraction(1), Fraction(-1))]
            near += [v / 2 for v in literals.get(name, [])]
            body = _body_literals(info) if name in private else []
            wider = list(OTHER_VALUES) if name in scaling else []
            values = [Fraction(0), Fraction(1)] + near + [v for v in body if v != 0] + wider
        admissible = [v for v in dict.fromkeys(values) if _alone_ok(info, name, v)]
        options[name] = admissible or list(dict.fromkeys(values))[:1]
    # which parameters to vary first: counts (N), then the claim (eps), then the rest
    order = sorted(names, key=lambda n: (0 if info.scalars[n] == "int" and n not in claim
                                         else 1 if n in literals else 2 if n in claim else 3))
    found = []
    for varied in _combinations(order, options, limit):
        env = {n: varied[n] for n in names}  # declaration order, as the counterexample shows them
        for dists in _scalar_shifts(names, private):
            if _requires_hold(info, env, dists):
                found.append((env, {n: env[n] + dists[n] for n in names}))
    return found


def extra_choices(info: MechanismInfo, choices: list[tuple[dict[str, Fraction], dict[str, Fraction]]],
                  ) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    """Parameter pairs for the last phase of the search (issue 23), after the
    ordinary ones: each private scalar moved by the literals of its bound and
    by halves (`_bound_moves`) at the first few parameter values, and each
    integer parameter one past a literal of the body (`var m = k; if (m > 3)`
    compares a copy of k with 3: k = 4), the others at their base values."""
    from fuzzpy.verifier.prover import private_scalars

    private = private_scalars(info)
    names = list(info.scalars)
    envs = list(dict.fromkeys(tuple(sorted(env.items())) for env, _ in choices))[:WIDE]
    found = []
    moves = _bound_moves(info, private)
    for key in envs:
        env = dict(key)
        for name, values in moves.items():
            for move in values:
                dists = {n: move if n == name else Fraction(0) for n in names}
                if abs(move) not in (0, 1, 2) and _requires_hold(info, env, dists):
                    found.append((env, {n: env[n] + dists[n] for n in names}))
    if envs:
        base = dict(envs[0])
        past = [v + 1 for v in _body_literals(info) if v.denominator == 1 and 3 <= v <= 64]
        for name in names:
            if info.scalars[name] != "int" or name in info.constants or name in _claim_params(info):
                continue
            for value in past:
                env = dict(base, **{name: value})
                for dists in _scalar_shifts(names, private):
                    if _requires_hold(info, env, dists):
                        found.append((env, {n: env[n] + dists[n] for n in names}))
    seen = {(tuple(sorted(a.items())), tuple(sorted(b.items()))) for a, b in choices}
    unique = []
    for pair in found:
        key = (tuple(sorted(pair[0].items())), tuple(sorted(pair[1].items())))
        if key not in seen:
            seen.add(key)
            unique.append(pair)
    return unique


#: values of a public number parameter tried after its base values (0, 1, the literals it is compared with)
OTHER_VALUES = (Fraction(2), Fraction(1, 2), Fraction(-5), Fraction(4), Fraction(1, 4))


def _scaling_names(info: MechanismInfo) -> set[str]:
    """Names that scale something: inside a noise scale (`lap(c / eps)`) or
    an operand of `*` or `/` (`c * q[0]`, `q[0] / c`), where a value away
    from 0 and 1 changes how far the output moves. A threshold only
    compared with (`q[i] + eta >= t`) is not one."""
    from fuzzpy.language.syntax import Binary, Noise

    found: set[str] = set()
    for stmt in statements(info.decl.body):
        for top in stmt_expressions(stmt):
            for e in sub_expressions(top):
                inner: list[Expr] = []
                if isinstance(e, Noise):
                    inner = [e.scale]
                elif isinstance(e, Binary) and e.op in ("*", "/"):
                    inner = [e.left, e.right]
                found.update(v.name for part in inner for v in sub_expressions(part) if isinstance(v, Var))
    return found


def _conjuncts(expr: Expr) -> list[Expr]:
    from fuzzpy.language.syntax import Binary

    if isinstance(expr, Binary) and expr.op == "&&":
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr]


def _alone_ok(info: MechanismInfo, name: str, value: Fraction) -> bool:
    """The `requires` conjuncts about this parameter alone (`c > 0`, `t <= 1`)
    hold at ``value``: a value they exclude is never combined with others."""
    from fuzzpy.language.syntax import Dist

    for req in info.decl.requires:
        for part in _conjuncts(req):
            parts = list(sub_expressions(part))
            if any(isinstance(e, (Dist, Forall)) for e in parts):
                continue
            if {e.name for e in parts if isinstance(e, Var)} != {name}:
                continue
            try:
                if not bool(evaluate(part, {name: value}, {})):
                    return False
            except (KeyError, ZeroDivisionError, TypeError):
                continue
    return True


def _combinations(names: list[str], options: dict[str, list[Fraction]], limit: int) -> list[dict[str, Fraction]]:
    """Assignments in order of how many names leave their first value."""
    found: list[dict[str, Fraction]] = []
    for changed in range(len(names) + 1):
        for subset in itertools.combinations(names, changed):
            choices = [options[n][1:] if n in subset else options[n][:1] for n in names]
            for values in itertools.product(*choices):
                found.append(dict(zip(names, values, strict=True)))
                if len(found) >= limit:
                    return found
    return found


def _compared_literals(info: MechanismInfo) -> dict[str, list[Fraction]]:
    """Literals a parameter is compared with in the body or the `requires` (`t > 5` gives t: [5])."""
    from fuzzpy.language.syntax import Binary, Unary

    def literal(e: Expr) -> Fraction | None:
        if isinstance(e, NumLit):
            return e.value
        if isinstance(e, Unary) and e.op == "-" and isinstance(e.operand, NumLit):
            return -e.operand.value
        return None

    found: dict[str, list[Fraction]] = {}
    tops = [top for stmt in statements(info.decl.body) for top in stmt_expressions(stmt)]
    tops += [r for r in info.decl.requires if not isinstance(r, Forall)]  # `requires c >= 3`: c = 3, 4, 2
    for top in tops:
        for e in sub_expressions(top):
            if not (isinstance(e, Binary) and e.op in ("<", "<=", ">", ">=", "==", "!=")):
                continue
            for side, other in ((e.left, e.right), (e.right, e.left)):
                value = literal(other)
                if isinstance(side, Var) and side.name in info.scalars and value is not None:
                    found.setdefault(side.name, []).append(value)
    return found


def _scalar_shifts(names: list[str], private: set[str]) -> list[dict[str, Fraction]]:
    """Neighbour distances of the private scalars: moves by 1 first, then by 2
    (`requires abs(dist(x)) <= 2` allows them; the precondition filters)."""
    small = [Fraction(-1), Fraction(0), Fraction(1)]
    large = [Fraction(-2), *small, Fraction(2)]
    first = list(itertools.product(*(small if n in private else [Fraction(0)] for n in names)))
    second = [s for s in itertools.product(*(large if n in private else [Fraction(0)] for n in names))
              if any(abs(d) == 2 for d in s)]
    return [dict(zip(names, shifts, strict=True)) for shifts in first + second]


def _bound_moves(info: MechanismInfo, private: set[str]) -> dict[str, list[Fraction]]:
    """Fractional moves (+-1/2) and the positive literals of the `requires`
    that bound dist(x) (`abs(dist(x)) <= 3` gives +-3), for each private scalar:
    a leak may need the whole allowed move, or only part of it."""
    from fuzzpy.language.syntax import Dist

    found: dict[str, list[Fraction]] = {}
    for name in private:
        values = [Fraction(1, 2)]
        for req in info.decl.requires:
            parts = list(sub_expressions(req))
            if any(isinstance(e, Dist) and isinstance(e.expr, Var) and e.expr.name == name for e in parts):
                values += [e.value for e in parts if isinstance(e, NumLit) and 0 < e.value <= 64]
        found[name] = [v for value in dict.fromkeys(values) for v in (value, -value)]
    return found


def _body_literals(info: MechanismInfo) -> list[Fraction]:
    """The numeric literals of the mechanism's statements, in order, without repeats."""
    seen: dict[Fraction, None] = {}
    for stmt in statements(info.decl.body):
        for expr in stmt_expressions(stmt):
            for e in sub_expressions(expr):
                if isinstance(e, NumLit):
                    seen.setdefault(e.value, None)
    return list(seen)


def _requires_hold(info: MechanismInfo, env: dict[str, Fraction], dists: dict[str, Fraction],
                   length: int | None = None) -> bool:
    """The `requires` (but `forall`s) at these parameters; those over a vector's
    length only once ``length`` is given (each vector then has that length)."""
    vectors = {n: [Fraction(0)] * length for n in info.vectors} if length is not None else None
    try:
        for r in info.decl.requires:
            if isinstance(r, Forall):
                continue
            if vectors is None and _mentions_vector(r, info):
                continue
            if not bool(evaluate(r, env, dists, vectors)):
                return False
        return True
    except (KeyError, ZeroDivisionError, TypeError):
        return False


def _mentions_vector(expr: Expr, info: MechanismInfo) -> bool:
    return any(isinstance(e, Var) and e.name in info.vectors for e in sub_expressions(expr))


def _vector_ok(info: MechanismInfo, name: str, delta: tuple[Fraction, ...]) -> bool:
    """Neighbour distance allowed by the norm and by `requires forall i. ...`
    (a first filter; `relation.neighbours` decides on the whole pair)."""
    if not within_norm(info.vectors[name], list(delta)):
        return False
    zeros = {n: [Fraction(0)] * len(delta) for n in info.vectors}
    for req in info.decl.requires:
        if isinstance(req, Forall):
            try:
                if not evaluate(req, {}, {}, zeros, {**zeros, name: list(delta)}):
                    return False
            except (KeyError, TypeError):
                return False
    return True


def _patterns(length: int) -> list[tuple[Fraction, ...]]:
    """0/1 vectors; from length 3 on only the constant and alternating ones."""
    if length <= 2:
        return [tuple(Fraction(b) for b in bits) for bits in itertools.product((0, 1), repeat=length)]
    zeros, ones = (Fraction(0),) * length, (Fraction(1),) * length
    if length >= 5:
        return [zeros, ones]
    return [zeros, ones, tuple(Fraction(i % 2) for i in range(length))]


SHAPED_LONGEST = 4  # beyond, shaped vectors cost more than they found on the corpora


def _shaped_patterns(length: int) -> list[tuple[Fraction, ...]]:
    """Vectors beyond the constant and alternating ones (lengths 3, 4 and those past
    `MAX_LENGTH` the program names): a single
    1 first or last, and the ramps up and down (0, 1, 2, ...): a noisy max or
    a running comparison decides differently on them."""
    if length < 3 or MAX_LENGTH >= length > SHAPED_LONGEST:  # a length the program names: worth them
        return []
    zeros = [Fraction(0)] * length
    ramp = tuple(Fraction(i) for i in range(length))
    found = [tuple([Fraction(1)] + zeros[1:]), tuple(zeros[:-1] + [Fraction(1)]), ramp, ramp[::-1]]
    ordinary = set(_patterns(length))
    return [p for p in dict.fromkeys(found) if p not in ordinary]


def _literal_patterns(length: int, literals: tuple[Fraction, ...]) -> list[tuple[Fraction, ...]]:
    """For each of the program's own literals v (`if (q[0] > 100)`): the
    constant vector v and v in the first entry only, and v + 1 likewise (a
    strict test is crossed by one of them)."""
    found: list[tuple[Fraction, ...]] = []
    for literal in literals:
        for v in (literal, literal + 1):
            found += [(v,) * length, (v,) + (Fraction(0),) * (length - 1)]
    ordinary = set(_patterns(length))
    return [p for p in dict.fromkeys(found) if len(p) == length and p not in ordinary]


def _entry_literals(info: MechanismInfo) -> tuple[Fraction, ...]:
    """The body's numeric literals other than 0 and 1 (at most three): values
    worth putting in a vector's entries."""
    values = [v for v in _body_literals(info) if v not in (0, 1) and abs(v) <= 10**6]
    return tuple(values[:3])


# ---------------------------------------------------------------- masses


def _signature(value: Value) -> object:
    return "*" if isinstance(value, Linear) else value


def _output_mass(runs: list[Run], output: tuple[object, ...]) -> Mass:
    total = ZERO
    for run in runs:
        released = run.released
        if len(released) != len(output):
            continue
        equations = []
        matched = True
        exact = 0  # values released without noise: point masses, like constant equations
        for value, target in zip(released, output, strict=False):
            if isinstance(value, Linear):
                if isinstance(target, bool) or not isinstance(target, Fraction):
                    matched = False
                    break
                equations.append((value, target))
            elif value != target or isinstance(value, bool) != isinstance(target, bool):
                matched = False
                break
            else:
                exact += 1
        if matched:
            mass = path_mass(run.draws, run.constraints, equations, run.strictness)
            total = total.plus(Mass(mass.atoms + exact, mass.value) if mass.value else mass)
    return total


def _window_mass(runs: list[Run], output: tuple[object, ...], low: Fraction, high: Fraction) -> mpmath.mpf:
    """P[each released number within [t + low, t + high] of its target t, the
    other released values equal to theirs]: a sum over the paths of integrals
    over full-dimensional regions (no draw pinned), so a border counts nowhere."""
    total = mpmath.mpf(0)
    for run in runs:
        released = run.released
        if len(released) != len(output):
            continue
        extra: list[Linear] = []
        inside = True
        for value, target in zip(released, output, strict=True):
            number = target if isinstance(target, Fraction) and not isinstance(target, bool) else None
            if isinstance(value, Linear) and number is not None:
                extra += [value - Linear.of(number + low), Linear.of(number + high) - value]
            elif isinstance(value, Fraction) and not isinstance(value, bool) and number is not None:
                inside = number + low <= value <= number + high
            else:
                inside = value == target and isinstance(value, bool) == isinstance(target, bool)
            if not inside:
                break
        if inside:
            total += path_mass(run.draws, run.constraints + extra, [], run.strictness + [False] * len(extra)).value
    return total


def _output_points(runs: list[Run]) -> list[tuple[object, ...]]:
    """Outputs worth comparing: each discrete one as it is, a continuous one at
    a few points around its noise-free value; those with the fewest
    continuous values first (the cheapest to integrate, the least diluted)."""
    points: dict[tuple[object, ...], int] = {}
    for run in runs:
        released = run.released
        continuous = sum(isinstance(v, Linear) for v in released)
        for k in ((-3, 0, 3) if continuous else (0,)):
            point = tuple(_place(v, run, k) for v in released)
            points.setdefault(point, continuous)
    return sorted(points, key=lambda point: points[point])


def _place(value: Value, run: Run, k: int) -> object:
    if not isinstance(value, Linear):
        return value
    spread = max(run.draws[i].scale * abs(c) for i, c in value.coeffs)
    return value.const + k * spread


# ---------------------------------------------------------------- search


class _Search:
    def __init__(self, info: MechanismInfo, deadline: float) -> None:
        self.info = info
        self.deadline = deadline
        #: candidates looked at, and (for a search budgeted by work, not time)
        #: how many the current phase may reach
        self.ticks = 0
        self.tick_end: int | None = None
        self.cut = False  # some phase stopped at its count of candidates
        self.cache: dict[tuple, list[Run]] = {}
        self.masses: dict[tuple, Mass] = {}
        self.point_cache: dict[tuple, list[tuple[object, ...]]] = {}

    def over(self, deadline: float) -> bool:
        """The phase's budget spent: its CPU time, or its count of candidates."""
        if self.tick_end is not None and self.ticks >= self.tick_end:
            self.cut = True
            return True
        return time.process_time() > deadline

    def runs(self, params: dict[str, Fraction], vectors: dict[str, tuple[Fraction, ...]]) -> list[Run]:
        """Every path on this input (`Stuck` beyond `MAX_RUNS`: then outputs are
        evaluated one by one, each enumerating only the paths that release it)."""
        key = (tuple(sorted(params.items())), tuple(sorted(vectors.items())))
        if key not in self.cache:
            try:
                self.cache[key] = run_all(self.info, dict(params), {k: list(v) for k, v in vectors.items()},
                                          max_runs=MAX_RUNS)
            except Stuck:
                self.cache[key] = None  # type: ignore[assignment]
        if self.cache[key] is None:
            raise Stuck(f"more than {MAX_RUNS} paths")
        return self.cache[key]

    def mass(self, params: dict[str, Fraction], vectors: dict, point: tuple[object, ...]) -> Mass:
        key = (tuple(sorted(params.items())), tuple(sorted(vectors.items())), point)
        if key not in self.masses:
            long = any(len(v) > MAX_LENGTH for v in vectors.values())
            try:
                if long and (tuple(sorted(params.items())), tuple(sorted(vectors.items()))) not in self.cache:
                    raise Stuck("a long input: only the paths that release this output")
                runs = self.runs(params, vectors)  # enumerated once, reused for every output
            except Stuck:
                runs = run_all(self.info, dict(params), {k: list(v) for k, v in vectors.items()}, target=point,
                               max_runs=MAX_TARGET_RUNS)
            self.masses[key] = _output_mass(runs, point)
        return self.masses[key]

    def points(self, params: dict[str, Fraction], vectors: dict) -> list[tuple[object, ...]]:
        key = (tuple(sorted(params.items())), tuple(sorted(vectors.items())))
        if key not in self.point_cache:
            long = any(len(v) > MAX_LENGTH for v in vectors.values())
            with contextlib.suppress(Stuck):
                # a long input: the simplest outputs (the same answer throughout) first
                self.point_cache[key] = self._stretched(params, vectors) if long else []
            if not self.point_cache.get(key):
                try:
                    self.point_cache[key] = _output_points(self.runs(params, vectors))
                except Stuck:
                    try:
                        self.point_cache[key] = self._stretched(params, vectors)
                    except Stuck:
                        self.point_cache[key] = self._first_paths(params, vectors)
        return self.point_cache[key]

    def _first_paths(self, params: dict[str, Fraction], vectors: dict) -> list[tuple[object, ...]]:
        """Outputs of the first `MAX_RUNS` paths, depth first, of an input with
        too many paths to list (a loop of noisy tests over 9 entries behind
        `if (len(q) >= 9)`): some outputs, not all; each one's probability is
        still computed exactly, over every path that releases it (`mass`)."""
        runs = run_all(self.info, dict(params), {k: list(v) for k, v in vectors.items()},
                       max_runs=MAX_RUNS, first=True)
        return _output_points(runs)

    def _stretched(self, params: dict[str, Fraction], vectors: dict) -> list[tuple[object, ...]]:
        """Outputs of a long input with too many paths to list: those of its
        one-entry prefix with the per-entry answer repeated (`no, no, ..., no`)
        and with a different last answer (`no, ..., no, yes`), when the
        mechanism releases one answer per entry after a fixed prefix."""
        if self.info.result_sort != "stream" or len(vectors) != 1:
            raise Stuck("too many paths to list the outputs")
        (name, values), = vectors.items()
        length = len(values)
        short = [self.points(params, {name: values[:k]}) for k in (1, 2)]
        if not short[0] or not all(short[0]) or {len(p) for p in short[1]} != {len(p) + 1 for p in short[0]}:
            raise Stuck("too many paths to list the outputs")
        prefixes = list(dict.fromkeys(p[:-1] for p in short[0]))
        answers = list(dict.fromkeys(p[-1] for p in short[0]))
        found: list[tuple[object, ...]] = []
        for prefix in prefixes:
            for same in answers:
                found.append(prefix + (same,) * length)
                found += [prefix + (same,) * (length - 1) + (last,) for last in answers if last != same]
        return list(dict.fromkeys(found))

    def compare(self, p1: dict, v1: dict, p2: dict, v2: dict, point: tuple[object, ...],
                eps: Fraction, delta: Fraction | None = None) -> Counterexample | None:
        """A counterexample at ``point`` in either direction, if the ratio exceeds e^eps
        (with ``delta``, an (eps, delta) claim: P1 > e^eps P2 + delta)."""
        m1, m2 = self.mass(p1, v1, point), self.mass(p2, v2, point)
        for (pa, va, ma), (pb, vb, mb) in (((p1, v1, m1), (p2, v2, m2)), ((p2, v2, m2), (p1, v1, m1))):
            if ma.value == 0:
                continue
            if delta is not None:
                found = _approximate(pa, va, ma, pb, vb, mb, point, eps, delta)
                if found is not None:
                    return found
                continue
            infinite = mb.value == 0 or mb.atoms < ma.atoms
            if not infinite and (ma.atoms > mb.atoms or ma.value <= mb.value * mpmath.exp(_mp(eps)) * _SLACK):
                continue
            density = ma.atoms < len(point)  # some released value is continuous: a density
            window = None
            if density:
                window = self.confirm_density(pa, va, pb, vb, point, eps)
                if window is None:  # a density's ratio at one point is no refutation by itself
                    continue
            return Counterexample(pa, pb, {k: list(v) for k, v in va.items()}, {k: list(v) for k, v in vb.items()},
                                  point, eps, ma.value, mb.value, density, infinite, window=window)
        return None

    def confirm_density(self, pa: dict, va: dict, pb: dict, vb: dict, point: tuple[object, ...],
                        eps: Fraction) -> Window | None:
        """The densities' ratio re-checked on an event of positive probability: a
        density is defined only up to sets of measure zero, and a ratio of
        densities at one point (the border of a path's region, review s29b)
        refutes nothing unless the ratio holds on a neighbourhood. Every
        continuous released value in a small window around its target (both
        sides, then each side alone), integrated over the paths without pinning
        any draw (a second computation: no equation, no border counted), must
        break the claim as an event: P1 > e^eps P2 (Dwork & Roth, Def. 2.4)."""
        try:
            runs_a, runs_b = self.all_runs(pa, va), self.all_runs(pb, vb)
        except (Stuck, ArithmeticError, RecursionError):
            return None
        scales = [d.scale for run in runs_a + runs_b for d in run.draws]
        width = min(scales, default=Fraction(1)) / 10**6
        for low, high in ((-width, width), (Fraction(0), width), (-width, Fraction(0))):
            try:
                p1, p2 = _window_mass(runs_a, point, low, high), _window_mass(runs_b, point, low, high)
            except (Unsupported, ArithmeticError, RecursionError):
                return None
            if p1 > 0 and (p2 == 0 or p1 > p2 * mpmath.exp(_mp(eps)) * _SLACK):
                return Window(low, high, p1, p2)
        return None

    def all_runs(self, params: dict[str, Fraction], vectors: dict) -> list[Run]:
        """Every path on this input, as many as a target's search may list."""
        try:
            return self.runs(params, vectors)
        except Stuck:
            return run_all(self.info, dict(params), {k: list(v) for k, v in vectors.items()},
                           max_runs=MAX_TARGET_RUNS)


_SLACK = 1 + mpmath.mpf(10) ** -20  # far above the 50-digit rounding of the closed forms


def _approximate(pa: dict, va: dict, ma: Mass, pb: dict, vb: dict, mb: Mass, point: tuple[object, ...],
                 eps: Fraction, delta: Fraction) -> Counterexample | None:
    """An (eps, delta) claim broken at the output ``point`` (Dwork & Roth, Def. 2.4,
    on the event {point}): P1 > e^eps P2 + delta, P1 moved down and the right side
    up by far more than the 50-digit evaluation's error. Only an output of
    probability > 0 (every released value discrete) is an event delta speaks
    about; a density says nothing against delta."""
    if ma.atoms < len(point):
        return None
    p_b = mb.value if mb.atoms >= len(point) else mpmath.mpf(0)  # a density: the point has probability 0
    right = (mpmath.exp(_mp(eps)) * p_b + _mp(delta)) * _SLACK
    if ma.value / _SLACK <= right:
        return None
    return Counterexample(pa, pb, {k: list(v) for k, v in va.items()}, {k: list(v) for k, v in vb.items()},
                          point, eps, ma.value, p_b, False, p_b == 0, delta, exact=True)


def _mp(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def with_flags(cx: Counterexample, decl: MechanismDecl) -> Counterexample:
    """``cx`` knowing which of its scalars are `bool` parameters (review s28a: `b = 1`)."""
    from dataclasses import replace

    names = tuple(p.name for p in decl.params if isinstance(p.type, TyName) and p.type.name == "bool")
    return replace(cx, flags=names)


def refute(info: MechanismInfo, seconds: float, max_length: int = MAX_LENGTH,
           quick: bool = False, candidates: int | None = None) -> tuple[Counterexample | None, str]:
    """`_refute` at the 50 significant digits the probabilities are stated
    at, whatever precision the caller's process left mpmath at (a global
    `mp.dps` set elsewhere changed the printed ratios)."""
    with mpmath.workdps(50):
        return _refute(info, seconds, max_length, quick, candidates)


def _refute(info: MechanismInfo, seconds: float, max_length: int,
            quick: bool, candidates: int | None) -> tuple[Counterexample | None, str]:
    """Search for a confirmed counterexample; the string says why none was found.

    ``quick``: the base parameter values only (a first look: most bugs show
    on tiny inputs). Otherwise the search runs in phases (`_phases`), each
    with a share of the budget, so that no one strategy starves the others.
    ``candidates``: the budget is work, input pairs looked at (a phase may
    look at its share of them, plus what the phases before it left), and
    ``seconds`` of CPU only a safety cap over the whole search: then which
    counterexample is found, if any, does not depend on the machine's speed
    or load. Without ``candidates`` each phase gets its share of ``seconds``.
    """
    start = time.process_time()  # CPU time: less load-dependent than wall-clock time
    deadline = start + seconds
    search = _Search(info, deadline)
    skipped = 0
    names = list(info.vectors)
    choices = parameter_choices(info)
    extras = [] if quick else extra_choices(info, choices)
    longest = max_length
    spent_share = 0.0
    judged = 0  # the (parameters, length) choices whose `requires` held: those searched
    for share, plan in _phases(info, choices, names, max_length, quick, extras):
        spent_share += share
        if candidates is None:
            phase_end, search.tick_end = min(deadline, start + seconds * spent_share), None
        else:
            phase_end, search.tick_end = deadline, int(candidates * spent_share)
        for params, neighbour_params, length, *mode in plan:
            if search.over(phase_end):
                break
            eps = _claim_value(info, params)
            if eps is None:  # a claim below 0 is refuted by any output either input can produce
                continue
            if info.decl.delta is not None and _delta_value(info, params) is None:
                continue  # a delta that is not a number here: never judged as a pure claim
            if not _requires_hold(info, params, {}, length if names else None):
                continue
            longest = max(longest, length)
            judged += 1
            found, missed = _search_length(info, search, params, neighbour_params, eps, names, length, phase_end,
                                           extended=bool(mode), claim_delta=_delta_value(info, params))
            skipped += missed
            if found is not None:
                return found, ""
    if time.process_time() > deadline:
        return None, "time limit reached while searching for a counterexample"
    if judged == 0:
        what = f"input length this search tries (up to {longest})" if names else "parameter value this search tries"
        return None, f"no counterexample searched (the `requires` rule out every {what})"
    note = f" ({skipped} candidates could not be evaluated exactly)" if skipped else ""
    if search.cut:
        note += f" (the search's budget of {candidates} input pairs spent)"
    return None, f"no counterexample among inputs of length up to {longest}{note}"


SHORT = 3  # the first few parameter choices are tried at every length, the others up to this one
WIDE = 6


#: the share of the last phase (issue 23's moves), on top of the others' 1.0:
#: the phases before it keep their budgets, and a search that ends without a
#: counterexample spends a quarter more
EXTENDED_SHARE = 0.25


def _phases(info: MechanismInfo, choices: list, names: list[str], max_length: int,
            quick: bool, extras: list | None = None) -> list[tuple[float, list[tuple]]]:
    """(share of the time, [(parameters, neighbour parameters, length[, extended])]) in order.

    The last phase (not in a quick search) tries what the others do not:
    vector entries at the program's literals, fractional and mixed-sign
    moves (`_search_length` with ``extended``), the lengths beyond
    ``max_length`` the program mentions, and the parameter pairs of
    `extra_choices`."""
    if not choices:
        return []
    if not names:
        ordinary = [(1.0, [(p, n, 0) for p, n in (choices[:1] if quick else choices)])]
        return ordinary if quick or not extras else ordinary + [(EXTENDED_SHARE, [(p, n, 0) for p, n in extras])]

    def suggested(p: dict) -> list[int]:
        eps = _claim_value(info, p)
        return long_lengths(info, p, eps, max_length) if eps is not None and eps >= 0 else []

    base, other = choices[0]
    if quick:
        return [(1.0, [(base, other, n) for n in [*range(1, max_length + 1), *suggested(base)]])]
    wide, rest = choices[1:WIDE], choices[WIDE:]
    lengths = [*range(1, max_length + 1), *mentioned_lengths(info, max_length)]
    last = [(base, other, n, True) for n in lengths]
    last += [(p, n, length) for p, n in extras or [] for length in range(1, min(2, max_length) + 1)]
    written = mentioned_lengths(info, max_length)

    def longer(p: dict) -> list[int]:
        """Lengths past ``max_length``: the draws' scales need them, the program
        writes them, or its `len(q)` tests compare with them."""
        return list(dict.fromkeys([*suggested(p), *written, *observed_lengths(info, p, max_length)]))

    return [
        (0.25, [(base, other, n) for n in [*range(1, max_length + 1), *longer(base)]]),
        (0.2, [(p, n, length) for p, n in wide for length in range(1, min(SHORT, max_length) + 1)]),
        (0.15, [(p, n, length) for p, n in wide for length in longer(p)]),
        (0.15, [(p, n, length) for length in range(SHORT + 1, max_length + 1) for p, n in wide]),
        (0.15, [(p, n, length) for p, n in rest for length in range(1, min(2, max_length) + 1)]),
        (0.1, [(p, n, SHORT) for p, n in rest if max_length >= SHORT]),
        (EXTENDED_SHARE, last),
    ]


def long_lengths(info: MechanismInfo, params: dict[str, Fraction], eps: Fraction, max_length: int) -> list[int]:
    """Input lengths beyond ``max_length`` worth one try: a draw of scale b in a
    loop leaks at most 1/b per trip for inputs moved by 1, so a leak beyond
    the claim eps needs more than eps * b trips (a loop over Lap(8/eps)
    claimed eps needs 9 entries)."""
    from fuzzpy.verifier.relation import evaluate as value_of

    found: set[int] = set()
    for site in info.draws:
        if not site.in_loop:
            continue
        try:
            scale = value_of(site.noise.scale, params)
        except (KeyError, ZeroDivisionError, TypeError):
            continue
        if isinstance(scale, bool) or not isinstance(scale, Fraction) or scale <= 0:
            continue
        needed = math.floor(eps * scale) + 1
        if max_length < needed <= LONGEST:
            found.add(needed)
    return sorted(found)


LONGEST = 24


#: the longest input tried because the body compares `len(q)` with a value it computes
LONGEST_OBSERVED = 1024


def observed_lengths(info: MechanismInfo, params: dict[str, Fraction], max_length: int) -> list[int]:
    """Lengths past ``max_length`` on either side of a test of `len(q)` against
    a value the body computes (`var kk = 1; while (...) { kk = kk * 3; } if
    (len(q) < kk)`): the values it is compared with on a one-entry input."""
    from fuzzpy.verifier.concrete import length_thresholds

    if not info.vectors:
        return []
    seen = length_thresholds(info, dict(params), {n: [Fraction(0)] for n in info.vectors})
    found: set[int] = set()
    for value in seen:
        low = math.floor(value)
        found.update(n for n in (low, low + 1) if max_length < n <= LONGEST_OBSERVED)
    return sorted(found)


def mentioned_lengths(info: MechanismInfo, max_length: int) -> list[int]:
    """Lengths beyond ``max_length`` the program mentions: each integer literal
    n of the body or the `requires` (`if (len(q) < 7)`) gives n and n + 1,
    the two sides of a test against it, up to `LONGEST`."""
    tops = [t for stmt in statements(info.decl.body) for t in stmt_expressions(stmt)] + list(info.decl.requires)
    found: set[int] = set()
    for top in tops:
        for e in sub_expressions(top):
            if isinstance(e, NumLit) and e.value.denominator == 1:
                found.update(n for n in (int(e.value), int(e.value) + 1) if max_length < n <= LONGEST)
    return sorted(found)


def _search_length(info: MechanismInfo, search: _Search, params: dict, neighbour_params: dict, eps: Fraction,
                   names: list[str], length: int, deadline: float,
                   extended: bool = False, claim_delta: Fraction | None = None) -> tuple[Counterexample | None, int]:
    """Counterexamples at this length: the ordinary patterns with the moves of
    tiers 0-3; ``extended``: the ordinary patterns with tier 4 only, then the
    patterns of the program's literals with every tier."""
    skipped = 0
    if not names:
        bases: list[tuple[tuple, range]] = [((), range(4))]
    elif extended:
        # a length the program mentions past MAX_LENGTH has not been searched yet: every tier
        bases = [(p, range(4, 5) if length <= MAX_LENGTH else range(5)) for p in _patterns(length)]
        bases += [(p, range(5)) for p in _literal_patterns(length, _entry_literals(info))]
        bases += [(p, range(3)) for p in _shaped_patterns(length)]  # guided, uniform, single-entry moves
    else:
        bases = [(p, range(4)) for p in _patterns(length)]
    for base, tiers in bases:
        v1 = {n: base if i == 0 else tuple(Fraction(0) for _ in base) for i, n in enumerate(names)}
        try:
            points = search.points(params, v1)
        except (Stuck, Unsupported, ArithmeticError, RecursionError):
            skipped += 1
            continue
        for tier in tiers:
            best: Counterexample | None = None
            for point in points:
                for moved in _moved(names, _deltas_for(info, names, point, length, tier)):
                    search.ticks += 1
                    if search.over(deadline):
                        return best, skipped
                    v2 = dict(v1)
                    for name, delta in moved.items():
                        v2[name] = tuple(b + d for b, d in zip(v1[name], delta, strict=False))
                    if not neighbours(info, params, neighbour_params,
                                      {k: list(v) for k, v in v1.items()},
                                      {k: list(v) for k, v in v2.items()}):
                        continue  # not a pair the claim speaks about
                    try:
                        found = search.compare(params, v1, neighbour_params, v2, point, eps, claim_delta)
                    except (Stuck, Unsupported, ArithmeticError, RecursionError):
                        skipped += 1
                        continue
                    if found is not None and (best is None or found.log_ratio > best.log_ratio):
                        best = found
                    if best is not None and best.infinite:  # none better: the first infinite one is kept
                        return best, skipped
            if best is not None:
                return best, skipped
    return None, skipped


def _moved(names: list[str], deltas: list[tuple]) -> list[dict[str, tuple]]:
    """The move of each vector that moves: the first vector alone, and with
    two private vectors or more all of them together (`q[0] + r[0]` moves by
    2), the first against the others (`q[0] - r[0]`), then each other alone."""
    if len(names) <= 1:
        return [{n: d for n in names} for d in deltas]
    found = [{names[0]: d} for d in deltas] + [{n: d for n in names} for d in deltas]
    found += [{n: d if n == names[0] else tuple(-x for x in d) for n in names} for d in deltas]
    return found + [{name: d} for name in names[1:] for d in deltas]


def _deltas_for(info: MechanismInfo, names: list[str], point: tuple[object, ...], length: int,
                tier: int) -> list[tuple]:
    """Neighbour moves worth trying for this output, in tiers, most promising first.

    0: for a stream with one answer per entry, move "positive" answers (true or
    a released number) down and the others up, and the reverse; 1: uniform
    moves; 2: single-entry moves; 3: every sign pattern (short inputs only).
    """
    if not names:
        return [()] if tier == 0 else []
    one, minus = Fraction(1), Fraction(-1)
    moves: list[tuple[Fraction, ...]] = []
    if tier == 0 and len(point) == length and length > 0:
        guided = tuple(minus if (c is True or (isinstance(c, Fraction) and c != 0)) else one for c in point)
        moves += [guided, tuple(-d for d in guided)]
    elif tier == 1:
        moves += [tuple(one for _ in range(length)), tuple(minus for _ in range(length))]
        norms = {info.vectors[n] for n in names}
        steps = [_root_step(length)] * ("2" in norms) + [Fraction(1, length)] * ("1" in norms)
        for step in steps if length > 1 else []:  # `vec[2]`: each entry by just under 1/sqrt(n); `vec[1]`: 1/n
            moves += [tuple(step for _ in range(length)), tuple(-step for _ in range(length))]
    elif tier == 2:
        for i in range(length) if length <= MAX_LENGTH else (0, length - 1):
            for sign in (one, minus):
                moves.append(tuple(sign if j == i else Fraction(0) for j in range(length)))
    elif tier == 3 and length <= 2:
        moves += [tuple(Fraction(s) for s in signs) for signs in itertools.product((1, -1), repeat=length)]
    elif tier == 4 and length > 0:
        # fractional and mixed-sign moves: half of every entry, alternating
        # signs, and for a `vec[1]` input half a unit moved between two entries
        half = Fraction(1, 2)
        moves += [tuple(half for _ in range(length)), tuple(-half for _ in range(length))]
        moves += [tuple(one if j % 2 == 0 else minus for j in range(length)),
                  tuple(minus if j % 2 == 0 else one for j in range(length))]
        if length >= 2:
            moves += [(half, -half) + (Fraction(0),) * (length - 2), (-half, half) + (Fraction(0),) * (length - 2)]
    unique = list(dict.fromkeys(moves))
    return [d for d in unique if any(_vector_ok(info, name, d) for name in names)]


def _root_step(length: int) -> Fraction:
    """The largest multiple of 1/1000 whose square times ``length`` is at most 1
    (a `vec[2]` input's widest uniform move, 7/10 for two entries)."""
    step = Fraction(math.isqrt(10**6 // length), 1000)
    while step * step * length > 1:
        step -= Fraction(1, 1000)
    return step


def _claim_value(info: MechanismInfo, params: dict[str, Fraction]) -> Fraction | None:
    try:
        value = _evaluate(info.decl.privacy, params, {})
    except (KeyError, ZeroDivisionError, TypeError):
        return None
    return value if isinstance(value, Fraction) and not isinstance(value, bool) else None


def _delta_value(info: MechanismInfo, params: dict[str, Fraction]) -> Fraction | None:
    """The claim's delta at these parameters (`privacy (eps, delta)`), or None (a pure claim)."""
    if info.decl.delta is None:
        return None
    try:
        value = _evaluate(info.decl.delta, params, {})
    except (KeyError, ZeroDivisionError, TypeError):
        return None
    return value if isinstance(value, Fraction) and not isinstance(value, bool) else None


# ---------------------------------------------------------------- the derivation, for a reader


def derivation(info: MechanismInfo, cx: Counterexample, max_paths: int = 4) -> list[str]:
    """How the counterexample's two probabilities are computed: on each input,
    the paths that release the output, each a polyhedron over the draws (its
    branch conditions, linear in the noise) and the equations a released noisy
    value pins, integrated against the draws' densities (`integrate.path_mass`)."""
    lines = []
    for label, params, vectors in (("inputs", cx.params, cx.inputs), ("neighbour", cx.neighbour_params, cx.neighbour)):
        runs = run_all(info, dict(params), {k: list(v) for k, v in vectors.items()}, target=cx.output)
        shown = 0
        lines.append(f"    P[output | {label}] = the sum over the paths that release the output of the integral,")
        lines.append("      over the path's region, of the product of the draws' densities:")
        for run in runs:
            mass = _output_mass([run], cx.output)
            if mass.value == 0:
                continue
            shown += 1
            if shown > max_paths:
                continue
            draws = ", ".join(f"eta{k + 1} ~ {'Lap+' if d.kind == 'lapplus' else 'Lap'}({_fraction_text(d.scale)})"
                              for k, d in enumerate(run.draws))
            region = [f"{_linear_text(c)} {'>' if k in run.strict else '>='} 0" for k, c in enumerate(run.constraints)]
            pinned = [f"{_linear_text(v)} = {_fraction_text(t)}" for v, t in zip(run.released, cx.output, strict=False)
                      if isinstance(v, Linear) and isinstance(t, Fraction) and not isinstance(t, bool)]
            lines.append(f"      path {shown}: {draws or 'no draws'}")
            lines.append(f"        region: {' and '.join(region) if region else 'everywhere'}")
            if pinned:
                lines.append(f"        pinned (a density in the released value): {' and '.join(pinned)}")
            lines.append(f"        integral = {mpmath.nstr(mass.value, 12)}")
        if shown > max_paths:
            lines.append(f"      ... and {shown - max_paths} more paths")
        if shown == 0:
            lines.append("      no path releases it: the sum is empty, P = 0")
    return lines


def _fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _linear_text(form: Linear) -> str:
    pieces = []
    for k, c in form.coeffs:
        name = f"eta{k + 1}"
        body = name if abs(c) == 1 else f"{_fraction_text(abs(c))} * {name}"
        pieces.append(("-" if c < 0 else "+", body))
    if form.const != 0 or not pieces:
        pieces.append(("-" if form.const < 0 else "+", _fraction_text(abs(form.const))))
    text = ("-" if pieces[0][0] == "-" else "") + pieces[0][1]
    for sign, body in pieces[1:]:
        text += f" {sign} {body}"
    return text
