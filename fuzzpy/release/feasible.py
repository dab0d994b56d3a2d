"""What `run` refuses before charging: what it could not carry out exactly.

A run must never fail after the ledger was charged for a reason the program
already shows (issue 9). `refusals(checked, definition)` runs before the
quote and the charge and returns located diagnostics for:

* a Laplace or Gaussian release too small for the exact noise grid
  (`noise.undiscretisable`, FZ520);
* a static number in brackets outside what the runtime computes exactly:
  noise parameters, clamp bounds and clipping radii must be 0 or lie in the
  range of normal doubles [2^-1022, DBL_MAX] (per-row work compares rows
  with them as doubles, and the aggregates' grids are derived from them);
  `group[k]` at most 2^24 buckets (a release of every count must fit the
  noise grid) (FZ517); `loop[k]` at most 10^6 rounds and `iterate[k]` at most
  2^16, the checker's limits (FZ217);
* `expmech` over a literal empty candidate list, written at the call or
  passed to a definition's parameter that becomes the candidates (FZ517):
  the candidates are public, and the runtime has none to pick;
* `mrow` / `mentry` at macro level (not inside a function, not inside a
  branch) with an index outside a matrix whose shape the program or the
  run's arguments show: a matrix literal, `mat_of_rows` of a list literal,
  `mtranspose` of one, or a matrix parameter given by `--arg`, indexed by a
  static number or an `int` given by `--arg` (or arithmetic on them), also
  through `let`s and into the definitions the run's definition calls with
  all their arguments (FZ515; review s28d, F3, and s30c: it was charged,
  then failed);
* a `mechanism` the run calls whose exact arithmetic may multiply two values
  too large to keep expanded (`runtime.product_sizes`, FZ519; issue 29: it
  was refused after the charge, and on some datasets only).

Only the definitions the run reaches are inspected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction

from fuzzpy.accounting.events import Gaussian, Laplace
from fuzzpy.checker.result import CheckedDef, CheckedProgram
from fuzzpy.language import syntax as S
from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.limits import MAX_ITERATE_ROUNDS, MAX_STATIC_COUNT
from fuzzpy.language.source import Span
from fuzzpy.runtime.exact import EXACT_DBL_MAX
from fuzzpy.runtime.noise import MAX_RELEASE_ENTRIES, undiscretisable

SMALLEST_STATIC = Fraction(2) ** -1022
#: The checker's limits (FZ217), again for a count the run's arguments give.
_MOST_ROUNDS = {"loop": MAX_STATIC_COUNT, "iterate": MAX_ITERATE_ROUNDS}
#: Noise parameters, bounds and radii (positions where 0 is allowed get it).
_RANGED = {"laplace": "eps", "gauss": "sigma", "gauss_dp": "parameter", "geometric": "eps", "dgauss": "sigma", "expmech": "eps", "sum": "bound", "clip": "bound", "clip2": "radius", "vsum": "radius", "ptr_median": "parameter", "ptr_quantile": "parameter", "smooth_median": "parameter", "smooth_quantile": "parameter", "wishart": "parameter"}


def refusals(checked: CheckedProgram, definition: CheckedDef, public: Mapping[str, object] | None = None) -> list[Diagnostic]:
    """``public``: the run's public arguments (`--arg`, the API's `args=`)."""
    constants = {k: v for k, v in checked.constants.items() if isinstance(v, Fraction)}
    bodies = _reachable_bodies(checked.program, definition.name)
    prims = [p for body in bodies for p in _prims(body)]
    # the run's own definition reads its static parameters at the run's public values
    # (`--arg eps=1025` for `staircase[eps]`: a review found it charged, then refused)
    own = {p.name for p in definition.decl.params}
    given = {k: Fraction(v) for k, v in (public or {}).items()
             if k in own and isinstance(v, (int, Fraction)) and not isinstance(v, bool)}
    root = {id(p) for p in _prims(bodies[0])} if bodies else set()
    diagnostics = [d for prim in prims for d in _check_prim(prim, {**constants, **given} if id(prim) in root else constants)]
    diagnostics += _empty_candidates(checked.program, definition.name)
    diagnostics += _empty_candidate_arguments(checked.program, definition, public or {})
    diagnostics += _matrix_indices(checked.program, definition, public or {}, constants)
    diagnostics += _oversized_mechanisms(checked.program, definition.name, constants)
    for name, events in definition.privacy.items():
        found = undiscretisable(tuple(events))
        if found is not None:
            event, reason = found
            diagnostics.append(
                Diagnostic(
                    "FZ520",
                    f"the release in `{name}` is too small for the exact noise grid: {reason}",
                    _span_of_event(event, prims, constants, definition.decl.name_span),
                    hint="each Laplace release must cost at least eps = 2^-23 (1.2e-7) "
                    "(a Gaussian one needs sensitivity / sigma >= 2^-23)",
                )
            )
    return diagnostics


def _reachable_bodies(program: S.Program, root: str) -> list[S.Expr]:
    defs = {d.name: d for d in program.decls if isinstance(d, S.DefDecl)}
    seen, todo, bodies = {root}, [root], []
    while todo:
        decl = defs.get(todo.pop())
        if decl is None:
            continue
        bodies.append(decl.body)
        for name in _names(decl.body):
            if name in defs and name not in seen:
                seen.add(name)
                todo.append(name)
    return bodies


def _spine(expr: S.Expr) -> tuple[S.Expr, list[S.Expr]]:
    """`f a b c` as its head `f` and its arguments [a, b, c]."""
    args: list[S.Expr] = []
    while isinstance(expr, S.App):
        args.append(expr.arg)
        expr = expr.func
    return expr, args[::-1]


def _candidate_positions(program: S.Program) -> dict[str, set[int]]:
    """Per definition, the parameters that reach an `expmech`'s candidate list
    unchanged (directly or through another definition's such parameter)."""
    defs = [d for d in program.decls if isinstance(d, S.DefDecl)]
    positions: dict[str, set[int]] = {d.name: set() for d in defs}
    changed = True
    while changed:
        changed = False
        for decl in defs:
            names = [p.name for p in decl.params]
            for node in S.subtrees(decl.body):
                if not isinstance(node, S.App):
                    continue
                for arg in map(_bare, _candidate_args(node, positions)):
                    if isinstance(arg, S.Var) and arg.name in names and names.index(arg.name) not in positions[decl.name]:
                        positions[decl.name].add(names.index(arg.name))
                        changed = True
    return positions


def _candidate_args(app: S.App, positions: dict[str, set[int]]) -> list[S.Expr]:
    head, args = _spine(app)
    if isinstance(head, S.Prim) and head.name == "expmech":
        wanted = {0}
    elif isinstance(head, S.Var):
        wanted = positions.get(head.name, set())
    else:
        return []
    return [args[i] for i in sorted(wanted) if i < len(args)]


def _bare(expr: S.Expr) -> S.Expr:
    while isinstance(expr, S.Ann):
        expr = expr.expr
    return expr


def _empty_candidates(program: S.Program, root: str) -> list[Diagnostic]:
    """McSherry & Talwar's exponential mechanism picks from a non-empty public
    range; an empty one the program shows is refused before any charge."""
    positions = _candidate_positions(program)
    out: list[Diagnostic] = []
    seen: set[int] = set()
    for body in _reachable_bodies(program, root):
        for node in S.subtrees(body):
            if not isinstance(node, S.App):
                continue
            for arg in map(_bare, _candidate_args(node, positions)):
                if isinstance(arg, S.ListLit) and not arg.items and id(arg) not in seen:
                    seen.add(id(arg))
                    out.append(Diagnostic(
                        "FZ517", "`expmech` over an empty list of candidates: there is nothing to release",
                        arg.span, hint="give the exponential mechanism at least one candidate"))
    return out


def _empty_candidate_arguments(program: S.Program, definition: CheckedDef,
                               public: Mapping[str, object]) -> list[Diagnostic]:
    """The same for a run's argument: an empty list given (`--arg cs=[]`) to a
    parameter that becomes an `expmech`'s candidates (third review, F3: it
    was charged, then FZ517)."""
    decl = definition.decl
    reaching = _candidate_positions(program).get(decl.name, set())
    out = []
    for index in sorted(reaching):
        name = decl.params[index].name
        value = public.get(name)
        if isinstance(value, (list, tuple)) and not value:
            out.append(Diagnostic(
                "FZ517", f"`expmech` over an empty list of candidates: the argument `{name}` is empty, "
                "there is nothing to release", decl.params[index].span,
                hint=f"give `{name}` at least one candidate"))
    return out


def _literal_shape(expr: S.Expr) -> tuple[int, int] | None:
    """A matrix written as a list literal of list literals (or given to
    `mat_of_rows`): its rows and its first row's width."""
    expr = _bare(expr)
    head, args = _spine(expr)
    if isinstance(head, S.Var) and head.name == "mat_of_rows" and len(args) == 1:
        expr = _bare(args[0])
    if not isinstance(expr, S.ListLit):
        return None
    if not expr.items:
        return (0, 0)
    first = _bare(expr.items[0])
    return (len(expr.items), len(first.items)) if isinstance(first, S.ListLit) else None


#: What the pre-check knows of a value at macro level: a matrix's shape
#: (rows, columns), a whole number, or nothing (None).
_Known = tuple[int, int] | int | None
#: Calls into other definitions followed at most this deep (a recursive one is not re-entered).
_MAX_CALL_DEPTH = 16


def _matrix_indices(program: S.Program, definition: CheckedDef, public: Mapping[str, object],
                    constants: dict[str, Fraction]) -> list[Diagnostic]:
    """`mrow` / `mentry` with an index outside a matrix, both decidable before
    the run: the body is walked as every run evaluates it (not into a function
    nor a branch), carrying what `let`s, the run's public arguments and calls
    to other definitions bind (review s30c: a `let`-bound matrix, annotated or
    not, and an index given by `--arg` through a `let`, were charged, then
    failed with FZ515). The shape and the index are public, so the failure
    would be the same on every dataset; refused here, nothing is charged."""
    decl = definition.decl
    env: dict[str, _Known] = {p.name: _known_argument(public.get(p.name)) for p in decl.params}
    walker = _IndexWalk(program, constants)
    walker.walk(decl.body, env, (decl.name,))
    return walker.found


def _known_argument(value: object) -> _Known:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, Fraction) and value.denominator == 1):
        return int(value)
    if isinstance(value, (list, tuple)):
        rows = list(value)
        if not rows:
            return (0, 0)
        return (len(rows), len(rows[0])) if isinstance(rows[0], (list, tuple)) else None
    return None


