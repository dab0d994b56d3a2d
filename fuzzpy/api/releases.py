"""What the Python API's `quote` and `run` return (`fuzzpy.api`).

A `Charge` is what one dataset is (or would be) charged for a release and
what then remains of its budget; a `Release` is the released value as
plain Python data, with its charges.
"""

from __future__ import annotations

import sys
from dataclasses import field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from fuzzpy.support.records import frozen

if TYPE_CHECKING:
    from fuzzpy.language.types import Type
    from fuzzpy.ledger.quotes import Quote
    from fuzzpy.release.accuracy import Accuracy
    from fuzzpy.release.run import RunResult


ADD_REMOVE = "add-remove-one"  # `fuzzpy.accounting.neighbours.ADD_REMOVE` (not imported: it loads the accountant)


class Amount(NamedTuple):
    """An amount of privacy budget as (epsilon, delta) floats; ``exact``
    holds them as Fractions (and rho under the zcdp rule); ``neighbours``
    the relation it is for ("add-remove-one" or "replace-one")."""

    epsilon: float
    delta: float
    exact: dict[str, Fraction]
    neighbours: str = ADD_REMOVE

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"

    def __str__(self) -> str:
        """As the ledger's text shows it: exact when short, else 6 digits
        rounded up (a charge) or down (`Remaining`): `fuzzpy.language.figures`;
        then the neighbour relation. The floats are the doubles on the safe
        side, as in JSON (a charge's >= it, a `Remaining`'s <= it); ``exact``
        is exact."""
        return f"{self.figures()}, {_phrase(self.neighbours)}"

    def figures(self) -> str:
        """The amount's figures alone, rounded as `__str__` rounds them."""
        from fuzzpy.language.figures import ledger_text

        up = not isinstance(self, Remaining)
        text = f"epsilon={ledger_text(self.exact['epsilon'], up)}, delta={ledger_text(self.exact['delta'], up)}"
        if "rho" in self.exact:
            text += f", rho={ledger_text(self.exact['rho'], up)}"
        return text


def _phrase(relation: str) -> str:
    from fuzzpy.accounting.neighbours import phrase

    return phrase(relation)


class Remaining(Amount):
    """What remains of a budget: its text rounds down."""

    __slots__ = ()


@frozen
class Charge:
    """A release's charge to one dataset (``entry`` is the ledger entry's id
    once charged; None for a quote)."""

    dataset: str
    epsilon: float
    delta: float
    method: str  # how the release's events were composed into this charge
    remaining: Amount  # what remains of the budget after this release
    budget: str  # the dataset's budget, e.g. "eps=1 (basic)"
    spent_before: Amount
    entry: int | None = None
    quote: Quote = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    #: the neighbour relation the charge is for: "add-remove-one" (a row added or removed,
    #: the `bag` metric) or "replace-one" (`fuzzpy.accounting.neighbours`)
    neighbours: str = ADD_REMOVE
    #: the unchecked `assume def`s (FZ318) the charge rests on: () when none
    rests_on_unchecked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """As the ledger gives it (`run --json`'s "datasets" entries)."""
        document = self.quote.to_json()
        if self.rests_on_unchecked:
            document["rests_on_unchecked"] = list(self.rests_on_unchecked)
        return document

    def __repr__(self) -> str:
        """The figures as text on the safe side (issue 25), not the nearest doubles."""
        charged = charge_amount(self.quote) if self.quote is not None else None
        figures = charged.figures() if charged is not None else f"epsilon={self.epsilon!r}, delta={self.delta!r}"
        return (f"Charge(dataset={self.dataset!r}, {figures}, method={self.method!r}, "
                f"remaining={self.remaining!r}, budget={self.budget!r}, entry={self.entry!r}, "
                f"neighbours={self.neighbours!r}"
                + (f", rests_on_unchecked={self.rests_on_unchecked!r})" if self.rests_on_unchecked else ")"))

    def __str__(self) -> str:
        """`fuzzpy run`'s text: the charge rounded up, what remains down."""
        from fuzzpy.ledger.quotes import describe_amount

        quote = self.quote
        relation = _phrase(self.neighbours)
        if quote is None:
            return f"charged eps={self.epsilon}, delta={self.delta} to dataset {self.dataset}, {relation}"
        unchecked = (f" (resting on the UNCHECKED ASSUMPTION of {', '.join(self.rests_on_unchecked)})"
                     if self.rests_on_unchecked else "")
        return (f"charged {describe_amount(quote.cost.spend, quote.budget)} to dataset {self.dataset}, "
                f"{relation} (by {self.method}); remaining "
                f"{describe_amount(quote.remaining, quote.budget, up=False)} of {self.budget}{unchecked}")


