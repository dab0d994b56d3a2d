"""Rules for binders: blocks (`let`, `let (x, y)`, `sample`), lambdas, `case`.

Blocks are checked in two passes so that a long block stays linear: forward,
to learn each statement's type and bring its variable into scope; then
backward, folding each statement into the context of what follows it:

* `let x = e; rest`   (Fuzz's let): rest's sensitivity r in x scales e's
  context: Γ_rest - x + r·Γ_e. When rest is a distribution, x's *cost* in
  rest is re-expressed in e's variables (`costs.scale_cost`).
* `let (x, y) = e; rest` (tensor elimination): scaled by max(r_x, r_y).
* `sample x = m; rest` (the monad's bind): the costs of m and rest compose
  (events concatenate); x is a released value, free to use.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.accounting.local import has_local
from fuzzpy.checker import costs as C
from fuzzpy.checker import usage as U
from fuzzpy.checker.context import Binding, Judgment
from fuzzpy.checker.errors import CheckError
from fuzzpy.checker.terms import free_vars, source_name
from fuzzpy.checker.typerel import contains_fuzzy, join_types
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import ONE, ZERO, Sens, case_scale

if TYPE_CHECKING:
    from fuzzpy.checker.infer import Handler, Inferencer


def handlers(ck: Inferencer) -> dict[type, Handler]:
    rules = BinderRules(ck)
    return {
        S.Block: rules.block,
        S.Lambda: rules.lambda_,
        S.CaseList: rules.case_list,
        S.CaseSum: rules.case_sum,
    }


@dataclass
class LambdaResult:
    """A function checked with a known parameter type."""

    param_type: T.Type
    param_sens: Sens  # how sensitive the body is in the parameter
    param_cost: C.Cost | None  # the body's cost in the parameter (distribution bodies)
    body: Judgment  # its ctx / cost: what the function captures


def spread_literal_tuples(stmts: tuple[S.BlockStmt, ...]) -> list[S.BlockStmt]:
    """`let (x, y) = (a, b);` as `let x = a; let y = b;`: the same values, but
    each name is its own route to what it reads, so draws behind x and y
    compose as draws of one database do (costs.merge_draw / compose_draws)
    instead of the pair's metric charging every draw for both components.
    Only where a later component does not read an earlier name (which the
    pair form would take from the enclosing scope)."""
    spread: list[S.BlockStmt] = []
    for stmt in stmts:
        if not _spreadable(stmt):
            spread.append(stmt)
            continue
        assert isinstance(stmt, S.LetTuple) and isinstance(stmt.expr, S.Tuple)
        spread.extend(S.LetStmt(name, None, item, item.span)
                      for name, item in zip(stmt.names, stmt.expr.items, strict=True))
    return spread


def _spreadable(stmt: S.BlockStmt) -> bool:
    if not isinstance(stmt, S.LetTuple) or not isinstance(stmt.expr, S.Tuple):
        return False
    names, items = stmt.names, stmt.expr.items
    if len(names) != len(items) or len(set(names)) != len(names):
        return False
    return all(not (free_vars(item) & set(names[:k])) for k, item in enumerate(items))


class BinderRules:
    def __init__(self, ck: Inferencer) -> None:
        self.ck = ck
        self.merged: list[str] = []  # what the last `let` folded into one draw (`check --explain`)

    # ------------------------------------------------------------ blocks

    def block(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Block)
        ck = self.ck
        done: list[tuple[S.BlockStmt, Judgment, list[tuple[str, Binding | None, str]]]] = []
        try:
            for stmt in spread_literal_tuples(expr.stmts):
                j = self._statement(stmt)
                done.append((stmt, j, self._bind_statement(stmt, j)))
            result = ck.infer(expr.result, hint)
        finally:
            for _, _, shadowed in reversed(done):
                for name, previous, _key in reversed(shadowed):
                    ck.unbind(name, previous)
        fuzzy = result.is_fuzzy
        for stmt, _, _ in done:
            if isinstance(stmt, S.SampleStmt) and not fuzzy:
                raise CheckError(
                    "FZ213",
                    f"`sample` needs the block to end in a distribution, but it ends in `{result.type}`",
                    stmt.span,
                    hint="end the block with `return e` or a noise primitive",
                )
        ctx, cost = result.ctx, result.cost
        for stmt, j, bound in reversed(done):
            keys = tuple(key for _, _, key in bound)  # what uses of the bound names are recorded under
            if isinstance(stmt, S.SampleStmt):
                assert cost is not None and j.cost is not None
                cost.pop(keys[0], None)
                cost = C.then_into(cost, j.cost)
                note = (f"`{stmt.name}` is a released value: using it is post-processing, free (Dwork & Roth "
                        "2014, Prop. 2.1); the costs compose sequentially (events concatenate)")
            elif isinstance(stmt, S.LetStmt):
                if j.is_fuzzy:
                    note = f"`{stmt.name}` names a distribution: each `sample` of it was charged where it was used"
                else:
                    self.merged = []
                    ctx, cost = self._fold_let(keys, j, stmt, ctx, cost)
                    note = "; ".join([f"let: the value bound to `{stmt.name}` counts as often as `{stmt.name}` is used "
                                      "after it", *self.merged])
            else:
                self.merged = []
                ctx, cost = self._fold_let(keys, j, stmt, ctx, cost)
                note = "; ".join(["let (x, y): the pair counts as much as its most used component", *self.merged])
                if is_split(stmt.expr):
                    note = ("parallel composition (McSherry, PINQ 2009): `split` puts each row in exactly one "
                            "half, so the cost is the larger of the halves' costs, not their sum")
            if ck.tracer is not None:
                ck.tracer.statement(stmt, Judgment(result.type, ctx, cost=cost), note)
        if done:
            ck.note("block: the statements folded back from the end, as above")
        return Judgment(result.type, ctx, cost=cost, static=result.static, length=result.length)

    def _statement(self, stmt: S.BlockStmt) -> Judgment:
        ck = self.ck
        if isinstance(stmt, S.LetStmt):
            if stmt.type is not None:
                expected = ck.elaborate(stmt.type)
                return ck.check(stmt.expr, expected, f"`{stmt.name}` is annotated `{expected}`")
            return ck.infer(stmt.expr)
        if isinstance(stmt, S.SampleStmt):
            j = ck.infer(stmt.expr)
            if not j.is_fuzzy:
                raise CheckError(
                    "FZ213",
                    f"`sample` takes a distribution (`fuzzy A`), but this is `{j.type}`",
                    stmt.expr.span,
                    hint="use `let` for ordinary values",
                )
            return j
        j = ck.infer(stmt.expr)
        if not isinstance(j.type, T.TTuple) or len(j.type.items) != len(stmt.names):
            raise CheckError(
                "FZ201",
                f"expected a tuple of {len(stmt.names)} components but found `{j.type}`: "
                f"`let ({', '.join(stmt.names)}) = ...` takes a tuple apart",
                stmt.expr.span,
            )
        return j

    def _bind_statement(self, stmt: S.BlockStmt, j: Judgment) -> list[tuple[str, Binding | None, str]]:
        """Bring the statement's names into scope: (name, what it shadowed, key)."""
        if isinstance(stmt, S.SampleStmt):
            assert isinstance(j.type, T.TFuzzy)
            return [self._bind(stmt.name, Binding(j.type.inner))]
        if isinstance(stmt, S.LetStmt):
            return [self._bind(stmt.name, Binding(j.type, static=j.static, length=j.length, cost=j.cost if j.is_fuzzy else None))]
        assert isinstance(j.type, T.TTuple)
        return [self._bind(name, Binding(ty)) for name, ty in zip(stmt.names, j.type.items, strict=True)]

    def _bind(self, name: str, binding: Binding) -> tuple[str, Binding | None, str]:
        previous = self.ck.bind(name, binding)
        return name, previous, binding.key

    def _fold_let(
        self,
        names: tuple[str, ...],
        bound: Judgment,
        stmt: S.BlockStmt,
        ctx: U.Ctx,
        cost: C.CostCtx | None,
    ) -> tuple[U.Ctx, C.CostCtx | None]:
        """Fuzz's let: the bound expression's context, scaled by the use of
        the bound variable(s) in what follows."""
        label = ", ".join(f"`{source_name(n)}`" for n in names)
        if cost is None:
            r = ZERO
            for name in names:
                usage = ctx.pop(name, None)
                if usage is not None:
                    r = r.join(usage.sens)
            if r.is_zero:
                return ctx, cost
            scaled = U.scale_ctx(bound.ctx, r, stmt.span, f"{label} is used with sensitivity {r}")
            return U.plus(ctx, scaled), cost
        own: C.Cost | None = None
        # Parts of a tuple of bags (from `split`) move by whole rows whose
        # total is the tuple's distance: between neighbours only one part
        # changes, so their costs join (parallel composition). Other parts
        # may all move a little at once: their costs compose.
        parallel = isinstance(bound.type, T.TTuple) and all(isinstance(t, T.TBag) for t in bound.type.items)
        combine = C.join if parallel else C.then
        popped_all: list[C.Cost] = []
        for name in names:
            ctx.pop(name, None)
            popped = cost.pop(name, None)
            if popped is not None:
                popped_all.append(popped)
            own = popped if own is None else combine(own, popped)
        if own is None:
            return ctx, cost
        merged = None if parallel else C.merge_draw(popped_all)
        if merged is not None:  # `let (x, y) = ...` read by one draw: per unit of the tuple's distance,
            own = merged[0]     # at most s_x + s_y (whichever of the tuple's metrics)
        # `let b = db`: b IS db's bag, so a sample of b is of the variable's own rows and a
        # count or clamped sum of it keeps its replace-one move (`events.Subsample.direct`,
        # `Laplace.replaced`), as for a bag passed as it is to a function (`apply`)
        alias = isinstance(stmt, S.LetStmt) and isinstance(stmt.expr, S.Var) and not has_local(own.events())
        for var, usage in bound.ctx.items():
            blame = self.ck.blame_for(var, usage, stmt.span, f"the value bound to {label}")
            scaled = C.scale_cost(own, usage.sens, blame, keep_direct=alias)
            if scaled is not None:
                cost[var] = self._alias(var, cost.get(var), scaled, label)
        return ctx, cost

    def _alias(self, var: str, direct: C.Cost | None, routed: C.Cost, label: str) -> C.Cost:
        """``var``'s cost read directly and through ``label`` (a deterministic
        alias of it): one draw at the summed sensitivity when both are the
        same draw (`costs.merge_draw`), else the chain of the two."""
        merged = None if direct is None else C.merge_draw([direct, routed])
        if merged is None:
            separate = None if direct is None else C.compose_draws([direct, routed])
            return separate if separate is not None else C.chain(direct, routed)
        parts = " + ".join(str(Sens.of(p)) for p in merged[1])
        said = (f"one draw reads `{source_name(var)}` directly and through {label}: one draw, "
                f"sensitivity {parts} = {Sens.of(sum(merged[1], Fraction(0)))} (the let rule inside the draw)")
        self.merged.append(said)
        if label == "the parts taken apart":
            self.ck.note(said)
        return merged[0]

    # ------------------------------------------------------------ lambdas

    def lambda_(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.Lambda)
        ck = self.ck
        if expr.param_type is not None:
            param_type = ck.elaborate(expr.param_type)
        elif isinstance(hint, T.TFun):
            param_type = hint.param
        else:
            raise CheckError(
                "FZ209",
                f"cannot infer the type of the parameter `{expr.param}`",
                expr.span,
                hint=f"annotate it: `fun ({expr.param} : num) -> ...`",
            )
        result_hint = hint.result if isinstance(hint, T.TFun) else None
        lam = self.with_param(expr, param_type, result_hint)
        return lambda_value(ck, expr, lam)

    def with_param(self, expr: S.Lambda, param_type: T.Type, result_hint: T.Type | None) -> LambdaResult:
        """Check a lambda's body with its parameter bound to ``param_type``."""
        ck = self.ck
        factor = ONE
        if expr.param_type is not None:
            declared = ck.elaborate(expr.param_type)
            # the values passed in are measured in `param_type`'s metric: a
            # body s-sensitive in the declared metric is s * factor in it
            factor = ck.conversion_factor(param_type, declared, expr.span, f"`{expr.param}` is annotated `{declared}`")
            param_type = declared
        if contains_fuzzy(param_type):
            raise CheckError("FZ213", "a function cannot take a distribution as its parameter", expr.span)
        binding = Binding(param_type, is_param=True)
        previous = ck.bind(expr.param, binding)
        try:
            body = ck.infer(expr.body, result_hint)
        finally:
            ck.unbind(expr.param, previous)
        usage = body.ctx.pop(binding.key, None)
        ck.captures[expr.span] = frozenset(source_name(key) for key, use in body.ctx.items() if not use.sens.is_zero)
        # a definition checked at several calls' numbers: only what every check used at 0
        zero, before = _zero_captures(ck, expr, body), ck.zero_captures.get(expr.span)
        ck.zero_captures[expr.span] = zero if before is None else {n: t for n, t in zero.items() if n in before}
        param_cost = body.cost.pop(binding.key, None) if body.cost is not None else None
        if factor != ONE and param_cost is not None:
            blame = C.Blame("FZ306", expr.span, f"`{expr.param}` is read in another vector norm")
            param_cost = C.scale_cost(param_cost, factor, blame)
        sens = ZERO if usage is None else usage.sens * factor
        return LambdaResult(param_type, sens, param_cost, body)

    # ------------------------------------------------------------ case

    def case_list(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.CaseList)
        ck = self.ck
        scrutinee = ck.infer(expr.scrutinee)
        if not isinstance(scrutinee.type, T.TList):
            raise CheckError(
                "FZ201",
                f"expected a list but found `{scrutinee.type}`: `case ... of [] -> ... | h :: t -> ...` takes a list apart",
                expr.scrutinee.span,
            )
        nil = ck.infer(expr.nil_body, hint)
        bindings = [(expr.head_var, scrutinee.type.elem), (expr.tail_var, scrutinee.type)]
        cons, keys = self._branch(expr.cons_body, bindings, hint or nil.type)
        return self._case(expr, scrutinee, [(nil, ()), (cons, keys)], "`case`")

    def case_sum(self, expr: S.Expr, hint: T.Type | None) -> Judgment:
        assert isinstance(expr, S.CaseSum)
        ck = self.ck
        scrutinee = ck.infer(expr.scrutinee)
        if not isinstance(scrutinee.type, T.TSum):
            raise CheckError(
                "FZ201",
                f"expected a sum type `A + B` but found `{scrutinee.type}`: `case ... of inl x -> ... | inr y -> ...` takes a sum apart",
                expr.scrutinee.span,
            )
        left, left_keys = self._branch(expr.left_body, [(expr.left_var, scrutinee.type.left)], hint)
        right, right_keys = self._branch(expr.right_body, [(expr.right_var, scrutinee.type.right)], hint or left.type)
        return self._case(expr, scrutinee, [(left, left_keys), (right, right_keys)], "`case`")

    def _branch(self, body: S.Expr, bindings: list[tuple[str, T.Type]], hint: T.Type | None) -> tuple[Judgment, tuple[str, ...]]:
        """A branch checked with its binders in scope, and the keys their uses are recorded under."""
        shadowed = [self._bind(name, Binding(ty)) for name, ty in bindings]
        try:
            return self.ck.infer(body, hint), tuple(key for _, _, key in shadowed)
        finally:
            for name, previous, _key in reversed(shadowed):
                self.ck.unbind(name, previous)

    def _case(
        self,
        expr: S.Expr,
        scrutinee: Judgment,
        branches: list[tuple[Judgment, tuple[str, ...]]],
        construct: str,
    ) -> Judgment:
        """Fuzz's case rule: the branches join; the scrutinee's context is
        scaled by case_scale(r), r the largest sensitivity of the bound
        variables in the branches."""
        ck = self.ck
        result_type = branches[0][0].type
        for j, _ in branches[1:]:
            joined = join_types(result_type, j.type, ck.lengths)
            if joined is None:
                raise ck.mismatch(result_type, j.type, expr.span, "all branches of `case` must have the same type")
            result_type = joined
        if isinstance(result_type, T.TFuzzy):
            return self._case_fuzzy(expr, scrutinee, branches, construct, result_type)
        r = ZERO
        ctx: U.Ctx = {}
        for j, names in branches:
            for name in names:
                usage = j.ctx.pop(name, None)
                if usage is not None:
                    r = r.join(usage.sens)
            ctx = U.join_ctx(ctx, j.ctx)
        factor = case_scale(r)
        ck.note(f"case: branches join; the scrutinee is scaled by {factor}")
        scaled = U.scale_ctx(scrutinee.ctx, factor, expr.span, f"taken apart by {construct} whose parts are used with sensitivity {r}")
        return Judgment(result_type, U.plus(ctx, scaled))

    def _case_fuzzy(
        self,
        expr: S.Expr,
        scrutinee: Judgment,
        branches: list[tuple[Judgment, tuple[str, ...]]],
        construct: str,
        result_type: T.Type,
    ) -> Judgment:
        """With distribution-valued branches: if the scrutinee moves a finite
        distance it stays on the same branch (lists of other lengths, other
        sides of a sum, are infinitely far), and the bound parts carry the
        branch's costs, re-expressed in the scrutinee's variables; an
        infinitely sensitive scrutinee picks the branch: infinite cost."""
        ck = self.ck
        cost: C.CostCtx = {}
        parts: C.Cost | None = None
        for j, names in branches:
            assert j.cost is not None
            branch_parts: C.Cost | None = None
            for name in names:  # the parts of one branch (h and t) may all move
                popped = j.cost.pop(name, None)
                branch_parts = popped if branch_parts is None else C.then(branch_parts, popped)
            if branch_parts is not None:  # only one branch runs: the branches join
                parts = C.join(parts, branch_parts)
            cost = C.join_ctx(cost, j.cost)
        infinite_part: U.Ctx = {n: u for n, u in scrutinee.ctx.items() if u.sens.is_inf}
        ck.branch_on_private(cost, infinite_part, expr.span, construct)
        for name, usage in scrutinee.ctx.items():
            if usage.sens.is_inf or parts is None:
                continue
            blame = ck.blame_for(name, usage, expr.span, "the value taken apart")
            scaled = C.scale_cost(parts, usage.sens, blame)
            if scaled is not None:
                cost[name] = self._alias(name, cost.get(name), scaled, "the parts taken apart")
        ck.note("case on a distribution: branches join, the parts' costs move to the scrutinee")
        return Judgment(result_type, {}, cost=cost)


