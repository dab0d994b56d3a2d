"""Inference of types, sensitivities and privacy costs for expressions.

Bidirectional in the style of Pierce & Turner's local type inference: every
rule *infers* a `Judgment`, and takes an optional *hint* (the type the context
expects) that lets lambdas learn their parameter types and list literals
become vectors. `check` is inference followed by a comparison with the
expected type (`coerce`), which says what was expected and why.

The sensitivity rules are Fuzz's (Reed & Pierce, ICFP 2010, fig. 3) read
bottom-up: contexts are built from the leaves, `let` scales the bound
expression's context by the body's use of the variable, `if`/`case` join their
branches and scale the scrutinee (`case_scale`), tensors add and with-pairs
join. Distribution-valued expressions carry a privacy context instead
(`costs.py`), composed by `sample` (the monad's bind).

Applications and primitives live in `apply.py` and the primitive modules;
blocks and binders in `blocks.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from fuzzpy.accounting.events import SymbolicPure
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import Binding, DefSig, Env, Globals, Judgment
from fuzzpy.checker.costs import Blame, CostCtx, infinite, one_draw
from fuzzpy.checker.elaborate import static_arith, static_value
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.explain import Tracer
from fuzzpy.checker.lengths import Lengths
from fuzzpy.checker.terms import source_name
from fuzzpy.checker.typerel import (
    contains_function,
    contains_fuzzy,
    is_numeric,
    join_types,
    norm_factor,
    subtype,
)
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.diagnostics import Diagnostic, Label
from fuzzpy.language.sensitivity import INF, ONE, ZERO, Sens, case_scale
from fuzzpy.language.source import Span
from fuzzpy.language.symbolic import Poly

_COMPARE: dict[str, Callable[[Fraction, Fraction], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}

Handler = Callable[[S.Expr, "T.Type | None"], Judgment]


class Inferencer:
    """Checks the expressions of one program; one instance per program."""

    def __init__(
        self,
        globals_: Globals,
        signature_of: Callable[[str, Span], DefSig],
        tracer: Tracer | None = None,
    ) -> None:
        self.globals = globals_
        self.signature_of = signature_of
        self.env = Env()
        self.tracer = tracer
        self.soft_errors: list[Diagnostic] = []
        self.lengths = Lengths()
        #: the `vsum`s and vector-valued `map`s of the definition being
        #: checked: the node's span and the vectors' length (resolved when the
        #: definition concludes; see `CheckedProgram.vector_lengths`)
        self.vector_sites: dict[Span, T.Length | None] = {}
        #: the products `c * e` / `e * c` with a static c = 0 of the definition
        #: being checked: e is not evaluated at run time, so `run` needs the
        #: length of e's vectors (None: e is a number); see `CheckedProgram.zero_products`
        self.zero_sites: dict[Span, T.Length | None] = {}
        #: `len` of a vector, by the span of the application: its length, which
        #: `run` uses instead of evaluating the vector; see `CheckedProgram.length_reads`
        self.len_sites: dict[Span, T.Length] = {}
        #: every lambda, by its span: the variables it captures and uses
        #: (sensitivity above 0); see `CheckedProgram.captures`
        self.captures: dict[Span, frozenset[str]] = {}
        #: every lambda, by its span: the local variables it uses at 0 (and
        #: at no cost), with their types; see `CheckedProgram.zero_captures`
        self.zero_captures: dict[Span, dict[str, T.Type]] = {}
        #: each use of a definition in the one being checked: the callee and
        #: the fresh length variables its signature was instantiated with
        self.call_sites: dict[Span, tuple[str, dict[T.LenVar, T.Length]]] = {}
        #: the static parameters of the definition being checked that a noise
        #: scale has named (they are its symbolic parameters)
        self.symbolic_used: set[str] = set()
        #: the bindings of the static parameters of the definition being checked
        self.static_params: dict[str, Binding] = {}
        #: static parameters named where their value is needed as a number (a
        #: `gauss` sigma, a `loop` count, a clamp bound, a sampling rate, an
        #: epsilon under `subsample`): the definition's cost is then not one
        #: expression, so it is checked at each call's numbers only (the
        #: check of the program written with them, C++-template style), and
        #: its generic pass reads them as the placeholder 1 for types only.
        #: name -> why (the first position that named it)
        self.deferred: dict[str, str] = {}
        #: the `(n : nat)` parameters of the definition being checked: static
        #: indices (DFuzz's `forall n : nat`), read as numbers in arithmetic
        #: (`n * x` is n-sensitive), in bounds (`[n * e]`) and in types (`vec[n]`)
        self.index_params: set[str] = set()
        #: inside an argument given to a callee's static parameter (> 0): the
        #: caller's `nat` indices there are index terms, not numbers read
        self.static_argument = 0
        #: where the generic pass gave a vector a placeholder length (`group[n]`)
        self.placeholder_length: Span | None = None
        #: a definition's signature at given values of its static parameters
        #: (set by the driver: each call is checked at its own numbers)
        self.instance_of: Callable[[str, tuple[Poly, ...], Span], DefSig] | None = None
        from fuzzpy.checker import apply, blocks, literals

        self._handlers: dict[type, Handler] = {
            **literals.handlers(self),
            **blocks.handlers(self),
            **apply.handlers(self),
            S.Binary: self._binary,
            S.Unary: self._unary,
            S.If: self._if,
            S.Return: self._return,
            S.Ann: self._ann,
        }

    # ------------------------------------------------------------ entry points

    def infer(self, expr: S.Expr, hint: T.Type | None = None) -> Judgment:
        handler = self._handlers.get(type(expr))
        if handler is None:
            raise CheckError(
                "FZ215",
                f"`{_kind(expr)}` is only allowed inside a `mechanism`",
                expr.span,
            )
        if self.tracer is None:
            return handler(expr, hint)
        self.tracer.enter()
        judgment = handler(expr, hint)
        self.tracer.leave(expr, judgment)
        return judgment

    def check(self, expr: S.Expr, expected: T.Type, why: str) -> Judgment:
        return self.coerce(self.infer(expr, expected), expected, expr.span, why)

    def note(self, text: str) -> None:
        """Explain the current rule (shown by `check --explain`)."""
        if self.tracer is not None:
            self.tracer.note(text)

    def visible_constants(self) -> dict[str, Fraction]:
        """The top-level constants a static position may name here: a local
        variable of the same name (a parameter, a `let`) hides the constant,
        so `laplace[e]` under `fun e -> ...` is not the constant `e`."""
        visible = {name: value for name, value in self.globals.constants.items() if self.env.lookup(name) is None}
        # a static parameter checked at a call's number is that number
        # (the call's instance is today's check of the program written with it)
        for name, binding in self.static_params.items():
            if binding.symbolic is not None and binding.symbolic.is_const and self.env.lookup(name) is binding:
                visible[name] = binding.symbolic.value
            elif name in self.deferred and self.env.lookup(name) is binding:
                visible[name] = Fraction(1)  # the generic pass's placeholder: its costs are discarded
        return visible

    def defer(self, symbols: frozenset[str], what: str) -> bool:
        """Whether a static position that needs a number (``what``) may
        depend on ``symbols`` (the symbols of the polynomial found there):
        only through the definition's own static parameters (not hidden by
        a local) whose value here is not a number, which are then recorded
        as deferred (the definition is checked at each call's numbers).
        False otherwise (the caller refuses it)."""
        covered: set[str] = set()
        for name, binding in self.static_params.items():
            value = binding.symbolic
            if value is None or value.is_const or self.env.lookup(name) is not binding:
                continue
            if value.symbols() & symbols:
                covered |= value.symbols()
                self.symbolic_used.add(name)
                self.deferred.setdefault(name, what)
        return bool(symbols) and symbols <= covered

    def symbolic_value(self, expr: S.Expr) -> Poly | None:
        """A static expression over the static parameters in scope, as a
        polynomial: literals, visible constants, parameters, `+`, `-`, `*`,
        and division by a non-zero static number; None otherwise (a
        parameter in a denominator is not a polynomial)."""
        if isinstance(expr, S.Var):
            binding = self.env.lookup(expr.name)
            if binding is not None:
                if binding.symbolic is not None:
                    self.symbolic_used.add(expr.name)
                return binding.symbolic
        if isinstance(expr, S.Unary) and expr.op == "-":
            inner = self.symbolic_value(expr.operand)
            return None if inner is None else -inner
        if isinstance(expr, S.Ann):
            return self.symbolic_value(expr.expr)
        if isinstance(expr, S.Binary) and expr.op in ("+", "-", "*", "/"):
            left, right = self.symbolic_value(expr.left), self.symbolic_value(expr.right)
            if left is None or right is None:
                return None
            if expr.op == "/" and not right.is_const:
                # dividing by an index term of one term over `nat` indices (each >= 1): a
                # Laurent monomial (`0.1 / n`), positive at every call (DFuzz's index terms)
                inverse = right.inverse() if right.symbols() <= self.index_symbols() else None
                return None if inverse is None else _bounded(left * inverse, expr)
            if expr.op == "/" and right.value == 0:
                return None
            return _bounded(_poly_arith(expr.op, left, right), expr)
        value = static_value(expr, self.visible_constants())
        return None if value is None else Poly.const(value)

    def zero_from_parameters(self, exprs: tuple[S.Expr, ...], what: str, span: Span) -> bool:
        """A static 0 (a factor, a `sum` bound, `dot` weights) that names a
        static parameter: the interpreter finds static zeros lexically
        (`fuzzpy.runtime.statics`, which reads a parameter as data), so it
        would evaluate what the checker scaled by 0 -- which may fail on one
        dataset only. At a call's numbers it is refused (FZ202); in the
        generic pass (placeholders, results discarded) it is not recorded
        (True: skip recording it)."""
        names = sorted({n for e in exprs for n in self.static_parameters_in(e)})
        if not names:
            return False
        values = [self.static_params[n].symbolic for n in names]
        if any(v is None or not v.is_const for v in values):
            return True
        shown = ", ".join(f"{n} = {v.value}" for n, v in zip(names, values, strict=True) if v is not None)
        raise CheckError(
            "FZ202",
            f"{what} is 0 at this call ({shown}): a 0 that comes from a parameter is refused, since `run` would still "
            "evaluate what it scales by 0",
            span,
            hint="give the parameter a value that does not make it 0, or write that case without the parameter",
        )

    def static_parameters_in(self, expr: S.Expr) -> list[str]:
        """The static parameters of the definition being checked that
        ``expr`` names (not hidden by a local name)."""
        from fuzzpy.checker.terms import free_vars

        return sorted(
            name for name in free_vars(expr)
            if name in self.static_params and self.env.lookup(name) is self.static_params[name]
        )

    def refuse_local_names(self, expr: S.Expr, what: str, epsilon: bool) -> None:
        """A static position (``what``) that is not a static number and names
        a local variable: refused (FZ202) with the rule it breaks, instead of
        "must be a static number". Only a noise epsilon (``epsilon``) may name
        a definition's static parameters, as a polynomial with positive
        coefficients (DFuzz's index terms, Gaboardi et al. POPL 2013)."""
        from fuzzpy.checker.terms import free_vars

        local = sorted(n for n in free_vars(expr) if self.env.lookup(n) is not None)
        if not local:
            return
        rule = ("a noise epsilon may name a definition's `num` parameters as a polynomial with positive coefficients "
                "(`eps / 2`, `3 * eps + 0.1`)")
        for name in local:
            binding = self.env.lookup(name)
            assert binding is not None
            static = self.static_params.get(name)
            if binding.rec_param:
                reason = (f"`{name}` is a parameter of a `def rec`, which takes no static parameters (each call would be "
                          "checked again at its numbers); use a top-level constant or a non-recursive definition")
            elif static is not None and binding is not static:
                reason = (f"`{name}` here is a local name (bound by `fun`, `let` or `sample`) that hides the parameter "
                          f"`{name}`: only the definition's own parameter may stand here; rename one of them")
            elif static is not None and not epsilon:
                reason = (f"it names the parameter `{name}` in an expression that is not arithmetic (`+`, `-`, `*`, `/`) "
                          "over the definition's parameters and constants; here a number is needed at each call")
            elif static is not None:
                poly = self.symbolic_value(expr)
                if poly is None:
                    reason = f"it is not a polynomial in `{name}` (a parameter may not divide, nor be compared): {rule}"
                else:
                    reason = f"it is {poly} for every value of the parameter(s), and an epsilon must be positive: {rule}"
            else:
                reason = (f"`{name}` is a local name (bound by `fun`, `let` or `sample`); a static position takes a "
                          f"literal or a top-level constant, and {rule}")
            raise CheckError("FZ202", f"{what} must be a static number: {reason}", expr.span,
                             hint="write a literal or a top-level `let` constant here")

    def visible_categories(self) -> dict[str, tuple[str, ...]]:
        """The top-level category lists `group[...]` may name here (a local
        variable of the same name hides one, as for `visible_constants`)."""
        return {name: value for name, value in self.globals.categories.items() if self.env.lookup(name) is None}

    def checkpoint(self) -> tuple[int, tuple[int, int] | None, int]:
        """The diagnostics, trace and length unifications so far, for an
        attempt that may be retried."""
        return len(self.soft_errors), (self.tracer.mark() if self.tracer is not None else None), self.lengths.mark()

    def rollback(self, point: tuple[int, tuple[int, int] | None, int]) -> None:
        """Forget what a failed attempt reported and unified (bindings of
        variables restore themselves)."""
        del self.soft_errors[point[0] :]
        if self.tracer is not None and point[1] is not None:
            self.tracer.reset(point[1])
        self.lengths.undo(point[2])

    def soft_error(self, diagnostic: Diagnostic) -> None:
        self.soft_errors.append(diagnostic)

    def coerce(self, j: Judgment, expected: T.Type, span: Span, why: str) -> Judgment:
        """Check that ``j`` fits ``expected``, converting vector norms (the
        context is scaled by the conversion's factor)."""
        factor = self.conversion_factor(j.type, expected, span, why)
        if factor != ONE:
            was, now = _rows_type(j.type), _rows_type(expected)
            assert was is not None and now is not None
            kind = "vec" if isinstance(j.type, T.TVec) else "mat"
            self.note(f"read {kind}[{was.norm}] in the {kind}[{now.norm}] metric: sensitivity x {factor}")
            U.scale_ctx(j.ctx, factor, span, f"converted from {kind}[{was.norm}] to {kind}[{now.norm}]")
        if (_rows_type(j.type) is not None and _rows_type(expected) is not None
                or isinstance(j.type, T.TInt) and isinstance(expected, T.TNum)):
            j.type = expected  # read in the expected metric from here on
        return j

    def conversion_factor(self, actual: T.Type, expected: T.Type, span: Span, why: str) -> Sens:
        """How much farther a value of type ``actual`` moves when read as an
        ``expected``: 1 for a subtype, a norm conversion's factor for a vector
        (sqrt(n) or n, `typerel.norm_factor`), a type error otherwise. Whoever
        reads a value in another type's metric must scale by it."""
        if subtype(actual, expected, self.lengths):
            return ONE
        if isinstance(actual, T.TVec) and isinstance(expected, T.TVec):
            return self._row_factor(actual, expected, (actual, expected, span, why), (
                f"converting `{actual}` to `{expected}` multiplies the sensitivity by the vector's length, "
                "which is not known here",
                "build the vector with a list literal, `tabulate` or `counts`, whose length is static"))
        if _is_matrix(actual) and _is_matrix(expected):
            # a matrix read in another norm: every row converts by the same
            # factor, so the sum of the rows' distances does too (Duet's
            # matrix norm conversions, Near et al. OOPSLA 2019; the row
            # inequalities are `typerel.norm_factor`'s)
            assert isinstance(actual, T.TList) and isinstance(expected, T.TList)
            rows, wanted = actual.elem, expected.elem
            assert isinstance(rows, T.TVec) and isinstance(wanted, T.TVec)
            return self._row_factor(rows, wanted, (actual, expected, span, why), (
                f"reading a `mat[{rows.norm}] num` as a `mat[{wanted.norm}] num` multiplies the sensitivity "
                "by a function of its number of columns, which is not known here",
                "build the rows with list literals (or `vsums`), whose length is static, or keep the norm"))
        raise self.mismatch(expected, actual, span, why)

    def _row_factor(self, row: T.TVec, wanted: T.TVec, where: tuple[T.Type, T.Type, Span, str],
                    unknown: tuple[str, str]) -> Sens:
        """A vector (or each row of a matrix) read in another norm: its lengths
        unified, `typerel.norm_factor`; FZ214 (``unknown``: message, hint)
        when the factor needs a length that is not known."""
        actual, expected, span, why = where
        if not self.lengths.unify(row.length, wanted.length):
            raise self.mismatch(expected, actual, span, why)
        factor = norm_factor(row.norm, wanted.norm, self.lengths.static(row.length))
        if factor is None:
            raise CheckError("FZ214", unknown[0], span, hint=unknown[1])
        return factor

    def mismatch(self, expected: T.Type, found: T.Type, span: Span, why: str) -> CheckError:
        """A type mismatch; vectors' lengths are spelled out when they are
        what differs (they are not written in the source)."""
        if str(expected) == str(found):
            expected_text, found_text = self.lengths.show(expected), self.lengths.show(found)
            note = "the length of a vector is part of its type: vectors of different lengths are infinitely far apart"
            return CheckError("FZ201", f"expected {expected_text} but found {found_text}: {why}", span, notes=(note,))
        return type_mismatch(expected, found, span, why)

    # ------------------------------------------------------------ scoping helpers

    def bind(self, name: str, binding: Binding) -> Binding | None:
        return self.env.bind(name, binding)

    def unbind(self, name: str, previous: Binding | None) -> None:
        self.env.unbind(name, previous)

    def elaborate(self, ty: S.TypeExpr, rigid: bool = False, constants: dict[str, Fraction] | None = None) -> T.Type:
        """A type written in a definition, its static numbers read in the
        scope where it stands (``constants``, by default those no local name
        hides); each vector gets a fresh length variable (rigid: a length
        known only at run time)."""
        from fuzzpy.checker.elaborate import elaborate

        scope = self.visible_constants() if constants is None else constants
        return self.lengths.freshen(elaborate(ty, self.globals.aliases, scope), rigid)

    # ------------------------------------------------------------ operators

    def _binary(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Binary)
        op = expr.op
        if op in ("&&", "||"):
            left = self.check(expr.left, T.BOOL, f"the operands of `{op}` are booleans")
            right = self.check(expr.right, T.BOOL, f"the operands of `{op}` are booleans")
            return self._discrete(expr, left, right, T.BOOL, f"combined with `{op}`")
        if op in ("*", "/"):
            product = self._index_product(expr, hint)
            if product is not None:
                return product
        left, right = self._operands(expr, hint)
        if op in ("==", "!="):
            for side, j in ((expr.left, left), (expr.right, right)):
                self._comparable(side, j, op)
            if join_types(left.type, right.type, self.lengths) is None:
                raise self.mismatch(left.type, right.type, expr.right.span, f"both sides of `{op}` must have the same type")
            return self._discrete(expr, left, right, T.BOOL, f"compared with `{op}`")
        if op in ("<", "<=", ">", ">="):
            for side, j in ((expr.left, left), (expr.right, right)):
                if not is_numeric(j.type):
                    raise type_mismatch(T.NUM, j.type, side.span, f"`{op}` compares numbers")
            return self._discrete(expr, left, right, T.BOOL, f"compared with `{op}`")
        if op in ("+", "-"):
            return self._additive(expr, left, right)
        if op in ("*", "/"):
            return self._multiplicative(expr, left, right)
        raise CheckError("FZ216", f"unknown operator `{op}`", expr.span)

    def index_symbols(self) -> frozenset[str]:
        """The symbols the `nat` indices of the definition being checked
        stand for here (themselves, or a caller's indices)."""
        found: frozenset[str] = frozenset()
        for name in self.index_params - self.deferred.keys():  # a deferred index is read as a number
            binding = self.static_params.get(name)
            if binding is not None and binding.symbolic is not None and self.env.lookup(name) is binding:
                found |= binding.symbolic.symbols()
        return found

    def _index_factor(self, side: S.Expr) -> Poly | None:
        """``side`` as an index term over the definition's `nat` indices
        that are symbols here (`n`, `2 * n + 1`, `n * m`), with positive
        coefficients so that it is its own absolute value; None otherwise."""
        named = self.static_parameters_in(side)
        if not named or not set(named) <= self.index_params or set(named) & self.deferred.keys():
            return None
        values = [self.static_params[n].symbolic for n in named]
        if any(v is None or v.is_const for v in values):
            return None
        poly = self.symbolic_value(side)
        if poly is None or poly.is_const or any(c <= 0 for _, c in poly.terms):
            return None
        return poly

    def _index_product(self, expr: S.Binary, hint: T.Type | None) -> Judgment | None:
        """`k * e` or `e * k` with k an index term over `nat` indices: e's
        context scaled by k, a symbolic sensitivity (DFuzz, Gaboardi et al.
        POPL 2013: scaling by an index term; Fuzz's `c * e` rule, Reed &
        Pierce ICFP 2010, at every value of the indices)."""
        sides = ((expr.left, expr.right), (expr.right, expr.left)) if expr.op == "*" else ((expr.right, expr.left),)
        for side, other in sides:
            poly = self._index_factor(side)
            if poly is not None and expr.op == "/":
                poly = poly.inverse()  # `e / n`: scaled by 1 / n (positive at every call)
            if poly is None:
                continue
            whole = expr.op == "*" and not poly.divides and all(c.denominator == 1 for _, c in poly.terms)
            j = self.infer(other, hint if expr.op == "*" else None)
            factor = Judgment(T.INT if whole else T.NUM, {})
            left, right = (factor, j) if side is expr.left else (j, factor)
            result = self._arith_type(expr, left, right)
            if expr.op == "/" and isinstance(result, T.TInt):
                result = T.NUM
            scale = Sens.symbolic(poly)
            self.note(f"multiplied by the index term {poly}: sensitivity x {scale} for every value of the indices")
            return Judgment(result, U.scale_ctx(j.ctx, scale, expr.span, f"multiplied by {poly}"))
        return None

    @staticmethod
    def _comparable(side: S.Expr, j: Judgment, op: str) -> None:
        """`==` compares data. A distribution compared as a value would drop
        its privacy cost (its judgment carries the cost, not a context), and
        functions have no computable equality."""
        if j.is_fuzzy or contains_fuzzy(j.type):
            raise CheckError("FZ213", f"`{op}` compares values, not distributions: `sample` it first", side.span)
        if contains_function(j.type):
            raise CheckError("FZ201", f"`{op}` cannot compare functions (found `{j.type}`)", side.span)

    def _operands(self, expr: S.Binary, hint: T.Type | None) -> tuple[Judgment, Judgment]:
        """Infer both sides; a list literal next to a vector is read as one."""
        side_hint = hint if expr.op in ("+", "-", "*", "/") else None
        left = self.infer(expr.left, side_hint)
        right_hint = left.type if isinstance(left.type, T.TVec) else side_hint
        right = self.infer(expr.right, right_hint)
        if isinstance(right.type, T.TVec) and isinstance(expr.left, S.ListLit) and not isinstance(left.type, T.TVec):
            left = self.infer(expr.left, right.type)
        return left, right

    def _discrete(self, expr: S.Expr, left: Judgment, right: Judgment, result: T.Type, how: str) -> Judgment:
        """Comparisons and boolean operators: infinitely sensitive in their
        operands, since the result is discrete (0 or infinitely far)."""
        reason = f"{how}: the result is discrete, so any change in the operands may flip it"
        ctx = U.plus(U.scale_ctx(left.ctx, INF, expr.span, reason), U.scale_ctx(right.ctx, INF, expr.span, reason))
        self.note(f"{how}: infinitely sensitive in every variable of its operands")
        return Judgment(result, ctx)

    def _additive(self, expr: S.Binary, left: Judgment, right: Judgment) -> Judgment:
        result = self._arith_type(expr, left, right)
        static = None
        if left.static is not None and right.static is not None:
            static = static_arith(expr.op, left.static, right.static, expr)
        self.note(f"`{expr.op}` is 1-sensitive in each side: the contexts add")
        return Judgment(result, U.plus(left.ctx, right.ctx), static=static)

    def _multiplicative(self, expr: S.Binary, left: Judgment, right: Judgment) -> Judgment:
        result = self._arith_type(expr, left, right)
        if expr.op == "/":
            result = T.NUM if isinstance(result, T.TInt) else result
        if left.static is not None and right.static is not None:
            value = static_arith(expr.op, left.static, right.static, expr)
            return Judgment(result, U.plus(left.ctx, right.ctx), static=value)
        if expr.op == "/" and right.static is not None:
            if right.static == 0 and self.zero_from_parameters((expr.right,), "the divisor", expr.right.span):
                # a placeholder's zero in the generic pass: each call divides by its own number
                return Judgment(result, U.plus(left.ctx, right.ctx))
            if right.static == 0:
                raise CheckError("FZ203", "division by zero", expr.right.span)
            factor = Sens(abs(1 / right.static))
            self.note(f"divided by the constant {right.static}: sensitivity x {factor}")
            scaled = U.scale_ctx(left.ctx, factor, expr.span, f"divided by {right.static}")
            return Judgment(result, U.plus(scaled, right.ctx))
        if expr.op == "*" and (left.static is not None or right.static is not None):
            constant, other = (left, right) if left.static is not None else (right, left)
            assert constant.static is not None
            side = expr.left if constant is left else expr.right
            if constant.static == 0 and not self.zero_from_parameters((side,), f"the factor `{_shown(side)}`", side.span):
                # `run` makes the zero of e's type without evaluating e
                self.zero_sites[expr.span] = other.type.length if isinstance(other.type, T.TVec) else None
            factor = Sens(abs(constant.static))
            self.note(f"multiplied by the constant {constant.static}: sensitivity x {factor}")
            scaled = U.scale_ctx(other.ctx, factor, expr.span, f"multiplied by {constant.static}")
            return Judgment(result, U.plus(scaled, constant.ctx))
        reason = f"`{expr.op}` of two non-constant values is not Lipschitz (x * y can change without bound)"
        self.note(f"`{expr.op}` of two non-constants: infinitely sensitive in both sides")
        ctx = U.plus(U.scale_ctx(left.ctx, INF, expr.span, reason), U.scale_ctx(right.ctx, INF, expr.span, reason))
        return Judgment(result, ctx)

    def _arith_type(self, expr: S.Binary, left: Judgment, right: Judgment) -> T.Type:
        lt, rt = left.type, right.type
        if is_numeric(lt) and is_numeric(rt):
            return T.INT if isinstance(lt, T.TInt) and isinstance(rt, T.TInt) else T.NUM
        if isinstance(lt, T.TVec) and isinstance(rt, T.TVec) and expr.op in ("+", "-"):
            if lt.norm != rt.norm or not self.lengths.unify(lt.length, rt.length):
                why = f"both vectors of `{expr.op}` must use the same norm and have the same length"
                raise self.mismatch(lt, rt, expr.right.span, why)
            return lt
        if expr.op == "*" and is_numeric(lt) and isinstance(rt, T.TVec):
            return rt
        if expr.op in ("*", "/") and isinstance(lt, T.TVec) and is_numeric(rt):
            return lt
        bad, side = (lt, expr.left) if not (is_numeric(lt) or isinstance(lt, T.TVec)) else (rt, expr.right)
        raise type_mismatch(T.NUM, bad, side.span, f"`{expr.op}` works on numbers (and vectors)")

    def _unary(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Unary)
        if expr.op in ("not", "!"):
            inner = self.check(expr.operand, T.BOOL, "`not` negates a boolean")
            return self._discrete(expr, inner, Judgment(T.BOOL), T.BOOL, "negated with `not`")
        inner = self.infer(expr.operand, hint)
        if not (is_numeric(inner.type) or isinstance(inner.type, T.TVec)):
            raise type_mismatch(T.NUM, inner.type, expr.operand.span, "`-` negates a number")
        self.note("negation is 1-sensitive")
        static = None if inner.static is None else -inner.static
        return Judgment(inner.type, inner.ctx, static=static)

    # ------------------------------------------------------------ if / return / annotation

    def _if(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        """`if` is `case` on bool (whose branches bind nothing): the branches
        join (max, not sum), the condition's context is scaled by
        case_scale(0) (Fuzz's case rule never scales by less than a positive
        amount). With distribution-valued branches, choosing a release by a
        condition on private data costs infinity in that data."""
        assert isinstance(expr, S.If)
        cond = self.check(expr.cond, T.BOOL, "the condition of `if` must be a boolean")
        sides = self._opposite_injections(expr.then, expr.orelse) if hint is None else None
        if sides is not None:
            then, orelse = sides
        else:
            then = self.infer(expr.then, hint)
            orelse = self.infer(expr.orelse, hint if hint is not None else then.type)
        joined = join_types(then.type, orelse.type, self.lengths)
        if joined is None:
            then = self._retry_against(expr.then, then, orelse.type)
            joined = join_types(then.type, orelse.type, self.lengths)
        if joined is None:
            raise self.mismatch(then.type, orelse.type, expr.orelse.span, "both branches of `if` must have the same type")
        known = self._static_condition(expr.cond)
        if known is not None:
            # a condition on static numbers only (literals, constants, a call's
            # static arguments): the run takes this branch on every dataset, so
            # only its cost and uses count (both branches are still checked)
            taken = then if known else orelse
            self.note(f"the condition is {'true' if known else 'false'} at these static numbers: only that branch runs")
            return Judgment(joined, dict(taken.ctx), cost=None if taken.cost is None else dict(taken.cost))
        if isinstance(joined, T.TFuzzy):
            assert then.cost is not None and orelse.cost is not None
            from fuzzpy.checker import costs as C

            cost = C.join_ctx(then.cost, orelse.cost)
            self.branch_on_private(cost, cond.ctx, expr.span, "`if`")
            self.note("branches join; any variable the condition depends on gets infinite cost")
            return Judgment(joined, {}, cost=cost)
        ctx = U.join_ctx(then.ctx, orelse.ctx)
        scrutinee = U.scale_ctx(cond.ctx, case_scale(ZERO), expr.cond.span, "the condition of `if`")
        self.note("branches join (max); the condition's context is added")
        return Judgment(joined, U.plus(ctx, scrutinee))

    def _static_condition(self, cond: S.Expr) -> bool | None:
        """The value of a condition over static numbers (comparisons of
        static arithmetic, `&&`, `||`, `not`, literals), or None."""
        if isinstance(cond, S.BoolLit):
            return cond.value
        if isinstance(cond, S.Unary) and cond.op in ("not", "!"):
            inner = self._static_condition(cond.operand)
            return None if inner is None else not inner
        if isinstance(cond, S.Binary) and cond.op in ("&&", "||"):
            left, right = self._static_condition(cond.left), self._static_condition(cond.right)
            if left is None or right is None:
                return None
            return (left and right) if cond.op == "&&" else (left or right)
        if isinstance(cond, S.Binary) and cond.op in _COMPARE:
            constants = self.visible_constants()
            a, b = static_value(cond.left, constants), static_value(cond.right, constants)
            if a is None or b is None:
                return None
            return _COMPARE[cond.op](a, b)
        return None

    def _opposite_injections(self, a: S.Expr, b: S.Expr) -> tuple[Judgment, Judgment] | None:
        """`if c then inl x else inr y` (or the reverse) with no expected
        type: each branch fixes one side of the sum, as ML infers it."""
        first, second = self._injection(a), self._injection(b)
        if first is None or second is None or first[0] == second[0]:
            return None
        payloads = []
        for _, payload in (first, second):
            j = self.infer(payload)
            if j.is_fuzzy or contains_fuzzy(j.type):
                raise CheckError("FZ213", "a distribution cannot be stored in a data structure: `sample` it first", payload.span)
            payloads.append(j)
        left, right = (payloads[0], payloads[1]) if first[0] == "inl" else (payloads[1], payloads[0])
        sum_type = T.TSum(left.type, right.type)
        self.note(f"`inl` / `inr` in the two branches: the sum `{sum_type}`, each injection 1-sensitive")
        return Judgment(sum_type, payloads[0].ctx), Judgment(sum_type, payloads[1].ctx)

    def _injection(self, expr: S.Expr) -> tuple[str, S.Expr] | None:
        if not (isinstance(expr, S.App) and isinstance(expr.func, S.Var) and expr.func.name in ("inl", "inr")):
            return None
        name = expr.func.name
        if self.env.lookup(name) is not None or name in self.globals.defs:
            return None  # a user's own `inl`
        return name, expr.arg

    def _retry_against(self, expr: S.Expr, j: Judgment, other: T.Type) -> Judgment:
        if isinstance(other, T.TVec) and isinstance(expr, S.ListLit):
            return self.infer(expr, other)
        return j

    def branch_on_private(self, cost: CostCtx, scrutinee: U.Ctx, span: Span, construct: str) -> None:
        for name, usage in scrutinee.items():
            if usage.sens.is_zero:
                continue
            cost[name] = infinite(
                Blame(
                    "FZ302",
                    span,
                    f"which distribution is released is chosen by {construct} on data that depends on `{source_name(name)}`",
                    hint="add noise to the condition (e.g. `sample` a noisy value first) or branch on public data only",
                )
            )

    def _return(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        """`return e`: the unit of the monad. A point mass moves infinitely far
        in max divergence when e moves, so every variable e depends on gets
        infinite cost."""
        assert isinstance(expr, S.Return)
        inner_hint = hint.inner if isinstance(hint, T.TFuzzy) else None
        inner = self.infer(expr.expr, inner_hint)
        if inner.is_fuzzy:
            raise CheckError("FZ213", "`return` of a distribution: `sample` it first", expr.expr.span)
        cost: CostCtx = {}
        for name, usage in inner.ctx.items():
            if not usage.sens.is_zero:
                cost[name] = infinite(
                    Blame(
                        "FZ301",
                        expr.span,
                        f"`return` releases a value that depends on `{source_name(name)}` without noise",
                        hint="add noise (laplace, gauss) before releasing, or return only sampled values",
                    )
                )
        self.note("return: post-processing of public and sampled values is free (Dwork & Roth 2014, Prop. 2.1); "
                  "returning anything else costs infinity")
        return Judgment(T.TFuzzy(inner.type), {}, cost=cost)

    def _ann(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Ann)
        expected = self.elaborate(expr.type)
        return self.check(expr.expr, expected, f"it is annotated `{expected}`")

    # ------------------------------------------------------------ costs from contexts

    def blame_for(self, key: str, usage: U.Usage, span: Span, what: str, label: str | None = None) -> Blame:
        """Why ``what`` costs infinity in the variable ``key``: the rule that scaled it by inf."""
        name = source_name(key)
        labels = (Label(span, label),) if label else ()
        if usage.sens.is_symbolic:  # an index term where this rule needs a number (DFuzz's n)
            return Blame("FZ306", span, f"{what} is {usage.sens}-sensitive in `{name}`, an expression over the "
                         "definition's `nat` parameters, where this rule needs a number", _HINTS["FZ306"], labels)
        source = U.infinity_source(usage)
        if source is None or source.span is None:
            return Blame("FZ306", span, f"{what} is infinitely sensitive in `{name}`", _HINTS["FZ306"], labels)
        code = source.code or "FZ306"
        message = f"{what} depends on `{name}` with infinite sensitivity: {source.reason}"
        return Blame(code, source.span, message, _HINTS.get(code), labels if span != source.span else ())

    def noise_cost(self, ctx: U.Ctx, span: Span, what: str, make: Callable[[Fraction], object],
                   pure: Fraction | Poly | None = None) -> CostCtx:
        """The privacy context of a noise primitive: one event per variable,
        built by ``make`` from its sensitivity; infinite where it is infinite.
        A sensitivity that is an index term over `nat` indices costs it
        times ``pure`` (the primitive's epsilon per unit of sensitivity, for
        a pure primitive whose cost is linear in the sensitivity); for any
        other primitive the definition is checked at each call's numbers."""
        cost: CostCtx = {}
        draw = object()  # this draw's identity, shared by its costs in every variable (`costs.merge_draw`)
        for name, usage in ctx.items():
            if usage.sens.is_zero:
                continue
            if usage.sens.is_symbolic and pure is not None:
                # a pure release of an index-term-sensitive value: cost poly * eps (DFuzz)
                assert usage.sens.poly is not None
                epsilon = usage.sens.poly * (pure if isinstance(pure, Poly) else Poly.const(pure))
                cost[name] = one_draw(SymbolicPure(Fraction(1), epsilon), draw)
                continue
            if usage.sens.is_symbolic and usage.sens.poly is not None and self.defer(
                    usage.sens.poly.symbols(), f"an index-term sensitivity under {what}, whose cost is not linear in it"):
                continue  # checked at each call's numbers (the generic pass's results are discarded)
            if usage.sens.is_inf:
                cost[name] = infinite(self.blame_for(name, usage, span, what, "released here"))
            else:
                assert usage.sens.value is not None
                cost[name] = one_draw(make(usage.sens.value), draw)  # type: ignore[arg-type]
        return cost


_HINTS = {
    "FZ303": "pass the database through the primitive's bag argument instead of capturing it",
    "FZ304": "clamp the rows with finite bounds, e.g. `sum[0, 100]`, and scale the noise to match",
    "FZ306": "noise cannot hide an infinitely sensitive value: compare or multiply only public or "
    "already released (sampled) values, or clamp first",
    "FZ307": "recursion may only pass public data along; use `loop[k]` for a bounded number of releases",
}


def type_mismatch(expected: T.Type, found: T.Type, span: Span, why: str) -> CheckError:
    return CheckError(
        "FZ201",
        f"expected `{expected}` but found `{found}`: {why}",
        span,
        notes=_field_order_note(expected, found),
    )


def _field_order_note(expected: T.Type, found: T.Type) -> tuple[str, ...]:
    """A note when the two types hold records with the same fields in
    another order: the order of a record's fields is part of its type
    (issue 31, F8)."""
    mine, theirs = _record_orders(expected), _record_orders(found)
    for order in mine:
        other = next((o for o in theirs if o != order and sorted(o) == sorted(order)), None)
        if other is not None:
            return (f"the order of a record's fields is part of its type: `{{{', '.join(order)}}}` and "
                    f"`{{{', '.join(other)}}}` differ; write the fields in one order (the declared one)",)
    return ()


def _record_orders(t: object) -> list[tuple[str, ...]]:
    """The field names of every record type inside `t`, in order."""
    import dataclasses

    found: list[tuple[str, ...]] = []
    stack = [t]
    while stack:
        item = stack.pop()
        if isinstance(item, T.TRecord):
            found.append(tuple(n for n, _ in item.fields))
            stack.extend(v for _, v in item.fields)
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return found


def _kind(expr: S.Expr) -> str:
    return {
        S.Call: "a C-style call",
        S.Index: "indexing",
        S.Noise: "lap/lapplus",
        S.Dist: "dist",
        S.Forall: "forall",
        S.InfLit: "inf",
    }.get(type(expr), type(expr).__name__)


__all__ = ["Inferencer", "type_mismatch"]


def _poly_arith(op: str, left: Poly, right: Poly) -> Poly:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    return left.scale(1 / right.value)


def _bounded(poly: Poly, expr: S.Expr) -> Poly:
    """A static value over parameters within the limits every static number
    keeps (`fuzzpy.language.limits`; FZ217 at the operation otherwise): at a
    call's numbers it is one, checked as a literal is (range, precision); over
    symbols its degree and terms are bounded, so that instantiating it never
    computes a huge number."""
    if poly.is_const:
        static_arith("+", poly.value, Fraction(0), expr)  # the range check of `elaborate.static_arith`
        return poly
    reason = poly.out_of_limits()
    if reason is not None:
        raise CheckError(
            "FZ217",
            f"this static value over parameters, `{_short(poly)}`, is out of range: {reason} "
            "(an epsilon over parameters keeps the bounds of every static number)",
            expr.span,
            hint="use a lower power of the parameter, or pass the caller a number",
        )
    return poly


def _short(poly: Poly) -> str:
    text = str(poly)
    return text if len(text) <= 60 else text[:57] + "..."


def _shown(expr: S.Expr) -> str:
    from fuzzpy.frontend.printer import expr as printed

    return printed(expr)


def _is_matrix(t: T.Type) -> bool:
    """A list of vectors of numbers: `mat[p] num`, however it was written."""
    return isinstance(t, T.TList) and isinstance(t.elem, T.TVec)


def _rows_type(t: T.Type) -> T.TVec | None:
    """The vector type ``t`` converts like: itself, or a matrix's rows."""
    if isinstance(t, T.TVec):
        return t
    if isinstance(t, T.TList) and isinstance(t.elem, T.TVec):
        return t.elem
    return None
