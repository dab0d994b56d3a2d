"""`frozen`: fuzzpy's frozen dataclasses, made faster to define.

``@frozen`` is ``@dataclass(frozen=True)``: the class is a dataclass (its
fields, `replace`, `asdict`, pattern matching and `FrozenInstanceError`
are the standard library's), and its ``==``, ``hash`` and ``repr`` behave
as the dataclass's would (the same fields, honouring ``compare``, ``hash``
and ``repr``; the same types; tuples compared as tuples).

Why not the decorator itself: on Python 3.11 it compiles six new functions
for every class, and a `fuzzpy run` defines ~150 classes before it reads a
row -- about 40 ms of every run (issue 11's fixed cost). Here the standard
decorator compiles only ``__init__`` and the frozen ``__setattr__`` /
``__delattr__``; ``__eq__``, ``__hash__`` and ``__repr__`` are three shared
functions reading each class's field getters, made once per class from
`dataclasses.fields` without compiling anything.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: the marker only tells type checkers; nothing to do at run time
    def dataclass_transform(**_: object) -> Callable[[T], T]:
        return lambda function: function

T = TypeVar("T", bound=type)

_Getter = Callable[[Any], tuple]


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: T) -> T:
    """``@dataclass(frozen=True)``, defined without compiling ``__eq__``,
    ``__hash__`` and ``__repr__`` (see the module's docstring)."""
    own = dict(cls.__dict__)  # what the class body defines, before the decorator adds anything
    cls = dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)
    fields = dataclasses.fields(cls)
    cls.__record_compared__ = _getter([f.name for f in fields if f.compare])
    # dataclasses: a field's `hash` defaults to its `compare`
    cls.__record_hashed__ = _getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
    cls.__record_shown__ = tuple(f.name for f in fields if f.repr)
    if "__repr__" not in own:
        cls.__repr__ = _record_repr
    if "__eq__" not in own:
        cls.__eq__ = _record_eq
        if not _has_explicit_hash(own):
            cls.__hash__ = _record_hash
    elif not _has_explicit_hash(own):
        # the body's own __eq__ without a __hash__: the dataclass (frozen, eq) still adds one
        cls.__hash__ = _record_hash
    return cls


def _has_explicit_hash(own: dict[str, object]) -> bool:
    """As dataclasses decides it: a body defining ``__eq__`` alone gets
    ``__hash__ = None`` from Python, which does not count as the class's own."""
    if "__hash__" not in own:
        return False
    return not (own["__hash__"] is None and "__eq__" in own)


def _getter(names: list[str]) -> _Getter:
    """The fields' values as a tuple, as the dataclass's generated methods
    build it (a one-field tuple too: tuples compare items by identity first)."""
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda self: (one(self),)
    return operator.attrgetter(*names)


def _record_eq(self: Any, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    values = self.__class__.__record_compared__
    return values(self) == values(other)


def _record_hash(self: Any) -> int:
    return hash(self.__class__.__record_hashed__(self))


@reprlib.recursive_repr()
def _record_repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__class__.__record_shown__)
    return f"{self.__class__.__qualname__}({shown})"
