"""A statistical neighbour harness for mechanisms (issue 10, "Must show 2").

A proved mechanism is run with the runtime's mechanism interpreter (as `run`
runs it: exact arguments, exact continuous noise) on two neighbouring inputs
at the edge of its `requires`: every entry of a `vec[inf]` input moved by 1
(in several sign patterns), one entry of a `vec[1]` input moved by 1, each
private scalar moved by the most its `requires` allow. The inputs are
real-valued (0.25, 0.5, ...), not integers, so that a runtime whose noise
lives on a grid shows neighbours' outputs on different cosets.

Events: for each output coordinate, "it equals v" for discrete values and
"it is at most c" for numbers (c at quantiles of the pooled pilot samples),
and "the whole output equals o". A pilot run on every candidate pair picks
the pair and the few events with the largest empirical privacy loss; fresh
samples then bound the loss from below with Clopper-Pearson intervals (as in
tests/test_runtime_privacy.py): a mechanism meeting its claim shows a lower
bound above eps only with probability below 2 * ALPHA per event and
direction. Seeds are fixed, so the harness is deterministic.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from scipy import stats

from fuzzpy.runtime.interpreter import Interpreter
from fuzzpy.runtime.mechanisms import run_mechanism
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.syntax import Binary, MechanismDecl, Noise, NumLit, Program
from fuzzpy.verifier.model import MechanismInfo, analyse, static_constants
from fuzzpy.verifier.prover import private_scalars
from fuzzpy.verifier.relation import evaluate, neighbours

ALPHA = 1e-5
LENGTH = 3
BASE = [Fraction(1, 4), Fraction(3, 4), Fraction(1, 2), Fraction(5, 4)]
#: every sign pattern first (for a `vec[inf]` input), then one entry (for `vec[1]`)
VECTOR_MOVES = [(1, 1, 1), (-1, -1, -1), (1, 1, -1), (-1, -1, 1), (1, -1, 1), (-1, 1, -1), (1, -1, -1),
                (-1, 1, 1), (0, 1, 1), (0, -1, -1), (1, 0, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1)]
SCALAR_MOVES = [Fraction(d) for d in (2, -2, 1, -1, Fraction(1, 2), Fraction(-1, 2))]
QUANTILES = (0.05, 0.15, 0.3, 0.5, 0.7, 0.85, 0.95)

Event = tuple[str, Callable[[object], bool]]


@dataclass(frozen=True)
class Pair:
    params: dict[str, Fraction | bool]
    other_params: dict[str, Fraction | bool]
    vectors: dict[str, list[Fraction]]
    other_vectors: dict[str, list[Fraction]]

    def args(self, decl: MechanismDecl, second: bool) -> tuple[object, ...]:
        params = self.other_params if second else self.params
        vectors = self.other_vectors if second else self.vectors
        return tuple(vectors[p.name] if p.name in vectors else params[p.name] for p in decl.params)


@dataclass(frozen=True)
class Finding:
    loss: float  # the largest loss the samples prove (with confidence), over the chosen events
    claim: float
    pair: Pair
    events: tuple[str, ...]


# ---------------------------------------------------------------- inputs at the edge of `requires`


def parameters(info: MechanismInfo) -> dict[str, Fraction | bool]:
    """Public values meeting the `requires` that mention no distance: the claim's
    numbers at 1, integers at 1 (fewest answers, largest cost per answer), other
    numbers at 0 (else 1, 2, 3, 1/2)."""
    claim = {e.name for e in _names(info.decl.privacy)}
    private = private_scalars(info)
    values: dict[str, Fraction | bool] = dict(info.constants)
    for name, sort in info.scalars.items():
        if name in values:
            continue
        if sort == "bool":
            values[name] = True
        elif name in private:
            values[name] = Fraction(1, 4)
        elif name in claim:
            values[name] = Fraction(1)
        else:
            values[name] = Fraction(1) if sort == "int" else Fraction(0)
    vectors = {q: BASE[:LENGTH] for q in info.vectors}
    if _public_requires_hold(info, values, vectors):
        return values
    for name, sort in info.scalars.items():
        if name in info.constants or sort == "bool":
            continue
        for candidate in (Fraction(1), Fraction(3), Fraction(2), Fraction(1, 2)):
            trial = dict(values, **{name: candidate})
            if _public_requires_hold(info, trial, vectors):
                return trial
    raise AssertionError(f"no parameters found for `{info.decl.name}`")


def _names(expr: object) -> list:
    from fuzzpy.syntax import Var
    from fuzzpy.verifier.walk import sub_expressions

    return [e for e in sub_expressions(expr) if isinstance(e, Var)]  # type: ignore[arg-type]


def _public_requires_hold(info: MechanismInfo, values: dict, vectors: dict) -> bool:
    from fuzzpy.verifier.relation import mentions_distance

    try:
        return all(evaluate(r, values, {}, vectors, {}) for r in info.decl.requires if not mentions_distance(r))
    except (KeyError, TypeError):
        return False


def edge_pairs(info: MechanismInfo, params: dict[str, Fraction | bool], limit: int = 6) -> list[Pair]:
    """Neighbouring inputs that move as far as the `requires` allow."""
    private = sorted(private_scalars(info))
    vectors = {q: list(BASE[:LENGTH]) for q in info.vectors}
    scalar_moves = [dict(zip(private, moves, strict=True))
                    for moves in _products([SCALAR_MOVES] * len(private))]
    vector_moves = [dict(zip(vectors, moves, strict=True))
                    for moves in _products([VECTOR_MOVES] * len(vectors))]
    found: list[Pair] = []
    for vmove in vector_moves:
        for smove in scalar_moves:
            other_params = {k: (v + smove[k] if k in smove else v) for k, v in params.items()}
            other_vectors = {q: [a + d for a, d in zip(vectors[q], vmove[q], strict=True)] for q in vectors}
            if neighbours(info, params, other_params, vectors, other_vectors):
                found.append(Pair(params, other_params, vectors, other_vectors))
                break  # the largest scalar move that fits, for this vector move
        if len(found) >= limit:
            break
    assert found, f"no neighbouring inputs found for `{info.decl.name}`"
    return found


def _products(choices: list[list]) -> list[tuple]:
    import itertools

    return list(itertools.product(*choices))


# ---------------------------------------------------------------- sampling and events


def samples(decl: MechanismDecl, program: Program, args: tuple[object, ...], n: int, seed: int) -> list[object]:
    interp = Interpreter(program, SeededSource(seed))
    return [_hashable(run_mechanism(decl, args, interp)) for _ in range(n)]  # type: ignore[arg-type]


def _hashable(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _coordinates(value: object) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def events(pooled: Sequence[object]) -> list[Event]:
    family: list[Event] = []
    counts: dict[object, int] = {}
    for value in pooled:
        counts[value] = counts.get(value, 0) + 1
    for value, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:8]:
        family.append((f"output == {value!r}", lambda y, v=value: y == v))
    longest = max(len(_coordinates(v)) for v in pooled)
    for k in range(min(longest, 4)):
        column = [_coordinates(v)[k] for v in pooled if len(_coordinates(v)) > k]
        numbers = sorted(x for x in column if isinstance(x, float) and not isinstance(x, bool))
        if numbers:
            for q in QUANTILES:
                c = numbers[int(q * (len(numbers) - 1))]
                family.append((f"out[{k}] <= {c:.4g}", _coordinate_test(k, lambda x, c=c: _le(x, c))))
        for value in sorted({x for x in column if not isinstance(x, float)}, key=repr)[:6]:
            family.append((f"out[{k}] == {value!r}", _coordinate_test(k, lambda x, v=value: x == v)))
    return family


def _coordinate_test(k: int, test: Callable[[object], bool]) -> Callable[[object], bool]:
    def event(value: object) -> bool:
        coords = _coordinates(value)
        return len(coords) > k and test(coords[k])

    return event


def _le(x: object, c: float) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x <= c


def _clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lower = 0.0 if k == 0 else float(stats.beta.ppf(ALPHA, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1 - ALPHA, k + 1, n - k))
    return lower, upper


def proved_loss(first: Sequence[object], second: Sequence[object], chosen: Sequence[Event]) -> float:
    """The largest privacy loss the samples prove (confidence 1 - 2 ALPHA per event and direction)."""
    best = 0.0
    for _name, event in chosen:
        k1, k2 = sum(map(event, first)), sum(map(event, second))
        lo1, up1 = _clopper_pearson(k1, len(first))
        lo2, up2 = _clopper_pearson(k2, len(second))
        for lower, upper in ((lo1, up2), (lo2, up1)):
            if lower > 0:
                best = max(best, math.log(lower / upper))
    return best


def _empirical(first: Sequence[object], second: Sequence[object], event: Callable[[object], bool]) -> float:
    k1, k2 = sum(map(event, first)), sum(map(event, second))
    p1, p2 = (k1 + 1) / (len(first) + 2), (k2 + 1) / (len(second) + 2)
    return abs(math.log(p1 / p2)) if min(k1, k2) + max(k1, k2) >= 20 else 0.0


# ---------------------------------------------------------------- the harness


def harness(decl: MechanismDecl, program: Program, n: int = 2000, pilot: int = 200, keep: int = 3,
            seed: int = 11) -> Finding:
    info = analyse(decl, static_constants(program))
    params = parameters(info)
    claim = evaluate(decl.privacy, params)
    assert isinstance(claim, Fraction), f"the claim of `{decl.name}` is not a number at {params}"
    best: tuple[float, Pair, list[Event]] | None = None
    for index, pair in enumerate(edge_pairs(info, params)):
        first = samples(decl, program, pair.args(decl, False), pilot, seed + 2 * index)
        second = samples(decl, program, pair.args(decl, True), pilot, seed + 2 * index + 1)
        scored = sorted(events(first + second), key=lambda e: -_empirical(first, second, e[1]))[:keep]
        score = max((_empirical(first, second, e[1]) for e in scored), default=0.0)
        if best is None or score > best[0]:
            best = (score, pair, scored)
    assert best is not None
    _score, pair, chosen = best
    first = samples(decl, program, pair.args(decl, False), n, seed + 101)
    second = samples(decl, program, pair.args(decl, True), n, seed + 102)
    return Finding(proved_loss(first, second, chosen), float(claim), pair, tuple(name for name, _ in chosen))


def halve_noise(decl: MechanismDecl) -> MechanismDecl:
    """The mutant: every noise scale halved, the claim unchanged."""
    return _map_noise(decl, lambda noise: dataclasses.replace(
        noise, scale=Binary("/", noise.scale, NumLit("2", noise.span), noise.span)))


def _map_noise(node: object, change: Callable[[Noise], Noise]) -> object:
    if isinstance(node, Noise):
        node = change(node)
        return dataclasses.replace(node, scale=_map_noise(node.scale, change))
    if isinstance(node, tuple):
        return tuple(_map_noise(item, change) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and type(node).__module__ == "fuzzpy.syntax":
        changes = {f.name: _map_noise(getattr(node, f.name), change) for f in dataclasses.fields(node)}
        return dataclasses.replace(node, **changes)  # type: ignore[arg-type]
    return node
