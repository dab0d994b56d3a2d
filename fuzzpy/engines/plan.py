"""Relations and aggregates: what a query engine is asked to compute.

A bag held by an engine is a `Relation`: a `Scan` (a bag parameter's rows,
after the row rules), a conjunction of per-row predicates (`filter`,
`split`, a `group` bucket, a `subsample`), and the current row as symbolic
values over the scan's columns (what `map`s made of it). Every relation is
one query: there are no intermediate tables, and only `Aggregate`s leave the
engine (and, when a function cannot be compiled, the rows of the relation
for the in-memory interpreter).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from fuzzpy.engines.rows import Node, Sym, SymVector
from fuzzpy.runtime.values import Record

#: The current row of a relation: Sym / SymVector leaves in records and tuples.
Shape = object


@dataclass(frozen=True, eq=False)
class Scan:
    """A bag parameter's rows inside an engine.

    ``table`` is what the engine's SQL reads (a view), with one column per
    entry of ``columns`` (engine name, kind) and the row id column ``row_id``
    (unique per row: what `subsample` hashes). ``shape`` is how the row type
    reads the columns: "record" (``fields`` name them), "single" or "vector".
    ``size``: the view's number of rows where the load already counted them
    (the audit's rows kept), else None.
    """

    table: str
    columns: tuple[tuple[str, str], ...]
    shape: str
    fields: tuple[str, ...]
    row_id: str
    size: int | None = None


@dataclass(frozen=True, eq=False)
class Relation:
    scan: Scan
    predicates: tuple[Node, ...]
    row: Shape

    def where(self, predicate: Node) -> Relation:
        if predicate.op == "lit" and predicate.param is True:
            return self
        return Relation(self.scan, self.predicates + (predicate,), self.row)

    def mapped(self, row: Shape) -> Relation:
        return Relation(self.scan, self.predicates, row)


@dataclass(frozen=True, eq=False)
class Aggregate:
    """One exact aggregate of a relation.

    * ``count``: the number of rows;
    * ``sum``: `sum[lo, hi]` of the row (a number), ``bounds`` = (lo, hi);
    * ``vsum``: `vsum[c]` of the row (a vector), ``bounds`` = (c,);
    * ``counts``: bucket sizes of `group[k]` by ``key``, ``bounds`` = (k,),
      and the rows whose key is outside 0..k-1 (for the owner's audit).
    """

    kind: str
    relation: Relation
    value: tuple[Node, ...] = ()
    bounds: tuple[Fraction, ...] = ()

    def key(self) -> tuple:
        rel = self.relation
        return (self.kind, id(rel.scan), tuple(p.id for p in rel.predicates),
                tuple(v.id for v in self.value), self.bounds)


def leaves(shape: Shape) -> list[Node]:
    """The nodes of a row, in a fixed order (records by field, tuples by position)."""
    if isinstance(shape, Sym):
        return [shape.node]
    if isinstance(shape, SymVector):
        return list(shape.entries)
    if isinstance(shape, Record):
        return [n for v in shape.fields.values() for n in leaves(v)]
    if isinstance(shape, tuple):
        return [n for v in shape for n in leaves(v)]
    raise TypeError(f"not a row shape: {type(shape).__name__}")
