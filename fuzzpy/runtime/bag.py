"""Columnar databases: a `bag` is a set of numpy columns, not a list of rows.

A *column* mirrors the row type with arrays at the leaves: a 1-d array for a
bag of numbers, booleans or strings, an (n, d) array for a bag of vectors, a
`Record` of columns for a bag of records, a tuple of columns for tuples.
Filtering is lazy: a bag keeps its source columns and a row selection (a
boolean mask or an index array) and gathers a column only when a function
reads it, so `size (filter p db)` is a comparison and a count.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from typing import Any

from fuzzpy.runtime import rowops as R
from fuzzpy.runtime.values import NotVectorisable, Record, RuntimeFailure, Value, WithPair
from fuzzpy.runtime.vectors import (
    VectorColumn,
    is_exact_vector,
    is_row_vector,
    is_vector,
    row_vector_view,
)
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

Column = Any  # np.ndarray | Record | tuple


def column_length(column: Column) -> int:
    if isinstance(column, np.ndarray):
        return int(column.shape[0])
    if isinstance(column, Record):
        return column_length(next(iter(column.fields.values())))
    if isinstance(column, tuple):
        return column_length(column[0])
    raise TypeError(f"not a column: {type(column).__name__}")


def take(column: Column, selection: np.ndarray) -> Column:
    """The rows of `column` picked by a boolean mask or an index array."""
    if isinstance(column, np.ndarray):
        return column[selection]
    if isinstance(column, Record):
        return Record({k: take(v, selection) for k, v in column.fields.items()})
    return tuple(take(c, selection) for c in column)


class _SelectedFields(Mapping[str, Column]):
    """A record's fields gathered through a selection on first access."""

    def __init__(self, source: Record, selection: np.ndarray) -> None:
        self._source = source
        self._selection = selection
        self._cache: dict[str, Column] = {}

    def __getitem__(self, name: str) -> Column:
        if name not in self._cache:
            self._cache[name] = take(self._source.fields[name], self._selection)
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._source.fields)

    def __len__(self) -> int:
        return len(self._source.fields)


class Bag:
    """A multiset of rows stored as columns, with an optional lazy selection."""

    def __init__(self, source: Column, selection: np.ndarray | None = None) -> None:
        self.source = source
        self.selection = selection
        self._size: int | None = None
        self._view: Column | None = None

    def __len__(self) -> int:
        if self._size is None:
            if self.selection is None:
                self._size = column_length(self.source)
            elif self.selection.dtype == bool:
                self._size = int(np.count_nonzero(self.selection))
            else:
                self._size = int(self.selection.size)
        return self._size

    def view(self) -> Column:
        """The selected rows as a column (record fields gathered lazily)."""
        if self._view is None:
            if self.selection is None:
                self._view = self.source
            elif isinstance(self.source, Record):
                self._view = Record(_SelectedFields(self.source, self.selection))  # type: ignore[arg-type]
            else:
                self._view = take(self.source, self.selection)
        return self._view

    def where(self, keep: np.ndarray) -> Bag:
        """The rows for which the boolean array `keep` (over this bag's rows) holds."""
        if self.selection is None:
            return Bag(self.source, keep)
        if self.selection.dtype == bool:
            combined = np.zeros_like(self.selection)
            combined[self.selection] = keep
            return Bag(self.source, combined)
        return Bag(self.source, self.selection[keep])

    def pick(self, indices: np.ndarray) -> Bag:
        """The rows at `indices` (positions among this bag's rows)."""
        if self.selection is None:
            return Bag(self.source, indices)
        base = np.flatnonzero(self.selection) if self.selection.dtype == bool else self.selection
        return Bag(self.source, base[indices])

    def rows(self) -> Iterator[Value]:
        column = self.view()
        for i in range(len(self)):
            yield row_at(column, i)

    def __repr__(self) -> str:
        return f"Bag({len(self)} rows)"


