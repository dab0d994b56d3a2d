"""Per-row expressions: what a traced `map`/`filter`/`split`/`group` function computes.

A function given to a bag primitive is run once by the interpreter on a
*symbolic* row (`fuzzpy.engines.trace`); its result is a small expression
DAG over the bag's source columns, built from the nodes below. Each node
says exactly which per-row operation of `fuzzpy.runtime.rowops` it stands
for, so that every engine computes bit-identical per-row values
(docs/semantics.md, "Per-row functions"; docs/engines.md):

* ``kind`` is the numpy type the in-memory interpreter would hold: ``int``
  (int64, saturating), ``num`` (double, saturated to +/- DBL_MAX, NaN read as
  0), ``bool`` or ``string``;
* operands of mixed kinds are converted as numpy converts them (an int64
  becomes its nearest double: node ``double``) before the node is built, so
  the SQL emitter never has to guess a promotion rule.

Nodes are hash-consed (`Nodes.make`): structurally equal expressions are the
same object, so plans can be compared and cached, and the SQL emitter can
name shared subexpressions once.
"""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.runtime.exact import to_float
from fuzzpy.runtime.rowops import I64_MAX, I64_MIN
from fuzzpy.support.lazy import is_instance, lazy
from fuzzpy.support.records import frozen

np = lazy("numpy")

KINDS = ("int", "num", "bool", "string")


class NotCompilable(Exception):
    """A per-row function (or a use of a bag) the engines do not handle: the
    caller falls back to the in-memory interpreter, with a warning."""


class Node:
    """One per-row operation. Compare by identity (nodes are hash-consed)."""

    __slots__ = ("op", "args", "kind", "param", "id")

    def __init__(self, op: str, args: tuple[Node, ...], kind: str, param: object, ident: int) -> None:
        self.op = op
        self.args = args
        self.kind = kind
        self.param = param
        self.id = ident

    def __repr__(self) -> str:
        inner = ", ".join(repr(a) for a in self.args)
        return f"{self.op}[{self.param!r}]({inner})" if self.param is not None else f"{self.op}({inner})"


class Nodes:
    """The hash-consing table of one compilation."""

    def __init__(self) -> None:
        self._table: dict[tuple, Node] = {}

    def make(self, op: str, args: tuple[Node, ...], kind: str, param: object = None) -> Node:
        key = (op, tuple(a.id for a in args), kind, _param_key(param))
        node = self._table.get(key)
        if node is None:
            node = Node(op, args, kind, param, len(self._table))
            self._table[key] = node
        return node

    # -- leaves

    def column(self, name: str, kind: str) -> Node:
        return self.make("col", (), kind, name)

    def literal(self, value: object) -> Node:
        """A captured macro-level value, read as the per-row code reads it
        (`rowops.as_row`): an int saturated to int64, a num as its nearest
        double (saturated), a bool, a string."""
        if isinstance(value, bool) or is_instance(value, "numpy", "bool_"):
            return self.make("lit", (), "bool", bool(value))
        if isinstance(value, int) or is_instance(value, "numpy", "integer"):
            return self.make("lit", (), "int", min(max(int(value), I64_MIN), I64_MAX))
        if isinstance(value, (Fraction, float)) or is_instance(value, "numpy", "floating"):
            return self.make("lit", (), "num", float(to_float(Fraction(value))) if isinstance(value, Fraction) else _finite(float(value)))
        if isinstance(value, str):
            return self.make("lit", (), "string", value)
        raise NotCompilable(f"a captured value of kind {type(value).__name__}")

    # -- conversions numpy makes implicitly

    def double(self, node: Node) -> Node:
        if node.kind == "num":
            return node
        if node.kind not in ("int", "bool"):
            raise NotCompilable(f"a {node.kind} used as a number")
        if node.op == "lit":
            return self.make("lit", (), "num", float(node.param))  # nearest double, as numpy converts
        return self.make("double", (node,), "num")

    def common(self, a: Node, b: Node) -> tuple[Node, Node, str]:
        """Two numeric operands brought to numpy's common kind."""
        if a.kind == "int" and b.kind == "int":
            return a, b, "int"
        if a.kind == "string" or b.kind == "string":
            if a.kind == b.kind:
                return a, b, "string"
            raise NotCompilable("a string combined with a number")
        if a.kind == "bool" and b.kind == "bool":
            return a, b, "bool"
        return self.double(a), self.double(b), "num"


def _finite(x: float) -> float:
    if x != x:
        return 0.0
    return max(-1.7976931348623157e308, min(1.7976931348623157e308, x))


def _param_key(param: object) -> object:
    """Literals compare by value *and* type (1 and 1.0 and True differ), and
    -0.0 differs from 0.0."""
    if isinstance(param, float):
        return ("f", param.hex())
    if isinstance(param, tuple):
        return tuple(_param_key(p) for p in param)
    return (type(param).__name__, param)


# ---------------------------------------------------------------- symbolic values


@frozen
class Sym:
    """A per-row number, boolean or string: one node."""

    node: Node


@frozen
class SymVector:
    """A per-row vector: one double node per entry (a static length)."""

    entries: tuple[Node, ...]


@frozen
class SymSum:
    """A per-row `A + B` value: which side (a bool node) and both payloads."""

    is_left: Node
    left: object
    right: object


def is_symbolic(value: object) -> bool:
    return isinstance(value, (Sym, SymVector, SymSum))
