"""Judge two runs on neighbouring datasets against what the checker derived.

* Both runs must end the same way: both release, or both fail with the same
  diagnostics. A crash (a Python exception) or a hang is never right.
* A deterministic definition that the checker reports s-sensitive in its
  database must give results at distance at most s in the result type's
  metric (language design, section 2), exactly: distances are computed with
  rationals from the doubles (or exact numbers) the run returned.
* A `fuzzy` definition is run with the same seed on both sides, so its noise
  draws are the same and only the noised query moves. What may move is
  stated by the program's `Model`:
    - "laplace": the release is a 1-Lipschitz (L1) post-processing of
      Laplace draws: it may move by the sum of the sensitivities of the
      Laplace events the checker charged, times (1 + SLACK);
    - "gauss": the same for Gaussian draws (L2 sensitivities);
    - "geometric", "dgauss": the integer releases (issue 29): the same noise
      integer added to the exact integer query on both sides, so the releases
      move by at most the sum of the sensitivities of the `Geometric` /
      `DiscreteGaussian` events (no grid: the slack is not needed, and harmless);
    - "staircase": `staircase[eps]` draws its noise N on its own grid g
      independently of the query, so with one seed both sides add the same
      g N to round(x / g) g: the releases move by at most the sum of the
      `Staircase` events' sensitivities plus one grid unit (2^-33 or less),
      inside the slack;
    - "scale:B": the release is a 1-Lipschitz post-processing of values plus
      Laplace noise of scale B (a verified mechanism's `x + lap(B)`): a move
      of d costs d / B, so it may move by the pure epsilon charged times B,
      times (1 + SLACK);
    - "exact": the release carries no noise that depends on the data's
      neighbour (a mechanism that returns `len(q)`): it must be identical;
    - "outcome": only the endings are compared (a positive-cost exponential
      mechanism, a verified mechanism, post-processing that is not 1-Lipschitz);
    - "unsynced": the noise itself is drawn data-dependently (Poisson
      subsampling draws one coin per row), so not even a zero-cost release is
      comparable seed for seed; only the endings are compared.
  Whatever the model (except "unsynced"), a release the checker charged
  nothing for must be identical on both sides.

SLACK: `fuzzpy/runtime/noise.py` releases x at scale b as
g * (round(x / g) + Z) with t = ceil(b (1 + SLACK) / g) grid units of noise,
and states that a query whose computed value moves by up to s (1 + 2^-9),
plus the rounding d g <= b 2^-32 <= s 2^-9 (it refuses eps s < 2^-23), is
still (s / b)-DP. So a release may move by at most s (1 + 2^-8) and no more:
a move of k grid units costs k / t, which is within s / b exactly when
k g <= s (1 + SLACK) (up to t's rounding up, which only helps). The
Gaussian's statement is the same with L2 distances.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from fuzzpy.accounting import events as E
from fuzzpy.language import types as T

from .runner import Outcome

SLACK = Fraction(1, 256)
MODELS = ("deterministic", "laplace", "gauss", "geometric", "dgauss", "staircase", "scale:B", "exact", "outcome", "unsynced")
#: the additive-noise models and the event whose sensitivities bound the gap
#: between two runs with one seed (the same noise drawn on both neighbours)
NOISE_EVENTS = {"laplace": E.Laplace, "gauss": E.Gaussian, "geometric": E.Geometric, "dgauss": E.DiscreteGaussian,
                "staircase": E.Staircase}

Infinite = None  # a distance or bound of infinity


@dataclass(frozen=True)
class Violation:
    """What went wrong on one neighbour pair (a sentence for the report)."""

    kind: str  # "ending", "crash", "distance", "non-finite", "ill-typed", "identical"
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


class IllTyped(Exception):
    """The run returned a value that is not of the type the checker gave it."""


# ---------------------------------------------------------------- values


@dataclass(frozen=True)
class NonFinite:
    text: str


def number(value: Any) -> Fraction | NonFinite:
    """An exact rational for a released number: int, float, Fraction,
    Decimal, a numpy scalar, or anything with an exact numerator and
    denominator (an exact runtime may return any of these)."""
    if type(value).__name__ in ("bool", "bool_"):
        raise IllTyped(f"a boolean {value!r} where a number was expected")
    if hasattr(value, "item") and not hasattr(value, "__len__"):  # a numpy scalar
        value = value.item()
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, (float, Decimal)):
        return Fraction(value) if math.isfinite(value) else NonFinite(str(value))
    if hasattr(value, "numerator") and hasattr(value, "denominator"):
        return Fraction(int(value.numerator), int(value.denominator))
    raise IllTyped(f"{value!r} where a number was expected")


def _items(value: Any) -> list[Any]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise IllTyped(f"{value!r} where a sequence was expected")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, Mapping):  # a labelled vector in JSON: its entries in the labels' order
        value = list(value.values())
    return list(value)


def _fields(value: Any) -> Mapping[str, Any]:
    fields = getattr(value, "fields", value)
    if not isinstance(fields, Mapping):
        raise IllTyped(f"{value!r} where a record was expected")
    return fields


def _with_parts(value: Any) -> tuple[Any, Any]:
    if hasattr(value, "left") and hasattr(value, "right"):
        return value.left, value.right
    parts = _items(value)
    if len(parts) != 2:
        raise IllTyped(f"{value!r} where a with-pair was expected")
    return parts[0], parts[1]


def _side(value: Any) -> tuple[str, Any]:
    name = type(value).__name__.lower()
    if name in ("inl", "inr") and hasattr(value, "value"):
        return name, value.value
    if isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in ("inl", "inr"):
        key = next(iter(value))
        return key, value[key]
    raise IllTyped(f"{value!r} where a sum value was expected")


def normalise(value: Any, ty: T.Type) -> Any:
    """The value in a plain form: numbers as Fractions (or NonFinite), tuples
    for tuples and vectors, dicts for records, ("inl", v) for sums."""
    if isinstance(ty, (T.TNum, T.TInt)):
        n = number(value)
        if isinstance(ty, T.TInt) and isinstance(n, Fraction) and n.denominator != 1:
            raise IllTyped(f"{value!r} where an int was expected")
        return n
    if isinstance(ty, T.TBool):
        if type(value).__name__ not in ("bool", "bool_"):
            raise IllTyped(f"{value!r} where a bool was expected")
        return bool(value)
    if isinstance(ty, T.TString):
        if not isinstance(value, str):
            raise IllTyped(f"{value!r} where a string was expected")
        return value
    if isinstance(ty, T.TUnit):
        return None
    if isinstance(ty, T.TTuple):
        items = _items(value)
        if len(items) != len(ty.items):
            raise IllTyped(f"{value!r} where a {len(ty.items)}-tuple was expected")
        return tuple(normalise(v, t) for v, t in zip(items, ty.items, strict=True))
    if isinstance(ty, T.TRecord):
        fields = _fields(value)
        if set(fields) != {name for name, _ in ty.fields}:
            raise IllTyped(f"record fields {sorted(fields)} where {ty} was expected")
        return {name: normalise(fields[name], t) for name, t in ty.fields}
    if isinstance(ty, T.TWith):
        left, right = _with_parts(value)
        return (normalise(left, ty.left), normalise(right, ty.right))
    if isinstance(ty, T.TSum):
        side, inner = _side(value)
        return (side, normalise(inner, ty.left if side == "inl" else ty.right))
    if isinstance(ty, (T.TList, T.TVec)):
        return tuple(normalise(v, ty.elem) for v in _items(value))
    if isinstance(ty, T.TBag):
        rows = value.rows() if hasattr(value, "rows") else _items(value)
        return Counter(_hashable(normalise(row, ty.elem)) for row in rows)
    raise IllTyped(f"a released value of type {ty} cannot be compared")


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, tuple):
        return tuple(_hashable(v) for v in value)
    return value


def non_finite(value: Any) -> bool:
    if isinstance(value, NonFinite):
        return True
    if isinstance(value, tuple):
        return any(non_finite(v) for v in value)
    if isinstance(value, dict):
        return any(non_finite(v) for v in value.values())
    return False


# ---------------------------------------------------------------- metrics


def _add(a: Fraction | None, b: Fraction | None) -> Fraction | None:
    return None if a is None or b is None else a + b


def _max(a: Fraction | None, b: Fraction | None) -> Fraction | None:
    return None if a is None or b is None else max(a, b)


def sqrt_below(x: Fraction, bits: int = 200) -> Fraction:
    """A rational at most sqrt(x), within 2^-bits of it relatively (so a
    distance computed with it never overstates the true one)."""
    scale = 1 << (2 * bits)
    return Fraction(math.isqrt(x.numerator * scale // x.denominator), 1 << bits)


def distance(ty: T.Type, a: Any, b: Any) -> Fraction | None:
    """The type's metric (language design, section 2) between two normalised
    values; None is infinity. L2 distances are rounded down (never overstated)."""
    if isinstance(ty, (T.TNum, T.TInt)):
        return abs(a - b)
    if isinstance(ty, (T.TBool, T.TString, T.TUnit)):
        return Fraction(0) if a == b else Infinite
    if isinstance(ty, (T.TTuple, T.TRecord)):
        parts = ty.items if isinstance(ty, T.TTuple) else tuple(t for _, t in ty.fields)
        keys = range(len(parts)) if isinstance(ty, T.TTuple) else [n for n, _ in ty.fields]
        total: Fraction | None = Fraction(0)
        for key, part in zip(keys, parts, strict=True):
            total = _add(total, distance(part, a[key], b[key]))
        return total
    if isinstance(ty, T.TWith):
        return _max(distance(ty.left, a[0], b[0]), distance(ty.right, a[1], b[1]))
    if isinstance(ty, T.TSum):
        if a[0] != b[0]:
            return Infinite
        return distance(ty.left if a[0] == "inl" else ty.right, a[1], b[1])
    if isinstance(ty, T.TList):
        if len(a) != len(b):
            return Infinite
        total = Fraction(0)
        for x, y in zip(a, b, strict=True):
            total = _add(total, distance(ty.elem, x, y))
        return total
    if isinstance(ty, T.TBag):  # the size of the symmetric difference
        return Fraction(sum(((a - b) + (b - a)).values()))
    if isinstance(ty, T.TVec):
        if len(a) != len(b):
            return Infinite
        gaps = [abs(x - y) for x, y in zip(a, b, strict=True)]
        if ty.norm == "1":
            return sum(gaps, Fraction(0))
        if ty.norm == "inf":
            return max(gaps, default=Fraction(0))
        return sqrt_below(sum((g * g for g in gaps), Fraction(0)))
    raise IllTyped(f"no metric for {ty}")


# ---------------------------------------------------------------- what the checker derived


def noise_sensitivity(events: Sequence[Any], kind: type) -> Fraction | None:
    """The sum of the sensitivities of the `kind` (Laplace or Gaussian) events,
    repeated and grouped as the events say; None when another event with a
    positive cost is among them (the model does not fit the program)."""
    total = Fraction(0)
    for event in events:
        if isinstance(event, kind):
            total += event.sensitivity
        elif isinstance(event, E.Repeat):
            inner = noise_sensitivity(event.body, kind)
            if inner is None:
                return None
            total += event.count * inner
        elif isinstance(event, E.Group):
            inner = noise_sensitivity(event.body, kind)
            if inner is None:
                return None
            total += Fraction(math.ceil(event.size)) * inner
        elif not costs_nothing((event,)):
            return None
    return total


def pure_epsilon(events: Sequence[Any]) -> Fraction | None:
    """The pure epsilon the events charge by basic composition (None when
    one of them is approximate or subsampled)."""
    total = Fraction(0)
    for event in events:
        if isinstance(event, (E.Laplace, E.Geometric, E.Staircase)):
            total += event.epsilon
        elif isinstance(event, (E.ExpMech, E.Verified)):
            if getattr(event, "delta", 0) != 0:
                return None
            total += event.epsilon
        elif isinstance(event, (E.Repeat, E.Group)):
            inner = pure_epsilon(event.body)
            if inner is None:
                return None
            total += (event.count if isinstance(event, E.Repeat) else math.ceil(event.size)) * inner
        elif isinstance(event, E.Subsample):
            inner = pure_epsilon(event.body)
            if inner is None:
                return None
            # amplification by Poisson subsampling: log(1 + q (e^eps - 1))
            # (language notes), in floats rounded up by a relative 1e-12
            amplified = math.log1p(float(event.rate) * math.expm1(min(float(inner), 700.0)))
            total += Fraction(amplified * (1 + 1e-12)) if float(inner) <= 700 else inner
        elif not costs_nothing((event,)):
            return None
    return total


def costs_nothing(events: Sequence[Any]) -> bool:
    """Whether the events charge nothing at all (the release must not depend
    on the database)."""
    for event in events:
        if isinstance(event, (E.Laplace, E.Gaussian, E.Geometric, E.DiscreteGaussian, E.Staircase)):
            if event.sensitivity != 0:
                return False
        elif isinstance(event, E.ExpMech):
            if event.epsilon != 0:
                return False
        elif isinstance(event, E.Verified):
            if event.epsilon != 0 or event.delta != 0:
                return False
        elif isinstance(event, (E.Repeat, E.Subsample, E.Group)):
            if not costs_nothing(event.body):
                return False
        else:
            return False
    return True


@dataclass(frozen=True)
class Claim:
    """What the checker derived for one definition in its database parameter."""

    result: T.Type  # the released type (inside `fuzzy` for a fuzzy definition)
    fuzzy: bool
    sensitivity: Fraction | None  # deterministic: in the result's metric; None = inf
    events: tuple[Any, ...]  # fuzzy: the mechanism events charged

    @staticmethod
    def of(checked: Any, definition: str) -> Claim:
        info = checked.definitions[definition]
        (param,) = info.params
        result = info.result
        if isinstance(result, T.TFuzzy):
            return Claim(result.inner, True, None, tuple(info.privacy.get(param.name, ())))
        sens = param.sensitivity
        return Claim(result, False, None if sens.is_inf else Fraction(sens.value), ())

    def allowed(self, model: str) -> Fraction | None:
        """How far the two releases may be apart under `model` (None: no bound
        to test)."""
        if not self.fuzzy:
            return self.sensitivity
        if model == "unsynced":
            return None
        if model == "exact" or costs_nothing(self.events):
            return Fraction(0)
        if model.startswith("scale:"):
            eps = pure_epsilon(self.events)
            if eps is None:
                raise ValueError(f"the {model} model needs pure events, not {self.events}")
            return eps * Fraction(model.split(":", 1)[1]) * (1 + SLACK)
        if model in NOISE_EVENTS:
            s = noise_sensitivity(self.events, NOISE_EVENTS[model])
            if s is None:
                raise ValueError(f"the {model} model does not fit the events {self.events}")
            return s * (1 + SLACK)
        return None


# ---------------------------------------------------------------- the verdict


def judge(claim: Claim, model: str, first: Outcome, second: Outcome) -> Violation | None:
    """A violation of what the checker claimed, or None. An infinitely
    sensitive deterministic definition claims nothing."""
    if not claim.fuzzy and claim.sensitivity is None:
        return None
    for outcome in (first, second):
        if outcome.kind in ("crashed", "timed out"):
            return Violation("crash", f"a run {outcome.describe()} (the other {_other(outcome, first, second)})")
    if not first.same_ending(second):
        return Violation("ending", f"the neighbours end differently: {first.describe()} / {second.describe()}")
    if first.kind != "released":
        return None
    bound = claim.allowed(model)
    try:
        a, b = normalise(first.value, claim.result), normalise(second.value, claim.result)
    except IllTyped as exc:
        return Violation("ill-typed", f"{exc} (type {claim.result})")
    if non_finite(a) or non_finite(b):
        if bound is None and claim.fuzzy:
            return None
        return Violation("non-finite", f"a non-finite number was computed: {_brief(first.value)} / {_brief(second.value)}")
    if bound is None:
        return None
    gap = distance(claim.result, a, b)
    if gap is None or gap > bound:
        shown = "inf" if gap is None else _show(gap)
        if gap is not None and shown == _show(bound):
            shown = f"{shown} + {float(gap - bound):.3g}"
        kind = "identical" if bound == 0 else "distance"
        return Violation(
            kind,
            f"releases {_brief(first.value)} and {_brief(second.value)} are {shown} apart; "
            f"the checker allows {_show(bound)}",
        )
    return None


def _other(outcome: Outcome, first: Outcome, second: Outcome) -> str:
    other = second if outcome is first else first
    return other.describe()


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:150] + "..."


def _show(x: Fraction) -> str:
    if x.denominator == 1 and abs(x) < 10**17:
        return str(x)
    return f"{float(x):.17g}"
