"""Propose-test-release for the median: `ptr_median[eps, delta, b] db`
(issue 29, item 3; Dwork & Lei 2009).

Checked from the outside: the distance to instability against hand-worked
bags and against a search over every dataset a few rows away (the median and
its local sensitivity recomputed here by brute force, not by the module's
window formula); the threshold against its defining inequality; the
checker's charge; seeded runs on memory and DuckDB; the "no answer" value
through `case`, JSON and the Python API; and (slow) an empirical privacy
loss on neighbouring bags below the claim, with a broken test caught.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from fuzzpy.accounting import events as E
from fuzzpy.cli import main
from fuzzpy.runtime import ptr
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import Inl, Inr

ROOT = Path(__file__).resolve().parent.parent
BIG = Fraction(10**6)


# ---------------------------------------------------------------- brute force, written here


def median_of(bag: tuple[Fraction, ...]) -> Fraction:
    """The lower median: the smallest value with at least half the rows at or below it."""
    if not bag:
        return Fraction(0)
    for v in sorted(set(bag)):
        if 2 * sum(1 for x in bag if x <= v) >= len(bag):
            return v
    raise AssertionError


def local_sensitivity(bag: tuple[Fraction, ...], pool: list[Fraction]) -> Fraction:
    """max |med(y) - med(x)| over every y one row away, a row added from ``pool``
    (whose far ends stand for arbitrarily large values) or any row removed."""
    here = median_of(bag)
    moves = [tuple(sorted(bag + (v,))) for v in pool]
    moves += [bag[:i] + bag[i + 1:] for i in range(len(bag))]
    if len(bag) <= 1:
        return BIG * 4  # an added far row moves the median of one row arbitrarily (and of none: undefined)
    return max(abs(median_of(y) - here) for y in moves)


def distance_brute(values: list[Fraction], b: Fraction, cap: int) -> int | None:
    """The least number of rows added or removed to reach a bag whose median's
    local sensitivity exceeds b, searching breadth first up to ``cap`` steps;
    None when none is that close."""
    pool = sorted(set(values) | {-BIG, BIG, -2 * BIG, 2 * BIG}
                  | {(a + c) / 2 for a, c in itertools.pairwise(sorted(set(values)))})
    level = {tuple(sorted(values))}
    seen = set(level)
    for steps in range(cap + 1):
        if any(local_sensitivity(y, pool) > b for y in level):
            return steps
        following = set()
        for y in level:
            for z in [tuple(sorted(y + (v,))) for v in pool] + [y[:i] + y[i + 1:] for i in range(len(y))]:
                if z not in seen:
                    seen.add(z)
                    following.add(z)
        level = following
    return None


def _fr(*xs: float) -> list[Fraction]:
    return sorted(Fraction(x) for x in xs)


# ---------------------------------------------------------------- the distance, by hand


@pytest.mark.parametrize(("bag", "b", "expected"), [
    ((), 1, 0),                        # no rows: the median is undefined, nothing is stable
    ((5,), 1, 0),                      # one row: a row added far away moves it arbitrarily
    ((1, 2), 1, 1),                    # gap 1 is not above 1; one row added at -inf breaks it
    ((1, 2), Fraction(1, 2), 0),       # gap 1 above 1/2 already
    ((0, 1, 2, 3, 4), 1, 1),           # odd: remove the median 2, the gap 1..3 is 2
    ((0, 1, 2, 3, 4), 2, 2),
    ((7, 7, 7, 7, 7, 7), 1, 5),        # all tied: only rows added far below (or above) help
    ((1, 1, 2, 2, 2, 9, 9), 3, 3),     # duplicates: remove 2, 2 and one 1 ... (window 1..9)
    ((10, 0, 4, 8, 2, 6), Fraction(5, 2), 1),  # unsorted input order; even size, median 4
])
def test_distance_on_small_bags_worked_by_hand(bag: tuple[float, ...], b: Fraction, expected: int) -> None:
    values = _fr(*bag)
    assert ptr.distance_to_instability(values, Fraction(b)) == expected
    assert distance_brute(values, Fraction(b), expected) == expected


def test_median_is_the_lower_median() -> None:
    assert ptr.lower_median(_fr(3, 1, 2, 4)) == 2 == median_of(tuple(_fr(1, 2, 3, 4)))
    assert ptr.lower_median(_fr(5, 1, 9)) == 5
    assert ptr.lower_median([]) == 0


def test_distance_agrees_with_a_search_on_random_small_bags() -> None:
    rng = random.Random(29)
    for _ in range(40):
        n = rng.randint(0, 5)
        values = sorted(Fraction(rng.choice([0, 1, 1, 2, 3, 5, 8])) for _ in range(n))
        b = Fraction(rng.choice([1, 2, 3, 7]), rng.choice([1, 2]))
        d = ptr.distance_to_instability(values, b)
        found = distance_brute(values, b, min(d, 2))
        assert found == (d if d <= 2 else None), (values, b, d, found)


@pytest.mark.slow
def test_distance_agrees_with_a_deeper_search() -> None:
    rng = random.Random(2009)
    for _ in range(30):
        n = rng.randint(2, 6)
        values = sorted(Fraction(rng.randint(0, 12), rng.choice([1, 3])) for _ in range(n))
        b = Fraction(rng.randint(1, 6))
        d = ptr.distance_to_instability(values, b)
        assert distance_brute(values, b, min(d, 4)) == (d if d <= 4 else None), (values, b, d)


def test_distance_is_one_sensitive() -> None:
    """d is a distance to a set: a row added or removed moves it by at most 1."""
    rng = random.Random(7)
    for _ in range(300):
        values = sorted(Fraction(rng.randint(-20, 20)) for _ in range(rng.randint(0, 14)))
        b = Fraction(rng.randint(1, 9))
        d = ptr.distance_to_instability(values, b)
        added = sorted([*values, Fraction(rng.randint(-40, 40))])
        assert abs(ptr.distance_to_instability(added, b) - d) <= 1
        if values:
            removed = values[:]
            removed.pop(rng.randrange(len(values)))
            assert abs(ptr.distance_to_instability(removed, b) - d) <= 1


# ---------------------------------------------------------------- the threshold


@pytest.mark.parametrize(("eps", "delta"), [(Fraction(1, 2), Fraction(1, 10**7)), (Fraction(1), Fraction(1, 1000)),
                                            (Fraction(1, 100), Fraction(1, 10**9)), (Fraction(7, 3), Fraction(1, 2))])
def test_threshold_is_the_least_integer_above_ln_one_over_delta_over_eps(eps: Fraction, delta: Fraction) -> None:
    mpmath = pytest.importorskip("mpmath")
    k = ptr.threshold(eps, delta)
    with mpmath.workprec(200):
        value = mpmath.log(1 / mpmath.mpf(delta)) / mpmath.mpf(eps)
        assert k - 1 < value <= k
    # a pass from d = 0 has probability e^-eps K / (1 + e^-eps), below delta
    assert math.exp(-float(eps) * k) / (1 + math.exp(-float(eps))) < float(delta)


# ---------------------------------------------------------------- the checker


ROWS = "type R = { v : num, g : int };\n"


def _check(source: str) -> Any:
    from fuzzpy.checker import check_program
    from fuzzpy.frontend.parser import parse_program

    return check_program(parse_program(source, "<ptr>"))


def _refusal(source: str) -> Any:
    from fuzzpy.language.diagnostics import FuzzError

    with pytest.raises(FuzzError) as caught:
        _check(source)
    return caught.value.diagnostics[0]


def test_the_charge_is_two_eps_and_delta_per_row() -> None:
    checked = _check(ROWS + """
