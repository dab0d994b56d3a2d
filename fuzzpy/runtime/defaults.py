"""The default value of a type, given to a row whose per-row function runs
out of recursive calls (Haeberlen, Pierce & Narayan 2011: a per-row function
that does not finish in its budget returns a default instead of failing the
run). The default depends only on the (declared, public) type, so the per-row
function stays a total function of the row, and stable transformations stay
1-stable (McSherry 2009).

    num -> 0.0, int -> 0, bool -> false, string -> "", unit -> (),
    tuples, records, with-pairs -> their parts' defaults, A + B -> inl of A's,
    list -> [], vec -> the zero vector (length 0 unless the type gives one),
    bag -> the empty bag, A -> B -> the constant function of B's default,
    fuzzy A -> return A's default.
"""

from __future__ import annotations

from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.runtime.values import Function, Fuzzy, Inl, Record, Value, WithPair
from fuzzpy.support.lazy import lazy

np = lazy("numpy")  # imported by the interpreter: a scalar release loads no numpy (tests/test_import_sets.py)


def _base(name: str) -> Value:
    """The default of a base type, or ``...`` for a name that is not one."""
    return {"num": np.float64(0.0), "int": np.int64(0), "bool": np.bool_(False), "string": "", "unit": None}.get(name, ...)


def row_default(ty: S.TypeExpr | None, program: S.Program) -> Value:
    aliases = {d.name: d.type for d in program.decls if isinstance(d, S.TypeDecl)}
    return _default(ty, aliases, 0)


def _default(ty: S.TypeExpr | None, aliases: dict[str, S.TypeExpr], depth: int) -> Value:  # noqa: PLR0911
    if ty is None or depth > 100:
        return np.float64(0.0)
    if isinstance(ty, S.TyName):
        base = _base(ty.name)
        if base is not ...:
            return base
        return _default(aliases.get(ty.name), aliases, depth + 1)
    if isinstance(ty, S.TyTuple):
        return tuple(_default(t, aliases, depth + 1) for t in ty.items)
    if isinstance(ty, S.TyRecord):
        return Record({name: _default(t, aliases, depth + 1) for name, t in ty.fields})
    if isinstance(ty, S.TyWith):
        return WithPair(_default(ty.left, aliases, depth + 1), _default(ty.right, aliases, depth + 1))
    if isinstance(ty, S.TySum):
        return Inl(_default(ty.left, aliases, depth + 1))
    if isinstance(ty, S.TyList):
        return []
    if isinstance(ty, S.TyVec):
        from fuzzpy.runtime.vectors import row_vector

        length = getattr(ty, "length", None)
        return row_vector(np.zeros(length if isinstance(length, int) else 0))
    if isinstance(ty, S.TyBag):
        from fuzzpy.runtime.bag import Bag

        return Bag(np.zeros(0))
    if isinstance(ty, S.TyFun):
        result = _default(ty.result, aliases, depth + 1)
        return Function("default", 1, lambda _arg: result, lazy=True)
    if isinstance(ty, S.TyFuzzy):
        inner = _default(ty.inner, aliases, depth + 1)
        return Fuzzy(lambda: inner)
    return np.float64(0.0)


def type_default(ty: T.Type) -> Value:
    """The default of a checked type (`row_default`'s values): the stand-in
    for a macro-level binding a per-row function uses at sensitivity 0
    (`CheckedProgram.zero_captures`). The checker's 0 means the function's
    result does not depend on the binding's value (0 * inf = 0), so any
    value of its type gives the same result, and this one depends on no data."""
    if isinstance(ty, T.TNum):
        return _base("num")
    if isinstance(ty, T.TInt):
        return _base("int")
    if isinstance(ty, T.TBool):
        return _base("bool")
    if isinstance(ty, T.TString):
        return _base("string")
    if isinstance(ty, T.TTuple):
        return tuple(type_default(t) for t in ty.items)
    if isinstance(ty, T.TRecord):
        return Record({name: type_default(t) for name, t in ty.fields})
    if isinstance(ty, T.TWith):
        return WithPair(type_default(ty.left), type_default(ty.right))
    if isinstance(ty, T.TSum):
        return Inl(type_default(ty.left))
    if isinstance(ty, T.TList):
        return []
    if isinstance(ty, T.TVec):
        from fuzzpy.runtime.vectors import row_vector

        return row_vector(np.zeros(ty.length if isinstance(ty.length, int) else 0))
    if isinstance(ty, T.TBag):
        from fuzzpy.runtime.bag import Bag

        return Bag(np.zeros(0))
    if isinstance(ty, T.TFun):
        result = type_default(ty.result)
        return Function("default", 1, lambda _arg: result, lazy=True)
    if isinstance(ty, T.TFuzzy):
        inner = type_default(ty.inner)
        return Fuzzy(lambda: inner)
    return None  # unit
