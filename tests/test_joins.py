"""`join[k] f g db1 db2` (issue 27, item 3): the bounded-contribution join.

Written from the rule in docs/semantics.md ("`join`"), not from the code:
each side keeps, per key, its k first rows in the order of the rows'
values (record fields by name); the result is every kept pair with equal
keys. Claimed: 2k-sensitive in each bag, 4k for a self-join. Checked here
against a reference written from that sentence, by neighbouring databases
(one row added or removed, the symmetric difference of the two results'
multisets), and by the witness that the bound cannot be lowered.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from fuzzpy.checker.report import text_report
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.source import Source
from fuzzpy.release import pipeline
from fuzzpy.release.columns import columns_read, fields_read
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.values import Record

TYPES = """
type Order = { customer : string, amount : int, day : int };
type Customer = { customer : string, tier : int };
"""


def checked(body: str):  # type: ignore[no-untyped-def]
    return pipeline.check(pipeline.parse(Source("joins.fz", TYPES + body)))


def refusal(body: str) -> set[str]:
    with pytest.raises(FuzzError) as caught:
        checked(body)
    return {d.code for d in caught.value.diagnostics}


def sensitivities(program, name: str) -> dict[str, Fraction]:  # type: ignore[no-untyped-def]
    """Each parameter's sensitivity in the typed signature (a `fuzzy`
    result's: the epsilon it is charged per unit of noise epsilon)."""
    d = program.definitions[name]
    return {p.name: p.sensitivity.value for p in d.params}


# ---------------------------------------------------------------- the checker


def test_each_database_pays_two_k_times_its_noise() -> None:
    program = checked(
        "def spend (orders : bag Order) (people : bag Customer) : fuzzy num =\n"
        "  laplace[0.5] (size (join[3] (fun o -> o.customer) (fun c -> c.customer) orders people));"
    )
    sens = sensitivities(program, "spend")
    assert sens == {"orders": 3, "people": 3}  # 0.5 x 2k, k = 3
    report = text_report(program, None)
    assert "3-DP in orders" in report and "3-DP in people" in report


def test_a_self_join_pays_for_both_routes() -> None:
    program = checked(
        "def pairs (orders : bag Order) : fuzzy num =\n"
        "  laplace[1] (size (join[2] (fun a -> a.day) (fun b -> b.day) orders orders));"
    )
    assert sensitivities(program, "pairs") == {"orders": 8}  # 2k + 2k, k = 2


def test_one_side_once_the_other_through_a_filter() -> None:
    program = checked(
        "def f (orders : bag Order) : bag (Order, Order) =\n"
        "  join[1] (fun a -> a.day) (fun b -> b.day) (filter (fun o -> o.amount > 10) orders) orders;"
    )
    assert sensitivities(program, "f") == {"orders": 4}


def test_the_bound_is_a_parameter_checked_at_each_call() -> None:
    program = checked(
        "def lib (k : int) (orders : bag Order) : fuzzy num =\n"
        "  laplace[0.25] (size (join[k] (fun a -> a.day) (fun b -> b.day) orders orders));\n"
        "def at5 (orders : bag Order) : fuzzy num = lib 5 orders;"
    )
    assert sensitivities(program, "at5") == {"orders": 5}  # 0.25 x (2k + 2k), k = 5


def test_keys_of_an_inexact_or_different_type_are_refused() -> None:
    assert "FZ201" in refusal(
        "def f (o : bag Order) (c : bag Customer) : bag (Order, Customer) =\n"
        "  join[1] (fun a -> a.amount / 2) (fun b -> b.tier) o c;")
    assert "FZ201" in refusal(
        "def f (o : bag Order) (c : bag Customer) : bag (Order, Customer) =\n"
        "  join[1] (fun a -> a.customer) (fun b -> b.tier) o c;")


