"""`fuzzpy audit`: an empirical lower bound on a program's privacy loss (issue 30 item 6).

A checked definition over a bag, or a `mechanism`, is run many times on
neighbouring inputs (`fuzzpy.runtime.audit_inputs`), and the samples bound its
privacy loss from BELOW with a stated confidence, in the style of StatDP (Ding
et al., CCS 2018) and DP-Sniper (Bichsel et al., S&P 2021). For an output event
E and neighbours D, D', (eps, delta)-DP gives P[M(D) in E] <= e^eps P[M(D') in E]
+ delta, so

    eps >= log( (lower_CP(P[M(D) in E]) - delta) / upper_CP(P[M(D') in E]) )

with one-sided Clopper-Pearson bounds, and the same with D and D' swapped.

Three stages with independent random streams, so that the bound stays valid:

1. Pilot: `pilot` runs per side of every candidate pair. Candidate events are
   built from the pilot alone: "the output is o" (frequent whole outputs),
   "coordinate k == v" / "<= c" / ">= c" at pilot quantiles (StatDP's
   histogram events), a discrete pattern with a threshold on the sum of its
   continuous values (an SVT that releases a value), the output's length, and a
   threshold on the projection of the output on the sign of the pilots' mean
   difference (a linear classifier: DP-Sniper's classifier-chosen event), and
   unions of (pattern, quantile bin) cells ranked by their estimated likelihood
   ratio (`ratio_events`: the Neyman-Pearson event, histogram-estimated). Each
   (pair, event) is scored by the bound it would give on the final sample. Every
   pair is screened on `pilot` runs; the 4 best get 4 x `pilot` more runs
   (successive halving) and their events are chosen on both; the `keep` best
   are kept (docs/audit.md: why the search needs each piece).
2. Test: `samples` fresh runs per side of the chosen pairs; the bound above.
3. Confirmation (mechanisms): when the best tested event falls short of its
   claim but comes near it, CONFIRM_FACTOR x `samples` fresh runs a side on
   its pair, that event alone, in the direction its test found.
4. Level: each of the 4 one-sided bounds of each of the `keep` events misses
   with probability at most (1 - CONFIRM_SHARE)(1 - confidence) / (4 keep),
   each of the confirmation's two with CONFIRM_SHARE (1 - confidence) / 2; by
   Bonferroni the reported lower bound (the largest over the events) is below
   the true loss of the (pair, event) with probability >= confidence. The
   events seen in the pilot are never re-tested on the pilot's runs, nor the
   confirmed one on the test's.

Mechanisms run vectorised with the runtime's exact samplers
(`fuzzpy.runtime.lanes`); definitions run through the interpreter one run at
a time (its own exact samplers), so their audits use fewer runs.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from fuzzpy.checker.scope import static_constants
from fuzzpy.language import syntax as S
from fuzzpy.runtime import lanes
from fuzzpy.runtime.audit_inputs import LENGTHS, NoInputs, Pair, bag_pairs, mechanism_pairs
from fuzzpy.runtime.lanes import Outputs, Unsupported, row_keys
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import Fuzzy, Record, RuntimeFailure, WithPair, force
from fuzzpy.verifier.model import MechanismInfo, analyse
from fuzzpy.verifier.relation import evaluate

KEEP = 4  # (pair, event) tested on the fresh sample
QUANTILES = (0.001, 0.005, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.995, 0.999)
MAX_WIDTH = 60  # outputs wider than this are cut (their first coordinates are audited)

__all__ = ["AuditError", "AuditResult", "EventResult", "NoInputs", "Unsupported", "audit_definition",
           "audit_mechanism", "clopper_pearson", "directed_bound", "loss_bound"]


class AuditError(Exception):
    """The program cannot be audited (the message says why)."""


@dataclass(frozen=True)
class EventResult:
    """One tested (pair, event): its counts on the fresh sample and the bound they prove."""

    pair: str
    event: str
    k1: int
    k2: int
    n: int
    bound: float  # the lower bound on eps this event proves (at the audit's confidence)
    estimate: float  # |log(p1 / p2)| from the counts (information only)
    claim: float
    intervals: tuple[tuple[float, float], tuple[float, float]]  # two-sided CP intervals, each side

    def to_json(self) -> dict[str, object]:
        return {"pair": self.pair, "event": self.event, "count_first": self.k1, "count_second": self.k2,
                "runs": self.n, "lower_bound": _finite(self.bound), "estimate": _finite(self.estimate),
                "claim": self.claim,
                "probability_first": list(self.intervals[0]), "probability_second": list(self.intervals[1])}


@dataclass(frozen=True)
class AuditResult:
    """What an audit found: the largest lower bound on eps the samples prove, beside the claim."""

    name: str
    kind: str  # "mechanism" | "definition"
    claim: float  # the upper bound (the checker's cost, or the mechanism's `privacy` at the pair's numbers)
    delta: float
    lower: float  # the largest lower bound over the tested events (0 when none is positive)
    confidence: float
    best: EventResult
    tested: tuple[EventResult, ...]
    pairs: int
    events_searched: int
    pilot: int
    samples: int
    seed: int
    seconds: float
    sampler: str
    notes: tuple[str, ...] = field(default=())

    @property
    def leak(self) -> bool:
        """The samples prove a loss above the claim (at the audit's confidence)."""
        return self.best.bound > self.best.claim

    def text(self, status: str | None = None) -> str:
        """The audit as text (`fuzzpy audit` without --json); ``status`` is `verify`'s verdict
        on a mechanism's claim ("proved", "refuted", "unknown"), None when not asked."""
        best = self.best
        source = {"proved": "proved by verify", "refuted": "refuted by verify", "unknown": "not proved: verify says unknown",
                  "malformed": "verify rejects the mechanism", None: "the `privacy` clause"}[status] \
            if self.kind == "mechanism" else "proved by the checker; " + ", ".join(self.notes)
        delta = f", delta = {self.delta:g}" if self.delta else ""
        (lo1, up1), (lo2, up2) = best.intervals
        lines = [
            f"audit of {self.kind} `{self.name}`",
            f"  upper bound: eps = {best.claim:g}{delta}  ({source}{'' if self.kind == 'definition' else ', at these inputs'})",
            f"  lower bound: eps >= {best.bound:.4g}  (confidence {self.confidence:g}; point estimate {best.estimate:.4g})",
            f"  on inputs  {best.pair}",
            f"  event      {best.event}",
            f"    first:  {best.k1} of {best.n} runs  (P in [{lo1:.4g}, {up1:.4g}])",
            f"    second: {best.k2} of {best.n} runs  (P in [{lo2:.4g}, {up2:.4g}])",
            f"  search: {self.pairs} neighbouring pairs, {self.events_searched} candidate events on a pilot of "
            f"{self.pilot} runs a side; {self._test_text()}; seed {self.seed}",
            f"  sampler: {self.sampler}; {self.seconds:.2f} s of CPU",
        ]
        if self.leak:
            lines.append(f"  LEAK: the runs prove eps >= {best.bound:.4g} > {best.claim:g}, the claim"
                         + (" (a soundness bug: the claim is proved)" if status == "proved" or self.kind == "definition" else ""))
        else:
            lines.append("  consistent with the claim (no event proves a loss above it)")
        return "\n".join(lines) + "\n"

    def _test_text(self) -> str:
        confirmed = [e for e in self.tested if e.n != self.samples]
        kept = len(self.tested) - len(confirmed)
        text = (f"{kept} tested on {self.samples} fresh runs a side (Clopper-Pearson, Bonferroni over "
                f"{4 * kept} one-sided bounds")
        if self.kind == "definition":
            return text + ")"
        if confirmed:
            return text + f" at {1 - CONFIRM_SHARE:g} of the miss probability); the best confirmed on " \
                f"{confirmed[0].n} more runs a side (2 bounds, the rest)"
        return text + f" at {1 - CONFIRM_SHARE:g} of the miss probability, the rest kept for a confirmation " \
            "not needed)"

    def __repr__(self) -> str:
        return self.text()

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "kind": self.kind, "claim": {"epsilon": self.best.claim, "delta": self.delta},
                "lower_bound": _finite(self.lower), "confidence": self.confidence, "leak": self.leak,
                "best": self.best.to_json(), "tested": [e.to_json() for e in self.tested],
                "pairs": self.pairs, "events_searched": self.events_searched, "pilot": self.pilot,
                "samples": self.samples, "seed": self.seed, "seconds": round(self.seconds, 3),
                "sampler": self.sampler, "notes": list(self.notes)}