def lambda_value(ck: Inferencer, expr: S.Lambda, lam: LambdaResult) -> Judgment:
    """A lambda as a value: `A -[s]-> B`, with the context it captures. A
    function returning a distribution is s-sensitive in the max-divergence
    metric for s its pure epsilon (infinite if its cost is not pure)."""
    body = lam.body
    if body.cost is None:
        ck.note(f"function: {lam.param_sens}-sensitive in `{expr.param}`; its context is what it captures")
        return Judgment(T.TFun(lam.param_type, lam.param_sens, body.type), body.ctx)
    symbolic = [c for c in (lam.param_cost, *body.cost.values())
                if c is not None and not c.is_infinite and C.is_symbolic(c.events())]
    if symbolic:
        polys = [C.symbolic_epsilon(c.events()) for c in symbolic]
        symbols = frozenset(s for poly in polys if poly is not None for s in poly.symbols())
        if ck.defer(symbols, "a function value's epsilon over the definition's parameters"):
            # checked at each call's numbers (review s28: a lambda whose cost is n eps
            # crashed the checker); the generic pass's results are discarded
            return Judgment(T.TFun(lam.param_type, Sens(None), body.type), {})
        raise CheckError(
            "FZ202",
            "this function's epsilon names a parameter of the definition: a function value must have a "
            "numeric epsilon (its sensitivity in max divergence)",
            expr.span,
            hint="call the noise directly in the definition's body, or give the epsilon as a constant",
        )
    if any(c is not None and not c.is_infinite and has_local(c.events()) for c in (lam.param_cost, *body.cost.values())):
        # local reports are private for replace-one changes of the bag they
        # randomise; a function's type keeps only a pure epsilon per variable,
        # which would charge them as an add/remove release (adversarial review)
        raise CheckError(
            "FZ301",
            "this function releases local or shuffled reports: their replace-one guarantee is not tracked "
            "through a function value",
            expr.span,
            hint="call `local` / `shuffle` in the definition's body itself, on its database parameter",
        )
    _refuse_step_costs(ck, expr, lam)
    sens = _pure_sens(lam.param_cost, C.integral_metric(lam.param_type))
    ctx: U.Ctx = {}
    for name, cost in body.cost.items():
        eps = _pure_sens(cost, _integral_key(ck, name))
        ctx[name] = U.Usage(eps, "use", expr.span, code="FZ313")
    ck.note("a function returning a distribution: sensitive, in max divergence, by its pure epsilon")
    return Judgment(T.TFun(lam.param_type, sens, body.type), ctx)