class _IndexWalk:
    def __init__(self, program: S.Program, constants: dict[str, Fraction]) -> None:
        self.defs = {d.name: d for d in program.decls if isinstance(d, S.DefDecl)}
        self.constants = constants
        self.found: list[Diagnostic] = []
        self.seen: set[int] = set()
        self.walked: set[tuple[str, tuple[tuple[str, _Known], ...]]] = set()

    def walk(self, expr: object, env: dict[str, _Known], stack: tuple[str, ...]) -> None:
        if isinstance(expr, tuple):
            for item in expr:
                self.walk(item, env, stack)
        elif isinstance(expr, S.Lambda):
            return  # a function's body runs only where it is applied
        elif isinstance(expr, S.If):
            self.walk(expr.cond, env, stack)
        elif isinstance(expr, (S.CaseSum, S.CaseList)):
            self.walk(expr.scrutinee, env, stack)
        elif isinstance(expr, S.Block):
            self._block(expr, dict(env), stack)
        elif isinstance(expr, S.App):
            self._app(expr, env, stack)
        elif hasattr(expr, "__dataclass_fields__"):
            for name in expr.__dataclass_fields__:
                if name != "span":
                    self.walk(getattr(expr, name), env, stack)

    def _block(self, block: S.Block, env: dict[str, _Known], stack: tuple[str, ...]) -> None:
        for stmt in block.stmts:
            self.walk(stmt.expr, env, stack)
            if isinstance(stmt, S.LetStmt):
                env[stmt.name] = self.value(stmt.expr, env)
            elif isinstance(stmt, S.SampleStmt):
                env[stmt.name] = None
            else:
                bare = _bare(stmt.expr)
                items = bare.items if isinstance(bare, S.Tuple) and len(bare.items) == len(stmt.names) else None
                for k, name in enumerate(stmt.names):
                    env[name] = None if items is None else self.value(items[k], env)
        self.walk(block.result, env, stack)

    def _app(self, app: S.App, env: dict[str, _Known], stack: tuple[str, ...]) -> None:
        head, args = _spine(app)
        self.walk(head, env, stack)
        for arg in args:
            self.walk(arg, env, stack)
        if isinstance(head, S.Var) and head.name not in env:
            if head.name in ("mrow", "mentry") and len(args) == {"mrow": 2, "mentry": 3}[head.name]:
                self._index(head.name, args, env, stack)
            callee = self.defs.get(head.name)
            if (callee is not None and len(args) == len(callee.params) and callee.name not in stack
                    and len(stack) < _MAX_CALL_DEPTH):
                inner = {p.name: self.value(a, env) for p, a in zip(callee.params, args, strict=True)}
                key = (callee.name, tuple(inner.items()))
                if key not in self.walked:  # a definition called again with what is known the same: once
                    self.walked.add(key)
                    self.walk(callee.body, inner, (*stack, callee.name))

    def _index(self, name: str, args: list[S.Expr], env: dict[str, _Known], stack: tuple[str, ...]) -> None:
        shape = self.value(args[0], env)
        if not isinstance(shape, tuple):
            return
        bounds = [("row", shape[0])] + ([("column", shape[1])] if name == "mentry" else [])
        for (what, size), arg in zip(bounds, args[1:], strict=True):
            i = self.value(arg, env)
            if isinstance(i, int) and not 0 <= i < size:
                if id(arg) not in self.seen:  # a definition called twice is reported once
                    self.seen.add(id(arg))
                    self.found.append(Diagnostic(
                        "FZ515", f"the {what} index of `{name}` is {i}, outside the matrix"
                        f" ({f'no {what}s' if size == 0 else f'{what}s 0..{size - 1}'})"
                        + (f", in the call {' -> '.join(f'`{n}`' for n in stack)}" if len(stack) > 1 else ""), arg.span,
                        hint="the matrix's shape and the index are public: fix the index or the argument"))
                return

    def value(self, expr: S.Expr, env: dict[str, _Known]) -> _Known:
        """What the pre-check knows of ``expr``'s value under ``env``."""
        expr = _bare(expr)
        if isinstance(expr, S.Var) and expr.name in env:
            return env[expr.name]
        head, args = _spine(expr)
        if isinstance(head, S.Var) and head.name not in env:
            if head.name == "mtranspose" and len(args) == 1:
                inner = self.value(args[0], env)
                return (inner[1], inner[0]) if isinstance(inner, tuple) and inner[0] > 0 else None
            if head.name == "mat_of_rows" and len(args) == 1:
                return self.value(args[0], env)
        if isinstance(expr, S.ListLit):
            return _literal_shape(expr)
        scope = {k: v for k, v in self.constants.items() if k not in env}
        scope.update({k: Fraction(v) for k, v in env.items() if isinstance(v, int)})
        number = _static(expr, scope)
        if number is None or number.denominator != 1 or any(
                isinstance(n, S.InfLit) or (isinstance(n, S.Var) and n.name == "inf" and "inf" not in scope)
                for n in S.subtrees(expr)):
            return None  # `inf` is not an index
        return int(number)


