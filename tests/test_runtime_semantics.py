"""The run-time semantics is the checker's (docs/semantics.md, issue 9).

Each rule of docs/semantics.md has a focused test; every run-time item of
issue 9's "What was seen" is a regression test that runs the program on two
neighbouring databases with the same seed: both must end the same way, and
the releases must differ by at most the sensitivity the checker derived
(with the same seed the noise draws are the same integers, so the releases
differ by the rounding of the two query values onto the release grid).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.accounting.events import Gaussian, Laplace
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.pipeline import check, run
from fuzzpy.runtime import exact as X
from fuzzpy.runtime.aggregates import SUM_UNIT_BITS, clamped_sum, grid_exponent, vector_sum
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.interpreter import MAX_RECURSIVE_CALLS
from fuzzpy.runtime.sigmoid import NODES, STEP_BITS, VALUE_BITS, _table, sigmoid_exact, sigmoid_rows
from fuzzpy.runtime.values import Record
from fuzzpy.runtime.vectors import exact_clip_l2, vector
from tests.notes import without_registration

ROW = "type R = { x : num, k : int };\n"


def rows(n: int, x: float = 1.0, k: int = 1) -> Bag:
    return Bag(Record({"x": np.full(n, x, dtype=np.float64), "k": np.full(n, k, dtype=np.int64)}))


def columns(x: list[float], k: list[int] | None = None) -> Bag:
    ks = k if k is not None else [1] * len(x)
    return Bag(Record({"x": np.array(x, dtype=np.float64), "k": np.array(ks, dtype=np.int64)}))


def outcome(source: str, name: str, bag: Bag, seed: int = 7) -> tuple[str, object]:
    """("released", value) or ("error", codes): how a run ends."""
    checked = check(parse_program(source, "<semantics>"))
    try:
        return "released", run(checked, name, {"db": bag}, seed=seed)
    except FuzzError as error:
        return "error", [d.code for d in error.diagnostics]


def sensitivity(source: str, name: str) -> Fraction:
    """The sensitivity of the (single) noise event the checker derived."""
    checked = check(parse_program(source, "<semantics>"))
    (event,) = checked.definitions[name].privacy["db"]
    assert isinstance(event, (Laplace, Gaussian))
    return event.sensitivity


def scale(source: str, name: str) -> Fraction:
    checked = check(parse_program(source, "<semantics>"))
    (event,) = checked.definitions[name].privacy["db"]
    return event.scale if isinstance(event, Laplace) else event.sigma


def assert_neighbours_agree(source: str, name: str, small: Bag, large: Bag) -> None:
    """Both neighbours release, and the releases differ by at most the
    checker's sensitivity plus one grid step (at most 2^-31 of the scale)."""
    first, second = outcome(source, name, small), outcome(source, name, large)
    assert first[0] == second[0] == "released", (first, second)
    s, b = sensitivity(source, name), scale(source, name)
    a, c = (np.atleast_1d(np.asarray(v, dtype=object)) for v in (first[1], second[1]))
    gaps = [X.to_exact(p) - X.to_exact(q) for p, q in zip(a.tolist(), c.tolist(), strict=True)]
    bound = s + b * Fraction(1, 2**31)
    if _is_gaussian(source, name):  # L2 sensitivity
        assert sum(g * g for g in gaps) <= bound * bound, [float(g) for g in gaps]
    else:  # L1
        assert sum(abs(g) for g in gaps) <= bound, [float(g) for g in gaps]


def _is_gaussian(source: str, name: str) -> bool:
    checked = check(parse_program(source, "<semantics>"))
    return isinstance(checked.definitions[name].privacy["db"][0], Gaussian)


# ---------------------------------------------------------------- "What was seen", run time


@pytest.mark.parametrize(
    "body",
    [
        "0 * log (size db - 5) == 0",
        "0 * (1 / (size db - 5)) == 0",
        "dot [0, 0] [log (size db - 5), 1] == 0",
        "(size db - 5) / 1 * 0 == 0",
    ],
)
def test_zero_times_a_partial_operation_is_zero_on_both_neighbours(body: str) -> None:
    program = ROW + f"def f (db : bag R) : fuzzy bool = return ({body});"
    assert outcome(program, "f", rows(5)) == outcome(program, "f", rows(6)) == ("released", True)


def test_float_rounding_no_longer_moves_a_count_by_1024() -> None:
    program = ROW + (
        "def f (db : bag R) : fuzzy num = "
        "laplace[1] ((size db + 4611686018427387904.0) - 4611686018427387904.0);"
    )
    assert_neighbours_agree(program, "f", rows(512), rows(513))


