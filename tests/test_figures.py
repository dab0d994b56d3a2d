"""The one formatting module for privacy figures (issue 25, item 1): text
rounded toward safety, with today's digit counts and no needless digits."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuzzpy.language.figures import ledger_text, text_down, text_exact, text_up

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
fractions = st.fractions(max_denominator=10**30) | st.builds(
    lambda n, d, e: Fraction(n, d) * Fraction(10) ** e,
    st.integers(-(10**40), 10**40),
    st.integers(1, 10**40),
    st.integers(-400, 400),
)
digit_counts = st.integers(1, 17)


def _significant(text: str) -> int:
    mantissa = text.lstrip("-~").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


@settings(max_examples=600)
@given(finite_floats, digit_counts)
@example(2.254084650, 6)  # issue 25: `budget --gaussian 2 --delta 1e-6` printed 2.25408
@example(1.985354, 6)  # `run`'s eps=~1.98535
@example(5e-324, 3)
@example(1.7976931348623157e308, 6)
def test_a_float_reads_back_on_the_safe_side(x: float, digits: int) -> None:
    up, down = text_up(x, digits), text_down(x, digits)
    assert float(up) >= x
    assert float(down) <= x
    assert _significant(up) <= digits and _significant(down) <= digits
    # never further than one unit in the last printed digit from the value
    assert abs(Fraction(up) - Fraction(x)) <= _unit(up) and abs(Fraction(down) - Fraction(x)) <= _unit(down)


@settings(max_examples=600)
@given(fractions, st.integers(1, 12))
@example(Fraction(3, 10), 6)
@example(Fraction(1, 3), 6)
@example(Fraction(10) ** 400 / 3, 6)
def test_a_fraction_is_compared_exactly(x: Fraction, digits: int) -> None:
    up, down = text_up(x, digits), text_down(x, digits)
    assert Fraction(up) >= x >= Fraction(down)
    # as a float too, unless the text is the exact decimal (float("0.3") < 3/10)
    if abs(x) < Fraction(10) ** 300:
        assert float(up) >= x or Fraction(up) == x
    assert _significant(up) <= digits and _significant(down) <= digits


@given(finite_floats, st.integers(1, 17))
def test_no_needless_digits(x: float, digits: int) -> None:
    """A float whose nearest rounding is already safe prints as `format(x,
    ".Ng")` did, and its shortest repr when that is short enough."""
    nearest = f"{x:.{digits}g}"
    up, down = text_up(x, digits), text_down(x, digits)
    if x == 0:  # -0.0 prints as 0 (the same number; "-0" reads as a sign that means nothing)
        assert up == down == "0"
        return
    if float(nearest) >= x:  # the same number, or a shorter text of x itself
        assert up == nearest or (float(up) == x and _significant(up) < _significant(nearest))
    if float(nearest) <= x:
        assert down == nearest or (float(down) == x and _significant(down) < _significant(nearest))
    assert float(text_exact(x)) == x
    assert _significant(text_exact(x).rstrip("0") if "." in text_exact(x) else text_exact(x)) <= 17


@given(fractions)
def test_ledger_text(x: Fraction) -> None:
    up, down = ledger_text(x), ledger_text(x, up=False)
    if not up.startswith("~"):
        assert Fraction(up) == x == Fraction(down)
    assert Fraction(up.lstrip("~")) >= x >= Fraction(down.lstrip("~"))


def test_known_texts() -> None:
    assert text_up(2.254084650) == "2.25409" and text_down(2.254084650) == "2.25408"
    assert text_up(0.1) == "0.1" and text_up(Fraction(1, 10)) == "0.1"
    assert text_up(1e-6) == "1e-06" and text_up(3.0) == "3" and text_up(1e300) == "1e+300"
    assert text_up(999999.5) == "1e+06" and text_down(999999.5) == "999999"
    assert text_up(math.inf) == "inf" and text_up(Fraction(0)) == "0"
    assert ledger_text(Fraction(1, 3)) == "~0.333334" and ledger_text(Fraction(1, 3), up=False) == "~0.333333"
    assert ledger_text(Fraction(123456789)) == "123456789"


def _unit(text: str) -> Fraction:
    """One unit in the last digit of ``text``."""
    body = text.lstrip("-")
    mantissa, _, exponent = body.partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return Fraction(10) ** (int(exponent or 0) - decimals)
