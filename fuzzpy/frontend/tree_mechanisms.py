"""Tree-building rules for `mechanism` declarations, statements and expressions."""

from __future__ import annotations

from typing import Any

from fuzzpy.frontend.lexer import Tok
from fuzzpy.frontend.tree_base import BuilderBase, Children, _append, _extend
from fuzzpy.language import syntax as ast


class MechanismRules(BuilderBase):
    """The imperative language: one method per rule of grammar/fuzz.lark."""

    def mech_decl(self, c: Children) -> ast.MechanismDecl:
        name, params, result, requires, (privacy, delta) = c[1], c[3], c[6], c[7], c[9]
        body, closing = c[10]
        return ast.MechanismDecl(
            name.value, tuple(params), result, tuple(requires),
            privacy, body, self.span(c[0], closing), self.token_span(name), delta,
        )

    def claim_pure(self, c: Children) -> tuple[ast.Expr, None]:
        return c[0], None

    def claim_approx(self, c: Children) -> tuple[ast.Expr, ast.Expr]:
        return c[1], c[3]

    def mech_params(self, c: Children) -> Children:
        return c[0::2]

    def mech_param(self, c: Children) -> ast.Param:
        return ast.Param(c[0].value, c[2], None, self.span(c[0], c[2]))

    def mech_requires(self, c: Children) -> Children:
        return c[1::2]

    def mech_body(self, c: Children) -> tuple[tuple[ast.Stmt, ...], Tok]:
        return tuple(c[1]), c[2]

    def stmts(self, c: Children) -> Children:
        return _append(c)

    def var_stmt(self, c: Children) -> ast.VarDecl:
        return ast.VarDecl(c[1].value, c[3], self.span(c[0], c[4]))

    def assign_stmt(self, c: Children) -> ast.Assign:
        return ast.Assign(c[0].value, None, c[2], self.span(c[0], c[3]))

    def assign_index_stmt(self, c: Children) -> ast.Assign:
        return ast.Assign(c[0].value, c[2], c[5], self.span(c[0], c[6]))

    def if_stmt(self, c: Children) -> ast.IfStmt:
        then, closing = c[4]
        orelse: tuple[ast.Stmt, ...] = ()
        if c[5] is not None:
            orelse, closing = c[5]
        return ast.IfStmt(c[2], then, orelse, self.span(c[0], closing))

    def else_part(self, c: Children) -> tuple[tuple[ast.Stmt, ...], Any] | None:
        if not c:
            return None
        if isinstance(c[1], ast.IfStmt):
            return (c[1],), c[1]
        return c[1]

    def while_stmt(self, c: Children) -> ast.While:
        body, closing = c[5]
        return ast.While(c[2], tuple(c[4]), body, self.span(c[0], closing))

    def invariants(self, c: Children) -> Children:
        return c[1::2]

    def return_stmt(self, c: Children) -> ast.ReturnStmt:
        return ast.ReturnStmt(c[1], self.span(c[0], c[2]))

    def output_stmt(self, c: Children) -> ast.Output:
        return ast.Output(c[1], self.span(c[0], c[2]))

    # ------------------------------------------------------------ mechanism expressions

    def m_forall(self, c: Children) -> ast.Forall:
        node = ast.Forall(c[1].value, c[3], self.span(c[0], c[3]))
        return self.nest(node, c[3])

    def m_ternary(self, c: Children) -> ast.If:
        return self.nest(ast.If(c[0], c[2], c[4], self.span(c[0], c[4])), c[0], c[2], c[4])

    def m_opseq(self, c: Children) -> Any:
        return self.opseq(c)

    def m_opchain(self, c: Children) -> Children:
        return _extend(c)

    def m_neg(self, c: Children) -> ast.Unary:
        return self.nest(ast.Unary("-", c[1], self.span(c[0], c[1])), c[1])

    def m_not(self, c: Children) -> ast.Unary:
        return self.nest(ast.Unary("not", c[1], self.span(c[0], c[1])), c[1])

    def m_index(self, c: Children) -> ast.Index:
        return self.nest(ast.Index(c[0], c[2], self.span(c[0], c[3])), c[0], c[2])

    def m_var(self, c: Children) -> ast.Var:
        return ast.Var(c[0].value, self.token_span(c[0]))

    def m_call(self, c: Children) -> ast.Call | ast.Noise:
        args = tuple(c[2])
        align = c[4]
        if c[0].value == "gauss" and len(args) == 1:  # `gauss(sigma) align d`: a Gaussian draw
            node = ast.Noise("gauss", args[0], align, self.span(c[0], align if align is not None else c[3]))
            return self.nest(node, args[0], align)
        if align is not None:
            raise self.fail("FZ101", "`align` follows a noise draw (`lap`, `lapplus`, `gauss`), not a call",
                      self.span(c[0], align))
        return self.nest(ast.Call(c[0].value, args, self.span(c[0], c[3])), *args)

    def m_args(self, c: Children) -> Children:
        return c[0::2]

    def m_lap(self, c: Children) -> ast.Noise:
        return self._noise("lap", c)

    def m_lapplus(self, c: Children) -> ast.Noise:
        return self._noise("lapplus", c)

    def _noise(self, kind: str, c: Children) -> ast.Noise:
        align = c[4]
        node = ast.Noise(kind, c[2], align, self.span(c[0], align if align is not None else c[3]))
        return self.nest(node, c[2], align)

    def m_align(self, c: Children) -> Any:
        return c[1] if c else None

    def m_dist(self, c: Children) -> ast.Dist:
        return self.nest(ast.Dist(c[2], self.span(c[0], c[3])), c[2])
