"""The language's primitives: builtins named by variables (`size`, `map`...)
and bracketed ones with static arguments (`laplace[eps]`, `sum[lo, hi]`...).

Functions given to `map`, `filter`, `split` and `group` run once over whole
columns (`apply_to_rows`); only when that fails (a `case` on per-row data, a
list built per row, a recursion that branches per row...) do they run row by
row, with the same per-row semantics, and the user is told. What each
primitive computes on every input is docs/semantics.md.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.language import syntax as S
from fuzzpy.language.categories import bucket_indices
from fuzzpy.runtime import exact as X
from fuzzpy.runtime import local as L
from fuzzpy.runtime import matrices as M
from fuzzpy.runtime import rowops as R
from fuzzpy.runtime.accuracy import NoiseNote
from fuzzpy.runtime.aggregates import clamped_sum, vector_sum
from fuzzpy.runtime.bag import (
    Bag,
    Column,
    LazyGroups,
    as_column,
    column_from_rows,
    conform,
    dummy_row,
)
from fuzzpy.runtime.expmech import exponential_mechanism
from fuzzpy.runtime.noise import (
    gauss_grid,
    gauss_release,
    laplace_grid,
    laplace_release,
    laplace_release_one,
)
from fuzzpy.runtime.samplers import discrete_gaussian, geometric_noise
from fuzzpy.runtime.sigmoid import sigmoid_exact, sigmoid_rows
from fuzzpy.runtime.staircase import staircase_grid, staircase_release_one
from fuzzpy.runtime.values import (
    Exhausted,
    Function,
    Fuzzy,
    Inl,
    Inr,
    NotVectorisable,
    RuntimeFailure,
    Thunk,
    Value,
    WithPair,
    force,
)
from fuzzpy.runtime.vectors import (
    VectorColumn,
    as_vector,
    clip_l2,
    dot,
    is_exact_vector,
    labelled,
    tabulated,
    vector,
    vector_view,
)
from fuzzpy.support.lazy import lazy

np = lazy("numpy")

if TYPE_CHECKING:
    from fuzzpy.runtime.interpreter import Interpreter
    from fuzzpy.runtime.vectors import Vector


# ---------------------------------------------------------------- vectorised application


def apply_to_rows(interp: Interpreter, func: Value, bag: Bag, what: str) -> Column:
    """`func` applied to every row of `bag`, as a column of results."""
    from fuzzpy.runtime.interpreter import COLUMNS, ROW

    n = len(bag)
    view = bag.view()
    interp.before_rows(func)
    try:
        with interp.per_row(COLUMNS, n), np.errstate(all="ignore"):
            return as_column(func(VectorColumn(view) if _is_vector_bag(view) else view), n)
    except (NotVectorisable, Exhausted, RuntimeFailure, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        # retried row by row below, where a genuine error is raised again. No
        # warning: whether the columns fail can depend on the rows (a branch
        # only some rows reach), so saying so would tell the analyst about
        # the data (adversarial review of issue 9, round 2, G3)
        pass
    with interp.per_row(ROW, 1), np.errstate(all="ignore"):
        try:
            template = func(dummy_row(bag.source))  # the result's shape, whatever the data
        except Exhausted:  # the zero row is public: this happens on every dataset or none
            raise RuntimeFailure(
                "FZ519", f"the function given to `{what}` ran out of recursive calls on the all-zero row"
            ) from None
        results = []
        for row in bag.rows():
            interp.fresh_row()
            try:
                results.append(conform(func(row), template))
            except Exhausted:  # out of calls outside any recursive call: the zero row's value
                results.append(template)
    return column_from_rows(results, template)


def _is_vector_bag(view: Column) -> bool:
    return isinstance(view, np.ndarray) and view.ndim == 2


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
        "local": L.local_function(interp),
        "counts": fn("counts", 1, counts),
        "tabulate": fn("tabulate", 2, lambda ts, f: tabulated(ts, as_vector([f(t) for t in ts]))),
        "dot": fn("dot", 2, dot),
        "abs": fn("abs", 1, lambda x: abs(x) if X.is_exact(x) else R.absolute(R.as_row(x))),
        "fst": fn("fst", 1, lambda p: _pair(p)[0]),
        "snd": fn("snd", 1, lambda p: _pair(p)[1]),
        "inl": fn("inl", 1, Inl),
        "inr": fn("inr", 1, Inr),
        "len": fn("len", 1, _length),
        "not": fn("not", 1, lambda b: np.logical_not(b) if isinstance(b, np.ndarray) else not b),
        "min": fn("min", 2, lambda a, b: _pick(min, np.minimum, a, b)),
        "max": fn("max", 2, lambda a, b: _pick(max, np.maximum, a, b)),
        "sigmoid": fn("sigmoid", 1, lambda x: _math(lambda v: sigmoid_exact(v), sigmoid_rows, x)),
        "exp": fn("exp", 1, lambda x: _math(X.exp, R.exp, x)),
        "log": fn("log", 1, lambda x: _math(X.log, R.log, x)),
        "sqrt": fn("sqrt", 1, lambda x: _math(X.sqrt, R.sqrt, x)),
        "floor": fn("floor", 1, lambda x: _math(lambda v: Fraction(X.floor(v)), R.floor, x)),
        **M.builtins(lambda: interp.mode),
    }


def _math(exact: Callable[[Value], Value], rows: Callable[[Value], Value], x: Value) -> Value:
    """A function of one number: exact at macro level, per row otherwise."""
    if X.is_exact(x):
        return exact(x)
    return rows(R.as_row(x))


def _pick(exact: Callable[..., Value], rows: Callable[..., Value], a: Value, b: Value) -> Value:
    """min / max; at macro level a `num` (Fraction) if either side is one,
    whichever wins, so the result's kind never depends on the values."""
    if X.is_exact(a) and X.is_exact(b):
        result = exact(a, b)
        return Fraction(result) if isinstance(a, Fraction) or isinstance(b, Fraction) else result
    return R.pick(rows, a, b)


