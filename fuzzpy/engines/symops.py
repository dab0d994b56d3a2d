"""The per-row operations on symbolic values, mirroring `fuzzpy.runtime.rowops`,
`operations` and `vectors` over columns, one numpy rule at a time.

Operands are `Sym`/`SymVector`/`SymSum` values or captured macro-level
values (exact numbers, booleans, strings, exact `Vector`s), read as
`rowops.as_row` reads them. What has no rule here raises `NotCompilable`:
the function then runs in memory (`fuzzpy.engines.trace`).
"""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.engines.rows import Node, Nodes, NotCompilable, Sym, SymSum, SymVector, is_symbolic
from fuzzpy.runtime import exact as X
from fuzzpy.runtime.values import Inl, Inr, Record, WithPair
from fuzzpy.runtime.vectors import VectorColumn, is_exact_vector
from fuzzpy.support.lazy import is_instance, lazy

np = lazy("numpy")

_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
#: The most products one SQL expression adds up as nested additions; a longer
#: sum is a fold over a list (`SymOps._ordered_products`).
CHAIN = 128


class SymOps:
    """Symbolic per-row operations building nodes in one `Nodes` table."""

    def __init__(self, nodes: Nodes) -> None:
        self.n = nodes

    # ------------------------------------------------------------ scalars

    def node(self, value: object) -> Node:
        if isinstance(value, Sym):
            return value.node
        if is_symbolic(value) or isinstance(value, (VectorColumn, list, tuple, Record, Inl, Inr, WithPair)) or is_exact_vector(value):
            raise NotCompilable("a vector or a structure where a number is expected")
        if is_instance(value, "numpy", "ndarray") and value.ndim == 0:
            value = value.item()
        return self.n.literal(value)

    def binary(self, op: str, left: object, right: object) -> object:
        if op in _COMPARISONS:
            return self.compare(op, left, right)
        if _vectorish(left) or _vectorish(right):
            return self.vector_arithmetic(op, left, right)
        a, b = self.node(left), self.node(right)
        if op == "/":
            return Sym(self.n.make("div", (self.n.double(a), self.n.double(b)), "num"))
        a, b, kind = self.n.common(a, b)
        if kind not in ("int", "num"):
            raise NotCompilable(f"`{op}` of {kind} values")
        name = {"+": "add", "-": "sub", "*": "mul"}[op]
        return Sym(self.n.make(name, (a, b), kind))

    def compare(self, op: str, left: object, right: object) -> Sym:
        if isinstance(left, (Record, tuple)) or isinstance(right, (Record, tuple)):
            return self._structural(op, left, right)
        if _vectorish(left) or _vectorish(right):
            raise NotCompilable("a comparison of vectors")
        a, b, _ = self.n.common(self.node(left), self.node(right))
        return Sym(self.n.make("cmp", (a, b), "bool", op))

    def _structural(self, op: str, left: object, right: object) -> Sym:
        """Records and tuples are equal when every field (position) is, as the
        in-memory interpreter compares them; no order on structures."""
        if op not in ("==", "!="):
            raise NotCompilable(f"`{op}` of records or tuples")
        if isinstance(left, Record) and isinstance(right, Record) and left.fields.keys() == right.fields.keys():
            pairs = [(v, right.fields[k]) for k, v in left.fields.items()]
        elif isinstance(left, tuple) and isinstance(right, tuple) and len(left) == len(right):
            pairs = list(zip(left, right, strict=True))
        else:
            raise NotCompilable("a comparison of structures of different shapes")
        if not pairs:
            raise NotCompilable("a comparison of empty structures")
        node = self.compare("==", *pairs[0]).node
        for a, b in pairs[1:]:
            node = self.n.make("and", (node, self.compare("==", a, b).node), "bool")
        return Sym(node if op == "==" else self.n.make("not", (node,), "bool"))

    def negate(self, value: object) -> Sym | SymVector:
        if isinstance(value, SymVector):
            return SymVector(tuple(self.n.make("neg", (e,), "num") for e in value.entries))
        a = self.node(value)
        if a.kind not in ("int", "num"):
            raise NotCompilable("`-` of a non-number")
        return Sym(self.n.make("neg", (a,), a.kind))

    def absolute(self, value: object) -> Sym:
        a = self.node(value)
        if a.kind not in ("int", "num"):
            raise NotCompilable("`abs` of a non-number")
        return Sym(self.n.make("abs", (a,), a.kind))

    def logical(self, op: str, left: object, right: object) -> Sym:
        a, b = self._bool(left), self._bool(right)
        return Sym(self.n.make("and" if op == "&&" else "or", (a, b), "bool"))

    def logical_not(self, value: object) -> Sym:
        return Sym(self.n.make("not", (self._bool(value),), "bool"))

    def _bool(self, value: object) -> Node:
        node = self.node(value)
        if node.kind != "bool":
            raise NotCompilable("a non-boolean condition")
        return node

    def pick(self, which: str, left: object, right: object) -> Sym:
        a, b, kind = self.n.common(self.node(left), self.node(right))
        if kind not in ("int", "num"):
            raise NotCompilable(f"`{which}` of {kind} values")
        return Sym(self.n.make(which, (a, b), kind))

    def math(self, name: str, value: object) -> Sym:
        """sqrt, floor, sigmoid: in doubles, bit-identical in every engine
        (IEEE sqrt is correctly rounded; sigmoid is a table and + - *).
        `exp` and `log` are not pushed down: numpy's implementations are not
        guaranteed to agree with an engine's libm bit for bit."""
        if name in ("exp", "log"):
            raise NotCompilable(f"`{name}` (numpy's {name} may differ from the engine's in the last bit)")
        x = self.n.double(self.node(value))
        if name == "sigmoid":
            return Sym(self._sigmoid(x))
        return Sym(self.n.make(name, (x,), "num"))

    def _sigmoid(self, d: Node) -> Node:
        """`sigmoid.sigmoid_rows`, operation by operation."""
        n = self.n
        scaled = n.make("sigscaled", (d,), "num")
        j = n.make("sigindex", (scaled,), "int")
        t = n.make("rawsub", (scaled, n.double(j)), "num")
        y0, y1 = n.make("sigtable", (j,), "num", 0), n.make("sigtable", (j,), "num", 1)
        y = n.make("rawadd", (y0, n.make("rawmul", (t, n.make("rawsub", (y1, y0), "num")), "num")), "num")
        negative = n.make("cmp", (d, n.literal(0.0)), "bool", "<")
        return n.make("if", (negative, n.make("rawsub", (n.literal(1.0), y), "num"), y), "num")

    def clip(self, value: object, lo: Fraction, hi: Fraction) -> Sym:
        a = self.node(value)
        if a.kind == "int" and lo.denominator == 1 and hi.denominator == 1:
            low, high = self.n.literal(int(lo)), self.n.literal(int(hi))
            return Sym(self.n.make("clip", (a, low, high), "int"))
        low, high = self.n.literal(Fraction(lo)), self.n.literal(Fraction(hi))
        return Sym(self.n.make("clip", (self.n.double(a), low, high), "num"))

    # ------------------------------------------------------------ if / case

    def select(self, cond: object, then: object, orelse: object) -> object:
        """Row i takes `then` where cond holds, else `orelse` (both computed)."""
        c = self._bool(cond)
        return self._select(c, then, orelse)

    def _select(self, c: Node, then: object, orelse: object) -> object:
        if isinstance(then, Record) and isinstance(orelse, Record) and then.fields.keys() == orelse.fields.keys():
            return Record({k: self._select(c, v, orelse.get(k)) for k, v in then.fields.items()})
        if isinstance(then, tuple) and isinstance(orelse, tuple) and len(then) == len(orelse):
            return tuple(self._select(c, a, b) for a, b in zip(then, orelse, strict=True))
        if _vectorish(then) or _vectorish(orelse):
            a, b = self._pad(self.as_vector(then), self.as_vector(orelse))
            return SymVector(tuple(self.n.make("if", (c, x, y), "num") for x, y in zip(a, b, strict=True)))
        if isinstance(then, (SymSum, WithPair)) or isinstance(orelse, (SymSum, WithPair)):
            raise NotCompilable("a per-row choice between sums or with-pairs")
        from fuzzpy.runtime.values import Inl, Inr

        if isinstance(then, (Inl, Inr)) or isinstance(orelse, (Inl, Inr)):
            return self._select_sum(c, then, orelse)
        a, b, kind = self.n.common(self.node(then), self.node(orelse))
        return Sym(self.n.make("if", (c, a, b), kind))

    def _select_sum(self, c: Node, then: object, orelse: object) -> SymSum:
        from fuzzpy.runtime.values import Inl, Inr

        if not all(isinstance(v, (Inl, Inr)) for v in (then, orelse)):
            raise NotCompilable("a per-row choice between a sum and another value")
        is_left = self._select(c, isinstance(then, Inl), isinstance(orelse, Inl))
        sides = {"left": [None, None], "right": [None, None]}
        for position, value in enumerate((then, orelse)):
            sides["left" if isinstance(value, Inl) else "right"][position] = value.value
        left = _one_or_select(self, c, *sides["left"])
        right = _one_or_select(self, c, *sides["right"])
        return SymSum(self._bool(is_left), left, right)

    # ------------------------------------------------------------ vectors

    def as_vector(self, value: object) -> tuple[Node, ...]:
        """Entries as doubles, as `vectors._doubles`/`vector_column` read them."""
        if isinstance(value, SymVector):
            return value.entries
        if is_exact_vector(value):
            return tuple(self.n.literal(Fraction(X.to_exact(v))) for v in value.tolist())  # to_float
        if isinstance(value, list):
            return tuple(self.n.double(self.node(v)) for v in value)
        raise NotCompilable("a vector was expected")

    def vector(self, items: list[object]) -> SymVector:
        return SymVector(self.as_vector(items))

    def _pad(self, a: tuple[Node, ...], b: tuple[Node, ...]) -> tuple[tuple[Node, ...], tuple[Node, ...]]:
        zero = self.n.literal(0.0)
        width = max(len(a), len(b))
        return a + (zero,) * (width - len(a)), b + (zero,) * (width - len(b))

    def vector_arithmetic(self, op: str, left: object, right: object) -> object:
        """`vectors.vector_arithmetic` over a column: every entry saturated."""
        if op in ("+", "-") and _zero_number(left) and _vectorish(right):
            return right if op == "+" else self.negate(self._as_symvector(right))
        if op in ("+", "-") and _zero_number(right) and _vectorish(left):
            return left
        if op in ("+", "-"):
            if not (_vectorish(left) and _vectorish(right)):
                raise NotCompilable("a number added to a vector")
            a, b = self._pad(self.as_vector(left), self.as_vector(right))
            name = "add" if op == "+" else "sub"
            return SymVector(tuple(self.n.make(name, (x, y), "num") for x, y in zip(a, b, strict=True)))
        vec, num = (left, right) if _vectorish(left) else (right, left)
        if _vectorish(num) or (op == "/" and not _vectorish(left)) or op not in ("*", "/"):
            raise NotCompilable("a product of two vectors")
        factor = self.n.double(self.node(num))
        name = "mul" if op == "*" else "div"
        return SymVector(tuple(self.n.make(name, (x, factor), "num") for x in self.as_vector(vec)))

    def _as_symvector(self, value: object) -> SymVector:
        return SymVector(self.as_vector(value))

    def dot(self, u: object, v: object) -> object:
        """The per-row dot product: products added left to right, then made
        finite (`vectors.dot`)."""
        if _zero_number(u) or _zero_number(v):
            return 0
        a, b = self._pad(self.as_vector(u), self.as_vector(v))
        if not a:
            return Sym(self.n.literal(0.0))
        args = tuple(x for pair in zip(a, b, strict=True) for x in pair)
        if len(a) <= CHAIN:
            return Sym(self.n.make("dot", args, "num"))
        return Sym(self.n.make("finite", (self._ordered_products(args),), "num"))

    def _ordered_products(self, args: tuple[Node, ...]) -> Node:
        """a0 b0 + a1 b1 + ... added left to right (`vectors.ordered_dot`), as
        one fold over a list of the products (`Dialect.ordered_sum`): written
        as nested additions, a wide vector's sum is an expression as deep as
        the vector is wide, past what the engines' parsers accept (DuckDB:
        depth 1000)."""
        return self.n.make("foldprod", args, "num")

    def clip_l2(self, value: object, c: float) -> SymVector:
        """`vectors.clip_l2_rows`: x / m scaled by min(m, c / ||x / m||)."""
        entries = self.as_vector(value)
        if not entries:
            return SymVector(())
        m = self.n.make("maxabs", entries, "num")
        units = tuple(self.n.make("unit", (x, m), "num") for x in entries)
        if len(units) <= CHAIN:
            norm = self.n.make("norm", units, "num")
        else:
            norm = self.n.make("rawsqrt", (self._ordered_products(tuple(x for u in units for x in (u, u))),), "num")
        scale = self.n.make("l2scale", (m, norm, self.n.literal(c)), "num")
        return SymVector(tuple(self.n.make("rawmul", (u, scale), "num") for u in units))

    def length(self, value: object) -> int:
        return len(self.as_vector(value))


def _one_or_select(ops: SymOps, c: Node, a: object, b: object) -> object:
    if a is None or b is None:
        return b if a is None else a
    return ops._select(c, a, b)


def _vectorish(value: object) -> bool:
    return isinstance(value, (SymVector, list)) or is_exact_vector(value)


def _zero_number(value: object) -> bool:
    return X.is_exact(value) and value == 0
