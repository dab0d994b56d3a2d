"""The statistical net under every proof (issue 10 "Must show 2"; issue 23 item 3).

A proved mechanism is run many times on neighbouring inputs at the edge of its
`requires`, and the samples bound its privacy loss from BELOW, with a stated
confidence, in the style of StatDP (Ding et al., CCS 2018) and DP-Sniper
(Bichsel et al., S&P 2021): for an output event E and neighbours (D, D'),

    loss >= log( lower_CP(P[M(D) in E]) / upper_CP(P[M(D') in E]) ),

with one-sided Clopper-Pearson bounds, and the same with D and D' swapped (DP
bounds the ratio both ways). A mechanism meeting its claim eps shows a bound
above eps only if one of the four one-sided bounds of an event misses its
probability. For a `privacy (eps, delta)` claim the bound is the least eps the
event allows at that delta, log((lower_CP(P[M(D) in E]) - delta) /
upper_CP(P[M(D') in E])), compared with the claim's eps the same way.

Method, in three stages with independent random streams:

1. Inputs (`edge_pairs`): for each length in LENGTHS (2, 4, 8: several, and
   past 6, where a leak may need a long input), vectors at 0 (the public
   numbers, thresholds included, are at 0 too: every SVT answer is a coin
   flip, every noisy max a tie) moved as far as the norm allows: every entry
   by +/-1 in several sign patterns for `vec[inf]` (all up, all down, one up
   and the rest down, halves, alternating; all but the first, only the last),
   one entry (the first or the last) by +/-1 for `vec[1]`; private scalars by
   the largest of +/-2, 1, 1/2 their `requires` allow. The claim's numbers
   are at 1, and, for SCALE_PAIRS pairs of length 4, at 1/2 (a noise scale
   written `eps` where `1 / eps` is meant is exact at 1). Only pairs the claim
   speaks about are kept (`fuzzpy.verifier.relation.neighbours`).
2. Events, chosen on a PILOT sample of each pair that the test never reuses
   (so that the test stays valid): "the output is o" for frequent whole outputs
   and coordinates (discrete outputs), "coordinate k <= c" / ">= c" at pilot
   quantiles down to 0.1% (continuous outputs), the same for a frequent
   discrete pattern together with the sum of its continuous values (an SVT
   that releases values), and on the projection of the output on the sign of
   the pilots' mean difference (DP-Sniper's idea of a learned classifier,
   here a linear one), and the output's length. Each
   (pair, event) is scored by the bound it would give on the final sample
   size; the KEEP best are kept.
3. The TEST: fresh samples (FINAL runs per input) and the exact
   Clopper-Pearson bounds.

Level (the net's one property): one run of the whole test suite makes at most
MAX_TESTS calls of `harness` (tests/test_mechanism_neighbours.py asserts it), each
tests KEEP events with four one-sided bounds at level ALPHA; by Bonferroni, a
run that tests only mechanisms meeting their claims raises a false alarm with
probability at most MAX_TESTS * KEEP * 4 * ALPHA = FAMILY_ALPHA = 1e-3, over
the choice of seeds (the seeds are fixed, so a run is deterministic;
FUZZPY_NET_SEED=N draws every sample anew).

The samples come from tests/mechanism_sampler.py (numpy, float64 noise: fast,
not exact); the neighbour relation and the parameters' reading are the
verifier's own, which the net therefore trusts.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mechanism_sampler as sampler
import numpy as np
from mechanism_sampler import Outputs
from scipy import stats

from fuzzpy.checker.scope import static_constants
from fuzzpy.language.syntax import Binary, MechanismDecl, Noise, NumLit, Program, Var
from fuzzpy.runtime.audit import _atoms, _memo  # the audit's helpers, shared
from fuzzpy.runtime.audit_inputs import first_values
from fuzzpy.runtime.interpreter import Interpreter
from fuzzpy.runtime.mechanisms import run_mechanism
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.verifier.model import MechanismInfo, analyse
from fuzzpy.verifier.prover import private_scalars
from fuzzpy.verifier.relation import evaluate, neighbours

FAMILY_ALPHA = 1e-3  # the false alarm rate of a whole run of the suite
SEED = int(os.environ.get("FUZZPY_NET_SEED", "0"))  # another draw of every sample: FUZZPY_NET_SEED=N
MAX_TESTS = 400  # calls of `harness` in one run, at most
KEEP = 4  # (pair, event) tested per call
ALPHA = FAMILY_ALPHA / (MAX_TESTS * KEEP * 4)  # each one-sided Clopper-Pearson bound
PILOT = 20_000  # runs per input of each candidate pair, to choose events
FINAL = 400_000  # runs per input in the test
LENGTHS = (2, 4, 8)
BASE = Fraction(0)
SCALAR_MOVES = [Fraction(d) for d in (2, -2, 1, -1, Fraction(1, 2), Fraction(-1, 2))]
QUANTILES = (0.001, 0.005, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.995, 0.999)
SCALE_PAIRS = 6  # pairs with the claim's numbers at 1/2 (a wrong scale shows on any)


@dataclass(frozen=True)
class Pair:
    params: dict[str, Fraction | bool]
    other_params: dict[str, Fraction | bool]
    vectors: dict[str, list[Fraction]]
    other_vectors: dict[str, list[Fraction]]

    def arguments(self, second: bool) -> dict[str, object]:
        return {**(self.other_params if second else self.params), **(self.other_vectors if second else self.vectors)}

    def args(self, decl: MechanismDecl, second: bool) -> tuple[object, ...]:
        arguments = self.arguments(second)
        return tuple(arguments[p.name] for p in decl.params)

    def __str__(self) -> str:
        def show(values: dict) -> str:
            return ", ".join(f"{k}={_show(v)}" for k, v in values.items())

        return f"({show({**self.params, **self.vectors})}) vs ({show({**self.other_params, **self.other_vectors})})"


def _show(value: object) -> str:
    if isinstance(value, list):
        return "[" + " ".join(_show(v) for v in value) + "]"
    return str(value)


@dataclass(frozen=True)
class Finding:
    loss: float  # the largest loss the samples prove (with confidence), over the chosen events
    claim: float
    pair: Pair  # the pair of the best event
    events: tuple[str, ...]
    estimate: float  # the point estimate of the best event's loss (information only)


Event = tuple[str, Callable[[Outputs], np.ndarray]]


# ---------------------------------------------------------------- inputs at the edge of `requires`


def parameters(info: MechanismInfo, length: int = 3, budget: Fraction = Fraction(1)) -> dict[str, Fraction | bool]:
    """Public values meeting the `requires` that mention no distance: the claim's
    numbers at ``budget``, integers at 1 (fewest answers, largest cost per answer),
    other numbers at 0 (else 1, 2, 3, 1/2)."""
    values = first_values(info, budget)
    vectors = {q: [BASE] * length for q in info.vectors}
    if _public_requires_hold(info, values, vectors):
        return values
    for name, sort in info.scalars.items():
        if name in info.constants or sort == "bool":
            continue
        for candidate in (Fraction(1), Fraction(3), Fraction(2), Fraction(1, 2), *_lower_bounds(info, name)):
            trial = dict(values, **{name: candidate})
            if _public_requires_hold(info, trial, vectors):
                return trial
    raise AssertionError(f"no parameters found for `{info.decl.name}`")


def _lower_bounds(info: MechanismInfo, name: str) -> list[Fraction]:
    """The edge of `requires name >= c` (c) and `requires name > c` (c + 1): a noise
    scale at the least the claim allows (`requires sigma >= 8`)."""
    found = []
    for r in info.decl.requires:
        if isinstance(r, Binary) and r.op in (">=", ">") and isinstance(r.left, Var) and r.left.name == name \
                and isinstance(r.right, NumLit):
            c = Fraction(r.right.value)
            found.append(c if r.op == ">=" else c + 1)
    return found


def _public_requires_hold(info: MechanismInfo, values: dict, vectors: dict) -> bool:
    from fuzzpy.verifier.relation import mentions_distance

    try:
        return all(evaluate(r, values, {}, vectors, {}) for r in info.decl.requires if not mentions_distance(r))
    except (KeyError, TypeError):
        return False


def edge_pairs(info: MechanismInfo) -> list[Pair]:
    """Neighbouring inputs that move as far as the `requires` allow, at every length of
    LENGTHS the public `requires` admit (else the first length from 1 to 12 that they
    admit), the claim's numbers at 1; and at the middle length with them at 1/2 (a
    noise scale written `eps` where `1 / eps` is meant is right at eps = 1)."""
    variants = [(n, Fraction(1)) for n in LENGTHS] + [(LENGTHS[1], Fraction(1, 2))]
    admitted = [(n, b) for n, b in variants if _parameters_at(info, n, b) is not None]
    if not admitted:
        admitted = [(n, Fraction(1)) for n in range(1, 13) if _parameters_at(info, n, Fraction(1)) is not None][:1]
    found: list[Pair] = []
    for length, budget in admitted:
        params = _parameters_at(info, length, budget)
        assert params is not None
        found += _pairs_at(info, params, length)[: None if budget == 1 else SCALE_PAIRS]
    assert found, f"no neighbouring inputs found for `{info.decl.name}`"
    return found


def _parameters_at(info: MechanismInfo, length: int, budget: Fraction) -> dict[str, Fraction | bool] | None:
    try:
        return parameters(info, length, budget)
    except AssertionError:
        return None


def vector_moves(norm: str, length: int) -> list[list[int]]:
    """Sign patterns that stress a claim: for `vec[inf]` every entry moves (StatDP's
    "one above, rest below", halves, alternating...), or all but the first, or only
    the last; otherwise one entry moves (the first or the last)."""
    if norm != "inf":
        return [[d if k == at else 0 for k in range(length)] for at in (0, length - 1) for d in (1, -1)][:4 if length > 1 else 2]
    half = length // 2
    patterns = [[1] * length, [1] + [-1] * (length - 1), [1] * half + [-1] * (length - half),
                [(-1) ** k for k in range(length)], [-1] * (length - 1) + [1],
                [0] + [1] * (length - 1), [0] * (length - 1) + [1]]  # for `requires dist(q[0]) == 0`
    return [list(p) for p in dict.fromkeys(tuple(p) for s in (1, -1) for p in ([s * d for d in q] for q in patterns))]


def _pairs_at(info: MechanismInfo, params: dict[str, Fraction | bool], length: int) -> list[Pair]:
    private = sorted(private_scalars(info))
    vectors = {q: [BASE] * length for q in info.vectors}
    scalar_moves = [dict(zip(private, moves, strict=True)) for moves in itertools.product(*[SCALAR_MOVES] * len(private))]
    vector_choices = [vector_moves(norm, length) for norm in info.vectors.values()]
    found: list[Pair] = []
    for vmove in itertools.islice(itertools.product(*vector_choices), 16):
        moved = dict(zip(vectors, vmove, strict=True))
        other_vectors = {q: [a + d for a, d in zip(vectors[q], moved[q], strict=True)] for q in vectors}
        for smove in scalar_moves:
            other_params = {k: (v + smove[k] if k in smove else v) for k, v in params.items()}
            if neighbours(info, params, other_params, vectors, other_vectors):
                found.append(Pair(params, other_params, vectors, other_vectors))
                break  # the largest scalar move that fits, for this vector move
    return found


# ---------------------------------------------------------------- samples


def samples(decl: MechanismDecl, program: Program, pair: Pair, second: bool, n: int, seed: tuple[int, ...]) -> Outputs:
    rng = np.random.default_rng(list(seed))
    return sampler.sample(decl, static_constants(program), pair.arguments(second), n, rng)


def exact_samples(decl: MechanismDecl, program: Program, args: tuple[object, ...], n: int, seed: int) -> list[object]:
    """n runs with the runtime's exact interpreter (to check the fast sampler against)."""
    interp = Interpreter(program, SeededSource(seed))
    return [run_mechanism(decl, args, interp) for _ in range(n)]  # type: ignore[arg-type]