def _finite(x: float) -> float | str:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


# ---------------------------------------------------------------- Clopper-Pearson


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided bounds on a binomial probability, each missing it with chance at most alpha
    (Clopper & Pearson 1934: the beta quantiles)."""
    from scipy.special import betaincinv

    lower = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha))
    upper = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha))
    return lower, upper


def loss_bound(k1: int, k2: int, n1: int, n2: int, alpha: float, delta: float = 0.0) -> float:
    """The eps an event seen k1 times in n1 runs on D and k2 times in n2 on D' proves:
    wrong only if one of the four one-sided bounds (each at level alpha) misses.
    (eps, delta)-DP: P1 <= e^eps P2 + delta, hence eps >= log((P1 - delta) / P2)."""
    lo1, up1 = clopper_pearson(k1, n1, alpha)
    lo2, up2 = clopper_pearson(k2, n2, alpha)
    found = [math.log((lo - delta) / up) for lo, up in ((lo1, up2), (lo2, up1)) if lo - delta > 0]
    return max([*found, 0.0])


PILOT_ALPHA = 0.2  # how pessimistic the pilot's frequencies are taken when events are scored


def _score(k1: int, k2: int, n: int, final: int, z: float, delta: float) -> float:
    """The bound an event would give on ``final`` runs (normal approximation) if its
    probabilities were the pilot's pessimistic ones (one-sided Clopper-Pearson at
    PILOT_ALPHA: an event seen a few times in the pilot is not taken at its word).
    Used to choose events only, never as a bound."""
    lo1, up1 = clopper_pearson(k1, n, PILOT_ALPHA)
    lo2, up2 = clopper_pearson(k2, n, PILOT_ALPHA)
    best = -math.inf
    for a, b in ((lo1, up2), (lo2, up1)):
        wa, wb = (z * math.sqrt(max(p * (1 - p), 1 / final) / final) for p in (a, b))
        if a - wa - delta > 0:
            best = max(best, math.log((a - wa - delta) / min(b + wb, 1.0)))
    return best


def _estimate(k1: int, k2: int, n: int) -> float:
    return abs(math.log(((k1 + 0.5) / (n + 1)) / ((k2 + 0.5) / (n + 1))))


# ---------------------------------------------------------------- events, from the pilot only

Event = tuple[str, Callable[[Outputs], np.ndarray]]


def candidate_events(first: Outputs, second: Outputs) -> list[Event]:
    """The candidate events over the outputs, built from the pilot samples only."""
    width = min(first.values.shape[1], second.values.shape[1])
    pooled = np.concatenate([first.values[:, :width], second.values[:, :width]])
    atoms = [_atoms(pooled[:, k]) for k in range(width)]
    family = _whole_outputs(first, second) + _length_events(first, second)
    for k in range(min(width, 8)):
        family += _column_events(f"out[{k}]", _coordinate(k), pooled[:, k], atoms[k])
    family += _skeleton_events(first, second, atoms)
    family += ratio_events(first, second, atoms)
    if width > 1:
        means = [np.nan_to_num(o.values[:, :width]).mean(0) for o in (first, second)]
        weights = np.sign(means[0] - means[1])
        if weights.any():
            project = _memo(_projection(weights))
            signs = "(" + " ".join("+" if w > 0 else "-" if w < 0 else "0" for w in weights) + ")"
            family += _column_events(f"{signs}.out", project,
                                     np.concatenate([project(first), project(second)]), np.array([]))
    return family


def _coordinate(k: int) -> Callable[[Outputs], np.ndarray]:
    def column(o: Outputs) -> np.ndarray:
        return o.values[:, k]

    return column


def _projection(weights: np.ndarray) -> Callable[[Outputs], np.ndarray]:
    def project(o: Outputs) -> np.ndarray:
        return np.nan_to_num(o.values[:, : len(weights)]) @ weights

    return project


def _lengths(o: Outputs) -> np.ndarray:
    return o.lengths


def _key_is(key: float) -> Callable[[Outputs], np.ndarray]:
    def event(o: Outputs) -> np.ndarray:
        return o.keys == key

    return event


def _compare(column: Callable[[Outputs], np.ndarray], op: str, value: float) -> Callable[[Outputs], np.ndarray]:
    def event(o: Outputs) -> np.ndarray:
        x = column(o)
        return x == value if op == "==" else x <= value if op == "<=" else x >= value

    return event


def _memo(function: Callable[[Outputs], np.ndarray]) -> Callable[[Outputs], np.ndarray]:
    """``function``, computed once per sample (the sample is kept, so its id stays its own)."""
    cache: dict[int, tuple[Outputs, np.ndarray]] = {}

    def once(o: Outputs) -> np.ndarray:
        if id(o) not in cache:
            cache[id(o)] = (o, function(o))
        return cache[id(o)][1]

    return once


def _atoms(column: np.ndarray) -> np.ndarray:
    """The values a coordinate takes with probability >= 1% in the pilot (all of them if it is discrete)."""
    column = column[~np.isnan(column)]
    values, counts = np.unique(column, return_counts=True)
    return values if values.size <= 20 else values[counts >= max(10, column.size // 100)]


def _whole_outputs(first: Outputs, second: Outputs) -> list[Event]:
    pooled = Outputs(np.concatenate([first.values, second.values]), np.concatenate([first.lengths, second.lengths]))
    keys, counts = np.unique(pooled.keys, return_counts=True)
    frequent = [keys[i] for i in np.argsort(-counts)[:12] if counts[i] >= 10]
    return [(f"output == {_describe(pooled, pooled.keys == key)}", _key_is(float(key))) for key in frequent]


def _describe(o: Outputs, rows: np.ndarray) -> str:
    r = int(np.argmax(rows))
    return "(" + ", ".join("*" if np.isinf(v) else f"{v:g}" for v in o.values[r, : o.lengths[r]]) + ")"


def _skeleton(o: Outputs, atoms: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each output with its non-atom coordinates blanked (a key), and the sum of those coordinates."""
    values = o.values[:, : len(atoms)]
    blank = np.zeros(values.shape, dtype=bool)
    for k, atom in enumerate(atoms):
        blank[:, k] = ~np.isin(values[:, k], atom) & ~np.isnan(values[:, k])
    return row_keys(np.where(blank, np.inf, values), o.lengths), np.where(blank, values, 0.0).sum(1)


