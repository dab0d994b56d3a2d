"""Primitives that release: the privacy map's leaves and combinators.

* `laplace[eps] e`: Laplace noise of scale 1/eps on an L1 query of
  sensitivity s: (eps * s)-DP (Dwork, McSherry, Nissim & Smith 2006).
* `gauss[sigma] e`: Gaussian noise on an L2 query of sensitivity s:
  s^2 / (2 sigma^2)-zCDP (Bun & Steinke 2016, Prop. 1.6).
* `geometric[eps] e`: two-sided geometric (discrete Laplace) noise,
  P(k) proportional to exp(-eps |k|), on an `int` query of sensitivity s:
  (eps * s)-DP (Ghosh, Roughgarden & Sundararajan 2009); an integer release.
* `staircase[eps] e` / `staircase[eps, gamma] e`: staircase noise (steps of
  width 1, inner part gamma, by default the optimal gamma* = 1 / (1 + e^(eps/2)))
  on a `num` query of sensitivity s: (eps * ceil(s))-DP (Geng & Viswanath
  2016: the density's steps are one unit apart, each a factor e^-eps).
* `dgauss[sigma] e`: discrete Gaussian noise N_Z(0, sigma^2) on an `int`
  query of sensitivity s: ceil(s)^2 / (2 sigma^2)-zCDP (Canonne, Kamath &
  Steinke 2020); an integer release.
* `ptr_median[eps, delta, b] db`: propose-test-release for the median of a
  `bag num` (Dwork & Lei 2009, Sec. 3; Dwork & Roth 2014, Sec. 7.3):
  (2 eps, delta)-DP for add/remove neighbours, group privacy over ceil(s)
  rows for a bag s-sensitive in a variable; `fuzzy (num + unit)`.
* `expmech[eps] cands score db`: (eps * s)-DP for a score s-sensitive in the
  data, uniformly over candidates (McSherry & Talwar 2007; the language's
  exp(eps * score / 2) weighting).
* `loop[k] x0 f`: k adaptive runs of the body; each round reads the captured
  data again (a `Repeat` of the body's events, composed by the accountant);
  the state is what the previous round released, so the initial state is read
  by the first round only (post-processing).
* `subsample[q] f db`: f runs on a Poisson subsample of db (amplification by
  subsampling, e.g. Balle, Barthe & Gaboardi 2018; a `Subsample` event).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, TypeVar

from fuzzpy.accounting.events import (
    DiscreteGaussian,
    Event,
    ExpMech,
    Gaussian,
    Geometric,
    Group,
    Laplace,
    Repeat,
    Sample,
    Staircase,
    Subsample,
    SymbolicApprox,
    SymbolicPure,
    Verified,
)
from fuzzpy.accounting.local import has_local
from fuzzpy.checker import costs as C
from fuzzpy.checker import obligations
from fuzzpy.checker import usage as U
from fuzzpy.checker.blocks import BinderRules, LambdaResult
from fuzzpy.checker.context import Judgment
from fuzzpy.checker.elaborate import positive_static, static_count, static_value
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.terms import eta_expand, source_name
from fuzzpy.checker.typerel import is_number_list, is_numeric, same_type, subtype
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.limits import MAX_ITERATE_ROUNDS, MAX_STATIC_COUNT
from fuzzpy.language.sensitivity import INF, ONE, ZERO, Sens
from fuzzpy.language.source import Span
from fuzzpy.language.symbolic import Poly

T_ = TypeVar("T_")

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Inferencer
    from fuzzpy.checker.primitives import PrimCall


def _noise_arg(ck: Inferencer, call: PrimCall, norm: str) -> Judgment:
    """The noised value: a number, a `vec[norm]` (other norms converted), or
    for Laplace a list of numbers (its metric, the sum, is L1)."""
    arg = call.args[0]
    inner = call.hint.inner if isinstance(call.hint, T.TFuzzy) else None
    j = ck.infer(arg, inner)
    if is_numeric(j.type):
        return ck.coerce(j, T.NUM, arg.span, "")
    if isinstance(j.type, T.TVec):
        return ck.coerce(j, T.TVec(norm, T.NUM, j.type.length), arg.span, "")
    if isinstance(j.type, T.TList) and isinstance(j.type.elem, T.TVec):
        # a matrix, noised entry by entry (Duet's `laplace` on M_L1 and
        # `gauss` on M_L2, Near et al. OOPSLA 2019): read as `mat[1]` its
        # metric is the entrywise L1 distance, the Laplace mechanism's
        # sensitivity (Dwork & Roth 2014, Thm 3.6); read as `mat[2]` it is
        # the sum of the rows' L2 distances, at least the Frobenius
        # (entrywise L2) distance, so the Gaussian mechanism's L2
        # sensitivity is at most it (Dwork & Roth 2014, Thm A.1)
        rows = T.TVec(norm, T.NUM, j.type.elem.length)
        return ck.coerce(j, T.TList(rows, matrix=True), arg.span, "")
    if norm == "1" and is_number_list(j.type):
        return j
    wanted = f"a number, a `vec[{norm}] num` or a `mat[{norm}] num`"
    raise CheckError("FZ201", f"expected {wanted} but found `{j.type}`: `{call.name}` adds noise to numbers", arg.span)


def epsilon(ck: Inferencer, expr: S.Expr, what: str) -> Fraction | Poly:
    """The epsilon of `laplace` / `expmech`: a positive static number, as
    today; or, where it names a static parameter of the definition being
    checked once for all calls, a polynomial over those parameters, positive
    at every positive value of them (DFuzz's index terms, Gaboardi et al.
    POPL 2013). Each call checks the body again at its own numbers."""
    constants = ck.visible_constants()
    if static_value(expr, constants) is None:
        poly = ck.symbolic_value(expr)
        if poly is not None and not poly.is_const:
            verdict = obligations.positive(poly)  # term by term, else z3 (nonnegative reals)
            if verdict.status != "proved":
                why = (f"it is not positive at {verdict.witness}" if verdict.status == "refuted" and verdict.witness
                       else "z3 could not decide that it is positive (undecided is refused)" if verdict.status == "unknown"
                       else "it is not positive")
                raise CheckError(
                    "FZ202",
                    f"{what} is `{poly}`, which is not shown positive for every positive value of its parameters: {why}",
                    expr.span,
                    hint="write the epsilon as a sum of positive multiples of parameters and constants (e.g. `eps / 2`)",
                )
            return poly
        if poly is None and _defer_arithmetic(ck, expr, what):
            constants = ck.visible_constants()  # the placeholders of the generic pass
        else:
            ck.refuse_local_names(expr, what, epsilon=True)
    return positive_static(expr, constants, what)


def _defer_arithmetic(ck: Inferencer, expr: S.Expr, what: str) -> bool:
    """An epsilon that is arithmetic over static parameters but not a
    polynomial (`eps / hi`): checked at each call's numbers (`defer`), if it
    names no other local and is arithmetic over the parameters and constants."""
    from fuzzpy.checker.terms import free_vars

    local = [n for n in free_vars(expr) if ck.env.lookup(n) is not None]
    static = ck.static_parameters_in(expr)
    if not local or sorted(local) != static or not _arithmetic(expr):
        return False
    symbols: frozenset[str] = frozenset()
    for name in static:
        value = ck.static_params[name].symbolic
        if value is None or value.is_const:
            return False
        symbols |= value.symbols()
    return ck.defer(symbols, f"in {what}, which is not a polynomial")


def _arithmetic(expr: S.Expr) -> bool:
    if isinstance(expr, (S.Var, S.NumLit)):
        return True
    if isinstance(expr, S.Unary) and expr.op == "-":
        return _arithmetic(expr.operand)
    if isinstance(expr, S.Ann):
        return _arithmetic(expr.expr)
    return isinstance(expr, S.Binary) and expr.op in ("+", "-", "*", "/") and _arithmetic(expr.left) and _arithmetic(expr.right)


def no_static_parameter(ck: Inferencer, expr: S.Expr, what: str, deferrable: bool = True) -> bool:
    """A static parameter where a number is needed: the definition is then
    checked at each call's numbers (True: deferred, `Inferencer.defer`);
    where that is not allowed (``deferrable`` False: a length in a type) or
    the expression names another local, FZ202 with the reason."""
    if static_value(expr, ck.visible_constants()) is not None and not _names_deferred(ck, expr):
        return False
    poly = ck.symbolic_value(expr)
    if poly is not None and not poly.is_const:
        # a number is needed here: the definition is checked at each call's
        # numbers instead of once (DFuzz's instantiation of index variables,
        # Gaboardi et al. POPL 2013, with the side conditions decided there)
        if deferrable and ck.defer(poly.symbols(), what):
            return True
        raise CheckError(
            "FZ202",
            f"{what} names the parameter(s) {', '.join(f'`{n}`' for n in sorted(poly.symbols()))}: "
            + ("it sets the length of a vector, part of a type, which is not yet written over a parameter"
               if not deferrable else "only a definition's own parameters may stand here")
            + "; here a number is needed",
            expr.span,
            hint="use a top-level constant or a literal here",
        )
    if poly is None and deferrable and _defer_arithmetic(ck, expr, what):
        return True
    ck.refuse_local_names(expr, what, epsilon=False)
    return False


def _names_deferred(ck: Inferencer, expr: S.Expr) -> bool:
    """Whether ``expr`` names a static parameter read as a placeholder."""
    return any(name in ck.deferred for name in ck.static_parameters_in(expr))


def deferred_read(ck: Inferencer, expr: S.Expr, what: str, read: Callable[[], T_], fallback: T_) -> T_:
    """A number at a static position: in the generic pass of a definition
    checked at each call's numbers, a side condition that fails at the
    placeholder (`gauss[sigma - 2]`) is not a refusal: each call decides it
    at its own numbers (``fallback`` stands in for the value)."""
    if not no_static_parameter(ck, expr, what):
        return read()
    try:
        return read()
    except CheckError:
        return fallback


def _symbols_of(events: tuple[Event, ...]) -> Poly:
    """A polynomial naming every symbol of the events' epsilons (for `defer`)."""
    total = Poly()
    for event in events:
        if isinstance(event, SymbolicPure):
            total = total + Poly._from({((n, 1),): Fraction(1) for n in event.epsilon.symbols()})
        elif isinstance(event, SymbolicApprox):
            symbols = event.epsilon.symbols() | event.delta.symbols()
            total = total + Poly._from({((n, 1),): Fraction(1) for n in symbols})
        elif isinstance(event, (Repeat, Subsample, Group)):
            total = total + _symbols_of(event.body)
    return total


