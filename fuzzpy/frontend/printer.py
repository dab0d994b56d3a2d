"""Syntax tree -> source text that parses back to an equal tree.

`print_program` lays a program out the way the examples are written: one
declaration per paragraph, blocks and mechanism bodies indented by two
spaces, everything else on one line. Parentheses are inserted exactly where
the grammar's precedence needs them (grammar/fuzz.lark):

functional expressions, loosest first
    0  fun / if / case / return (they extend as far as possible)
    1  ||      2  &&      3  comparisons (non-associative)
    4  :: (right)         5  + -       6  * /
    7  unary - and not    8  application (and with-pairs as heads)
    9  field access, atoms

mechanism expressions: 0 forall, 1 `c ? a : b`, 2..7 the same binary
operators (no ::), 8 unary and noise, 9 indexing, calls and atoms.

types: 0 arrows (right), 1 sums (right), 2 list/bag/fuzzy/vec, 3 atoms.
"""

from __future__ import annotations

from collections.abc import Sequence

from fuzzpy.frontend.lexer import PRIMITIVES
from fuzzpy.language import syntax as ast
from fuzzpy.language.library import is_library_file

INDENT = "  "

_OP_LEVEL = {
    "==>": 0, "||": 1, "&&": 2,
    "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
    "::": 4, "+": 5, "-": 5, "*": 6, "/": 6,
}
_COMPARISON = 3
_CONS = 4
_UNARY, _APP, _ATOM = 7, 8, 9
_MECH_UNARY, _MECH_ATOM = 8, 9


def print_program(program: ast.Program) -> str:
    """The whole program, declarations separated by blank lines: its
    `import`s as written, then its own declarations (not those the imports
    brought in, which parse back from the imports)."""
    imports = [print_import(imp) for imp in program.imports]
    own = [print_decl(decl) for decl in program.decls if not is_library_file(decl.span.file)]
    head = ["\n".join(imports)] if imports else []
    return "\n\n".join(head + own) + "\n"


def print_import(imp: ast.ImportDecl) -> str:
    names = "" if imp.names is None else " (" + ", ".join(imp.names) + ")"
    return f"import {'.'.join(imp.module)}{names};"


def print_decl(decl: ast.Decl) -> str:
    if isinstance(decl, ast.LetDecl):
        return f"let {decl.name} = {expr(decl.expr)};"
    if isinstance(decl, ast.TypeDecl):
        return f"type {decl.name} = {type_text(decl.type)};"
    if isinstance(decl, ast.DefDecl):
        return _def(decl)
    if isinstance(decl, ast.MechanismDecl):
        return _mechanism(decl)
    raise TypeError(f"not a declaration: {decl!r}")


def _def(decl: ast.DefDecl) -> str:
    head = ("assume " if decl.assumed else "") + ("def rec" if decl.recursive else "def")
    params = "".join(f" {_param(p)}" for p in decl.params)
    result = f" : {type_text(decl.result)}" if decl.result is not None else ""
    if decl.measure is not None:
        result += f" privacy {decl.measure.kind}[{expr(decl.measure.delta)}]"
    if isinstance(decl.body, ast.Block):
        return f"{head} {decl.name}{params}{result} = {expr(decl.body)};"
    return f"{head} {decl.name}{params}{result} =\n{INDENT}{expr(decl.body, 0, INDENT)};"


def _param(param: ast.Param) -> str:
    bound = f"[{expr(param.sens)}] " if param.sens is not None else " "
    return f"({param.name} :{bound}{type_text(param.type)})"


def _mechanism(decl: ast.MechanismDecl) -> str:
    params = ", ".join(f"{p.name} : {type_text(p.type)}" for p in decl.params)
    lines = [f"mechanism {decl.name} ({params}) : {type_text(decl.result)}"]
    lines += [f"{INDENT}requires {mexpr(r)}" for r in decl.requires]
    delta = f", {mexpr(decl.delta)})" if decl.delta is not None else ""
    lines.append(f"{INDENT}privacy {'(' if delta else ''}{mexpr(decl.privacy)}{delta}")
    return "\n".join(lines) + "\n" + _stmt_block(decl.body, "")