def _skeleton_events(first: Outputs, second: Outputs, atoms: list[np.ndarray]) -> list[Event]:
    """A discrete pattern with continuous values in it, and a threshold on their sum."""
    if not any(len(a) for a in atoms):
        return []
    skeleton = _memo_pair(lambda o: _skeleton(o, atoms))
    (k1, s1), (k2, s2) = skeleton(first), skeleton(second)
    keys, counts = np.unique(np.concatenate([k1, k2]), return_counts=True)
    pooled_values = np.concatenate([first.values[:, : len(atoms)], second.values[:, : len(atoms)]])
    family: list[Event] = []
    for i in np.argsort(-counts)[:6]:
        key = keys[i]
        members = np.concatenate([k1 == key, k2 == key])
        row = pooled_values[members][0]
        blanks = np.array([not np.isnan(v) and v not in atom for v, atom in zip(row, atoms, strict=True)])
        if counts[i] < 200 or not blanks.any():
            continue
        inside = np.concatenate([s1, s2])[members]
        shown = "(" + ", ".join("*" if b else f"{v:g}" for v, b in zip(row, blanks, strict=True) if not np.isnan(v)) + ")"
        for c in np.unique(np.quantile(inside, QUANTILES[1:-1])):
            for sign, op in ((1, "<="), (-1, ">=")):
                def event(o: Outputs, key: float = key, c: float = c, sign: int = sign) -> np.ndarray:
                    keys_, sums = skeleton(o)
                    return (keys_ == key) & (sign * sums <= sign * c)

                family.append((f"output ~ {shown}, sum(*) {op} {c:.4g}", event))
    return family


