"""Run one checked program's definitions on neighbour pairs and collect violations.

`Case` says which definitions to run, under which model (see `compare`),
on which pairs; `examine` checks the source once and returns every
violation found, as sentences (picklable, so a forked child can send them).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from fuzzpy.language import types as T

from . import compare as C
from .datasets import Pair, Schema, catalogue, sized
from .runner import Checked, Outcome, bag_parameter, check_text, run_cli, run_pair

SEED = 20240611


@dataclass(frozen=True)
class Case:
    """A program and how to test it.

    `models` maps definitions to run to their model; with none given, every
    definition with one `bag` parameter runs, deterministic ones as such
    and fuzzy ones under "outcome". `pairs(schema)` gives the neighbour pairs.
    """

    name: str
    source: str
    models: dict[str, str] = field(default_factory=dict)
    expect: str = "safe"  # "safe" | "rejected" | "accepted"
    sizes: tuple[int, ...] = ()  # also run n typical rows against n + 1
    fill: dict[str, Any] = field(default_factory=dict)  # column values of the typical rows
    extra: dict[str, Any] = field(default_factory=dict)  # column values of the row added to them
    charges: dict[str, Any] = field(default_factory=dict)  # definition -> least pure epsilon it must cost
    use_catalogue: bool = True
    bisect: tuple[int, int] | None = None  # find where the ending changes between n and n + 1 rows
    vector_length: int = 2
    via_cli: bool = False
    seeds: tuple[int, ...] = (SEED,)
    seconds: float = 120.0  # for the whole case, when run isolated

    def pairs(self, schema: Schema) -> list[Pair]:
        return (catalogue(schema) if self.use_catalogue else []) + sized(schema, self.sizes, self.fill, self.extra)


@dataclass
class Report:
    """What examining a case found. `checked` is False when check rejected it."""

    checked: bool = False
    rejection: str = ""
    violations: list[str] = field(default_factory=list)
    pairs_run: int = 0


def definitions_to_run(checked: Any, case: Case) -> dict[str, str]:
    """The definitions to run with their models: those the case names (a
    model left out is the default), else every one-bag definition; the
    default is "deterministic" for a non-fuzzy result, else "outcome"."""
    names = case.models or {
        name: "" for name, info in checked.definitions.items()
        if len(info.params) == 1 and isinstance(info.params[0].type, T.TBag)
    }
    chosen = {}
    for name, model in names.items():
        if name not in checked.definitions:
            raise ValueError(f"{case.name}: no definition `{name}` to run")
        fuzzy = isinstance(checked.definitions[name].result, T.TFuzzy)
        chosen[name] = model or ("outcome" if fuzzy else "deterministic")
    return chosen


def examine(case: Case) -> Report:
    report = Report()
    result: Checked = check_text(case.source, f"{case.name}.fz")
    if not result.accepted:
        report.rejection = result.outcome.describe()
        if result.outcome.kind != "failed":
            report.violations.append(f"check {result.outcome.describe()}: no diagnostic")
        elif case.expect == "accepted":
            report.violations.append(f"check rejected a program that must be accepted: {report.rejection}")
        return report
    report.checked = True
    if case.expect == "rejected":
        report.violations.append("check accepted a program it must reject")
    for definition, least in case.charges.items():
        charged = C.pure_epsilon(C.Claim.of(result.program, definition).events)
        if charged is not None and charged < least:
            report.violations.append(f"{definition} is charged eps = {float(charged):.6g}; it costs {least}")
    with tempfile.TemporaryDirectory(prefix="neighbour-") as tmp:
        folder = Path(tmp)
        for definition, model in definitions_to_run(result.program, case).items():
            report.violations += _examine_definition(result.program, case, definition, model, folder, report)
    return report


def _examine_definition(
    checked: Any, case: Case, definition: str, model: str, folder: Path, report: Report
) -> list[str]:
    _, bag_type = bag_parameter(checked, definition)
    schema = Schema.of(bag_type, case.vector_length)
    claim = C.Claim.of(checked, definition)
    found: list[str] = []
    if case.bisect is not None:
        found += _bisect(checked, case, definition, model, claim, schema, folder)
    for pair in case.pairs(schema):
        for seed in case.seeds:
            first, second = run_pair(checked, definition, pair, schema, folder, seed)
            if "unloadable" in (first.kind, second.kind):
                found.append(f"{definition}: harness data not loadable on {pair.describe()}")
                continue
            report.pairs_run += 1
            violation = C.judge(claim, model, first, second)
            if violation is not None:
                found.append(f"{definition} on {pair.describe()}: {violation}")
                return found  # one per definition is enough to report
    if case.via_cli and claim.fuzzy:
        found += _examine_cli(case, definition, model, claim, schema, folder)
    return found


def _examine_cli(case: Case, definition: str, model: str, claim: C.Claim, schema: Schema, folder: Path) -> list[str]:
    """Through `fuzzpy run`: a run that does not release must not be charged
    (every run refuses before reading the data, or releases), and both
    neighbours end the same way with the same warnings."""
    from .datasets import write_csv

    program = folder / f"{case.name}.fz"
    program.write_text(case.source, encoding="utf-8")
    found: list[str] = []
    few = catalogue(schema)[:3] if case.use_catalogue else []
    for pair in sized(schema, case.sizes, case.fill, case.extra) + few:
        ends = []
        for rows in (pair.smaller, pair.larger):
            data = write_csv(schema, rows, folder)
            end = run_cli(program, definition, data, case.seeds[0], folder / "ledger.sqlite")
            if end.exit != 0 and end.charged:
                found.append(f"{definition} via `fuzzpy run` on {pair.describe()}: exit {end.exit} "
                             f"{' '.join(end.codes)} after the ledger was charged")
                return found
            ends.append(end)
        first, second = (_as_outcome(e) for e in ends)
        violation = C.judge(claim, model, first, second)
        if violation is None and ends[0].warnings != ends[1].warnings:
            violation = C.Violation("ending", f"the warnings differ: {ends[0].warnings} / {ends[1].warnings}")
        if violation is not None:
            found.append(f"{definition} via `fuzzpy run` on {pair.describe()}: {violation}")
            return found
    return found


def _as_outcome(end: Any) -> Outcome:
    if end.exit == 0:
        return Outcome("released", end.released)
    if "FZ799" in end.codes:
        return Outcome("crashed", codes=end.codes, detail=f"exit {end.exit}")
    return Outcome("failed", codes=end.codes, detail=f"exit {end.exit}")


# ---------------------------------------------------------------- a boundary in the size


def _bisect(checked: Any, case: Case, definition: str, model: str, claim: C.Claim, schema: Schema,
            folder: Path) -> list[str]:
    """Outcomes at lo and hi rows that end differently hide a size n where n
    and n + 1 rows end differently: find it by bisection and judge that pair
    (a data-dependent failure such as a recursion limit reached at one size)."""
    from .datasets import added, write_csv
    from .runner import run_file

    assert case.bisect is not None
    row = schema.row(case.fill)

    def ending(n: int) -> Outcome:
        return run_file(checked, definition, write_csv(schema, [row] * n, folder), case.seeds[0])

    lo, hi = case.bisect
    low, high = ending(lo), ending(hi)
    if low.same_ending(high):
        return []
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ending(mid).same_ending(low):
            lo = mid
        else:
            hi = mid
    pair = added(f"{lo}-rows", [row] * lo, row)
    first, second = run_pair(checked, definition, pair, schema, folder, case.seeds[0])
    violation = C.judge(claim, model, first, second)
    return [] if violation is None else [f"{definition} on {pair.describe()}: {violation}"]


# ---------------------------------------------------------------- generated programs


@dataclass
class Tally:
    """What a batch of generated programs did: programs checked, rejected,
    program/neighbour pairs and definition/neighbour pairs run, and the
    violations found by kind (with the shortest program that showed each)."""

    programs: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    refused: int = 0
    pairs: int = 0
    runs: int = 0
    violations: dict[str, tuple[str, str]] = field(default_factory=dict)  # kind -> (program, message)
    counts: dict[str, int] = field(default_factory=dict)
    rejections: dict[str, tuple[str, str]] = field(default_factory=dict)  # code -> (program, message)

    def record(self, kind: str, source: str, message: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        known = self.violations.get(kind)
        if known is None or len(source) < len(known[0]):
            self.violations[kind] = (source, message)

    def summary(self) -> str:
        lines = [f"{self.programs} programs ({sum(self.rejected.values())} rejected: {self.rejected}; "
                 f"{self.refused} releases below the noise floor), {self.pairs} program/neighbour pairs, "
                 f"{self.runs} definition/neighbour pairs"]
        for code, (source, message) in sorted(self.rejections.items()):
            lines.append(f"--- rejected with {code}, e.g.:\n{source}=> {message}")
        for kind, (source, message) in sorted(self.violations.items()):
            lines.append(f"--- {kind}: {self.counts[kind]} times; the shortest program:\n{source}=> {message}")
        return "\n".join(lines)


_CHECKED: dict[str, Checked] = {}


def clear_cache() -> None:
    _CHECKED.clear()


def _checked(source: str) -> Checked:
    if source not in _CHECKED:
        if len(_CHECKED) > 512:
            _CHECKED.clear()
        _CHECKED[source] = check_text(source)
    return _CHECKED[source]


#: `fuzzy run` refuses releases below this cost (language notes: the noise grid).
NOISE_FLOOR = C.Fraction(1, 2**23)


def below_noise_floor(events: Any) -> bool:
    from fuzzpy.accounting import events as E

    for event in events:
        if isinstance(event, E.Laplace) and 0 < event.epsilon < NOISE_FLOOR:
            return True
        if isinstance(event, E.Gaussian) and 0 < event.sensitivity / event.sigma < NOISE_FLOOR:
            return True
        if isinstance(event, (E.Repeat, E.Subsample, E.Group)) and below_noise_floor(event.body):
            return True
    return False


def symbolic_violations(program: Any) -> list[str]:
    """A cost stated once over static parameters (`eps * n`-DP, issue 27)
    must hold at every instantiation: at each call's numbers it may not be
    below the pure epsilon that call's own check found (which the runs on
    neighbour pairs then judge), so the symbolic claim is judged with it."""
    from fuzzpy.accounting.accountant import pure_epsilon

    problems = []
    for name, d in program.definitions.items():
        if d.deferred or not d.symbolic_privacy:
            continue
        for instance in program.instances.get(name, ()):
            values = dict(instance.values)
            for param, poly in d.symbolic_privacy.items():
                events = instance.privacy.get(param)
                found = None if events is None else pure_epsilon(events)
                if poly is None or found is None:
                    continue
                stated = poly.evaluate(values)
                if stated < found:
                    problems.append(f"`{name}` states ({poly})-DP in {param}, {stated} at {values}, "
                                    f"but that call's check found {found}")
    problems += _approximate_violations(program)
    for name, d in program.definitions.items():  # index-term sensitivities (`n`-sensitive in x)
        symbolic = {p.name: p.sensitivity.poly for p in d.params if p.sensitivity.is_symbolic}
        for instance in program.instances.get(name, ()) if symbolic and not d.deferred else ():
            for param, sens in instance.sensitivities:
                if param in symbolic and (sens.value is None or symbolic[param].evaluate(dict(instance.values)) < sens.value):
                    problems.append(f"`{name}` states {symbolic[param]}-sensitive in {param}, but at "
                                    f"{dict(instance.values)} its check found {sens}")
    return problems


def _approximate_violations(program: Any) -> list[str]:
    """An (eps, delta) cost stated over parameters (`gauss_dp[s, eps, delta]`,
    issue 27) must hold at each call: the accountant's tightest epsilon of
    that call's events at the stated delta is at most the stated epsilon."""
    from fuzzpy.accounting.accountant import tightest

    problems = []
    for name, d in program.definitions.items():
        for instance in program.instances.get(name, ()) if not d.deferred else ():
            values = dict(instance.values)
            for param, delta_poly in d.symbolic_delta.items():
                eps_poly, events = d.symbolic_privacy.get(param), instance.privacy.get(param)
                if eps_poly is None or not events:
                    continue
                stated_eps, stated_delta = eps_poly.evaluate(values), delta_poly.evaluate(values)
                if stated_delta >= 1:
                    continue
                found = tightest(events, float(stated_delta)).epsilon
                if Fraction(found) > stated_eps:
                    problems.append(f"`{name}` states ({eps_poly}, {delta_poly})-DP in {param}, ({stated_eps}, "
                                    f"{stated_delta}) at {values}, but that call's events cost {found} at that delta")
    return problems


