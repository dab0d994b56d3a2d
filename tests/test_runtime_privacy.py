"""Statistical privacy tests: run programs many times on neighbouring databases.

For each program we sample its output N times on a database D and on a
neighbour D' (one row added), and for a few output events E estimate
P[M(D) in E] and P[M(D') in E] with Clopper-Pearson intervals at confidence
1 - ALPHA each. The privacy loss is then at least

    ln(lower(P[M(D) in E]) / upper(P[M(D') in E]))    (and the same swapped)

with confidence 1 - 2 ALPHA per event. A program that meets its claim never
shows a lower bound above eps except with that small probability (union
bound over the events: below 1% here); a deliberately mis-scaled copy of the
program (noise for 4 eps or 8 eps while the claim stays eps) must show one.
Seeds are fixed, so every run of the suite is the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from fuzzpy.frontend.parser import parse_program
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.interpreter import Interpreter
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import Record

ALPHA = 5e-4
EPS = 1.0

PROGRAM = """
type Row = { age : num, income : num, dept : int };
def over (t : num) (r : Row) : bool = r.age > t;

def count (db : bag Row) : fuzzy num = laplace[EPS] (size (filter (over 40) db));
def clamped_sum (db : bag Row) : fuzzy num =
  laplace[EPS / 100] (sum[0, 100] (map (fun r -> r.income) db));
def histogram (db : bag Row) : fuzzy (vec[1] num) =
  laplace[EPS] (counts (group[4] (fun r -> r.dept) db));
def best (db : bag Row) : fuzzy num =
  expmech[EPS] [50, 51, 53] (fun t d -> size (filter (over t) d)) db;
def int_count (db : bag Row) : fuzzy int = geometric[EPS] (size (filter (over 40) db));
def int_depts (db : bag Row) : fuzzy int = geometric[EPS / 2] (sum[0, 2] (map (fun r -> r.dept) db));

"""

#: The verified mechanisms of examples/mechanisms, called from a def on the
#: counts over 50, 51 and 53 (3, 3, 3 on D; 4, 4, 3 on the neighbour), with
#: their other arguments.
MECHANISMS = {
    "above_threshold": ("3", "int"),
    "report_noisy_max": ("", "int"),
    "report_noisy_max_exp": ("", "int"),
    "sparse_vector": ("3 1", "list bool"),
}
MECHANISM_DIR = Path(__file__).resolve().parent.parent / "examples" / "mechanisms"

#: The claim is always eps = 1; a mis-scaled copy adds noise for a larger eps
#: (4, or 8 for the sparse vector, whose loss on these inputs is about eps / 2).
CORRECT = "1"


def _program(eps: str) -> Interpreter:
    text = PROGRAM.replace("EPS", eps)
    for name, (args, result) in MECHANISMS.items():
        text += (MECHANISM_DIR / f"{name}.fz").read_text()
        text += (
            f"\ndef {name}_run (db : bag Row) : fuzzy ({result}) = {name} "
            f"(tabulate [50, 51, 53] (fun t -> size (filter (over t) db))) {args} {eps};\n"
        )
    return Interpreter(parse_program(text, "<privacy>"), SeededSource(2024))


def _databases() -> tuple[Bag, Bag]:
    """Seven people, and the same with one more (age 52: it moves the counts
    over 40, 50 and 51 but not over 53; its income is clamped to 100)."""
    ages = [35.0, 45.0, 55.0, 65.0, 75.0, 25.0, 45.0]
    incomes = [10.0, 50.0, 120.0, 0.0, 80.0, 30.0, 70.0]
    depts = [0, 1, 2, 3, 1, 2, 2]
    extra = ([52.0], [1000.0], [2])

    def bag(a: list[float], i: list[float], d: list[int]) -> Bag:
        return Bag(Record({"age": np.array(a), "income": np.array(i), "dept": np.array(d)}))

    return bag(ages, incomes, depts), bag(ages + extra[0], incomes + extra[1], depts + extra[2])


def _samples(interp: Interpreter, name: str, db: Bag, n: int) -> list[object]:
    fuzzy = interp.definition(name)(db)
    return [fuzzy.sample() for _ in range(n)]


def _clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lower = 0.0 if k == 0 else float(stats.beta.ppf(ALPHA, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1 - ALPHA, k + 1, n - k))
    return lower, upper


def privacy_loss_lower_bound(
    first: Sequence[object], second: Sequence[object], events: Sequence[Callable[[object], bool]]
) -> float:
    """The largest loss the samples prove (with confidence) over the events, both ways."""
    best = 0.0
    for event in events:
        k1, k2 = sum(map(event, first)), sum(map(event, second))
        lo1, up1 = _clopper_pearson(k1, len(first))
        lo2, up2 = _clopper_pearson(k2, len(second))
        for lower, upper in ((lo1, up2), (lo2, up1)):
            if lower > 0:
                best = max(best, math.log(lower / upper))
    return best


def _threshold_events(center: float, unit: float) -> list[Callable[[object], bool]]:
    """`output <= center + k * unit` for a few k (tails carry the full loss)."""
    return [lambda y, c=center + k * unit: float(y) <= c for k in (-1.5, -0.5, 0.5, 1.5)]


def _index_events(count: int) -> list[Callable[[object], bool]]:
    return [lambda y, i=i: y == i for i in range(-1, count)]


CASES = {
    # name: (samples per database, events, eps of the mis-scaled copy)
    "count": (3000, _threshold_events(5.5, 1.0), "4"),  # 5 vs 6 people over 40
    "clamped_sum": (3000, _threshold_events(390.0, 100.0), "4"),  # clamped sums 340 vs 440
    "histogram": (3000, [lambda v, c=c: float(v[2]) <= c for c in (2.5, 3.5, 4.5)], "4"),  # 3 vs 4
    # integer releases (issue 29): two-sided geometric noise on an int count,
    # and on a clamped sum of the int column (10 vs 12: sensitivity 2, eps / 2 each)
    "int_count": (3000, _threshold_events(5.5, 1.0), "4"),
    "int_depts": (3000, _threshold_events(11.0, 1.0), "4"),
    "best": (4000, [lambda y, c=c: y == c for c in (50, 51, 53)], "4"),  # scores 3,3,3 vs 4,4,3
    "above_threshold_run": (2500, _index_events(3), "8"),  # threshold 3
    "report_noisy_max_run": (2500, _index_events(3), "4"),
    "report_noisy_max_exp_run": (2500, _index_events(3), "4"),
    "sparse_vector_run": (2500, [lambda y, k=k: list(y) == [False] * k + [True] for k in range(3)], "8"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_privacy_loss_within_claim_and_misscaling_caught(name: str) -> None:
    n, events, misscaled = CASES[name]
    db, neighbour = _databases()
    correct = _program(CORRECT)
    loss = privacy_loss_lower_bound(
        _samples(correct, name, db, n), _samples(correct, name, neighbour, n), events
    )
    assert loss <= EPS, f"{name}: estimated loss {loss:.3f} > claimed {EPS}"
    wrong = _program(misscaled)
    wrong_loss = privacy_loss_lower_bound(
        _samples(wrong, name, db, n), _samples(wrong, name, neighbour, n), events
    )
    assert wrong_loss > EPS, f"{name}: the mis-scaled copy was not caught ({wrong_loss:.3f})"