def _refuse_step_costs(ck: Inferencer, expr: S.Lambda, lam: LambdaResult) -> None:
    """FZ301 for a function value whose pure cost in a real-valued argument
    or capture is a step of the distance (`costs.linear_epsilon`): the
    staircase, `rr` / `krr`, a verified mechanism, a subsample or group of
    anything. Its type's epsilon per unit of distance would charge a move of
    0.001 a thousandth of a release that such a move can flip whole."""
    routes: list[tuple[C.Cost | None, bool, str]] = [(lam.param_cost, C.integral_metric(lam.param_type), expr.param)]
    routes += [(cost, _integral_key(ck, key), source_name(key)) for key, cost in (lam.body.cost or {}).items()]
    for cost, integral, name in routes:
        if cost is None or cost.is_infinite or C.pure_epsilon(cost.events()) is None:
            continue
        if C.linear_epsilon(cost.events(), integral) is None:
            raise CheckError(
                "FZ301",
                f"this function's cost in `{name}` is not linear in `{name}`'s distance (`staircase`, `rr`, `krr`, "
                "a verified mechanism, a subsample: a move below 1 may cost the whole epsilon, eps * ceil(d)), "
                "so no epsilon per unit of distance can stand for it in a function's type",
                expr.span,
                hint="apply the mechanism directly to the value in the definition's body (or call a definition "
                     "with all its arguments)",
            )


