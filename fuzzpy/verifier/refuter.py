"""Counterexamples: two neighbouring short inputs and an output whose exact
probabilities differ by more than e^eps.

Search order (verifier.md, "Refuting"): input lengths 1, 2, 3, 4; 0/1
patterns; their worst neighbours (every entry moved by +1 or -1, or a single
entry moved, as the norm allows); outputs enumerated from the paths of the
first run (discrete values as they are, continuous values at a few points
around the noise-free value). Parameters get small concrete values (the ones
in the claim first 1, then 2). Probabilities come from `integrate.path_mass`.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from fuzzpy.syntax import Expr, Forall, NumLit, Var
from fuzzpy.verifier.concrete import Run, Stuck, Value, run_all
from fuzzpy.verifier.integrate import ZERO, Linear, Mass, Unsupported, path_mass
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.relation import evaluate, neighbours, within_norm
from fuzzpy.verifier.walk import statements, stmt_expressions, sub_expressions

MAX_LENGTH = 6


@dataclass(frozen=True)
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


def parameter_choices(info: MechanismInfo) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    """Small concrete parameter values satisfying `requires` (with neighbour distances).

    Every claim parameter (eps) at 1, then at 1/2 or 2 one at a time; integers
    at 1 (fewest answers: the shortest counterexamples), then 2, and other
    numbers at 0 (a private one also at the literals of the body).
    """
    from fuzzpy.verifier.prover import private_scalars

    claim = _claim_params(info)
    private = private_scalars(info)
    names = list(info.scalars)
    base: dict[str, Fraction] = {}
    variations: list[tuple[str, Fraction]] = []
    for name in names:
        sort = info.scalars[name]
        if name in info.constants:
            base[name] = info.constants[name]
        elif name in claim and sort == "int":
            base[name] = Fraction(1)
            variations.append((name, Fraction(2)))
        elif name in claim:
            base[name] = Fraction(1)
            variations += [(name, Fraction(1, 2)), (name, Fraction(2))]
        elif sort == "int":
            base[name] = Fraction(1)
            variations.append((name, Fraction(2)))  # N = 2: two answers may cost twice
        elif sort == "bool":
            base[name] = Fraction(1)
        else:
            base[name] = Fraction(0)
            variations.append((name, Fraction(1)))  # when `requires x > 0` rules out 0
            if name in private:
                # a private number compared with a literal (`x >= 3`) differs from
                # its neighbour only next to that literal: try the literals too
                variations += [(name, value) for value in _body_literals(info) if value != 0]
    found = []
    for change in [None, *variations]:
        env = dict(base)
        if change is not None:
            env[change[0]] = change[1]
        for dists in _scalar_shifts(names, private):
            if _requires_hold(info, env, dists):
                found.append((env, {n: env[n] + dists[n] for n in names}))
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


def _body_literals(info: MechanismInfo) -> list[Fraction]:
    """The numeric literals of the mechanism's statements, in order, without repeats."""
    seen: dict[Fraction, None] = {}
    for stmt in statements(info.decl.body):
        for expr in stmt_expressions(stmt):
            for e in sub_expressions(expr):
                if isinstance(e, NumLit):
                    seen.setdefault(e.value, None)
    return list(seen)


def _requires_hold(info: MechanismInfo, env: dict[str, Fraction], dists: dict[str, Fraction]) -> bool:
    try:
        return all(bool(_evaluate(r, env, dists)) for r in info.decl.requires if not isinstance(r, Forall))
    except (KeyError, ZeroDivisionError, TypeError):
        return False


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
    every = [tuple(Fraction(b) for b in bits) for bits in itertools.product((0, 1), repeat=length)]
    if length <= 2:
        return every
    if length >= 5:
        return [every[0]]
    alternating = tuple(Fraction(i % 2) for i in range(length))
    return [every[0], every[-1], alternating]


def _deltas(length: int) -> list[tuple[Fraction, ...]]:
    signs = [tuple(Fraction(s) for s in combo) for combo in itertools.product((1, -1), repeat=length)]
    singles = []
    for i in range(length):
        for s in (1, -1):
            singles.append(tuple(Fraction(s) if j == i else Fraction(0) for j in range(length)))
    return signs + [d for d in singles if d not in signs]


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
        for value, target in zip(released, output, strict=False):
            if isinstance(value, Linear):
                if isinstance(target, bool) or not isinstance(target, Fraction):
                    matched = False
                    break
                equations.append((value, target))
            elif isinstance(target, Fraction) and not isinstance(value, bool) and equations is not None:
                if value != target:
                    matched = False
                    break
            elif value != target:
                matched = False
                break
        if matched:
            total = total.plus(path_mass(run.draws, run.constraints, equations))
    return total