def _length(v: Value) -> int:
    if isinstance(v, VectorColumn):
        return int(v.rows.shape[1])
    return len(v)


def counts(groups: Value) -> Vector:
    if isinstance(groups, LazyGroups):
        return labelled(vector(groups.sizes()), groups.labels)
    return vector([len(_bag(b, "counts")) for b in groups])


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
        "gauss_dp": _gauss_dp,
        "geometric": _geometric,
        "dgauss": _dgauss,
        "staircase": _staircase,
        "sum": _sum,
        "clip": _clip,
        "clip2": _clip2,
        "vsum": _vsum,
        "vsums": _vsums,
        "group": _group,
        "join": _join,
        "expmech": _expmech,
        "loop": _loop,
        "iterate": _iterate,
        "subsample": _subsample,
        "rr": L.rr_primitive,
        "krr": L.krr_primitive,
        "shuffle": L.shuffle_primitive,
        "rr_estimate": L.rr_estimate_primitive,
        "krr_estimate": L.krr_estimate_primitive,
        "choose": _fixed_size(replacement=False),
        "bootstrap": _fixed_size(replacement=True),
        "ptr_median": _ptr_median,
        "ptr_quantile": _ptr_quantile,
        "smooth_quantile": _smooth_quantile,
        "smooth_median": _smooth_quantile,
        "wishart": _wishart,
    }
    if expr.name not in makers:
        raise RuntimeFailure("FZ514", f"unknown primitive `{expr.name}`")
    return makers[expr.name](interp, args)


def _laplace(interp: Interpreter, args: list[Fraction]) -> Function:
    (eps,) = args
    if eps <= 0:
        raise RuntimeFailure("FZ517", "laplace[eps] needs eps > 0")

    def noisy(value: Value) -> Fuzzy:
        if X.is_exact(value):  # one number: no arrays (a run on a query engine need not import numpy)
            return Fuzzy(lambda: _noted(interp, laplace_release_one(value, 1 / eps, interp.source), "laplace", 1 / eps, 1))
        if M.is_matrix(value):  # a matrix: entry by entry, as one vector of all its entries
            return Fuzzy(lambda: _noised_matrix(interp, value, "laplace", 1 / eps,
                                                lambda v: laplace_release(v, 1 / eps, interp.source)))
        values = _numeric(value, "laplace")
        return Fuzzy(lambda: _noted(interp, _shape_like(value, laplace_release(values, 1 / eps, interp.source)),
                                    "laplace", 1 / eps, values.size))

    return Function("laplace", 1, noisy)