def test_an_int_sum_near_two_to_the_63_does_not_wrap() -> None:
    program = ROW + (
        "let c = 1000000000000000;\n"
        "def f (db : bag R) : fuzzy num = laplace[1 / c] (sum[0, c] (map (fun r -> r.k) db));"
    )
    small, large = rows(9223, k=10**15), rows(9224, k=10**15)
    assert_neighbours_agree(program, "f", small, large)
    assert outcome(program, "f", large)[1] > 9 * 10**18  # no sign flip


@pytest.mark.parametrize(
    "body",
    [
        "(r.x * 1e300) / (r.x * 1e300)",
        "r.x * 1e300 - r.x * 1e300",
        "exp (r.x) - exp (r.x)",
        "sqrt (0 - r.x) + log (r.x - r.x)",
    ],
)
def test_overflow_inside_a_row_function_saturates_on_both_neighbours(body: str) -> None:
    program = ROW + f"def f (db : bag R) : fuzzy num = laplace[1] (sum[0, 1] (map (fun r -> {body}) db));"
    assert_neighbours_agree(program, "f", columns([1.0, 2.0]), columns([1.0, 2.0, 1e10]))


def test_a_sum_beyond_the_largest_double_stays_exact() -> None:
    program = ROW + "def f (db : bag R) : fuzzy num = laplace[3e-308] (sum[0, 1e308] (map (fun r -> r.x) db));"
    assert_neighbours_agree(program, "f", rows(1, x=1e308), rows(2, x=1e308))


@pytest.mark.parametrize("row_by_row", [False, True])
def test_vsum_over_an_empty_filter_is_the_zero_vector(row_by_row: bool) -> None:
    vec = "(case [r.x, r.x] of [] -> [0, 0] | h :: t -> [h, h])" if row_by_row else "[r.x, r.x]"
    program = ROW + (
        "def f (db : bag R) : fuzzy (vec[2] num) = "
        f"gauss[1] (vsum[1] (map (fun r -> {vec}) (filter (fun r -> r.x > 100) db)));"
    )
    assert_neighbours_agree(program, "f", columns([1.0, 2.0]), columns([1.0, 2.0, 200.0]))
    released = outcome(program, "f", columns([]))
    assert released[0] == "released" and len(released[1]) == 2


REC = ROW + "def rec down (n : num) : num = if n <= 0 then 0 else 1 + down (n - 1);\n"


def test_an_unused_let_is_not_evaluated() -> None:
    program = REC + "def f (db : bag R) : fuzzy num = { let unused = down (size db); laplace[1] (size db) };"
    assert_neighbours_agree(program, "f", rows(2853), rows(2854))
    assert_neighbours_agree(program, "f", rows(MAX_RECURSIVE_CALLS), rows(MAX_RECURSIVE_CALLS + 1))


def test_a_row_function_that_runs_out_of_calls_gives_its_row_the_default() -> None:
    program = REC + "def f (db : bag R) : fuzzy num = laplace[1] (sum[0, 1] (map (fun r -> down r.x) db));"
    small = columns([1.0, 0.5])
    large = columns([1.0, 0.5, float(10 * MAX_RECURSIVE_CALLS)])
    assert_neighbours_agree(program, "f", small, large)


def test_a_noise_scale_beyond_the_old_sampler_range_runs_and_is_charged(tmp_path: Path) -> None:
    program = tmp_path / "p.fz"
    program.write_text(ROW + "def f (db : bag R) : fuzzy num = laplace[1e-20] (sum[0, 100000000000000000000] (map (fun r -> r.k) db));")
    data = tmp_path / "d.csv"
    data.write_text("x,k\n1,1\n2,2\n")
    ledger = str(tmp_path / "l.sqlite")
    code = main(["run", str(program), "f", "--data", f"db={data}", "--budget", "5", "--ledger", ledger, "--seed", "1"])
    assert code == 0


