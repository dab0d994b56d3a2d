"""Public arguments given as Python values (the Python API's `args=`).

The command line gives every public argument as text
(`fuzzpy.release.run.parse_argument`); the API may give numbers, booleans,
strings and lists as they are. Both end in the same runtime values, and a
float is read as its shortest decimal (0.1 is 1/10, as `--arg t=0.1`), so
that the API and the CLI release the same thing for the same inputs.
"""

from __future__ import annotations

import numbers
from decimal import Decimal
from fractions import Fraction
from typing import Any

from fuzzpy.language.types import TBool, TInt, TList, TNum, TString, TVec, Type

Value = Any


def python_argument(name: str, kind: Type, given: Value) -> Value:
    """The runtime value of ``given`` for a parameter of type ``kind``;
    refused (FZ509, exit 2) if it is not a value of that type."""
    value = _convert(kind, given)
    if value is _NOT_A_VALUE:
        from fuzzpy.release.run import EXIT_USAGE, refuse

        raise refuse(EXIT_USAGE, "FZ509", f"`{given!r}` is not a value of type `{kind}` for parameter `{name}`")
    return value


_NOT_A_VALUE = object()


def _convert(kind: Type, given: Value) -> Value:
    if isinstance(kind, TBool):
        return bool(given) if isinstance(given, bool) or _is_numpy_bool(given) else _NOT_A_VALUE
    if isinstance(given, bool) or _is_numpy_bool(given):
        return _NOT_A_VALUE  # True is not the number 1 here: the types differ
    if isinstance(kind, TInt):
        return int(given) if isinstance(given, numbers.Integral) else _NOT_A_VALUE
    if isinstance(kind, TNum):
        return _exact(given)
    if isinstance(kind, TString):
        return given if isinstance(given, str) else _NOT_A_VALUE
    if isinstance(kind, (TList, TVec)) and (isinstance(given, (list, tuple)) or _is_array(given)):
        items = [_convert(kind.elem, item) for item in list(given)]
        return _NOT_A_VALUE if any(item is _NOT_A_VALUE for item in items) else items
    return _NOT_A_VALUE


def _exact(given: Value) -> Value:
    """A number exactly as written: a float by its shortest decimal."""
    if isinstance(given, numbers.Integral):
        return int(given)
    if isinstance(given, Fraction):
        return given
    if isinstance(given, Decimal) and given.is_finite():
        return Fraction(given)
    if isinstance(given, numbers.Real):
        number = float(given)
        if number != number or number in (float("inf"), float("-inf")):
            return _NOT_A_VALUE
        return Fraction(repr(number))
    return _NOT_A_VALUE


def _is_numpy_bool(given: Value) -> bool:
    return type(given).__name__ == "bool_" and type(given).__module__ == "numpy"


def _is_array(given: Value) -> bool:
    return type(given).__name__ == "ndarray" and type(given).__module__ == "numpy"