def _ptr_median(interp: Interpreter, args: list[Fraction]) -> Function:
    """`ptr_median[eps, delta, b] db`: propose-test-release for the lower
    median (`runtime.ptr`; Dwork & Lei 2009): `inl` the noisy median or
    `inr ()` (no answer). The values are sorted exactly here, the draws made
    when the distribution is sampled."""
    from fuzzpy.runtime import ptr

    eps, delta, bound = args
    if bound <= 0 or eps < ptr.MIN_EPSILON or not 0 < delta < 1:
        raise RuntimeFailure("FZ517", "ptr_median[eps, delta, b] needs eps >= 2^-23, 0 < delta < 1 and b > 0")

    def release(db: Value) -> Fuzzy:
        prepared = ptr.prepare(ptr.sorted_exact(_bag(db, "ptr_median").view()), bound)

        def draw() -> Value:
            answer = ptr.draw(prepared, eps, delta, bound, interp.source)
            # an answer's noise is noted for its accuracy (the Laplace of scale b / eps)
            return _noted(interp, answer, "laplace", bound / eps, 1) if isinstance(answer, Inl) else answer

        return Fuzzy(draw)

    return Function("ptr_median", 1, release)


def _ptr_quantile(interp: Interpreter, args: list[Fraction]) -> Function:
    """`ptr_quantile[eps, delta, b, p] db`: `_ptr_median` for the lower
    p-quantile (`runtime.ptr.quantile_distance`): the same test, release and draws."""
    from fuzzpy.runtime import ptr

    eps, delta, bound, level = args
    if bound <= 0 or eps < ptr.MIN_EPSILON or not 0 < delta < 1 or not 0 < level < 1:
        raise RuntimeFailure("FZ517", "ptr_quantile[eps, delta, b, p] needs eps >= 2^-23, 0 < delta < 1, b > 0 "
                             "and 0 < p < 1")

    def release(db: Value) -> Fuzzy:
        prepared = ptr.prepare_quantile(ptr.sorted_exact(_bag(db, "ptr_quantile").view()), bound, level)

        def draw() -> Value:
            answer = ptr.draw(prepared, eps, delta, bound, interp.source)
            return _noted(interp, answer, "laplace", bound / eps, 1) if isinstance(answer, Inl) else answer

        return Fuzzy(draw)

    return Function("ptr_quantile", 1, release)


def _smooth_quantile(interp: Interpreter, args: list[Fraction]) -> Function:
    """`smooth_quantile[eps, delta, lo, hi, p] db` / `smooth_median[eps, delta, lo, hi] db`:
    the clamped lower p-quantile plus exact continuous Laplace noise scaled to
    its smooth sensitivity (`runtime.smooth`; Nissim, Raskhodnikova & Smith 2007).
    The values are sorted and S computed once per bag, the draws made when
    the distribution is sampled."""
    from fuzzpy.runtime import ptr, smooth

    eps, delta, lo, hi = args[:4]
    level = args[4] if len(args) > 4 else Fraction(1, 2)
    name = "smooth_quantile" if len(args) > 4 else "smooth_median"
    if eps < smooth.MIN_EPSILON or not 0 < delta < 1 or not lo < hi or not 0 < level < 1:
        raise RuntimeFailure("FZ517", f"{name} needs eps >= 2^-23, 0 < delta < 1, lo < hi and 0 < p < 1")
    # the accuracy note's scale: the public bound S <= hi - lo (S itself is never shown)
    public_scale = 2 * (hi - lo) / eps

    def release(db: Value) -> Fuzzy:
        prepared = smooth.prepare(ptr.sorted_exact(_bag(db, name).view(), name), lo, hi, level, eps, delta)

        def draw() -> Value:
            return _noted(interp, smooth.draw(prepared, eps, lo, hi, interp.source), "smooth", public_scale, 1,
                          grid=(smooth.grid_exponent(eps, lo, hi), 0))

        return Fuzzy(draw)

    return Function(name, 1, release)
