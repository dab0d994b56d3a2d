"""What the verifier needs to know about a mechanism before proving anything.

`analyse` classifies the parameters (private vectors, public or
distance-carrying scalars), infers the sort of every local variable, lists the
noise draws with their syntactic context (what they are added to, what they are
compared with, where they are released), and rejects malformed mechanisms with
FZ4xx diagnostics: unknown variables, an output form that does not match the
declared result type, unsupported statements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.syntax import (
    Assign,
    Binary,
    BoolLit,
    Call,
    Dist,
    Expr,
    Forall,
    If,
    IfStmt,
    Index,
    MechanismDecl,
    Noise,
    NumLit,
    Output,
    ReturnStmt,
    Stmt,
    TyList,
    TyName,
    TypeExpr,
    TyVec,
    Unary,
    Var,
    VarDecl,
    While,
)
from fuzzpy.verifier.declared import diagnostics_for, undeclared_reads
from fuzzpy.verifier.draws import DrawSite, draw_sites
from fuzzpy.verifier.public_lists import as_vectors
from fuzzpy.verifier.text import show
from fuzzpy.verifier.walk import children, statements, stmt_expressions, sub_expressions

SORTS = {"num": "num", "int": "int", "bool": "bool"}
COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}
BUILTINS = {"len", "abs", "max", "min"}
#: hints may name the fixed output of the pointwise rule so (Gaboardi's lecture: "out1 = s => out2 = s")
OUTPUT_NAME = "s"


@dataclass
class MechanismInfo:
    decl: MechanismDecl
    vectors: dict[str, str]  # name -> norm ("1", "2", "inf")
    scalars: dict[str, str]  # parameter name -> sort
    locals: dict[str, str]  # local variable name -> sort
    result_sort: str  # "int" | "num" | "bool" | "stream"
    draws: list[DrawSite]
    int_constants: set[int]
    constants: dict[str, Fraction] = field(default_factory=dict)  # top-level `let`s used here
    whole: frozenset[str] = frozenset()  # `num` locals that only ever hold whole numbers (`count = 0.0`)

    def sort_of(self, name: str) -> str | None:
        return self.locals.get(name) or self.scalars.get(name)

    @property
    def pointwise(self) -> bool:
        """Discrete results use the pointwise rule (fix the output s)."""
        return self.result_sort in ("int", "bool")


def _error(code: str, message: str, span: object, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code, message, span, hint=hint)  # type: ignore[arg-type]


# ---------------------------------------------------------------- sorts


class _Sorter:
    def __init__(self, info: MechanismInfo, diagnostics: list[Diagnostic]) -> None:
        self.info = info
        self.diagnostics = diagnostics

    def sort(self, expr: Expr, bound: frozenset[str] = frozenset()) -> str:
        info = self.info
        if isinstance(expr, NumLit):
            return "int" if expr.is_int else "num"
        if isinstance(expr, BoolLit):
            return "bool"
        if isinstance(expr, Var):
            if expr.name in bound:
                return "int"
            if expr.name in info.vectors:
                return "vec"
            found = info.sort_of(expr.name)
            if found is None and expr.name == OUTPUT_NAME and info.pointwise:
                return info.result_sort  # in program code: FZ401 (`_output_outside_hints`)
            if found is None:
                self.diagnostics.append(
                    _error("FZ401", f"unknown variable `{expr.name}` in mechanism `{info.decl.name}`", expr.span)
                )
                return "num"
            return found
        if isinstance(expr, Binary):
            left, right = self.sort(expr.left, bound), self.sort(expr.right, bound)
            if expr.op in COMPARISONS or expr.op in ("&&", "||", "==>"):
                return "bool"
            if expr.op == "/":
                return "num"
            return "int" if left == right == "int" else "num"
        if isinstance(expr, Unary):
            inner = self.sort(expr.operand, bound)
            return "bool" if expr.op in ("not", "!") else inner
        if isinstance(expr, If):
            self.sort(expr.cond, bound)
            then, orelse = self.sort(expr.then, bound), self.sort(expr.orelse, bound)
            return then if then == orelse else "num"
        if isinstance(expr, Index):
            if self.sort(expr.index, bound) != "int":
                self.diagnostics.append(_error("FZ404", "a vector index must be an integer expression", expr.index.span,
                                               hint="index with an `int` counter, such as `q[i]` with `var i = 0;`"))
            if not (isinstance(expr.base, Var) and expr.base.name in info.vectors):
                self.diagnostics.append(_error("FZ404", "only vector parameters can be indexed", expr.span))
            return "num"
        if isinstance(expr, Call):
            sorts = [self.sort(a, bound) for a in expr.args]
            if expr.func not in BUILTINS:
                self.diagnostics.append(_error("FZ401", f"unknown function `{expr.func}` in a mechanism", expr.span))
                return "num"
            if expr.func == "len":
                return "int"
            return "int" if sorts and all(s == "int" for s in sorts) else "num"
        if isinstance(expr, Noise):
            self.sort(expr.scale, bound)
            if expr.align is not None and self.sort(expr.align, bound) == "bool":
                # the coupling shift of a draw is a number (Barthe et al., LightDP's
                # `aligned` expression): a condition has no amount to shift by
                self.diagnostics.append(_error(
                    "FZ404", "the shift in `align` must be a number, but this is a condition", expr.align.span,
                    hint="for a shift that depends on a case, write `align (i == s ? 1 : 0)`"))
            return "num"
        if isinstance(expr, Dist):
            self.sort(expr.expr, bound)
            return "num"
        if isinstance(expr, Forall):
            self.sort(expr.body, bound | {expr.var})
            return "bool"
        self.diagnostics.append(_error("FZ404", "this expression is not allowed in a mechanism", expr.span))
        return "num"


def _param_sort(ty: TypeExpr) -> str | None:
    if isinstance(ty, TyName) and ty.name in SORTS:
        return SORTS[ty.name]
    return None


def _result_sort(ty: TypeExpr) -> str | None:
    if isinstance(ty, TyList):
        return "stream"
    return _param_sort(ty)


# ---------------------------------------------------------------- analysis


def analyse(decl: MechanismDecl, constants: dict[str, Fraction] | None = None) -> MechanismInfo:
    """Classify, sort-check and index a mechanism; raise FuzzError when malformed.

    ``constants`` are the program's static `let`s; those the mechanism uses
    become fixed public scalars. Public list parameters are read as vectors
    that move by 0 (`public_lists`).
    """
    decl = as_vectors(decl)
    diagnostics: list[Diagnostic] = []
    vectors: dict[str, str] = {}
    scalars: dict[str, str] = {}
    params = {p.name for p in decl.params}
    used = {
        e.name
        for s in statements(decl.body)
        for top in stmt_expressions(s)
        for e in sub_expressions(top)
        if isinstance(e, Var)
    } | {e.name for top in (*decl.requires, decl.privacy) for e in sub_expressions(top) if isinstance(e, Var)}
    # a local shadows a top-level constant of the same name in the body (the
    # runtime reads the local once declared; docs/language-notes.md): only
    # the interface (`requires`, `privacy`) may mean the constant, and a name
    # meaning both is refused rather than read one way by the proof
    declared = {s.name for s in statements(decl.body) if isinstance(s, VarDecl)}
    interface = {e.name for top in (*decl.requires, decl.privacy) for e in sub_expressions(top) if isinstance(e, Var)}
    for stmt in statements(decl.body):
        if isinstance(stmt, VarDecl) and stmt.name in interface and stmt.name in (constants or {}) \
                and stmt.name not in params:
            diagnostics.append(_error(
                "FZ405", f"`{stmt.name}` is a local of `{decl.name}` and the top-level constant its "
                "`requires` or `privacy` uses: the name cannot mean both", stmt.span,
                hint=f"rename the local `{stmt.name}`"))
    fixed = {name: value for name, value in (constants or {}).items()
             if name in used and name not in params and name not in declared}
    for param in decl.params:
        if isinstance(param.type, TyVec):
            vectors[param.name] = param.type.norm
            continue
        sort = _param_sort(param.type)
        if sort is None:
            diagnostics.append(
                _error("FZ404", f"parameter `{param.name}` must be `num`, `int`, `bool`, `vec[p] num` or a "
                       "public `list num`", param.span)
            )
            sort = "num"
        scalars[param.name] = sort
    result = _result_sort(decl.result) or "num"
    if _result_sort(decl.result) is None:
        diagnostics.append(
            _error("FZ403", "a mechanism returns `num`, `int`, `bool`, or `list T` for a stream of outputs", decl.result.span)
        )
    for name, value in fixed.items():
        scalars[name] = "int" if value.denominator == 1 else "num"
    info = MechanismInfo(decl, vectors, scalars, {}, result, [], set(), fixed)
    _infer_locals(info, diagnostics)
    sorter = _Sorter(info, diagnostics)
    for req in decl.requires:
        sorter.sort(req)
        # the pointwise output is fixed inside the proof (Barthe et al.'s pointwise
        # rule), not by the caller: a precondition on it is a name the input lacks
        for named in _output_outside_hints(info, req):
            diagnostics.append(_error(
                "FZ401", f"unknown variable `{named.name}` in mechanism `{decl.name}`", named.span,
                hint=f"`{OUTPUT_NAME}` names the fixed output of the pointwise rule in `invariant` and `align` "
                     "hints only, not in `requires`",
            ))
    for hint in _hint_expressions(decl):
        for division in _divisions_by_zero(hint):
            diagnostics.append(_error(
                "FZ404", "this hint divides by zero", division.right.span,
                hint="a proof's `align`, `invariant` and `requires` must be defined in every state"))
    sorter.sort(decl.privacy)
    _check_statements(info, sorter, decl.body, diagnostics, in_loop=False)
    parameters = frozenset(info.scalars) | frozenset(info.vectors)
    reads = undeclared_reads(decl.body, parameters, frozenset(info.locals) - parameters)
    diagnostics += diagnostics_for(reads, decl.name)
    _check_result_form(info, diagnostics)
    _check_claim(info, diagnostics)
    info.draws = draw_sites(decl.body)
    info.whole = whole_locals(info)
    info.int_constants = {
        int(e.value)
        for s in statements(decl.body)
        for top in stmt_expressions(s)
        for e in sub_expressions(top)
        if isinstance(e, NumLit) and e.is_int and abs(e.value) <= 1
    } | {-1, 0}
    if diagnostics:
        raise FuzzError(tuple(_dedupe(diagnostics)))
    return info


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen, unique = set(), []
    for d in diagnostics:
        key = (d.code, d.message, d.span)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


def _infer_locals(info: MechanismInfo, diagnostics: list[Diagnostic]) -> None:
    """A local is `int` when every value it receives is an integer, else `num`/`bool`."""
    declared = [s for s in statements(info.decl.body) if isinstance(s, VarDecl)]
    for stmt in declared:
        if stmt.name in info.scalars or stmt.name in info.vectors:
            diagnostics.append(_error("FZ405", f"`{stmt.name}` is a parameter and cannot be redeclared", stmt.span))
        info.locals.setdefault(stmt.name, "int")
    sink: list[Diagnostic] = []
    sorter = _Sorter(info, sink)
    for _ in range(len(declared) + 1):
        changed = False
        for stmt in statements(info.decl.body):
            if isinstance(stmt, (VarDecl, Assign)) and stmt.name in info.locals:
                new = _join(info.locals[stmt.name], sorter.sort(stmt.expr), stmt is _first_decl(declared, stmt.name))
                if new != info.locals[stmt.name]:
                    info.locals[stmt.name] = new
                    changed = True
        if not changed:
            break


def whole_locals(info: MechanismInfo) -> frozenset[str]:
    """`num` locals whose every assigned value is a whole number (`float count = 0`
    in ShadowDP's sources, `count = count + 1.0`): the proof may use that they
    are integers (a greatest fixpoint: assume all, drop any that receives a
    value not built from whole literals, `int`s and whole locals by + - *)."""
    assignments = [s for s in statements(info.decl.body)
                   if isinstance(s, VarDecl) or (isinstance(s, Assign) and s.index is None)]
    whole = {name for name, sort in info.locals.items() if sort == "num"}
    changed = True
    while changed:
        changed = False
        for stmt in assignments:
            if stmt.name in whole and not _is_whole(stmt.expr, info, whole):
                whole.discard(stmt.name)
                changed = True
    return frozenset(whole)


def _is_whole(expr: Expr, info: MechanismInfo, whole: set[str]) -> bool:
    if isinstance(expr, NumLit):
        return expr.value.denominator == 1
    if isinstance(expr, Var):
        return expr.name in whole or info.sort_of(expr.name) == "int"
    if isinstance(expr, Binary) and expr.op in ("+", "-", "*"):
        return _is_whole(expr.left, info, whole) and _is_whole(expr.right, info, whole)
    if isinstance(expr, Unary) and expr.op == "-":
        return _is_whole(expr.operand, info, whole)
    if isinstance(expr, If):
        return _is_whole(expr.then, info, whole) and _is_whole(expr.orelse, info, whole)
    if isinstance(expr, Call) and expr.func in ("abs", "max", "min"):
        return all(_is_whole(a, info, whole) for a in expr.args)
    return isinstance(expr, Call) and expr.func == "len"


def _first_decl(declared: list[VarDecl], name: str) -> VarDecl | None:
    return next((d for d in declared if d.name == name), None)


def _join(current: str, incoming: str, is_declaration: bool) -> str:
    if is_declaration and current == "int":
        return incoming
    if current == incoming:
        return current
    if {current, incoming} == {"int", "num"}:
        return "num"
    return current if current == "bool" else incoming


def _copy_hint(info: MechanismInfo, stmt: Assign) -> str:
    """A parameter is read-only and cannot be redeclared (FZ405): a new local under a fresh name."""
    taken = set(info.locals) | set(info.scalars) | set(info.vectors)
    fresh = next(f"{stmt.name}{k}" for k in range(2, 10**6) if f"{stmt.name}{k}" not in taken)
    return (f"a parameter cannot be assigned or redeclared; copy it into a new local, `var {fresh} = "
            f"{show(stmt.expr)};`, and use `{fresh}` from here on")


def _check_statements(
    info: MechanismInfo, sorter: _Sorter, body: tuple[Stmt, ...], diagnostics: list[Diagnostic], in_loop: bool
) -> None:
    for stmt in body:
        for expr in stmt_expressions(stmt):
            sorter.sort(expr)
        program_exprs = (stmt.cond,) if isinstance(stmt, While) else stmt_expressions(stmt)
        for expr in program_exprs:
            for stray in _dist_outside_hints(expr):
                diagnostics.append(_error(
                    "FZ404", "`dist(...)` may appear only in `requires`, `align` and `invariant`", stray.span,
                    hint="an `align` hint takes one term: parenthesise it, as in `align (0 - dist(x))`",
                ))
            for name in _output_outside_hints(info, expr):
                diagnostics.append(_error(
                    "FZ401", f"unknown variable `{name.name}` in mechanism `{info.decl.name}`", name.span,
                    hint=f"`{OUTPUT_NAME}` names the fixed output of the pointwise rule in `invariant` and `align` "
                         "hints only",
                ))
            for stray in _implications_outside_hints(expr):
                diagnostics.append(_error(
                    "FZ404", "`==>` may appear only in `requires`, `align` and `invariant`", stray.span,
                    hint="in program code write `!a || b`",
                ))
        if isinstance(stmt, Assign):
            if stmt.index is not None:
                diagnostics.append(_error("FZ404", "assigning to a vector entry is not supported in mechanisms", stmt.span))
            elif stmt.name not in info.locals:
                parameter = stmt.name in info.scalars or stmt.name in info.vectors
                what = "a parameter" if parameter else "not declared"
                diagnostics.append(
                    _error("FZ401", f"cannot assign to `{stmt.name}`: it is {what}", stmt.span,
                           hint=_copy_hint(info, stmt) if parameter else f"declare it first with `var {stmt.name} = ...;`")
                )
        elif isinstance(stmt, IfStmt):
            _check_statements(info, sorter, stmt.then, diagnostics, in_loop)
            _check_statements(info, sorter, stmt.orelse, diagnostics, in_loop)
        elif isinstance(stmt, While):
            if in_loop:
                diagnostics.append(_error("FZ404", "nested loops are not supported by the verifier", stmt.span))
            _check_statements(info, sorter, stmt.body, diagnostics, True)


def _dist_outside_hints(expr: Expr) -> list[Dist]:
    """`dist(e)` nodes in program code (not inside a draw's `align` hint)."""
    if isinstance(expr, Dist):
        return [expr]
    if isinstance(expr, Noise):
        return _dist_outside_hints(expr.scale)
    found: list[Dist] = []
    for child in children(expr):
        found += _dist_outside_hints(child)
    return found


def _output_outside_hints(info: MechanismInfo, expr: Expr) -> list[Var]:
    """The pointwise output's name read by program code (where it means nothing)."""
    if info.sort_of(OUTPUT_NAME) is not None or not info.pointwise:
        return []
    if isinstance(expr, Noise):
        return _output_outside_hints(info, expr.scale)
    found = [expr] if isinstance(expr, Var) and expr.name == OUTPUT_NAME else []
    for child in children(expr):
        found += _output_outside_hints(info, child)
    return found


def _hint_expressions(decl: MechanismDecl) -> list[Expr]:
    """The proof's text: preconditions, loop invariants and draws' `align` shifts."""
    hints: list[Expr] = list(decl.requires)
    for stmt in statements(decl.body):
        if isinstance(stmt, While):
            hints += stmt.invariants
        for top in stmt_expressions(stmt):
            hints += [e.align for e in sub_expressions(top) if isinstance(e, Noise) and e.align is not None]
    return hints


def _divisions_by_zero(expr: Expr) -> list[Binary]:
    """`a / b` with `b` a constant equal to 0 (`1 / 0`, `x / (2 - 2)`)."""
    return [e for e in sub_expressions(expr)
            if isinstance(e, Binary) and e.op == "/" and _constant(e.right) == 0]


def _constant(expr: Expr) -> Fraction | None:
    if isinstance(expr, NumLit):
        return Fraction(expr.value)
    if isinstance(expr, Unary) and expr.op == "-":
        inner = _constant(expr.operand)
        return None if inner is None else -inner
    if isinstance(expr, Binary) and expr.op in ("+", "-", "*"):
        a, b = _constant(expr.left), _constant(expr.right)
        if a is None or b is None:
            return None
        return a + b if expr.op == "+" else a - b if expr.op == "-" else a * b
    return None


def _implications_outside_hints(expr: Expr) -> list[Binary]:
    """`a ==> b` nodes in program code (the assertion language's implication)."""
    if isinstance(expr, Noise):
        return _implications_outside_hints(expr.scale)
    found: list[Binary] = [expr] if isinstance(expr, Binary) and expr.op == "==>" else []
    for child in children(expr):
        found += _implications_outside_hints(child)
    return found


def _check_claim(info: MechanismInfo, diagnostics: list[Diagnostic]) -> None:
    """The claim is a number over public parameters and lengths: a privacy cost
    that depended on private data (or on distances, or on noise) would itself
    leak, and `check` could not charge it."""
    private = {
        e.expr.name for req in info.decl.requires for e in sub_expressions(req)
        if isinstance(e, Dist) and isinstance(e.expr, Var)
    }
    for e in sub_expressions(info.decl.privacy):
        bad = isinstance(e, (Dist, Noise, Index)) or (isinstance(e, Var) and e.name in private)
        if bad:
            diagnostics.append(_error(
                "FZ404", "the privacy claim may mention only public parameters and `len` of a vector", e.span))
            return


def _check_result_form(info: MechanismInfo, diagnostics: list[Diagnostic]) -> None:
    decl = info.decl
    sorter = _Sorter(info, [])
    element = _param_sort(decl.result.elem) if isinstance(decl.result, TyList) else None
    for stmt in statements(decl.body):
        if isinstance(stmt, Output) and info.result_sort != "stream":
            diagnostics.append(
                _error("FZ403", f"`output` needs a `list` result type, but `{decl.name}` declares a single value", stmt.span)
            )
        elif isinstance(stmt, Output) and element is not None:
            got = sorter.sort(stmt.expr)
            if not _sort_fits(got, element):  # a review released `[true]` from a `list num` mechanism
                diagnostics.append(
                    _error("FZ403", f"outputs a `{got}` but `{decl.name}` declares `list {element}`", stmt.expr.span)
                )
        if isinstance(stmt, ReturnStmt):
            if info.result_sort == "stream":
                diagnostics.append(
                    _error("FZ403", "a mechanism with a `list` result releases with `output`, not `return`", stmt.span)
                )
                continue
            got = sorter.sort(stmt.expr)
            if not _sort_fits(got, info.result_sort):
                diagnostics.append(
                    _error("FZ403", f"returns a `{got}` but `{decl.name}` declares `{info.result_sort}`", stmt.expr.span)
                )
    if info.result_sort != "stream" and not any(isinstance(s, ReturnStmt) for s in statements(decl.body)):
        diagnostics.append(_error("FZ403", f"mechanism `{decl.name}` never returns its `{info.result_sort}` result", decl.name_span))


def _sort_fits(got: str, wanted: str) -> bool:
    return got == wanted or (got == "int" and wanted == "num")


