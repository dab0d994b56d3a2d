"""Sensitivity contexts: variable -> how sensitive an expression is in it, and why.

A context maps each free variable to a `Usage`: its sensitivity (a `Sens`)
together with a small provenance tree recording the uses that added up to it
(Fuzz's context addition), the factors that scaled it (`let`, `c * e`, closures
scaled by infinity) and the branches that were joined (`if`/`case`). The tree
is built in O(1) per rule, and only read when a diagnostic needs to explain a
number ("db is used here (1) and here (1): 2 > declared 1").

Contexts are plain dicts owned by whoever holds them: rules update them in
place and merge the smaller into the larger, so checking a long block stays
linear in its length.
"""

from __future__ import annotations

from collections.abc import Iterator

from fuzzpy.language.sensitivity import INF, ONE, ZERO, Sens
from fuzzpy.language.source import Span


class Usage:
    """A sensitivity with the derivation that produced it."""

    __slots__ = ("sens", "kind", "span", "reason", "left", "right", "factor", "code")

    def __init__(
        self,
        sens: Sens,
        kind: str,
        span: Span | None = None,
        reason: str = "",
        left: Usage | None = None,
        right: Usage | None = None,
        factor: Sens = ONE,
        code: str = "",
    ) -> None:
        self.sens = sens
        self.kind = kind  # "use" | "add" | "join" | "scale"
        self.span = span
        self.reason = reason
        self.left = left
        self.right = right
        self.factor = factor
        self.code = code  # the diagnostic code to use if this scaling makes a cost infinite

    def __repr__(self) -> str:
        return f"Usage({self.sens}, {self.kind})"


Ctx = dict[str, Usage]


def use(span: Span) -> Usage:
    """A variable occurrence: 1-sensitive in itself."""
    return Usage(ONE, "use", span)


def add(a: Usage | None, b: Usage) -> Usage:
    if a is None:
        return b
    return Usage(a.sens + b.sens, "add", left=a, right=b)


def join(a: Usage | None, b: Usage) -> Usage:
    if a is None:
        return b
    return Usage(a.sens.join(b.sens), "join", left=a, right=b)


def scale(
    u: Usage, factor: Sens, span: Span | None = None, reason: str = "", code: str = "FZ306"
) -> Usage:
    if factor == ONE:
        return u
    return Usage(u.sens * factor, "scale", span, reason, left=u, factor=factor, code=code)


# ---------------------------------------------------------------- contexts


def single(name: str, span: Span) -> Ctx:
    return {name: use(span)}


def plus(a: Ctx, b: Ctx) -> Ctx:
    """a + b, reusing the larger dict (both are consumed)."""
    if len(a) < len(b):
        a, b = b, a
    for name, usage in b.items():
        previous = a.get(name)
        # keep the textual order of uses: the earlier context goes left
        a[name] = usage if previous is None else Usage(previous.sens + usage.sens, "add", left=previous, right=usage)
    return a


def join_ctx(a: Ctx, b: Ctx) -> Ctx:
    """max(a, b) pointwise, reusing the larger dict (both are consumed)."""
    if len(a) < len(b):
        a, b = b, a
    for name, usage in b.items():
        a[name] = join(a.get(name), usage)
    return a


def scale_ctx(
    ctx: Ctx, factor: Sens, span: Span | None = None, reason: str = "", code: str = "FZ306"
) -> Ctx:
    """factor * ctx in place. 0 * inf = 0: an unused variable stays unused."""
    if factor == ONE:
        return ctx
    if factor == ZERO:
        ctx.clear()
        return ctx
    for name, usage in ctx.items():
        ctx[name] = scale(usage, factor, span, reason, code)
    return ctx


def contributions(usage: Usage) -> list[tuple[Span, Sens]]:
    """The occurrences that add up to ``usage.sens``, each with its share.

    A join contributes only its larger side (the branches do not add)."""
    found: list[tuple[Span, Sens]] = []
    stack: list[tuple[Usage, Sens]] = [(usage, ONE)]
    while stack:
        node, factor = stack.pop()
        if node.kind == "use":
            if node.span is not None:
                found.append((node.span, factor))
        elif node.kind == "scale":
            assert node.left is not None
            stack.append((node.left, factor * node.factor))
        elif node.kind == "add":
            assert node.left is not None and node.right is not None
            stack.append((node.right, factor))
            stack.append((node.left, factor))
        else:  # join
            assert node.left is not None and node.right is not None
            bigger = node.left if node.left.sens >= node.right.sens else node.right
            stack.append((bigger, factor))
    found.sort(key=lambda item: (item[0].line, item[0].col))
    return found


def infinity_source(usage: Usage) -> Usage | None:
    """The outermost rule that made ``usage`` infinite (a scale node by inf),
    searched breadth-first so that the construct closest to the use wins."""
    if not usage.sens.is_inf:
        return None
    queue = [usage]
    for node in _breadth_first(queue):
        if (node.kind == "scale" and node.factor.is_inf and not node.factor.is_symbolic and node.left is not None
                and not node.left.sens.is_zero):
            return node
    return None


def _breadth_first(queue: list[Usage]) -> Iterator[Usage]:
    index = 0
    while index < len(queue):
        node = queue[index]
        index += 1
        yield node
        for child in (node.left, node.right):
            if child is not None and child.sens.is_inf:
                queue.append(child)


__all__ = [
    "Ctx",
    "INF",
    "Usage",
    "add",
    "contributions",
    "infinity_source",
    "join",
    "join_ctx",
    "plus",
    "scale",
    "scale_ctx",
    "single",
    "use",
]
