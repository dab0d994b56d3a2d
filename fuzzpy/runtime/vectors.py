"""Vectors (`vec[p] num`) at macro level, per row, and one per row of a column.

* `Vector`: a macro-level vector, exact like every macro-level number (a
  numpy object array of Python ints and Fractions). A vector that is the same
  for every row (a model `theta`, a released histogram) must not be mistaken
  for a column of per-row numbers when the bag happens to have as many rows
  as the vector has entries: hence the marked class.
* `RowVector`: one row's vector while a function runs row by row (doubles).
* `VectorColumn`: one vector per row while a function runs over columns
  (an (n, d) array of doubles).

Per-row vectors follow the per-row rules (`rowops`): doubles, saturating,
total. Two per-row vectors of different lengths meet as if the shorter were
padded with zeros (defence in depth: the checker keeps lengths static), and
aggregates bring every row to the static length (`primitives`). Macro-level
vectors are exact; lengths there are public, and a mismatch is an error
that is the same on every dataset.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.runtime import exact as X
from fuzzpy.runtime import rowops as R
from fuzzpy.runtime.values import NotVectorisable, RuntimeFailure, Value
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

np = lazy("numpy")


if TYPE_CHECKING:  # for annotations; at run time `_array_class` makes the classes

    class Vector(np.ndarray):
        labels: tuple[str, ...] | None

    class RowVector(np.ndarray): ...


#: `Vector` and `RowVector` subclass numpy's array; they are made when first
#: asked for (`vectors.Vector`, a view), so that a run that never makes a
#: vector (a count on a query engine) does not import numpy (~30 ms). Before
#: then no value can be one: `is_exact_vector` and `is_row_vector` answer
#: False without making them.
_ARRAY_CLASSES: dict[str, type] = {}


def _array_class(name: str) -> type:
    if not _ARRAY_CLASSES:
        import numpy

        class Vector(numpy.ndarray):
            """A macro-level `vec[p] num` value: exact entries (object array).

            ``labels``: the public name of each entry, for a histogram of a
            categorical `group` (`counts`), noise added to one, and `tabulate` over
            distinct strings. Only those set it (`labelled`); every other operation,
            and every numpy view or result, gives an unlabelled vector."""

            labels: tuple[str, ...] | None = None

        class RowVector(numpy.ndarray):
            """One row's vector, in doubles."""

        for made in (Vector, RowVector):
            made.__qualname__ = made.__name__  # found by name (pickle, copy) through `__getattr__`
            _ARRAY_CLASSES[made.__name__] = made
        globals().update(_ARRAY_CLASSES)
    return _ARRAY_CLASSES[name]


def __getattr__(name: str) -> type:
    """`Vector` and `RowVector`, made on first use (PEP 562)."""
    if name in ("Vector", "RowVector"):
        return _array_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_exact_vector(value: object) -> bool:
    """``isinstance(value, Vector)`` (False while the class is not made: no value is one)."""
    return "Vector" in _ARRAY_CLASSES and isinstance(value, _ARRAY_CLASSES["Vector"])


def is_row_vector(value: object) -> bool:
    """``isinstance(value, RowVector)`` (the same)."""
    return "RowVector" in _ARRAY_CLASSES and isinstance(value, _ARRAY_CLASSES["RowVector"])


def vector_view(array: np.ndarray) -> Vector:
    return array.view(_array_class("Vector"))


def row_vector_view(array: np.ndarray) -> RowVector:
    return array.view(_array_class("RowVector"))


def labelled(value: Vector, labels: tuple[str, ...] | None) -> Vector:
    """``value`` with its entries named by ``labels`` (public: written in
    the program), when there is one distinct label per entry."""
    if labels is not None and len(labels) == len(value) and len(set(labels)) == len(labels):
        value.labels = tuple(labels)
    return value


def tabulated(keys: Value, entries: Value) -> Value:
    """`tabulate ts f`: labelled by the keys when they are distinct strings."""
    if is_exact_vector(entries) and isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys):
        return labelled(entries, tuple(keys))
    return entries


@frozen
class VectorColumn:
    """One vector per row: ``rows`` is an (n, d) array of doubles."""

    rows: np.ndarray

    def __neg__(self) -> VectorColumn:
        return VectorColumn(-self.rows)