def m (db : bag R) : fuzzy (num + unit) = ptr_median[1/4, 1e-8, 3] (map (fun r -> r.v) (filter (fun r -> r.g > 0) db));
""")
    assert checked.definitions["m"].privacy["db"] == (E.Verified("ptr_median", Fraction(1, 2), Fraction(1, 10**8)),)


def test_a_bag_of_ints_is_read_as_numbers() -> None:
    checked = _check(ROWS + "def m (db : bag R) : fuzzy (num + unit) = ptr_median[1, 1e-9, 1] (map (fun r -> r.g) db);\n")
    assert checked.definitions["m"].privacy["db"] == (E.Verified("ptr_median", Fraction(2), Fraction(1, 10**9)),)


@pytest.mark.parametrize(("body", "code"), [
    ("ptr_median[1, 1, 2] (map (fun r -> r.v) db)", "FZ202"),            # delta must be below 1
    ("ptr_median[1, 0, 2] (map (fun r -> r.v) db)", "FZ202"),            # ... and positive
    ("ptr_median[1, 1e-9, 0] (map (fun r -> r.v) db)", "FZ202"),         # b positive
    ("ptr_median[1e-9, 1e-9, 2] (map (fun r -> r.v) db)", "FZ202"),      # below the grid's floor
    ("ptr_median[1, 1e-9, 2] db", "FZ201"),                              # rows are records
    ("ptr_median[1, 1e-9] (map (fun r -> r.v) db)", "FZ208"),            # three static arguments
])
def test_bad_uses_are_refused(body: str, code: str) -> None:
    assert _refusal(ROWS + f"def m (db : bag R) : fuzzy (num + unit) = {body};\n").code == code


def test_the_result_is_a_sum_to_read_with_case() -> None:
    assert _refusal(ROWS + "def m (db : bag R) : fuzzy num = ptr_median[1, 1e-9, 2] (map (fun r -> r.v) db);\n") \
        .code.startswith("FZ2")
    _check(ROWS + """