# ---------------------------------------------------------------- types


def type_text(ty: ast.TypeExpr, level: int = 0) -> str:
    text, own = _type(ty)
    return f"({text})" if own < level else text


def _type(ty: ast.TypeExpr) -> tuple[str, int]:
    if isinstance(ty, ast.TyName):
        return ty.name, 3
    if isinstance(ty, ast.TyFun):
        arrow = f"-[{expr(ty.sens)}]->" if ty.arrow == "-[]->" and ty.sens is not None else ty.arrow
        return f"{type_text(ty.param, 1)} {arrow} {type_text(ty.result, 0)}", 0
    if isinstance(ty, ast.TySum):
        return f"{type_text(ty.left, 2)} + {type_text(ty.right, 1)}", 1
    if isinstance(ty, ast.TyList):
        if ty.matrix and isinstance(ty.elem, ast.TyVec):
            return f"mat[{ty.elem.norm}] {type_text(ty.elem.elem, 2)}", 2
        return f"list {type_text(ty.elem, 2)}", 2
    if isinstance(ty, ast.TyBag):
        return f"bag {type_text(ty.elem, 2)}", 2
    if isinstance(ty, ast.TyFuzzy):
        return f"fuzzy {type_text(ty.inner, 2)}", 2
    if isinstance(ty, ast.TyVec):
        return f"vec[{ty.norm}] {type_text(ty.elem, 2)}", 2
    if isinstance(ty, ast.TyTuple):
        return "(" + ", ".join(type_text(item) for item in ty.items) + ")", 3
    if isinstance(ty, ast.TyWith):
        return f"<{type_text(ty.left)} & {type_text(ty.right)}>", 3
    if isinstance(ty, ast.TyRecord):
        fields = ", ".join(f"{name} : {type_text(t)}" for name, t in ty.fields)
        return "{ " + fields + " }", 3
    raise TypeError(f"not a type: {ty!r}")


# ---------------------------------------------------------------- functional expressions


def expr(e: ast.Expr, level: int = 0, indent: str = "") -> str:
    """`e` as text, in parentheses if it binds more loosely than `level`."""
    text, own = _expr(e, indent)
    return f"({text})" if own < level else text


def _expr(e: ast.Expr, indent: str) -> tuple[str, int]:
    literal = _literal(e)
    if literal is not None:
        return literal, _ATOM
    if isinstance(e, ast.Binary):
        return _binary(e.op, e.left, e.right, indent), _OP_LEVEL[e.op]
    if isinstance(e, ast.Cons):
        return _binary("::", e.head, e.tail, indent), _CONS
    if isinstance(e, ast.Unary):
        operand = expr(e.operand, _UNARY, indent)
        op = "not " if e.op == "not" else ("- " if operand.startswith("-") else "-")
        return op + operand, _UNARY
    if isinstance(e, ast.App):
        return f"{expr(e.func, _APP, indent)} {expr(e.arg, _ATOM, indent)}", _APP
    if isinstance(e, ast.WithPair):
        return f"<{expr(e.left, 5, indent)}, {expr(e.right, 5, indent)}>", _APP
    if isinstance(e, ast.Field):
        return f"{expr(e.expr, _ATOM, indent)}.{e.name}", _ATOM
    if isinstance(e, ast.Block):
        return _block(e, indent), _ATOM
    compound = _compound(e, indent)
    if compound is not None:
        return compound, _ATOM
    return _open(e, indent), 0


def _literal(e: ast.Expr) -> str | None:
    if isinstance(e, ast.Var):
        # `(sum) [1, 2]` stays an application: `sum [` would start a primitive
        return f"({e.name})" if e.name in PRIMITIVES else e.name
    if isinstance(e, ast.NumLit):
        return e.text
    if isinstance(e, ast.InfLit):
        return "inf"
    if isinstance(e, ast.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, ast.StringLit):
        return string_literal(e.value)
    if isinstance(e, ast.UnitLit):
        return "()"
    return None