def row_at(column: Column, i: int) -> Value:
    """Row i as per-row values: numpy scalars, a `RowVector` for a vector."""
    if isinstance(column, np.ndarray):
        item = column[i]
        if isinstance(item, np.ndarray):  # one row of a bag of vectors
            return row_vector_view(np.asarray(item, dtype=np.float64))
        return item
    if isinstance(column, Record):
        return Record({k: row_at(v, i) for k, v in column.fields.items()})
    return tuple(row_at(c, i) for c in column)


def dummy_row(column: Column) -> Value:
    """A row of zeros shaped like the column's rows (0, 0.0, false, "", the
    zero vector): a public stand-in from which a per-row function's result
    shape is read, whatever the data (docs/semantics.md, "Vectors")."""
    if isinstance(column, np.ndarray):
        if column.ndim == 2:
            return row_vector_view(np.zeros(column.shape[1]))
        if column.dtype == object:
            return ""
        return np.zeros(1, dtype=column.dtype)[0]
    if isinstance(column, Record):
        return Record({k: dummy_row(v) for k, v in column.fields.items()})
    return tuple(dummy_row(c) for c in column)


def conform(value: Value, template: Value) -> Value:
    """A row's result brought to the template's shape: a vector of another
    length is cut or padded with zeros (the rule for a mismatched row, never
    a failure); records, tuples and pairs part by part."""
    if _vector_like(template) and (is_vector(value) or isinstance(value, list)):
        width = len(template)
        row = np.asarray([R.as_row(v) for v in value] if isinstance(value, list) else value, dtype=np.float64)
        row = row[:width] if row.size >= width else np.pad(row, (0, width - row.size))
        return row_vector_view(row)
    if isinstance(template, Record) and isinstance(value, Record):
        return Record({k: conform(value.fields.get(k, t), t) for k, t in template.fields.items()})
    if isinstance(template, tuple) and isinstance(value, tuple) and len(template) == len(value):
        return tuple(conform(v, t) for v, t in zip(value, template, strict=True))
    if isinstance(template, WithPair) and isinstance(value, WithPair):
        return WithPair(conform(value.left, template.left), conform(value.right, template.right))
    return value


def _vector_like(value: Value) -> bool:
    """A vector, or a list of numbers (stored as a vector per row)."""
    if isinstance(value, list):
        return all(R.is_row(v) or isinstance(v, (int, float, Fraction)) for v in value)
    return is_vector(value)


def column_from_rows(values: Sequence[Value], template: Value = None) -> Column:
    """Rows computed one by one, stacked back into a column; with no rows,
    an empty column shaped like `template` (a result for the dummy row)."""
    if not values:
        return _empty_like(template)
    first = values[0]
    if isinstance(first, Record):
        return Record({k: column_from_rows([v.get(k) for v in values]) for k in first.fields})
    if isinstance(first, tuple):
        return tuple(column_from_rows([v[i] for v in values]) for i in range(len(first)))
    if isinstance(first, (np.ndarray, list)) and not isinstance(first, np.generic):
        return np.array([np.asarray([R.as_row(x) for x in v] if isinstance(v, list) else v, dtype=np.float64) for v in values])
    if isinstance(first, str):
        return np.array(values, dtype=object)
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return np.array(values, dtype=bool)
    if isinstance(first, (bool, int, float, np.generic, Fraction)):
        # always float: a function may give an int on some rows and a float on
        # others, and the column's type must not depend on which rows exist
        return np.array([np.float64(R.as_row(v)) for v in values], dtype=np.float64)
    raise RuntimeFailure("FZ511", f"a bag cannot hold values of kind {type(first).__name__}")


def _empty_like(template: Value) -> Column:
    if isinstance(template, Record):
        return Record({k: _empty_like(v) for k, v in template.fields.items()})
    if isinstance(template, tuple):
        return tuple(_empty_like(v) for v in template)
    if _vector_like(template):
        return np.zeros((0, len(template)))
    if isinstance(template, (bool, np.bool_)):
        return np.zeros(0, dtype=bool)
    if isinstance(template, str):
        return np.zeros(0, dtype=object)
    return np.zeros(0, dtype=np.float64)


