"""`fuzzpy.support.records.frozen` behaves as `dataclass(frozen=True)`: the same
equality, hash and repr (honouring `compare`, `hash` and `repr`), the same
frozen instances, and the same dataclass machinery."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import math
import pickle
import pkgutil
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fuzzpy
from fuzzpy.support.records import frozen

values = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.booleans(),
                   st.floats(allow_nan=True), st.tuples(st.integers()), st.just(math.nan))


def twins(body: dict[str, Any], annotations: dict[str, str], bases: tuple[type, ...] = ()) -> tuple[type, type]:
    """The same class body made by `frozen` and by `dataclass(frozen=True)`."""
    def make(decorate):  # type: ignore[no-untyped-def]
        namespace = {**body, "__annotations__": dict(annotations)}
        return decorate(type("Node", bases, namespace))
    return make(frozen), make(dataclass(frozen=True))


SHAPES: list[tuple[dict[str, Any], dict[str, str]]] = [
    ({}, {}),
    ({}, {"a": "object"}),
    ({}, {"a": "object", "b": "object"}),
    ({"b": field(default=None, compare=False, repr=False)}, {"a": "object", "b": "object"}),
    ({"b": field(default=0, hash=False)}, {"a": "object", "b": "object"}),
    ({"b": field(default=0, compare=False, hash=True)}, {"a": "object", "b": "object"}),
    ({"c": field(default_factory=tuple, repr=False)}, {"a": "object", "b": "object", "c": "object"}),
]


def instances(cls: type, items: list[object]) -> object:
    names = [f.name for f in dataclasses.fields(cls)]
    return cls(*items[: len(names)])


@pytest.mark.parametrize("shape", range(len(SHAPES)))
@given(left=st.lists(values, min_size=3, max_size=3), right=st.lists(values, min_size=3, max_size=3),
       same=st.booleans())
def test_equality_hash_and_repr_are_the_dataclass_s(shape: int, left: list[object], right: list[object],
                                                    same: bool) -> None:
    ours, theirs = twins(*SHAPES[shape])
    if same:
        right = list(left)
    a, b = instances(ours, left), instances(ours, right)
    x, y = instances(theirs, left), instances(theirs, right)
    assert (a == b) is (x == y)
    assert (a != b) is (x != y)
    assert repr(a) == repr(x)
    try:
        expected = hash(x)
    except TypeError:  # an unhashable value in a hashed field
        with pytest.raises(TypeError):
            hash(a)
    else:
        assert hash(a) == expected


def test_a_field_holding_the_same_nan_is_equal_as_in_a_tuple() -> None:
    ours, theirs = twins(*SHAPES[1])
    nan = float("nan")
    assert (ours(nan) == ours(nan)) is (theirs(nan) == theirs(nan)) is True
    assert (ours(nan) == ours(float("nan"))) is (theirs(nan) == theirs(float("nan"))) is False


def test_instances_are_frozen_and_the_class_is_a_dataclass() -> None:
    ours, _ = twins(*SHAPES[2])
    node = ours(1, 2)
    with pytest.raises(FrozenInstanceError):
        node.a = 3  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del node.a
    assert dataclasses.is_dataclass(ours) and [f.name for f in dataclasses.fields(ours)] == ["a", "b"]
    assert dataclasses.replace(node, b=5) == ours(1, 5)
    assert dataclasses.asdict(node) == {"a": 1, "b": 2}
    assert ours.__match_args__ == ("a", "b")
    assert copy.deepcopy(node) == node and {node: 1}[ours(1, 2)] == 1
    point = Point(1, (2, 3))
    assert pickle.loads(pickle.dumps(point)) == point


@frozen
class Point:
    a: object
    b: object


def test_other_classes_are_not_equal_even_with_the_same_fields() -> None:
    one, _ = twins(*SHAPES[2])
    other, _ = twins(*SHAPES[2])
    assert one(1, 2) != other(1, 2)
    assert one(1, 2) != (1, 2)


def test_a_body_s_own_methods_are_kept() -> None:
    def eq(self, other):  # type: ignore[no-untyped-def]
        return True

    ours, theirs = twins({"__eq__": eq}, {"a": "object"})
    assert ours(1) == ours(2) and theirs(1) == theirs(2)
    assert hash(ours(1)) == hash(theirs(1))  # the body's __eq__ alone: the dataclass still adds a hash
    ours, theirs = twins({"__hash__": lambda self: 7, "__repr__": lambda self: "R"}, {"a": "object"})
    assert hash(ours(1)) == hash(theirs(1)) == 7 and repr(ours(1)) == repr(theirs(1)) == "R"
    assert ours(1) == ours(1) and ours(1) != ours(2)


def test_a_subclass_compares_its_own_fields() -> None:
    base, theirs_base = twins(*SHAPES[1])
    ours = frozen(type("Sub", (base,), {"__annotations__": {"b": "object"}}))
    theirs = dataclass(frozen=True)(type("Sub", (theirs_base,), {"__annotations__": {"b": "object"}}))
    assert (ours(1, 2) == ours(1, 3)) is (theirs(1, 2) == theirs(1, 3)) is False
    assert repr(ours(1, 2)) == repr(theirs(1, 2))
    assert ours(1, 2) != base(1)


def test_a_recursive_repr_ends() -> None:
    ours, theirs = twins({}, {"a": "object"})
    items: list[object] = []
    twin_items: list[object] = []
    node, twin = ours(items), theirs(twin_items)
    items.append(node)
    twin_items.append(twin)
    assert repr(node) == repr(twin) == "Node(a=[...])"


def every_fuzzpy_record() -> list[type]:
    records = []
    for module in pkgutil.walk_packages(fuzzpy.__path__, "fuzzpy."):
        if module.name.endswith("__main__"):
            continue
        try:
            loaded = importlib.import_module(module.name)
        except ImportError:  # an optional engine (pyspark, IPython) not installed
            continue
        records += [c for c in vars(loaded).values()
                    if isinstance(c, type) and c.__module__ == loaded.__name__ and "__record_compared__" in vars(c)]
    return records


def test_fuzzpy_s_records_compare_exactly_their_compared_fields() -> None:
    """Each record's getters read the fields `dataclasses.fields` says are
    compared, hashed and shown."""
    records = every_fuzzpy_record()
    assert len(records) > 100  # the syntax tree, the types, the ledger's and the engines' records
    for cls in records:
        fields = dataclasses.fields(cls)
        assert cls.__dataclass_params__.frozen, cls
        assert cls.__record_shown__ == tuple(f.name for f in fields if f.repr), cls
        probe = type("Probe", (), {f.name: f.name for f in fields})()
        assert cls.__record_compared__(probe) == tuple(f.name for f in fields if f.compare), cls
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        assert cls.__record_hashed__(probe) == hashed, cls
