"""`join[k] f g db1 db2`: the bounded-contribution equi-join of two bags.

Semantics (docs/semantics.md, "`join`"), the same on every engine (a
relation is read into memory and joined here): each input keeps, for each
key, its k first rows in the *canonical order of the row values* (fields
compared in the order `canonical_order` fixes, then ties are identical
rows, interchangeable in a multiset); the result is every pair (r, s) of
kept rows with f r == g s, listed by key, then by the canonical order of r,
then of s, so that the result, as a list too, depends only on the two
multisets, never on the order the rows were read in.

Why the checker's 2k per bag holds (PINQ, McSherry SIGMOD 2009, section 4.3;
Johnson, Near & Song, VLDB 2018): the rows of one key are ordered by value,
so adding a row r of key x leaves every other row's position among the
rows of x unchanged or one later. The kept rows of x gain r and lose at
most the one that was k-th (no other key changes): the truncated bag moves
by at most 2 rows. A kept row pairs with at most k kept rows of the other
side, so the result moves by at most 2k rows.
"""

from __future__ import annotations

from typing import Any

from fuzzpy.runtime.bag import Bag, Column, take
from fuzzpy.runtime.values import Record, RuntimeFailure
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

Array = Any  # np.ndarray


def key_codes(left: Array, right: Array) -> tuple[Array, Array]:
    """The keys of both sides as dense integer codes, equal exactly when the
    keys are equal (ints computed row by row may come back as doubles:
    compared by value)."""
    for keys in (left, right):
        if not isinstance(keys, np.ndarray) or keys.ndim != 1 or (keys.size and keys.dtype.kind not in "biufOU"):
            raise RuntimeFailure("FZ516", "the key given to `join` must be an int, a string or a bool per row")
    if left.size == 0 or right.size == 0:
        return np.zeros(left.size, dtype=np.int64), np.zeros(right.size, dtype=np.int64)
    both = np.concatenate([_comparable(left), _comparable(right)])
    _, codes = np.unique(both, return_inverse=True)
    codes = np.asarray(codes, dtype=np.int64).reshape(-1)
    return codes[: left.size], codes[left.size :]


def _comparable(keys: Array) -> Array:
    """Keys of one kind on both sides: strings as objects, bools and ints as
    int64. An `int` key computed row by row comes back as doubles holding
    whole numbers: read back exactly as int64, so that an int64 key above
    2^53 is never compared through a rounded double (a side's evaluation
    path must not change which keys are equal)."""
    if keys.dtype.kind == "b":
        return keys.astype(np.int64)
    if keys.dtype.kind in "OU":
        return keys.astype(object)
    if keys.dtype.kind == "f":
        whole = np.isfinite(keys) & (np.abs(keys) < 2.0**63)
        if not whole.all() or (keys[whole] != np.trunc(keys[whole])).any():
            raise RuntimeFailure("FZ516", "the key given to `join` must be an int, a string or a bool per row")
        return keys.astype(np.int64)
    return keys.astype(np.int64)


def canonical_order(column: Column, n: int) -> Array:
    """Rank of every row in the canonical order of row values: the leaves of
    the row type in a fixed order (record fields by name, tuple and vector
    entries by position), each compared by value; equal ranks only for
    identical rows."""
    leaves = list(_leaves(column))
    if not leaves or n == 0:
        return np.zeros(n, dtype=np.int64)
    ranks = [_dense(leaf) for leaf in leaves]
    order = np.lexsort(tuple(reversed(ranks)))  # the first leaf is the primary key
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    return rank


def _leaves(column: Column) -> Any:
    if isinstance(column, np.ndarray):
        if column.ndim == 1:
            yield column
        else:
            for j in range(column.shape[1]):
                yield column[:, j]
    elif isinstance(column, Record):
        for name in sorted(column.fields):
            yield from _leaves(column.fields[name])
    elif isinstance(column, tuple):
        for part in column:
            yield from _leaves(part)
    else:
        raise RuntimeFailure("FZ516", "`join` cannot order these rows")


def _dense(leaf: Array) -> Array:
    """A sort key for the leaf: numbers as they are (-0.0 and 0.0 one value,
    NaN after every number, as numpy sorts), booleans false < true, strings
    by their rank among the leaf's distinct strings (code point order)."""
    if leaf.dtype.kind == "f":
        return leaf + 0.0  # -0.0 -> 0.0
    if leaf.dtype.kind in "biu":
        return leaf
    _, inverse = np.unique(leaf.astype(object), return_inverse=True)
    return np.asarray(inverse, dtype=np.int64).reshape(-1)


def truncated(codes: Array, rank: Array, k: int) -> tuple[Array, Array]:
    """The rows kept (positions, ordered by key then canonical order) and
    their key codes: per key, the k first in the canonical order."""
    order = np.lexsort((rank, codes))
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]) if order.size else order
    first = np.zeros(order.size, dtype=np.int64)
    if order.size:
        first[starts] = starts
        first = np.maximum.accumulate(first)
    keep = (np.arange(order.size) - first) < k
    return order[keep], sorted_codes[keep]


def pair_positions(left_codes: Array, right_codes: Array, keys: int) -> tuple[Array, Array]:
    """Positions (i, j) into the two kept lists, both sorted by key, of the
    pairs with equal keys: for each i in order, its key's j in order."""
    right_count = np.bincount(right_codes, minlength=keys)
    right_start = (np.cumsum(right_count) - right_count).astype(np.int64)
    per_left = right_count[left_codes]
    total = int(per_left.sum())
    i = np.repeat(np.arange(left_codes.size, dtype=np.int64), per_left)
    block_start = (np.cumsum(per_left) - per_left).astype(np.int64)
    within = np.arange(total, dtype=np.int64) - np.repeat(block_start, per_left)
    j = np.repeat(right_start[left_codes], per_left) + within
    return i, j


def join_bags(left: Bag, right: Bag, left_keys: Array, right_keys: Array, k: int) -> Bag:
    """The bag of pairs of `join[k]` (module docstring)."""
    left_view, right_view = left.view(), right.view()
    left_codes, right_codes = key_codes(np.asarray(left_keys), np.asarray(right_keys))
    keys = int(max(left_codes.max(initial=-1), right_codes.max(initial=-1))) + 1
    left_kept, left_kept_codes = truncated(left_codes, canonical_order(left_view, len(left)), k)
    right_kept, right_kept_codes = truncated(right_codes, canonical_order(right_view, len(right)), k)
    i, j = pair_positions(left_kept_codes, right_kept_codes, max(keys, 1))
    return Bag((take(left_view, left_kept[i]), take(right_view, right_kept[j])))


__all__ = ["canonical_order", "join_bags", "key_codes", "pair_positions", "truncated"]
