"""Runtime values of the functional language.

Macro-level numbers are exact: Python `int`s and `Fraction`s
(`fuzzpy.runtime.exact`); inside per-row functions numbers are numpy values
(`fuzzpy.runtime.rowops`). Booleans are `bool`, strings `str`, unit `None`,
tensor tuples Python tuples, lists Python lists, vectors
`fuzzpy.runtime.vectors.Vector`s, databases `Bag`s. The classes below cover
the rest. A variable may be bound to a `Thunk` (an expression not evaluated
yet: `let` and arguments are evaluated only when used, see
docs/semantics.md).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from fuzzpy.runtime.exact import to_float
from fuzzpy.support.lazy import lazy
from fuzzpy.support.records import frozen

np = lazy("numpy")

Value = Any
_DBL_MAX_INT = int(sys.float_info.max)


class RuntimeFailure(Exception):
    """A program went wrong at run time (reported as FZ5xx by `run`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class NotVectorisable(Exception):
    """Raised while evaluating over columns: retry the function row by row."""


class Exhausted(Exception):
    """A per-row evaluation ran out of recursive calls (the data-independent
    limit): over columns, retry row by row; row by row, the row gets the
    default value of the recursive function's result type."""


@frozen
class Transient:
    """A thunk's value computed on behalf of one row, which the thunk must not
    keep: another row (or later macro-level work) would then find it done, and
    what a row computed would change what others can (docs/semantics.md,
    "Recursion")."""

    value: Value


class Thunk:
    """An expression bound but not evaluated yet (call by need)."""

    __slots__ = ("_compute", "_done", "_value")

    def __init__(self, compute: Callable[[], Value]) -> None:
        self._compute = compute
        self._done = False
        self._value: Value = None

    @property
    def evaluated(self) -> bool:
        return self._done

    def force(self) -> Value:
        if not self._done:
            value = self._compute()
            if isinstance(value, Transient):
                return value.value  # computed for one row: not kept for others
            self._value = value
            self._done = True
            self._compute = None  # type: ignore[assignment]  # free the environment
        return self._value


    def recompute(self) -> Value:
        """The value computed again and not kept (a speculation's look ahead:
        `fuzzpy.engines.trace`); only before the binding is forced."""
        assert not self._done
        return self._compute()


def force(value: Value) -> Value:
    return value.force() if isinstance(value, Thunk) else value


@frozen
class Record:
    """A record value; over a column, each field holds an array."""

    fields: Mapping[str, Value]

    def get(self, name: str) -> Value:
        try:
            return self.fields[name]
        except KeyError:
            raise RuntimeFailure("FZ510", f"the record has no field `{name}`") from None


@frozen
class WithPair:
    left: Value
    right: Value


@frozen
class Inl:
    value: Value


@frozen
class Inr:
    value: Value


@dataclass
class Function:
    """A callable value: a closure, a builtin or a partially applied one.

    ``arity`` arguments are collected (currying) before ``apply`` runs.
    ``name`` is for messages only. A ``lazy`` function (a lambda, a `def`)
    takes its arguments as they come, possibly unevaluated `Thunk`s; the
    others (builtins) get them evaluated.
    """

    name: str
    arity: int
    apply: Callable[..., Value]
    args: tuple[Value, ...] = field(default=())
    lazy: bool = False
    #: For a closure made inside a per-row function over columns: the same
    #: closure with its captured per-row values restricted to some rows
    #: (`fuzzpy.runtime.subsets.restrict`).
    rebuild: Callable[..., Function] | None = None

    def __call__(self, arg: Value) -> Value:
        args = (*self.args, arg if self.lazy else force(arg))
        if len(args) == self.arity:
            return self.apply(*args)
        return Function(self.name, self.arity, self.apply, args, self.lazy, self.rebuild)


@frozen
class Fuzzy:
    """A value of `fuzzy A`: a sampler, run when the program binds it."""

    draw: Callable[[], Value]

    def sample(self) -> Value:
        return self.draw()


def to_json(value: Value) -> object:
    """The released value as JSON data (language design, section 7)."""
    from fuzzpy.runtime.bag import Bag, LazyGroups

    if value is None:
        return None
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return printable_int(value)
    if isinstance(value, Fraction):
        return to_float(value)  # the nearest double: post-processing of the exact release
    if isinstance(value, float):
        return value if math.isfinite(value) else _non_finite(value)
    if isinstance(value, np.generic):
        return to_json(value.item())
    if getattr(value, "labels", None) is not None:  # a labelled vector: an object, in the labels' order
        return {label: to_json(v) for label, v in zip(value.labels, value.tolist(), strict=True)}
    if isinstance(value, np.ndarray):
        return [to_json(v) for v in value.tolist()]
    if isinstance(value, (tuple, list, LazyGroups)):
        return [to_json(v) for v in value]
    if isinstance(value, Record):
        return {k: to_json(v) for k, v in value.fields.items()}
    if isinstance(value, WithPair):
        return [to_json(value.left), to_json(value.right)]
    if isinstance(value, Inl):
        return {"inl": to_json(value.value)}
    if isinstance(value, Inr):
        return {"inr": to_json(value.value)}
    if isinstance(value, Bag):
        return {"bag_size": len(value)}
    # never a repr: a closure's shows what it captured (a24 F1); `run` refuses
    # to release a type holding a function (FZ526), so this is a bug
    raise TypeError(f"a {type(value).__name__} has no released form")


def printable_int(value: int) -> int | float:
    """An exact integer as printed: itself within the range of doubles,
    beyond it the saturated double (+/- DBL_MAX), as for every other number
    (docs/semantics.md, "Printing"); printing never fails, whatever the size."""
    return value if abs(value) <= _DBL_MAX_INT else to_float(value)


def _non_finite(value: float) -> str:
    """JSON has no infinities or NaN: they are the strings "inf", "-inf", "nan"
    (as section 7 spells an infinite sensitivity), so the document stays valid."""
    if math.isnan(value):
        return "nan"
    return "inf" if value > 0 else "-inf"


def render(value: Value) -> str:
    """The released value as a line of text, in the language's own notation."""
    from fuzzpy.runtime.bag import LazyGroups

    # numpy's types only where numpy was loaded (no value is one otherwise:
    # a scalar release never loads it)
    loaded = sys.modules.get("numpy")
    scalar, array = ((loaded.generic,), (loaded.ndarray,)) if loaded is not None else ((), ())
    if value is None:
        return "()"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, scalar):
        return render(value.item())
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return repr(printable_int(value))
    if isinstance(value, Fraction):
        return repr(to_float(value))
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, tuple):
        return "(" + ", ".join(render(v) for v in value) + ")"
    if isinstance(value, (list, LazyGroups)):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, array) and getattr(value, "labels", None) is not None:  # a labelled vector
        pairs = zip(value.labels, value.tolist(), strict=True)
        return "{" + ", ".join(f"{render(label)}: {render(v)}" for label, v in pairs) + "}"
    if isinstance(value, array):
        return "[" + ", ".join(render(v) for v in value.tolist()) + "]"
    if isinstance(value, Record):
        return "{ " + ", ".join(f"{k} = {render(v)}" for k, v in value.fields.items()) + " }"
    if isinstance(value, WithPair):
        return f"<{render(value.left)}, {render(value.right)}>"
    if isinstance(value, Inl):
        return f"inl {render(value.value)}"
    if isinstance(value, Inr):
        return f"inr {render(value.value)}"
    return str(value)
