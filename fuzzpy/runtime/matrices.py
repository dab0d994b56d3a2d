"""Matrices at run time: a `mat[p] num` is a Python list of its rows, each an
exact macro-level vector (`vectors.Vector`); the checker's rules are in
`fuzzpy.checker.matrices`, what each computes in docs/semantics.md
("Matrices"). Shapes are public (matrices of different shapes are infinitely
far apart), so an index outside the matrix is an error that is the same on
every dataset, and a ragged list of rows cannot be built by a checked
program (its rows share one vector type)."""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.runtime import exact as X
from fuzzpy.runtime.values import Function, RuntimeFailure, Value, force
from fuzzpy.runtime.vectors import (
    VectorColumn,
    as_vector,
    entries,
    is_exact_vector,
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


def _index(i: Value, size: int, what: str) -> int:
    exact = X.to_exact(force(i))
    if isinstance(exact, bool) or not isinstance(exact, (int, Fraction)) or Fraction(exact).denominator != 1:
        raise RuntimeFailure("FZ516", f"{what} must be a whole number")
    if not 0 <= int(exact) < size:
        raise RuntimeFailure("FZ515", f"{what} {exact} is outside 0..{size - 1}")
    return int(exact)


def mrow(m: Value, i: Value) -> Value:
    rows = rows_of(m, "mrow")
    return rows[_index(i, len(rows), "the row index of `mrow`")]


def mentry(m: Value, i: Value, j: Value) -> Value:
    rows = rows_of(m, "mentry")
    row = rows[_index(i, len(rows), "the row index of `mentry`")]
    return _entries(row)[_index(j, _width(row), "the column index of `mentry`")]


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


def builtins() -> dict[str, Function]:
    return {
        "mat_of_rows": Function("mat_of_rows", 1, lambda m: rows_of(m, "mat_of_rows")),
        "mrow": Function("mrow", 2, mrow),
        "mentry": Function("mentry", 3, mentry),
        "mmap": Function("mmap", 2, mmap),
        "vmap": Function("vmap", 2, vmap),
        "mtranspose": Function("mtranspose", 1, mtranspose),
    }
