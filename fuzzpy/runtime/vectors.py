"""Vectors (`vec[p] num`) alone and one per row.

Over columns, a function's per-row numbers are plain 1-d arrays (one entry
per row). A vector that is the same for every row (a model `theta`, a
released histogram) must not be mistaken for one of them when the bag
happens to have as many rows as the vector has entries, so vector values are
`Vector`s (a marked 1-d array), and a vector per row is a `VectorColumn`
(an (n, d) array). Arithmetic between them follows the language's types:
`+`/`-` join two vectors, `*`/`/` scale a vector by a number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fuzzpy.runtime.values import NotVectorisable, RuntimeFailure, Value


class Vector(np.ndarray):
    """A `vec[p] num` value: a 1-d float array marked as one vector."""


def vector(values: Value) -> Vector:
    """A vector value; integer entries (counts) stay integers."""
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        array = array.astype(np.float64)
    return array.view(Vector)


@dataclass(frozen=True)
class VectorColumn:
    """One vector per row: ``rows`` is an (n, d) array."""

    rows: np.ndarray

    def __neg__(self) -> VectorColumn:
        return VectorColumn(-self.rows)


def is_per_row_number(value: Value) -> bool:
    return isinstance(value, np.ndarray) and not isinstance(value, Vector) and value.ndim == 1


def vector_column(items: list[Value], n: int) -> VectorColumn:
    """`[e1, ..., ed]` over n rows, where some ei differ per row."""
    parts = [np.broadcast_to(np.asarray(item, dtype=np.float64), (n,)) for item in items]
    return VectorColumn(np.column_stack(parts) if parts else np.zeros((n, 0)))


def vector_arithmetic(op: str, left: Value, right: Value) -> Value:
    """`op` when either side is a vector per row, or a vector meets a number per row."""
    if op in ("+", "-"):
        a, b = _as_rows_or_vector(left), _as_rows_or_vector(right)
        same_length(left, right, f"`{op}`")
        return VectorColumn(a + b if op == "+" else a - b)
    if op == "*":
        if isinstance(left, (VectorColumn, Vector)):
            return VectorColumn(_as_rows(left, right) * _as_factor(right))
        return VectorColumn(_as_factor(left) * _as_rows(right, left))
    if op == "/" and isinstance(left, (VectorColumn, Vector)):
        with np.errstate(divide="ignore", invalid="ignore"):
            return VectorColumn(_as_rows(left, right) / _as_factor(right))
    raise NotVectorisable


def _as_rows_or_vector(value: Value) -> np.ndarray:
    if isinstance(value, VectorColumn):
        return value.rows
    if isinstance(value, (Vector, list)):
        return np.asarray(value, dtype=np.float64)
    raise NotVectorisable  # a number added to a vector: not a well-typed program


def _as_rows(value: Value, other: Value) -> np.ndarray:
    if isinstance(value, VectorColumn):
        return value.rows
    return np.asarray(value, dtype=np.float64)[None, :]


def _as_factor(value: Value) -> Value:
    if is_per_row_number(value):
        return np.asarray(value, dtype=np.float64)[:, None]
    if isinstance(value, (VectorColumn, Vector, list)):
        raise NotVectorisable  # a product of two vectors is not in the language
    return value


def involves_vectors(left: Value, right: Value) -> bool:
    """Whether `left op right` needs the rules above rather than numpy's."""
    if isinstance(left, VectorColumn) or isinstance(right, VectorColumn):
        return True
    return (isinstance(left, Vector) and is_per_row_number(right)) or (
        isinstance(right, Vector) and is_per_row_number(left)
    )


def same_length(u: Value, v: Value, what: str) -> None:
    """Vectors of different lengths (a data file with more columns than the
    program's vectors have entries) cannot meet: say so instead of crashing."""
    lengths = [_length(x) for x in (u, v)]
    if None not in lengths and lengths[0] != lengths[1]:
        raise RuntimeFailure("FZ514", f"{what} of vectors of lengths {lengths[0]} and {lengths[1]}")


def _length(value: Value) -> int | None:
    if isinstance(value, VectorColumn):
        return int(value.rows.shape[-1])
    if isinstance(value, (Vector, list)):
        return len(value)
    return None


def dot(u: Value, v: Value) -> Value:
    same_length(u, v, "`dot`")
    if isinstance(u, VectorColumn) and isinstance(v, VectorColumn):
        return np.einsum("ij,ij->i", u.rows, v.rows)
    if isinstance(u, VectorColumn):
        return u.rows @ np.asarray(v, dtype=np.float64)
    if isinstance(v, VectorColumn):
        return v.rows @ np.asarray(u, dtype=np.float64)
    return float(np.dot(np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)))


def clip_l2(value: Value, c: float) -> Value:
    """Scale each vector down to L2 norm at most c (per row for a column)."""
    rows = value.rows if isinstance(value, VectorColumn) else np.asarray(value, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        clipped = rows * np.where(norms > c, c / norms, 1.0)
    if isinstance(value, VectorColumn):
        return VectorColumn(clipped)
    return clipped.view(Vector) if clipped.ndim == 1 else clipped