def _oversized_mechanisms(program: S.Program, root: str, constants: dict[str, Fraction]) -> list[Diagnostic]:
    """A mechanism whose products may outgrow the exact form on some input: refused
    here, from its text alone, rather than after the charge on the datasets where
    the rows make the values larger (a decision that reads no row)."""
    from fuzzpy.runtime.lazy_reals import MAX_PRODUCT_PAIRS
    from fuzzpy.runtime.product_sizes import oversized_product

    mechanisms = {d.name: d for d in program.decls if isinstance(d, S.MechanismDecl)}
    called = {n for body in _reachable_bodies(program, root) for n in _names(body)} & set(mechanisms)
    out: list[Diagnostic] = []
    for name in sorted(called):
        found = oversized_product(mechanisms[name], constants)
        if found is None:
            continue
        sizes = "unbounded" if max(found.left, found.right) > MAX_PRODUCT_PAIRS else f"{found.left} and {found.right}"
        out.append(Diagnostic(
            "FZ519",
            f"mechanism `{name}` may multiply noisy values too large to keep exactly: this product's factors "
            f"may have {sizes} monomials (at most {MAX_PRODUCT_PAIRS} pairs are multiplied), depending on the "
            "data and the noise, so it is refused before anything is charged",
            found.span if isinstance(found.span, Span) else mechanisms[name].name_span,
            hint="multiply fewer noisy values together (or bound the loop with `i < E` and `requires E <= N`)",
        ))
    return out