def _compound(e: ast.Expr, indent: str) -> str | None:
    """Bracketed forms: tuples, lists, records, ascriptions, primitives."""
    if isinstance(e, ast.Tuple):
        return "(" + ", ".join(expr(item, 0, indent) for item in e.items) + ")"
    if isinstance(e, ast.ListLit):
        return "[" + ", ".join(expr(item, 0, indent) for item in e.items) + "]"
    if isinstance(e, ast.RecordLit):
        fields = ", ".join(f"{name} = {expr(value, 0, indent)}" for name, value in e.fields)
        return "{ " + fields + " }"
    if isinstance(e, ast.Ann):
        return f"({expr(e.expr, 0, indent)} : {type_text(e.type)})"
    if isinstance(e, ast.Prim):
        return f"{e.name}[" + ", ".join(expr(a, 0, indent) for a in e.static_args) + "]"
    return None


def _open(e: ast.Expr, indent: str) -> str:
    """The forms whose last part extends as far as possible (level 0)."""
    if isinstance(e, ast.Lambda):
        return _lambda(e, indent)
    if isinstance(e, ast.If):
        return (f"if {expr(e.cond, 1, indent)} then {expr(e.then, 1, indent)} "
                f"else {expr(e.orelse, 0, indent)}")
    if isinstance(e, ast.CaseSum):
        return (f"case {expr(e.scrutinee, 1, indent)} of inl {e.left_var} -> "
                f"{expr(e.left_body, 1, indent)} | inr {e.right_var} -> "
                f"{expr(e.right_body, 0, indent)}")
    if isinstance(e, ast.CaseList):
        return (f"case {expr(e.scrutinee, 1, indent)} of [] -> {expr(e.nil_body, 1, indent)}"
                f" | {e.head_var} :: {e.tail_var} -> {expr(e.cons_body, 0, indent)}")
    if isinstance(e, ast.Return):
        return f"return {expr(e.expr, 0, indent)}"
    raise TypeError(f"not a functional expression: {e!r}")


def _binary(op: str, left: ast.Expr, right: ast.Expr, indent: str) -> str:
    level = _OP_LEVEL[op]
    if op == "::":  # right-associative
        left_level, right_level = level + 1, level
    elif level == _COMPARISON:  # non-associative
        left_level = right_level = level + 1
    else:  # left-associative
        left_level, right_level = level, level + 1
    return f"{expr(left, left_level, indent)} {op} {expr(right, right_level, indent)}"


def _lambda(e: ast.Lambda, indent: str) -> str:
    params: list[str] = []
    body: ast.Expr = e
    while isinstance(body, ast.Lambda):
        params.append(body.param if body.param_type is None
                      else f"({body.param} : {type_text(body.param_type)})")
        body = body.body
    return f"fun {' '.join(params)} -> {expr(body, 0, indent)}"


def _block(block: ast.Block, indent: str) -> str:
    inner = indent + INDENT
    lines = [f"{inner}{_block_stmt(stmt, inner)};" for stmt in block.stmts]
    lines.append(f"{inner}{expr(block.result, 0, inner)}")
    return "{\n" + "\n".join(lines) + f"\n{indent}}}"


def _block_stmt(stmt: ast.BlockStmt, indent: str) -> str:
    if isinstance(stmt, ast.LetStmt):
        annotation = f" : {type_text(stmt.type)}" if stmt.type is not None else ""
        return f"let {stmt.name}{annotation} = {expr(stmt.expr, 0, indent)}"
    if isinstance(stmt, ast.LetTuple):
        return f"let ({', '.join(stmt.names)}) = {expr(stmt.expr, 0, indent)}"
    if isinstance(stmt, ast.SampleStmt):
        return f"sample {stmt.name} = {expr(stmt.expr, 0, indent)}"
    raise TypeError(f"not a block statement: {stmt!r}")