def laplace(ck: Inferencer, call: PrimCall) -> Judgment:
    eps = epsilon(ck, call.statics[0], "the epsilon of `laplace`")
    j = _noise_arg(ck, call, "1")
    if isinstance(eps, Poly):
        symbolic = eps
        cost = ck.noise_cost(j.ctx, call.span, "the value given to `laplace`", lambda s: SymbolicPure(s, symbolic), pure=symbolic)
        ck.note(f"`laplace[{eps}]`: costs ({eps}) x the sensitivity in each variable, for every positive value of the parameters")
        return Judgment(T.TFuzzy(j.type), {}, cost=cost)
    scale = 1 / eps
    cost = ck.noise_cost(j.ctx, call.span, "the value given to `laplace`", lambda s: Laplace(s, scale), pure=eps)
    _mark_replaced(ck, call, cost)
    ck.note(f"`laplace[{Sens(eps)}]`: noise of scale {Sens(scale)}; costs eps x the sensitivity in each variable")
    return Judgment(T.TFuzzy(j.type), {}, cost=cost)


def _mark_replaced(ck: Inferencer, call: PrimCall, cost: C.CostCtx) -> None:
    """Record on the draw's event how far its query moves when one row of
    its bag is replaced (`replace_sensitivity`), for the neighbour rules."""
    replaced = replace_sensitivity(ck, call.args[0])
    if replaced is None:
        return
    name, moved = replaced
    binding = ck.env.lookup(name)  # its uses are recorded under its key (`db#3` when it shadows a name)
    if binding is not None and binding.key:
        name = binding.key
    found = cost.get(name)
    events = found.events() if found is not None and found.blame is None else ()
    from fuzzpy.accounting import (
        events as E,  # the classes themselves (a test may wrap this module's names)
    )

    if len(events) == 1 and isinstance(events[0], E.ONE_QUERY):
        cost[name] = C.Cost((dataclasses.replace(events[0], replaced=moved),), draw=found.draw if found else None)


def replace_sensitivity(ck: Inferencer, query: S.Expr) -> tuple[str, Fraction] | None:
    """How far ``query`` moves when one row of a bag variable X is replaced
    by another, for the forms whose rows each add a bounded amount: `size`
    or `sum[lo, hi]` of X through `map`s and `filter`s. A replaced row's
    contribution lies in {1} (`size`) or [lo, hi] (`sum`), joined with {0}
    when a `filter` may drop it, so the query moves by at most the width of
    that set: 0 for `size X`, 1 for a filtered count, hi - lo for a clamped
    sum (max(hi, 0) - min(lo, 0) filtered). The functions given to `map` and
    `filter` cannot depend on X at a finite cost (Fuzz: they are used
    without bound), so they act row by row. None for any other form."""
    head, args = _spine(query)
    if len(args) != 1:
        return None
    if _is_primitive(ck, head, "size"):
        low, high = Fraction(1), Fraction(1)
    elif isinstance(head, S.Prim) and head.name == "sum" and len(head.static_args) == 2:
        constants = ck.visible_constants()
        first, second = (static_value(e, constants) for e in head.static_args)
        if first is None or second is None:
            return None
        low, high = Fraction(first), Fraction(second)
        if low > high:
            return None
    else:
        return None
    bag = _bag_rows(ck, args[0])
    if bag is None:
        return None
    name, optional = bag
    if optional:
        low, high = min(low, Fraction(0)), max(high, Fraction(0))
    return name, high - low


def _spine(expr: S.Expr) -> tuple[S.Expr, list[S.Expr]]:
    args: list[S.Expr] = []
    while isinstance(expr, S.App):
        args.append(expr.arg)
        expr = expr.func
    args.reverse()
    return expr, args


def _is_primitive(ck: Inferencer, head: S.Expr, name: str) -> bool:
    """``head`` names the primitive ``name`` (as `apply.apply_spine` resolves it)."""
    if isinstance(head, S.Prim):
        return head.name == name and not head.static_args
    return (isinstance(head, S.Var) and head.name == name and ck.env.lookup(name) is None
            and name not in ck.globals.constants and name not in ck.globals.defs
            and name not in ck.globals.mechanisms)


def _bag_rows(ck: Inferencer, expr: S.Expr) -> tuple[str, bool] | None:
    """A bag variable X under `map`s and `filter`s: (X, whether a row may be dropped)."""
    if isinstance(expr, S.Var):
        return (expr.name, False) if ck.env.lookup(expr.name) is not None else None
    head, args = _spine(expr)
    if len(args) != 2:
        return None
    inner = _bag_rows(ck, args[1])
    if inner is None:
        return None
    if _is_primitive(ck, head, "map"):
        return inner
    if _is_primitive(ck, head, "filter"):
        return inner[0], True
    return None


def gauss(ck: Inferencer, call: PrimCall) -> Judgment:
    what = "the sigma of `gauss`"
    sigma = deferred_read(ck, call.statics[0], what, lambda: positive_static(call.statics[0], ck.visible_constants(), what), Fraction(1))
    j = _noise_arg(ck, call, "2")
    cost = ck.noise_cost(j.ctx, call.span, "the value given to `gauss`", lambda s: Gaussian(s, sigma))
    _mark_replaced(ck, call, cost)
    ck.note(f"`gauss[{Sens(sigma)}]`: one Gaussian event per variable, with its L2 sensitivity")
    return Judgment(T.TFuzzy(j.type), {}, cost=cost)