def _names(expr: S.Expr) -> set[str]:
    return {n.name for n in S.subtrees(expr) if isinstance(n, S.Var)}


def _prims(expr: S.Expr) -> list[S.Prim]:
    return [n for n in S.subtrees(expr) if isinstance(n, S.Prim)]


def _static(expr: S.Expr, constants: dict[str, Fraction]) -> Fraction | None:
    from fuzzpy.checker.elaborate import static_value
    from fuzzpy.checker.errors import CheckError

    if isinstance(expr, S.InfLit) or (isinstance(expr, S.Var) and expr.name == "inf" and "inf" not in constants):
        return EXACT_DBL_MAX
    if isinstance(expr, S.Unary) and expr.op == "-":
        inner = _static(expr.operand, constants)
        return None if inner is None else -inner
    try:
        return static_value(expr, constants)
    except CheckError:
        return None


def _check_prim(prim: S.Prim, constants: dict[str, Fraction]) -> list[Diagnostic]:
    values = [_static(a, constants) for a in prim.static_args]
    out: list[Diagnostic] = []
    if prim.name in _RANGED:
        for arg, value in zip(prim.static_args, values, strict=True):
            if value is not None and value != 0 and not SMALLEST_STATIC <= abs(value) <= EXACT_DBL_MAX:
                out.append(_out_of_range(prim, arg.span, f"{_RANGED[prim.name]} {_show(value)}",
                                         "it must be 0 or lie between 2^-1022 (2.2e-308) and 1.8e308 in size"))
        if prim.name in ("geometric", "dgauss", "ptr_median", "ptr_quantile") and values[0] is not None and values[0] > 0:
            out += _integer_noise_range(prim, values[0])
    elif prim.name == "staircase":
        out += _staircase_range(prim, values)
    elif prim.name == "group" and values and values[0] is not None and not 0 <= values[0] <= MAX_RELEASE_ENTRIES:
        out.append(_out_of_range(prim, prim.static_args[0].span, f"{values[0]} buckets",
                                 f"at most {MAX_RELEASE_ENTRIES} buckets can be counted and released"))
    elif prim.name in ("loop", "iterate") and values and values[0] is not None and not 0 <= values[0] <= _MOST_ROUNDS[prim.name]:
        out.append(dataclasses.replace(
            _out_of_range(prim, prim.static_args[0].span, f"{values[0]} rounds",
                          f"at most {_MOST_ROUNDS[prim.name]:,} rounds are run"), code="FZ217"))
    return out


