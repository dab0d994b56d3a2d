"""Operations shared by single values and whole columns.

Arithmetic and comparisons work unchanged on Python numbers and numpy arrays
(one value per row); `select_rows` is `if` over columns: both branches are
computed for every row and each row keeps its own. A column of sum values
(`inl`/`inr` chosen per row) is a `SumColumn`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fuzzpy.runtime.values import Inl, Inr, NotVectorisable, Record, RuntimeFailure, Value
from fuzzpy.runtime.vectors import (
    Vector,
    VectorColumn,
    involves_vectors,
    same_length,
    vector,
    vector_arithmetic,
)

ARITH: dict[str, Callable[[Value, Value], Value]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
}
_COMPARE: dict[str, Callable[[Value, Value], Value]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class SumColumn:
    """A column of sum values: `is_left[i]` says whether row i is `inl`; the
    left and right columns hold every row's payload for either side (rows of
    the other side carry values that are computed but never used)."""

    is_left: np.ndarray
    left: Value
    right: Value


def _as_sum(value: Value) -> SumColumn | None:
    if isinstance(value, SumColumn):
        return value
    if isinstance(value, Inl):
        return SumColumn(np.asarray(True), value.value, None)
    if isinstance(value, Inr):
        return SumColumn(np.asarray(False), None, value.value)
    return None


def select_rows(cond: np.ndarray, then: Value, orelse: Value) -> Value:
    """Row i of the result is row i of `then` where cond[i], else of `orelse`."""
    if is_columnar(then) and is_columnar(orelse):
        return np.where(cond, then, orelse)
    if isinstance(then, Record) and isinstance(orelse, Record) and then.fields.keys() == orelse.fields.keys():
        return Record({k: select_rows(cond, v, orelse.get(k)) for k, v in then.fields.items()})
    if isinstance(then, tuple) and isinstance(orelse, tuple) and len(then) == len(orelse):
        return tuple(select_rows(cond, a, b) for a, b in zip(then, orelse, strict=True))
    if isinstance(then, VectorColumn) or isinstance(orelse, VectorColumn):
        rows = [v.rows if isinstance(v, VectorColumn) else np.asarray(v, dtype=np.float64) for v in (then, orelse)]
        return VectorColumn(np.where(np.asarray(cond)[:, None], rows[0], rows[1]))
    first, second = _as_sum(then), _as_sum(orelse)
    if first is None or second is None:
        raise NotVectorisable
    return SumColumn(
        np.where(cond, first.is_left, second.is_left),
        _select_side(cond, first.left, second.left),
        _select_side(cond, first.right, second.right),
    )


def _select_side(cond: np.ndarray, a: Value, b: Value) -> Value:
    if a is None or b is None:
        return b if a is None else a
    return select_rows(cond, a, b)


def binary(op: str, left: Value, right: Value) -> Value:
    """Arithmetic and comparisons on numbers, vectors and columns alike."""
    if op in _COMPARE:
        if isinstance(left, list) or isinstance(right, list):
            return _COMPARE[op](list(left), list(right))
        result = _COMPARE[op](left, right)
        return result.item() if isinstance(result, np.generic) else result
    left, right = as_vector(left), as_vector(right)
    if involves_vectors(left, right):
        return vector_arithmetic(op, left, right)
    if op in ("+", "-") and isinstance(left, Vector) and isinstance(right, Vector):
        same_length(left, right, f"`{op}`")
    if op in ARITH:
        return ARITH[op](left, right)
    if op == "/":
        return divide(left, right)
    raise RuntimeFailure("FZ514", f"unknown operator `{op}`")


def divide(left: Value, right: Value) -> Value:
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.true_divide(left, right)
    if right == 0:
        if left == 0:
            return float("nan")
        return float("inf") if left > 0 else float("-inf")
    return left / right


def index_value(base: Value, index: Value) -> Value:
    try:
        item = base[int(index)]
    except (IndexError, TypeError, ValueError):
        raise RuntimeFailure("FZ515", f"index {index} is out of range") from None
    return item.item() if isinstance(item, np.generic) else item


def as_vector(value: Value) -> Value:
    """Lists of numbers act as vectors under arithmetic."""
    if isinstance(value, list):
        return vector(value)
    return value


def is_columnar(value: Value) -> bool:
    return isinstance(value, (np.ndarray, int, float, bool, np.generic))
