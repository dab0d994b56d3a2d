"""Operations shared by macro-level values, single rows and whole columns.

`binary` dispatches on what its operands are: exact macro-level numbers
(`exact`), per-row numpy values (`rowops`), or vectors (`vectors`); the
result is total in every case (docs/semantics.md). `select_rows` is `if`
over columns: both branches are computed for every row and each row keeps
its own. A column of sum values (`inl`/`inr` chosen per row) is a
`SumColumn`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from fuzzpy.runtime import exact as X
from fuzzpy.runtime import rowops as R
from fuzzpy.runtime.values import Inl, Inr, NotVectorisable, Record, RuntimeFailure, Value
from fuzzpy.runtime.vectors import (
    VectorColumn,
    as_vector,
    is_exact_vector,
    is_vector,
    vector_arithmetic,
)
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

np = lazy("numpy")

_COMPARE: dict[str, Callable[[Value, Value], Value]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@frozen
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
        return np.where(cond, R.as_row(then), R.as_row(orelse))
    if isinstance(then, Record) and isinstance(orelse, Record) and then.fields.keys() == orelse.fields.keys():
        return Record({k: select_rows(cond, v, orelse.get(k)) for k, v in then.fields.items()})
    if isinstance(then, tuple) and isinstance(orelse, tuple) and len(then) == len(orelse):
        return tuple(select_rows(cond, a, b) for a, b in zip(then, orelse, strict=True))
    if is_vector(then) or is_vector(orelse) or isinstance(then, list) or isinstance(orelse, list):
        from fuzzpy.runtime.vectors import _doubles, _pad

        a, b = (_doubles(as_vector(v)) if not isinstance(v, VectorColumn) else v.rows for v in (then, orelse))
        a, b = _pad(np.atleast_2d(a), np.atleast_2d(b))
        return VectorColumn(np.where(np.asarray(cond)[:, None], a, b))
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
        return compare(op, left, right)
    left, right = as_vector(left), as_vector(right)
    if is_vector(left) or is_vector(right):
        return vector_arithmetic(op, left, right)
    if isinstance(left, list) or isinstance(right, list):  # [] as a vector
        raise RuntimeFailure("FZ514", f"`{op}` of a list")
    if op not in ("+", "-", "*", "/"):
        raise RuntimeFailure("FZ514", f"unknown operator `{op}`")
    left, right = _macro_number(left), _macro_number(right)
    if X.is_exact(left) and X.is_exact(right):
        return X.arith(op, left, right)
    return R.arith(op, left, right)


def _macro_number(value: Value) -> Value:
    """A Python float (never a per-row value) is read exactly."""
    return X.to_exact(value) if type(value) is float else value


def compare(op: str, left: Value, right: Value) -> Value:
    if op in ("==", "!=") and _structured(left) and _structured(right):
        same = _structures_equal(left, right)
        return same if op == "==" else _negate(same)
    if isinstance(left, list) or isinstance(right, list):
        return _COMPARE[op](list(left), list(right))
    if is_exact_vector(left) and is_exact_vector(right):
        from fuzzpy.runtime.vectors import entries

        return _COMPARE[op](entries(left), entries(right))
    if op in ("==", "!=") and (is_vector(left) or is_vector(right)):
        return _vectors_equal(left, right) if op == "==" else np.logical_not(_vectors_equal(left, right))
    left, right = _macro_number(left), _macro_number(right)
    if R.is_row(left) or R.is_row(right):
        return R.compare(_COMPARE[op], left, right)
    return _COMPARE[op](left, right)


def _structured(value: Value) -> bool:
    return isinstance(value, (Record, tuple))


def _structures_equal(left: Value, right: Value) -> Value:
    """Records and tuples are equal when every field is, each compared as
    `==` compares it alone (per row over columns: a cell's double against a
    constant's), so `r == {a = 0.1, b = 2.0}` is `r.a == 0.1 && r.b == 2.0`
    on every engine (third review, F2)."""
    if isinstance(left, Record) and isinstance(right, Record):
        if left.fields.keys() != right.fields.keys():
            return False
        pairs = [(left.fields[k], right.fields[k]) for k in left.fields]
    elif isinstance(left, tuple) and isinstance(right, tuple) and len(left) == len(right):
        pairs = list(zip(left, right, strict=True))
    else:
        return False
    result: Value = True
    for a, b in pairs:
        result = _both(result, compare("==", a, b))
    return result


def _both(a: Value, b: Value) -> Value:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.logical_and(a, b)
    return bool(a) and bool(b)


def _negate(value: Value) -> Value:
    return np.logical_not(value) if isinstance(value, np.ndarray) else not bool(value)


def _vectors_equal(left: Value, right: Value) -> Value:
    """Per-row vectors are equal when every entry is (as if the shorter were
    padded with zeros); over columns, one answer per row."""
    from fuzzpy.runtime.vectors import _doubles, _pad

    a, b = _pad(np.atleast_1d(_doubles(as_vector(left))), np.atleast_1d(_doubles(as_vector(right))))
    if a.ndim == 2 or b.ndim == 2:
        return np.all(a == b, axis=-1)
    return np.bool_(np.array_equal(a, b))


def index_value(base: Value, index: Value) -> Value:
    try:
        item = base[int(index)]
    except (IndexError, TypeError, ValueError):
        raise RuntimeFailure("FZ515", f"index {index} is out of range") from None
    return X.to_exact(item) if isinstance(item, (np.generic, float)) else item


def is_columnar(value: Value) -> bool:
    """A per-row number (or boolean, or string) or a constant one."""
    if is_vector(value):
        return False
    return isinstance(value, (np.ndarray, int, float, bool, np.generic)) or X.is_exact(value)
