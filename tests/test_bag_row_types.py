"""A bag's rows are stored in columns: numbers, bools, strings, vectors and
lists, in records and tuples. A `map` making rows of another type (`unit`,
a sum, a function) is refused by `check` where it is written (FZ223):
refused at run time instead, the failure came only when the bag had rows,
after the charge, naming the kind of the first row (`Inl` or `Inr`: a bit
of that row) (review s28d, F1)."""

from __future__ import annotations

import pytest

from fuzzpy.checker import check_program
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError

HEAD = "type P = { id : int, score : num, tag : string };\n"


def refusal(body: str) -> tuple[str, int, int, str]:
    with pytest.raises(FuzzError) as info:
        check_program(parse_program(HEAD + body, "<rows>"))
    d = info.value.diagnostics[0]
    return d.code, d.span.line, d.span.col, d.message


@pytest.mark.parametrize(("body", "bad"), [
    ("def f (people : bag P) : fuzzy num =\n  laplace[1] (size (map (fun p -> ()) people));", "unit"),
    ("def f (people : bag P) : fuzzy num =\n"
     "  laplace[1] (size (map (fun p -> { who = p.id, what = if p.score < 0 then inl p.tag else inr p.id }) people));",
     "string + int"),
    ("def f (people : bag P) : fuzzy num =\n"
     "  laplace[2] (size (join[1] (fun l -> fst l) (fun r -> r.id) (map (fun p -> (p.id, ())) people) people));",
     "unit"),
    ("def f (people : bag P) : fuzzy num =\n  laplace[1] (size (map (fun p -> fun (x : num) -> x * p.score) people));",
     "num -> num"),
])
def test_rows_a_bag_cannot_store_are_refused_at_the_map(body: str, bad: str) -> None:
    code, line, col, message = refusal(body)
    assert (code, line) == ("FZ223", 3) and f"cannot hold `{bad}`" in message
    assert col == body.splitlines()[1].index("(fun p") + 1  # at the function given to `map`


def test_storable_rows_are_still_accepted() -> None:
    check_program(parse_program(
        HEAD + "def f (people : bag P) : fuzzy num =\n"
        "  laplace[1] (size (map (fun p -> (p.id, { t = p.tag, hi = p.score > 1, v = [p.score, 1] })) people));",
        "<rows>"))