def _amount(quote: Quote, spend: Any, up: bool = True, neighbours: str = ADD_REMOVE) -> Amount:
    from fuzzpy.language.figures import double_down, double_up
    from fuzzpy.ledger.rules import rule_named

    epsilon, delta = rule_named(quote.budget.rule).as_guarantee(spend, quote.budget)
    exact = {"epsilon": Fraction(epsilon), "delta": Fraction(delta)}
    if quote.budget.rule == "zcdp":
        exact["rho"] = Fraction(spend.rho)
    # the floats on the safe side: a charge the least double >= it, what remains the greatest <= it
    rounded = double_up if up else double_down
    return (Amount if up else Remaining)(rounded(epsilon), rounded(delta), exact, neighbours)


def charge_amount(quote: Quote) -> Amount:
    """What a quote charges, as an `Amount` (for the quote's relation)."""
    return _amount(quote, quote.cost.spend, neighbours=quote.neighbours)


def charge(quote: Quote, rests_on_unchecked: tuple[str, ...] = ()) -> Charge:
    """A quote (or receipt) as a `Charge`, for the relation it was costed for;
    ``rests_on_unchecked``: the unchecked `assume def`s its figure rests on."""
    relation = quote.neighbours

    def amount(spend: Any, up: bool = True) -> Amount:
        return _amount(quote, spend, up, relation)

    spent = amount(quote.cost.spend)
    return Charge(
        dataset=quote.dataset,
        epsilon=spent.epsilon,
        delta=spent.delta,
        method=quote.cost.method,
        remaining=amount(quote.remaining, up=False),
        budget=quote.budget.describe(),
        spent_before=amount(quote.spent),
        entry=getattr(quote, "id", None),
        quote=quote,
        neighbours=relation,
        rests_on_unchecked=rests_on_unchecked,
    )


@frozen
class Release:
    """A released value. ``value`` is plain Python data (floats, ints, bools,
    strings, tuples, lists, dicts for records); ``exact`` the runtime's own
    value (exact Fractions for numbers); ``charges`` per dataset;
    ``private`` is False for a seeded run (its noise is reproducible)."""

    value: Any
    exact: Any = field(repr=False)
    charges: dict[str, Charge]
    private: bool
    warnings: list[str]
    result: RunResult = field(repr=False, compare=False)
    #: the neighbour relation every charge is for ("add-remove-one" or "replace-one")
    neighbours: str = ADD_REMOVE

    @property
    def accuracy(self) -> tuple[Accuracy, ...]:
        """Each released part's noise and the half-width of its interval at
        the run's confidence (`fuzzpy.release.accuracy`; docs/semantics.md,
        "Accuracy"): ``noise`` is None where none is derived."""
        return self.result.accuracy

    def to_json(self) -> dict[str, object]:
        """`fuzzpy run --json`'s document; every charge is for datasets that
        differ by adding or removing one row (issue 25)."""
        return {"ok": True, **self.result.to_json()}


def release(result: RunResult) -> Release:
    charges = {receipt.dataset: charge(receipt, result.rests_on_unchecked) for receipt in result.receipts}
    value = to_python(result.value, result.type)
    return Release(value, result.value, charges, result.private, list(result.warnings), result, result.neighbours)