@pytest.mark.parametrize(
    ("definition", "message_code"),
    [
        # the checker's limits (FZ115, FZ217) come first; the runtime's (FZ517) back them up
        ("laplace[1] (counts (group[1000000000000] (fun r -> r.k) db))", ("FZ217", "FZ517")),
        ("loop[1000000000] 0 (fun s -> laplace[1] (size db))", ("FZ217", "FZ517")),
        ("laplace[1e-400] (sum[0, 1e400] (map (fun r -> r.x) db))", ("FZ115", "FZ517")),
        ("laplace[0.00000001] (size db)", ("FZ520",)),
    ],
)
def test_what_run_cannot_carry_out_is_refused_before_charging(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], definition: str, message_code: tuple[str, ...]
) -> None:
    result = "vec[1] num" if "counts" in definition else "num"
    program = tmp_path / "p.fz"
    program.write_text(ROW + f"def f (db : bag R) : fuzzy ({result}) = {definition};\n")
    data = tmp_path / "d.csv"
    data.write_text("x,k\n1,1\n")
    ledger = tmp_path / "l.sqlite"
    argv = ["run", str(program), "f", "--data", f"db={data}", "--budget", "1e30", "--ledger", str(ledger), "--json"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    (diagnostic,) = json.loads(captured.out)["diagnostics"]  # under --json a failure is a document on stdout
    assert without_registration(captured.err) == "" and diagnostic["code"] in message_code
    assert (diagnostic["span"]["file"], diagnostic["span"]["line"]) == (str(program), 2)  # at the offending bracket
    assert main(["ledger", "--ledger", str(ledger), "--json"]) == 0
    datasets = json.loads(capsys.readouterr().out).get("datasets", [])
    assert all(d["spent"]["epsilon"] == 0 for d in datasets)  # nothing charged


# ---------------------------------------------------------------- 1. exact macro-level numbers


def test_macro_level_numbers_are_exact() -> None:
    program = ROW + """
def a (db : bag R) : bool = 0.1 + 0.2 == 0.3;
def b (db : bag R) : bool = (size db + 1e20) - 1e20 == size db;
def c (db : bag R) : num = 1 / 3 * 3;
"""
    assert outcome(program, "a", rows(1)) == ("released", True)
    assert outcome(program, "b", rows(7)) == ("released", True)
    assert outcome(program, "c", rows(1)) == ("released", Fraction(1))


def test_releases_are_exact_grid_multiples_and_stay_exact() -> None:
    program = ROW + """
def f (db : bag R) : fuzzy (num, bool) = {
  sample a = laplace[1] (size db);
  return (a, (a + 0.1) - 0.1 == a)
};
"""
    kind, (value, same) = outcome(program, "f", rows(3))
    assert kind == "released" and isinstance(value, Fraction) and same is True
    grid = Fraction(2) ** (0 - 32)  # scale 1, one coordinate
    assert (value / grid).denominator == 1


# ---------------------------------------------------------------- 2. total operations


@pytest.mark.parametrize(
    ("expression", "argument", "expected"),
    [
        ("7 / x", 0, Fraction(0)),
        ("log x", 0, Fraction(0)),
        ("log x == log 2", -2, True),
        ("sqrt x", -4, Fraction(0)),
        ("exp x == exp (2 * x)", 10**6, True),
        ("floor x", Fraction(-5, 2), Fraction(-3)),
        ("sigmoid x", 100, sigmoid_exact(40)),
    ],
)
def test_partial_cases_have_their_documented_values_at_macro_level(
    expression: str, argument: object, expected: object
) -> None:
    kind = "bool" if isinstance(expected, bool) else "num"
    checked = check(parse_program(f"def f (x : num) : {kind} = {expression};", "<semantics>"))
    assert run(checked, "f", {"x": argument}) == expected


def test_partial_cases_per_row_match_the_macro_level_conventions() -> None:
    program = ROW + """
def f (db : bag R) : fuzzy num = laplace[1] (sum[0, 100] (map (fun r -> r.x / (r.x - r.x) + log (r.x - r.x) + sqrt (0 - r.x)) db));
"""
    kind, value = outcome(program, "f", columns([1.0, 2.0]))
    assert kind == "released" and abs(value) < 40  # every row contributes 0: the noise alone


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("r.k * r.k", 2**63 - 1),
        ("r.k + r.k", 2**63 - 1),
        ("0 - r.k - r.k", -(2**63)),
        ("0 - (0 - r.k * r.k)", 2**63 - 1),
    ],
)
def test_per_row_int_arithmetic_saturates_instead_of_wrapping(body: str, expected: int) -> None:
    """Saturated rows are summed exactly (no clamp applies: bounds are the int64 range)."""
    program = ROW + f"def f (db : bag R) : num = sum[-9223372036854775808, 9223372036854775807] (map (fun r -> {body}) db);"
    checked = check(parse_program(program, "<semantics>"))
    total = run(checked, "f", {"db": rows(3, k=2**62)})
    bound = Fraction(2**63)
    e = grid_exponent(bound, SUM_UNIT_BITS)
    assert total == 3 * (int(Fraction(expected) / Fraction(2) ** e) * Fraction(2) ** e)