def _zero_captures(ck: Inferencer, expr: S.Lambda, body: Judgment) -> dict[str, T.Type]:
    """The local variables the lambda reads at sensitivity 0 and no cost
    (`CheckedProgram.zero_captures`); never a static number, an index or a
    `let`-bound distribution, whose values the body does read."""
    found: dict[str, T.Type] = {}
    for name in free_vars(expr.body) - {expr.param}:
        binding = ck.env.lookup(name)
        if binding is None or binding.static is not None or binding.symbolic is not None or binding.cost is not None:
            continue
        if binding.length is not None or contains_fuzzy(binding.type):
            continue
        use = body.ctx.get(binding.key)
        if use is not None and not use.sens.is_zero:
            continue
        if body.cost is not None and body.cost.get(binding.key) is not None:
            continue
        found[name] = binding.type
    return found


def _integral_key(ck: Inferencer, key: str) -> bool:
    binding = ck.env.by_key(key)
    return binding is not None and C.integral_metric(binding.type)


def _pure_sens(cost: C.Cost | None, integral: bool = False) -> Sens:
    if cost is None:
        return ZERO
    if cost.is_infinite:
        return Sens(None)
    eps = C.linear_epsilon(cost.events(), integral)
    return Sens(None) if eps is None else Sens(eps)


def is_split(expr: S.Expr) -> bool:
    """`split p db` (the head of the application is the primitive `split`)."""
    while isinstance(expr, S.App):
        expr = expr.func
    return isinstance(expr, S.Var) and expr.name == "split"
