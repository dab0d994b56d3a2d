"""A Laplace count or clamped sum is charged its sensitivity under the
relation in force (issue 28): under replace-one a count moves by 0 or 1 and
`sum[lo, hi]` by hi - lo (not twice the add/remove sensitivity), the size of
the bag itself by nothing; inside `choose[m]` the coupled samples differ by
one replaced row (or, under add/remove, one added row), so the body is
charged that, not group privacy over two steps.

References: the table of forms is checked against brute force over small
rows (the largest move of the query over every replacement), and the
amplified `choose` figure against an exhaustive enumeration of replace-one
pairs of datasets (exact, mpmath).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest

from fuzzpy.accounting.neighbours import ADD_REMOVE, REPLACE_ONE
from fuzzpy.api import loads


def _eps(source: str, name: str, relation: str, rows: int | None = None) -> float:
    report = loads(source).check(None, relation, rows)
    figure = report[name].parameters[0].cost
    assert figure is not None and figure.epsilon is not None
    return float(figure.epsilon)


FORMS = [
    # (query on db, a Python model of it on a list of rows, values to try)
    ("size db", lambda rows: len(rows)),
    ("size (filter (fun x -> x > 0) db)", lambda rows: sum(1 for x in rows if x > 0)),
    ("sum[0, 1] db", lambda rows: sum(min(max(x, 0), 1) for x in rows)),
    ("sum[-1, 1] db", lambda rows: sum(min(max(x, -1), 1) for x in rows)),
    ("sum[1, 3] (filter (fun x -> x > 2) db)", lambda rows: sum(min(max(x, 1), 3) for x in rows if x > 2)),
    ("sum[-2, 3] (map (fun x -> x * 2) db)", lambda rows: sum(min(max(2 * x, -2), 3) for x in rows)),
]
VALUES = (-3, -1, 0, 0.5, 1, 2, 2.5, 4)


def _largest_move(model) -> Fraction:  # noqa: ANN001
    worst = Fraction(0)
    for rest in itertools.product(VALUES, repeat=2):
        for old, new in itertools.permutations(VALUES, 2):
            worst = max(worst, abs(Fraction(model([*rest, old])) - Fraction(model([*rest, new]))))
    return worst


@pytest.mark.parametrize(("query", "model"), FORMS)
def test_replace_one_cost_is_the_largest_move(query: str, model) -> None:  # noqa: ANN001
    """Charged exactly the largest move over replacements (eps 1: the cost is the move)."""
    source = f"def q(db : bag num) : fuzzy num = laplace[1] ({query});\n"
    assert _eps(source, "q", REPLACE_ONE) == float(_largest_move(model))


def test_derived_bags_and_sums_of_forms_keep_the_old_rule() -> None:
    source = (
        "def viaLet(db : bag num) : fuzzy num = let c = filter (fun x -> x > 0) db in laplace[1] (size c);\n"
        "def both(db : bag num) : fuzzy num = laplace[1] (size (filter (fun x -> x > 0) db) + size db);\n"
        "def inner(b : bag num) : fuzzy num = laplace[1] (size (filter (fun x -> x > 0) b));\n"
        "def outer(db : bag num) : fuzzy num = inner db;\n"
    )
    assert _eps(source, "viaLet", REPLACE_ONE) == 2.0  # a let re-expresses the cost: 2 s
    assert _eps(source, "both", REPLACE_ONE) == 4.0  # not one of the forms
    assert _eps(source, "outer", REPLACE_ONE) == 1.0  # the bag passed as it is (a definition's call)


CHOOSE = """
def count(db : bag num) : fuzzy num = choose[{m}] (fun b -> laplace[{eps}] (size (filter (fun x -> x > 0) b))) db;
def clamped(db : bag num) : fuzzy num = choose[{m}] (fun b -> laplace[{eps}] (sum[0, 1] b)) db;
def wide(db : bag num) : fuzzy num = choose[{m}] (fun b -> laplace[{eps}] (sum[-1, 1] b)) db;
"""


def test_choose_body_at_its_own_sensitivity() -> None:
    source = CHOOSE.format(m=3, eps=1)
    # add/remove: one replaced or one added row in the sample: a count moves by 1 (was 2)
    assert _eps(source, "count", ADD_REMOVE) == 1.0
    assert _eps(source, "clamped", ADD_REMOVE) == 1.0
    assert _eps(source, "wide", ADD_REMOVE) == 2.0
    # replace-one, n unknown: unamplified, the replace-one sensitivity
    assert _eps(source, "count", REPLACE_ONE) == 1.0
    assert _eps(source, "wide", REPLACE_ONE) == 2.0


def _exact_choose_count(n: int, m: int, eps: Fraction) -> mpmath.mpf:
    """The exact pure epsilon of choose[m](laplace[eps](count of x > 0)) over every
    replace-one pair of datasets of n rows in {0, 1} (the count is the sum)."""
    b = mpmath.mpf(eps.denominator) / eps.numerator

    def law(data: tuple[int, ...]) -> dict[int, mpmath.mpf]:
        subsets = list(itertools.combinations(range(n), min(m, n)))
        found: dict[int, mpmath.mpf] = {}
        for s in subsets:
            total = sum(data[i] for i in s)
            found[total] = found.get(total, mpmath.mpf(0)) + mpmath.mpf(1) / len(subsets)
        return found

    def log_ratio(p: dict[int, mpmath.mpf], q: dict[int, mpmath.mpf]) -> mpmath.mpf:
        def density(w: dict[int, mpmath.mpf], x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.fsum(v * mpmath.exp(-abs(x - k) / b) for k, v in w.items())

        # the ratio of two Laplace mixtures is monotone between centres: its sup is at one or at +-inf
        best = max(mpmath.log(density(p, mpmath.mpf(c)) / density(q, mpmath.mpf(c))) for c in set(p) | set(q))
        for sign in (1, -1):
            tail = [mpmath.fsum(v * mpmath.exp(sign * k / b) for k, v in w.items()) for w in (p, q)]
            best = max(best, mpmath.log(tail[0] / tail[1]))
        return best

    worst = mpmath.mpf(0)
    for rest in itertools.product((0, 1), repeat=n - 1):
        worst = max(worst, log_ratio(law((*rest, 1)), law((*rest, 0))), log_ratio(law((*rest, 0)), law((*rest, 1))))
    return worst


@pytest.mark.parametrize(("n", "m", "eps"), [(5, 2, Fraction(1, 2)), (6, 3, Fraction(1))])
def test_amplified_choose_count_against_enumeration(n: int, m: int, eps: Fraction) -> None:
    mpmath.mp.prec = 100
    exact = _exact_choose_count(n, m, eps)
    reported = _eps(CHOOSE.format(m=m, eps=eps), "count", REPLACE_ONE, n)
    assert exact <= reported <= exact * 1.01