_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def string_literal(value: str) -> str:
    return '"' + "".join(_ESCAPED.get(char, char) for char in value) + '"'


# ---------------------------------------------------------------- mechanisms


def mexpr(e: ast.Expr, level: int = 0) -> str:
    """A mechanism expression, in parentheses if it binds more loosely than `level`."""
    text, own = _mexpr(e)
    return f"({text})" if own < level else text


def _mexpr(e: ast.Expr) -> tuple[str, int]:
    literal = _literal(e)
    if literal is not None:
        return literal, _MECH_ATOM
    if isinstance(e, ast.Binary):
        level = _OP_LEVEL[e.op] + 1
        right_level = level + 1
        left_level = level + 1 if _OP_LEVEL[e.op] == _COMPARISON else level
        if e.op == "==>":  # right-associative
            left_level, right_level = level + 1, level
        return f"{mexpr(e.left, left_level)} {e.op} {mexpr(e.right, right_level)}", level
    if isinstance(e, ast.Unary):
        operand = mexpr(e.operand, _MECH_UNARY)
        op = "!" if e.op == "not" else ("- " if operand.startswith("-") else "-")
        return op + operand, _MECH_UNARY
    if isinstance(e, ast.Noise):
        align = f" align {mexpr(e.align, _MECH_UNARY)}" if e.align is not None else ""
        return f"{e.kind}({mexpr(e.scale)}){align}", _MECH_UNARY
    if isinstance(e, ast.Index):
        return f"{mexpr(e.base, _MECH_ATOM)}[{mexpr(e.index)}]", _MECH_ATOM
    if isinstance(e, ast.Call):
        return f"{e.func}(" + ", ".join(mexpr(a) for a in e.args) + ")", _MECH_ATOM
    if isinstance(e, ast.Dist):
        return f"dist({mexpr(e.expr)})", _MECH_ATOM
    if isinstance(e, ast.If):
        return f"{mexpr(e.cond, 2)} ? {mexpr(e.then, 1)} : {mexpr(e.orelse, 1)}", 1
    if isinstance(e, ast.Forall):
        return f"forall {e.var}. {mexpr(e.body)}", 0
    raise TypeError(f"not a mechanism expression: {e!r}")


def _stmt_block(stmts: Sequence[ast.Stmt], indent: str) -> str:
    inner = indent + INDENT
    lines = [_stmt(stmt, inner) for stmt in stmts]
    return "{\n" + "".join(line + "\n" for line in lines) + f"{indent}}}"


def _stmt(stmt: ast.Stmt, indent: str) -> str:
    if isinstance(stmt, ast.VarDecl):
        return f"{indent}var {stmt.name} = {mexpr(stmt.expr)};"
    if isinstance(stmt, ast.Assign):
        target = stmt.name if stmt.index is None else f"{stmt.name}[{mexpr(stmt.index)}]"
        return f"{indent}{target} = {mexpr(stmt.expr)};"
    if isinstance(stmt, ast.IfStmt):
        return indent + _if_stmt(stmt, indent)
    if isinstance(stmt, ast.While):
        invariants = "".join(f" invariant {mexpr(p)}" for p in stmt.invariants)
        return f"{indent}while ({mexpr(stmt.cond)}){invariants} {_stmt_block(stmt.body, indent)}"
    if isinstance(stmt, ast.ReturnStmt):
        return f"{indent}return {mexpr(stmt.expr)};"
    if isinstance(stmt, ast.Output):
        return f"{indent}output {mexpr(stmt.expr)};"
    raise TypeError(f"not a statement: {stmt!r}")


def _if_stmt(stmt: ast.IfStmt, indent: str) -> str:
    text = f"if ({mexpr(stmt.cond)}) {_stmt_block(stmt.then, indent)}"
    if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.IfStmt):
        return f"{text} else {_if_stmt(stmt.orelse[0], indent)}"
    if stmt.orelse:
        return f"{text} else {_stmt_block(stmt.orelse, indent)}"
    return text