def test_the_same_row_function_gives_the_same_rows_over_columns_and_row_by_row() -> None:
    """`case` on a list forces row-by-row evaluation; the per-row numbers agree."""
    body = "r.k * r.k + r.x / (r.x - 1) + exp (r.x * 1000)"
    columnar = ROW + f"def f (db : bag R) : num = sum[-1e308, 1e308] (map (fun r -> {body}) db);"
    by_rows = ROW + (
        "def f (db : bag R) : num = sum[-1e308, 1e308] "
        f"(map (fun r -> case [r.x] of [] -> 0 | h :: t -> {body}) db);"
    )
    bag = columns([1.0, 3.5, -2.0, 1e300], [2**40, -3, 2**62, 0])
    values = [run(check(parse_program(p, "<semantics>")), "f", {"db": bag}) for p in (columnar, by_rows)]
    assert values[0] == values[1]


# ---------------------------------------------------------------- 3. sigmoid


def test_the_sigmoid_table_is_exactly_quarter_lipschitz() -> None:
    table = _table()
    assert len(table) == NODES + 1
    assert table[0] == 1 << (VALUE_BITS - 1)  # S(0) = 1/2
    assert all(0 <= b - a <= 1 << (VALUE_BITS - STEP_BITS - 2) for a, b in zip(table, table[1:], strict=False))


_exact_reals = st.fractions(min_value=-40, max_value=40, max_denominator=2**70)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(x=_exact_reals, gap=st.fractions(min_value=-1, max_value=1, max_denominator=2**90))
def test_sigmoid_is_quarter_lipschitz_on_exact_inputs(x: Fraction, gap: Fraction) -> None:
    """Also at scales far below an ulp (gaps down to 2^-90)."""
    y = x + gap
    assert abs(sigmoid_exact(x) - sigmoid_exact(y)) <= abs(x - y) / 4
    assert abs(sigmoid_exact(x) - 1 / (1 + np.exp(-float(x)))) < 3e-7
    assert sigmoid_exact(-x) == 1 - sigmoid_exact(x)


def test_sigmoid_per_row_is_the_same_interpolation_in_doubles() -> None:
    xs = np.linspace(-35, 35, 1001)
    exact = np.array([float(sigmoid_exact(Fraction(float(v)))) for v in xs])
    assert np.max(np.abs(sigmoid_rows(xs) - exact)) < 1e-15


# ---------------------------------------------------------------- 5. exact aggregates


def _reference_sum(values: list[float], lo: Fraction, hi: Fraction) -> Fraction:
    """sum of g * trunc(clamp(x, lo, hi) / g), in exact rationals."""
    e = grid_exponent(max(abs(lo), abs(hi)), SUM_UNIT_BITS)
    g = Fraction(2) ** e
    return sum((int(min(max(Fraction(v), lo), hi) / g) * g for v in values), Fraction(0))


_row_values = st.lists(
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
        st.sampled_from([0.0, 1e308, -1e308, 5e-324, 0.1, 2.0**63]),
    ),
    max_size=60,
)
_bounds = st.tuples(
    st.fractions(min_value=-10**6, max_value=0, max_denominator=1000),
    st.fractions(min_value=0, max_value=10**6, max_denominator=1000),
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(values=_row_values, bounds=_bounds, seed=st.integers(0, 2**32))
def test_the_clamped_sum_is_exact_order_independent_and_bounded_per_row(
    values: list[float], bounds: tuple[Fraction, Fraction], seed: int
) -> None:
    lo, hi = bounds
    column = np.array(values, dtype=np.float64)
    total = clamped_sum(column, lo, hi)
    assert total == _reference_sum(values, lo, hi)
    shuffled = list(values)
    random.Random(seed).shuffle(shuffled)
    assert clamped_sum(np.array(shuffled, dtype=np.float64), lo, hi) == total
    if values:  # removing any one row moves the sum by at most max(|lo|, |hi|)
        without = clamped_sum(column[1:], lo, hi)
        assert abs(total - without) <= max(abs(lo), abs(hi))


def test_the_clamped_sum_of_many_large_int_rows_never_wraps() -> None:
    column = np.full(100_000, 2**62, dtype=np.int64)
    assert clamped_sum(column, Fraction(0), Fraction(2**62)) == 100_000 * 2**62


_vector_rows = st.lists(
    st.lists(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), min_size=3, max_size=3),
    max_size=20,
)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(rows_=_vector_rows, c=st.fractions(min_value=Fraction(1, 1000), max_value=1000, max_denominator=1000))
def test_vsum_rows_never_exceed_the_clipping_norm(rows_: list[list[float]], c: Fraction) -> None:
    matrix = np.array(rows_, dtype=np.float64).reshape(len(rows_), 3)
    total = vector_sum(matrix, c, 3)
    if rows_:  # one row more or less moves the sum by at most c in L2, exactly
        without = vector_sum(matrix[1:], c, 3)
        assert sum((a - b) ** 2 for a, b in zip(total, without, strict=True)) <= c * c
        alone = vector_sum(matrix[:1], c, 3)
        assert sum(a * a for a in alone) <= c * c
    else:
        assert total == [0, 0, 0]