def to_python(value: Any, kind: Type | None = None) -> Any:
    """A runtime value as plain Python data, as its type ``kind`` says:
    `num` a float, `int` an int, tuples and `<a, b>` tuples, lists and
    vectors lists (a labelled vector a dict, as in JSON), records dicts,
    sums {"inl": ...} / {"inr": ...}.
    Without a type, numbers keep their kind (an exact Fraction a float)."""
    from fuzzpy.language import types as T

    if isinstance(kind, T.TFuzzy):
        return to_python(value, kind.inner)
    typed = _typed(value, kind) if kind is not None else _UNTYPED
    return typed if typed is not _UNTYPED else _untyped(value)


_UNTYPED = object()


def _numpy_types() -> tuple[tuple[type[Any], ...], tuple[type[Any], ...]]:
    """numpy's scalar and array types, or none where numpy was never
    imported (no value can then be one: a scalar release does not load it)."""
    np = sys.modules.get("numpy")
    return ((np.generic,), (np.ndarray,)) if np is not None else ((), ())


def _typed(value: Any, kind: Type) -> Any:
    scalar, array = _numpy_types()

    from fuzzpy.language import types as T
    from fuzzpy.runtime.exact import to_float
    from fuzzpy.runtime.values import Inl, Inr, Record, WithPair

    if isinstance(value, scalar):
        value = value.item()
    if isinstance(kind, T.TNum) and isinstance(value, (int, float, Fraction)) and not isinstance(value, bool):
        return to_float(value)
    if isinstance(kind, T.TInt) and isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(kind, T.TTuple) and isinstance(value, tuple) and len(value) == len(kind.items):
        return tuple(to_python(v, t) for v, t in zip(value, kind.items, strict=True))
    if isinstance(kind, T.TWith) and isinstance(value, WithPair):
        return (to_python(value.left, kind.left), to_python(value.right, kind.right))
    if isinstance(kind, T.TRecord) and isinstance(value, Record):
        types = dict(kind.fields)
        return {k: to_python(v, types.get(k)) for k, v in value.fields.items()}
    if isinstance(kind, (T.TList, T.TVec)) and getattr(value, "labels", None) is not None:
        return {label: to_python(v, kind.elem) for label, v in zip(value.labels, value.tolist(), strict=True)}
    if isinstance(kind, (T.TList, T.TVec)) and not isinstance(value, (str, bytes, Record, tuple)):
        items = value.tolist() if isinstance(value, array) else list(value)
        return [to_python(v, kind.elem) for v in items]
    if isinstance(kind, T.TSum) and isinstance(value, (Inl, Inr)):
        side = kind.left if isinstance(value, Inl) else kind.right
        return {"inl" if isinstance(value, Inl) else "inr": to_python(value.value, side)}
    return _UNTYPED


def _untyped(value: Any) -> Any:
    scalar, array = _numpy_types()

    from fuzzpy.runtime.bag import LazyGroups
    from fuzzpy.runtime.exact import to_float
    from fuzzpy.runtime.values import Inl, Inr, Record, WithPair

    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, Fraction):
        return to_float(value)
    if isinstance(value, scalar):
        return to_python(value.item())
    if isinstance(value, tuple):
        return tuple(to_python(v) for v in value)
    if getattr(value, "labels", None) is not None:  # a labelled vector: a dict, in the labels' order
        return {label: to_python(v) for label, v in zip(value.labels, value.tolist(), strict=True)}
    if isinstance(value, array):
        return [to_python(v) for v in value.tolist()]
    if isinstance(value, (list, LazyGroups)):
        return [to_python(v) for v in value]
    if isinstance(value, Record):
        return {k: to_python(v) for k, v in value.fields.items()}
    if isinstance(value, WithPair):
        return (to_python(value.left), to_python(value.right))
    if isinstance(value, Inl):
        return {"inl": to_python(value.value)}
    if isinstance(value, Inr):
        return {"inr": to_python(value.value)}
    return value
