"""Which columns of a data file a definition reads (issue 31).

A run reads a bag of records against the fields the program can observe,
not every field its row type declares: a row rule drops a row for a cell
that does not fit a column *read*, so a declared column the program never
looks at (a `sex` with missing values beside a counted `species`) drops no
row. A record is observed only through `e.f` or as a whole (`==` on two
records, a record in the released value); the fields read are the names of
every `e.f` in the program (any record's: a superset, never fewer), and
every field when a record may be observed whole (or ordered whole: by
`join[k]`'s truncation). Reading fewer columns is a
row-wise projection before the row rules: still 1-stable (one row added or
removed changes at most one row read; McSherry, PINQ, SIGMOD 2009), so the
checker's costs hold unchanged. The dataset's identity (its file's bytes,
its content key) stays that of its whole rows (docs/semantics.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

from fuzzpy.language import syntax as S
from fuzzpy.language.types import UNREAD, TBag, TRecord, Type

_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_BASE_TYPES = frozenset({"num", "real", "int", "nat", "bool", "string", "unit"})  # checker.elaborate._BASE
_SCALAR_SIDES = (S.NumLit, S.BoolLit, S.StringLit, S.InfLit, S.UnitLit, S.Field)


def fields_read(program: S.Program, definition: str, result: Type) -> frozenset[str] | None:
    """The field names projected by the definition and every declaration it
    names (transitively), or None if a record may be observed whole (every
    field is then read)."""
    if _holds_record(result):
        return None
    decls = _reached(program, definition)
    reached = list(_nodes(decls))
    if any(isinstance(node, S.Prim) and node.name == "join" for node in reached):
        # `join[k]` keeps each key's k first rows in the order of their whole
        # values (fuzzpy.runtime.joins): every field decides which rows are
        # kept, so every field is read, and every engine orders alike
        return None
    # a field of a record the program builds may hold a whole row: comparing it is not comparing a cell
    built = {name for node in reached if isinstance(node, S.RecordLit) for name, _ in node.fields}
    aliases = {d.name: d.type for d in program.decls if isinstance(d, S.TypeDecl)}
    names = {node.name for node in reached if isinstance(node, S.Field)}
    for decl in decls:
        if isinstance(decl, (S.MechanismDecl, S.DefDecl)) and not any(
                _may_hold_record(p.type, aliases) for p in decl.params):
            # a mechanism or function of scalars, lists and bags of numbers (issue 31, F6; std.stats'
            # `median`, review s27c): every parameter is typed, so what it compares is no row
            continue
        for node in _nodes(decl):
            if (isinstance(node, S.Binary) and node.op in _COMPARISONS
                    and _opaque(node.left, built) and _opaque(node.right, built)):
                return None  # two values of unknown type compared: records, perhaps
    return frozenset(names)


def _may_hold_record(t: object, aliases: Mapping[str, object], seen: frozenset[str] = frozenset()) -> bool:
    """Whether a written type may hold a record (a named type: as declared;
    a name not declared here, conservatively, may)."""
    if isinstance(t, S.TyRecord):
        return True
    if isinstance(t, S.TyName):
        if t.name in seen:
            return False
        if t.name in aliases:
            return _may_hold_record(aliases[t.name], aliases, seen | {t.name})
        return t.name not in _BASE_TYPES
    if dataclasses.is_dataclass(t) and not isinstance(t, type):
        return any(_may_hold_record(getattr(t, f.name), aliases, seen) for f in dataclasses.fields(t)
                   if f.name not in ("span", "sens", "norm", "arrow"))
    if isinstance(t, (tuple, list)):
        return any(_may_hold_record(item, aliases, seen) for item in t)
    return False


def read_type(bag_type: Type, names: frozenset[str] | None) -> Type:
    """The bag type a run reads the data as: a bag of records keeps the
    fields read (in the declared order); any other type is read whole."""
    if names is None or not isinstance(bag_type, TBag) or not isinstance(bag_type.elem, TRecord):
        return bag_type
    row = bag_type.elem
    if all(n in names for n, _ in row.fields):
        return bag_type
    return TBag(TRecord(tuple((n, t if n in names else UNREAD) for n, t in row.fields), row.alias))


def columns_read(bag_type: Type, names: frozenset[str] | None) -> tuple[str, ...] | None:
    """The declared columns a run reads for a bag of records (None for other bags)."""
    read = read_type(bag_type, names)
    if not isinstance(read, TBag) or not isinstance(read.elem, TRecord):
        return None
    return tuple(n for n, t in read.elem.fields if t is not UNREAD)


def _reached(program: S.Program, definition: str) -> list[object]:
    """The declarations `definition` may use: itself, and every declaration
    a name in one of them refers to (a local variable of the same name only
    adds more)."""
    named = {d.name: d for d in program.decls if isinstance(d, (S.DefDecl, S.MechanismDecl, S.LetDecl))}
    if definition not in named:
        return [program]
    seen, todo = {definition}, [named[definition]]
    reached: list[object] = []
    while todo:
        decl = todo.pop()
        reached.append(decl)
        for node in _nodes(decl):
            name = node.name if isinstance(node, S.Var) else node.func if isinstance(node, S.Call) else None
            if name is not None and name in named and name not in seen:
                seen.add(name)
                todo.append(named[name])
    return reached


def _opaque(side: object, built: set[str]) -> bool:
    """Whether a compared value may be a record: anything but a literal, a
    number computed by arithmetic, or a cell (a row's field: not one of a
    record the program builds)."""
    if isinstance(side, S.Field):
        return side.name in built
    return not isinstance(side, _SCALAR_SIDES) and not (isinstance(side, S.Binary) and side.op in ("+", "-", "*", "/"))


def _holds_record(t: object) -> bool:
    if isinstance(t, TRecord):
        return True
    if dataclasses.is_dataclass(t) and not isinstance(t, type):
        return any(_holds_record(getattr(t, f.name)) for f in dataclasses.fields(t))
    if isinstance(t, (tuple, list)):
        return any(_holds_record(item) for item in t)
    return False


def _nodes(root: object) -> Iterator[object]:
    """Every syntax node under `root` (iteratively: programs may nest deeply)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (tuple, list)):
            stack.extend(node)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            yield node
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node) if f.name != "span")
