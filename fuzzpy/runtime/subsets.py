"""Per-row values on a subset of the rows: how `if`, `case`, `&&` and `||`
run over columns (docs/semantics.md, "Per-row functions").

Over columns, a condition that differs per row sends each row to its own
branch: the branch is evaluated on the rows that take it (`restrict` the
environment to them), and the parts are put back together (`expand` each
to all the rows, then pick per row with `operations.select_rows`). Each
row thus computes exactly what it computes when the function runs row by
row, including how many recursive calls it makes, and a recursion stops
unfolding when no row is left in it (`Interpreter`, "lock-step" recursion).

Per-row values are those that hold one entry per row of the current
subset: plain numpy arrays (not the marked macro-level `Vector`s),
`VectorColumn`s, and records, tuples, lists, pairs, sums and closures made
of them. Everything else (macro-level numbers and vectors, strings,
constants that broadcast) is the same on every row and is left as it is.
A value of a kind this module does not know raises `NotVectorisable`: the
function then runs row by row, with the same results.
"""

from __future__ import annotations

from collections.abc import Mapping

from fuzzpy.runtime.values import Function, Inl, Inr, NotVectorisable, Record, Value, WithPair
from fuzzpy.runtime.vectors import VectorColumn, is_exact_vector, is_row_vector
from fuzzpy.support.lazy import lazy

np = lazy("numpy")


def _per_row_array(value: Value) -> bool:
    return isinstance(value, np.ndarray) and not is_exact_vector(value) and not is_row_vector(value) and value.ndim >= 1


def restrict(value: Value, positions: np.ndarray, n: int) -> Value:  # noqa: PLR0911
    """``value`` (over n rows) on the rows at ``positions`` only."""
    from fuzzpy.runtime.operations import SumColumn

    if _per_row_array(value):
        if value.shape[0] != n:
            raise NotVectorisable
        return value[positions]
    if isinstance(value, VectorColumn):
        return VectorColumn(value.rows[positions])
    if isinstance(value, Record):
        return Record(_Restricted(value.fields, positions, n))
    if isinstance(value, tuple):
        return tuple(restrict(v, positions, n) for v in value)
    if isinstance(value, list):
        return [restrict(v, positions, n) for v in value]
    if isinstance(value, WithPair):
        return WithPair(restrict(value.left, positions, n), restrict(value.right, positions, n))
    if isinstance(value, Inl):
        return Inl(restrict(value.value, positions, n))
    if isinstance(value, Inr):
        return Inr(restrict(value.value, positions, n))
    if isinstance(value, SumColumn):
        return SumColumn(
            restrict(value.is_left, positions, n),
            None if value.left is None else restrict(value.left, positions, n),
            None if value.right is None else restrict(value.right, positions, n),
        )
    if isinstance(value, Function):
        return _restrict_function(value, positions, n)
    return value


def _restrict_function(func: Function, positions: np.ndarray, n: int) -> Function:
    base = func.rebuild(positions, n) if func.rebuild is not None else func
    args = tuple(restrict(a, positions, n) for a in func.args)
    return Function(base.name, base.arity, base.apply, args, base.lazy, base.rebuild)


def restrict_env(env: Mapping[str, Value], positions: np.ndarray, n: int) -> dict[str, Value]:
    """An environment over n rows on the rows at ``positions``. (Per-row
    code binds its variables by value, so no per-row `Thunk` is in it: a
    `Thunk` is a macro-level binding and is the same on every row.)"""
    return {name: restrict(value, positions, n) for name, value in env.items()}


class _Restricted(Mapping[str, Value]):
    """A record's fields restricted on first access (a row of a wide table
    reads few of its fields)."""

    def __init__(self, fields: Mapping[str, Value], positions: np.ndarray, n: int) -> None:
        self._fields = fields
        self._positions = positions
        self._n = n
        self._cache: dict[str, Value] = {}

    def __getitem__(self, name: str) -> Value:
        if name not in self._cache:
            self._cache[name] = restrict(self._fields[name], self._positions, self._n)
        return self._cache[name]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


def expand(value: Value, positions: np.ndarray, n: int) -> Value:  # noqa: PLR0911
    """A value computed on the rows at ``positions`` as a value over all n
    rows: per-row arrays are scattered into place (the other rows hold a
    filler that `select_rows` never picks); constants stay constants."""
    from fuzzpy.runtime.operations import SumColumn

    k = positions.size
    if _per_row_array(value):
        if value.shape[0] != k:
            raise NotVectorisable
        out = np.zeros((n, *value.shape[1:]), dtype=value.dtype) if value.dtype != object else np.full(n, "", dtype=object)
        out[positions] = value
        return out
    if isinstance(value, VectorColumn):
        if value.rows.shape[0] != k:
            raise NotVectorisable
        rows = np.zeros((n, value.rows.shape[1]))
        rows[positions] = value.rows
        return VectorColumn(rows)
    if isinstance(value, Record):
        return Record({name: expand(v, positions, n) for name, v in value.fields.items()})
    if isinstance(value, tuple):
        return tuple(expand(v, positions, n) for v in value)
    if isinstance(value, list):
        return [expand(v, positions, n) for v in value]
    if isinstance(value, WithPair):
        return WithPair(expand(value.left, positions, n), expand(value.right, positions, n))
    if isinstance(value, Inl):
        return Inl(expand(value.value, positions, n))
    if isinstance(value, Inr):
        return Inr(expand(value.value, positions, n))
    if isinstance(value, SumColumn):
        return SumColumn(
            expand(np.broadcast_to(value.is_left, (k,)), positions, n),
            None if value.left is None else expand(value.left, positions, n),
            None if value.right is None else expand(value.right, positions, n),
        )
    if isinstance(value, Function):
        raise NotVectorisable  # a function chosen per row
    return value