RATIO_CELLS = 24  # at most this many cells of a pattern's continuous sum
RATIO_EVENTS = 3  # the best unions of cells kept as candidates, each direction


def ratio_events(first: Outputs, second: Outputs, atoms: list[np.ndarray]) -> list[Event]:
    """Unions of cells ranked by their estimated likelihood ratio (the Neyman-Pearson event,
    estimated as DP-Sniper estimates it with a classifier, here a histogram).

    A cell is a discrete pattern (the skeleton: each output with its non-atom coordinates
    blanked) and a quantile bin of the sum of its continuous coordinates; rare patterns
    share one cell. The cells are ranked by log((k1 + 1/2) / (k2 + 1/2)) on one half of
    the pilot, and the prefixes of that ranking (the events "the estimated privacy loss
    is above c") are scored on the other half, so that a cell ranked high by chance
    does not score high too; the best few prefixes are candidates, then re-scored on the
    whole pilot and, if kept, tested on fresh runs like every event.

    Why: a leak that needs many coordinates at once (an SVT that releases its noisy
    query, `docs/audit.md`) puts its ratio in the tails of several patterns at once, each
    with a small probability; no single threshold event reaches e^eps with a probability
    the test can see, but the union of the high-ratio cells does."""
    if not any(len(a) for a in atoms) and first.keys.size == 0:
        return []
    cells = _cells(first, second, atoms)
    halves = [np.arange(o.n) % 2 == 0 for o in (first, second)]
    c1, c2 = cells(first), cells(second)
    size = int(max(c1.max(initial=0), c2.max(initial=0))) + 1
    build = [np.bincount(c[h], minlength=size) for c, h in ((c1, halves[0]), (c2, halves[1]))]
    check = [np.bincount(c[~h], minlength=size) for c, h in ((c1, halves[0]), (c2, halves[1]))]
    held = int((~halves[0]).sum())
    family: list[Event] = []
    for a, b, name in ((0, 1, "first"), (1, 0, "second")):
        ratio = np.log((build[a] + 0.5) / (build[b] + 0.5))
        order = np.argsort(-ratio, kind="stable")
        order = order[(build[a] + build[b])[order] > 0]
        ka, kb = np.cumsum(check[a][order]), np.cumsum(check[b][order])
        scores = [(_score(int(x), int(y), held, held, 2.0, 0.0), j) for j, (x, y) in enumerate(zip(ka, kb, strict=True))
                  if x >= 5]
        for _, j in sorted((s_j for s_j in scores if math.isfinite(s_j[0])), reverse=True)[:RATIO_EVENTS]:
            members = np.zeros(size, dtype=bool)
            members[order[: j + 1]] = True
            family.append((f"estimated loss towards the {name} input in its top {j + 1} of {size} cells "
                           f"(pattern x quantile bin of sum(*))", _in_cells(cells, members)))
    return family


