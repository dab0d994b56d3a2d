"""Categorical `group`: the public list of categories, and keys to buckets.

`group["north", "south", "east"] (fun r -> r.region) db` is `group[3]` with the
key function's string mapped to its category's position (exact code-point
equality; a string in no category is a key outside the range, dropped and
counted for the owner's audit exactly as the int form's). The categories are
written in the brackets as string literals, or named by one top-level
`let regions = ["north", "south", "east"];` (docs/language-notes.md).

The checker (`checker.higher_order.group`), the interpreter and the engines
all read the categories with `categories_of`, so they agree on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fuzzpy.language import syntax as S
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

#: The characters Arrow's `utf8_trim_whitespace` trims around a cell (the
#: loader, `fuzzpy.data.cells`; checked against pyarrow over every code point
#: by the tests): the checker and the engines trim with these as a `str`
#: operation, without importing pyarrow.
TRIMMED = "".join(chr(c) for c in (
    0x9, 0xA, 0xB, 0xC, 0xD, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002,
    0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
))


def trimmed(text: str) -> str:
    """`text` as the loader reads it from a cell: without the surrounding
    whitespace Arrow's `utf8_trim_whitespace` removes."""
    return text.strip(TRIMMED)


def category_constant(expr: S.Expr) -> tuple[str, ...] | None:
    """The categories a top-level `let` binds, when its value is a non-empty
    list literal of string literals (else None: it must then be a number)."""
    if isinstance(expr, S.ListLit) and expr.items and all(isinstance(i, S.StringLit) for i in expr.items):
        return tuple(i.value for i in expr.items)  # type: ignore[union-attr]
    return None


def is_categorical(static_args: Sequence[S.Expr], named: Mapping[str, tuple[str, ...]]) -> bool:
    """Whether `group[...]`'s brackets hold categories rather than a number
    of buckets: a string literal, a name of a category list, or a list literal
    (the last refused by the checker, FZ220, with a hint)."""
    return any(
        isinstance(a, (S.StringLit, S.ListLit)) or (isinstance(a, S.Var) and a.name in named) for a in static_args
    )


def categories_of(static_args: Sequence[S.Expr], named: Mapping[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The categories written in `group[...]`'s brackets: every argument a
    string literal, or exactly one naming a top-level category list. None
    for anything else (the checker refuses it before anything runs)."""
    if static_args and all(isinstance(a, S.StringLit) for a in static_args):
        return tuple(a.value for a in static_args)  # type: ignore[union-attr]
    if len(static_args) == 1 and isinstance(static_args[0], S.Var) and static_args[0].name in named:
        return named[static_args[0].name]
    return None


def bucket_indices(keys: np.ndarray, categories: tuple[str, ...]) -> np.ndarray:
    """Each row's bucket: the position of its key among the categories, or
    -1 (outside every bucket) for a key equal to none of them. Equality is
    Python's `str` equality: exact, code point by code point (the data was
    trimmed by the loader, the categories are written without surrounding
    whitespace: FZ221). Each row's index depends on its own key only."""
    position = {c: i for i, c in enumerate(categories)}
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64)
    distinct, inverse = np.unique(keys.astype(object), return_inverse=True)
    table = np.array([position.get(k, -1) if isinstance(k, str) else -1 for k in distinct.tolist()], dtype=np.int64)
    return table[inverse.reshape(-1)]
