"""The language's primitives: builtins named by variables (`size`, `map`...)
and bracketed ones with static arguments (`laplace[eps]`, `sum[lo, hi]`...).

Functions given to `map`, `filter`, `split` and `group` run once over whole
columns (`apply_to_rows`); only when that fails (a `case` on per-row data, a
list built per row...) do they run row by row, and the user is told.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from fuzzpy import syntax as S
from fuzzpy.runtime.bag import Bag, Column, LazyGroups, as_column, column_from_rows
from fuzzpy.runtime.expmech import exponential_mechanism
from fuzzpy.runtime.noise import gauss_release, laplace_release
from fuzzpy.runtime.operations import as_vector
from fuzzpy.runtime.samplers import bernoulli
from fuzzpy.runtime.values import (
    Function,
    Fuzzy,
    Inl,
    Inr,
    NotVectorisable,
    RuntimeFailure,
    Value,
    WithPair,
)
from fuzzpy.runtime.vectors import VectorColumn, clip_l2, dot, vector

if TYPE_CHECKING:
    from fuzzpy.runtime.interpreter import Interpreter


# ---------------------------------------------------------------- vectorised application


def apply_to_rows(interp: Interpreter, func: Value, bag: Bag, what: str) -> Column:
    """`func` applied to every row of `bag`, as a column of results."""
    from fuzzpy.runtime.interpreter import MAX_SPLIT_BRANCHES

    n = len(bag)
    saved = interp.split_branches_left, interp.column_rows
    interp.split_branches_left, interp.column_rows = MAX_SPLIT_BRANCHES, n
    try:
        view = bag.view()
        if isinstance(view, np.ndarray) and view.ndim == 2:  # a bag of vectors
            view = VectorColumn(view)
        with np.errstate(all="ignore"):
            return as_column(func(view), n)
    except (NotVectorisable, RuntimeFailure, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        pass  # retried row by row below, where a genuine error is raised again
    finally:
        interp.split_branches_left, interp.column_rows = saved
    interp.warn_once(  # says nothing about the data: not even how many rows
        f"rows:{what}:{getattr(func, 'name', '')}",
        f"warning: the function given to `{what}` could not be evaluated over whole "
        "columns; evaluating it row by row, which is slower",
    )
    return column_from_rows([func(row) for row in bag.rows()])


def _mask(interp: Interpreter, func: Value, bag: Bag, what: str) -> np.ndarray:
    column = apply_to_rows(interp, func, bag, what)
    if isinstance(column, np.ndarray) and column.size == 0:
        return np.zeros(0, dtype=bool)
    if not isinstance(column, np.ndarray) or column.dtype != bool:
        raise RuntimeFailure("FZ516", f"the function given to `{what}` must return a bool")
    return column


def _bag(value: Value, what: str) -> Bag:
    if not isinstance(value, Bag):
        raise RuntimeFailure("FZ516", f"`{what}` expects a bag")
    return value


# ---------------------------------------------------------------- builtins by name


def builtin_functions(interp: Interpreter) -> dict[str, Function]:
    def fn(name: str, arity: int, apply: Callable[..., Value]) -> Function:
        return Function(name, arity, apply)

    def map_(f: Value, db: Value) -> Bag:
        bag = _bag(db, "map")
        return Bag(apply_to_rows(interp, f, bag, "map"))

    def filter_(f: Value, db: Value) -> Bag:
        bag = _bag(db, "filter")
        return bag.where(_mask(interp, f, bag, "filter"))

    def split(f: Value, db: Value) -> tuple[Bag, Bag]:
        bag = _bag(db, "split")
        keep = _mask(interp, f, bag, "split")
        return bag.where(keep), bag.where(~keep)

    return {
        "size": fn("size", 1, lambda db: len(_bag(db, "size"))),
        "map": fn("map", 2, map_),
        "filter": fn("filter", 2, filter_),
        "split": fn("split", 2, split),
        "counts": fn("counts", 1, counts),
        "tabulate": fn("tabulate", 2, lambda ts, f: vector(np.array([f(t) for t in ts], dtype=np.float64))),
        "dot": fn("dot", 2, dot),
        "abs": fn("abs", 1, lambda x: np.abs(x) if isinstance(x, np.ndarray) else abs(x)),
        "fst": fn("fst", 1, lambda p: _pair(p)[0]),
        "snd": fn("snd", 1, lambda p: _pair(p)[1]),
        "inl": fn("inl", 1, Inl),
        "inr": fn("inr", 1, Inr),
        "len": fn("len", 1, lambda v: len(v)),
        "not": fn("not", 1, lambda b: np.logical_not(b) if isinstance(b, np.ndarray) else not b),
        "min": fn("min", 2, lambda a, b: _pick(np.minimum, a, b)),
        "max": fn("max", 2, lambda a, b: _pick(np.maximum, a, b)),
        "sigmoid": fn("sigmoid", 1, lambda x: _float_math(_sigmoid, x)),
        "exp": fn("exp", 1, lambda x: _float_math(np.exp, x)),
        "log": fn("log", 1, lambda x: _float_math(np.log, x)),
        "sqrt": fn("sqrt", 1, lambda x: _float_math(np.sqrt, x)),
        "floor": fn("floor", 1, lambda x: _float_math(np.floor, x)),
    }


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x), without overflow for large |x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _float_math(func: Callable[[np.ndarray], np.ndarray], x: Value) -> Value:
    """A float function on a number or a column; never raises on bad input
    (log of a negative is nan), so no error can depend on the data."""
    with np.errstate(all="ignore"):
        result = func(np.asarray(x, dtype=np.float64))
    return result if isinstance(x, np.ndarray) else float(result)


def _pick(func: Callable[[Value, Value], Value], a: Value, b: Value) -> Value:
    """min / max; the result is a float if either side is (whichever wins)."""
    result = func(a, b)
    if isinstance(result, np.ndarray) and result.ndim > 0:
        return result
    as_float = isinstance(a, float) or isinstance(b, float)
    return float(result) if as_float else result.item() if isinstance(result, np.generic) else result


def counts(groups: Value) -> np.ndarray:
    if isinstance(groups, LazyGroups):
        return vector(groups.sizes())
    return vector(np.array([len(_bag(b, "counts")) for b in groups], dtype=np.int64))


def _pair(value: Value) -> tuple[Value, Value]:
    if isinstance(value, WithPair):
        return value.left, value.right
    if isinstance(value, tuple) and len(value) == 2:
        return value
    raise RuntimeFailure("FZ516", "`fst` / `snd` expect a pair")


# ---------------------------------------------------------------- bracketed primitives


def primitive(interp: Interpreter, expr: S.Prim, args: list[Fraction]) -> Function:
    makers: dict[str, Callable[[Interpreter, list[Fraction]], Function]] = {
        "laplace": _laplace,
        "gauss": _gauss,
        "sum": _sum,
        "clip": _clip,
        "clip2": _clip2,
        "vsum": _vsum,
        "group": _group,
        "expmech": _expmech,
        "loop": _loop,
        "subsample": _subsample,
    }
    if expr.name not in makers:
        raise RuntimeFailure("FZ514", f"unknown primitive `{expr.name}`")
    return makers[expr.name](interp, args)


def _laplace(interp: Interpreter, args: list[Fraction]) -> Function:
    (eps,) = args
    if eps <= 0:
        raise RuntimeFailure("FZ517", "laplace[eps] needs eps > 0")

    def noisy(value: Value) -> Fuzzy:
        values = _numeric(value, "laplace")
        return Fuzzy(lambda: _shape_like(value, laplace_release(values, 1 / eps, interp.source)))

    return Function("laplace", 1, noisy)


def _gauss(interp: Interpreter, args: list[Fraction]) -> Function:
    (sigma,) = args
    if sigma <= 0:
        raise RuntimeFailure("FZ517", "gauss[sigma] needs sigma > 0")

    def noisy(value: Value) -> Fuzzy:
        values = _numeric(value, "gauss")
        return Fuzzy(lambda: _shape_like(value, gauss_release(values, sigma, interp.source)))

    return Function("gauss", 1, noisy)


def _numeric(value: Value, what: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "iuf" or isinstance(value, bool):
        raise RuntimeFailure("FZ516", f"`{what}` adds noise to numbers or vectors of numbers")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise RuntimeFailure("FZ524", f"`{what}` was given a value that is not a finite number")
    return array


def _shape_like(original: Value, noisy: np.ndarray) -> Value:
    if np.ndim(original) == 0 and not isinstance(original, list):
        return float(noisy)
    return vector(noisy)


def _sum(interp: Interpreter, args: list[Fraction]) -> Function:
    lo, hi = _bounds(args, "sum")

    def total(db: Value) -> Value:
        column = _bag(db, "sum").view()
        if not isinstance(column, np.ndarray) or column.ndim != 1:
            raise RuntimeFailure("FZ516", "`sum` expects a bag of numbers")
        clamped = np.clip(column, _number(lo, column), _number(hi, column))
        total = clamped.sum()
        if column.dtype.kind == "f" and np.isnan(total):
            # a NaN row (0/0 in a map) counts as 0: moving one row still moves
            # the sum by at most max(|lo|, |hi|), and no error reveals the NaN
            total = np.nansum(clamped)
        return total.item()

    return Function("sum", 1, total)


def _clip(interp: Interpreter, args: list[Fraction]) -> Function:
    lo, hi = _bounds(args, "clip")

    def clip(x: Value) -> Value:
        if isinstance(x, (np.ndarray, list)):
            return np.clip(np.asarray(x), float(lo), float(hi))
        low, high = _number(lo, x), _number(hi, x)
        clipped = min(max(x, low), high)
        # the result's type follows x and the bounds, never which bound applied
        return float(clipped) if isinstance(low, float) or isinstance(x, float) else clipped

    return Function("clip", 1, clip)


def _bounds(args: list[Fraction], what: str) -> tuple[Fraction, Fraction]:
    lo, hi = args
    if lo > hi:
        raise RuntimeFailure("FZ517", f"{what}[lo, hi] needs lo <= hi")
    return lo, hi


def _number(bound: Fraction, like: Value) -> int | float:
    """A bound as an int when both it and the data are integers (exact sums)."""
    is_int = (
        like.dtype.kind in "iu" if isinstance(like, np.ndarray) else isinstance(like, int)
    )
    return int(bound) if is_int and bound.denominator == 1 else float(bound)


def _clip2(interp: Interpreter, args: list[Fraction]) -> Function:
    (c,) = args
    return Function("clip2", 1, lambda v: clip_l2(as_vector(v), float(c)))


def _vsum(interp: Interpreter, args: list[Fraction]) -> Function:
    (c,) = args

    def total(db: Value) -> np.ndarray:
        rows = _bag(db, "vsum").view()
        if not isinstance(rows, np.ndarray) or rows.ndim != 2:
            raise RuntimeFailure("FZ516", "`vsum` expects a bag of vectors")
        return vector(clip_l2(rows.astype(np.float64), float(c)).sum(axis=0))

    return Function("vsum", 1, total)


def _group(interp: Interpreter, args: list[Fraction]) -> Function:
    (k,) = args

    def group(f: Value, db: Value) -> LazyGroups:
        bag = _bag(db, "group")
        keys = apply_to_rows(interp, f, bag, "group")
        if not isinstance(keys, np.ndarray) or keys.dtype.kind not in "iubf":
            raise RuntimeFailure("FZ516", "the key given to `group` must be an int")
        if keys.dtype.kind == "f":  # keys computed row by row come back as floats
            keys = np.where(np.isfinite(keys), keys, -1).astype(np.int64)
        return LazyGroups(bag, keys.astype(np.int64, copy=False), int(k))

    return Function("group", 2, group)


def _expmech(interp: Interpreter, args: list[Fraction]) -> Function:
    (eps,) = args

    def choose(cands: Value, score: Value, db: Value) -> Fuzzy:
        options = list(cands)
        if not options:
            raise RuntimeFailure("FZ517", "`expmech` needs at least one candidate")
        scores = [float(score(c)(db)) for c in options]
        return Fuzzy(lambda: options[exponential_mechanism(scores, eps, interp.source)])

    return Function("expmech", 3, choose)


def _loop(interp: Interpreter, args: list[Fraction]) -> Function:
    (k,) = args

    def run(x0: Value, body: Value) -> Fuzzy:
        def draw() -> Value:
            state = x0
            for _ in range(int(k)):
                step = body(state)
                if not isinstance(step, Fuzzy):
                    raise RuntimeFailure("FZ516", "the body of `loop` must be `fuzzy`")
                state = step.sample()
            return state

        return Fuzzy(draw)

    return Function("loop", 2, run)


def _subsample(interp: Interpreter, args: list[Fraction]) -> Function:
    (q,) = args
    if not 0 <= q <= 1:
        raise RuntimeFailure("FZ517", "subsample[q] needs 0 <= q <= 1")

    def run(body: Value, db: Value) -> Fuzzy:
        bag = _bag(db, "subsample")

        def draw() -> Value:
            keep = bernoulli(q, len(bag), interp.source)  # Poisson sampling: each row kept w.p. q
            inner = body(bag.where(keep))
            if not isinstance(inner, Fuzzy):
                raise RuntimeFailure("FZ516", "the body of `subsample` must be `fuzzy`")
            return inner.sample()

        return Fuzzy(draw)

    return Function("subsample", 2, run)