def gauss_dp(ck: Inferencer, call: PrimCall) -> Judgment:
    """`gauss_dp[s, eps, delta] e`: Gaussian noise calibrated to (eps, delta)
    for a query whose L2 sensitivity is declared at most s (Duet's
    `gauss[s, eps, delta]`, Near et al. OOPSLA 2019; DiffMu's
    `gaussian_mechanism!`). At numbers it elaborates to `gauss[sigma]` with
    sigma from `calibrate.gauss_dp_sigma` (the analytic Gaussian, Balle &
    Wang 2018, Thm 8, rounded up), the function the interpreter and the
    accuracy line call too, so the cost is the Gaussian event of the noise
    drawn (at most (eps, delta) in each variable). With eps or delta a
    polynomial over the definition's static parameters, the cost is
    (eps, delta)-DP for every value of them, by construction of sigma (a
    `SymbolicApprox`; each call is checked again at its numbers). The
    query's sensitivity in each variable must be at most s (FZ305; over
    `nat` indices an obligation z3 decides, undecided is refused)."""
    s, eps, delta = gauss_dp_statics(ck, call)
    j = _noise_arg(ck, call, "2")
    ctx = _within_bound(ck, j, s, call)
    what = "the value given to `gauss_dp`"
    if isinstance(eps, Poly) or isinstance(delta, Poly):
        eps_poly = eps if isinstance(eps, Poly) else Poly.const(eps)
        delta_poly = delta if isinstance(delta, Poly) else Poly.const(delta)
        cost = ck.noise_cost(ctx, call.span, what, lambda sens: SymbolicApprox(eps_poly, delta_poly))
        ck.note(f"`gauss_dp[{Sens(s)}, {eps_poly}, {delta_poly}]`: ({eps_poly}, {delta_poly})-DP in each variable whose "
                f"L2 sensitivity is at most {Sens(s)}, for every value of the parameters (sigma calibrated at each call)")
        return Judgment(T.TFuzzy(j.type), {}, cost=cost)
    try:
        sigma = _gauss_dp_sigma(s, eps, delta, call.span)
    except CheckError:
        if not any(_names_deferred(ck, e) for e in call.statics):
            raise
        sigma = Fraction(1)  # the generic pass's placeholders: each call decides at its numbers
    cost = ck.noise_cost(ctx, call.span, what, lambda sens: Gaussian(sens, sigma))
    _mark_replaced(ck, call, cost)
    ck.note(f"`gauss_dp[{Sens(s)}, {Sens(eps)}, {Sens(delta)}]`: Gaussian noise of sigma {Sens(sigma)} "
            "(analytic calibration, rounded up); one Gaussian event per variable, with its L2 sensitivity")
    return Judgment(T.TFuzzy(j.type), {}, cost=cost)


def gauss_dp_statics(ck: Inferencer, call: PrimCall) -> tuple[Fraction, Fraction | Poly, Fraction | Poly]:
    """(s, eps, delta) of `gauss_dp`, each refused at its own position
    (FZ202): s a positive number (a static parameter: each call's numbers),
    eps > 0 and 0 < delta < 1, numbers or polynomials positive for every
    value of the parameters (delta below 1 is checked at each call)."""
    s = _positive(ck, call.statics[0], "the sensitivity bound s of `gauss_dp`")
    eps = epsilon(ck, call.statics[1], "the epsilon of `gauss_dp`")
    delta = epsilon(ck, call.statics[2], "the delta of `gauss_dp`")
    if isinstance(delta, Fraction) and delta >= 1 and not _names_deferred(ck, call.statics[2]):
        raise CheckError("FZ202", f"the delta of `gauss_dp` must be below 1, got {Sens(delta)}", call.statics[2].span,
                         hint="delta is a probability of failure: a small number such as 1e-6")
    return s, eps, delta


def _gauss_dp_sigma(s: Fraction, eps: Fraction, delta: Fraction, span: Span) -> Fraction:
    from fuzzpy.accounting.calibrate import gauss_dp_sigma  # scipy and mpmath: only where used

    try:
        return gauss_dp_sigma(s, eps, delta)
    except ValueError as exc:
        raise CheckError("FZ202", f"`gauss_dp[{Sens(s)}, {Sens(eps)}, {Sens(delta)}]`: {exc}", span) from None


def _within_bound(ck: Inferencer, j: Judgment, bound: Fraction, call: PrimCall) -> U.Ctx:
    """The declared bound: the query's sensitivity in every variable is at
    most s (Duet's side condition on `gauss[s, eps, delta]`), else FZ305 at
    the query; over `nat` indices an obligation decided by z3 (undecided is
    refused). An index-term sensitivity shown at most s is charged at s."""
    ctx = dict(j.ctx)
    for name, usage in j.ctx.items():
        sens = usage.sens
        if sens.is_zero:
            continue
        if sens.is_symbolic and sens.poly is not None:
            verdict = obligations.at_most(sens.poly, Poly.const(bound), ck.index_symbols())
            if verdict.status == "proved":
                ctx[name] = U.Usage(Sens.of(bound), usage.kind, usage.span, usage.reason)
                continue
            why = (f"it is above {Sens(bound)} at {verdict.witness}" if verdict.status == "refuted" and verdict.witness
                   else "z3 could not decide it (undecided is refused)" if verdict.status == "unknown"
                   else f"it is above {Sens(bound)}")
            raise CheckError("FZ305", f"the value given to `gauss_dp` is {sens}-sensitive in `{name}`, not shown at most "
                             f"the declared bound s = {Sens(bound)}: {why}", call.args[0].span)
        if sens.is_inf or (sens.value is not None and sens.value > bound):
            raise CheckError("FZ305", f"the value given to `gauss_dp` is {sens}-sensitive in `{name}`, above the declared "
                             f"bound s = {Sens(bound)}: the noise is calibrated for s", call.args[0].span,
                             hint=f"declare s >= {sens} (more noise), or clamp the query")
    return ctx


def _int_arg(ck: Inferencer, call: PrimCall, instead: str) -> Judgment:
    """The noised value of `geometric` / `dgauss`: an `int` (its metric |x - y|
    moves by whole steps, which the integer noise's privacy needs)."""
    arg = call.args[0]
    j = ck.infer(arg, T.INT)
    if isinstance(j.type, T.TInt):
        return j
    raise CheckError(
        "FZ201",
        f"expected `int` but found `{j.type}`: `{call.name}` adds integer noise to an integer query",
        arg.span,
        hint=f"use `{instead}` for a `{j.type}`" if is_numeric(j.type) or isinstance(j.type, T.TVec)
        else "count or sum integers (e.g. `size db`) before adding integer noise",
    )


def geometric(ck: Inferencer, call: PrimCall) -> Judgment:
    """`geometric[eps] e`: P(k) proportional to exp(-eps |k|) added to an
    integer: |k - k'| <= s moves the log-probability by at most eps s
    (Ghosh, Roughgarden & Sundararajan 2009; Dwork & Roth 2014, Thm 3.6's
    argument on the integers): pure (eps s)-DP in each variable."""
    eps = epsilon(ck, call.statics[0], "the epsilon of `geometric`")
    j = _int_arg(ck, call, "laplace[eps]")
    if isinstance(eps, Poly):
        symbolic = eps
        cost = ck.noise_cost(j.ctx, call.span, "the value given to `geometric`", lambda s: SymbolicPure(s, symbolic), pure=symbolic)
        ck.note(f"`geometric[{eps}]`: costs ({eps}) x the sensitivity in each variable, for every positive value of the parameters")
        return Judgment(T.TFuzzy(T.INT), {}, cost=cost)
    scale = 1 / eps
    cost = ck.noise_cost(j.ctx, call.span, "the value given to `geometric`", lambda s: Geometric(s, scale), pure=eps)
    _mark_replaced(ck, call, cost)
    ck.note(f"`geometric[{Sens(eps)}]`: two-sided geometric noise on an integer; costs eps x the sensitivity in each variable")
    return Judgment(T.TFuzzy(T.INT), {}, cost=cost)


