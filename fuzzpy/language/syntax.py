"""The syntax tree: frozen dataclasses, every node with a source span.

Spans are excluded from equality (``compare=False``) so that a program printed
and parsed back compares equal to the original.

Two expression languages share these nodes:

* the functional language of ``def``s (application by juxtaposition,
  ``fun x -> e``, blocks with ``let``/``sample``, bracketed primitives such as
  ``laplace[eps] e``);
* the imperative language of ``mechanism`` bodies (C-like calls ``len(q)``,
  indexing ``q[i]``, noise ``lap(b) align E``, ``dist(x)`` and ``forall`` in
  hints and preconditions).

Operators are stored as their source text (``"+"``, ``"&&"``, ``"not"``...).
"""

from __future__ import annotations

from dataclasses import field
from fractions import Fraction

from fuzzpy.language.source import NO_SPAN, Span
from fuzzpy.support.records import frozen


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False)  # type: ignore[return-value]


# ---------------------------------------------------------------- types


@frozen
class TyName:
    """A base type (`num`, `int`, `bool`, `string`, `unit`) or a `type` alias."""

    name: str
    span: Span = _span()


@frozen
class TyTuple:
    """Tensor product `(A, B, ...)` (two or more items); metric: sum."""

    items: tuple[TypeExpr, ...]
    span: Span = _span()


@frozen
class TyWith:
    """With-pair `<A & B>`; metric: max."""

    left: TypeExpr
    right: TypeExpr
    span: Span = _span()


@frozen
class TySum:
    """Sum `A + B`."""

    left: TypeExpr
    right: TypeExpr
    span: Span = _span()


@frozen
class TyRecord:
    """`{ f : A, g : B }`; metric: as a tensor of its fields."""

    fields: tuple[tuple[str, TypeExpr], ...]
    span: Span = _span()


@frozen
class TyList:
    elem: TypeExpr
    span: Span = _span()
    matrix: bool = False  # written `mat[p] A`: the list of its rows, each a `vec[p] A`


@frozen
class TyVec:
    """`vec[p] A` with norm p in {"1", "2", "inf"}."""

    norm: str
    elem: TypeExpr
    span: Span = _span()


@frozen
class TyBag:
    elem: TypeExpr
    span: Span = _span()


@frozen
class TyFun:
    """A function type.

    ``arrow`` records the surface form: ``"-o"`` (sensitivity 1), ``"-[]->"``
    (sensitivity ``sens``, a static expression or `InfLit`), ``"->"`` (infinite).
    ``sens`` is None unless ``arrow == "-[]->"``.
    """

    param: TypeExpr
    result: TypeExpr
    arrow: str
    sens: Expr | None = None
    span: Span = _span()


@frozen
class TyFuzzy:
    inner: TypeExpr
    span: Span = _span()


TypeExpr = TyName | TyTuple | TyWith | TySum | TyRecord | TyList | TyVec | TyBag | TyFun | TyFuzzy


# ---------------------------------------------------------------- expressions (shared)


@frozen
class NumLit:
    """A numeric literal kept as written (``"0.1"``, ``"1e-6"``, ``"40"``)."""

    text: str
    span: Span = _span()

    @property
    def value(self) -> Fraction:
        return Fraction(self.text)

    @property
    def is_int(self) -> bool:
        return not any(c in self.text for c in ".eE")


@frozen
class InfLit:
    """`inf`, allowed in static positions (sensitivities, `vec[inf]`)."""

    span: Span = _span()


@frozen
class BoolLit:
    value: bool
    span: Span = _span()


@frozen
class StringLit:
    value: str
    span: Span = _span()


@frozen
class UnitLit:
    """`()`."""

    span: Span = _span()


@frozen
class Var:
    """A variable, or a builtin function name such as `size`, `map`, `abs`."""

    name: str
    span: Span = _span()


@frozen
class Binary:
    """`left op right`; op in + - * / == != < <= > >= && ||."""

    op: str
    left: Expr
    right: Expr
    span: Span = _span()


@frozen
class Unary:
    """`-e` (op ``"-"``) or `not e` (op ``"not"``; ``!e`` in mechanisms)."""

    op: str
    operand: Expr
    span: Span = _span()


@frozen
class If:
    cond: Expr
    then: Expr
    orelse: Expr
    span: Span = _span()


@frozen
class ListLit:
    items: tuple[Expr, ...]
    span: Span = _span()


