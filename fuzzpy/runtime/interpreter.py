"""The interpreter of the functional language (`def`s, blocks, lambdas...).

What each construct computes is docs/semantics.md; in short:

* Macro-level numbers are exact (`exact`), per-row numbers numpy values made
  total (`rowops`). The same evaluator serves both: when `map`, `filter`,
  `split` or `group` apply a function to a bag, the row variable is bound to
  the bag's columns, and arithmetic, comparisons, `&&`, `if` and field access
  become numpy operations over every row at once
  (`fuzzpy.runtime.primitives.apply_to_rows`); what cannot run over columns
  runs row by row with the same per-row semantics.
* Call by need: `let`-bound expressions and function arguments are
  evaluated when first used, so what the checker scales by 0 (an unused or
  0-sensitive binding) is never evaluated; nor is e in `0 * e`, `e * 0`
  (static zero: the result is the zero of e's type, a vector of the length
  the checker recorded), `dot` with a literal of static zeros, or `sum[0, 0] e`.
* Vector lengths the checker could not fix as numbers are variables of a
  definition's signature: each call passes their values to the callee
  (`CheckedProgram.call_lengths`), `run` reads them off the arguments
  (`fuzzpy.runtime.lengths`); the current values live in the environment
  under `FRAME`, a name no program can write.
* `def rec` calls draw on a data-independent budget (`MAX_RECURSIVE_CALLS`
  per run at macro level, per row inside a per-row function). Exhausting it
  is an error at macro level (the same on every dataset: docs/semantics.md,
  "Recursion") and gives the row the default value of the function's result
  type inside a per-row function.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction

from fuzzpy.checker.blocks import spread_literal_tuples
from fuzzpy.checker.result import CheckedProgram, RunLength
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.categories import categories_of, category_constant
from fuzzpy.language.types import LenVar
from fuzzpy.runtime import exact as X
from fuzzpy.runtime import rowops as R
from fuzzpy.runtime.accuracy import NoiseNote
from fuzzpy.runtime.defaults import type_default
from fuzzpy.runtime.hoist import Hoisted, hoisted, reaching_recursion
from fuzzpy.runtime.operations import SumColumn, binary, index_value, is_columnar, select_rows
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.stack import on_large_stack, outside
from fuzzpy.runtime.statics import StaticNumbers
from fuzzpy.runtime.subsets import expand, restrict, restrict_env
from fuzzpy.runtime.values import (
    Exhausted,
    Function,
    Fuzzy,
    Inl,
    Inr,
    NotVectorisable,
    Record,
    RuntimeFailure,
    Thunk,
    Transient,
    Value,
    WithPair,
    force,
)
from fuzzpy.runtime.vectors import is_exact_vector, is_per_row_number, negate, vector, vector_column
from fuzzpy.support.lazy import is_instance, lazy

np = lazy("numpy")

Env = dict[str, Value]
Branch = Callable[[Env], Value]
#: The values of a definition's signature's length variables.
Frame = dict[LenVar, int]

#: The data-independent limit on `def rec` calls per run at macro level.
MAX_RECURSIVE_CALLS = 10_000
#: The data-independent limit on `def rec` calls per row inside a per-row
#: function (docs/semantics.md, "Recursion").
MAX_ROW_CALLS = 1_000
#: Python frames nested expressions may take (the parser bounds the nesting).
_NESTING_FRAMES = 20_000
_STACK_BYTES = 512 * 1024 * 1024

MACRO, COLUMNS, ROW = "macro", "columns", "row"
#: The environment's entry for the lengths of the current definition's signature.
FRAME = "#lengths"


class Interpreter:
    """Evaluates one program's definitions with one source of randomness."""

    def __init__(
        self,
        program: S.Program,
        source: RandomSource,
        warn: Callable[[str], None] | None = None,
        checked: CheckedProgram | None = None,
    ) -> None:
        """``checked``: the checker's result for ``program``, whose
        annotations say which products are scaled by 0 and which vector
        lengths each call passes. Without it (tests of the bare evaluator)
        a product with a static 0 found by `statics` is the number 0."""
        from fuzzpy.runtime.primitives import builtin_functions

        # Nested expressions take a few Python frames per level (the parser
        # bounds the nesting); recursion runs on a large stack instead.
        sys.setrecursionlimit(max(sys.getrecursionlimit(), _NESTING_FRAMES))
        self.program = program
        #: Only `def rec` can go deep: other programs run on the caller's stack.
        self.recursive = any(isinstance(d, S.DefDecl) and d.recursive for d in program.decls)
        self.source = source
        #: when a list, each noise draw and its public parameters (for the release's accuracy)
        self.noise_notes: list[tuple[Value, NoiseNote]] | None = None
        self.warn = warn or (lambda message: None)
        self.constants: dict[str, Fraction] = {}
        #: top-level `let`s bound to a list of categories (`fuzzpy.language.categories`)
        self.categories: dict[str, tuple[str, ...]] = {}
        self.globals: Env = {}
        self._builtins = builtin_functions(self)
        self._warned: set[str] = set()
        #: MACRO, or how a per-row function runs: over COLUMNS or one ROW at a time.
        self.mode = MACRO
        #: The number of rows while a function runs over columns (those of
        #: the current subset, `_branch_rows`), else None.
        self.column_rows: int | None = None
        #: `def rec` calls left per run at macro level, and per row while a
        #: function runs row by row; over columns, the calls each row made
        #: (`calls_made`, indexed by `row_ids`: the rows of the current subset).
        self.macro_calls_left = MAX_RECURSIVE_CALLS
        #: thunks made so far; while macro-level work a row forced is evaluated
        #: (`delay`), the count when it began: older thunks are not kept
        self._thunks_made = 0
        self._row_barrier: int | None = None
        self.row_calls_left = MAX_ROW_CALLS
        self.row_ids, self.calls_made = self._call_counters(0)
        self._recursion_depth = 0
        self.zero_products = checked.zero_products if checked is not None else None
        self.call_lengths = checked.call_lengths if checked is not None else {}
        self.length_reads = checked.length_reads if checked is not None else {}
        self.captures = checked.captures if checked is not None else None
        self.zero_captures = checked.zero_captures if checked is not None else {}
        #: each definition's parameters' types, and which are static (never stood in for)
        self._param_types: dict[str, tuple[T.Type | None, ...]] = {
            name: tuple(None if p.name in d.static_params else p.type for p in d.params)
            for name, d in checked.definitions.items()
        } if checked is not None else {}
        #: each definition's parameters: whether its body uses them (sensitivity above 0)
        self._uses: dict[str, tuple[bool, ...]] = {
            name: tuple(not p.sensitivity.is_zero for p in d.params) for name, d in checked.definitions.items()
        } if checked is not None else {}
        self._defs: dict[str, S.DefDecl] = {}
        #: `iterate` steps with their round-invariant parts taken out, by the step's node
        self._hoisted: dict[int, Hoisted] = {}
        self._recursive_names: frozenset[str] | None = None
        self._load_declarations()
        self.statics = StaticNumbers(program, self.constants)

    # ------------------------------------------------------------ declarations

    def _load_declarations(self) -> None:
        from fuzzpy.runtime.mechanisms import mechanism_function

        for decl in self.program.decls:
            if isinstance(decl, S.LetDecl) and (categories := category_constant(decl.expr)) is not None:
                self.categories[decl.name] = categories
                self.globals[decl.name] = list(categories)
            elif isinstance(decl, S.LetDecl):
                exact = self.static(decl.expr)
                self.constants[decl.name] = exact
                self.globals[decl.name] = exact
            elif isinstance(decl, S.DefDecl):
                self._defs[decl.name] = decl
                self.globals[decl.name] = self._def_value(decl, {})
            elif isinstance(decl, S.MechanismDecl):
                self.globals[decl.name] = mechanism_function(decl, self)

    def _def_value(self, decl: S.DefDecl, frame: Frame) -> Value:
        """A definition as a value, its signature's lengths given by ``frame``."""
        if not decl.params:
            return _Deferred(lambda: self._at_macro_level(lambda: self.eval(decl.body, {FRAME: frame})))
        names = [p.name for p in decl.params]

        def call(*args: Value) -> Value:
            if self.mode != MACRO:
                args = self._stand_in_unused(decl.name, args)
            return self.eval(decl.body, {**dict(zip(names, args, strict=True)), FRAME: frame})

        if decl.recursive:
            return Function(decl.name, len(names), self._recursive(decl, call), lazy=True)
        return Function(decl.name, len(names), call, lazy=True)

    def _stand_in_unused(self, name: str, args: tuple[Value, ...]) -> tuple[Value, ...]:
        """Per row, a parameter the definition uses at 0 that still holds a
        macro-level binding not evaluated (a partial application made at
        macro level, `map (mk (deep (size db))) db`) gets its type's default,
        as a closure's unused captures do (`_stand_in_zero_captures`)."""
        uses, types = self._uses.get(name), self._param_types.get(name)
        if uses is None or types is None:
            return args
        return tuple(
            type_default(ty) if not used and ty is not None and isinstance(arg, Thunk) and not arg.evaluated else arg
            for arg, used, ty in zip(args, uses, types, strict=False)
        )

    def _recursive(self, decl: S.DefDecl, call: Callable[..., Value]) -> Callable[..., Value]:
        def counted(*args: Value) -> Value:
            if self.mode == MACRO:
                if self.macro_calls_left <= 0:
                    raise RuntimeFailure(
                        "FZ519", f"`{decl.name}` made more than {MAX_RECURSIVE_CALLS} recursive calls"
                    )
                self.macro_calls_left -= 1
                return call(*args)
            if self.mode == COLUMNS:
                return self._lockstep_call(decl, call, args)
            if self.row_calls_left <= 0:
                if self._recursion_depth == 0:  # an outermost call after the row's budget is spent
                    return self._default_of(decl)
                raise Exhausted
            self.row_calls_left -= 1
            if self._recursion_depth > 0:
                self._recursion_depth += 1
                try:
                    return call(*args)
                finally:
                    self._recursion_depth -= 1
            self._recursion_depth = 1
            try:  # the outermost recursive call of a row: a documented default on exhaustion
                return call(*args)
            except Exhausted:
                return self._default_of(decl)
            finally:
                self._recursion_depth = 0

        return counted

    def _lockstep_call(self, decl: S.DefDecl, call: Callable[..., Value], args: tuple[Value, ...]) -> Value:
        """A recursive call over columns: every row of the current subset
        makes it, and each row counts its own calls. A row past its budget
        takes no further part (its value here is a placeholder), and gets the
        default at its outermost recursive call, as row by row. With no row
        left, a nested call does not evaluate the body, so the recursion
        stops unfolding; the outermost call evaluates it even on no rows,
        so that every construct of the body is reached whatever the data."""
        m = self.column_rows or 0
        ids = self.row_ids
        self.calls_made[ids] += 1
        live = self.calls_made[ids] <= MAX_ROW_CALLS
        outermost = self._recursion_depth == 0
        self._recursion_depth += 1
        try:
            if live.all() and (m > 0 or outermost):
                result = call(*args)
            elif not live.any() and not outermost:
                return self._default_of(decl)  # a placeholder: no row uses it
            else:
                keep = np.flatnonzero(live)
                inner = self.on_rows(keep, lambda: call(*(restrict(a, keep, m) for a in args)))
                result = select_rows(live, expand(inner, keep, m), self._default_of(decl))
        finally:
            self._recursion_depth -= 1
        if outermost:
            spent = self.calls_made[ids] > MAX_ROW_CALLS
            if spent.any():
                result = select_rows(spent, self._default_of(decl), result)
        return result

    def on_rows(self, positions: np.ndarray, work: Callable[[], Value]) -> Value:
        """Run `work` over the rows at ``positions`` of the current subset."""
        saved = self.column_rows, self.row_ids
        self.column_rows = int(positions.size)
        if self.recursive:
            self.row_ids = self.row_ids[positions]
        try:
            return work()
        finally:
            self.column_rows, self.row_ids = saved

    def _default_of(self, decl: S.DefDecl) -> Value:
        from fuzzpy.runtime.defaults import row_default

        return row_default(decl.result, self.program)

    def definition(self, name: str, frame: Frame | None = None) -> Value:
        """A definition's value for a caller outside the interpreter (its
        signature's lengths in ``frame``): calling it and sampling what it
        returns run on the large stack."""
        value = self._def_value(self._defs[name], frame) if frame and name in self._defs else self._lookup(name, {})
        return outside(value) if self.recursive else value

    def subsample_bag(self, bag: Value, q: Fraction) -> Value:
        """`subsample[q]`'s sample of `bag` (an engine keeps its rows in the
        engine: fuzzpy.engines.trace)."""
        return bag.where(self.subsample_mask(bag, q))

    def subsample_mask(self, bag: Value, q: Fraction) -> np.ndarray:
        """`subsample[q]`: which rows of `bag` are kept, each independently
        with probability q (exact Bernoulli draws; the query engines hash row
        ids instead: fuzzpy.engines.subsample)."""
        from fuzzpy.runtime.samplers import bernoulli

        return bernoulli(q, len(bag), self.source)

    def fixed_sample_bag(self, bag: Value, size: int, replacement: bool) -> Value:
        """`choose[m]` / `bootstrap[m]`'s sample of `bag` (exact uniform
        draws from the run's source: fuzzpy.runtime.samplers)."""
        from fuzzpy.runtime.samplers import draws_with_replacement, subset_without_replacement

        n = len(bag)
        if replacement:
            return bag.pick(draws_with_replacement(n, size, self.source))
        if n <= size:
            return bag
        return bag.pick(subset_without_replacement(n, size, self.source))

    def progress(self, message: str) -> None:
        """A note about long work (`loop`'s rounds) for a person watching;
        the in-memory interpreter has no one to tell (engines override)."""

    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warn(message)

    @contextmanager
    def per_row(self, mode: str, rows: int | None) -> Iterator[None]:
        """Run a per-row function over COLUMNS (`rows` of them) or one ROW."""
        if self.mode == MACRO:
            self._force_public_definitions()
        saved = (self.mode, self.column_rows, self.row_calls_left, self.row_ids, self.calls_made, self._recursion_depth)
        self.mode, self.column_rows = mode, rows
        self.row_calls_left, self._recursion_depth = MAX_ROW_CALLS, 0
        self.row_ids, self.calls_made = self._call_counters(rows or 0)
        try:
            yield
        finally:
            self.mode, self.column_rows, self.row_calls_left, self.row_ids, self.calls_made, self._recursion_depth = saved

    def _call_counters(self, rows: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The rows' ids and calls made so far (`_lockstep_call`). Only a `def
        rec` counts calls per row: without one, no per-row arrays (two of them
        cost a quarter of a filter's time on 10M rows), and no numpy."""
        if not self.recursive:
            return None, None
        return np.arange(rows, dtype=np.int64), np.zeros(rows, dtype=np.int64)

    def _at_macro_level(self, work: Callable[[], Value]) -> Value:
        saved = self.mode, self.column_rows
        self.mode, self.column_rows = MACRO, None
        try:
            return work()
        finally:
            self.mode, self.column_rows = saved

    def fresh_row(self) -> None:
        """Each row has its own budget of recursive calls."""
        self.row_calls_left, self._recursion_depth = MAX_ROW_CALLS, 0

    # ------------------------------------------------------------ static numbers

    def static(self, expr: S.Expr, env: Env | None = None) -> Fraction:
        """An exact static number (`laplace[..]`, `sum[..]`, `let` constants);
        `inf` (a bound of `sum`) is read as the largest double. In ``env``, a
        static parameter of a definition (`laplace[eps]` with `eps` a
        parameter) is the exact number its call passed: a local name hides a
        constant, as the checker reads it (the checker admits a local name in
        a static position only for such a parameter, given a static number)."""
        if env is not None and isinstance(expr, S.Var) and expr.name in env:
            value = self._lookup(expr.name, env)
            if X.is_exact(value):
                return Fraction(value)
            raise RuntimeFailure("FZ513", f"a static number was expected for `{expr.name}`")
        if isinstance(expr, S.NumLit):
            return expr.value
        if isinstance(expr, S.InfLit) or (isinstance(expr, S.Var) and expr.name == "inf" and "inf" not in self.constants):
            return X.EXACT_DBL_MAX
        if isinstance(expr, S.Var) and expr.name in self.constants:
            return self.constants[expr.name]
        if isinstance(expr, S.Unary) and expr.op == "-":
            return -self.static(expr.operand, env)
        if isinstance(expr, S.Binary) and expr.op in ("+", "-", "*", "/"):
            left, right = self.static(expr.left, env), self.static(expr.right, env)
            if expr.op == "/" and right == 0:
                raise RuntimeFailure("FZ512", "division by zero in a static number")
            return Fraction(X.arith(expr.op, left, right))
        if isinstance(expr, S.Ann):
            return self.static(expr.expr, env)
        value = self.eval(expr, {})
        if X.is_exact(value):
            return Fraction(value)
        raise RuntimeFailure("FZ513", "a static number was expected here")

    # ------------------------------------------------------------ expressions

    def eval(self, expr: S.Expr, env: Env) -> Value:
        method = getattr(self, "_eval_" + type(expr).__name__, None)
        if method is None:
            raise RuntimeFailure("FZ514", f"`{type(expr).__name__}` cannot be evaluated in a def")
        return method(expr, env)

    def delay(self, expr: S.Expr, env: Env) -> Value:
        """The value of `expr` when it is needed (call by need); what cannot
        fail or take time is evaluated at once. Per row, bindings are by
        value (docs/semantics.md, "Per-row functions")."""
        if self.mode != MACRO or isinstance(expr, (S.NumLit, S.BoolLit, S.StringLit, S.UnitLit, S.Lambda)):
            return self.eval(expr, env)
        if isinstance(expr, S.Var) and expr.name in env:
            return env[expr.name]  # shares the binding's thunk
        mode, rows = self.mode, self.column_rows
        born = self._thunks_made
        self._thunks_made += 1

        def compute() -> Value:
            if self.mode == mode:
                value = self.eval(expr, env)
                # an older thunk reached by work a row forced: shares that
                # work's budget and is kept by no one (its own thunks are)
                barrier = self._row_barrier
                return Transient(value) if barrier is not None and born < barrier else value
            # a macro-level binding first used inside a per-row function is
            # still evaluated with the macro-level semantics, on a budget of
            # its own: whether a row reaches it must change neither what the
            # run's other macro-level work may spend nor whether the run
            # fails; running out fails that row only, as its own budget would
            # (docs/semantics.md, "Recursion"; adversarial review of issue 9, H1)
            # Nothing it computes is kept (`Transient`), so its cost and outcome
            # never depend on which rows came before (round 4, K1).
            saved = self.mode, self.column_rows, self.macro_calls_left, self._row_barrier
            self.mode, self.column_rows = mode, rows
            self.macro_calls_left, self._row_barrier = MAX_RECURSIVE_CALLS, self._thunks_made
            try:
                return Transient(self.eval(expr, env))
            except RuntimeFailure as failure:
                if failure.code == "FZ519":
                    raise Exhausted from None
                raise
            except RecursionError:
                raise Exhausted from None
            finally:
                self.mode, self.column_rows, self.macro_calls_left, self._row_barrier = saved

        return Thunk(compute)

    def _eval_NumLit(self, expr: S.NumLit, env: Env) -> Value:
        return int(expr.value) if expr.is_int else expr.value

    def _eval_InfLit(self, expr: S.InfLit, env: Env) -> Value:
        return X.EXACT_DBL_MAX  # the checker allows `inf` only in static positions

    def _eval_BoolLit(self, expr: S.BoolLit, env: Env) -> Value:
        return expr.value

    def _eval_StringLit(self, expr: S.StringLit, env: Env) -> Value:
        return expr.value

    def _eval_UnitLit(self, expr: S.UnitLit, env: Env) -> Value:
        return None

    def _eval_Var(self, expr: S.Var, env: Env) -> Value:
        passed = self.call_lengths.get(expr.span)
        if passed is not None and expr.name not in env and expr.name in self._defs:
            # a use of a definition whose body needs lengths: pass their values
            frame = {var: self.length(n, env) for var, n in passed.items()}
            return self._def_value(self._defs[expr.name], frame)
        return self._lookup(expr.name, env)

    def length(self, n: RunLength, env: Env) -> int:
        """A length the checker recorded: a number, or a variable of the
        current definition's signature."""
        if isinstance(n, int):
            return n
        frame = env.get(FRAME, {})
        if n not in frame:
            raise RuntimeFailure("FZ514", "a vector length the checker left to `run` is not known here")
        return frame[n]

    def _lookup(self, name: str, env: Env) -> Value:
        if name in env:
            return force(env[name])
        if name in self.globals:
            value = self.globals[name]
            return value.force() if isinstance(value, _Deferred) else value
        if name in self._builtins:
            return self._builtins[name]
        raise RuntimeFailure("FZ514", f"`{name}` is not defined")

    def _eval_Binary(self, expr: S.Binary, env: Env) -> Value:
        op = expr.op
        if op in ("&&", "||"):
            return self._logical(op, expr, env)
        if op == "*" and self._zero_product(expr):
            # the checker scaled the other side by 0: it is not evaluated, the
            # result is the zero of its type
            length = self.zero_products.get(expr.span) if self.zero_products is not None else None
            return 0 if length is None else vector([0] * self.length(length, env))
        left, right = self.eval(expr.left, env), self.eval(expr.right, env)
        return binary(op, left, right)

    def _zero_product(self, expr: S.Binary) -> bool:
        if self.zero_products is not None:
            return expr.span in self.zero_products
        return self.statics.is_zero(expr.left) or self.statics.is_zero(expr.right)

    def _logical(self, op: str, expr: S.Binary, env: Env) -> Value:
        left = self.eval(expr.left, env)
        if is_instance(left, "numpy", "ndarray"):  # over columns: the right side on the rows that need it
            decided = np.bool_(op == "||")
            if op == "&&":
                return self._branch_rows(left, lambda e: self.eval(expr.right, e), lambda e: decided, env)
            return self._branch_rows(left, lambda e: decided, lambda e: self.eval(expr.right, e), env)
        if (op == "&&" and not left) or (op == "||" and left):
            return bool(left)
        right = self.eval(expr.right, env)
        return right if is_instance(right, "numpy", "ndarray") else bool(right)

    def _eval_Unary(self, expr: S.Unary, env: Env) -> Value:
        value = self.eval(expr.operand, env)
        if expr.op == "-":
            if X.is_exact(value):
                return -value
            if isinstance(value, list):
                value = vector(value) if all(X.is_exact(v) for v in value) else value
            return R.negate(value) if R.is_row(value) and not is_exact_vector(value) else negate(value)
        if is_instance(value, "numpy", "ndarray"):
            return np.logical_not(value)
        return not value

    def _eval_If(self, expr: S.If, env: Env) -> Value:
        cond = self.eval(expr.cond, env)
        if is_instance(cond, "numpy", "ndarray"):
            return self._branch_rows(cond, lambda e: self.eval(expr.then, e), lambda e: self.eval(expr.orelse, e), env)
        return self.eval(expr.then if cond else expr.orelse, env)

    def _branch_rows(self, cond: np.ndarray, then: Branch, orelse: Branch, env: Env) -> Value:
        """Over columns, each row takes its own branch: each branch runs on
        the rows that take it, and the parts are put back per row. Both
        branches run even when one has no row: whether a function runs over
        columns or row by row (which the user is told) must not depend on
        the data, so every construct is reached whatever the rows hold."""
        m = self.column_rows or 0
        cond = np.asarray(cond, dtype=bool)
        if cond.shape != (m,):
            raise NotVectorisable
        yes, no = np.flatnonzero(cond), np.flatnonzero(~cond)
        first = self.on_rows(yes, lambda: then(env if yes.size == m else restrict_env(env, yes, m)))
        second = self.on_rows(no, lambda: orelse(env if no.size == m else restrict_env(env, no, m)))
        return select_rows(cond, expand(first, yes, m), expand(second, no, m))

    def _eval_ListLit(self, expr: S.ListLit, env: Env) -> Value:
        items = [self.eval(item, env) for item in expr.items]
        n = self.column_rows
        if self.mode == COLUMNS and n is not None and any(is_per_row_number(i) and i.shape[0] == n for i in items):
            return vector_column(items, n)  # `[1, r.x, r.y]` over columns: a vector per row
        return items

    def _eval_Tuple(self, expr: S.Tuple, env: Env) -> Value:
        return tuple(self.eval(item, env) for item in expr.items)

    def _eval_Prim(self, expr: S.Prim, env: Env) -> Value:
        from fuzzpy.runtime.primitives import group_by_category, primitive

        categories = self.group_categories(expr)
        if categories is not None:
            return group_by_category(self, categories)
        return primitive(self, expr, [self.static(a, env) for a in expr.static_args])

    def group_categories(self, expr: S.Prim) -> tuple[str, ...] | None:
        """The categories of a categorical `group["a", ...]` (None for
        `group[k]` and every other primitive)."""
        return categories_of(expr.static_args, self.categories) if expr.name == "group" else None

    def _eval_App(self, expr: S.App, env: Env) -> Value:
        if self._is_dot_with_static_zero(expr, env):
            return 0  # `dot` with a literal of static zeros: the other side is not evaluated
        if self._is_zero_sum(expr.func):
            return 0  # `sum[0, 0] e`: e is scaled by 0 and not evaluated
        if expr.span in self.length_reads and self._is_builtin(expr.func, "len"):
            return self.length(self.length_reads[expr.span], env)  # from the type: the vector is not evaluated
        func = self.eval(expr.func, env)
        if not callable(func):
            raise RuntimeFailure("FZ514", "a value that is not a function is applied")
        if self.mode == MACRO and isinstance(expr.arg, S.Lambda) and self._is_iterate(expr.func):
            return func(self._round_invariant_step(expr.arg, env))
        return func(self.delay(expr.arg, env))

    def _is_iterate(self, head: S.Expr) -> bool:
        return isinstance(head, S.Prim) and head.name == "iterate"

    def _round_invariant_step(self, step: S.Lambda, env: Env) -> Value:
        """`iterate[k] (fun y -> ...)`'s step with what no round changes
        evaluated once, when first needed (`fuzzpy.runtime.hoist`)."""
        found = self._hoisted.get(id(step))
        if found is None:
            if self._recursive_names is None:
                self._recursive_names = reaching_recursion(self.program)
            found = hoisted(step, lambda n: self.statics.value(n) is not None or self.statics.is_zero_vector(n),  # type: ignore[arg-type]
                            self._recursive_names)
            self._hoisted[id(step)] = found
        if not found.bindings:
            return self.eval(step, env)
        outer = self._stand_in_zero_captures(step, env)  # what the step itself would see
        inner = {**env, **{name: self.delay(e, outer) for name, e in found.bindings}}
        return self.eval(found.step, inner)

    def _is_builtin(self, head: S.Expr, name: str) -> bool:
        return isinstance(head, S.Var) and head.name == name and name not in self.globals

    def _is_dot_with_static_zero(self, expr: S.App, env: Env) -> bool:
        head = expr.func
        if not (isinstance(head, S.App) and isinstance(head.func, S.Var) and head.func.name == "dot"):
            return False
        if "dot" in env or "dot" in self.globals:
            return False  # a user's own `dot`
        return self.statics.is_zero_vector(head.arg) or self.statics.is_zero_vector(expr.arg)

    def _is_zero_sum(self, func: S.Expr) -> bool:
        if not (isinstance(func, S.Prim) and func.name == "sum" and len(func.static_args) == 2):
            return False
        return all(self.statics.is_zero(a) for a in func.static_args)

    def _eval_Lambda(self, expr: S.Lambda, env: Env) -> Value:
        def body(arg: Value) -> Value:
            return self.eval(expr.body, {**env, expr.param: arg})

        if self.mode == MACRO:
            self._force_captures(expr, env)
            env = self._stand_in_zero_captures(expr, env)
        if self.mode != COLUMNS:
            return Function("fun", 1, body, lazy=True)
        # a closure over columns may be called on a subset of the rows
        return Function("fun", 1, body, lazy=True,
                        rebuild=lambda positions, n: self._eval_Lambda(expr, restrict_env(env, positions, n)))

    def before_rows(self, func: Value) -> None:
        """What a per-row function uses from macro level is evaluated now,
        once, whatever the rows (see `_force_captures`): for a partially
        applied definition, the arguments its body uses."""
        if self.mode != MACRO:
            return
        self._force_public_definitions()
        if isinstance(func, Function) and func.args and func.name in self._uses:
            for arg, used in zip(func.args, self._uses[func.name], strict=False):
                if used:
                    force(arg)

    def _force_public_definitions(self) -> None:
        """Top-level definitions without parameters depend on no data: they
        are evaluated (at macro level, in program order) before the first
        per-row function runs, so that no row decides whether they are."""
        for decl in self.program.decls:
            if isinstance(decl, S.DefDecl) and not decl.params:
                value = self.globals.get(decl.name)
                if isinstance(value, _Deferred):
                    value.force()

    def _force_captures(self, expr: S.Lambda, env: Env) -> None:
        """A closure made at macro level evaluates what it uses now, once,
        whatever rows it is later applied to: a per-row function must not
        force a macro-level binding (and spend the macro budget) only when
        some row reaches it. Top-level definitions without parameters are
        forced for the same reason (docs/semantics.md, "Recursion")."""
        if self.captures is None:
            return
        for name in self.captures.get(expr.span, ()):
            if name in env:
                force(env[name])
            else:
                value = self.globals.get(name)
                if isinstance(value, _Deferred):
                    value.force()

    def _stand_in_zero_captures(self, expr: S.Lambda, env: Env) -> Env:
        """What the closure uses at sensitivity 0 and is not evaluated yet is
        the default of its type inside it (`CheckedProgram.zero_captures`):
        the closure's result does not depend on it, and a row that forced it
        (per row, bindings and arguments are by value) would run macro-level
        work whose outcome depends on the data (review s29d: FZ519 on 10,000
        rows only, after the charge)."""
        zero = self.zero_captures.get(expr.span)
        if not zero:
            return env
        stand_ins = {name: type_default(ty) for name, ty in zero.items()
                     if isinstance(env.get(name), Thunk) and not env[name].evaluated}
        return {**env, **stand_ins} if stand_ins else env

    def _eval_Field(self, expr: S.Field, env: Env) -> Value:
        record = self.eval(expr.expr, env)
        if not isinstance(record, Record):
            raise RuntimeFailure("FZ510", f"`.{expr.name}` applied to a value that is not a record")
        return record.get(expr.name)

    def _eval_RecordLit(self, expr: S.RecordLit, env: Env) -> Value:
        return Record({name: self.eval(e, env) for name, e in expr.fields})

    def _eval_WithPair(self, expr: S.WithPair, env: Env) -> Value:
        return WithPair(self.eval(expr.left, env), self.eval(expr.right, env))

    def _eval_Cons(self, expr: S.Cons, env: Env) -> Value:
        head, tail = self.eval(expr.head, env), self.eval(expr.tail, env)
        return [head, *list(tail)]

    def _eval_CaseSum(self, expr: S.CaseSum, env: Env) -> Value:
        value = self.eval(expr.scrutinee, env)
        if isinstance(value, Inl):
            return self.eval(expr.left_body, {**env, expr.left_var: value.value})
        if isinstance(value, Inr):
            return self.eval(expr.right_body, {**env, expr.right_var: value.value})
        if isinstance(value, bool) or is_instance(value, "numpy", "bool_"):  # `bool` is unit + unit: inl = true
            body, var = (expr.left_body, expr.left_var) if value else (expr.right_body, expr.right_var)
            return self.eval(body, {**env, var: None})
        if isinstance(value, SumColumn):
            return self._case_over_rows(expr, value, env)
        raise NotVectorisable if is_columnar(value) else RuntimeFailure(
            "FZ514", "`case ... of inl | inr` on a value that is not a sum"
        )

    def _case_over_rows(self, expr: S.CaseSum, value: SumColumn, env: Env) -> Value:
        """`case` over a column of sums: each row takes its side's branch."""
        if value.left is None or value.right is None:
            raise NotVectorisable
        m = self.column_rows or 0
        is_left = np.broadcast_to(np.asarray(value.is_left, dtype=bool), (m,))
        sides = {**env, "#left": value.left, "#right": value.right}

        def left(e: Env) -> Value:
            return self.eval(expr.left_body, {**e, expr.left_var: e["#left"]})

        def right(e: Env) -> Value:
            return self.eval(expr.right_body, {**e, expr.right_var: e["#right"]})

        return self._branch_rows(is_left, left, right, sides)

    def _eval_CaseList(self, expr: S.CaseList, env: Env) -> Value:
        value = self.eval(expr.scrutinee, env)
        if is_instance(value, "numpy", "ndarray") and value.ndim == 1:
            if self.mode == COLUMNS and not is_exact_vector(value):
                raise NotVectorisable  # a list per row
            value = list(value)
        items = list(value)
        if not items:
            return self.eval(expr.nil_body, env)
        inner = {**env, expr.head_var: items[0], expr.tail_var: items[1:]}
        return self.eval(expr.cons_body, inner)

    def _eval_Return(self, expr: S.Return, env: Env) -> Value:
        value = self.eval(expr.expr, env)
        return Fuzzy(lambda: value)

    def _eval_Ann(self, expr: S.Ann, env: Env) -> Value:
        return self.eval(expr.expr, env)

    def _eval_Block(self, expr: S.Block, env: Env) -> Value:
        if not any(isinstance(s, S.SampleStmt) for s in expr.stmts):
            return self.eval(expr.result, self._run_statements(expr.stmts, env))

        def draw() -> Value:
            inner = self._run_statements(expr.stmts, env)
            return sample(self.eval(expr.result, inner))

        return Fuzzy(draw)

    def _run_statements(self, stmts: tuple[S.BlockStmt, ...], env: Env) -> Env:
        """Bind a block's statements in order. Scoping is lexical: each
        statement extends a new environment, so what an earlier binding
        captured (a closure, an unevaluated `let`) never sees a later
        binding that shadows a name it reads."""
        for stmt in spread_literal_tuples(stmts):
            if isinstance(stmt, S.SampleStmt):
                # strict: its cost is charged whether or not the value is used
                env = {**env, stmt.name: sample(self.eval(stmt.expr, env))}
            elif isinstance(stmt, S.LetTuple):
                whole = self.delay(stmt.expr, env)
                parts: Env = {}
                for index, name in enumerate(stmt.names):
                    part = Thunk(_component(whole, index, len(stmt.names)))
                    parts[name] = part if self.mode == MACRO else part.force()
                env = {**env, **parts}
            else:
                env = {**env, stmt.name: self.delay(stmt.expr, env)}
        return env

    def _eval_Index(self, expr: S.Index, env: Env) -> Value:
        base, index = self.eval(expr.base, env), self.eval(expr.index, env)
        return index_value(base, index)

    def _eval_Call(self, expr: S.Call, env: Env) -> Value:
        func: Value = self._lookup(expr.func, env)
        for arg in expr.args:
            func = func(self.eval(arg, env))
        return func

    # ------------------------------------------------------------ running a definition

    def call_definition(self, name: str, arguments: list[Value], frame: Frame | None = None) -> Value:
        """Apply a definition to its arguments (its signature's lengths in
        ``frame``, `fuzzpy.runtime.lengths`) and sample a `fuzzy` result, on
        a thread whose stack holds `MAX_RECURSIVE_CALLS` levels of recursion
        (so the limit is the documented one, not Python's stack)."""

        def work() -> Value:
            value = self._def_value(self._defs[name], frame) if frame and name in self._defs else self._lookup(name, {})
            for argument in arguments:
                value = value(exact_value(argument))
            return sample(value) if isinstance(value, Fuzzy) else value

        return on_large_stack(work) if self.recursive else work()


def _component(whole: Value, index: int, size: int) -> Callable[[], Value]:
    def get() -> Value:
        parts = tuple(force(whole))
        if len(parts) != size:
            raise RuntimeFailure("FZ514", "`let (...)` takes apart a tuple of another size")
        return parts[index]

    return get


class _Deferred:
    """A parameterless `def`, evaluated on first use."""

    def __init__(self, compute: Callable[[], Value]) -> None:
        self._compute = compute
        self._done = False
        self._value: Value = None

    def force(self) -> Value:
        if not self._done:
            self._value = self._compute()
            self._done = True
        return self._value


def sample(value: Value) -> Value:
    """Run a distribution; what it releases is a macro-level value, exact
    (a mechanism's float result is read as the rational it is)."""
    value = force(value)
    if not isinstance(value, Fuzzy):
        raise RuntimeFailure("FZ514", "`sample` expects a `fuzzy` value")
    return exact_value(value.sample())


def exact_value(value: Value) -> Value:
    """Floats and numpy numbers (from mechanisms, arguments) as exact values,
    inside tuples, lists and records too."""
    if isinstance(value, float) or is_instance(value, "numpy", "generic"):
        return X.to_exact(value)
    if isinstance(value, tuple):
        return tuple(exact_value(v) for v in value)
    if isinstance(value, list):
        return [exact_value(v) for v in value]
    if isinstance(value, Record):
        return Record({k: exact_value(v) for k, v in value.fields.items()})
    if is_instance(value, "numpy", "ndarray") and not is_exact_vector(value) and value.ndim == 1 and value.dtype.kind in "iuf":
        return vector(value)
    return value