def _cells(first: Outputs, second: Outputs, atoms: list[np.ndarray]) -> Callable[[Outputs], np.ndarray]:
    """A function numbering each output's cell (`ratio_events`), built from the pilot."""
    skeleton = _memo_pair(lambda o: _skeleton(o, atoms))
    (k1, s1), (k2, s2) = skeleton(first), skeleton(second)
    keys, sums = np.concatenate([k1, k2]), np.concatenate([s1, s2])
    patterns, counts = np.unique(keys, return_counts=True)
    frequent = patterns[counts >= 20]
    edges: list[np.ndarray] = []
    offsets = [1]  # cell 0: the rare patterns
    for key in frequent:
        inside = sums[keys == key]
        bins = min(RATIO_CELLS, max(1, inside.size // 40))
        cut = np.unique(np.quantile(inside, np.linspace(0, 1, bins + 1)[1:-1])) if bins > 1 else np.array([])
        edges.append(cut)
        offsets.append(offsets[-1] + cut.size + 1)

    def number(o: Outputs) -> np.ndarray:
        key, total = skeleton(o)
        where = np.searchsorted(frequent, key)
        known = (where < frequent.size) & (frequent[np.minimum(where, max(frequent.size - 1, 0))] == key) \
            if frequent.size else np.zeros(key.shape, dtype=bool)
        out = np.zeros(key.shape, dtype=int)
        for i in np.unique(where[known]):
            rows = known & (where == i)
            out[rows] = offsets[i] + np.searchsorted(edges[i], total[rows], side="right")
        return out

    return _memo(number)


def _in_cells(cells: Callable[[Outputs], np.ndarray], members: np.ndarray) -> Callable[[Outputs], np.ndarray]:
    def event(o: Outputs) -> np.ndarray:
        return members[cells(o)]

    return event


def _memo_pair(function: Callable[[Outputs], tuple[np.ndarray, np.ndarray]]
               ) -> Callable[[Outputs], tuple[np.ndarray, np.ndarray]]:
    cache: dict[int, tuple[Outputs, tuple[np.ndarray, np.ndarray]]] = {}

    def once(o: Outputs) -> tuple[np.ndarray, np.ndarray]:
        if id(o) not in cache:
            cache[id(o)] = (o, function(o))
        return cache[id(o)][1]

    return once


def _length_events(first: Outputs, second: Outputs) -> list[Event]:
    lengths = np.unique(np.concatenate([first.lengths, second.lengths]))
    if len(lengths) < 2:
        return []
    return ([(f"len(out) == {n}", _compare(_lengths, "==", float(n))) for n in lengths]
            + [(f"len(out) >= {n}", _compare(_lengths, ">=", float(n))) for n in lengths[1:]])


def _column_events(name: str, column: Callable[[Outputs], np.ndarray], pooled: np.ndarray,
                   atoms: np.ndarray) -> list[Event]:
    pooled = pooled[~np.isnan(pooled)]
    family: list[Event] = [(f"{name} == {v:g}", _compare(column, "==", float(v))) for v in atoms[:8]]
    rest = pooled[~np.isin(pooled, atoms)]
    if rest.size > 20:
        for c in np.unique(np.quantile(rest, QUANTILES)):
            family.append((f"{name} <= {c:.4g}", _compare(column, "<=", float(c))))
            family.append((f"{name} >= {c:.4g}", _compare(column, ">=", float(c))))
    return family


# ---------------------------------------------------------------- the audit

Sampler = Callable[[Pair, bool, int, int], Outputs]  # (pair, second side?, runs, seed) -> outputs


@dataclass(frozen=True)
class _Plan:
    name: str
    kind: str
    pairs: list[Pair]
    claims: list[float]
    delta: float
    draw: Sampler
    sampler: str
    notes: tuple[str, ...] = ()


def _seed(seed: int, *parts: int) -> int:
    return zlib.crc32(repr((seed, *parts)).encode()) | (seed << 32)


FOCUS = 4  # pairs given the second, larger pilot
FOCUS_FACTOR = 4  # the second pilot's runs, as a multiple of the first's
#: the confirmation: the best tested (pair, event), when the test leaves it short of a leak but
#: near one, is tested again on CONFIRM_FACTOR x `samples` fresh runs a side, in the direction the
#: test found, at CONFIRM_SHARE of the audit's miss probability (the test keeps the rest)
CONFIRM_FACTOR = 3
CONFIRM_SHARE = 0.3
#: ... near one: its bound at least this fraction of its claim, or its point estimate above the claim
CONFIRM_NEAR = 0.75


def directed_bound(k_high: int, k_low: int, n: int, alpha: float, delta: float = 0.0) -> float:
    """The eps an event proves in one direction fixed in advance (the side ``k_high`` is
    counted on is the one more likely): two one-sided Clopper-Pearson bounds, each at alpha."""
    low = clopper_pearson(k_high, n, alpha)[0]
    up = clopper_pearson(k_low, n, alpha)[1]
    return math.log((low - delta) / up) if low - delta > 0 else 0.0


def _run(plan: _Plan, samples: int, pilot: int, confidence: float, seed: int, keep: int = KEEP,
         share: float = CONFIRM_SHARE) -> AuditResult:
    """The audit (module docstring): a screening pilot of ``pilot`` runs a side on every pair,
    a second pilot of FOCUS_FACTOR * ``pilot`` more on the FOCUS best pairs (successive halving,
    as a search over inputs spends its runs where a loss shows), the events chosen on both
    pilots together, then the test on ``samples`` fresh runs a side."""
    start = time.process_time()
    # Bonferroni: the test's kept events, four one-sided bounds each, share 1 - CONFIRM_SHARE of
    # the miss probability; the confirmation's two bounds the rest (whether it runs or not)
    alpha = (1 - confidence) * (1 - share) / (4 * keep)
    from scipy.special import ndtri

    z = -float(ndtri(alpha))
    screened: list[tuple[float, int, Event, tuple[int, int]]] = []
    pilots: dict[int, tuple[Outputs, Outputs]] = {}
    for index, pair in enumerate(plan.pairs):
        pilots[index] = (plan.draw(pair, False, pilot, _seed(seed, 1, index)),
                         plan.draw(pair, True, pilot, _seed(seed, 2, index)))
        screened += _candidates(plan, index, pilots[index], pilot, samples, z)
    if not screened:
        raise AuditError("no output event to test (the pilot runs gave no output)")
    events_searched = len(screened)
    focus = _best_pairs(screened, FOCUS) if len(plan.pairs) > FOCUS else list(range(len(plan.pairs)))
    candidates = [c for c in screened if c[1] in focus] if len(plan.pairs) > FOCUS else screened
    if len(plan.pairs) > FOCUS:
        candidates = []
        for index in focus:
            more = (plan.draw(plan.pairs[index], False, FOCUS_FACTOR * pilot, _seed(seed, 5, index)),
                    plan.draw(plan.pairs[index], True, FOCUS_FACTOR * pilot, _seed(seed, 6, index)))
            both = tuple(_concat(a, b) for a, b in zip(pilots[index], more, strict=True))
            pilots[index] = both  # type: ignore[assignment]
            candidates += _candidates(plan, index, both, (1 + FOCUS_FACTOR) * pilot, samples, z)  # type: ignore[arg-type]
        events_searched += len(candidates)
    chosen = _choose(candidates, keep)
    drawn: dict[int, tuple[Outputs, Outputs]] = {}
    tested: list[EventResult] = []
    for _, index, (name, test) in chosen:
        if index not in drawn:  # fresh runs, never seen by the choice of pairs and events
            drawn[index] = (plan.draw(plan.pairs[index], False, samples, _seed(seed, 3, index)),
                            plan.draw(plan.pairs[index], True, samples, _seed(seed, 4, index)))
        first, second = drawn[index]
        k1, k2 = int(test(first).sum()), int(test(second).sum())
        two_sided = alpha / 2
        tested.append(EventResult(plan.pairs[index].label, name, k1, k2, samples,
                                  loss_bound(k1, k2, samples, samples, alpha, plan.delta),
                                  _estimate(k1, k2, samples), plan.claims[index],
                                  (clopper_pearson(k1, samples, two_sided), clopper_pearson(k2, samples, two_sided))))
    best = max(tested, key=lambda e: (e.bound / e.claim if e.claim > 0 else math.inf * e.bound, e.bound))
    confirmed = _confirm(plan, chosen, tested, best, samples, (1 - confidence) * share, seed,
                         pilots, drawn) if share else None
    if confirmed is not None:
        tested.append(confirmed)
        best = max((best, confirmed), key=lambda e: e.bound / e.claim if e.claim > 0 else math.inf * e.bound)
    return AuditResult(plan.name, plan.kind, best.claim, plan.delta, max(e.bound for e in tested), confidence,
                       best, tuple(tested), len(plan.pairs), events_searched, pilot, samples, seed,
                       time.process_time() - start, plan.sampler, plan.notes)


def _confirm(plan: _Plan, chosen: list[tuple[float, int, Event]], tested: list[EventResult], best: EventResult,
             samples: int, miss: float, seed: int, pilots: dict[int, tuple[Outputs, Outputs]] | None = None,
             drawn: dict[int, tuple[Outputs, Outputs]] | None = None) -> EventResult | None:
    """The second stage: one event of the best tested pair on CONFIRM_FACTOR x ``samples`` fresh
    runs a side, in the direction its counts point to, both bounds at ``miss`` / 2. Run only when
    the test found no leak but came near one (its bound or its estimate against the claim): a
    leak shows through the log of the count on the likelier side, which three times the runs
    raises by about log 3 (docs/audit.md, "The confirmation"). The event is chosen again on that
    pair's pilot and test runs together (more runs than the pilot alone: a better estimate of the
    likelihood ratio), the tested event among the candidates. Which event, which direction and
    whether to run are decided on runs the confirmation does not reuse: its runs are fresh, so
    its bound holds at its own level whatever was decided."""
    if best.claim <= 0 or best.bound > best.claim:
        return None
    if best.bound < CONFIRM_NEAR * best.claim and best.estimate <= best.claim:
        return None
    k = next(i for i, e in enumerate(tested) if e is best)
    _, index, (name, test) = chosen[k]
    runs = CONFIRM_FACTOR * samples
    forward = best.k1 >= best.k2
    if pilots is not None and drawn is not None and index in pilots and index in drawn:
        from scipy.special import ndtri

        sample = tuple(_concat(a, b) for a, b in zip(pilots[index], drawn[index], strict=True))
        size = int(sample[0].n)
        z = -float(ndtri(miss / 2))
        scored = _candidates(plan, index, sample, size, runs, z)  # type: ignore[arg-type]
        own = (int(test(sample[0]).sum()), int(test(sample[1]).sum()))  # the tested event, a candidate too
        scored.append(((_score(*own, size, runs, z, plan.delta) - best.claim) / best.claim, index, (name, test), own))
        _, _, (name, test), (c1, c2) = max(scored, key=lambda c: c[0])
        forward = c1 >= c2
    first = plan.draw(plan.pairs[index], False, runs, _seed(seed, 7, index))
    second = plan.draw(plan.pairs[index], True, runs, _seed(seed, 8, index))
    k1, k2 = int(test(first).sum()), int(test(second).sum())
    high, low = (k1, k2) if forward else (k2, k1)
    bound = directed_bound(high, low, runs, miss / 2, plan.delta)
    return EventResult(best.pair, f"{name} (confirmed on {runs} fresh runs a side)", k1, k2, runs, bound,
                       _estimate(k1, k2, runs), best.claim,
                       (clopper_pearson(k1, runs, miss / 4), clopper_pearson(k2, runs, miss / 4)))


def _candidates(plan: _Plan, index: int, sample: tuple[Outputs, Outputs], runs: int, samples: int,
                z: float) -> list[tuple[float, int, Event, tuple[int, int]]]:
    """Every candidate event of pair ``index``, scored on ``sample`` (its pilot) by the bound it
    would give on ``samples`` runs, less the claim (a loss relative to the pair's own claim)."""
    first, second = sample
    found = []
    for event in candidate_events(first, second):
        k1, k2 = int(event[1](first).sum()), int(event[1](second).sum())
        score = _score(k1, k2, runs, samples, z, plan.delta)
        found.append(((score - plan.claims[index]) / max(plan.claims[index], 1e-9), index, event, (k1, k2)))
    return found


def _best_pairs(candidates: list[tuple[float, int, Event, tuple[int, int]]], count: int) -> list[int]:
    """The ``count`` pairs whose best events score highest."""
    best: dict[int, float] = {}
    for score, index, _, _ in candidates:
        best[index] = max(best.get(index, -math.inf), score)
    return sorted(best, key=lambda i: -best[i])[:count]


def _concat(a: Outputs, b: Outputs) -> Outputs:
    width = max(a.values.shape[1], b.values.shape[1])
    pad = [np.pad(o.values, ((0, 0), (0, width - o.values.shape[1])), constant_values=np.nan) for o in (a, b)]
    return Outputs(np.concatenate(pad), np.concatenate([a.lengths, b.lengths]))


def _choose(candidates: list[tuple[float, int, Event, tuple[int, int]]], keep: int) -> list[tuple[float, int, Event]]:
    """The ``keep`` best-scored (pair, event)s; an event with the same pilot counts on the
    same pair as one already kept is taken for the same event (another name of it) and skipped."""
    chosen: list[tuple[float, int, Event]] = []
    seen: set[tuple[int, tuple[int, int]]] = set()
    for score, index, event, counts in sorted(candidates, key=lambda c: -c[0]):
        if (index, counts) in seen:
            continue
        seen.add((index, counts))
        chosen.append((score, index, event))
        if len(chosen) == keep:
            break
    return chosen


Arguments = Mapping[str, object]  # fixed public parameters: NAME -> text (the command line) or a number / bool


def audit_mechanism(program: S.Program, name: str, samples: int = 100_000, pilot: int | None = None,
                    confidence: float = 0.95, seed: int = 0, lengths: tuple[int, ...] | None = None,
                    arguments: Arguments | None = None) -> AuditResult:
    """Audit the `mechanism` ``name`` of ``program`` (module docstring). ``arguments`` fixes
    public parameters (`fuzzpy audit --arg NAME=VALUE`): a public scalar at its value, a
    private vector at its length (the number of queries); the others are searched."""
    decl = next((d for d in program.decls if isinstance(d, S.MechanismDecl) and d.name == name), None)
    if decl is None:
        raise AuditError(f"no mechanism `{name}`")
    constants = static_constants(program)
    info = analyse(decl, constants)
    fixed, length = _mechanism_arguments(info, dict(arguments or {}))
    if length is not None:
        lengths = (length,)
    pairs = mechanism_pairs(info, LENGTHS if lengths is None else lengths, fixed=fixed)
    claims = [_claim(decl, pair) for pair in pairs]

    def draw(pair: Pair, second: bool, n: int, seed_: int) -> Outputs:
        args = pair.second if second else pair.first
        return lanes.sample(decl, constants, args, n, SeededSource(seed_))

    plan = _Plan(name, "mechanism", pairs, claims, _claim_delta(decl, pairs), draw,
                 "exact discrete Laplace / geometric / Gaussian on the runtime's grid, vectorised over runs")
    return _run(plan, samples, pilot or max(2_000, samples // 5), confidence, seed)


def _mechanism_arguments(info: MechanismInfo, arguments: dict[str, object]
                         ) -> tuple[dict[str, Fraction | bool], int | None]:
    """``arguments`` read against the mechanism's parameters: public scalars, and vector lengths."""
    fixed: dict[str, Fraction | bool] = {}
    length: int | None = None
    for pname, value in arguments.items():
        if pname in info.vectors:
            count = _number(pname, "int", value)
            if not isinstance(count, Fraction) or count < 1:
                raise AuditError(f"--arg {pname}=N fixes the length of the vector `{pname}`: a whole number >= 1")
            if length is not None and length != count:
                raise AuditError("the audit gives every vector one length: fix them at the same length")
            length = int(count)
        elif pname in info.scalars:
            fixed[pname] = _number(pname, info.scalars[pname], value)
        else:
            known = ", ".join([*info.scalars, *info.vectors]) or "none"
            raise AuditError(f"`{info.decl.name}` has no parameter `{pname}` (its parameters: {known})")
    return fixed, length


def _number(pname: str, sort: str, value: object) -> Fraction | bool:
    """A fixed argument as the runtime reads it: a number exactly (0.1 is 1/10), or a bool."""
    if sort == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise AuditError(f"`{value}` is not a bool, for `{pname}`")
    try:
        if isinstance(value, bool) or not isinstance(value, (str, int, float, Fraction)):
            raise ValueError
        number = Fraction(value.strip()) if isinstance(value, str) else Fraction(value)
    except (ValueError, ZeroDivisionError, OverflowError):
        raise AuditError(f"`{value}` is not a number, for `{pname}`") from None
    if sort == "int" and number.denominator != 1:
        raise AuditError(f"`{value}` is not a whole number, for `{pname} : int`")
    return number


def _claim_delta(decl: S.MechanismDecl, pairs: list[Pair]) -> float:
    """The delta of a `privacy (eps, delta)` claim, the largest over the pairs (a larger
    delta only lowers the bound the audit proves: never a false alarm); 0 for a pure claim."""
    if decl.delta is None:
        return 0.0
    deltas = [evaluate(decl.delta, pair.claim_env) for pair in pairs]
    if not all(isinstance(d, Fraction) for d in deltas):
        raise AuditError(f"the delta of `{decl.name}` is not a number")
    return max((float(d) for d in deltas), default=0.0)


def _claim(decl: S.MechanismDecl, pair: Pair) -> float:
    claim = evaluate(decl.privacy, pair.claim_env)
    if not isinstance(claim, Fraction):
        raise AuditError(f"the claim of `{decl.name}` is not a number at {pair.claim_env}")
    return float(claim)


def audit_definition(program: S.Program, name: str, samples: int = 10_000, pilot: int | None = None,
                     confidence: float = 0.95, seed: int = 0, delta: float | None = None,
                     arguments: Arguments | None = None) -> AuditResult:
    """Audit the checked definition ``name`` (a `fuzzy` result over one bag parameter; its
    other parameters, static ones included, at the numbers ``arguments`` gives)."""
    from fuzzpy.checker.driver import check_program, instantiate_definition
    from fuzzpy.checker.report import privacy_figure
    from fuzzpy.language.diagnostics import FuzzError
    from fuzzpy.language.types import TBag, TBool, TInt, TNum
    from fuzzpy.runtime.interpreter import Interpreter

    checked = check_program(program).definitions.get(name)
    if checked is None:
        raise AuditError(f"no definition `{name}`")
    given = dict(arguments or {})
    bags = [p.name for p in checked.params if isinstance(p.type, TBag)]
    others = [p for p in checked.params if p.name not in bags]
    unknown = sorted(set(given) - {p.name for p in others})
    if unknown:
        raise AuditError(f"`{name}` has no public parameter `{unknown[0]}`"
                         + (" (a bag is the data the audit searches)" if unknown[0] in bags else ""))
    missing = [p.name for p in others if p.name not in given]
    if len(bags) != 1 or missing:
        raise AuditError(f"`{name}` must take one private bag, its other parameters given with --arg, "
                         f"and release a `fuzzy` value (it takes {len(checked.params)} parameter(s), "
                         f"{len(bags)} of them private bags"
                         + (f"; give --arg {missing[0]}=VALUE" if missing else "") + ")")
    sorts = {p.name: "bool" if isinstance(p.type, TBool) else "int" if isinstance(p.type, TInt) else "num"
             for p in others if isinstance(p.type, (TBool, TInt, TNum))}
    odd = [p.name for p in others if p.name not in sorts]
    if odd:
        raise AuditError(f"the audit fixes numbers and bools only, not `{odd[0]}`")
    values = {p: _number(p, sorts[p], given[p]) for p in sorts}
    if checked.static_params:
        try:
            checked = instantiate_definition(program, name, {p: Fraction(values[p]) for p in checked.static_params})
        except FuzzError as error:
            raise AuditError(f"`{name}` is refused at these numbers: {error}") from None
    if bags[0] not in checked.privacy:
        raise AuditError(f"`{name}` has no privacy cost on `{bags[0]}`")
    figure = privacy_figure(checked.privacy[bags[0]], delta, bags[0])
    if figure.epsilon is None:
        raise AuditError(f"`{name}` has no privacy bound to audit")
    eps, dlt = float(figure.epsilon), float(figure.delta)
    if not math.isfinite(eps):
        raise AuditError(f"`{name}` has no finite privacy bound to audit")
    pairs = bag_pairs(program, checked.decl, bags[0])

    def draw(pair: Pair, second: bool, n: int, seed_: int) -> Outputs:
        interp = Interpreter(program, SeededSource(seed_))
        value = interp.definition(name)
        for param in checked.params:
            value = value((pair.second if second else pair.first)[bags[0]] if param.name == bags[0]
                          else _runtime_value(values[param.name], sorts[param.name]))
        if not isinstance(value, Fuzzy):
            raise AuditError(f"`{name}` does not release a `fuzzy` value")
        return _stack([_flatten(force(value.sample())) for _ in range(n)])

    plan = _Plan(name, "definition", pairs, [eps] * len(pairs), dlt, draw,
                 "the interpreter's exact samplers, one run at a time",
                 (f"claim by {figure.method}",))
    # definitions run one at a time in the interpreter: no confirmation (its runs would cost minutes)
    return _run(plan, samples, pilot or max(1_000, samples // 5), confidence, seed, share=0.0)


def _runtime_value(value: Fraction | bool, sort: str) -> object:
    """A fixed argument as the interpreter holds it (exact numbers, numpy bools)."""
    from fuzzpy.runtime.interpreter import exact_value

    if sort == "bool":
        return exact_value(value)
    return exact_value(int(value) if sort == "int" else value)


def _flatten(value: object) -> list[float]:
    if isinstance(value, Record):
        return [x for v in value.fields.values() for x in _flatten(v)]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, WithPair):
        return _flatten(value.left) + _flatten(value.right)
    if isinstance(value, np.ndarray):
        return [float(x) for x in value.ravel()]
    if isinstance(value, (bool, np.bool_)):
        return [1.0 if value else 0.0]
    if isinstance(value, (int, float, Fraction, np.integer, np.floating)):
        return [float(value)]
    raise AuditError(f"cannot audit a release of kind {type(value).__name__}")


def _stack(rows: list[list[float]]) -> Outputs:
    lengths = np.array([min(len(r), MAX_WIDTH) for r in rows], dtype=int)
    values = np.full((len(rows), max(int(lengths.max(initial=0)), 1)), np.nan)
    for i, r in enumerate(rows):
        values[i, : lengths[i]] = r[: lengths[i]]
    return Outputs(values, lengths)


def safe_audit(run: Callable[[], AuditResult]) -> AuditResult:
    """``run``, with every failure of the program under audit as an `AuditError`."""
    try:
        return run()
    except (AuditError, NoInputs, Unsupported) as error:
        raise AuditError(str(error)) from error
    except RuntimeFailure as error:
        raise AuditError(f"the program failed on an audit input: {error}") from error