def _integer_noise_range(prim: S.Prim, value: Fraction) -> list[Diagnostic]:
    """The exact integer samplers' ranges: `geometric[n/d]` draws with the
    integer d (below 2^58), as does the test of `ptr_median[n/d, ...]`; `dgauss[sigma]` proposes from a discrete Laplace
    of scale floor(sigma) + 1 (below 2^58)."""
    span = prim.static_args[0].span
    if prim.name in ("geometric", "ptr_median", "ptr_quantile") and (value.denominator >= 2**58 or value.numerator >= 2**62):
        return [_out_of_range(prim, span, f"eps {_show(value)}",
                              "write eps as a fraction n/d with d below 2^58 (e.g. a decimal of at most 17 places)")]
    if prim.name == "dgauss" and value >= 2**57:
        return [_out_of_range(prim, span, f"sigma {_show(value)}", "sigma must be below 2^57 (1.4e17)")]
    return []


#: The largest eps `staircase` samples (its optimal gamma, e^(-eps/2) / (1 + e^(-eps/2)),
#: is computed to 64 bits past 2^(-0.73 eps); beyond, eps-DP means nothing anyway).
MAX_STAIRCASE_EPSILON = 1024


def _staircase_range(prim: S.Prim, values: list[Fraction | None]) -> list[Diagnostic]:
    """`staircase[eps]`: eps in [2^-1022, 1024] written n/d with d below 2^58
    (its exact geometric draw); gamma 0, 1, or each part of a step at least
    2^-1022 (the grid resolves both parts)."""
    out: list[Diagnostic] = []
    eps = values[0] if values else None
    if eps is not None and eps > 0 and (not SMALLEST_STATIC <= eps <= MAX_STAIRCASE_EPSILON or eps.denominator >= 2**58):
        out.append(_out_of_range(prim, prim.static_args[0].span, f"eps {_show(eps)}",
                                 f"it must lie between 2^-1022 and {MAX_STAIRCASE_EPSILON}, written as a fraction n/d "
                                 "with d below 2^58 (e.g. a decimal of at most 17 places)"))
    gamma = values[1] if len(values) > 1 else None
    if gamma is not None and 0 < min(gamma, 1 - gamma) < SMALLEST_STATIC:
        out.append(_out_of_range(prim, prim.static_args[1].span, f"gamma {_show(gamma)}",
                                 "gamma must be 0, 1, or at least 2^-1022 away from both"))
    return out