def vector(values: Value) -> Vector:
    """An exact vector from numbers (ints, Fractions, floats read exactly)."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    out = np.empty(len(items), dtype=object)
    out[:] = [X.to_exact(v) for v in items]
    return vector_view(out)


def row_vector(values: Value) -> RowVector:
    return row_vector_view(np.asarray(R.finite(np.asarray(values, dtype=np.float64))).reshape(-1))


def is_per_row_number(value: Value) -> bool:
    """A column of per-row numbers (not a vector)."""
    return isinstance(value, np.ndarray) and not is_exact_vector(value) and not is_row_vector(value) and value.ndim == 1


def is_vector(value: Value) -> bool:
    return isinstance(value, VectorColumn) or is_exact_vector(value) or is_row_vector(value)


def as_vector(value: Value) -> Value:
    """A list of numbers where a vector is expected: exact if its entries
    are, else one row's vector, or a vector column if an entry is a column."""
    if not isinstance(value, list):
        return value
    if any(is_per_row_number(v) for v in value):
        n = next(v.shape[0] for v in value if is_per_row_number(v))
        return vector_column(value, n)
    if any(R.is_row(v) for v in value):
        return row_vector([R.as_row(v) for v in value])
    return vector(value)


def vector_column(items: list[Value], n: int) -> VectorColumn:
    """`[e1, ..., ed]` over n rows, where some ei differ per row."""
    parts = [np.broadcast_to(np.asarray(R.as_row(item), dtype=np.float64), (n,)) for item in items]
    return VectorColumn(np.column_stack(parts) if parts else np.zeros((n, 0)))


# ---------------------------------------------------------------- levels


def _level(*values: Value) -> str:
    """'column' if anything differs per row of a column, 'row' if anything is
    a per-row value, else 'exact'."""
    if any(isinstance(v, VectorColumn) or is_per_row_number(v) for v in values):
        return "column"
    if any(is_row_vector(v) or R.is_row(v) and not is_exact_vector(v) for v in values):
        return "row"
    return "exact"


def _doubles(value: Value) -> np.ndarray:
    if isinstance(value, VectorColumn):
        return value.rows
    if is_exact_vector(value):
        return np.array([X.to_float(v) for v in value.tolist()], dtype=np.float64)
    return np.asarray(R.as_row(value), dtype=np.float64)


