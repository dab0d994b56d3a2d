"""The harness catches broken rules.

Each test breaks one rule of the checker or the runtime with monkeypatch and
asserts that the harness reports a violation on a program that is clean
without the break (so the report is the break's doing, not an old bug).

Seams used (the lead may want public ones; see the report):
* `fuzzpy.checker.primitives.PRIMITIVES` -- the table of primitive rules;
  a rule's judgment is rescaled with `fuzzpy.checker.usage.scale_ctx`;
* `fuzzpy.checker.noise.Laplace` -- the event the `laplace` rule charges;
* `fuzzpy.checker.infer.case_scale` / `fuzzpy.checker.blocks.case_scale` --
  the positive floor of Fuzz's case rule;
* `fuzzpy.runtime.primitives._sum` -- the maker of the runtime's `sum[lo, hi]`;
* `fuzzpy.runtime.primitives.clamped_sum` -- the exact sum of
  `fuzzpy.runtime.aggregates` that `sum[lo, hi]` calls.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from . import harness
from .harness import Case, examine

COUNT = """
type R = { a : num, k : int };
def count (db : bag R) : num = size (filter (fun r -> r.k > 0) db);
def noisy (db : bag R) : fuzzy num = laplace[1] (size db);
def total (db : bag R) : num = sum[0, 1] (map (fun r -> r.a) db);
def ints (db : bag R) : num = sum[0, 10] (map (fun r -> r.k) db);
"""
BRANCH = """
type R = { a : num, k : int };
def branch (db : bag R) : fuzzy num = return (if size db > 2 then 1 else 0);
"""


def _case(definitions: dict[str, str], source: str = COUNT) -> Case:
    return Case("broken", source, models=definitions, use_catalogue=False, sizes=(0, 1, 2, 3),
                extra={"a": 1.0, "k": 50})


@pytest.fixture(autouse=True)
def _fresh_checks() -> Iterator[None]:
    """Checked programs are cached by source: a patched checker must not
    leave its results for the next test."""
    harness.clear_cache()
    yield
    harness.clear_cache()


def _seam(module: object, name: str) -> object:
    if not hasattr(module, name):
        pytest.fail(f"the seam `{getattr(module, '__name__', module)}.{name}` is gone: update this test")
    return getattr(module, name)


def halve_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """`size` reported 1/2-sensitive instead of 1."""
    from fuzzpy.checker import primitives, usage
    from fuzzpy.language.sensitivity import Sens

    table = _seam(primitives, "PRIMITIVES")
    original = table["size"]  # type: ignore[index]

    def rule(ck: object, call: object) -> object:
        judgment = original.rule(ck, call)
        judgment.ctx = usage.scale_ctx(judgment.ctx, Sens.of(Fraction(1, 2)))
        return judgment

    monkeypatch.setitem(table, "size", dataclasses.replace(original, rule=rule))  # type: ignore[arg-type]


# ---------------------------------------------------------------- the checker


def test_size_at_half_sensitivity_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case({"count": "deterministic", "noisy": "laplace"})
    assert examine(case).violations == []
    halve_size(monkeypatch)
    violations = examine(case).violations
    assert any(v.startswith("count") and "[distance]" in v for v in violations), violations
    assert any(v.startswith("noisy") and "[distance]" in v for v in violations), violations


def test_laplace_charging_half_the_sensitivity_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzzpy.accounting.events import Laplace
    from fuzzpy.checker import noise

    case = _case({"noisy": "laplace"})
    assert examine(case).violations == []
    _seam(noise, "Laplace")
    monkeypatch.setattr(noise, "Laplace", lambda s, scale: Laplace(s / 2, scale))
    violations = examine(case).violations
    assert any("[distance]" in v for v in violations), violations


def test_branching_on_private_data_at_cost_zero_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The case rule's positive floor removed: `if size db > 2` becomes
    0-sensitive, so the branch is released at cost 0 (Fuzz's 0 * inf)."""
    from fuzzpy.checker import blocks, infer

    case = _case({"branch": "outcome"}, BRANCH)
    report = examine(case)
    assert not report.checked and report.violations == []  # rejected: infinite cost
    for module in (infer, blocks):
        _seam(module, "case_scale")
        monkeypatch.setattr(module, "case_scale", lambda r: r)
    report = examine(case)
    assert report.checked
    assert any("[identical]" in v for v in report.violations), report.violations


ROUTES = """
type R = { a : num, k : int };
def both (xs : bag R) (ys : bag R) : fuzzy num = laplace[1] (size xs + size ys);
def aliased (db : bag R) : fuzzy num = { let copy = db; laplace[1] (size copy + size db) };
def called (db : bag R) : fuzzy num = both db db;
"""


