"""Semantic types and their metrics (language design, section 2).

These are the checker's types, after `type` aliases are resolved and static
expressions evaluated; the parser's `TypeExpr`s are only their surface form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field

from fuzzpy.language.sensitivity import INF, ONE, Sens
from fuzzpy.support.records import frozen


@frozen
class TNum:
    """Reals, metric |x - y|."""

    def __str__(self) -> str:
        return "num"


@frozen
class TInt:
    """Integers, metric |x - y|."""

    def __str__(self) -> str:
        return "int"


@frozen
class TBool:
    """Discrete: distance 0 if equal, infinity otherwise."""

    def __str__(self) -> str:
        return "bool"


@frozen
class TString:
    def __str__(self) -> str:
        return "string"


@frozen
class TUnit:
    def __str__(self) -> str:
        return "unit"


@frozen
class TTuple:
    """Tensor product: distance is the sum of the components'."""

    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(t) for t in self.items) + ")"


@frozen
class TWith:
    """With-pair: distance is the max of the components'."""

    left: Type
    right: Type

    def __str__(self) -> str:
        return f"<{self.left} & {self.right}>"


@frozen
class TSum:
    left: Type
    right: Type

    def __str__(self) -> str:
        return f"{_atom(self.left)} + {_atom(self.right)}"


@frozen
class TRecord:
    """Record: metric of the tensor of its fields. ``alias`` is the `type`
    name it was declared under, kept for printing only."""

    fields: tuple[tuple[str, Type], ...]
    alias: str | None = None

    def field_type(self, name: str) -> Type | None:
        return next((t for n, t in self.fields if n == name), None)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TRecord) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(self.fields)

    def __str__(self) -> str:
        if self.alias:
            return self.alias
        return "{ " + ", ".join(f"{n} : {t}" for n, t in self.fields) + " }"


@frozen
class TList:
    """Lists: sum of element distances at equal length, infinity otherwise."""

    elem: Type
    # Written `mat[p] num`: a matrix is the list of its rows, `list (vec[p]
    # num)`, and the list metric (the sum of the rows' Lp distances) is Duet's
    # matrix metric for M_Lp[m, n] (Near et al., OOPSLA 2019, section 4). The
    # flag only chooses the spelling: it takes no part in equality.
    matrix: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        if self.matrix and isinstance(self.elem, TVec):
            return f"mat[{self.elem.norm}] {_atom(self.elem.elem)}"
        return f"list {_atom(self.elem)}"


@frozen
class LenVar:
    """A vector length not known as a number while checking.

    Flexible variables stand for the length of a public parameter's vectors
    (or of a database's vector rows): fixed before the data is read, the same
    for both neighbours; they unify within a definition and are generalised
    in its signature. A *rigid* variable is a length known only at run time
    (a mechanism's vector result): equal to itself only."""

    id: int
    rigid: bool = False

    def __str__(self) -> str:
        return f"n{self.id}"


Length = int | LenVar


@frozen
class TVec:
    """Numeric vectors under the L1, L2 or L-infinity norm, of one length.

    ``length`` is an index the user does not write (`vec[2] num`): a static
    integer or a `LenVar` (None only in an unelaborated type alias, before a
    use gives it a fresh variable). Values of one vector type have one
    length, so `len` is public; vectors of different lengths are infinitely
    far apart, as lists are."""

    norm: str  # "1" | "2" | "inf"
    elem: Type
    length: Length | None = None

    def __str__(self) -> str:
        return f"vec[{self.norm}] {_atom(self.elem)}"


@frozen
class TBag:
    """Multisets (databases): size of the symmetric difference."""

    elem: Type

    def __str__(self) -> str:
        return f"bag {_atom(self.elem)}"


@frozen
class TFun:
    """An s-sensitive function type A -[s]-> B."""

    param: Type
    sens: Sens
    result: Type

    def __str__(self) -> str:
        if self.sens == ONE:
            arrow = "-o"
        elif self.sens == INF:
            arrow = "->"
        else:
            arrow = f"-[{self.sens}]->"
        left = str(self.param) if not isinstance(self.param, TFun) else f"({self.param})"
        return f"{left} {arrow} {self.result}"


@frozen
class TFuzzy:
    """Probability distributions over A, under max divergence."""

    inner: Type

    def __str__(self) -> str:
        return f"fuzzy {_atom(self.inner)}"


Type = TNum | TInt | TBool | TString | TUnit | TTuple | TWith | TSum | TRecord | TList | TVec | TBag | TFun | TFuzzy

NUM = TNum()
INT = TInt()
BOOL = TBool()
STRING = TString()
UNIT = TUnit()


def _atom(t: Type) -> str:
    text = str(t)
    if isinstance(t, (TFun, TSum, TList, TVec, TBag, TFuzzy)):
        return f"({text})"
    return text


def map_lengths(t: Type, f: Callable[[Length | None], Length | None]) -> Type:
    """``t`` with every vector length replaced by ``f(length)``."""
    if isinstance(t, TVec):
        return TVec(t.norm, t.elem, f(t.length))
    if isinstance(t, TTuple):
        return TTuple(tuple(map_lengths(item, f) for item in t.items))
    if isinstance(t, TWith):
        return TWith(map_lengths(t.left, f), map_lengths(t.right, f))
    if isinstance(t, TSum):
        return TSum(map_lengths(t.left, f), map_lengths(t.right, f))
    if isinstance(t, TRecord):
        return TRecord(tuple((n, map_lengths(ty, f)) for n, ty in t.fields), alias=t.alias)
    if isinstance(t, TList):
        return TList(map_lengths(t.elem, f), t.matrix)
    if isinstance(t, TBag):
        return TBag(map_lengths(t.elem, f))
    if isinstance(t, TFun):
        return TFun(map_lengths(t.param, f), t.sens, map_lengths(t.result, f))
    if isinstance(t, TFuzzy):
        return TFuzzy(map_lengths(t.inner, f))
    return t


def parts(t: Type) -> tuple[Type, ...]:
    """The types ``t`` is immediately made of."""
    if isinstance(t, TTuple):
        return t.items
    if isinstance(t, (TWith, TSum)):
        return (t.left, t.right)
    if isinstance(t, TRecord):
        return tuple(ty for _, ty in t.fields)
    if isinstance(t, (TList, TVec, TBag)):
        return (t.elem,)
    if isinstance(t, TFun):
        return (t.param, t.result)
    if isinstance(t, TFuzzy):
        return (t.inner,)
    return ()


def holds_function(t: Type) -> bool:
    """Whether a value of type ``t`` holds a function anywhere inside."""
    return isinstance(t, TFun) or any(holds_function(p) for p in parts(t))


def vector_lengths(t: Type) -> list[Length | None]:
    """The lengths of the vector types inside ``t``, in order."""
    found: list[Length | None] = []
    map_lengths(t, lambda n: found.append(n) or n)  # type: ignore[func-returns-value]
    return found


def is_discrete(t: Type) -> bool:
    """Types whose metric is 0 or infinity (any change is infinitely far)."""
    return isinstance(t, (TBool, TString, TUnit))


@frozen
class Unread:
    """The type of a declared field a definition never reads
    (`fuzzpy.release.columns`): its column must exist; no cell of it is read.
    Defined here, not beside the loader that skips it, so that `check`
    (which names the columns read) imports no data library (issue 24)."""

    def __str__(self) -> str:
        return "unread"


UNREAD: Type = Unread()  # type: ignore[assignment]
