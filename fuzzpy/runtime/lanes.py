"""Many runs of a mechanism at once, with the runtime's exact samplers (`fuzzpy audit`, issue 30 item 6).

The runtime (`fuzzpy.runtime.mechanisms`) runs a mechanism one run at a time
(about 0.3 ms a run); an empirical audit needs 10^4-10^6 runs per input. This
module runs the same body on n runs at once, as a masked SIMD program: every
variable is an array with one lane per run, an `if` runs both arms under
complementary masks, a `while` runs until no lane's condition holds, `return`
retires its lanes.

The noise is the runtime's own: `lap(b)` is the exact discrete Laplace on the
grid 2^e of `fuzzpy.runtime.noise.lap_draw` (Canonne, Kamath & Steinke's
sampler, `fuzzpy.runtime.samplers.discrete_laplace`, vectorised) and
`lapplus(b)` the one-sided geometric on the same grid, `gauss(sigma)` the
exact discrete Gaussian on the grid of `noise.gauss_grid` (CKS 2020, as
`gauss[sigma]` releases), drawn from a seeded `RandomSource`;
one batch per distinct scale among the lanes. The arithmetic
around the draws is float64 (the grid values g * Z are exact doubles): the
audit's events are thresholds and equalities on outputs, and float rounding
moves their probabilities by far less than the confidence intervals' widths.

The semantics otherwise follow the runtime's (docs/semantics.md,
"Mechanisms"): a division by zero is 0, an entry read outside its vector (or at
a non-integer index) is 0, `len`, `abs`, `max`, `min` are the only calls; bools
are kept as bools, numbers as floats. (tests/mechanism_sampler.py runs this
runner with numpy's float noise for the test suite's statistical net.)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from fuzzpy.language import syntax as S
from fuzzpy.runtime.noise import gauss_grid, laplace_grid
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import discrete_gaussian_array, discrete_laplace, geometric

MAX_ITERATIONS = 10_000


class Unsupported(Exception):
    """A construct this sampler does not run (the caller may use the exact runtime)."""


@dataclass(frozen=True)
class Outputs:
    """n outputs: `values[r, k]` is coordinate k of run r (NaN past `lengths[r]`); bools as 0/1."""

    values: np.ndarray  # (n, width) float64
    lengths: np.ndarray  # (n,) int

    @property
    def n(self) -> int:
        return int(self.lengths.shape[0])

    @cached_property
    def keys(self) -> np.ndarray:
        """Each whole output as one number (a hash of its coordinates and length): "keys == h" is an event."""
        return row_keys(self.values, self.lengths)


_MIXER = np.random.default_rng(20231).uniform(1.0, 2.0, 64)


def row_keys(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A float hash of each row (NaN and +inf mapped to constants first); rows that are
    equal have equal keys, and different rows of the few values mechanisms release
    collide with negligible chance (an event defined by keys is an event either way)."""
    rows = np.where(np.isnan(values), -7.25e9, np.where(np.isinf(values), 3.5e9, values))
    width = rows.shape[1]
    if width + 1 > len(_MIXER):
        raise Unsupported("outputs wider than 63")
    return rows @ _MIXER[:width] + lengths * _MIXER[width]


Array = np.ndarray
Value = Array | tuple  # a lane array (n,) or (n, L) for a vector; a tuple of them


def sample(decl: S.MechanismDecl, constants: dict[str, Fraction], args: dict[str, object], n: int,
           rng: RandomSource) -> Outputs:
    """n runs of ``decl`` on ``args`` (parameter name -> number, bool or list of numbers)."""
    runner = _Lanes(n, rng, constants)
    for param in decl.params:
        runner.env[param.name] = runner.constant(args[param.name])
    runner.block(decl.body, np.ones(n, dtype=bool))
    return runner.result()