def _wishart(interp: Interpreter, args: list[Fraction]) -> Function:
    """`wishart[eps, delta, b, k] db`: S / k - w^2 I with S ~ W_d(k, X^T X + w^2 I),
    X^T X of the rows clipped to L2 norm b computed exactly where the rows are
    read, the draws exact and the entries rounded to a public grid at the end
    (`runtime.wishart`; w^2 from `accounting.wishart`)."""
    from fuzzpy.accounting.wishart import noise_variance
    from fuzzpy.runtime import wishart as W

    eps, delta, bound, k = args
    if eps <= 0 or not 0 < delta < 1 or bound <= 0 or k.denominator != 1 or k < 1:
        raise RuntimeFailure("FZ517", "wishart[eps, delta, b, k] needs eps > 0, 0 < delta < 1, b > 0 and a whole k >= 1")
    try:
        w2 = noise_variance(eps, delta, bound, int(k))
    except ValueError as exc:  # refused by the checker first (FZ202); never a traceback
        raise RuntimeFailure("FZ517", f"wishart[eps, delta, b, k]: {exc}") from None

    def release(db: Value) -> Fuzzy:
        rows = _bag(db, "wishart").view()
        if not isinstance(rows, np.ndarray) or rows.ndim != 2:
            raise RuntimeFailure("FZ516", "`wishart` expects a bag of vectors")
        moment = W.second_moment(rows, bound)
        sigma = [[x + (w2 if i == j else 0) for j, x in enumerate(row)] for i, row in enumerate(moment)]

        def draw() -> Value:
            released: list[Value] = [vector(row) for row in W.sample_release(sigma, int(k), w2, interp.source)]
            return _noted(interp, released, "wishart", w2, int(k))  # its noise's law, for the accuracy line

        return Fuzzy(draw)

    return Function("wishart", 1, release)


def _gauss(interp: Interpreter, args: list[Fraction]) -> Function:
    (sigma,) = args
    if sigma <= 0:
        raise RuntimeFailure("FZ517", "gauss[sigma] needs sigma > 0")

    def noisy(value: Value) -> Fuzzy:
        if M.is_matrix(value):  # a matrix: entry by entry, as one vector of all its entries
            return Fuzzy(lambda: _noised_matrix(interp, value, "gauss", sigma,
                                                lambda v: gauss_release(v, sigma, interp.source)))
        values = _numeric(value, "gauss")
        return Fuzzy(lambda: _noted(interp, _shape_like(value, gauss_release(values, sigma, interp.source)),
                                    "gauss", sigma, values.size))

    return Function("gauss", 1, noisy)


def _gauss_dp(interp: Interpreter, args: list[Fraction]) -> Function:
    """`gauss_dp[s, eps, delta]`: `gauss[sigma]` at the sigma the checker
    charged (`calibrate.gauss_dp_sigma`, the one function that reads the
    bracket; Balle & Wang 2018, Thm 8, rounded up)."""
    from fuzzpy.accounting.calibrate import gauss_dp_sigma

    s, eps, delta = args
    try:
        sigma = gauss_dp_sigma(s, eps, delta)
    except ValueError as exc:
        raise RuntimeFailure("FZ517", f"gauss_dp[s, eps, delta]: {exc}") from None
    return _gauss(interp, [sigma])


def _integer(value: Value, what: str) -> int:
    """The exact integer an `int` query computed (an engine's scalar read exactly)."""
    exact = X.to_exact(value)
    if isinstance(exact, bool) or not isinstance(exact, (int, Fraction)) or Fraction(exact).denominator != 1:
        raise RuntimeFailure("FZ516", f"`{what}` adds integer noise to an integer")
    return int(exact)


def _geometric(interp: Interpreter, args: list[Fraction]) -> Function:
    """`geometric[eps] n`: n + Z, P(Z = z) proportional to exp(-eps |z|), exactly
    (`samplers.geometric_noise`): an integer, no grid."""
    (eps,) = args
    if eps <= 0:
        raise RuntimeFailure("FZ517", "geometric[eps] needs eps > 0")

    def noisy(value: Value) -> Fuzzy:
        exact = _integer(value, "geometric")
        return Fuzzy(lambda: _noted(interp, exact + geometric_noise(eps, 1, interp.source)[0], "geometric", eps, 1))

    return Function("geometric", 1, noisy)


def _dgauss(interp: Interpreter, args: list[Fraction]) -> Function:
    """`dgauss[sigma] n`: n + Z, Z ~ N_Z(0, sigma^2), exactly (CKS Alg. 3,
    `samplers.discrete_gaussian`): an integer, no grid."""
    (sigma,) = args
    if sigma <= 0:
        raise RuntimeFailure("FZ517", "dgauss[sigma] needs sigma > 0")

    def noisy(value: Value) -> Fuzzy:
        exact = _integer(value, "dgauss")
        return Fuzzy(lambda: _noted(interp, exact + discrete_gaussian(sigma * sigma, 1, interp.source)[0],
                                    "dgauss", sigma, 1))

    return Function("dgauss", 1, noisy)