def _pad(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row vectors of different lengths: the shorter padded with zeros."""
    wa, wb = a.shape[-1], b.shape[-1]
    if wa == wb:
        return a, b
    width = max(wa, wb)

    def widen(x: np.ndarray) -> np.ndarray:
        pad = [(0, 0)] * (x.ndim - 1) + [(0, width - x.shape[-1])]
        return np.pad(x, pad)

    return widen(a), widen(b)


def _wrap(result: np.ndarray, level: str) -> Value:
    result = R.finite(result)
    if level == "column":
        return VectorColumn(result if result.ndim == 2 else result[None, :])
    return row_vector_view(result)


def vector_arithmetic(op: str, left: Value, right: Value) -> Value:
    """`+`/`-` of two vectors, `*` of a number and a vector, vector `/` number.
    The number 0 standing for a vector (`0 * v` with a static 0 is 0,
    unevaluated v) is that vector's zero in `+` and `-`."""
    if op in ("+", "-") and _is_zero_number(left) and is_vector(right):
        return right if op == "+" else negate(right)
    if op in ("+", "-") and _is_zero_number(right) and is_vector(left):
        return left
    level = _level(left, right)
    if level == "exact":
        return _exact_arithmetic(op, left, right)
    with np.errstate(all="ignore"):
        if op in ("+", "-"):
            if not (is_vector(left) and is_vector(right)):
                raise NotVectorisable  # a number added to a vector: not a well-typed program
            a, b = _pad(_doubles(left), _doubles(right))
            return _wrap(a + b if op == "+" else a - b, level)
        vec, num = (left, right) if is_vector(left) else (right, left)
        if is_vector(num) or (op == "/" and not is_vector(left)):
            raise NotVectorisable  # a product of two vectors is not in the language
        rows, factor = _doubles(vec), _doubles(num)
        if factor.ndim == 1 and level == "column":
            factor = factor[:, None]  # one number per row
        if op == "*":
            return _wrap(rows * factor, level)
        out = np.zeros(np.broadcast(rows, factor).shape)
        np.divide(rows, factor, out=out, where=factor != 0)
        return _wrap(out, level)


def entries(v: Vector) -> list[object]:
    """A macro-level vector's entries as exact numbers (a double entry stands
    for the dyadic rational it is)."""
    return [X.to_exact(x) for x in v.tolist()]


def _is_zero_number(value: Value) -> bool:
    return X.is_exact(value) and value == 0


def _exact_arithmetic(op: str, left: Value, right: Value) -> Vector:
    if op in ("+", "-"):
        if not (is_exact_vector(left) and is_exact_vector(right)):
            raise RuntimeFailure("FZ514", f"`{op}` of a vector and a number")
        same_length(left, right, f"`{op}`")
        pairs = zip(entries(left), entries(right), strict=True)
        return vector([a + b if op == "+" else a - b for a, b in pairs])
    if op == "*":
        vec, num = (left, right) if is_exact_vector(left) else (right, left)
        if is_exact_vector(num):
            raise RuntimeFailure("FZ514", "`*` of two vectors")
        return vector([num * v for v in entries(vec)])
    if not is_exact_vector(left) or is_exact_vector(right):
        raise RuntimeFailure("FZ514", "`/` divides a vector by a number")
    return vector([X.divide(v, right) for v in entries(left)])


def same_length(u: Value, v: Value, what: str) -> None:
    """Macro-level vectors of different lengths: lengths there are public, so
    this error is the same on every dataset."""
    if len(u) != len(v):
        raise RuntimeFailure("FZ514", f"{what} of vectors of lengths {len(u)} and {len(v)}")


def negate(value: Value) -> Value:
    if isinstance(value, VectorColumn):
        return -value
    if is_exact_vector(value):
        return vector([-v for v in entries(value)])
    if is_row_vector(value):
        return row_vector_view(-np.asarray(value))
    return value


def dot(u: Value, v: Value) -> Value:
    if _is_zero_number(u) or _is_zero_number(v):
        return 0  # `0 * w` standing for the zero vector
    u, v = as_vector(u), as_vector(v)
    level = _level(u, v)
    if level == "exact":
        same_length(u, v, "`dot`")
        return sum((a * b for a, b in zip(entries(u), entries(v), strict=True)), 0)
    a, b = _pad(_doubles(u), _doubles(v))
    with np.errstate(all="ignore"):
        result = ordered_dot(a, b)
        if result.ndim == 0:
            result = np.float64(result)
    return R.finite(result)


def ordered_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum over the last axis of a * b, added left to right (a0 b0 + a1 b1,
    then + a2 b2...), one row at a time in effect. A fixed order makes each
    row's result a function of that row alone, the same over columns, row
    by row and in every engine (docs/engines.md); BLAS and `einsum` choose
    their order (and fused multiply-adds) by the shape of the whole array."""
    width = a.shape[-1]
    if width == 0:
        return np.zeros(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]))
    total = a[..., 0] * b[..., 0]
    for j in range(1, width):
        total = total + a[..., j] * b[..., j]
    return total


# ---------------------------------------------------------------- L2 clipping


def clip_l2_rows(rows: np.ndarray, c: float) -> np.ndarray:
    """Each row (last axis) scaled down to L2 norm at most c, in doubles and
    without overflow: a row x with m = max |x_i| is (x / m) min(m, c / ||x / m||)."""
    rows = np.asarray(R.finite(np.asarray(rows, dtype=np.float64)))
    with np.errstate(all="ignore"):
        m = np.max(np.abs(rows), axis=-1, keepdims=True) if rows.shape[-1] else np.zeros(rows.shape[:-1] + (1,))
        unit = np.divide(rows, m, out=np.zeros_like(rows), where=m > 0)
        norm = np.sqrt(ordered_dot(unit, unit))[..., None]
        scale = np.minimum(m, np.divide(c, norm, out=np.full_like(norm, np.inf), where=norm > 0))
        return unit * scale


def clip_l2(value: Value, c: Fraction) -> Value:
    """`clip2[c]`: exact and exactly 1-Lipschitz at macro level
    (`exact_clip_l2`), in doubles per row."""
    value = as_vector(value)
    if isinstance(value, VectorColumn):
        return VectorColumn(clip_l2_rows(value.rows, X.to_float(c)))
    if is_row_vector(value):
        return row_vector_view(clip_l2_rows(np.asarray(value), X.to_float(c)))
    if is_exact_vector(value):
        return exact_clip_l2(value, c)
    raise RuntimeFailure("FZ516", "`clip2` clips a vector")


# Exact L2 clipping. The projection v -> v min(1, c / ||v||) needs an
# irrational factor. What runs is v -> psi(r) v with r = ||v||^2 / c^2, where
# psi = 1 for r <= 1 and psi is piecewise linear in r between the nodes
# r = 2^a (1 + b 2^-K) (a >= 0, 0 <= b < 2^K), with node values 1 at r = 1
# and floor_M((1 - 2^-2K) / sqrt(r)) elsewhere (floor_M: rounded down to a
# multiple of 2^-M). Why this is exactly 1-Lipschitz with norm <= c:
# * F(v) = psi(r) v is continuous and piecewise smooth; its Jacobian
#   psi I + (2 psi' / c^2) v v^T is symmetric with eigenvalues psi
#   (tangential) and psi + 2 r psi' (radial), so ||DF|| <= 1 when
#   0 <= psi <= 1 and -1 <= psi + 2 r psi' <= 1. Node values are
#   non-increasing (floor of a decreasing function), so psi' <= 0 and
#   psi <= 1. On a segment of width Delta <= r_j 2^-K the chord slope is at
#   most (1/2) r_j^(-3/2) + 2^-M / Delta in size, so 2 r |psi'| <=
#   r_j^(-1/2) (1 + 2^-K) + 2^(1-M) (2^K + 1), while psi >= r_j^(-1/2)
#   (1 - 2^-K) - 2^-M: psi + 2 r psi' >= -2^(2-K) > -1.
# * ||F(v)|| / c = f(r) = psi(r) sqrt(r), concave on each segment (psi linear
#   non-increasing, sqrt concave increasing). At the nodes f <= 1 - 2^-2K;
#   inside a segment f exceeds its chord by at most Delta^2 max|f''| / 8
#   <= (3/32) 2^-2K (1 + o(1)), so f < 1. On the first segment [1, 1 + 2^-K],
#   f(1) = 1 and f'(1+) = psi' + 1/2 < 0 (the chord slope is below -1/2), so
#   f <= 1 by concavity.
_CLIP_K = 12
_CLIP_M = 64


def _floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > x else e


def _psi_node(a: int, b: int) -> Fraction:
    """psi at r = 2^a (1 + b 2^-K) (a >= 0, 0 <= b <= 2^K)."""
    if a == 0 and b == 0:
        return Fraction(1)
    r = Fraction(2) ** a * (1 + Fraction(b, 1 << _CLIP_K))
    shrink = 1 - Fraction(1, 1 << (2 * _CLIP_K))
    square = (shrink * shrink * (1 << (2 * _CLIP_M))) / r
    return Fraction(_isqrt_floor(square), 1 << _CLIP_M)


def _isqrt_floor(x: Fraction) -> int:
    import math

    return math.isqrt(x.numerator // x.denominator)


def psi(r: Fraction) -> Fraction:
    """The scaling factor of exact L2 clipping at r = ||v||^2 / c^2."""
    if r <= 1:
        return Fraction(1)
    a = _floor_log2(r)
    position = (r / Fraction(2) ** a - 1) * (1 << _CLIP_K)
    b = int(position)  # floor: position >= 0
    low, high = _psi_node(a, b), _psi_node(a, b + 1)
    return low + (position - b) * (high - low)


def exact_clip_l2(v: Vector, c: Fraction) -> Vector:
    items = entries(v)
    squared = sum((x * x for x in items), Fraction(0))
    factor = psi(squared / (Fraction(c) * c)) if c > 0 else Fraction(0)
    return vector([factor * x for x in items])