class _Lanes:
    def __init__(self, n: int, rng: RandomSource, constants: dict[str, Fraction]) -> None:
        self.n = n
        self.rng = rng
        self.constants = constants
        self.env: dict[str, Array] = {}
        self.done = np.zeros(n, dtype=bool)
        self.mask = np.ones(n, dtype=bool)  # the lanes whose values the expression being evaluated matters for
        self.returned: list[Array] | None = None
        self.outputs: list[tuple[Array, Array]] = []

    def constant(self, value: object) -> Array:
        if isinstance(value, bool):
            return np.full(self.n, value)
        if isinstance(value, (list, tuple)):
            row = np.array([float(v) for v in value], dtype=float)
            return np.broadcast_to(row, (self.n, len(row)))
        return np.full(self.n, float(value))  # type: ignore[arg-type]

    # -- statements (each under a mask: the lanes that run it)

    def block(self, stmts: tuple[S.Stmt, ...], mask: Array) -> None:
        for stmt in stmts:
            mask = mask & ~self.done
            if not mask.any():
                return
            self.stmt(stmt, mask)

    def stmt(self, stmt: S.Stmt, mask: Array) -> None:
        self.mask = mask
        if isinstance(stmt, S.VarDecl):
            self._set(stmt.name, self.expr(stmt.expr), mask)
        elif isinstance(stmt, S.Assign):
            self._assign(stmt, mask)
        elif isinstance(stmt, S.IfStmt):
            cond = self._bool(self.expr(stmt.cond))
            self.block(stmt.then, mask & cond)
            self.block(stmt.orelse, mask & ~cond)
        elif isinstance(stmt, S.While):
            self._loop(stmt, mask)
        elif isinstance(stmt, S.ReturnStmt):
            self._return(self.expr(stmt.expr), mask)
        elif isinstance(stmt, S.Output):
            self.outputs.append((mask.copy(), self._scalar(self.expr(stmt.expr))))
        else:
            raise Unsupported(type(stmt).__name__)

    def _loop(self, stmt: S.While, mask: Array) -> None:
        for _ in range(MAX_ITERATIONS):
            mask = mask & ~self.done
            if not mask.any():
                return
            self.mask = mask
            mask = mask & self._bool(self.expr(stmt.cond))
            if not mask.any():
                return
            self.block(stmt.body, mask)
        raise Unsupported("a loop ran too many iterations")

    def _set(self, name: str, value: Value, mask: Array) -> None:
        if isinstance(value, tuple):
            raise Unsupported("a tuple in a variable")
        old = self.env.get(name)
        if old is None or old.shape != value.shape:
            self.env[name] = np.array(value)  # a fresh variable (or one that changes shape): every lane
            return
        self.env[name] = np.where(mask if value.ndim == 1 else mask[:, None], value, old)

    def _assign(self, stmt: S.Assign, mask: Array) -> None:
        value = self.expr(stmt.expr)
        if stmt.index is None:
            self._set(stmt.name, value, mask)
            return
        target = np.array(self.env[stmt.name], dtype=float)  # a private copy of the (n, L) lanes
        position = self._scalar(self.expr(stmt.index))
        length = target.shape[1]
        if np.any(mask & ((position < 0) | (position >= length) | (position != np.floor(position)))):
            raise Unsupported("an index out of range")  # the runtime fails here (FZ515)
        rows = np.nonzero(mask)[0]
        target[rows, position[rows].astype(int)] = self._scalar(value)[rows]
        self.env[stmt.name] = target

    def _return(self, value: Value, mask: Array) -> None:
        parts = [self._scalar(v) for v in value] if isinstance(value, tuple) else (
            [value[:, k] for k in range(value.shape[1])] if value.ndim == 2 else [value])
        if self.returned is None:
            self.returned = [np.full(self.n, np.nan) for _ in parts]
        if len(parts) != len(self.returned):
            raise Unsupported("returns of different widths")
        for slot, part in zip(self.returned, parts, strict=True):
            slot[mask] = part[mask]
        self.done = self.done | mask

    def result(self) -> Outputs:
        if self.done.all() and self.returned is not None:
            values = np.stack(self.returned, axis=1)
            return Outputs(values, np.full(self.n, values.shape[1]))
        if self.done.any():
            raise Unsupported("some runs return, others output a stream")
        lengths = np.zeros(self.n, dtype=int)
        values = np.full((self.n, max(len(self.outputs), 1)), np.nan)
        for mask, value in self.outputs:
            rows = np.nonzero(mask)[0]
            values[rows, lengths[rows]] = value[rows]
            lengths[rows] += 1
        return Outputs(values[:, : max(int(lengths.max(initial=0)), 1)], lengths)

    # -- expressions: arrays with one lane per run

    def expr(self, expr: S.Expr) -> Value:  # noqa: PLR0911 -- one case per form
        if isinstance(expr, S.NumLit):
            return np.full(self.n, float(expr.value))
        if isinstance(expr, S.BoolLit):
            return np.full(self.n, expr.value)
        if isinstance(expr, S.Var):
            return self._var(expr.name)
        if isinstance(expr, S.Binary):
            return self._binary(expr)
        if isinstance(expr, S.Unary):
            inner = self.expr(expr.operand)
            return -self._scalar(inner) if expr.op == "-" else ~self._bool(inner)
        if isinstance(expr, S.Noise):
            return self._noise(expr)
        if isinstance(expr, S.Index):
            return self._index(self.expr(expr.base), self._scalar(self.expr(expr.index)))
        if isinstance(expr, S.Call):
            return self._call(expr)
        if isinstance(expr, S.If):
            cond = self._bool(self.expr(expr.cond))
            then, orelse = self.expr(expr.then), self.expr(expr.orelse)
            return np.where(cond, then, orelse)
        if isinstance(expr, S.Tuple):
            return tuple(self.expr(e) for e in expr.items)
        raise Unsupported(type(expr).__name__)

    def _var(self, name: str) -> Array:
        if name in self.env:
            return self.env[name]
        if name in self.constants:
            return np.full(self.n, float(self.constants[name]))
        raise Unsupported(f"the name `{name}`")

    def _noise(self, expr: S.Noise) -> Array:
        if expr.kind not in ("lap", "lapplus", "gauss"):
            raise Unsupported(f"`{expr.kind}` draws")  # the runtime refuses them (FZ527)
        scale = self._scalar(self.expr(expr.scale))
        if np.any(self.mask & ~(scale > 0)):
            raise Unsupported("a noise scale that is not positive")  # the runtime fails (FZ517)
        scale = np.where(self.mask & (scale > 0), scale, np.nan)  # lanes whose value is not used: no draw
        out = np.zeros(self.n)
        for value in np.unique(scale[~np.isnan(scale)]):
            lanes = np.nonzero(scale == value)[0]
            if expr.kind == "gauss":  # the discrete Gaussian of `gauss[sigma]` releases, on their grid
                e, units = gauss_grid(Fraction(float(value)), 1)
                drawn = discrete_gaussian_array(Fraction(units) ** 2, lanes.size, self.rng)
                out[lanes] = drawn.astype(float) * 2.0 ** e
                continue
            e, t = laplace_grid(Fraction(float(value)), 1)  # the grid of `lap_draw` at this scale
            draw = discrete_laplace if expr.kind == "lap" else geometric  # `lapplus`: one-sided
            out[lanes] = draw(t, lanes.size, self.rng).astype(float) * 2.0 ** e
        return out

    def _index(self, vector: Value, index: Array) -> Array:
        if not isinstance(vector, np.ndarray) or vector.ndim != 2:
            raise Unsupported("only a vector can be indexed")
        length = vector.shape[1]
        inside = (index >= 0) & (index < length) & (index == np.floor(index))
        where = np.where(inside, index, 0).astype(int)
        return np.where(inside, vector[np.arange(self.n), where], 0.0)

    def _call(self, expr: S.Call) -> Array:
        args = [self.expr(a) for a in expr.args]
        if expr.func == "len" and len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].ndim == 2:
            return np.full(self.n, float(args[0].shape[1]))
        numbers = [self._scalar(a) for a in args]
        if expr.func == "abs" and len(numbers) == 1:
            return np.abs(numbers[0])
        if expr.func in ("max", "min") and numbers:
            fold = np.maximum if expr.func == "max" else np.minimum
            out = numbers[0]
            for other in numbers[1:]:
                out = fold(out, other)
            return out
        raise Unsupported(f"the call `{expr.func}`")

    def _binary(self, expr: S.Binary) -> Array:
        left, right = self.expr(expr.left), self.expr(expr.right)
        if expr.op in ("&&", "||"):  # both sides evaluated: draws are independent, so the law is the same
            a, b = self._bool(left), self._bool(right)
            return a & b if expr.op == "&&" else a | b
        if isinstance(left, tuple) or isinstance(right, tuple):
            raise Unsupported("arithmetic on tuples")
        if expr.op in ("==", "!="):
            same = left == right
            return same if expr.op == "==" else ~same
        a, b = self._scalar(left), self._scalar(right)
        if expr.op == "/":
            zero = b == 0
            return np.where(zero, 0.0, a / np.where(zero, 1.0, b))  # the runtime's x / 0 = 0
        operations = {"+": np.add, "-": np.subtract, "*": np.multiply, "<": np.less, "<=": np.less_equal,
                      ">": np.greater, ">=": np.greater_equal}
        if expr.op not in operations:
            raise Unsupported(f"the operator `{expr.op}`")
        return operations[expr.op](a, b)

    def _scalar(self, value: Value) -> Array:
        if isinstance(value, tuple) or value.ndim != 1:
            raise Unsupported("a vector or tuple where a number is expected")
        return value.astype(float) if value.dtype == bool else value

    def _bool(self, value: Value) -> Array:
        if isinstance(value, tuple) or value.ndim != 1:
            raise Unsupported("a vector or tuple where a bool is expected")
        return value if value.dtype == bool else value != 0