def _noised_matrix(interp: Interpreter, value: Value, kind: str, scale: Fraction,
                   release: Callable[[np.ndarray], np.ndarray]) -> list[Value]:
    """The rows of a matrix with noise added to every entry: the entries are
    released as one vector (the same exact samplers, grid and draws as a
    vector of that many entries), then cut back into rows."""
    rows = M.rows_of(value, kind)
    if not all(is_exact_vector(row) for row in rows):
        raise RuntimeFailure("FZ516", f"`{kind}` adds noise to a matrix computed once, not to one per row")
    flat = _numeric(vector([x for row in rows for x in row.tolist()]), kind)
    noisy = release(flat)
    out: list[Value] = []
    start = 0
    for row in rows:
        out.append(vector_view(noisy[start:start + len(row)]))
        start += len(row)
    _noted(interp, out, kind, scale, flat.size)
    return out


def _staircase(interp: Interpreter, args: list[Fraction]) -> Function:
    """`staircase[eps] x`, `staircase[eps, gamma] x`: x + staircase noise
    (Geng & Viswanath 2016) on its own power-of-two grid, exactly
    (`runtime.staircase`: a discrete staircase whose steps are one grid unit
    wider than 1, so rounding x to the grid never costs another step)."""
    eps, gamma = args[0], (args[1] if len(args) > 1 else None)
    if not 0 < eps <= 1024 or eps.denominator >= 2**58:  # as `release.feasible` refuses before charging
        raise RuntimeFailure("FZ517", "staircase[eps] needs 0 < eps <= 1024, a fraction n/d with d below 2^58")
    if gamma is not None and not 0 <= gamma <= 1:
        raise RuntimeFailure("FZ517", "staircase[eps, gamma] needs gamma in [0, 1]")

    def noisy(value: Value) -> Fuzzy:
        exact = X.to_exact(value)
        if isinstance(exact, bool) or not X.is_exact(exact):
            raise RuntimeFailure("FZ516", "`staircase` adds noise to one number")
        grid = staircase_grid(eps, gamma)
        return Fuzzy(lambda: _noted(interp, staircase_release_one(exact, eps, gamma, interp.source), "staircase", eps, 1,
                                    (grid.exponent, grid.inner)))

    return Function("staircase", 1, noisy)


def _noted(interp: Interpreter, released: Value, kind: str, scale: Fraction, entries: int,
           grid: tuple[int, int] | None = None) -> Value:
    """``released``, its noise noted for its accuracy (public parameters
    only: `fuzzpy.runtime.accuracy`) when the run keeps notes."""
    notes = getattr(interp, "noise_notes", None)
    if notes is not None:
        grids = {"laplace": laplace_grid, "gauss": gauss_grid}
        e, units = grid if grid is not None else grids[kind](scale, entries) if kind in grids else (0, 0)
        notes.append((released, NoiseNote(kind, Fraction(scale), entries, e, units)))
    return released


def _numeric(value: Value, what: str) -> np.ndarray:
    """The exact numbers to release: int64 / float64 arrays stand for the
    exact values of their entries; anything else becomes an object array of
    exact numbers."""
    if X.is_exact(value):
        array = np.empty(1, dtype=object)
        array[0] = value
        return array
    if isinstance(value, list) or is_exact_vector(value):
        array = as_vector(list(value) if isinstance(value, list) else value)
        if is_exact_vector(array):
            return np.asarray(array) if array.dtype.kind in "iuf" else np.asarray(vector(array.tolist()))
    raise RuntimeFailure("FZ516", f"`{what}` adds noise to numbers or vectors of numbers")


def _shape_like(original: Value, noisy: np.ndarray) -> Value:
    if X.is_exact(original):
        return Fraction(X.to_exact(noisy[0]))  # a `num`
    # noise is added entry by entry: a labelled histogram keeps its labels
    return labelled(vector_view(noisy), original.labels if is_exact_vector(original) else None)


def _sum(interp: Interpreter, args: list[Fraction]) -> Function:
    lo, hi = _bounds(args, "sum")

    def total(db: Value) -> Value:
        column = _bag(db, "sum").view()
        if not isinstance(column, np.ndarray) or column.ndim != 1 or column.dtype.kind not in "iufb":
            raise RuntimeFailure("FZ516", "`sum` expects a bag of numbers")
        return clamped_sum(column, lo, hi)

    return Function("sum", 1, total)


