"""The vector lengths of a run's arguments, checked against the definition's
signature before anything is charged (docs/semantics.md, "Vectors").

A parameter's type carries the length of each of its vectors
(`types.TVec.length`): a number, or a length variable that several
parameters may share (`def f (u : vec[2] num) (v : vec[2] num)` whose body
adds u and v gives both one variable). Lengths are public: a `--arg`
vector's length is in its text, a `bag (vec[p] num)`'s width is its data
file's number of columns (the header), so they are checked here, before
any row is read, and a mismatch is refused with a diagnostic at the
parameter (FZ525, exit 2). The values found for the variables form the
run's *frame*: the lengths the definition's body needs
(`Interpreter.length`).
"""

from __future__ import annotations

from collections.abc import Mapping

from fuzzpy.checker.result import CheckedDef
from fuzzpy.language import types as T
from fuzzpy.runtime.values import Record, Value
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

np = lazy("numpy")

Frame = dict[T.LenVar, int]


@frozen
class LengthMismatch(Exception):
    """An argument's vector whose length the signature does not allow."""

    param: str
    message: str


def bag_width(bag: Value) -> int | None:
    """The width of a bag of vectors (its rows' length), None for other bags."""
    from fuzzpy.runtime.bag import Bag

    if isinstance(bag, Bag):
        column = bag.source
        if isinstance(column, np.ndarray) and column.ndim == 2:
            return int(column.shape[1])
    return None


class FrameBuilder:
    """Collects the lengths of the arguments, parameter by parameter."""

    def __init__(self, definition: CheckedDef) -> None:
        self.types = {p.name: p.type for p in definition.params}
        self.frame: Frame = {}
        self._first: dict[T.LenVar, str] = {}  # which parameter fixed each variable

    def value(self, param: str, value: Value) -> None:
        """A public argument (numbers, lists, vectors, tuples, records) or a bag."""
        self._walk(param, self.types[param], value, param)

    def width(self, param: str, width: int) -> None:
        """The width of a `bag (vec[p] num)` parameter's rows (its file's columns)."""
        ty = self.types[param]
        if isinstance(ty, T.TBag) and isinstance(ty.elem, T.TVec):
            self._length(param, ty.elem.length, width, f"the rows of `{param}`")

    def _walk(self, param: str, ty: T.Type, value: Value, where: str) -> None:
        if isinstance(ty, T.TVec):
            if _is_sequence(value):
                self._length(param, ty.length, len(value), f"`{where}`")
        elif isinstance(ty, T.TList) and _is_sequence(value):
            for i, item in enumerate(value):
                self._walk(param, ty.elem, item, f"{where}[{i}]")
        elif isinstance(ty, T.TTuple) and isinstance(value, tuple):
            for i, (item_type, item) in enumerate(zip(ty.items, value, strict=False)):
                self._walk(param, item_type, item, f"{where}.{i}")
        elif isinstance(ty, T.TRecord) and isinstance(value, Record):
            for name, field_type in ty.fields:
                if name in value.fields:
                    self._walk(param, field_type, value.fields[name], f"{where}.{name}")
        elif isinstance(ty, T.TBag) and isinstance(ty.elem, T.TVec):
            width = bag_width(value)
            if width is not None:
                self._length(param, ty.elem.length, width, f"the rows of `{where}`")

    def _length(self, param: str, expected: T.Length | None, found: int, what: str) -> None:
        if isinstance(expected, int):
            if found != expected:
                raise LengthMismatch(param, f"{what} has {_entries(found)}, but its type requires {expected}")
            return
        if not isinstance(expected, T.LenVar):
            return
        known = self.frame.get(expected)
        if known is None:
            self.frame[expected] = found
            self._first[expected] = what
        elif known != found:
            raise LengthMismatch(
                param,
                f"{what} has {_entries(found)}, but {self._first[expected]} has {known}: the definition's "
                "type requires them to have the same length",
            )


def argument_frame(definition: CheckedDef, arguments: Mapping[str, Value]) -> Frame:
    """The frame of a definition applied to these arguments (bags included)."""
    builder = FrameBuilder(definition)
    for p in definition.params:
        if p.name in arguments:
            builder.value(p.name, arguments[p.name])
    return builder.frame


def _is_sequence(value: Value) -> bool:
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"
