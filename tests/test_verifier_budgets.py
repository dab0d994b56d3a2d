"""The verifier's budgets are counted work, not CPU time: which counterexample
is printed, and whether a z3 check is decided, must not depend on the
machine's speed or load (golden files pin the counterexamples; CI runs on a
loaded machine). CPU seconds remain only as safety caps a normal run never
reaches."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import z3

from fuzzpy.checker.scope import static_constants
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.release.pipeline import load_source, parse
from fuzzpy.verifier import REFUTE_CANDIDATES, REFUTE_SECONDS, refuter, solver
from fuzzpy.verifier.model import analyse
from fuzzpy.verifier.refuter import Counterexample, refute

SUITE = Path(__file__).parent / "mechanism_suite"
#: not private; the quick look misses it and the full search finds its
#: counterexample ~3,900 input pairs in, in its third phase
LATE_FIND = SUITE / "dwork_roth" / "sparse_redraw_unscaled.fz"


def _info(path: Path):  # noqa: ANN202
    program = parse(load_source(path))
    decl = next(d for d in program.decls if isinstance(d, MechanismDecl))
    return analyse(decl, static_constants(program))


def _fast_clock(step: float) -> SimpleNamespace:
    """A CPU clock that advances ``step`` seconds each time it is read, however
    little work was done: a machine some thousand times slower (or loaded)."""
    reads = iter(range(10**9))
    return SimpleNamespace(process_time=lambda: next(reads) * step)


def _shown(cx: Counterexample | None) -> tuple | None:
    if cx is None:
        return None
    return (cx.params, cx.neighbour_params, cx.inputs, cx.neighbour, cx.output, cx.eps, cx.log_ratio)


@pytest.mark.slow
def test_the_full_search_finds_the_same_counterexample_on_a_slow_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    info = _info(LATE_FIND)
    found, _ = refute(info, REFUTE_SECONDS, candidates=REFUTE_CANDIDATES)
    assert found is not None
    # 3 ms per candidate: the ~3,900 pairs read the clock for ~12 s, within the
    # 30 s cap, but a share of 8 s per phase would cut the first three phases
    monkeypatch.setattr(refuter, "time", _fast_clock(0.003))
    slow, _ = refute(info, REFUTE_SECONDS, candidates=REFUTE_CANDIDATES)
    assert _shown(slow) == _shown(found)


def test_the_search_stops_at_its_count_of_candidates_whatever_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    info = _info(LATE_FIND)
    monkeypatch.setattr(refuter, "time", _fast_clock(0.0))  # CPU time never passes
    found, why = refute(info, REFUTE_SECONDS, candidates=300)
    assert found is None and "300" in why


def _hard_integer_problem(s: z3.Solver) -> None:
    xs = z3.Ints(" ".join(f"x{i}" for i in range(6)))
    f = z3.Function("f", z3.IntSort(), z3.RealSort())
    i, n = z3.Int("i"), z3.Int("n")
    s.add(z3.ForAll([i], z3.Implies(z3.And(i >= 0, i < n), f(i) * f(i + 1) >= f(i) + 1)))
    s.add(n > 5, f(0) == 1, z3.Sum([f(k) for k in xs]) < 0, z3.And([z3.And(k >= 0, k < n) for k in xs]))


def test_a_z3_check_gives_up_at_its_resource_limit_not_at_a_time() -> None:
    probe = z3.Solver()
    _hard_integer_problem(probe)
    assumptions = list(probe.assertions())
    # a CPU cap of an hour: only the resource limit can end the check
    outcome = solver.check_valid(assumptions, z3.BoolVal(False), rlimit=200_000, cap_seconds=3600.0)
    assert outcome.status == "unknown"
    again = solver.check_valid(assumptions, z3.BoolVal(False), rlimit=200_000, cap_seconds=3600.0)
    assert again.status == "unknown"
    easy = solver.check_valid([z3.Int("y") > 2], z3.Int("y") > 1, rlimit=200_000, cap_seconds=3600.0)
    assert easy.status == "valid"


def test_a_check_out_of_its_counted_budget_is_asked_again_however_slow_the_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the second asking (in a fresh context) once depended on the CPU seconds
    # the first had spent, so a loaded CI machine left a proof unknown
    answers = iter([solver.Outcome("unknown", reason="canceled"), solver.Outcome("valid")])
    monkeypatch.setattr(solver, "_check", lambda *_args: next(answers))
    monkeypatch.setattr(solver, "time", _fast_clock(1000.0))
    assert solver.check_valid([], z3.BoolVal(True)).status == "valid"


def test_a_check_stopped_by_the_cpu_cap_is_not_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []

    def capped(*args: object) -> solver.Outcome:
        calls.append(args)
        return solver.Outcome("unknown", reason=solver.CPU_CAP_REASON)

    monkeypatch.setattr(solver, "_check", capped)
    assert solver.check_valid([], z3.BoolVal(True)).status == "unknown"
    assert len(calls) == 1


def test_the_cpu_cap_names_itself_as_the_reason() -> None:
    x, y, n = z3.Ints("x y n")
    fermat_cubes = [x * x * x + y * y * y == n * n * n, x > 0, y > 0, n > 0]
    outcome = solver.check_valid(fermat_cubes, z3.BoolVal(False), rlimit=10**12, cap_seconds=0.2)
    assert (outcome.status, outcome.reason) == ("unknown", solver.CPU_CAP_REASON)