@frozen
class Tuple:
    """Tensor pair / tuple `(a, b, ...)` (two or more items)."""

    items: tuple[Expr, ...]
    span: Span = _span()


# ---------------------------------------------------------------- expressions (functional)


@frozen
class Prim:
    """A bracketed primitive with static arguments, before its ordinary ones.

    `laplace[eps]`, `gauss[sigma]`, `sum[lo, hi]`, `clip[lo, hi]`, `clip2[c]`,
    `vsum[c]`, `group[k]`, `expmech[eps]`, `loop[k]`, `subsample[q]`.
    `laplace[eps] e` is ``App(Prim("laplace", (eps,)), e)``.
    """

    name: str
    static_args: tuple[Expr, ...]
    span: Span = _span()


@frozen
class App:
    """Application by juxtaposition: `f x` (curried, left-associative)."""

    func: Expr
    arg: Expr
    span: Span = _span()


@frozen
class Lambda:
    """`fun x -> body` or `fun (x : T) -> body`; `fun x y -> e` nests."""

    param: str
    param_type: TypeExpr | None
    body: Expr
    span: Span = _span()


@frozen
class Field:
    """Record field access `e.name`."""

    expr: Expr
    name: str
    span: Span = _span()


@frozen
class RecordLit:
    """`{ f = e, g = e2 }`."""

    fields: tuple[tuple[str, Expr], ...]
    span: Span = _span()


@frozen
class WithPair:
    """`<a, b>`: a with-pair (components are arithmetic-level expressions)."""

    left: Expr
    right: Expr
    span: Span = _span()


@frozen
class Cons:
    """`head :: tail`."""

    head: Expr
    tail: Expr
    span: Span = _span()


@frozen
class CaseSum:
    """`case e of inl x -> a | inr y -> b`."""

    scrutinee: Expr
    left_var: str
    left_body: Expr
    right_var: str
    right_body: Expr
    span: Span = _span()


@frozen
class CaseList:
    """`case e of [] -> a | h :: t -> b`."""

    scrutinee: Expr
    nil_body: Expr
    head_var: str
    tail_var: str
    cons_body: Expr
    span: Span = _span()


@frozen
class Return:
    """`return e`: the unit of the `fuzzy` monad."""

    expr: Expr
    span: Span = _span()


@frozen
class Ann:
    """Type ascription `(e : T)`."""

    expr: Expr
    type: TypeExpr
    span: Span = _span()


@frozen
class LetStmt:
    """`let x = e;` or `let x : T = e;` inside a block."""

    name: str
    type: TypeExpr | None
    expr: Expr
    span: Span = _span()


@frozen
class LetTuple:
    """`let (x, y) = e;`: takes a tensor tuple apart."""

    names: tuple[str, ...]
    expr: Expr
    span: Span = _span()


@frozen
class SampleStmt:
    """`sample x = e;`: monadic bind."""

    name: str
    expr: Expr
    span: Span = _span()


BlockStmt = LetStmt | LetTuple | SampleStmt


@frozen
class Block:
    """`{ s1; s2; ...; result }` (also `let x = e1 in e2`, which parses to one)."""

    stmts: tuple[BlockStmt, ...]
    result: Expr
    span: Span = _span()


# ---------------------------------------------------------------- expressions (mechanisms)


@frozen
class Call:
    """C-style call inside mechanisms: `len(q)`, `abs(x)`, `max(a, b)`."""

    func: str
    args: tuple[Expr, ...]
    span: Span = _span()


@frozen
class Index:
    """`base[index]` inside mechanisms."""

    base: Expr
    index: Expr
    span: Span = _span()


@frozen
class Noise:
    """`lap(scale)` or `lapplus(scale)`, with an optional `align E` hint."""

    kind: str  # "lap" | "lapplus" | "gauss" (`gauss(sigma)`: N(0, sigma^2))
    scale: Expr
    align: Expr | None = None
    span: Span = _span()


@frozen
class Dist:
    """`dist(e)`: e's value in the neighbouring run minus its value in this one."""

    expr: Expr
    span: Span = _span()


@frozen
class Forall:
    """`forall i. body` (in `requires` and invariants)."""

    var: str
    body: Expr
    span: Span = _span()


