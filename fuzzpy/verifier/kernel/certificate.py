"""A proof certificate: what the prover found, as plain data (docs/verifier-kernel.md).

The prover fills it in; the kernel (`fuzzpy.verifier.kernel.check`) reads
it and trusts nothing in it: every alignment, invariant and fact is an
obligation it discharges itself. Expressions are source text in the
mechanism language (shifts in the `align` language: plain variables are the
first run's state at the draw, `dist(e)` is e's value in the second run minus
its value in the first); loop invariants are SMT-LIB terms over the
vocabulary of docs/verifier-kernel.md ("x.1", "x.2", "cost", ...).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fuzzpy.support.records import frozen

FORMAT = "fuzzpy-certificate 1"


@frozen
class Where:
    """The node of the mechanism a certificate entry is about: its number in
    the mechanism body's pre-order (`numbering`), so that a proof survives
    moving or re-indenting the mechanism as its cache key does; ``line`` is
    for readers only (where the node was when the proof was found)."""

    node: int
    line: int

    @staticmethod
    def of(node: Any, numbers: dict[int, int]) -> Where:
        return Where(numbers[id(node)], node.span.line)


def numbering(decl: Any) -> dict[int, int]:
    """id(node) -> its position in a pre-order walk of the mechanism's body."""
    order: dict[int, int] = {}

    def visit(node: Any) -> None:
        if isinstance(node, tuple):
            for item in node:
                visit(item)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type) \
                and type(node).__module__ == "fuzzpy.language.syntax":
            order[id(node)] = len(order)
            for f in dataclasses.fields(node):
                if f.name != "span":
                    visit(getattr(node, f.name))

    visit(decl.body)
    return order


@frozen
class DrawAlignment:
    """A draw's alignment: eta in the first run is eta + shift in the second.

    ``selector``: "" (always ``shift``), "state" (``test`` over the state at
    the draw chooses ``shift`` else ``otherwise``), "pointwise" (``test`` is an
    index: the draw at index s gets ``shift``), "branch" (the comparison at
    ``test_at``, evaluated later in the first run, chooses; it must agree in
    both runs). ``mirror`` (Laplace only, no selector): a test of the state at
    the draw; where the two runs disagree on it, the second run's value is
    -eta + shift instead of eta + shift.
    """

    at: Where
    kind: str  # "lap" | "lapplus" | "gauss"
    shift: str
    selector: str = ""
    test: str = ""
    test_at: Where | None = None
    otherwise: str = "0"
    mirror: str = ""
    #: `gauss` draws: R, a rational with |shift| <= R * sigma on every path (checked); enters mu^2
    bound: str = ""


@frozen
class LoopInvariant:
    at: Where
    invariant: str  # SMT-LIB
    labels: tuple[str, ...] = ()  # the conjuncts as the prover names them (for readers)


@frozen
class LoopTrips:
    """A loop with Gaussian draws makes at most ``trips`` trips (a whole number;
    checked at entry against its counter guard, kernel/gaussian.py)."""

    at: Where
    trips: int


@frozen
class BranchRule:
    """How an `if` on data that may differ between the runs is taken:
    "agree" (both runs take the same arm: an obligation) or "either" (the
    runs may take different arms: all four combinations are executed)."""

    at: Where
    rule: str


@frozen
class Side:
    """The proof for one orientation of the neighbour relation."""

    orientation: str  # "forward" | "reversed"
    draws: tuple[DrawAlignment, ...]
    loops: tuple[LoopInvariant, ...]
    branches: tuple[BranchRule, ...]
    #: loops with Gaussian draws and their trip bounds
    trips: tuple[LoopTrips, ...] = ()
    #: the share E of the claim's epsilon spent on the Gaussian draws (a rational;
    #: the Laplace cost must stay within eps - E, and delta >= delta_mu(E))
    gauss_eps: str = "0"


@frozen
class Certificate:
    mechanism: str
    claim: str
    rule: str  # "alignment" | "pointwise" (out = s implies out' = s)
    requires: tuple[str, ...]
    neighbours: tuple[tuple[str, str], ...]  # input -> "vec[inf]" | "vec[1]" | "vec[2]" | "private" | "public"
    whole: tuple[str, ...]  # `num` locals the proof takes to hold whole numbers (checked)
    sides: tuple[Side, ...]
    delta: str = ""  # `privacy (eps, delta)`: delta's source text ("" for a pure claim)

    def to_json(self) -> dict[str, Any]:
        data = {"format": FORMAT, **_plain(self)}
        # the approximate-DP fields only where used: a pure proof's certificate reads as before
        if not data["delta"]:
            del data["delta"]
        for side in data["sides"]:
            if not side["trips"]:
                del side["trips"]
            if side["gauss_eps"] == "0":
                del side["gauss_eps"]
            for draw in side["draws"]:
                if not draw["bound"]:
                    del draw["bound"]
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> Certificate:
        if data.get("format") != FORMAT:
            raise ValueError("not a fuzzpy certificate")

        def where(w: Any) -> Where | None:
            return None if w is None else Where(int(w["node"]), int(w["line"]))

        sides = tuple(
            Side(s["orientation"],
                 tuple(DrawAlignment(where(d["at"]), d["kind"], d["shift"], d["selector"], d["test"],  # type: ignore[arg-type]
                                     where(d["test_at"]), d["otherwise"], d.get("mirror", ""),
                                     str(d.get("bound", "")))
                       for d in s["draws"]),
                 tuple(LoopInvariant(where(v["at"]), v["invariant"], tuple(v["labels"])) for v in s["loops"]),  # type: ignore[arg-type]
                 tuple(BranchRule(where(b["at"]), b["rule"]) for b in s["branches"]),  # type: ignore[arg-type]
                 tuple(LoopTrips(where(t["at"]), int(t["trips"])) for t in s.get("trips", ())),  # type: ignore[arg-type]
                 str(s.get("gauss_eps", "0")))
            for s in data["sides"])
        return Certificate(data["mechanism"], data["claim"], data["rule"], tuple(data["requires"]),
                           tuple((a, b) for a, b in data["neighbours"]), tuple(data["whole"]), sides,
                           str(data.get("delta", "")))


def _plain(value: Any) -> Any:
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: _plain(getattr(value, name)) for name in fields}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
