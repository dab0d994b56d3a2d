"""A definition checked at each call's numbers is not judged, nor shown, at
the generic pass's placeholder (review s30c): `shuffle[n]` over `(n : nat)`
was refused "at least 2, got 1" with no call giving 1, and
`(f : num -[n]-> num)` printed as `num -o num` (the placeholder n = 1), its
reason naming a vector's length."""

from __future__ import annotations

import pytest

import fuzzpy

SHUFFLE = "def sh (n : nat) (db : bag bool) : fuzzy (bag bool) = shuffle[n] (fun r -> rr[1] r) db;\n"


def test_shuffle_over_a_nat_parameter_is_checked_at_each_call() -> None:
    report = fuzzpy.loads(SHUFFLE).check()  # was FZ202 "got 1": the placeholder, given by no call
    assert "checked at each call" in str(report) and "`n` is the least number of reports" in str(report)
    with pytest.raises(fuzzpy.FuzzError) as refused:  # a call that gives 1 is refused there
        fuzzpy.loads(SHUFFLE + "def one (db : bag bool) : fuzzy (bag bool) = sh 1 db;").check()
    (diagnostic,) = [d for d in refused.value.diagnostics if d.code == "FZ202"]
    assert "at n = 1" in diagnostic.message and diagnostic.span.line == 2


def test_a_function_sensitivity_over_a_nat_is_shown_as_written() -> None:
    text = str(fuzzpy.loads("def ap (k : nat) (f : num -[k]-> num) (x : num) : num = f x;\n"
                            "def v (y : num) : num = ap 4 (fun z -> 4 * z) y;").check())
    line = next(line for line in text.splitlines() if line.startswith("ap "))
    assert "(f :[at each call] num -[k]-> num)" in line and "num -o num" not in line
    assert "a function's sensitivity" in line and "vector" not in line
