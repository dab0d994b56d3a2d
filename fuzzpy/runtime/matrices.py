"""Matrices at run time: a `mat[p] num` is a Python list of its rows, each an
exact macro-level vector (`vectors.Vector`); the checker's rules are in
`fuzzpy.checker.matrices`, what each computes in docs/semantics.md
("Matrices"). Shapes are public (matrices of different shapes are infinitely
far apart), so an index outside the matrix is an error that is the same on
every dataset, and a ragged list of rows cannot be built by a checked
program (its rows share one vector type)."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.runtime import exact as X
from fuzzpy.runtime.values import Function, RuntimeFailure, Value, force
from fuzzpy.runtime.vectors import as_vector, entries, is_exact_vector, vector

if TYPE_CHECKING:
    from fuzzpy.runtime.vectors import Vector


def rows_of(value: Value, what: str) -> list[Vector]:
    """The rows of a macro-level matrix, each an exact vector."""
    value = force(value)
    if not isinstance(value, list):
        raise RuntimeFailure("FZ516", f"`{what}` expects a matrix (a list of vectors)")
    rows = [as_vector(force(row)) for row in value]
    if not all(is_exact_vector(row) for row in rows):
        raise RuntimeFailure("FZ516", f"`{what}` works on a matrix computed once, not on one per row of a bag")
    return rows


def is_matrix(value: Value) -> bool:
    """A non-empty list of exact vectors (an empty list is noised as itself)."""
    return isinstance(value, list) and bool(value) and all(is_exact_vector(row) for row in value)


def _index(i: Value, size: int, what: str) -> int:
    exact = X.to_exact(force(i))
    if isinstance(exact, bool) or Fraction(exact).denominator != 1 or not 0 <= int(exact) < size:
        raise RuntimeFailure("FZ515", f"{what} {exact} is outside 0..{size - 1}")
    return int(exact)


def mrow(m: Value, i: Value) -> Vector:
    rows = rows_of(m, "mrow")
    return rows[_index(i, len(rows), "the row index of `mrow`")]


def mentry(m: Value, i: Value, j: Value) -> Value:
    rows = rows_of(m, "mentry")
    row = rows[_index(i, len(rows), "the row index of `mentry`")]
    return entries(row)[_index(j, len(row), "the column index of `mentry`")]


def vmap(f: Value, v: Value) -> Vector:
    found = as_vector(force(v))
    if not is_exact_vector(found):
        raise RuntimeFailure("FZ516", "`vmap` works on a vector computed once, not on one per row of a bag")
    function = force(f)
    assert isinstance(function, Function)
    return vector([force(function(x)) for x in entries(found)])


def mmap(f: Value, m: Value) -> list[Vector]:
    return [vmap(f, row) for row in rows_of(m, "mmap")]


def mtranspose(m: Value) -> list[Vector]:
    rows = [entries(row) for row in rows_of(m, "mtranspose")]
    width = len(rows[0]) if rows else 0
    return [vector([row[j] for row in rows]) for j in range(width)]


def builtins() -> dict[str, Function]:
    return {
        "mat_of_rows": Function("mat_of_rows", 1, lambda m: rows_of(m, "mat_of_rows")),
        "mrow": Function("mrow", 2, mrow),
        "mentry": Function("mentry", 3, mentry),
        "mmap": Function("mmap", 2, mmap),
        "vmap": Function("vmap", 2, vmap),
        "mtranspose": Function("mtranspose", 1, mtranspose),
    }