def test_zero_rows_per_key_and_a_captured_database_are_refused() -> None:
    assert "FZ202" in refusal(
        "def f (o : bag Order) : bag (Order, Order) = join[0] (fun a -> a.day) (fun b -> b.day) o o;")
    assert "FZ303" in refusal(
        "def f (o : bag Order) (c : bag Customer) : bag (Order, Order) =\n"
        "  join[1] (fun a -> a.day + size c) (fun b -> b.day) o o;")
    assert "FZ208" in refusal("def f (o : bag Order) : bag (Order, Order) = join[1] (fun a -> a.day) o o;")


def test_a_join_reads_every_column() -> None:
    program = checked(
        "def f (o : bag Order) (c : bag Customer) : fuzzy num =\n"
        "  laplace[1] (size (join[1] (fun a -> a.customer) (fun b -> b.customer) o c));"
    )
    parsed = pipeline.parse(Source("joins.fz", TYPES + "def f (o : bag Order) (c : bag Customer) : fuzzy num =\n"
                                   "  laplace[1] (size (join[1] (fun a -> a.customer) (fun b -> b.customer) o c));"))
    names = fields_read(parsed, "f", program.definitions["f"].result)
    order_type = program.definitions["f"].params[0].type
    assert columns_read(order_type, names) == ("customer", "amount", "day")


# ---------------------------------------------------------------- the runtime against the rule

JOIN = checked(
    "def j (orders : bag Order) (people : bag Customer) : bag (Order, Customer) =\n"
    "  join[2] (fun o -> o.customer) (fun c -> c.customer) orders people;\n"
    "def self (orders : bag Order) : bag (Order, Order) =\n"
    "  join[2] (fun a -> a.day) (fun b -> b.day) orders orders;"
)
K = 2
NAMES = ("ann", "bo", "cy")


def orders_bag(rows: list[tuple[str, int, int]]) -> Bag:
    return Bag(Record({
        "customer": np.array([r[0] for r in rows], dtype=object),
        "amount": np.array([r[1] for r in rows], dtype=np.int64),
        "day": np.array([r[2] for r in rows], dtype=np.int64),
    }))


def people_bag(rows: list[tuple[str, int]]) -> Bag:
    return Bag(Record({
        "customer": np.array([r[0] for r in rows], dtype=object),
        "tier": np.array([r[1] for r in rows], dtype=np.int64),
    }))


def as_rows(bag: Bag) -> list[tuple]:
    def plain(part: Record) -> tuple:
        return tuple((name, part.fields[name] if isinstance(part.fields[name], str) else int(part.fields[name]))
                     for name in sorted(part.fields))
    return [(plain(a), plain(b)) for a, b in bag.rows()]


def reference(orders: list[tuple[str, int, int]], people: list[tuple[str, int]], k: int) -> Counter:
    """The rule, read literally: fields compared by name (amount, customer,
    day; customer, tier)."""
    def keep(rows: list[dict]) -> dict[str, list[dict]]:
        by_key: dict[str, list[dict]] = {}
        for row in sorted(rows, key=lambda r: tuple(r[n] for n in sorted(r))):
            by_key.setdefault(row["customer"], []).append(row)
        return {key: kept[:k] for key, kept in by_key.items()}

    left = keep([{"customer": c, "amount": a, "day": d} for c, a, d in orders])
    right = keep([{"customer": c, "tier": t} for c, t in people])
    return Counter(
        (tuple(sorted(o.items())), tuple(sorted(p.items())))
        for key in left for o in left[key] for p in right.get(key, [])
    )


def random_orders(rng: random.Random, n: int) -> list[tuple[str, int, int]]:
    return [(rng.choice(NAMES), rng.randint(0, 3), rng.randint(0, 2)) for _ in range(n)]


def random_people(rng: random.Random, n: int) -> list[tuple[str, int]]:
    return [(rng.choice(NAMES), rng.randint(0, 2)) for _ in range(n)]


def joined(orders: list, people: list) -> Counter:
    return Counter(as_rows(pipeline.run(JOIN, "j", {"orders": orders_bag(orders), "people": people_bag(people)})))


def test_the_runtime_keeps_what_the_rule_says() -> None:
    rng = random.Random(2711)
    for _ in range(60):
        orders, people = random_orders(rng, rng.randint(0, 9)), random_people(rng, rng.randint(0, 7))
        assert joined(orders, people) == reference(orders, people, K)