def _clip(interp: Interpreter, args: list[Fraction]) -> Function:
    lo, hi = _bounds(args, "clip")

    def clip(x: Value) -> Value:
        if X.is_exact(x):
            return Fraction(X.clamp(x, lo, hi))  # a `num`, whichever bound applied
        x = R.as_row(x)
        if R._is_int(x) and lo.denominator == 1 and hi.denominator == 1:
            return np.clip(x, R.as_row(int(lo)), R.as_row(int(hi)))
        return np.clip(np.asarray(x, dtype=np.float64), X.to_float(lo), X.to_float(hi))[()]

    return Function("clip", 1, clip)


def _bounds(args: list[Fraction], what: str) -> tuple[Fraction, Fraction]:
    lo, hi = args
    if lo > hi:
        raise RuntimeFailure("FZ517", f"{what}[lo, hi] needs lo <= hi")
    return lo, hi


def _clip2(interp: Interpreter, args: list[Fraction]) -> Function:
    (c,) = args
    return Function("clip2", 1, lambda v: clip_l2(v, c))


def _vsum(interp: Interpreter, args: list[Fraction]) -> Function:
    (c,) = args

    def total(db: Value) -> Vector:
        rows = _bag(db, "vsum").view()
        if not isinstance(rows, np.ndarray) or rows.ndim != 2:
            raise RuntimeFailure("FZ516", "`vsum` expects a bag of vectors")
        return vector(vector_sum(rows, c, rows.shape[1]))

    return Function("vsum", 1, total)


def _vsums(interp: Interpreter, args: list[Fraction]) -> Function:
    """`vsums[c] f groups`: one row per bucket, `vsum[c] (map f bucket)`."""
    one = _vsum(interp, args)

    def sums(f: Value, groups: Value) -> list[Value]:
        return [one(Bag(apply_to_rows(interp, f, _bag(bucket, "vsums"), "vsums"))) for bucket in groups]

    return Function("vsums", 2, sums)


def _group(interp: Interpreter, args: list[Fraction]) -> Function:
    (k,) = args

    def group(f: Value, db: Value) -> LazyGroups:
        bag = _bag(db, "group")
        keys = apply_to_rows(interp, f, bag, "group")
        if not isinstance(keys, np.ndarray) or keys.dtype.kind not in "iubf":
            raise RuntimeFailure("FZ516", "the key given to `group` must be an int")
        if keys.dtype.kind == "f":  # keys computed row by row come back as doubles: truncated
            inside = (keys > -1) & (keys < int(k))
            keys = np.where(inside, np.trunc(np.where(inside, keys, 0)), -1).astype(np.int64)
        return LazyGroups(bag, keys.astype(np.int64, copy=False), int(k))

    return Function("group", 2, group)


def _join(interp: Interpreter, args: list[Fraction]) -> Function:
    """`join[k] f g db1 db2`: the pairs of rows with equal keys, at most k
    rows per key kept on each side (`fuzzpy.runtime.joins`)."""
    (k,) = args
    if k.denominator != 1 or k < 1:
        raise RuntimeFailure("FZ517", "join[k] needs a whole number k >= 1")

    def join(f: Value, g: Value, db1: Value, db2: Value) -> Bag:
        from fuzzpy.runtime.joins import join_bags

        left, right = _bag(db1, "join"), _bag(db2, "join")
        left_keys = apply_to_rows(interp, f, left, "join")
        right_keys = apply_to_rows(interp, g, right, "join")
        return join_bags(left, right, left_keys, right_keys, int(k))

    return Function("join", 4, join)


def group_by_category(interp: Interpreter, categories: tuple[str, ...]) -> Function:
    """`group["a", "b", ...] f db`: `group[k]` on each row's position among
    the categories; a key in none of them is outside the range, dropped and
    counted for the owner's audit like the int form's (`fuzzpy.language.categories`)."""

    def group(f: Value, db: Value) -> LazyGroups:
        bag = _bag(db, "group")
        keys = apply_to_rows(interp, f, bag, "group")
        if not isinstance(keys, np.ndarray) or (keys.size and keys.dtype.kind not in "OU"):
            raise RuntimeFailure("FZ516", "the key given to `group` with categories must be a string")
        return LazyGroups(bag, bucket_indices(keys, categories), len(categories), labels=categories)

    return Function("group", 2, group)