Expr = (
    NumLit | InfLit | BoolLit | StringLit | UnitLit | Var | Binary | Unary | If
    | ListLit | Tuple | Prim | App | Lambda | Field | RecordLit | WithPair | Cons
    | CaseSum | CaseList | Return | Ann | Block | Call | Index | Noise | Dist | Forall
)


# ---------------------------------------------------------------- statements (mechanisms)


@frozen
class VarDecl:
    """`var x = e;`"""

    name: str
    expr: Expr
    span: Span = _span()


@frozen
class Assign:
    """`x = e;` or `x[i] = e;` (``index`` is None for a plain variable)."""

    name: str
    index: Expr | None
    expr: Expr
    span: Span = _span()


@frozen
class IfStmt:
    """`if (c) { ... } else { ... }`; `else if` nests an IfStmt in ``orelse``."""

    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    span: Span = _span()


@frozen
class While:
    """`while (c) invariant P invariant Q { ... }`."""

    cond: Expr
    invariants: tuple[Expr, ...]
    body: tuple[Stmt, ...]
    span: Span = _span()


@frozen
class ReturnStmt:
    expr: Expr
    span: Span = _span()


@frozen
class Output:
    """`output e;`: appends e to the released stream."""

    expr: Expr
    span: Span = _span()


Stmt = VarDecl | Assign | IfStmt | While | ReturnStmt | Output


# ---------------------------------------------------------------- declarations


@frozen
class Param:
    """A parameter: `(x : T)`, `(x :[s] T)` in defs; `x : T` in mechanisms.

    ``sens`` is the declared sensitivity bound (a static expression or
    `InfLit`), None when it is to be inferred.
    """

    name: str
    type: TypeExpr
    sens: Expr | None = None
    span: Span = _span()


@frozen
class LetDecl:
    """Top-level static constant `let eps = 0.1;`."""

    name: str
    expr: Expr
    span: Span = _span()


@frozen
class TypeDecl:
    """`type Row = { age : num, income : num };`"""

    name: str
    type: TypeExpr
    span: Span = _span()


@frozen
class DefDecl:
    """`def [rec] name (p : T)... : R = body;` (``result`` None when omitted)."""

    name: str
    params: tuple[Param, ...]
    result: TypeExpr | None
    body: Expr
    recursive: bool = False
    span: Span = _span()
    name_span: Span = _span()
    #: `assume def`: the declared parameter sensitivities are the interface
    #: even where the rules infer more; proved by z3 where the body allows,
    #: else reported as an unchecked assumption (`fuzzpy.checker.assumed`)
    assumed: bool = False
    #: `privacy zcdp[delta]`: the cost is reported and charged in rho-zCDP
    measure: Measure | None = None


@frozen
class Measure:
    """`privacy zcdp[delta]` after a definition's result type: the measure
    its cost is stated and charged in (Bun & Steinke 2016), and the delta of
    its (eps, delta) conversion."""

    kind: str
    delta: Expr
    span: Span = _span()


@frozen
class MechanismDecl:
    """`mechanism name (p : T, ...) : R requires P ... privacy E { stmts }`."""

    name: str
    params: tuple[Param, ...]
    result: TypeExpr
    requires: tuple[Expr, ...]
    privacy: Expr
    body: tuple[Stmt, ...]
    span: Span = _span()
    name_span: Span = _span()
    #: `privacy (eps, delta)`: the delta of an approximate-DP claim (None: pure, `privacy eps`)
    delta: Expr | None = None


Decl = LetDecl | TypeDecl | DefDecl | MechanismDecl


@frozen
class ImportDecl:
    """`import std.noisy_max;` or `import std.noisy_max (report_noisy_max, label_at);`
    (``names`` None: every name of the module)."""

    module: tuple[str, ...]
    names: tuple[str, ...] | None
    span: Span = _span()
    module_span: Span = _span()
    name_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)


@frozen
class Program:
    """A file: its declarations, after `import`s are resolved (the imported
    declarations come first, their spans in the library's files), and the
    `import`s themselves as written."""

    decls: tuple[Decl, ...]
    file: str = field(default="<input>", compare=False)
    imports: tuple[ImportDecl, ...] = ()


def subtrees(node: object) -> list[object]:
    """Every syntax node in ``node`` (itself included, tuples of nodes
    entered, spans left out), in no particular order."""
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif hasattr(item, "__dataclass_fields__"):
            out.append(item)
            stack.extend(getattr(item, f) for f in item.__dataclass_fields__ if f != "span")
    return out
