"""Mechanism expressions back to source-like text, for proofs and messages."""

from __future__ import annotations

import re

from fuzzpy.language.syntax import (
    Binary,
    BoolLit,
    Call,
    Dist,
    Expr,
    Forall,
    If,
    Index,
    Noise,
    NumLit,
    Unary,
    Var,
)

_PRECEDENCE = {"==>": 0, "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
               "+": 4, "-": 4, "*": 5, "/": 5}


def show(expr: Expr, outer: int = 0) -> str:
    if isinstance(expr, NumLit):
        return expr.text
    if isinstance(expr, BoolLit):
        return "true" if expr.value else "false"
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Binary):
        level = _PRECEDENCE.get(expr.op, 0)
        left, right = (level + 1, level) if expr.op == "==>" else (level, level + 1)  # `==>` is right-associative
        text = f"{show(expr.left, left)} {expr.op} {show(expr.right, right)}"
        return f"({text})" if level < outer else text
    if isinstance(expr, Unary):
        op = "-" if expr.op == "-" else "!"
        return f"{op}{show(expr.operand, 6)}"
    if isinstance(expr, If):
        text = f"{show(expr.cond, 1)} ? {show(expr.then, 1)} : {show(expr.orelse, 1)}"
        return f"({text})" if outer else text
    if isinstance(expr, Index):
        return f"{show(expr.base, 7)}[{show(expr.index)}]"
    if isinstance(expr, Call):
        return f"{expr.func}({', '.join(show(a) for a in expr.args)})"
    if isinstance(expr, Noise):
        return f"{expr.kind}({show(expr.scale)})"
    if isinstance(expr, Dist):
        return f"dist({show(expr.expr)})"
    if isinstance(expr, Forall):
        return f"forall {expr.var}. {show(expr.body)}"
    return type(expr).__name__


def show_signed_sum(terms: list[tuple[int, str]]) -> str:
    """`a - b + c` from signed pieces, `0` when empty."""
    text = ""
    for sign, piece in terms:
        if not text:
            text = piece if sign > 0 else f"-{piece}"
        else:
            text += f" + {piece}" if sign > 0 else f" - {piece}"
    return text or "0"


def show_trail(trail: list) -> str:  # noqa: ANN001 - (statement, branch taken) pairs of a product path
    """The branches a path took, `c` or `!(c)`, comma-separated."""
    parts = []
    for stmt, taken in trail:
        cond = show(getattr(stmt, "cond", stmt))
        parts.append(cond if taken else f"!({cond})")
    return ", ".join(parts)


def in_run(text: str, run: int | str) -> str:
    """`x` in run 1 / run 2 of a relational proof: `x<1>`, `x<2>` (Gaboardi's
    lecture's angle brackets). No identifier holds `<`, so a local named `eps1`
    prints `eps1<1>`, never `eps11` (issue 30 review: x1 / x2 collided with
    such names). An expression that is not a name is parenthesised: `(i < k)<1>`."""
    plain = re.fullmatch(r"[A-Za-z_]\w*(\[[^\[\]]*\])?", text) is not None or wrapped(text)
    return f"{text}<{run}>" if plain else f"({text})<{run}>"


def wrapped(text: str) -> bool:
    """`(...)` with one pair of parentheses round the whole text."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for k, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and k < len(text) - 1:
            return False
    return True
