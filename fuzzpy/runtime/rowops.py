"""Per-row numbers: numpy doubles and int64, made total (docs/semantics.md).

Inside `map`, `filter`, `split` and `group` bodies a number is a numpy value:
a column (one entry per row) or, when a body runs row by row, a numpy
scalar. Their results reach a release only through aggregates that clamp
them, so they need only be total and deterministic per row (a function of
the row and public captures; Haeberlen, Pierce & Narayan, USENIX Security
2011): no operation here raises, and none yields NaN or an infinity.

* doubles: an overflowing result saturates to +/- DBL_MAX, x / 0 = 0,
  log 0 = 0, log x = log |x|, sqrt x = 0 for x < 0 (as at macro level);
* int64: +, -, *, negation and abs saturate at the int64 range instead of
  wrapping around;
* a macro-level value captured by a row function is read as the nearest
  double (a `num`) or as an int64, saturated (an `int`).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

from fuzzpy.runtime.exact import DBL_MAX, to_float
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

I64_MAX = 2**63 - 1  # np.iinfo(np.int64)'s bounds, without importing numpy
I64_MIN = -(2**63)
#: Products whose double approximation reaches this may overflow int64.
_RISKY_PRODUCT = float(2**62)

RowValue = Any  # np.ndarray | np.generic (numpy is imported on first use)


@contextmanager
def quiet_floats() -> Iterator[None]:
    """`np.errstate(all="ignore")` over the block: per-row arithmetic is total
    (saturating, 0 for 0/0), so numpy's floating-point warnings mean nothing.
    With numpy not imported yet (a trace of symbolic rows may need none), its
    warnings are silenced instead, in case the block imports it: errstate
    changes no value, only whether numpy warns."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        with numpy.errstate(all="ignore"):
            yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def is_row(value: object) -> bool:
    numpy = sys.modules.get("numpy")  # no value is a numpy one before numpy is imported
    return numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic))


def as_row(value: object) -> RowValue:
    """An operand of a row operation as a numpy value."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(min(max(value, I64_MIN), I64_MAX))
    if isinstance(value, Fraction):
        return np.float64(to_float(value))
    if isinstance(value, float):
        return np.float64(value)
    return value  # type: ignore[return-value]  # strings, records: compared as they are


def _is_int(x: RowValue) -> bool:
    return np.asarray(x).dtype.kind in "iu"


def _scalar_back(result: np.ndarray) -> RowValue:
    """0-d results of np.where & co. back to numpy scalars."""
    return result[()] if isinstance(result, np.ndarray) and result.ndim == 0 else result


def finite(x: RowValue) -> RowValue:
    """Doubles with NaN read as 0 and infinities saturated; ints unchanged."""
    if np.asarray(x).dtype.kind != "f":
        return x
    if isinstance(x, np.ndarray):
        return np.nan_to_num(x, copy=False, nan=0.0, posinf=DBL_MAX, neginf=-DBL_MAX)
    return np.float64(np.nan_to_num(x, nan=0.0, posinf=DBL_MAX, neginf=-DBL_MAX))


def arith(op: str, left: object, right: object) -> RowValue:
    """`+ - * /` on row numbers (either side may be a captured exact value)."""
    a, b = as_row(left), as_row(right)
    with np.errstate(all="ignore"):
        if op == "/":
            return divide(a, b)
        if _is_int(a) and _is_int(b):
            return _scalar_back(_INT_OPS[op](a, b))
        return finite(_FLOAT_OPS[op](a, b))


def divide(a: RowValue, b: RowValue) -> RowValue:
    """True division with x / 0 = 0, saturating."""
    shape = np.broadcast(a, b).shape
    out = np.zeros(shape, dtype=np.float64)
    np.divide(a, b, out=out, where=np.asarray(b) != 0, casting="unsafe")
    return _scalar_back(finite(out))


def _add(a: RowValue, b: RowValue) -> RowValue:
    r = np.add(a, b)
    overflow = ((a ^ r) & (b ^ r)) < 0
    return np.where(overflow, np.where(np.asarray(a) < 0, I64_MIN, I64_MAX), r)


def _sub(a: RowValue, b: RowValue) -> RowValue:
    r = np.subtract(a, b)
    overflow = ((a ^ b) & (a ^ r)) < 0
    return np.where(overflow, np.where(np.asarray(a) < 0, I64_MIN, I64_MAX), r)


def _mul(a: RowValue, b: RowValue) -> RowValue:
    r = np.multiply(a, b)
    approx = np.multiply(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    risky = np.abs(approx) >= _RISKY_PRODUCT
    if not np.any(risky):
        return r
    r = np.array(np.broadcast_to(r, risky.shape))
    aa, bb = np.broadcast_to(a, risky.shape), np.broadcast_to(b, risky.shape)
    for index in zip(*np.nonzero(risky), strict=True) if risky.ndim else [()]:
        exact = int(aa[index]) * int(bb[index])
        r[index] = min(max(exact, I64_MIN), I64_MAX)
    return r


_INT_OPS: dict[str, Callable[[RowValue, RowValue], RowValue]] = {"+": _add, "-": _sub, "*": _mul}
_FLOAT_OPS: dict[str, Callable[[RowValue, RowValue], RowValue]] = {
    "+": lambda a, b: np.add(a, b),
    "-": lambda a, b: np.subtract(a, b),
    "*": lambda a, b: np.multiply(a, b),
}


def negate(x: RowValue) -> RowValue:
    if _is_int(x):
        return _scalar_back(np.where(np.asarray(x) == I64_MIN, I64_MAX, np.negative(x)))
    return np.negative(x)


def absolute(x: RowValue) -> RowValue:
    if _is_int(x):
        return _scalar_back(np.where(np.asarray(x) == I64_MIN, I64_MAX, np.abs(x)))
    return np.abs(x)


# ---------------------------------------------------------------- math


def _as_double(x: object) -> np.ndarray:
    return np.asarray(as_row(x), dtype=np.float64)


def exp(x: object) -> RowValue:
    with np.errstate(all="ignore"):
        return _scalar_back(finite(np.exp(_as_double(x))))


def log(x: object) -> RowValue:
    d = _as_double(x)
    out = np.zeros(d.shape)
    with np.errstate(all="ignore"):
        np.log(np.abs(d), out=out, where=d != 0)
    return _scalar_back(finite(out))


def sqrt(x: object) -> RowValue:
    d = _as_double(x)
    out = np.zeros(d.shape)
    np.sqrt(d, out=out, where=d > 0)
    return _scalar_back(out)


def floor(x: object) -> RowValue:
    return _scalar_back(np.floor(_as_double(x)))


def pick(func: Callable[[RowValue, RowValue], RowValue], a: object, b: object) -> RowValue:
    """min / max."""
    return _scalar_back(func(as_row(a), as_row(b)))


def compare(func: Callable[[object, object], object], a: object, b: object) -> RowValue:
    return _scalar_back(np.asarray(func(as_row(a), as_row(b))))
