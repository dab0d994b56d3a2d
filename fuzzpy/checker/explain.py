"""`fuzzpy check --explain DEF`: the derivation of one definition, step by step.

The inferencer calls `enter` before a rule and `leave` after it, and rules
attach a sentence with `note`. Steps are listed in the order they are
finished (the subexpressions first, as the derivation tree is built bottom-up),
indented by depth, each with the rule's sentence, the expression's type and the
context it produced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fuzzpy.checker.costs import describe_events
from fuzzpy.checker.terms import source_name
from fuzzpy.language import syntax as S

if TYPE_CHECKING:
    from fuzzpy.checker.context import Judgment

_QUIET = (S.NumLit, S.BoolLit, S.StringLit, S.UnitLit)

_RULE_NAMES: dict[type, str] = {
    S.Var: "variable",
    S.Binary: "operator",
    S.Unary: "operator",
    S.If: "if",
    S.ListLit: "list",
    S.Tuple: "tensor pair",
    S.RecordLit: "record",
    S.WithPair: "with-pair",
    S.Field: "field",
    S.Cons: "cons",
    S.CaseSum: "case",
    S.CaseList: "case",
    S.Return: "return",
    S.Ann: "annotation",
    S.Block: "block",
    S.Lambda: "function",
    S.App: "application",
    S.Prim: "primitive",
}


@dataclass
class Step:
    depth: int
    rule: str
    text: str
    type: str
    context: str
    notes: list[str] = field(default_factory=list)


class Tracer:
    def __init__(self, source_text: str | None = None) -> None:
        self.source_text = source_text
        self.steps: list[Step] = []
        self._frames: list[list[str]] = []

    def enter(self) -> None:
        self._frames.append([])

    def mark(self) -> tuple[int, int]:
        """Where the trace is now, to forget a failed attempt (see `reset`)."""
        return len(self.steps), len(self._frames)

    def reset(self, mark: tuple[int, int]) -> None:
        del self.steps[mark[0] :]
        del self._frames[mark[1] :]

    def note(self, text: str) -> None:
        if self._frames:
            self._frames[-1].append(text)

    def leave(self, expr: S.Expr, judgment: Judgment) -> None:
        notes = self._frames.pop()
        if isinstance(expr, _QUIET):
            return
        self.steps.append(
            Step(
                depth=len(self._frames),
                rule=_RULE_NAMES.get(type(expr), type(expr).__name__.lower()),
                text=self._snippet(expr),
                type=str(judgment.type),
                context=format_judgment(judgment),
                notes=notes,
            )
        )

    def statement(self, stmt: S.BlockStmt, judgment: Judgment, note: str) -> None:
        """A block statement folded into the context of what follows it."""
        self.steps.append(
            Step(
                depth=len(self._frames),
                rule={S.LetStmt: "let", S.LetTuple: "let pair", S.SampleStmt: "sample"}[type(stmt)],
                text=self._snippet(stmt),  # type: ignore[arg-type]
                type=str(judgment.type),
                context=format_judgment(judgment),
                notes=[note],
            )
        )

    def _snippet(self, expr: S.Expr) -> str:
        span = expr.span
        text = ""
        if self.source_text is not None and span.end > span.start:
            text = self.source_text[span.start : span.end]
        if not text:
            text = _describe(expr)
        text = re.sub(r"\s+", " ", text).strip()
        return text if len(text) <= 64 else text[:61] + "..."

    def render(self, title: str) -> str:
        lines = [
            title,
            "Read from the leaves up: each step applies one rule; `context` says how far the",
            "expression moves per unit change of each variable (its sensitivity) or, for a",
            "distribution, what releasing it costs in each variable (the mechanism events).",
            "",
        ]
        for number, step in enumerate(self.steps, 1):
            pad = "  " * min(step.depth, 12)
            lines.append(f"{number:>4}. {pad}[{step.rule}] {step.text}  : {step.type}")
            inner = " " * 6 + pad
            for note in step.notes:
                lines.append(f"{inner}because {note}")
            lines.append(f"{inner}context: {step.context}")
        return "\n".join(lines)


def format_judgment(judgment: Judgment) -> str:
    if judgment.cost is not None:
        if not judgment.cost:
            return "costs nothing in any variable"
        parts = []
        for name, cost in judgment.cost.items():
            if cost.is_infinite:
                parts.append(f"{source_name(name)}: infinite cost")
            else:
                parts.append(f"{source_name(name)}: [{describe_events(cost.events())}]")
        return "cost " + "; ".join(parts)
    if not judgment.ctx:
        return "depends on no variable"
    return ", ".join(f"{source_name(name)}: {usage.sens}" for name, usage in judgment.ctx.items())


def _describe(expr: S.Expr) -> str:
    if isinstance(expr, S.Var):
        return expr.name
    if isinstance(expr, S.Prim):
        return expr.name
    if isinstance(expr, S.App):
        return f"{_describe(expr.func)} {_describe(expr.arg)}"
    if isinstance(expr, S.Binary):
        return f"{_describe(expr.left)} {expr.op} {_describe(expr.right)}"
    if isinstance(expr, S.NumLit):
        return expr.text
    return type(expr).__name__.lower()
