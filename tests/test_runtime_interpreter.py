"""The interpreter, construct by construct, on parsed programs and small bags."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.frontend.parser import parse_program
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.interpreter import MAX_ROW_CALLS, Interpreter
from fuzzpy.runtime.primitives import apply_to_rows
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import Fuzzy, Inl, Inr, Record, RuntimeFailure, WithPair

PRELUDE = """
let eps = 0.5;
type Row = { age : num, income : num, dept : int, name : string };
def over (t : num) (r : Row) : bool = r.age > t;
"""

AGES = np.array([25.0, 41.0, 67.0, 38.0, 52.0, 19.0])
INCOMES = np.array([1000.0, 250000.0, 50000.0, -10.0, 80000.0, 0.0])
DEPTS = np.array([0, 1, 2, 1, 1, 7])
NAMES = np.array(["ann", "bob", "cy", "dee", "ed", "flo"], dtype=object)


def people() -> Bag:
    return Bag(Record({"age": AGES, "income": INCOMES, "dept": DEPTS, "name": NAMES}))


def run(source: str, name: str, *args: object, seed: int = 1, warnings: list[str] | None = None) -> object:
    program = parse_program(PRELUDE + source, "<test>")
    sink = warnings if warnings is not None else []
    interp = Interpreter(program, SeededSource(seed), sink.append)
    value = interp.definition(name)
    for arg in args:
        value = value(arg)
    return value.sample() if isinstance(value, Fuzzy) else value


def test_arithmetic_and_static_constants() -> None:
    assert run("def f (x : num) : num = 2 * x + eps / 2 - 1;", "f", 3) == pytest.approx(5.25)
    assert run("let k = eps * 4; def f : num = k;", "f") == 2


def test_comparisons_logic_and_if() -> None:
    src = "def f (x : num) : num = if x > 2 && not (x == 5) || x < -10 then 1 else 0;"
    assert [run(src, "f", v) for v in (3, 5, 1, -11)] == [1, 0, 0, 1]


def test_blocks_let_and_tuples() -> None:
    src = "def f (x : num) : num = { let y = x + 1; let (a, b) = (y, 2 * y); a + b };"
    assert run(src, "f", 1) == 6


def test_lambdas_and_currying() -> None:
    src = "def add (a : num) (b : num) : num = a + b; def f : num = (fun g -> g 2) (add 40);"
    assert run(src, "f") == 42


def test_records_and_fields() -> None:
    src = "def f (x : num) : num = { let r = { a = x, b = 2 }; r.a * r.b };"
    assert run(src, "f", 4) == 8


def test_lists_case_and_cons() -> None:
    src = """
    def rec total (xs : list num) : num = case xs of [] -> 0 | h :: t -> h + total t;
    def f : num = total (1 :: [2, 3]);
    """
    assert run(src, "f") == 6


def test_def_rec() -> None:
    src = "def rec fact (n : int) : int = if n <= 1 then 1 else n * fact (n - 1);"
    assert run(src, "fact", 10) == 3628800


def test_sums_and_with_pairs() -> None:
    src = """
    def pick (x : num + num) : num = case x of inl a -> a | inr b -> 10 * b;
    def firsts : num = fst (<1, 2>) + snd (<3, 4>);
    """
    assert run(src, "pick", Inl(2)) == 2 and run(src, "pick", Inr(2)) == 20
    assert run(src, "firsts") == 5
    assert isinstance(run("def w : <num & num> = <1, 2>;", "w"), WithPair)


def test_size_filter_map_sum_over_columns() -> None:
    src = """
    def n_over (db : bag Row) : num = size (filter (over 40) db);
    def total (db : bag Row) : num = sum[0, 100000] (map (fun r -> r.income) db);
    def names (db : bag Row) : num = size (filter (fun r -> r.name == "bob" || r.dept == 2) db);
    """
    assert run(src, "n_over", people()) == 3
    assert run(src, "total", people()) == pytest.approx(1000 + 100000 + 50000 + 0 + 80000 + 0)
    assert run(src, "names", people()) == 2


def test_filter_of_filter_keeps_the_right_rows() -> None:
    src = """
    def f (db : bag Row) : num =
      sum[0, 100] (map (fun r -> r.age) (filter (fun r -> r.dept == 1) (filter (over 30) db)));
    """
    assert run(src, "f", people()) == pytest.approx(41 + 38 + 52)


def test_split_returns_both_halves() -> None:
    src = "def f (db : bag Row) : (num, num) = { let (a, b) = split (over 40) db; (size a, size b) };"
    assert run(src, "f", people()) == (3, 3)


def test_group_and_counts() -> None:
    src = "def f (db : bag Row) : vec[1] num = counts (group[3] (fun r -> r.dept) db);"
    assert run(src, "f", people()).tolist() == [1, 3, 1]  # dept 7 is outside 0..2: dropped


def test_group_buckets_hold_their_rows() -> None:
    src = """
    def f (db : bag Row) : num =
      case group[3] (fun r -> r.dept) db of [] -> 0 | h :: t -> size h;
    """
    assert run(src, "f", people()) == 1


def test_tabulate_dot_clip2_and_vsum() -> None:
    src = """
    def t (db : bag Row) : vec[inf] num = tabulate [20, 40, 60] (fun t -> size (filter (over t) db));
    def d : num = dot [1, 2] (clip2[1] [3, 4]);
    def v (db : bag (vec[2] num)) : vec[2] num = vsum[1] db;
    """
    assert run(src, "t", people()).tolist() == [5, 3, 1]
    assert run(src, "d") == pytest.approx(0.6 + 1.6)
    rows = Bag(np.array([[3.0, 4.0], [0.1, 0.2]]))
    assert run(src, "v", rows).tolist() == pytest.approx([0.7, 1.0])


def test_clip_and_abs() -> None:
    assert run("def f (x : num) : num = clip[0, 10] x + abs (0 - 3);", "f", 12) == 13


def test_sample_return_and_laplace_are_seeded_and_noisy() -> None:
    src = """
    def noisy (db : bag Row) : fuzzy (num, num) = {
      sample a = laplace[eps] (size db);
      sample b = laplace[eps] (size (filter (over 40) db));
      return (a, b)
    };
    """
    first = run(src, "noisy", people(), seed=3)
    assert first == run(src, "noisy", people(), seed=3)
    assert first != run(src, "noisy", people(), seed=4)
    assert all(isinstance(x, Fraction) for x in first)  # releases are exact (docs/semantics.md)


def test_vector_laplace_and_gauss() -> None:
    src = """
    def h (db : bag Row) : fuzzy (vec[1] num) = laplace[eps] (counts (group[3] (fun r -> r.dept) db));
    def g (db : bag Row) : fuzzy num = gauss[2] (size db);
    """
    hist = run(src, "h", people())
    assert hist.shape == (3,)
    assert isinstance(run(src, "g", people()), Fraction)


def test_expmech_loop_and_subsample() -> None:
    src = """
    def best (db : bag Row) : fuzzy num = expmech[100] [20, 40, 60] (fun t d -> size (filter (over t) d)) db;
    def l (db : bag Row) : fuzzy num = loop[3] 0 (fun x -> return (x + size db));
    def s (db : bag Row) : fuzzy num = subsample[1] (fun b -> return (size b)) db;
    def s0 (db : bag Row) : fuzzy num = subsample[0] (fun b -> return (size b)) db;
    """
    assert run(src, "best", people()) == 20  # eps 100: the top score wins
    assert run(src, "l", people()) == 18
    assert run(src, "s", people()) == 6 and run(src, "s0", people()) == 0


def test_mechanism_above_threshold_and_output_stream() -> None:
    src = """
    mechanism at (q : vec[inf] num, t : num, e : num) : int
      requires e > 0
      privacy e
    {
      var tt = t + lap(2 / e);
      var i = 0;
      var out = -1;
      while (i < len(q) && out == -1) {
        if (q[i] + lap(4 / e) >= tt) { out = i; }
        i = i + 1;
      }
      return out;
    }
    mechanism all_above (q : vec[inf] num, t : num) : list bool
      privacy 1
    {
      var i = 0;
      while (i < len(q)) { output q[i] + lap(1000000) * 0 >= t; i = i + 1; }
    }
    def f (db : bag Row) : fuzzy int = at (tabulate [60, 40, 20] (fun t -> size (filter (over t) db))) 3 1000;
    def g (db : bag Row) : fuzzy (list bool) = all_above [1, 5, 3] 3;
    """
    assert run(src, "f", people()) == 1
    assert run(src, "g", people()) == [False, True, True]


def test_mechanism_precondition_is_checked() -> None:
    src = """
    mechanism m (q : vec[inf] num, e : num) : num requires e > 0 privacy e { return q[0] + lap(1 / e); }
    def f : fuzzy num = m [1] 0;
    """
    with pytest.raises(RuntimeFailure) as failure:
        run(src, "f")
    assert failure.value.code == "FZ519"


def test_case_on_per_row_sums_is_vectorised() -> None:
    src = """
    def tag (r : Row) : num + num = if r.age > 40 then inl r.income else inr r.age;
    def f (db : bag Row) : num =
      sum[0, 100000] (map (fun r -> case tag r of inl x -> x | inr y -> 0 - y) db);
    """
    warnings: list[str] = []
    assert run(src, "f", people(), warnings=warnings) == pytest.approx(100000 + 50000 + 80000)
    assert warnings == []


def test_vectorised_if_matches_row_by_row() -> None:
    src = """
    def rec steps (n : num) : num = if n <= 0 then 0 else 1 + steps (n - 0.0625);
    def f (db : bag Row) : num = sum[0, 100] (map (fun r -> if r.age > 40 then r.age else 0 - r.age) db);
    def g (db : bag Row) : num = sum[0, 1000] (map (fun r -> steps r.age) db);
    """
    assert run(src, "f", people()) == pytest.approx(41 + 67 + 52)
    warnings: list[str] = []
    # steps a makes 16 a + 1 calls: a row past the per-row budget gets the default 0
    expected = sum(min(int(a * 16), 1000) for a in AGES if 16 * a + 1 <= MAX_ROW_CALLS)
    assert run(src, "g", people(), warnings=warnings) == expected
    assert warnings == []  # a recursion that branches per row runs over columns, in lock-step


def test_runtime_errors_carry_codes() -> None:
    with pytest.raises(RuntimeFailure) as failure:
        run("def f (x : num) : num = { let r = { a = x }; r.b };", "f", 1)
    assert failure.value.code == "FZ510"


# ---------------------------------------------------------------- columns = rows


_COLUMN_PROGRAM = parse_program(
    PRELUDE
    + """
    def score (t : num) (r : Row) : num =
      if r.age > t && not (r.dept == 1) then clip[0, 50] (r.income / 1000) else abs (r.age - t);
    """,
    "<columns>",
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    ages=st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=40),
    t=st.floats(0, 100, allow_nan=False),
)
def test_column_evaluation_equals_row_by_row(ages: list[float], t: float) -> None:
    """A function evaluated once over whole columns gives, row for row, what
    it gives on each row alone."""
    n = len(ages)
    rng = np.random.default_rng(n)
    bag = Bag(Record({
        "age": np.array(ages),
        "income": rng.uniform(-1000, 100000, n),
        "dept": rng.integers(0, 3, n),
        "name": np.array(["x"] * n, dtype=object),
    }))
    interp = Interpreter(_COLUMN_PROGRAM, SeededSource(0))
    func = interp.definition("score")(t)
    over_columns = apply_to_rows(interp, func, bag, "map")
    row_by_row = [func(row) for row in bag.rows()]
    assert np.allclose(over_columns, row_by_row)


def test_falling_back_to_rows_does_not_depend_on_the_data() -> None:
    """The warning (and the column types) must be the same for any data:
    rows that all take one branch and rows that disagree are treated alike."""
    src = """
    def rec steps (n : num) : num = if n <= 0 then 0 else 1 + steps (n - 1);
    def f (db : bag Row) : num = sum[0, 1000] (map (fun r -> steps r.dept) db);
    def g (db : bag Row) : num = sum[0, 1000] (map (fun r -> if r.age > 40 then 1 else 0.5) db);
    """
    uniform = Bag(Record({"age": np.full(4, 50.0), "income": np.zeros(4), "dept": np.zeros(4, dtype=np.int64),
                          "name": np.array(["a"] * 4, dtype=object)}))
    outcomes = []
    for db in (uniform, people()):
        warnings: list[str] = []
        f_value = run(src, "f", db, warnings=warnings)
        g_value = run(src, "g", db, warnings=warnings)
        outcomes.append((len(warnings), type(f_value), type(g_value)))
    assert outcomes[0] == outcomes[1] == (0, Fraction, Fraction)


def test_vectors_per_row_are_not_confused_with_a_shared_vector() -> None:
    """Three rows and a three-entry model: `r.x * theta` is a vector per row,
    not an entrywise product of the column with theta."""
    src = """
    type P = { x : num, y : num };
    def grad (theta : vec[2] num) (p : P) : vec[2] num =
      (sigmoid (dot theta [1, p.x, p.y]) - p.y) * [1, p.x, p.y] + p.x * theta;
    def total (theta : vec[2] num) (db : bag P) : vec[2] num = vsum[100] (map (grad theta) db);
    """
    xs, ys = [0.5, -1.0, 2.0], [1.0, 0.0, 1.0]
    theta = [0.1, -0.2, 0.3]
    db = Bag(Record({"x": np.array(xs), "y": np.array(ys)}))
    warnings: list[str] = []
    got = run(src, "total", theta, db, warnings=warnings)
    expected = np.zeros(3)
    for x, y in zip(xs, ys, strict=True):
        f = np.array([1, x, y])
        expected += (1 / (1 + np.exp(-(f @ theta))) - y) * f + x * np.array(theta)
    assert warnings == []
    assert np.allclose(got, expected)
