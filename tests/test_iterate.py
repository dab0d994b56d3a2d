"""`iterate[k] f x`: deterministic loops whose sensitivity multiplies (issue
27, item 3). DiffMu's `for i in 1:10 x = x + x` is 2^10-sensitive; Fuzz's
application rule applied k times (Reed & Pierce 2010) gives s^k in the start
and t (1 + s + ... + s^(k-1)) in what the step captures with sensitivity t.
Checked here against runs on neighbouring inputs (the bound holds, and is
reached where the step is linear)."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from fuzzpy.checker import check_program
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.pipeline import run
from fuzzpy.runtime.bag import Bag


def checked(text: str):
    return check_program(parse_program(text, "<iterate>"))


def sens(prog, name: str) -> dict[str, object]:
    return {p.name: p.sensitivity.value for p in prog.definitions[name].params}


def test_diffmu_doubling_loop_is_two_to_the_k_and_tight() -> None:
    prog = checked("def f (x : num) : num = iterate[10] (fun y -> y + y) x;")
    assert sens(prog, "f") == {"x": 1024}
    assert run(prog, "f", {"x": Fraction(7, 3) + 1}) - run(prog, "f", {"x": Fraction(7, 3)}) == 1024


def test_a_contraction_shrinks_the_sensitivity() -> None:
    prog = checked("def f (x : num) : num = iterate[3] (fun y -> y / 4) x;")
    assert sens(prog, "f") == {"x": Fraction(1, 64)}


def test_what_the_step_captures_is_used_once_per_round_through_the_later_rounds() -> None:
    prog = checked("def f (db : bag num) (x : num) : num = iterate[3] (fun y -> 2 * y + sum[0, 1] db) x;")
    assert sens(prog, "f") == {"db": 1 + 2 + 4, "x": 8}


def test_zero_rounds_never_apply_the_step() -> None:
    prog = checked("def f (x : num) : num = iterate[0] (fun y -> y * y) x;")
    assert sens(prog, "f") == {"x": 1} and run(prog, "f", {"x": 5}) == 5


def test_a_step_that_releases_is_refused() -> None:
    with pytest.raises(FuzzError) as info:
        checked("def f (x : num) : fuzzy num = iterate[2] (fun y -> laplace[1] y) x;")
    assert [d.code for d in info.value.diagnostics] == ["FZ201"]


def test_an_exploding_power_is_infinite_and_a_long_contraction_bounded_above() -> None:
    prog = checked("def f (x : num) : num = iterate[5000] (fun y -> 3 * y) x;\n"
                   "def g (db : bag num) (x : num) : num = iterate[1000] (fun y -> y / 2 + sum[0, 1] db) x;")
    assert prog.definitions["f"].params[0].sensitivity.is_inf
    g = sens(prog, "g")
    assert Fraction(1, 2) ** 1000 <= g["x"] <= Fraction(1, 2) ** 64 and g["db"] == 2  # 1/(1 - 1/2)


def test_a_declared_bound_is_checked() -> None:
    with pytest.raises(FuzzError) as info:
        checked("def f (x :[100] num) : num = iterate[7] (fun y -> y + y) x;")
    assert [d.code for d in info.value.diagnostics] == ["FZ305"]


def test_the_count_may_be_a_static_parameter() -> None:
    prog = checked("def lib (k : int) (db : bag num) : fuzzy num = laplace[0.1] (iterate[k] (fun y -> y + sum[0, 1] db) 0);\n"
                   "def main (db : bag num) : fuzzy num = lib 6 db;")
    assert prog.definitions["lib"].deferred
    (events,) = prog.definitions["main"].privacy.values()
    assert sum(e.epsilon for e in events) == Fraction(6, 10)


@pytest.mark.parametrize("seed", range(6))
def test_random_steps_on_neighbouring_data_stay_within_the_bound(seed: int) -> None:
    rng = random.Random(seed)
    a = Fraction(rng.choice([0, 1, 2, 3]), rng.choice([1, 2, 3]))  # the step's slope
    k = rng.randrange(0, 6)
    c = rng.choice([1, 2, 5])
    prog = checked(f"def f (db : bag num) (x : num) : num = iterate[{k}] (fun y -> {a.numerator} / {a.denominator} * y "
                   f"- sum[0, {c}] db) x;")
    bound = sens(prog, "f")
    rows = [Fraction(rng.randrange(0, 40), 4) for _ in range(rng.randrange(0, 8))]
    extra = Fraction(rng.randrange(0, 40), 4)
    x = Fraction(rng.randrange(-20, 20), 3)
    base = run(prog, "f", {"db": Bag(np.array([float(r) for r in rows])), "x": x})
    more = run(prog, "f", {"db": Bag(np.array([float(r) for r in [*rows, extra]])), "x": x})
    moved = run(prog, "f", {"db": Bag(np.array([float(r) for r in rows])), "x": x + 1})
    assert abs(Fraction(more) - Fraction(base)) <= bound["db"]
    assert abs(Fraction(moved) - Fraction(base)) <= bound["x"]
    assert abs(Fraction(moved) - Fraction(base)) == bound["x"]  # linear in x: reached


def test_the_rounds_are_limited_where_exact_numbers_grow_every_round() -> None:
    """Review s30c: 10^6 rounds of `y / 2 + sum[0, 1] db` (one more bit each
    round) ran for more than 290 s after the charge; `iterate` takes at most
    2^16 rounds, refused at the check, and at a call of a static count."""
    with pytest.raises(FuzzError) as info:
        checked("def f (x : num) : num = iterate[65537] (fun y -> y / 2) x;")
    assert [d.code for d in info.value.diagnostics] == ["FZ217"] and "65,536" in info.value.diagnostics[0].message
    lib = "def r (n : nat) (db : bag num) : fuzzy num = laplace[0.5] (iterate[n] (fun y -> y / 2 + sum[0, 1] db) 0);\n"
    with pytest.raises(FuzzError) as info:
        checked(lib + "def main (db : bag num) : fuzzy num = r 1000000 db;")
    assert [d.code for d in info.value.diagnostics] == ["FZ217"]
    assert checked(lib + "def main (db : bag num) : fuzzy num = r 65536 db;").definitions["main"].privacy


def test_what_no_round_changes_is_evaluated_once_and_only_if_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bag's sum in the step is the same in every round: it is summed
    once, not once per round; a part no round reaches is never evaluated
    (`mentry [[1]] 0 5` would fail), a name bound inside the step is read
    afresh each round, and a function's own parameter (`r`) does not tie
    the sum to the round."""
    from fuzzpy.runtime import primitives

    calls = []
    original = primitives.clamped_sum
    monkeypatch.setattr(primitives, "clamped_sum", lambda *a, **k: calls.append(1) or original(*a, **k))
    prog = checked("def f (db : bag num) : num =\n"
                   "  iterate[40] (fun y -> if y > 1000 then mentry [[1]] 0 5 else { let z = y + 1; z / 2 + sum[0, 1] (map (fun r -> 2 * r) db) }) 0;")
    db = Bag(np.array([1.0, 0.5, 0.25]))
    value = run(prog, "f", {"db": db})
    expected = Fraction(0)
    for _ in range(40):
        expected = (expected + 1) / 2 + Fraction(5, 2)  # 2 * each row clamped to [0, 1]: 1 + 1 + 0.5
    assert value == expected and len(calls) == 1