def _expmech(interp: Interpreter, args: list[Fraction]) -> Function:
    (eps,) = args

    def choose(cands: Value, score: Value, db: Value) -> Fuzzy:
        # the data stays a thunk: a score that never reads it (the checker
        # scaled it by 0) must not evaluate it (docs/semantics.md)
        options = list(force(cands))
        if not options:
            raise RuntimeFailure("FZ517", "`expmech` needs at least one candidate")
        scorer = force(score)
        scores = [X.to_exact(scorer(c)(db)) for c in options]
        return Fuzzy(lambda: _noted(interp, options[exponential_mechanism(scores, eps, interp.source)],
                                    "expmech", eps, len(options)))

    return Function("expmech", 3, choose, lazy=True)


def _loop(interp: Interpreter, args: list[Fraction]) -> Function:
    (k,) = args

    def run(x0: Value, body: Value) -> Fuzzy:
        # the initial state stays a thunk until the body reads it: a body
        # 0-sensitive in its state never evaluates it (docs/semantics.md)
        def draw() -> Value:
            from fuzzpy.runtime.interpreter import exact_value

            step_of = force(body)
            rounds = int(k)
            state = x0 if rounds > 0 else force(x0)
            for index in range(rounds):
                interp.progress(f"loop: round {index + 1} of {rounds}")
                step = step_of(state)
                if not isinstance(step, Fuzzy):
                    raise RuntimeFailure("FZ516", "the body of `loop` must be `fuzzy`")
                state = exact_value(step.sample())
            return state

        return Fuzzy(draw)

    return Function("loop", 2, run, lazy=True)


def _iterate(interp: Interpreter, args: list[Fraction]) -> Function:
    """`iterate[k] f x`: f applied k times, x first (a thunk until f reads
    it: a step 0-sensitive in its argument never evaluates it, as the
    checker scales it by 0); k = 0 gives x and never evaluates f."""
    (k,) = args

    def run(step: Value, x0: Value) -> Value:
        rounds = int(k)
        if rounds == 0:
            return force(x0)
        apply = force(step)
        state = x0
        for index in range(rounds):
            if rounds > 1000 and index % 1000 == 0:
                interp.progress(f"iterate: round {index + 1} of {rounds}")
            state = apply(state)
        return force(state)

    return Function("iterate", 2, run, lazy=True)


def _subsample(interp: Interpreter, args: list[Fraction]) -> Function:
    (q,) = args
    if not 0 <= q <= 1:
        raise RuntimeFailure("FZ517", "subsample[q] needs 0 <= q <= 1")

    def run(body: Value, db: Value) -> Fuzzy:
        # the sample is drawn when the body first reads it: a body whose cost
        # in the bag is 0 never evaluates the bag (docs/semantics.md)
        def sample() -> Value:
            bag = _bag(force(db), "subsample")
            return interp.subsample_bag(bag, q)  # Poisson sampling: each row kept w.p. q

        def draw() -> Value:
            inner = force(body)(Thunk(sample))
            if not isinstance(inner, Fuzzy):
                raise RuntimeFailure("FZ516", "the body of `subsample` must be `fuzzy`")
            return inner.sample()

        return Fuzzy(draw)

    return Function("subsample", 2, run, lazy=True)


def _fixed_size(replacement: bool) -> Callable[[Interpreter, list[Fraction]], Function]:
    """`choose[m]` (m rows uniformly without replacement; all of a bag of at
    most m rows) and `bootstrap[m]` (m uniform draws with replacement; empty
    for an empty bag): drawn when the body first reads the sample, like
    `subsample`'s."""
    name = "bootstrap" if replacement else "choose"

    def make(interp: Interpreter, args: list[Fraction]) -> Function:
        (m,) = args
        if m.denominator != 1 or m < 1:
            raise RuntimeFailure("FZ517", f"{name}[m] needs a whole m >= 1")

        def run(body: Value, db: Value) -> Fuzzy:
            def sample() -> Value:
                bag = _bag(force(db), name)
                return interp.fixed_sample_bag(bag, int(m), replacement)

            def draw() -> Value:
                inner = force(body)(Thunk(sample))
                if not isinstance(inner, Fuzzy):
                    raise RuntimeFailure("FZ516", f"the body of `{name}` must be `fuzzy`")
                return inner.sample()

            return Fuzzy(draw)

        return Function(name, 2, run, lazy=True)

    return make
