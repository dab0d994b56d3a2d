"""Privacy figures as text: every printed cost rounded toward safety.

A number a person reads is a claim. An epsilon, delta or rho spent is a
claim that the release costs *at most* that much, so its text is rounded
**up**; so is a noise scale fuzzpy recommends (more noise is never less
private: adding independent noise is post-processing, Dwork & Roth 2014,
Prop. 2.1). What is *left* of a budget is a claim that spending that much
more stays within it, so it is rounded **down**. The same holds for the
floats a user reads (JSON numbers, the Python API's attributes): a cost is
the least double >= the exact value, what remains the greatest double <= it
(`double_up`, `double_down`, `json_figure`: the one place that converts).

One rule for what "at least" means, by the type of the value:

* a float is compared as a float: the text's nearest double is >= the value
  (``float(text_up(x)) >= x``); the text of a float that has a short repr
  is that repr (``0.1`` for the double nearest 0.1, which is the number the
  text denotes when read back);
* a Fraction is compared exactly: the decimal the text denotes is >= it
  (``Fraction(text_up(x)) >= x``); an exact short decimal (3/10) prints as
  itself, ``0.3``.

The texts use ``format(x, ".Ng")``'s layout (``1e-06``, ``2.25409``,
``1.5e+07``) with the digit counts fuzzpy has always used, and no needless
digits: trailing zeros are dropped and a value with a shorter exact text
gets that text.
"""

from __future__ import annotations

import math
import sys
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

Number = float | Fraction | int

#: the neighbour relation every accounting figure is stated for
#: (language design section 4: databases are bags; neighbours differ by adding
#: or removing one row, distance 1 in the bag metric)
NEIGHBOURS = "add-remove-one"
NEIGHBOURS_TEXT = "neighbours: datasets differing by adding or removing one row (the bag metric)"

_EXACT_DIGITS = 12  # an exact decimal up to this long is shown as it is (ledger)


def text_up(value: Number, digits: int = 6) -> str:
    """The shortest text of at most ``digits`` significant digits whose value
    is at least ``value`` (see the module's note on floats and Fractions)."""
    return _text(value, digits, up=True)


def text_down(value: Number, digits: int = 6) -> str:
    """The shortest text of at most ``digits`` significant digits whose value
    is at most ``value``."""
    return _text(value, digits, up=False)


def text_exact(value: float) -> str:
    """A number as it was typed: the shortest text that reads back as the
    same double (an input echoed, e.g. ``sigma=2`` in a label)."""
    special = _special(value)
    if special is not None:
        return special
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if float(text) == value:
            return text
    return repr(value)  # unreachable: 17 digits always read back


def ledger_text(value: Fraction, up: bool = True) -> str:
    """The ledger's form: an exact decimal when the value has a short one
    (``0.1``, ``1e-06``), else ``~`` and 6 digits rounded the safe way."""
    if value == 0:
        return "0"
    exact = _rounded(value, _EXACT_DIGITS, up)
    if Fraction(exact) == value:
        return _render(exact, _EXACT_DIGITS)
    return "~" + _text(value, 6, up)


def _text(value: Number, digits: int, up: bool) -> str:
    if digits < 1:
        raise ValueError(f"digits must be at least 1, not {digits}")
    if isinstance(value, float):
        special = _special(value)
        if special is not None:
            return special
        short = _short_repr(value, digits)
        if short is not None:
            return short
    elif isinstance(value, int):
        value = Fraction(value)
    if value == 0:
        return "0"
    rounded = _rounded(value, digits, up)
    if isinstance(value, Fraction) and Fraction(rounded) != value:
        # an inexact text is also safe read as a double: round the double on
        # the safe side of the value instead (float("2e-319") may fall below
        # a Fraction just under 2e-319)
        rounded = _rounded(_double_beyond(value, up), digits, up)
    return _render(rounded, digits)


def double_up(value: Fraction | float | int) -> float:
    """The least double >= ``value`` (a cost, spent: never shown below the
    truth); ``inf`` beyond the largest double. ``float()`` rounds to nearest,
    which is below the exact value half the time (1/3, 7/10)."""
    return _double_on_side(value, up=True)


def double_down(value: Fraction | float | int) -> float:
    """The greatest double <= ``value`` (what remains of a budget, a limit)."""
    return _double_on_side(value, up=False)


def json_figure(value: Fraction | float | int, up: bool = True) -> float | str:
    """A figure as a JSON number on its safe side (`double_up` or
    `double_down`); ``"inf"`` (language design, section 7) beyond the doubles."""
    rounded = _double_on_side(value, up)
    if math.isinf(rounded):
        return "inf" if rounded > 0 else "-inf"
    return rounded


def _double_on_side(value: Fraction | float | int, up: bool) -> float:
    if isinstance(value, float):
        return value  # a double already: exactly itself
    exact = Fraction(value)
    try:
        nearest = float(exact)
    except OverflowError:  # beyond the largest double: infinity on the far side, the largest on the near
        largest = sys.float_info.max
        if exact > 0:
            return math.inf if up else largest
        return -largest if up else -math.inf
    if up and Fraction(nearest) < exact:
        return math.nextafter(nearest, math.inf)
    if not up and Fraction(nearest) > exact:
        return math.nextafter(nearest, -math.inf)
    return nearest


def _double_beyond(value: Fraction, up: bool) -> Fraction:
    """The exact value of the double nearest ``value`` on its safe side
    (``value`` itself beyond the double range)."""
    try:
        nearest = float(value)
    except OverflowError:
        return value
    if math.isinf(nearest):
        return value
    if up and Fraction(nearest) < value:
        nearest = math.nextafter(nearest, math.inf)
    elif not up and Fraction(nearest) > value:
        nearest = math.nextafter(nearest, -math.inf)
    return Fraction(nearest)


def _special(value: float) -> str | None:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    return None


def _short_repr(value: float, digits: int) -> str | None:
    """The float's own shortest text when it has at most ``digits`` digits."""
    for count in range(1, digits + 1):
        if float(f"{value:.{count}g}") == value:
            # the same digits in the layout of ``digits`` (10, not 1e+01)
            return f"{value:.{digits}g}"
    return None


def _rounded(value: float | Fraction, digits: int, up: bool) -> Decimal:
    """``value`` (exact) rounded to ``digits`` significant digits, toward
    +infinity when ``up``, else toward -infinity (Decimal's division and
    unary plus round correctly in the context's mode)."""
    with localcontext() as context:
        context.prec = digits
        context.rounding = ROUND_CEILING if up else ROUND_FLOOR
        context.Emax, context.Emin = 10**9, -(10**9)
        if isinstance(value, float):
            return +Decimal(value)
        return Decimal(value.numerator) / Decimal(value.denominator)


def _render(value: Decimal, precision: int) -> str:
    """``format(x, ".{precision}g")``'s layout for a Decimal of at most
    ``precision`` digits: fixed notation for exponents -4 .. precision-1,
    else d.ddde+XX; trailing zeros dropped."""
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    if digits == "0":
        return "0"
    exponent += len(digit_tuple) - len(digits)  # the zeros dropped
    adjusted = exponent + len(digits) - 1
    minus = "-" if sign else ""
    if -4 <= adjusted < precision:
        if exponent >= 0:
            return minus + digits + "0" * exponent
        point = len(digits) + exponent
        if point > 0:
            return f"{minus}{digits[:point]}.{digits[point:]}"
        return f"{minus}0.{'0' * -point}{digits}"
    mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{minus}{mantissa}e{'-' if adjusted < 0 else '+'}{abs(adjusted):02d}"