def _output_points(runs: list[Run]) -> list[tuple[object, ...]]:
    points: list[tuple[object, ...]] = []
    for run in runs:
        released = run.released
        if not any(isinstance(v, Linear) for v in released):
            point = tuple(released)
            if point not in points:
                points.append(point)
            continue
        for k in (-3, 0, 3):
            point = tuple(_place(v, run, k) for v in released)
            if point not in points:
                points.append(point)
    return points


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
        self.cache: dict[tuple, list[Run]] = {}
        self.masses: dict[tuple, Mass] = {}
        self.point_cache: dict[tuple, list[tuple[object, ...]]] = {}

    def runs(self, params: dict[str, Fraction], vectors: dict[str, tuple[Fraction, ...]]) -> list[Run]:
        key = (tuple(sorted(params.items())), tuple(sorted(vectors.items())))
        if key not in self.cache:
            self.cache[key] = run_all(self.info, dict(params), {k: list(v) for k, v in vectors.items()})
        return self.cache[key]

    def mass(self, params: dict[str, Fraction], vectors: dict, point: tuple[object, ...]) -> Mass:
        key = (tuple(sorted(params.items())), tuple(sorted(vectors.items())), point)
        if key not in self.masses:
            runs = run_all(self.info, dict(params), {k: list(v) for k, v in vectors.items()}, target=point)
            self.masses[key] = _output_mass(runs, point)
        return self.masses[key]

    def points(self, params: dict[str, Fraction], vectors: dict) -> list[tuple[object, ...]]:
        key = (tuple(sorted(params.items())), tuple(sorted(vectors.items())))
        if key not in self.point_cache:
            self.point_cache[key] = _output_points(self.runs(params, vectors))
        return self.point_cache[key]

    def compare(self, p1: dict, v1: dict, p2: dict, v2: dict, point: tuple[object, ...],
                eps: Fraction) -> Counterexample | None:
        """A counterexample at ``point`` in either direction, if the ratio exceeds e^eps."""
        m1, m2 = self.mass(p1, v1, point), self.mass(p2, v2, point)
        for (pa, va, ma), (pb, vb, mb) in (((p1, v1, m1), (p2, v2, m2)), ((p2, v2, m2), (p1, v1, m1))):
            if ma.value == 0:
                continue
            infinite = mb.value == 0 or mb.atoms < ma.atoms
            if not infinite and (ma.atoms > mb.atoms or ma.value <= mb.value * mpmath.exp(_mp(eps)) * _SLACK):
                continue
            density = any(isinstance(x, Fraction) for x in point) and _has_density(self.runs(p1, v1))
            return Counterexample(pa, pb, {k: list(v) for k, v in va.items()}, {k: list(v) for k, v in vb.items()},
                                  point, eps, ma.value, mb.value, density, infinite)
        return None


_SLACK = 1 + mpmath.mpf(10) ** -20  # far above the 50-digit rounding of the closed forms


def _has_density(runs: list[Run]) -> bool:
    return any(isinstance(v, Linear) for run in runs for v in run.released)


def _mp(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def refute(info: MechanismInfo, seconds: float, max_length: int = MAX_LENGTH) -> tuple[Counterexample | None, str]:
    """Search for a confirmed counterexample; the string says why none was found."""
    deadline = time.process_time() + seconds  # CPU time: verdicts must not depend on machine load
    search = _Search(info, deadline)
    skipped = 0
    names = list(info.vectors)
    lengths = range(1, max_length + 1) if names else range(0, 1)
    for params, neighbour_params in parameter_choices(info):
        eps = _claim_value(info, params)
        if eps is None or eps < 0:  # a claim of 0 is refuted by any ratio above 1
            continue
        for length in lengths:
            for base in _patterns(length) if names else [()]:
                v1 = {n: base if i == 0 else tuple(Fraction(0) for _ in base) for i, n in enumerate(names)}
                try:
                    points = search.points(params, v1)
                except (Stuck, Unsupported, ArithmeticError, RecursionError):
                    skipped += 1
                    continue
                for tier in range(4):
                    best: Counterexample | None = None
                    for point in points:
                        for delta in _deltas_for(info, names, point, length, tier):
                            if time.process_time() > deadline:
                                return None, "time limit reached while searching for a counterexample"
                            v2 = dict(v1)
                            if names:
                                v2[names[0]] = tuple(b + d for b, d in zip(base, delta, strict=False))
                            if not neighbours(info, params, neighbour_params,
                                              {k: list(v) for k, v in v1.items()},
                                              {k: list(v) for k, v in v2.items()}):
                                continue  # not a pair the claim speaks about
                            try:
                                found = search.compare(params, v1, neighbour_params, v2, point, eps)
                            except (Stuck, Unsupported, ArithmeticError, RecursionError):
                                skipped += 1
                                continue
                            if found is not None and (best is None or found.log_ratio > best.log_ratio):
                                best = found
                    if best is not None:
                        return best, ""
    note = f" ({skipped} candidates could not be evaluated exactly)" if skipped else ""
    return None, f"no counterexample among inputs of length up to {max_length}{note}"


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
    elif tier == 2:
        for i in range(length):
            for sign in (one, minus):
                moves.append(tuple(sign if j == i else Fraction(0) for j in range(length)))
    elif tier == 3 and length <= 3:
        moves += [tuple(Fraction(s) for s in signs) for signs in itertools.product((1, -1), repeat=length)]
    unique = list(dict.fromkeys(moves))
    return [d for d in unique if _vector_ok(info, names[0], d)]


def _claim_value(info: MechanismInfo, params: dict[str, Fraction]) -> Fraction | None:
    try:
        value = _evaluate(info.decl.privacy, params, {})
    except (KeyError, ZeroDivisionError, TypeError):
        return None
    return value if isinstance(value, Fraction) and not isinstance(value, bool) else None