def _show(value: Fraction) -> str:
    """A number for a message, even one beyond the range of doubles."""
    if SMALLEST_STATIC / 2**60 <= abs(value) <= EXACT_DBL_MAX:
        return f"{float(value):.3g}"
    digits = len(str(abs(value.numerator))) - len(str(value.denominator))
    return f"{'-' if value < 0 else ''}about 1e{digits}"


def _gauss_dp_sigma(prim: S.Prim, constants: dict[str, Fraction]) -> Fraction | None:
    """The sigma `gauss_dp[s, eps, delta]` draws with (`calibrate.gauss_dp_sigma`), or None."""
    from fuzzpy.accounting.calibrate import gauss_dp_sigma

    values = [_static(a, constants) for a in prim.static_args]
    if len(values) != 3 or any(v is None for v in values):
        return None
    try:
        return gauss_dp_sigma(*values)  # type: ignore[arg-type]
    except ValueError:
        return None


def _out_of_range(prim: S.Prim, span: Span, what: str, hint: str) -> Diagnostic:
    return Diagnostic(
        "FZ517",
        f"`{prim.name}[..]` with {what}: the runtime cannot carry this out exactly",
        span if span.line else prim.span,
        hint=hint,
    )


def _span_of_event(event: object, prims: list[S.Prim], constants: dict[str, Fraction], fallback: Span) -> Span:
    for prim in prims:
        value = _static(prim.static_args[0], constants) if prim.static_args else None
        if value is None or value == 0:
            continue
        if isinstance(event, Laplace) and prim.name == "laplace" and 1 / value == event.scale:
            return prim.span
        if isinstance(event, Gaussian) and prim.name == "gauss" and value == event.sigma:
            return prim.span
        if isinstance(event, Gaussian) and prim.name == "gauss_dp" and _gauss_dp_sigma(prim, constants) == event.sigma:
            return prim.span
    return fallback