def test_the_order_rows_arrive_in_changes_nothing() -> None:
    rng = random.Random(5)
    orders, people = random_orders(rng, 12), random_people(rng, 8)
    first = as_rows(pipeline.run(JOIN, "j", {"orders": orders_bag(orders), "people": people_bag(people)}))
    for _ in range(5):
        rng.shuffle(orders)
        rng.shuffle(people)
        again = as_rows(pipeline.run(JOIN, "j", {"orders": orders_bag(orders), "people": people_bag(people)}))
        assert again == first  # the same list, not only the same multiset


def test_empty_sides_and_keys_on_one_side_only() -> None:
    assert joined([], [("ann", 1)]) == Counter()
    assert joined([("ann", 1, 1)], []) == Counter()
    assert joined([("bo", 1, 1)], [("ann", 1)]) == Counter()


def distance(a: Counter, b: Counter) -> int:
    """The symmetric difference of two multisets (the bag metric)."""
    return sum(((a - b) + (b - a)).values())


def test_neighbours_move_the_join_by_at_most_two_k_in_either_database() -> None:
    rng = random.Random(99)
    worst = 0
    for _ in range(150):
        orders, people = random_orders(rng, rng.randint(0, 8)), random_people(rng, rng.randint(0, 8))
        base = joined(orders, people)
        more_orders = joined(orders + random_orders(rng, 1), people)
        more_people = joined(orders, people + random_people(rng, 1))
        fewer = joined(orders[1:], people) if orders else base
        for other in (more_orders, more_people, fewer):
            worst = max(worst, distance(base, other))
            assert distance(base, other) <= 2 * K
    assert worst == 2 * K  # random search reaches the bound: it is not loose


def test_the_bound_is_reached() -> None:
    """Key "ann" has k orders and k people; an order ranked first pushes the
    k-th out: k pairs leave and k arrive."""
    orders = [("ann", 2, 0), ("ann", 3, 0)]
    people = [("ann", 0), ("ann", 1)]
    assert distance(joined(orders, people), joined(orders + [("ann", 0, 0)], people)) == 2 * K


def test_a_self_join_moves_by_at_most_four_k() -> None:
    rng = random.Random(7)
    for _ in range(120):
        orders = random_orders(rng, rng.randint(0, 8))
        added = orders + random_orders(rng, 1)
        base = Counter(as_rows(pipeline.run(JOIN, "self", {"orders": orders_bag(orders)})))
        other = Counter(as_rows(pipeline.run(JOIN, "self", {"orders": orders_bag(added)})))
        assert distance(base, other) <= 4 * K


def test_int_keys_computed_row_by_row_compare_exactly() -> None:
    """An int key may come back as whole doubles on one side (a row-by-row
    evaluation): above 2^53 it must not meet a neighbouring int."""
    from fuzzpy.runtime.joins import key_codes

    left, right = key_codes(np.array([2**60 + 1], dtype=np.int64), np.array([float(2**60)]))
    assert left[0] != right[0]
    left, right = key_codes(np.array([2**60], dtype=np.int64), np.array([float(2**60)]))
    assert left[0] == right[0]


def test_numbers_joined_to_records_by_a_computed_bucket() -> None:
    program = checked(
        "def j (xs : bag num) (people : bag Customer) : bag (num, Customer) =\n"
        "  join[1] (fun x -> if x < 10 then 0 else 1) (fun c -> c.tier) xs people;"
    )
    xs = Bag(np.array([12.5, 3.0, 11.0, 7.5, 30.0]))
    people = people_bag([("cy", 1), ("ann", 1), ("bo", 0), ("bo", 2)])
    out = sorted((float(x), c.fields["customer"], int(c.fields["tier"]))
                 for x, c in pipeline.run(program, "j", {"xs": xs, "people": people}).rows())
    # bucket 0: the least of 3.0, 7.5 with ("bo", 0); bucket 1: 11.0 with ("ann", 1), the first by name
    assert out == [(3.0, "bo", 0), (11.0, "ann", 1)]