# ---------------------------------------------------------------- events, chosen on the pilot


def events(first: Outputs, second: Outputs) -> list[Event]:
    """The candidate events over the outputs, built from the pilot samples only."""
    width = min(first.values.shape[1], second.values.shape[1])
    pooled = np.concatenate([first.values[:, :width], second.values[:, :width]])
    atoms = [_atoms(pooled[:, k]) for k in range(width)]
    family = _whole_outputs(first, second) + _length_events(first, second)
    for k in range(min(width, 8)):
        family += _column_events(f"out[{k}]", lambda o, k=k: o.values[:, k], pooled[:, k], atoms[k])
    family += _skeleton_events(first, second, atoms)
    if width > 1:
        means = [np.nan_to_num(o.values[:, :width]).mean(0) for o in (first, second)]
        weights = np.sign(means[0] - means[1])
        if weights.any():
            project = _memo(lambda o, w=weights: np.nan_to_num(o.values[:, : len(w)]) @ w)

            family += _column_events(f"{_weights(weights)}.out", project,
                                     np.concatenate([project(first), project(second)]), np.array([]))
    return family


def _weights(weights: np.ndarray) -> str:
    return "(" + " ".join("+" if w > 0 else "-" if w < 0 else "0" for w in weights) + ")"


def _whole_outputs(first: Outputs, second: Outputs) -> list[Event]:
    pooled = Outputs(np.concatenate([first.values, second.values]), np.concatenate([first.lengths, second.lengths]))
    keys, counts = np.unique(pooled.keys, return_counts=True)
    frequent = [keys[i] for i in np.argsort(-counts)[:12] if counts[i] >= 10]
    return [(f"output == {_describe(pooled, pooled.keys == key)}", lambda o, key=key: o.keys == key) for key in frequent]