# ---------------------------------------------------------------- clip2 at macro level


_exact_vectors = st.lists(st.fractions(min_value=-1000, max_value=1000, max_denominator=2**40), min_size=2, max_size=2)


_tiny_gaps = st.lists(st.fractions(min_value=-1, max_value=1, max_denominator=2**80), min_size=2, max_size=2)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    u=_exact_vectors,
    v=_exact_vectors,
    gaps=_tiny_gaps,
    near=st.booleans(),
    c=st.fractions(min_value=Fraction(1, 100), max_value=100, max_denominator=128),
)
def test_exact_clip2_is_one_lipschitz_and_within_the_ball(
    u: list[Fraction], v: list[Fraction], gaps: list[Fraction], near: bool, c: Fraction
) -> None:
    """Also for two inputs far closer together than an ulp (near: v = u + gap / 2^40)."""
    if near:
        v = [a + g / 2**40 for a, g in zip(u, gaps, strict=True)]
    pu, pv = (X_entries(exact_clip_l2(vector(w), c)) for w in (u, v))
    assert sum(x * x for x in pu) <= c * c
    moved = sum((a - b) ** 2 for a, b in zip(pu, pv, strict=True))
    assert moved <= sum((a - b) ** 2 for a, b in zip(u, v, strict=True))


def X_entries(v: np.ndarray) -> list[Fraction]:  # noqa: N802
    return [X.to_exact(x) for x in v.tolist()]


# ---------------------------------------------------------------- 6. vector lengths


def test_a_row_vector_whose_length_depends_on_the_row_is_refused() -> None:
    """Lengths are in `vec` types (the checker); the runtime's padding to the
    dummy row's length is only a second line of defence."""
    program = ROW + """
def f (db : bag R) : vec[2] num = vsum[100] (map (fun r -> case [r.x] of [] -> [0, 0] | h :: t -> if h > 1 then [h] else [h, h, h]) db);
"""
    with pytest.raises(FuzzError) as refused:
        check(parse_program(program, "<semantics>"))
    assert refused.value.diagnostics[0].code == "FZ201"


# ---------------------------------------------------------------- 7. what the checker scales by 0


DEEP = f"down {10 * MAX_RECURSIVE_CALLS}"


@pytest.mark.parametrize(
    "expression",
    [
        f"0 * {DEEP}",
        f"{DEEP} * 0",
        f"{{ let z = 0; z * {DEEP} }}",
        f"dot [0, 0] [{DEEP}, 1]",
        f"(fun y -> 1) ({DEEP})",
        f"{{ let unused = {DEEP}; 1 }}",
        f"{{ let (a, b) = ({DEEP}, 2); 1 }}",
        f"ignore ({DEEP}) 1",
        f"sum[0, 0] (map (fun r -> {DEEP}) db)",
    ],
)
def test_what_is_scaled_by_zero_is_not_evaluated(expression: str) -> None:
    program = REC + f"def ignore (a : num) (b : num) : num = b;\ndef f (db : bag R) : fuzzy num = laplace[1] (size db + {expression});"
    assert_neighbours_agree(program, "f", rows(3), rows(4))


def test_the_recursion_limit_is_the_same_on_every_dataset() -> None:
    fits = REC + f"def f (db : bag R) : fuzzy num = laplace[1] (size db + clip[0, 0] (down {MAX_RECURSIVE_CALLS - 1}));"
    assert_neighbours_agree(fits, "f", rows(1), rows(2))
    too_deep = REC + f"def f (db : bag R) : fuzzy num = laplace[1] (size db + clip[0, 0] (down {MAX_RECURSIVE_CALLS}));"
    assert outcome(too_deep, "f", rows(1)) == outcome(too_deep, "f", rows(2)) == ("error", ["FZ519"])