def m (db : bag R) : fuzzy num = {
  sample a = ptr_median[1, 1e-9, 2] (map (fun r -> r.v) db);
  return (case a of | inl x -> x | inr u -> 0)
};
""")


def test_the_word_remains_a_name_elsewhere() -> None:
    _check(ROWS + "let ptr_median = 2;\ndef m (db : bag R) : fuzzy num = laplace[ptr_median] (size db);\n")


# ---------------------------------------------------------------- runs


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, definition: str, *extra: str) -> dict[str, Any]:
    code = main(["run", str(ROOT / "examples" / "robust_median.fz"), definition, "--data",
                 f"db={ROOT / 'examples' / 'data' / 'salaries.csv'}", "--budget", "20,1e-3", "--ledger",
                 str(tmp_path / "l.sqlite"), "--dataset", "salaries", "--json", "--seed", "11", *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.mark.slow
def test_the_example_answers_and_is_charged_before(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = _run(capsys, tmp_path, "median_salary")
    released = doc["released"]["inl"]
    assert 30000 < released < 80000   # salaries up to 2e9, yet the median is near 50,000
    assert doc["charged"]["delta"] > 0 and 0.99 < doc["charged"]["epsilon"] <= 1
    (accuracy,) = doc["accuracy"]
    assert accuracy["noise"] == "laplace" and 2000 * math.log(20) < accuracy["half_width"] < 2000 * math.log(20) * 1.01


def test_no_answer_is_charged_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = _run(capsys, tmp_path, "median_small_department")
    assert doc["released"] == {"inr": None}
    assert 0.99 < doc["charged"]["epsilon"] <= 1 and doc["charged"]["delta"] > 0
    other = _run(capsys, tmp_path, "median_or_none")
    assert other["released"] != -1
    assert other["remaining"]["epsilon"] < doc["remaining"]["epsilon"]


def test_memory_and_duckdb_give_the_same_answer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    memory = _run(capsys, tmp_path, "medians")["released"]
    duck = _run(capsys, tmp_path, "medians", "--engine", "duckdb")["released"]
    assert memory == duck and all("inl" in part for part in duck)


@pytest.mark.slow
def test_engines_compute_the_same_distance(tmp_path: Path) -> None:
    """The engine sends the values (mapped and filtered in SQL); the
    distance is the same function of the same multiset."""
    pytest.importorskip("duckdb")
    from fuzzpy.api import load

    program = load(ROOT / "examples" / "robust_median.fz")
    data = ROOT / "examples" / "data" / "salaries.csv"
    seen = {}
    for engine in ("memory", "duckdb"):
        result = program.run("median_or_none", data={"db": str(data)}, seed=5, engine=engine,
                             ledger=tmp_path / f"{engine}.sqlite", budget="10,1e-3", datasets="s")
        seen[engine] = result.value
    assert seen["memory"] == seen["duckdb"] and seen["memory"] != -1


# ---------------------------------------------------------------- the mechanism itself, seeded


def _answers(values: list[Fraction], eps: Fraction, delta: Fraction, b: Fraction, runs: int, seed: int,
             broken: bool = False) -> Counter[object]:
    source = SeededSource(seed)
    out: Counter[object] = Counter()
    for _ in range(runs):
        if broken:  # no test at all: release the median with noise for b, whatever d
            from fuzzpy.runtime.noise import laplace_release_one

            answer: object = Inl(laplace_release_one(ptr.lower_median(values), b / eps, source))
        else:
            answer = ptr.ptr_median(values, eps, delta, b, source)
        out["none" if isinstance(answer, Inr) else _bucket(answer.value, b)] += 1
    return out


def _bucket(x: Fraction, b: Fraction) -> int:
    return math.floor(x / b)


def test_no_answer_on_unstable_data_and_an_answer_on_stable_data() -> None:
    eps, delta, b = Fraction(1), Fraction(1, 10**6), Fraction(1)
    stable = [Fraction(v) for v in [50] * 60]
    unstable = _fr(0, 10, 20, 30, 40, 50, 60)
    assert _answers(stable, eps, delta, b, 40, 1) == Counter({50: 40}) or \
        sum(n for k, n in _answers(stable, eps, delta, b, 40, 1).items() if k != "none") == 40
    assert _answers(unstable, eps, delta, b, 200, 2) == Counter({"none": 200})


def _loss_lower_bound(first: Counter[object], second: Counter[object], n: int, delta: float,
                      alpha: float = 5e-4) -> float:
    """max over unions of outcomes (each single outcome, "none", and every
    interval of buckets) of ln((lower(P1(S)) - delta) / upper(P2(S))), both
    orders, with Clopper-Pearson bounds."""
    stats = pytest.importorskip("scipy.stats")
    keys = sorted(k for k in set(first) | set(second) if k != "none")
    events: list[set[object]] = [{"none"}]
    events += [set(keys[i:j]) for i in range(len(keys)) for j in range(i + 1, min(len(keys), i + 8) + 1)]
    best = -math.inf
    for event in events:
        for a, c in ((first, second), (second, first)):
            ka, kc = sum(a[k] for k in event), sum(c[k] for k in event)
            low = stats.beta.ppf(alpha, ka, n - ka + 1) if ka else 0.0
            high = stats.beta.ppf(1 - alpha, kc + 1, n - kc) if kc < n else 1.0
            if low - delta > 0 and high > 0:
                best = max(best, math.log((low - delta) / high))
    return best


@pytest.mark.slow
def test_empirical_loss_on_neighbours_is_below_the_claim() -> None:
    """Two bags one row apart, chosen so that the test passes about half the
    time on both (d near the threshold) and the median moves by the whole b:
    the loss the draws show stays below the claimed 2 eps (at the claimed
    delta); releasing without the test shows a loss far above it on bags
    whose median moves by more than b."""
    eps, delta, b = Fraction(1, 2), Fraction(1, 10**3), Fraction(4)
    k = ptr.threshold(eps, delta)  # ceil(2 ln 1000) = 14
    # 7 rows at 0 and 7 at b around the median, the rest far apart: d = 13;
    # one more row at b: d = 14, and the lower median moves from 0 to b
    far = [Fraction(-100 * i) for i in range(1, 21)] + [b + 100 * i for i in range(1, 21)]
    base = sorted(far + [Fraction(0)] * 7 + [b] * 7)
    neighbour = sorted([*base, b])
    d1, d2 = ptr.distance_to_instability(base, b), ptr.distance_to_instability(neighbour, b)
    assert (d1, d2, k) == (13, 14, 14)
    assert ptr.lower_median(neighbour) - ptr.lower_median(base) == b
    runs = 20000
    first = _answers(base, eps, delta, b, runs, 101)
    second = _answers(neighbour, eps, delta, b, runs, 202)
    claim = float(2 * eps)
    found = _loss_lower_bound(first, second, runs, float(delta))
    assert found < claim
    assert found > 0.3  # the test has power: the loss shows
    spread = [Fraction(v) for v in range(0, 200, 20)]
    wide = sorted([*spread, Fraction(1000)])
    broken_first = _answers(spread, eps, delta, b, 4000, 303, broken=True)
    broken_second = _answers(wide, eps, delta, b, 4000, 404, broken=True)
    assert _loss_lower_bound(broken_first, broken_second, 4000, float(delta)) > claim


def test_an_eps_the_exact_sampler_cannot_draw_is_refused_before_the_charge(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    program = tmp_path / "p.fz"
    program.write_text("type E = { dept : int, salary : num, tenure : num };\n"
                       "def m (db : bag E) : fuzzy (num + unit) =\n"
                       "  ptr_median[0.1234567890123456789012345, 1e-7, 1000] (map (fun e -> e.salary) db);\n")
    ledger = tmp_path / "l.sqlite"
    code = main(["run", str(program), "m", "--data", f"db={ROOT / 'examples' / 'data' / 'salaries.csv'}",
                 "--budget", "20,1e-3", "--ledger", str(ledger), "--dataset", "salaries", "--json"])
    out = capsys.readouterr().out
    assert code != 0 and "FZ517" in out
    main(["ledger", "--ledger", str(ledger), "--json"])
    assert json.loads(capsys.readouterr().out)["datasets"] == []  # nothing charged


def test_an_answer_carries_the_interval_of_its_laplace_and_it_covers() -> None:
    """`run` states +/- h at 95% for `inl m` (the Laplace of scale b / eps
    around the data's lower median); over seeded answers on stable data the
    interval holds at least as often as it says."""
    from fuzzpy.runtime.accuracy import NoiseNote, half_width
    from fuzzpy.runtime.noise import laplace_grid

    eps, delta, b = Fraction(1), Fraction(1, 10**6), Fraction(3)
    values = sorted(Fraction(v) for v in [100] * 80 + list(range(0, 200, 5)))
    prepared = ptr.prepare(values, b)
    assert prepared.median == 100 and prepared.distance > 3 * ptr.threshold(eps, delta)
    e, units = laplace_grid(b / eps, 1)
    h = half_width(NoiseNote("laplace", b / eps, 1, e, units), Fraction(95, 100))
    source = SeededSource(17)
    answers = [ptr.draw(prepared, eps, delta, b, source) for _ in range(3000)]
    assert all(isinstance(a, Inl) for a in answers)
    inside = sum(1 for a in answers if abs(a.value - 100) <= h) / len(answers)
    assert 0.94 <= inside <= 0.97


def test_static_parameters_are_checked_at_each_call() -> None:
    """A library definition over eps, delta and b: the generic pass does not
    refuse its placeholders; each call is charged and checked at its numbers."""
    source = ROWS + """
def lib (e : num) (d : num) (b : num) (db : bag R) : fuzzy (num + unit) = ptr_median[e, d, b] (map (fun r -> r.v) db);
def m (db : bag R) : fuzzy (num + unit) = lib 0.25 1e-8 500 db;
"""
    checked = _check(source)
    assert checked.definitions["m"].privacy["db"] == (E.Verified("ptr_median", Fraction(1, 2), Fraction(1, 10**8)),)
    assert _refusal(source + "def bad (db : bag R) : fuzzy (num + unit) = lib 0.25 2 500 db;\n").code == "FZ202"


def test_columns_are_read_as_their_exact_values() -> None:
    """Doubles stand for themselves (0.3 is not 3/10), compared exactly: the
    doubles 0.3 and 0.4 are 1/10 + 3.3e-17 apart, so at b = 1/10 two such rows
    are already unstable (d = 0), while the decimals 3/10 and 4/10, exactly
    1/10 apart, are not (d = 1); ints and exact numbers read as they are; a
    NaN is refused."""
    np = pytest.importorskip("numpy")
    from fuzzpy.runtime.values import RuntimeFailure

    doubles = ptr.sorted_exact(np.array([0.4, 0.3]))
    assert list(doubles) == [Fraction(0.3), Fraction(0.4)] and doubles[0] != Fraction(3, 10)
    assert ptr.prepare(doubles, Fraction(1, 10)).distance == 0
    assert ptr.prepare([Fraction(3, 10), Fraction(4, 10)], Fraction(1, 10)).distance == 1
    assert list(ptr.sorted_exact(np.array([3, -2, 7], dtype=np.int64))) == [-2, 3, 7]
    assert list(ptr.sorted_exact(np.array([Fraction(1, 3), 2], dtype=object))) == [Fraction(1, 3), 2]
    with pytest.raises(RuntimeFailure):
        ptr.sorted_exact(np.array([1.0, float("nan")]))