def _describe(o: Outputs, rows: np.ndarray) -> str:
    """The first output a key event holds for, as read (a blank is *)."""
    r = int(np.argmax(rows))
    return "(" + ", ".join("*" if np.isinf(v) else f"{v:g}" for v in o.values[r, : o.lengths[r]]) + ")"


def _skeleton(o: Outputs, atoms: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each output with its non-atom coordinates blanked (a key), and the sum of those coordinates."""
    values = o.values[:, : len(atoms)]
    blank = np.zeros(values.shape, dtype=bool)
    for k, atom in enumerate(atoms):
        blank[:, k] = ~np.isin(values[:, k], atom) & ~np.isnan(values[:, k])
    rows = np.where(blank, np.inf, values)
    return sampler.row_keys(rows, o.lengths), np.where(blank, values, 0.0).sum(1)


def _skeleton_events(first: Outputs, second: Outputs, atoms: list[np.ndarray]) -> list[Event]:
    """A discrete pattern with continuous values in it, and a threshold on their sum
    (the released value of an SVT variant, together with the answers before it)."""
    if not any(len(a) for a in atoms):
        return []
    cache: dict[int, tuple[Outputs, tuple[np.ndarray, np.ndarray]]] = {}

    def skeleton(o: Outputs) -> tuple[np.ndarray, np.ndarray]:  # once per sample (o is kept: its id stays its own)
        if id(o) not in cache:
            cache[id(o)] = (o, _skeleton(o, atoms))
        return cache[id(o)][1]

    (k1, s1), (k2, s2) = skeleton(first), skeleton(second)
    keys, counts = np.unique(np.concatenate([k1, k2]), return_counts=True)
    family: list[Event] = []
    for i in np.argsort(-counts)[:6]:
        key = keys[i]
        members = np.concatenate([k1 == key, k2 == key])
        pooled = np.concatenate([first.values[:, : len(atoms)], second.values[:, : len(atoms)]])[members]
        blanks = np.array([not np.isnan(v) and v not in atom for v, atom in zip(pooled[0], atoms, strict=True)])
        if counts[i] < 200 or not blanks.any():
            continue
        inside = np.concatenate([s1, s2])[members]
        shown = "(" + ", ".join("*" if b else f"{v:g}" for v, b in zip(pooled[0], blanks, strict=True) if not np.isnan(v)) + ")"
        for c in np.unique(np.quantile(inside, QUANTILES[1:-1])):
            def below(o: Outputs, key: np.ndarray = key, c: float = c, sign: int = 1) -> np.ndarray:
                keys_, sums = skeleton(o)
                return (keys_ == key) & (sign * sums <= sign * c)

            name = shown
            family.append((f"output ~ {name}, sum(*) <= {c:.4g}", below))
            family.append((f"output ~ {name}, sum(*) >= {c:.4g}", lambda o, below=below: below(o, sign=-1)))
    return family


def _length_events(first: Outputs, second: Outputs) -> list[Event]:
    lengths = np.unique(np.concatenate([first.lengths, second.lengths]))
    if len(lengths) < 2:
        return []
    return ([(f"len(out) == {n}", lambda o, n=n: o.lengths == n) for n in lengths]
            + [(f"len(out) >= {n}", lambda o, n=n: o.lengths >= n) for n in lengths[1:]])


def _column_events(name: str, column: Callable[[Outputs], np.ndarray], pooled: np.ndarray,
                   atoms: np.ndarray) -> list[Event]:
    pooled = pooled[~np.isnan(pooled)]
    family: list[Event] = [(f"{name} == {v:g}", lambda o, v=v: column(o) == v) for v in atoms[:8]]
    rest = pooled[~np.isin(pooled, atoms)]
    if rest.size > 20:
        for c in np.unique(np.quantile(rest, QUANTILES)):
            family.append((f"{name} <= {c:.4g}", lambda o, c=c: column(o) <= c))
            family.append((f"{name} >= {c:.4g}", lambda o, c=c: column(o) >= c))
    return family


# ---------------------------------------------------------------- the bounds


def clopper_pearson(k: int, n: int, alpha: float = ALPHA) -> tuple[float, float]:
    """One-sided bounds, each missing the probability with chance at most alpha."""
    lower = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return lower, upper


def loss_bound(k1: int, k2: int, n1: int, n2: int, alpha: float = ALPHA, delta: float = 0.0) -> float:
    """The privacy loss an event seen k1 times in n1 runs on D and k2 in n2 on D' proves
    (wrong only if one of the four one-sided bounds, each at level alpha, misses). With
    ``delta`` (an (eps, delta) claim): the least eps with P[E] <= e^eps P'[E] + delta that
    the bounds allow, log((lower - delta) / upper) (Dwork & Roth, Def. 2.4)."""
    lo1, up1 = clopper_pearson(k1, n1, alpha)
    lo2, up2 = clopper_pearson(k2, n2, alpha)
    return max([math.log((lo - delta) / up) for lo, up in ((lo1, up2), (lo2, up1)) if lo > delta] + [0.0])


_Z = float(stats.norm.isf(ALPHA))


def _score(k1: int, k2: int, n: int, final: int, z: float = _Z, delta: float = 0.0) -> float:
    """The bound the event would give on `final` runs if the pilot's frequencies held (normal approximation)."""
    p1, p2 = k1 / n, k2 / n
    width = [z * math.sqrt(max(p * (1 - p), 1 / final) / final) for p in (p1, p2)]
    best = -math.inf
    for (a, wa), (b, wb) in (((p1, width[0]), (p2, width[1])), ((p2, width[1]), (p1, width[0]))):
        if a - wa - delta > 0:
            best = max(best, math.log((a - wa - delta) / min(b + wb, 1.0)))
    return best


def _point(k1: int, k2: int, n1: int, n2: int) -> float:
    p1, p2 = (k1 + 0.5) / (n1 + 1), (k2 + 0.5) / (n2 + 1)
    return abs(math.log(p1 / p2))


# ---------------------------------------------------------------- the harness


def harness(decl: MechanismDecl, program: Program, pilot: int = PILOT, final: int = FINAL,
            seed: int | None = None, alpha: float = ALPHA) -> Finding:
    """The net on one mechanism: the proved loss (level ALPHA per bound) that most exceeds the claim."""
    info = analyse(decl, static_constants(program))
    seed = zlib.crc32(decl.name.encode()) + SEED if seed is None else seed
    pairs = edge_pairs(info)
    claims = [_claim(decl, pair) for pair in pairs]
    deltas = [_delta(decl, pair) for pair in pairs]
    z = float(stats.norm.isf(alpha))
    candidates: list[tuple[float, int, Event]] = []
    for index, pair in enumerate(pairs):
        first = samples(decl, program, pair, False, pilot, (seed, 1, index))
        second = samples(decl, program, pair, True, pilot, (seed, 2, index))
        for event in events(first, second):
            k1, k2 = int(event[1](first).sum()), int(event[1](second).sum())
            candidates.append((_score(k1, k2, pilot, final, z, deltas[index]) - claims[index], index, event))
    chosen = sorted(candidates, key=lambda c: -c[0])[:KEEP]
    drawn: dict[int, tuple[Outputs, Outputs]] = {}
    results = []
    for _, index, (name, event) in chosen:
        if index not in drawn:  # fresh samples, never seen by the choice
            drawn[index] = (samples(decl, program, pairs[index], False, final, (seed, 3, index)),
                            samples(decl, program, pairs[index], True, final, (seed, 4, index)))
        first, second = drawn[index]
        k1, k2 = int(event(first).sum()), int(event(second).sum())
        bound = loss_bound(k1, k2, final, final, alpha, deltas[index])
        results.append((bound - claims[index], bound, _point(k1, k2, final, final), index, name))
    _excess, bound, estimate, index, name = max(results, key=lambda r: r[0])
    others = tuple(r[4] for r in results if r[4] != name)
    return Finding(bound, claims[index], pairs[index], (name, *others), estimate)


def _claim(decl: MechanismDecl, pair: Pair) -> float:
    claim = evaluate(decl.privacy, pair.params)
    assert isinstance(claim, Fraction), f"the claim of `{decl.name}` is not a number at {pair.params}"
    return float(claim)


def _delta(decl: MechanismDecl, pair: Pair) -> float:
    """The delta of a `privacy (eps, delta)` claim (0 for a pure one), rounded down: the net
    then asks for a little more than the claim allows."""
    if decl.delta is None:
        return 0.0
    delta = evaluate(decl.delta, pair.params)
    assert isinstance(delta, Fraction), f"the delta of `{decl.name}` is not a number at {pair.params}"
    return math.nextafter(float(delta), 0.0)


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
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and type(node).__module__ == "fuzzpy.language.syntax":
        changes = {f.name: _map_noise(getattr(node, f.name), change) for f in dataclasses.fields(node)}
        return dataclasses.replace(node, **changes)  # type: ignore[arg-type]
    return node
