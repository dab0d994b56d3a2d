"""Tree-building rules for types."""

from __future__ import annotations

from fuzzpy.frontend.lexer import Tok
from fuzzpy.frontend.tree_base import BuilderBase, Children
from fuzzpy.language import syntax as ast


class TypeRules(BuilderBase):
    """Types: one method per rule of grammar/fuzz.lark."""

    def ty_arrow(self, c: Children) -> ast.TyFun:
        node = ast.TyFun(c[0], c[2], c[1].value, None, self.span(c[0], c[2]))
        return self.nest(node, c[0], c[2])

    def ty_sens_arrow(self, c: Children) -> ast.TyFun:
        node = ast.TyFun(c[0], c[5], "-[]->", c[2], self.span(c[0], c[5]))
        return self.nest(node, c[0], c[2], c[5])

    def ty_sum(self, c: Children) -> ast.TySum:
        return self.nest(ast.TySum(c[0], c[2], self.span(c[0], c[2])), c[0], c[2])

    def ty_list(self, c: Children) -> ast.TyList:
        return self.nest(ast.TyList(c[1], self.span(c[0], c[1])), c[1])

    def ty_bag(self, c: Children) -> ast.TyBag:
        return self.nest(ast.TyBag(c[1], self.span(c[0], c[1])), c[1])

    def ty_fuzzy(self, c: Children) -> ast.TyFuzzy:
        return self.nest(ast.TyFuzzy(c[1], self.span(c[0], c[1])), c[1])

    def _norm(self, token: Tok, word: str, what: str) -> str:
        """The norm in `vec[p]` / `mat[p]`: 1, 2 or inf (FZ112 otherwise)."""
        norm = str(token.value)
        if norm not in ("1", "2", "inf"):
            raise self.fail(
                "FZ112",
                f"`{word}[{norm}]` is not {what} must be 1, 2 or inf",
                self.token_span(token),
                hint=f"write `{word}[1]`, `{word}[2]` or `{word}[inf]`",
            )
        return norm

    def ty_vec(self, c: Children) -> ast.TyVec:
        norm = self._norm(c[2], "vec", "a vector type: the norm")
        return self.nest(ast.TyVec(norm, c[4], self.span(c[0], c[4])), c[4])

    def ty_mat(self, c: Children) -> ast.TyList:
        """`mat[p] A`: the list of its rows, each a `vec[p] A` (Duet's M_Lp)."""
        norm = self._norm(c[2], "mat", "a matrix type: the norm of its rows")
        row = ast.TyVec(norm, c[4], self.span(c[0], c[4]))
        return self.nest(ast.TyList(row, self.span(c[0], c[4]), matrix=True), c[4])

    def ty_name(self, c: Children) -> ast.TyName:
        return ast.TyName(c[0].value, self.token_span(c[0]))

    def ty_tuple(self, c: Children) -> ast.TyTuple:
        items = tuple(c[1:-1:2])
        return self.nest(ast.TyTuple(items, self.span(c[0], c[-1])), *items)

    def ty_with(self, c: Children) -> ast.TyWith:
        return self.nest(ast.TyWith(c[1], c[3], self.span(c[0], c[4])), c[1], c[3])

    def ty_record(self, c: Children) -> ast.TyRecord:
        fields = self._fields(c)
        node = ast.TyRecord(fields, self.span(c[0], c[-1]))
        return self.nest(node, *(value for _, value in fields))