def staircase(ck: Inferencer, call: PrimCall) -> Judgment:
    """`staircase[eps] e`, `staircase[eps, gamma] e`: the staircase density
    (Geng & Viswanath, IEEE Trans. IT 2016, with Delta = 1) added to a
    number. The density is a_gamma e^(-k eps) on |x| in [k, k + gamma) and
    a_gamma e^(-(k+1) eps) on [k + gamma, k + 1): a step function whose steps
    fall at +-(k + gamma), one unit apart. A shift by d moves |x| by at most
    |d|, so across at most ceil(|d|) steps: the density ratio is at most
    e^(eps ceil(s)) for a query of sensitivity s (their eps-DP for s <= 1; and
    any shift, however small, may cross a step, so eps ceil(s), not eps s).
    Not linear in s, so the epsilon must be a number (a parameter is checked
    at each call's numbers). Pure (eps * ceil(s))-DP in each variable."""
    what = "the epsilon of `staircase`"
    eps = deferred_read(ck, call.statics[0], what, lambda: positive_static(call.statics[0], ck.visible_constants(), what), Fraction(1))
    if len(call.statics) > 1:
        deferred_read(ck, call.statics[1], "the gamma of `staircase`", lambda: staircase_gamma(ck, call.statics[1]), Fraction(1, 2))
    arg = call.args[0]
    j = ck.coerce(ck.infer(arg, T.NUM), T.NUM, arg.span, "`staircase` adds noise to one number")
    cost = ck.noise_cost(j.ctx, call.span, "the value given to `staircase`", lambda s: Staircase(s, eps))
    _mark_replaced(ck, call, cost)  # a replaced row moves a count or clamped sum by its width, not 2s
    ck.note(f"`staircase[{Sens(eps)}]`: staircase noise with steps of width 1; costs eps x ceil(sensitivity) in each variable")
    return Judgment(T.TFuzzy(T.NUM), {}, cost=cost)


def staircase_gamma(ck: Inferencer, expr: S.Expr) -> Fraction:
    """The gamma of `staircase[eps, gamma]`: a static number in [0, 1] (the
    share of each step at the higher density; Geng & Viswanath 2016)."""
    value = static_value(expr, ck.visible_constants())
    if value is None:
        ck.refuse_local_names(expr, "the gamma of `staircase`", epsilon=False)
        raise CheckError("FZ202", "the gamma of `staircase` must be a static number in [0, 1]", expr.span)
    gamma = Fraction(value)
    if not 0 <= gamma <= 1:
        raise CheckError("FZ202", f"`staircase[eps, {gamma}]`: gamma is the share of a step, between 0 and 1", expr.span,
                         hint="leave gamma out for the optimal gamma* = 1 / (1 + e^(eps/2))")
    return gamma


def dgauss(ck: Inferencer, call: PrimCall) -> Judgment:
    """`dgauss[sigma] e`: N_Z(0, sigma^2) added to an integer that moves by at
    most s: ceil(s)^2 / (2 sigma^2)-zCDP (Canonne, Kamath & Steinke 2020; the
    accountant uses its exact loss, `accounting.discrete_gaussian`)."""
    what = "the sigma of `dgauss`"
    sigma = deferred_read(ck, call.statics[0], what, lambda: positive_static(call.statics[0], ck.visible_constants(), what), Fraction(1))
    j = _int_arg(ck, call, "gauss[sigma]")
    cost = ck.noise_cost(j.ctx, call.span, "the value given to `dgauss`", lambda s: DiscreteGaussian(s, sigma))
    _mark_replaced(ck, call, cost)
    ck.note(f"`dgauss[{Sens(sigma)}]`: discrete Gaussian noise on an integer, one event per variable")
    return Judgment(T.TFuzzy(T.INT), {}, cost=cost)


def _positive(ck: Inferencer, expr: S.Expr, what: str, below: Fraction | None = None,
              least: Fraction | None = None) -> Fraction:
    """A positive static number, below ``below`` and at least ``least`` when
    given (a static parameter: checked at each call's numbers, where a
    placeholder that fails is no refusal: `deferred_read`)."""

    def read() -> Fraction:
        value = positive_static(expr, ck.visible_constants(), what)
        if below is not None and value >= below:
            raise CheckError("FZ202", f"{what} must be below {Sens(below)}, got {Sens(value)}", expr.span)
        if least is not None and value < least:
            raise CheckError("FZ202", f"{what} must be at least 2^-23 (the exact noise grid's floor)", expr.span)
        return value

    return deferred_read(ck, expr, what, read, Fraction(1, 2))


#: The exact Laplace grid's floor for a release at relative cost eps
#: (`runtime.noise.MIN_RELATIVE_COST`, `runtime.ptr.MIN_EPSILON`).
_PTR_MIN_EPSILON = Fraction(1, 2**23)


def ptr_median(ck: Inferencer, call: PrimCall) -> Judgment:
    """`ptr_median[eps, delta, b] db`: the test releases d + Z, d the distance
    to a bag whose median's local sensitivity exceeds b (1-sensitive) and Z
    two-sided geometric at eps (eps-DP); a pass is at most delta likely when
    d = 0, and otherwise the median moves by at most b, so the Laplace release
    at scale b / eps is eps-DP: (2 eps, delta)-DP in all (Dwork & Lei 2009,
    Sec. 3; Dwork & Roth 2014, Sec. 7.3; docs/semantics.md). A bag that
    moves by s rows: group privacy over ceil(s) steps (Dwork & Roth 2014,
    Thm 2.2; `Group`)."""
    eps, delta, bound, _ = _ptr_statics(ck, call, "ptr_median")
    cost = _ptr_cost(ck, call, "ptr_median", eps, delta)
    ck.note(f"`ptr_median[{Sens(eps)}, {Sens(delta)}, {Sens(bound)}]`: propose-test-release, "
            f"({Sens(2 * eps)}, {Sens(delta)})-DP per row of the bag (group privacy beyond one row)")
    return Judgment(T.TFuzzy(T.TSum(T.NUM, T.UNIT)), {}, cost=cost)


def ptr_quantile(ck: Inferencer, call: PrimCall) -> Judgment:
    """`ptr_quantile[eps, delta, b, p] db`: `ptr_median`'s mechanism for the
    lower p-quantile (a public p, 0 < p < 1): the distance to a bag whose
    p-quantile's local sensitivity exceeds b is again a distance to a set
    (1-sensitive), so the same proof gives (2 eps, delta)-DP per row whether
    or not it answers (Dwork & Lei 2009, Sec. 3; docs/semantics.md,
    "`ptr_quantile`"); group privacy over ceil(s) rows (Dwork & Roth 2014,
    Thm 2.2)."""
    eps, delta, bound, level = _ptr_statics(ck, call, "ptr_quantile")
    cost = _ptr_cost(ck, call, "ptr_quantile", eps, delta)
    ck.note(f"`ptr_quantile[{Sens(eps)}, {Sens(delta)}, {Sens(bound)}, {Sens(level)}]`: propose-test-release "
            f"for the {Sens(level)}-quantile, ({Sens(2 * eps)}, {Sens(delta)})-DP per row of the bag "
            "(group privacy beyond one row)")
    return Judgment(T.TFuzzy(T.TSum(T.NUM, T.UNIT)), {}, cost=cost)


#: The largest number of Gaussian vectors `wishart[.., k]` draws (exactly, lazily refined: `runtime.wishart`),
#: and the most entries of k outer products (k d^2) when d is known to the checker.
WISHART_MAX_K = 1024
WISHART_MAX_WORK = 1 << 20
#: The calibration's range (`accounting.wishart`: its working precision grows with eps and log2(1 / delta)).
WISHART_MAX_EPSILON = 100
WISHART_MIN_DELTA = Fraction(1, 2**1000)


