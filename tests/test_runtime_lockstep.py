"""Per-row functions over columns give, row for row, what they give row by
row: branches run on the rows that take them, and a recursion runs in
lock-step with each row counting its own calls (docs/semantics.md,
"Per-row functions" and "Recursion")."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.language.source import Source
from fuzzpy.release import pipeline
from fuzzpy.runtime.bag import Bag, column_from_rows, dummy_row
from fuzzpy.runtime.interpreter import MAX_ROW_CALLS, ROW, Interpreter
from fuzzpy.runtime.primitives import apply_to_rows
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import Record

PROGRAM = """
type R = { a : num, b : num, k : int };
def rec down (n : num) : num = if n <= 0 then 0 else 1 + down (n - 1);
def rec spin (x : num) : num = if x > 0 then spin x else 0;
def rec fib (n : num) : num = if n <= 1 then n else fib (n - 1) + fib (n - 2);
def rec acc (n : num) (s : num) : num = if n <= 0 then s else acc (n - 1) (s + n);
def rec pair (n : num) : (num, num) = if n <= 0 then (0, 1) else { let (x, y) = pair (n - 1); (y, x + y) };
def rec walk (n : num) : vec[2] num = if n <= 0 then [0, 0] else walk (n - 1) + [1, n];
def rec even (n : int) : bool = if n <= 0 then n == 0 else not (even (n - 1));

def f1 (r : R) : num = down r.a;
def f2 (r : R) : num = if r.b > 0 && down r.a > 3 then fib r.b else 0 - down r.b;
def f3 (r : R) : num = case (if r.a > r.b then inl r.a else inr r.b : num + num) of inl x -> down x | inr y -> spin y;
def f4 (r : R) : num = { let g = fun (y : num) -> y + r.b; if r.a > 0 then g (down r.a) else g 1 };
def f5 (r : R) : num = acc r.a 0 + acc r.b 1;
def f6 (r : R) : num = down r.a + down r.b + down (r.a - r.b);
def f7 (r : R) : num = { let (x, y) = pair r.b; if x > 10 || down r.a > 500 then y else x };
def f8 (r : R) : vec[2] num = walk r.b;
def f9 (r : R) : bool = even r.k || r.a < 0;
def f10 (r : R) : num = if spin r.a > 0 then 1 else (if r.b > 5 then down (r.b * 100) else r.k);
"""
NAMES = [f"f{i}" for i in range(1, 11)]
#: fuzzpy raises the recursion limit while a test runs; hypothesis warns about it.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
CHECKED = pipeline.check(pipeline.parse(Source("lockstep.fz", PROGRAM)))


def _bag(a: list[float], b: list[int], k: list[int]) -> Bag:
    return Bag(Record({"a": np.array(a, dtype=np.float64), "b": np.array(b, dtype=np.float64),
                       "k": np.array(k, dtype=np.int64)}))


def _row_by_row(interp: Interpreter, func: object, bag: Bag) -> object:
    with interp.per_row(ROW, 1), np.errstate(all="ignore"):
        template = func(dummy_row(bag.source))  # type: ignore[operator]
        results = []
        for row in bag.rows():
            interp.fresh_row()
            results.append(func(row))  # type: ignore[operator]
    return column_from_rows(results, template)


rows = st.lists(
    st.tuples(st.sampled_from([-3.0, 0.0, 0.5, 2.0, 7.0, 40.0, 498.5, 998.0, 999.0, 1000.0, 1e6]),
              st.integers(-2, 14), st.integers(-3, 1200)),
    min_size=0, max_size=12,
)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=rows)
def test_over_columns_equals_row_by_row(name: str, data: list[tuple[float, int, int]]) -> None:
    bag = _bag([a for a, _, _ in data], [b for _, b, _ in data], [k for _, _, k in data])
    warnings: list[str] = []
    interp = Interpreter(CHECKED.program, SeededSource(0), warnings.append, CHECKED)
    func = interp.definition(name)

    def both() -> tuple[object, object]:
        return apply_to_rows(interp, func, bag, "map"), _row_by_row(interp, func, bag)

    from fuzzpy.runtime.stack import on_large_stack

    columns, reference = on_large_stack(both)
    assert warnings == []  # it did run over columns
    np.testing.assert_array_equal(np.asarray(columns), np.asarray(reference))


def test_a_row_past_its_budget_gets_the_default_and_no_other_row_is_affected() -> None:
    interp = Interpreter(CHECKED.program, SeededSource(0), None, CHECKED)
    func = interp.definition("f6")
    alone = _bag([3.0], [2], [0])
    # down 900 takes 901 calls; down 200 would take the row past its budget, so that
    # outermost call gives the default 0, and so does down 700 after it
    with_spinner = _bag([3.0, 900.0], [2, 200], [0, 0])
    from fuzzpy.runtime.stack import on_large_stack

    first = on_large_stack(lambda: apply_to_rows(interp, func, alone, "map"))
    second = on_large_stack(lambda: apply_to_rows(interp, func, with_spinner, "map"))
    assert first.tolist() == [3 + 2 + 1] and second.tolist() == [6, 900]
    assert 901 + 201 > MAX_ROW_CALLS >= 901
