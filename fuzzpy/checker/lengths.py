"""Vector lengths as type indices: static integers and length variables.

`vec[p] num` carries its length (`types.TVec.length`), which the user does
not write. Lengths come from list literals, `tabulate` and `counts` (static),
from the parameters of a definition (a fresh variable for each vector in a
parameter's type, generalised in the definition's signature and instantiated
afresh at every call, as Hindley-Milner generalises type variables), and from
mechanisms' vector results (rigid: known only at run time). Two lengths that
must be equal (`+`, `-`, `dot`, both branches of an `if`, an argument and its
parameter) are unified: equal integers, or a flexible variable bound to the
other side; anything else is a type error.

Because one vector type has one length, the metric of `vec[p] num` only ever
compares vectors of equal length (across lengths the distance is infinite,
as for lists), `len` of a vector whose length is static or a flexible
variable is public, and `vsum` of an empty bag knows its result's length.

Bindings are recorded on a trail, so a failed attempt (a subtyping test that
fails half way, a retried rule) is undone with `undo(mark)`.
"""

from __future__ import annotations

from fuzzpy.language import types as T


class Lengths:
    """A union-find over length variables, with a trail for undo."""

    def __init__(self) -> None:
        self._bound: dict[T.LenVar, T.Length] = {}
        self._trail: list[T.LenVar] = []
        self._next = 0

    # ------------------------------------------------------------ variables

    def fresh(self, rigid: bool = False) -> T.LenVar:
        self._next += 1
        return T.LenVar(self._next, rigid)

    def vec(self, norm: str) -> T.TVec:
        """A numeric vector type of a fresh (flexible) length."""
        return T.TVec(norm, T.NUM, self.fresh())

    def resolve(self, n: T.Length | None) -> T.Length | None:
        while isinstance(n, T.LenVar) and n in self._bound:
            n = self._bound[n]
        return n

    def static(self, n: T.Length | None) -> int | None:
        """The length as a number, when it is known."""
        found = self.resolve(n)
        return found if isinstance(found, int) else None

    def unify(self, a: T.Length | None, b: T.Length | None) -> bool:
        a, b = self.resolve(a), self.resolve(b)
        if a is None or b is None:
            return False  # an unelaborated length: never silently equal
        if a == b:
            return True
        for var, other in ((a, b), (b, a)):
            if isinstance(var, T.LenVar) and not var.rigid:
                self._bound[var] = other
                self._trail.append(var)
                return True
        return False

    # ------------------------------------------------------------ undo

    def mark(self) -> int:
        return len(self._trail)

    def undo(self, mark: int) -> None:
        while len(self._trail) > mark:
            del self._bound[self._trail.pop()]

    # ------------------------------------------------------------ whole types

    def freshen(self, t: T.Type, rigid: bool = False) -> T.Type:
        """Give every length an elaborated type left open (None) a fresh variable."""
        return T.map_lengths(t, lambda n: self.fresh(rigid) if n is None else n)

    def zonk(self, t: T.Type) -> T.Type:
        """``t`` with every length resolved as far as it is known."""
        return T.map_lengths(t, self.resolve)

    def instantiate(self, types: list[T.Type], mapping: dict[T.LenVar, T.LenVar] | None = None) -> list[T.Type]:
        """Fresh copies of the variables of a generalised signature, one
        mapping for all its types (shared variables stay shared); the
        mapping (signature variable -> its copy) is filled in when given."""
        mapping = {} if mapping is None else mapping

        def copy(n: T.Length | None) -> T.Length | None:
            n = self.resolve(n)
            if isinstance(n, T.LenVar):
                if n not in mapping:
                    mapping[n] = self.fresh(n.rigid)
                return mapping[n]
            return n

        return [T.map_lengths(t, copy) for t in types]

    # ------------------------------------------------------------ words

    def describe(self, n: T.Length | None) -> str:
        found = self.resolve(n)
        if isinstance(found, int):
            return f"length {found}"
        if isinstance(found, T.LenVar) and found.rigid:
            return "a length known only at run time"
        return "a length not fixed yet"

    def show(self, t: T.Type) -> str:
        """``t`` quoted, its vectors' lengths spelled out (for diagnostics)."""
        lengths = [self.describe(n) for n in T.vector_lengths(t)]
        if not lengths:
            return f"`{t}`"
        if isinstance(t, T.TVec):
            return f"`{t}` of {lengths[0]}"
        return f"`{t}` with vectors of {', '.join(lengths)}"


__all__ = ["Lengths"]