def wishart(ck: Inferencer, call: PrimCall) -> Judgment:
    """`wishart[eps, delta, b, k] db`: for a bag of L2 vectors of one public
    length d, rows clipped to L2 norm b, the release S / k - w^2 I with
    S ~ W_d(k, X^T X + w^2 I) (Sheffet, ICML 2017 and ALT 2019). One row
    added or removed moves X^T X + w^2 I by v v^T, ||v|| <= b; the pair
    reduces to N(0, 1)^k vs N(0, 1 + a)^k with a <= b^2 / w^2, whose exact
    delta(eps) picks w^2 (`accounting.wishart`; docs/semantics.md,
    "`wishart`"): (eps, delta)-DP per row; group privacy over ceil(s) rows
    (Dwork & Roth 2014, Thm 2.2). Not Jiang et al.'s A + W (AAAI 2016),
    which is not DP for any epsilon (docs/semantics.md)."""
    eps = _positive(ck, call.statics[0], "the epsilon of `wishart`", below=Fraction(WISHART_MAX_EPSILON))
    delta = _positive(ck, call.statics[1], "the delta of `wishart`", below=Fraction(1))
    deferred_read(ck, call.statics[1], "the delta of `wishart`", lambda: _wishart_delta_floor(call, delta), None)
    bound = _positive(ck, call.statics[2], "the bound b of `wishart`")
    what = "the number of Gaussian vectors k of `wishart`"
    k = deferred_read(ck, call.statics[3], what, lambda: _wishart_k(ck, call.statics[3], what), 1)
    deferred_read(ck, call.statics[0], "the parameters of `wishart`", lambda: _wishart_noise(call, eps, delta, bound, k), None)
    row = ck.lengths.vec("2")
    j = ck.check(call.args[0], T.TBag(row), "`wishart` takes a bag of L2 vectors (the rows of X)")
    ck.vector_sites[call.head.span] = row.length
    d = ck.lengths.static(row.length)

    def at_least_d() -> None:
        if d is not None and k < d:
            raise CheckError("FZ202", f"`wishart[.., {k}]` draws {k} Gaussian vectors of length {d}: k must be at least "
                             "d for the released matrix to be of full rank", call.statics[3].span, hint=f"use k >= {d}")
        if d is not None and k * d * d > WISHART_MAX_WORK:
            raise CheckError("FZ202", f"`wishart[.., {k}]` of vectors of length {d} sums {k} x {d} x {d} exact products, "
                             f"more than the {WISHART_MAX_WORK:,} that `run` carries out", call.statics[3].span,
                             hint="use a smaller k, or fewer features")

    deferred_read(ck, call.statics[3], what, at_least_d, None)

    def event(s: Fraction) -> Event:
        charged = Verified("wishart", eps, delta)
        steps = math.ceil(s)
        return charged if steps <= 1 else Group(Fraction(steps), (charged,))

    cost = ck.noise_cost(j.ctx, call.span, "the bag given to `wishart`", event)
    ck.note(f"`wishart[{Sens(eps)}, {Sens(delta)}, {Sens(bound)}, {k}]`: a Wishart release of X^T X (rows clipped to "
            f"L2 norm {Sens(bound)}), ({Sens(eps)}, {Sens(delta)})-DP per row of the bag (group privacy beyond one row)")
    return Judgment(T.TFuzzy(T.TList(row, matrix=True)), {}, cost=cost)


def _wishart_k(ck: Inferencer, expr: S.Expr, what: str) -> int:
    k = static_count(expr, ck.visible_constants(), what, 1)
    if k > WISHART_MAX_K:
        raise CheckError("FZ202", f"{what} is {k}, more than the {WISHART_MAX_K} that `run` draws exactly", expr.span)
    return k


def _wishart_delta_floor(call: PrimCall, delta: Fraction) -> None:
    if delta < WISHART_MIN_DELTA:
        raise CheckError("FZ202", "the delta of `wishart` must be at least 2^-1000 (the calibration's range)",
                         call.statics[1].span)


def _wishart_noise(call: PrimCall, eps: Fraction, delta: Fraction, bound: Fraction, k: int) -> None:
    """The noise w^2 must exist on its grid (`accounting.wishart.calibrate_ratio`)."""
    from fuzzpy.accounting.wishart import calibrate_ratio

    try:
        calibrate_ratio(eps, delta, k)
    except ValueError:
        raise CheckError("FZ202", f"`wishart[{Sens(eps)}, {Sens(delta)}, .., {k}]`: no noise level up to 2^300 b^2 "
                         "reaches this (eps, delta)", call.span) from None


def _ptr_statics(ck: Inferencer, call: PrimCall, name: str) -> tuple[Fraction, Fraction, Fraction, Fraction | None]:
    """eps, delta, b and (`ptr_quantile`) p, each checked in its range."""
    eps = _positive(ck, call.statics[0], f"the epsilon of `{name}`", least=_PTR_MIN_EPSILON)
    delta = _positive(ck, call.statics[1], f"the delta of `{name}`", below=Fraction(1))
    bound = _positive(ck, call.statics[2], f"the bound b of `{name}`")
    level = (_positive(ck, call.statics[3], f"the quantile p of `{name}`", below=Fraction(1))
             if len(call.statics) > 3 else None)
    return eps, delta, bound, level


def _ptr_cost(ck: Inferencer, call: PrimCall, name: str, eps: Fraction, delta: Fraction) -> C.CostCtx:
    """(2 eps, delta) per row of the bag, group privacy over ceil(s) rows."""
    return _approx_cost(ck, call, name, 2 * eps, delta)


def smooth_quantile(ck: Inferencer, call: PrimCall) -> Judgment:
    """`smooth_quantile[eps, delta, lo, hi, p] db` (and `smooth_median[eps,
    delta, lo, hi]`, p = 1/2): the lower p-quantile of the rows clamped to
    [lo, hi] plus Laplace noise of scale 2 S(x) / eps, S an r-smooth upper
    bound on its local sensitivity, r = 1 + 1/N, N >= 2 ln(1/delta) / eps:
    (eps, delta)-DP per row (Nissim, Raskhodnikova & Smith 2007, Lemma 2.6
    with Laplace noise; the constants for this r and add/remove neighbours
    in docs/semantics.md, "`smooth_quantile`", Lemmas S1-S2). A bag that
    moves by s rows: group privacy over ceil(s) rows (Dwork & Roth 2014,
    Thm 2.2; `Group`), as `ptr_quantile`."""
    name = call.name
    eps = _positive(ck, call.statics[0], f"the epsilon of `{name}`", least=_PTR_MIN_EPSILON)
    delta = _positive(ck, call.statics[1], f"the delta of `{name}`", below=Fraction(1))
    lo, hi = _smooth_bounds(ck, call, name)
    level = (_positive(ck, call.statics[4], f"the quantile p of `{name}`", below=Fraction(1))
             if len(call.statics) > 4 else Fraction(1, 2))
    cost = _approx_cost(ck, call, name, eps, delta)
    what = "median" if name == "smooth_median" else f"{Sens(level)}-quantile"
    ck.note(f"`{name}`: smooth sensitivity for the {what} of the rows clamped to [{Sens(lo)}, {Sens(hi)}], "
            f"({Sens(eps)}, {Sens(delta)})-DP per row of the bag (group privacy beyond one row)")
    return Judgment(T.TFuzzy(T.NUM), {}, cost=cost)