def examine_generated(source: str, models: dict[str, str], pairs: list[Pair], schema: Schema, seed: int,
                      folder: Path, tally: Tally) -> None:
    """Check `source` and run each definition of `models` on every pair,
    recording into `tally`."""
    tally.programs += 1
    result = _checked(source)
    if not result.accepted:
        if result.outcome.kind != "failed":
            tally.record(f"check {result.outcome.kind}", source, result.outcome.describe())
        key = " ".join(result.outcome.codes) or result.outcome.kind
        tally.rejected[key] = tally.rejected.get(key, 0) + 1
        if key not in tally.rejections or len(source) < len(tally.rejections[key][0]):
            tally.rejections[key] = (source, result.outcome.detail)
        return
    tally.pairs += len(pairs)
    for problem in symbolic_violations(result.program):
        tally.record("symbolic claim below an instance", source, problem)
    for definition, model in models.items():
        claim = C.Claim.of(result.program, definition)
        if claim.fuzzy and below_noise_floor(claim.events):
            tally.refused += 1
            continue
        for pair in pairs:
            first, second = run_pair(result.program, definition, pair, schema, folder, seed)
            tally.runs += 1
            violation = C.judge(claim, model, first, second)
            if violation is not None:
                where = f"{definition} ({model}) on {pair.describe()}"
                tally.record(f"{violation.kind} in {model}", source, f"{where}: {violation.message}")