@pytest.mark.slow  # three checks of the harness (about 5 s)
def test_one_draw_dropping_a_route_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """One draw read by two routes is charged at the summed sensitivity
    (`checker.costs.merge_events`); taking the larger route instead of the
    sum claims half of what the release moves."""
    from fuzzpy.accounting.events import Laplace
    from fuzzpy.checker import costs

    case = _case({"aliased": "laplace", "called": "laplace"}, ROUTES)
    assert examine(case).violations == []
    original = _seam(costs, "merge_events")

    def larger(events: list[object]) -> object:
        found = original(events)  # type: ignore[operator]
        if found is None:
            return None
        event, parts = found
        return Laplace(max(parts), event.scale), parts

    monkeypatch.setattr(costs, "merge_events", larger)
    harness.clear_cache()
    violations = examine(case).violations
    assert any(v.startswith("aliased") and "[distance]" in v for v in violations), violations
    assert any(v.startswith("called") and "[distance]" in v for v in violations), violations


# ---------------------------------------------------------------- the runtime


def _patch_sum(monkeypatch: pytest.MonkeyPatch, total_of: object) -> None:
    from fuzzpy.runtime import primitives
    from fuzzpy.runtime.values import Function

    _seam(primitives, "_sum")

    def maker(interp: object, args: list[Fraction]) -> object:
        lo, hi = args
        return Function("sum", 1, lambda db: total_of(np.asarray(db.view()), lo, hi))  # type: ignore[operator]

    monkeypatch.setattr(primitives, "_sum", maker)


def _float_total(column: np.ndarray, lo: Fraction, hi: Fraction) -> float:
    total = 0.0
    for x in column.tolist():  # one float addition per row, in file order
        total += min(max(float(x), float(lo)), float(hi))
    return total


def test_float_summation_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Float summation: {0.1} sums to 0.1, {0.1, 1.0} to 1.1000000000000001,
    a move of more than the bound 1 (Casacuberta et al., CCS 2022). The
    exact sum of `aggregates` moves by exactly 1: clean without the break."""
    from fuzzpy.runtime import aggregates, primitives

    case = dataclasses.replace(_case({"total": "deterministic"}), sizes=(1,), fill={"a": 0.1})
    assert examine(case).violations == []
    assert _seam(primitives, "clamped_sum") is aggregates.clamped_sum
    monkeypatch.setattr(primitives, "clamped_sum", _float_total)
    violations = examine(case).violations
    assert any("[distance]" in v for v in violations), violations


def test_float_summation_in_file_order_is_caught_on_many_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rounding of a float sum depends on the other rows: 633 rows of
    0.1 add up (in file order) to 63.30000000000063, and one more row of 1.0
    takes the sum past 64, where doubles are twice as far apart: the float
    sum moves by 1.000000000000007, more than the bound. The exact sum moves
    by exactly 1."""
    from fuzzpy.runtime import primitives

    case = dataclasses.replace(_case({"total": "deterministic"}), sizes=(633,), fill={"a": 0.1})
    assert examine(case).violations == []
    _seam(primitives, "clamped_sum")
    monkeypatch.setattr(primitives, "clamped_sum", _float_total)
    violations = examine(case).violations
    assert any("[distance]" in v for v in violations), violations


def test_a_sum_that_forgets_to_clamp_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case({"ints": "deterministic"})
    assert examine(case).violations == []
    _patch_sum(monkeypatch, lambda column, lo, hi: int(column.sum()))
    violations = examine(case).violations
    assert any("[distance]" in v for v in violations), violations


# ---------------------------------------------------------------- the generated programs


def test_generated_counting_programs_catch_size_at_half_sensitivity(monkeypatch: pytest.MonkeyPatch) -> None:
    from .test_generated import run_counting

    halve_size(monkeypatch)
    with tempfile.TemporaryDirectory(prefix="neighbour-") as tmp:
        tally = run_counting(60, Path(tmp))
    assert any(kind.startswith("distance") for kind in tally.violations), tally.summary()


# ---------------------------------------------------------------- a false trusted primitive


@pytest.mark.slow  # 3 s: z3 tries each declaration before it is left unchecked
def test_a_false_unchecked_assumption_is_caught_where_a_true_one_is_clean() -> None:
    """`assume def` (issue 27) trusts a bound z3 cannot check: the harness
    judges the runs by it, so a false declaration (softplus is 1-Lipschitz,
    declared 1/2) shows as a violation, and the true one does not."""
    text = ("type R = { a : num, k : int };\n"
            "assume def soft (x :[{bound}] num) : num = log (1 + exp x);\n"
            "def q (db : bag R) : num = soft (size db);\n")
    true_case = Case("softplus-true", text.replace("{bound}", "1"), {"q": "deterministic"},
                     sizes=(6,), use_catalogue=False)
    false_case = Case("softplus-false", text.replace("{bound}", "1 / 2"), {"q": "deterministic"},
                      sizes=(6,), use_catalogue=False)
    assert examine(true_case).violations == []
    violations = examine(false_case).violations
    assert any("[distance]" in v for v in violations), violations