def _smooth_bounds(ck: Inferencer, call: PrimCall, name: str) -> tuple[Fraction, Fraction]:
    """lo < hi, two static numbers (each call decides it at its numbers when a
    static parameter names one: `deferred_read`)."""
    from fuzzpy.checker.elaborate import require_static

    constants = ck.visible_constants()

    def read() -> tuple[Fraction, Fraction]:
        lo = Fraction(require_static(call.statics[2], constants, f"the lower bound of `{name}`"))
        hi = Fraction(require_static(call.statics[3], constants, f"the upper bound of `{name}`"))
        if not lo < hi:
            raise CheckError("FZ202", f"`{name}`: the lower bound {Sens(lo)} must be below the upper bound {Sens(hi)}",
                             call.statics[2].span)
        return lo, hi

    lo_hi = deferred_read(ck, call.statics[2], f"the lower bound of `{name}`", read, (Fraction(0), Fraction(1)))
    return deferred_read(ck, call.statics[3], f"the upper bound of `{name}`", read, lo_hi)


def _approx_cost(ck: Inferencer, call: PrimCall, name: str, eps: Fraction, delta: Fraction) -> C.CostCtx:
    """(eps, delta) per row of the bag, group privacy over ceil(s) rows (Dwork & Roth 2014, Thm 2.2)."""
    from fuzzpy.checker.first_order import _bag

    j = _bag(ck, call, elem=T.NUM)

    def event(s: Fraction) -> Event:
        charged = Verified(name, eps, delta)
        steps = math.ceil(s)
        return charged if steps <= 1 else Group(Fraction(steps), (charged,))

    return ck.noise_cost(j.ctx, call.span, f"the bag given to `{name}`", event)


def expmech(ck: Inferencer, call: PrimCall) -> Judgment:
    eps = epsilon(ck, call.statics[0], "the epsilon of `expmech`")
    cands_expr, score_expr, data_expr = call.args
    cands = ck.infer(cands_expr)
    if not isinstance(cands.type, T.TList):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TList(T.NUM), cands.type, cands_expr.span, "`expmech` chooses among a list of candidates")
    data = ck.infer(data_expr)
    cand_type, data_type = cands.type.elem, data.type
    captured, data_sens = _score(ck, score_expr, cand_type, data_type)
    delta = U.plus(captured, U.scale_ctx(data.ctx, data_sens, data_expr.span, f"the score is {data_sens}-sensitive in its data"))
    public = U.scale_ctx(cands.ctx, INF, cands_expr.span, "the candidates of `expmech` are released: they must be public")
    delta = U.plus(delta, public)
    if isinstance(eps, Poly):
        symbolic = eps
        cost = ck.noise_cost(delta, call.span, "the score of `expmech`", lambda s: SymbolicPure(s, symbolic), pure=symbolic)
    else:
        concrete = eps
        cost = ck.noise_cost(delta, call.span, "the score of `expmech`", lambda s: ExpMech(concrete * s), pure=concrete)
    ck.note(f"`expmech[{eps if isinstance(eps, Poly) else Sens(eps)}]`: costs eps x the score's sensitivity in each variable")
    return Judgment(T.TFuzzy(cand_type), {}, cost=cost)


def _score(ck: Inferencer, score: S.Expr, cand_type: T.Type, data_type: T.Type) -> tuple[U.Ctx, object]:
    """Check `score : C -> D -[s]-> num`; return what it captures and s."""
    inner_hint = T.TFun(data_type, INF, T.NUM)
    if isinstance(score, S.Lambda):
        lam = BinderRules(ck).with_param(score, cand_type, inner_hint)
        fn_type, captured = lam.body.type, lam.body.ctx
    else:
        j = ck.infer(score, T.TFun(cand_type, INF, inner_hint))
        if not isinstance(j.type, T.TFun):
            raise CheckError("FZ201", f"expected a scoring function but found `{j.type}`", score.span)
        ck.coerce(Judgment(cand_type), j.type.param, score.span, "`expmech` passes it each candidate")
        fn_type, captured = j.type.result, j.ctx
    if not isinstance(fn_type, T.TFun) or not is_numeric(fn_type.result):
        raise CheckError(
            "FZ201",
            f"expected `{cand_type} -> {data_type} -> num` but found a function returning `{fn_type}`: "
            "the score takes a candidate and the data",
            score.span,
        )
    # the data is measured in its own type's metric: reading it in the
    # score's parameter type (another vector norm) scales the sensitivity
    factor = ck.conversion_factor(data_type, fn_type.param, score.span, "`expmech` passes it the data")
    return captured, fn_type.sens * factor


def _function(ck: Inferencer, fn: S.Expr, param_type: T.Type, result_hint: T.Type | None) -> LambdaResult:
    """A function argument that returns a distribution, eta-expanded if it
    is not a lambda (`loop[k] x0 (step db)` is `fun s -> step db s`, with s
    a fresh name, so that no variable of `step db` is captured)."""
    if not isinstance(fn, S.Lambda):
        fn = eta_expand(fn)
    lam = BinderRules(ck).with_param(fn, param_type, result_hint)
    if not lam.body.is_fuzzy:
        raise CheckError(
            "FZ201",
            f"expected a function returning a distribution but it returns `{lam.body.type}`",
            fn.span,
            hint="end the body with a noise primitive or `return`",
        )
    return lam


def loop(ck: Inferencer, call: PrimCall) -> Judgment:
    what = "the number of rounds of `loop`"
    symbolic_rounds = _symbolic_rounds(ck, call.statics[0])
    if symbolic_rounds is not None:
        k = 1  # the body is typed once; its cost is then k times, as a polynomial (below)
    else:
        k = deferred_read(ck, call.statics[0], what, lambda: static_count(call.statics[0], ck.visible_constants(), what, 0), 1)
    init_expr, fn = call.args
    init = ck.infer(init_expr)
    start = call.hint.inner if isinstance(call.hint, T.TFuzzy) and subtype(init.type, call.hint.inner, ck.lengths) else init.type
    init = ck.coerce(init, start, init_expr.span, f"the state of `loop` is `{start}`")
    point = ck.checkpoint()
    try:
        lam = _function(ck, fn, start, T.TFuzzy(start))
    except CheckError as error:
        # `loop[k] (0, 0) f` whose body returns noisy reals: integers in the
        # initial state are read as numbers (int <: num) and the body retried
        widened = _widen_ints(start)
        if error.diagnostic.code != "FZ201" or widened == start:
            raise
        ck.rollback(point)
        start = widened
        init = ck.coerce(init, start, init_expr.span, f"the state of `loop` is `{start}`")
        lam = _function(ck, fn, start, T.TFuzzy(start))
    assert isinstance(lam.body.type, T.TFuzzy)
    state = lam.body.type.inner
    if not same_type(state, lam.param_type, ck.lengths):
        ck.rollback(point)  # checked again with the state the body returns
        init = ck.check(init_expr, state, f"the state of `loop` is `{state}` (what the body returns)")
        lam = _function(ck, fn, state, lam.body.type)
    if not subtype(lam.body.type.inner, lam.param_type, ck.lengths):  # type: ignore[union-attr]
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(lam.param_type, lam.body.type.inner, fn.span, "the body of `loop` returns the next state")  # type: ignore[union-attr]
    assert lam.body.cost is not None
    if symbolic_rounds is not None:
        found = _symbolic_loop_cost(symbolic_rounds, lam)
        if found is not None:
            _state_read_once(ck, lam, init, init_expr, found)
            ck.note(f"`loop[{symbolic_rounds}]`: the body's pure cost in what it captures, {symbolic_rounds} times "
                    "(basic composition), for every whole number of rounds")
            return Judgment(T.TFuzzy(lam.param_type), {}, cost=found)
        # not a pure cost a polynomial can say: checked at each call's numbers instead
        no_static_parameter(ck, call.statics[0], what)
    rounds = int(k)
    cost: C.CostCtx = {}
    for name, body_cost in lam.body.cost.items():
        if body_cost.is_infinite:
            cost[name] = body_cost
        elif rounds > 0 and body_cost.events():
            _bound_rounds(rounds, body_cost.events(), call.statics[0].span)
            cost[name] = C.Cost((Repeat(rounds, body_cost.events()),))
    if rounds == 0:  # `loop[0] x0 f` is `return x0`: the state is released as it is
        _release_unnoised(init, init_expr.span, cost)
    else:
        _state_read_once(ck, lam, init, init_expr, cost)
    ck.note(f"`loop[{rounds}]`: the body's cost in what it captures, repeated {rounds} times")
    return Judgment(T.TFuzzy(lam.param_type), {}, cost=cost)