def as_column(value: Value, n: int) -> Column:
    """The result of a function evaluated over n rows at once, as a column.

    Constants broadcast; lists of per-row values become an (n, d) array; a
    value that is neither raises `NotVectorisable`.
    """
    from fuzzpy.runtime.vectors import _doubles

    if isinstance(value, VectorColumn):
        return value.rows
    if is_exact_vector(value) or is_row_vector(value):  # one vector, the same for every row
        return np.broadcast_to(_doubles(value), (n, len(value))).copy()
    if isinstance(value, np.ndarray):
        if value.ndim >= 1 and value.shape[0] == n:
            return value
        if value.ndim == 0:
            return np.full(n, value.item())
        raise NotVectorisable
    if isinstance(value, Record):
        return Record({k: as_column(v, n) for k, v in value.fields.items()})
    if isinstance(value, tuple):
        return tuple(as_column(v, n) for v in value)
    if isinstance(value, list):
        parts = [as_column(v, n) for v in value]
        if all(isinstance(p, np.ndarray) and p.ndim == 1 for p in parts):
            return np.column_stack(parts).astype(np.float64) if parts else np.zeros((n, 0))
        raise NotVectorisable
    if isinstance(value, str):
        return np.full(n, value, dtype=object)
    if isinstance(value, (bool, np.bool_)):
        return np.full(n, bool(value))
    if R.is_row(value) or isinstance(value, (int, float, Fraction)):
        return np.full(n, R.as_row(value))
    raise NotVectorisable


#: Rows whose `group[k]` key fell outside 0..k-1 (the language drops them),
#: counted for the data owner's audit while a run computes, never shown.
_GROUP_AUDIT: ContextVar[list[int] | None] = ContextVar("group_audit", default=None)


@contextmanager
def auditing_groups() -> Iterator[list[int]]:
    """Count, in the yielded one-element list, the rows every `group` of
    the computation drops for a key outside its range."""
    counter = [0]
    token = _GROUP_AUDIT.set(counter)
    try:
        yield counter
    finally:
        _GROUP_AUDIT.reset(token)


class LazyGroups(Sequence[Bag]):
    """`group[k] f db`: k buckets by integer key, materialised on demand.

    `counts` reads the bucket sizes with one `bincount`; indexing a bucket
    sorts the rows by key once (stable) and slices.
    """

    def __init__(self, bag: Bag, keys: np.ndarray, k: int, labels: tuple[str, ...] | None = None) -> None:
        self.bag = bag
        self.k = k
        #: the public categories of `group["a", ...]`, one per bucket (None for `group[k]`)
        self.labels = labels
        self._keys = keys
        self._buckets: list[Bag] | None = None
        audit = _GROUP_AUDIT.get()
        if audit is not None:
            audit[0] += int(np.count_nonzero((keys < 0) | (keys >= k)))

    def sizes(self) -> np.ndarray:
        keys = self._keys
        if keys.size and keys.min() >= 0 and keys.max() < 4 * self.k + 1024:
            return np.bincount(keys, minlength=self.k)[: self.k].astype(np.int64, copy=False)
        inside = keys[(keys >= 0) & (keys < self.k)]
        return np.bincount(inside, minlength=self.k).astype(np.int64, copy=False)

    def _materialise(self) -> list[Bag]:
        if self._buckets is None:
            order = np.argsort(self._keys, kind="stable")
            sorted_keys = self._keys[order]
            bounds = np.searchsorted(sorted_keys, np.arange(self.k + 1))
            self._buckets = [
                self.bag.pick(order[bounds[j] : bounds[j + 1]]) for j in range(self.k)
            ]
        return self._buckets

    def __len__(self) -> int:
        return self.k

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        return self._materialise()[index]
