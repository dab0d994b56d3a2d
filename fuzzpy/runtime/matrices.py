"""Matrices at run time: a `mat[p] num` is a Python list of its rows, each an
exact macro-level vector (`vectors.Vector`); the checker's rules are in
`fuzzpy.checker.matrices`, what each computes in docs/semantics.md
("Matrices"). At macro level shapes are public (matrices of different shapes
are infinitely far apart), so an index outside the matrix is an error (FZ515)
that is the same on every dataset, and a ragged list of rows cannot be built
by a checked program (its rows share one vector type).

Inside a per-row function an index (or a matrix's number of rows) may come
from the row, so there indexing is made total like every per-row operation
(Haeberlen, Pierce & Narayan, USENIX Security 2011: per-row work must be
total and deterministic for `map`/`filter`/`join` to stay stable, McSherry,
PINQ, 2009): an index outside the matrix gives the default value of the
result's type, `mentry` 0 and `mrow` the zero vector of the matrix's width --
never a failure, never a message naming the index (review s28d, F4)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from fuzzpy.runtime import exact as X
from fuzzpy.runtime import rowops as R
from fuzzpy.runtime.values import Function, NotVectorisable, RuntimeFailure, Value, force
from fuzzpy.runtime.vectors import (
    VectorColumn,
    as_vector,
    entries,
    is_exact_vector,
    row_vector,
    vector,
    vector_column,
)


def rows_of(value: Value, what: str) -> list[Value]:
    """The rows of a matrix, each a vector: exact at macro level, a
    `RowVector` or a `VectorColumn` inside a function run over a bag's rows."""
    value = force(value)
    if not isinstance(value, list):
        raise RuntimeFailure("FZ516", f"`{what}` expects a matrix (a list of vectors)")
    return [as_vector(force(row)) for row in value]


def is_matrix(value: Value) -> bool:
    """A non-empty list of vectors (or of lists of numbers: a literal's rows)
    computed once: what `laplace` / `gauss` noise entry by entry. (An empty
    matrix is noised as the empty vector it also is.)"""
    return isinstance(value, list) and bool(value) and all(
        isinstance(row, list) or is_exact_vector(row) for row in (force(r) for r in value))


def _width(row: Value) -> int:
    return int(row.rows.shape[1]) if isinstance(row, VectorColumn) else len(row)


def _entries(row: Value) -> list[Value]:
    """A vector's entries: exact numbers, doubles of one row, or columns of per-row numbers."""
    if isinstance(row, VectorColumn):
        return [row.rows[:, j] for j in range(row.rows.shape[1])]
    if is_exact_vector(row):
        return entries(row)
    return list(row.tolist())


#: how the current code runs: "macro", "columns" or "row" (the interpreter's mode)
Mode = Callable[[], str]


class _OutOfRange(Exception):
    """An index outside a matrix inside per-row code: the default value."""


def _index(i: Value, size: int, what: str, per_row: bool) -> int:
    exact = X.to_exact(force(i))
    if isinstance(exact, bool) or not isinstance(exact, (int, Fraction)) or Fraction(exact).denominator != 1:
        if per_row and R.is_row(exact):
            raise NotVectorisable  # a column of indices: the rows are taken one by one
        raise RuntimeFailure("FZ516", f"{what} must be a whole number")
    if not 0 <= int(exact) < size:
        if per_row:
            raise _OutOfRange
        raise RuntimeFailure("FZ515", f"{what} {exact} is outside 0..{size - 1}")
    return int(exact)


def _per_row(mode: Mode) -> bool:
    return mode() in ("columns", "row")


def _defaulted(mode: Mode) -> None:
    """Over columns, an out-of-range index may hold for some rows only (a
    column's vectors are padded to the longest): the rows are taken one by
    one, where each row gets its own default."""
    if mode() == "columns":
        raise NotVectorisable


def mrow(m: Value, i: Value, mode: Mode = lambda: "macro") -> Value:
    rows = rows_of(m, "mrow")
    per_row = _per_row(mode)
    try:
        return rows[_index(i, len(rows), "the row index of `mrow`", per_row)]
    except _OutOfRange:
        _defaulted(mode)
        return row_vector([0.0] * (_width(rows[0]) if rows else 0))


def mentry(m: Value, i: Value, j: Value, mode: Mode = lambda: "macro") -> Value:
    rows = rows_of(m, "mentry")
    per_row = _per_row(mode)
    try:
        row = rows[_index(i, len(rows), "the row index of `mentry`", per_row)]
        return _entries(row)[_index(j, _width(row), "the column index of `mentry`", per_row)]
    except _OutOfRange:
        _defaulted(mode)
        return R.as_row(0.0)


def _rebuilt(items: list[Value], like: Value) -> Value:
    """A vector of ``items`` at the level of ``like``."""
    if isinstance(like, VectorColumn):
        return vector_column(items, like.rows.shape[0])
    if is_exact_vector(like):
        return vector(items)
    return as_vector(items) if items else like


def vmap(f: Value, v: Value) -> Value:
    found = as_vector(force(v))
    function = force(f)
    if not isinstance(function, Function):
        raise RuntimeFailure("FZ516", "`vmap` / `mmap` apply a function")
    return _rebuilt([force(function(x)) for x in _entries(found)], found)


def mmap(f: Value, m: Value) -> list[Value]:
    return [vmap(f, row) for row in rows_of(m, "mmap")]


def mtranspose(m: Value) -> list[Value]:
    rows = rows_of(m, "mtranspose")
    table = [_entries(row) for row in rows]
    width = _width(rows[0]) if rows else 0
    return [_rebuilt([row[j] for row in table], rows[0]) for j in range(width)]


def builtins(mode: Mode) -> dict[str, Function]:
    """The matrix primitives; `mode` tells them whether they run per row."""
    return {
        "mat_of_rows": Function("mat_of_rows", 1, lambda m: rows_of(m, "mat_of_rows")),
        "mrow": Function("mrow", 2, lambda m, i: mrow(m, i, mode)),
        "mentry": Function("mentry", 3, lambda m, i, j: mentry(m, i, j, mode)),
        "mmap": Function("mmap", 2, mmap),
        "vmap": Function("vmap", 2, vmap),
        "mtranspose": Function("mtranspose", 1, mtranspose),
    }