def _symbolic_rounds(ck: Inferencer, expr: S.Expr) -> Poly | None:
    """A number of rounds written over the definition's static parameters
    with non-negative coefficients (`loop[k]`, `loop[2 * k + 1]`): its cost
    k * eps is then a polynomial over them (DFuzz's index terms, Gaboardi et
    al. POPL 2013), valid at every call, and each call is still checked at
    its own numbers (a whole number of rounds, within the limits). None for
    a number or any other expression (the existing rules apply)."""
    poly = ck.symbolic_value(expr)
    # the symbols the static parameters stand for here: themselves, or (checked at a
    # caller's own parameters) the caller's, whose calls are each checked again
    here = {s for b in ck.static_params.values() if b.symbolic is not None for s in b.symbolic.symbols()}
    if poly is None or poly.is_const or not poly.symbols() <= here:
        return None
    if any(c < 0 for _, c in poly.terms):
        return None
    return poly


def _symbolic_loop_cost(rounds: Poly, lam: LambdaResult) -> C.CostCtx | None:
    """k rounds of a body whose cost in every variable is pure: each
    variable's cost k * eps, by basic composition (Dwork & Roth 2014, Thm
    3.16). None when another rule must decide. Every call has at least one
    round: the symbols are positive and the count whole at each call."""
    assert lam.body.cost is not None
    cost: C.CostCtx = {}
    for name, body_cost in lam.body.cost.items():
        if body_cost.is_infinite:
            cost[name] = body_cost
            continue
        epsilon = pure_polynomial(body_cost.events())
        if epsilon is None:
            return None
        if epsilon.terms:
            cost[name] = C.Cost((SymbolicPure(Fraction(1), rounds * epsilon),))
    return cost


def _state_read_once(ck: Inferencer, lam: LambdaResult, init: Judgment, init_expr: S.Expr, cost: C.CostCtx) -> None:
    """The initial state is read by the first round only (post-processing
    after it), as in `loop`'s rule for a number of rounds of at least 1."""
    if lam.param_cost is None:
        return
    for name, usage in init.ctx.items():
        blame = ck.blame_for(name, usage, init_expr.span, "the initial state of `loop`")
        scaled = C.untagged(C.scale_cost(lam.param_cost, usage.sens, blame))  # the rounds' draws, not one
        if scaled is not None:
            cost[name] = C.chain(scaled, cost.get(name))


def pure_polynomial(events: tuple[Event, ...]) -> Poly | None:
    """The events' pure epsilon under basic composition as a polynomial, or
    None when one of them is not pure (or not a kind this sum knows)."""
    from fuzzpy.accounting import (
        events as E,  # the classes themselves (a test may wrap this module's names)
    )

    total = Poly()
    for event in events:
        if isinstance(event, (E.Laplace, E.Geometric)):
            total = total + Poly.const(Fraction(event.sensitivity) / Fraction(event.scale))
        elif isinstance(event, (E.Staircase, E.ExpMech)):
            total = total + Poly.const(Fraction(event.epsilon))
        elif isinstance(event, E.SymbolicPure):
            total = total + event.epsilon.scale(Fraction(event.sensitivity))
        elif isinstance(event, E.Repeat):
            inner = pure_polynomial(event.body)
            if inner is None:
                return None
            total = total + inner.scale(Fraction(event.count))
        else:
            return None
    return total


def repeated(events: tuple[Event, ...]) -> int:
    """How many times the most repeated event of ``events`` runs: the
    product of the counts of the `Repeat`s around it (nested loops, also
    through calls)."""
    most = 1
    for event in events:
        if isinstance(event, Repeat):
            most = max(most, event.count * repeated(event.body))
        elif isinstance(event, (Subsample, Sample, Group)):
            most = max(most, repeated(event.body))
    return most


def _bound_rounds(rounds: int, body: tuple[Event, ...], span: Span) -> None:
    """Nested loops multiply their rounds: an event repeated 10^12 times (or
    10^300 times, 50 loops deep) is beyond what `run` carries out, and its
    per-round cost, tiny enough to round to 0 in the accountant's floating
    point, would be multiplied by a count that no longer makes it negligible.
    Every event of a definition runs at most `MAX_STATIC_COUNT` times in all,
    as one loop may (FZ217)."""
    inner = repeated(body)
    if rounds * inner > MAX_STATIC_COUNT:
        raise CheckError(
            "FZ217",
            f"this loop runs {rounds:,} rounds of a body that repeats a release {inner:,} times: "
            f"{rounds * inner:,} releases in all, more than the {MAX_STATIC_COUNT:,} that `run` carries out",
            span,
            hint="nested loops multiply their rounds: use fewer rounds in one of them",
        )


def _release_unnoised(init: Judgment, span: Span, cost: C.CostCtx) -> None:
    """Zero rounds release the initial state itself: infinite cost in every
    variable it depends on, as for `return` (Fuzz's monadic unit is free only
    on public values)."""
    for name, usage in init.ctx.items():
        if not usage.sens.is_zero:
            cost[name] = C.infinite(
                C.Blame(
                    "FZ301",
                    span,
                    f"`loop[0]` runs no round, so it releases its initial state, which depends on `{source_name(name)}`, without noise",
                    hint="use at least one round, or start the loop from a public value",
                )
            )


def _widen_ints(t: T.Type) -> T.Type:
    if isinstance(t, T.TInt):
        return T.NUM
    if isinstance(t, T.TTuple):
        return T.TTuple(tuple(_widen_ints(item) for item in t.items))
    if isinstance(t, T.TRecord):
        return T.TRecord(tuple((name, _widen_ints(ty)) for name, ty in t.fields), alias=t.alias)
    if isinstance(t, T.TList):
        return T.TList(_widen_ints(t.elem))
    return t


def _rate(ck: Inferencer, expr: S.Expr, what: str) -> Fraction:
    q = positive_static(expr, ck.visible_constants(), what)
    if q > 1:
        raise CheckError("FZ202", f"`subsample[{q}]`: the rate is a probability, at most 1", expr.span)
    return q


def subsample(ck: Inferencer, call: PrimCall) -> Judgment:
    what = "the sampling rate of `subsample`"
    q = deferred_read(ck, call.statics[0], what, lambda: _rate(ck, call.statics[0], what), Fraction(1, 2))
    if q > 1:
        raise CheckError("FZ202", f"`subsample[{q}]`: the rate is a probability, at most 1", call.statics[0].span)
    return _sampled(ck, call, "subsample", lambda body, direct: Subsample(Fraction(q), body, direct=direct),
                    f"`subsample[{Sens(q)}]`: the body's cost in the sampled bag, amplified by subsampling")


def choose(ck: Inferencer, call: PrimCall) -> Judgment:
    """`choose[m] f db`: f on m rows of db drawn uniformly without
    replacement (all of db if it has at most m). Amplified by the rate m/n
    only where n is public: under replace-one neighbours, for a bag that is
    the dataset itself (`fuzzpy.accounting.neighbours`; Balle, Barthe &
    Gaboardi 2018, Thm 10)."""
    no_static_parameter(ck, call.statics[0], "the sample size of `choose`")
    m = static_count(call.statics[0], ck.visible_constants(), "the sample size of `choose`", 1)
    return _sampled(ck, call, "choose", lambda body, direct: Sample(False, m, direct, body),
                    f"`choose[{m}]`: the body's cost in a sample of {m} rows, amplified by m/n where n is public")


