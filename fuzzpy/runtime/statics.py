"""Which expressions of a program are static numbers (docs/semantics.md,
"What the checker scales by 0 is not evaluated").

The checker treats `c * e` and `e * c` with a static c as scaling e by |c|
(and `dot w v` with a literal w of static numbers as scaling v by its dual
norm), so with c = 0 (w = 0) it charges nothing for e, however e depends on
the data. The interpreter must then not evaluate e at all (it may not
terminate, or fail, on some datasets only). This pass finds, once per
program and lexically, every expression that is a static number in the
checker's sense -- literals, top-level constants not hidden by a local name,
`let`-bound static numbers, and `+ - * /` and negation of those -- so that
the interpreter can recognise a static zero without evaluating anything.
Finding more static zeros than the checker is harmless (0 * e = 0 exactly,
and skipping e can only remove a non-terminating or failing evaluation);
finding fewer would not be, so the rules mirror the checker's `Judgment.static`
(fuzzpy/checker/literals.py, infer.py, blocks.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from fuzzpy.language import syntax as S

Scope = Mapping[str, Fraction | None]


class StaticNumbers:
    """`value(expr)`: the static value of an expression node, or None."""

    def __init__(self, program: S.Program, constants: Mapping[str, Fraction]) -> None:
        self._constants = constants
        self._values: dict[int, Fraction] = {}
        self._zero_vectors: set[int] = set()
        for decl in program.decls:
            if isinstance(decl, S.DefDecl):
                self._walk(decl.body, {p.name: None for p in decl.params})

    def value(self, expr: S.Expr) -> Fraction | None:
        return self._values.get(id(expr))

    def is_zero(self, expr: S.Expr) -> bool:
        return self._values.get(id(expr)) == 0

    def is_zero_vector(self, expr: S.Expr) -> bool:
        """A list literal whose entries are all static zeros."""
        return id(expr) in self._zero_vectors

    # ------------------------------------------------------------ the walk

    def _lookup(self, name: str, scope: Scope) -> Fraction | None:
        if name in scope:
            return scope[name]
        return self._constants.get(name)

    def _walk(self, expr: object, scope: Scope) -> Fraction | None:
        value = self._static(expr, scope)
        if value is not None:
            self._values[id(expr)] = value
        return value

    def _static(self, expr: object, scope: Scope) -> Fraction | None:  # noqa: PLR0911
        if isinstance(expr, S.NumLit):
            return expr.value
        if isinstance(expr, S.Var):
            return self._lookup(expr.name, scope)
        if isinstance(expr, S.Unary):
            inner = self._walk(expr.operand, scope)
            return -inner if expr.op == "-" and inner is not None else None
        if isinstance(expr, S.Ann):
            return self._walk(expr.expr, scope)
        if isinstance(expr, S.Binary):
            return self._binary(expr, scope)
        if isinstance(expr, S.Block):
            return self._block(expr, scope)
        if isinstance(expr, S.Lambda):
            self._walk(expr.body, {**scope, expr.param: None})
            return None
        if isinstance(expr, S.CaseSum):
            self._walk(expr.scrutinee, scope)
            self._walk(expr.left_body, {**scope, expr.left_var: None})
            self._walk(expr.right_body, {**scope, expr.right_var: None})
            return None
        if isinstance(expr, S.CaseList):
            self._walk(expr.scrutinee, scope)
            self._walk(expr.nil_body, scope)
            self._walk(expr.cons_body, {**scope, expr.head_var: None, expr.tail_var: None})
            return None
        if isinstance(expr, S.ListLit):
            items = [self._walk(item, scope) for item in expr.items]
            if all(v == 0 for v in items):  # also []: its dual norm is 0
                self._zero_vectors.add(id(expr))
            return None
        self._children(expr, scope)
        return None

    def _children(self, expr: object, scope: Scope) -> None:
        for name in getattr(expr, "__dataclass_fields__", ()):
            if name == "span":
                continue
            child = getattr(expr, name)
            for item in child if isinstance(child, tuple) else (child,):
                if isinstance(item, tuple):  # record fields: (name, expr)
                    for part in item:
                        self._walk(part, scope)
                elif hasattr(item, "__dataclass_fields__"):
                    self._walk(item, scope)

    def _binary(self, expr: S.Binary, scope: Scope) -> Fraction | None:
        left, right = self._walk(expr.left, scope), self._walk(expr.right, scope)
        if left is None or right is None:
            return None
        if expr.op == "+":
            return left + right
        if expr.op == "-":
            return left - right
        if expr.op == "*":
            return left * right
        if expr.op == "/":
            return left / right if right != 0 else Fraction(0)
        return None

    def _block(self, expr: S.Block, scope: Scope) -> Fraction | None:
        inner = dict(scope)
        for stmt in expr.stmts:
            value = self._walk(stmt.expr, inner)
            if isinstance(stmt, S.LetStmt):
                inner[stmt.name] = value
            elif isinstance(stmt, S.LetTuple):
                inner.update(dict.fromkeys(stmt.names))
            else:
                inner[stmt.name] = None
        return self._walk(expr.result, inner)