def bootstrap(ck: Inferencer, call: PrimCall) -> Judgment:
    """`bootstrap[m] f db`: f on m rows of db drawn uniformly with
    replacement (empty if db is)."""
    no_static_parameter(ck, call.statics[0], "the sample size of `bootstrap`")
    m = static_count(call.statics[0], ck.visible_constants(), "the sample size of `bootstrap`", 1)
    return _sampled(ck, call, "bootstrap", lambda body, direct: Sample(True, m, direct, body),
                    f"`bootstrap[{m}]`: the body's cost in {m} draws with replacement (a row drawn k times moves the sample by k)")


def _sampled(ck: Inferencer, call: PrimCall, name: str,
             event: Callable[[tuple[Event, ...], bool], Event], note: str) -> Judgment:
    """The rule shared by the samplers: the body's cost in the sampled bag,
    wrapped in the sampler's event, re-expressed in the bag's variables. A
    bag that is a variable used once is charged the event directly (the
    sample is of that variable's rows: ``direct``); any other bag through
    `costs.scale_cost`, which clears ``direct``."""
    fn, data_expr = call.args
    data = ck.infer(data_expr)
    if not isinstance(data.type, T.TBag):
        from fuzzpy.checker.infer import type_mismatch

        raise type_mismatch(T.TBag(T.NUM), data.type, data_expr.span, f"`{name}` samples the rows of a bag")
    lam = _function(ck, fn, data.type, call.hint)
    assert lam.body.cost is not None
    cost: C.CostCtx = dict(lam.body.cost)
    inner = lam.param_cost
    if (inner is not None and not inner.is_infinite and C.is_symbolic(inner.events())
            and not ck.defer(_symbols_of(inner.events()).symbols(), "an epsilon under `subsample`")):
        # amplification (log(1 + q(e^eps - 1))) is not a polynomial in eps
        raise CheckError(
            "FZ202",
            f"the body of `{name}` has an epsilon that names a parameter: amplification by subsampling "
            "is not linear in epsilon, so its cost cannot be written over the parameter",
            fn.span,
            hint=f"give the epsilon inside `{name}` as a top-level constant or a literal",
        )
    if inner is not None:
        direct_name = data_expr.name if isinstance(data_expr, S.Var) else None
        for name_, usage in data.ctx.items():
            if inner.is_infinite:
                amplified = inner
            else:
                # local reports under a sampler: the sample's size moves with one row (or, for
                # `choose`, has no rule here), so they go through `scale_cost`, which refuses them (FZ301)
                direct = name_ == direct_name and usage.sens == ONE and not has_local(inner.events())
                amplified = C.Cost((event(inner.events(), direct),))
                if direct:
                    cost[name_] = C.chain(cost.get(name_), amplified)
                    continue
            blame = ck.blame_for(name_, usage, data_expr.span, f"the bag given to `{name}`")
            scaled = C.scale_cost(amplified, usage.sens, blame)
            if scaled is not None:
                cost[name_] = C.chain(cost.get(name_), scaled)
    ck.note(note)
    return Judgment(lam.body.type, {}, cost=cost)


# ---------------------------------------------------------------- iterate


#: beyond this many bits a sensitivity s^k is reported as infinite (sound:
#: an upper bound), and below 1 the powers past it are bounded by s^64
_ITERATE_EXACT = 64
_ITERATE_CAP = Fraction(2) ** 1024


def iterate(ck: Inferencer, call: PrimCall) -> Judgment:
    """`iterate[k] f x`: f applied k times to x, f : A -[s]-> A deterministic.
    Fuzz's application rule (Reed & Pierce 2010: Gamma + s * Delta) applied k
    times: the result is s^k-sensitive in x (DiffMu's `for` loop over
    `x = x + x` is 2^k), and what f captures with sensitivity t is used
    t * (1 + s + ... + s^(k-1)): the i-th application's use passes through
    the k - 1 - i later ones. k = 0 gives x and never applies f."""
    what = "the number of rounds of `iterate`"
    rounds = _index_rounds(ck, call.statics[0])
    k = 1 if rounds is not None else deferred_read(
        ck, call.statics[0], what, lambda: static_count(call.statics[0], ck.visible_constants(), what, 0, MAX_ITERATE_ROUNDS), 1)
    fn, start_expr = call.args
    start = ck.infer(start_expr, call.hint)
    if not isinstance(fn, S.Lambda):
        fn = eta_expand(fn)
    lam = BinderRules(ck).with_param(fn, start.type, start.type)
    if lam.body.is_fuzzy:
        raise CheckError(
            "FZ201",
            "the function given to `iterate` returns a distribution: `iterate` composes deterministic steps",
            fn.span,
            hint="use `loop[k] x0 (fun s -> ...)` for rounds that release",
        )
    ck.coerce(lam.body, start.type, fn.span, "`iterate` feeds each result back to the function")
    symbolic = None if rounds is None else _index_powers(lam.param_sens, rounds)
    if rounds is not None and symbolic is None:
        ck.defer(rounds.symbols(), f"{what} over a step of sensitivity {lam.param_sens} (s^k is not an index term)")
    power, geometric = _powers(lam.param_sens, k) if symbolic is None else symbolic
    if rounds is not None:
        k = rounds  # type: ignore[assignment]  # shown in the notes
    ctx = U.scale_ctx(start.ctx, power, start_expr.span, f"passed through {k} applications of a {lam.param_sens}-sensitive function")
    captured = U.scale_ctx(dict(lam.body.ctx), geometric, fn.span, f"used by each of the {k} applications")
    ck.note(f"`iterate[{k}]`: {power}-sensitive in the start (s^k with s = {lam.param_sens}); "
            f"what the function captures, {geometric} times")
    return Judgment(start.type, U.plus(ctx, captured))


def _index_rounds(ck: Inferencer, expr: S.Expr) -> Poly | None:
    """A number of rounds that is an index term over the definition's `nat`
    indices (symbols here), positive coefficients: at least 1 at every call
    (a whole number, each call checks it). None otherwise."""
    named = ck.static_parameters_in(expr)
    if not named or not set(named) <= ck.index_params or set(named) & ck.deferred.keys():
        return None
    poly = ck.symbolic_value(expr)
    if poly is None or poly.is_const or any(c <= 0 for _, c in poly.terms):
        return None
    return poly


def _index_powers(s: Sens, k: Poly) -> tuple[Sens, Sens] | None:
    """(s^k, 1 + s + ... + s^(k-1)) bounded by index terms for every whole
    k >= 1: s = 0 gives (0, 1); s = 1 gives (1, k); s < 1 gives (s, 1/(1-s))
    (s^k <= s and the geometric sum's limit). None for s > 1 (s^k grows
    exponentially, not an index term) or s itself symbolic."""
    if s.is_zero:
        return ZERO, ONE
    if s.value is None:
        return None
    if s.value == 1:
        return ONE, Sens.symbolic(k)
    if s.value < 1:
        return s, Sens(1 / (1 - s.value))
    return None


def _powers(s: Sens, k: int) -> tuple[Sens, Sens]:
    """(s^k, 1 + s + ... + s^(k-1)) as sensitivities, rounded up: infinite
    past 2^1024, and for s < 1 bounded by the first 64 terms' form
    (s^k <= s^64, the sum <= 1 / (1 - s))."""
    if k == 0:
        return ONE, ZERO
    if s.is_inf:
        return INF, INF
    assert s.value is not None
    v = s.value
    if v == 1:
        return ONE, Sens(Fraction(k))
    if v < 1:
        power = v ** min(k, _ITERATE_EXACT)
        geometric = (1 - v ** k) / (1 - v) if k <= _ITERATE_EXACT else 1 / (1 - v)
        return Sens(power), Sens(geometric)
    if k * v.numerator.bit_length() > 1100:  # v^k > 2^1024 surely or nearly: an upper bound
        return INF, INF
    power = v ** k
    if power > _ITERATE_CAP:
        return INF, INF
    return Sens(power), Sens((power - 1) / (v - 1))
