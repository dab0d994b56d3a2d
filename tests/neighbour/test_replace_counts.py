"""Seeded runs on replace-one pairs for the queries charged their own
replace-one sensitivity (issue 28): a filtered count and a clamped sum move
by at most 1 when one row's value changes, at the top level and inside
`choose[m]` (whose draws depend on n and m only, so the same seed draws the
same positions on both datasets); the size of the bag itself does not move
at all. The figures `check` reports are that move times eps."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.language import types as T

from .compare import SLACK, normalise
from .datasets import Schema, write_csv
from .runner import check_text, run_file

SOURCE = """
def count(db : bag num) : fuzzy num = laplace[1] (size (filter (fun x -> x > 0) db));
def clamped(db : bag num) : fuzzy num = laplace[1] (sum[0, 1] db);
def rows(db : bag num) : fuzzy num = laplace[1] (size db);
def batch(db : bag num) : fuzzy num = choose[4] (fun b -> laplace[1] (size (filter (fun x -> x > 0) b))) db;
"""

SCHEMA = Schema.of(T.TBag(T.NUM))
BOUND = {"count": Fraction(1), "clamped": Fraction(1), "rows": Fraction(0), "batch": Fraction(1)}


@pytest.mark.parametrize("definition", [
    "count", "clamped", "rows", pytest.param("batch", marks=pytest.mark.slow),  # choose runs take ~2 s
])
def test_replace_one_pairs_move_by_the_charged_sensitivity(tmp_path: Path, definition: str) -> None:
    checked = check_text(SOURCE).program
    assert checked is not None
    ty = checked.definitions[definition].result.inner
    rows = [(-1.0) ** i * (i % 3) / 2 for i in range(10)]
    bound = BOUND[definition] * (1 + SLACK)
    for seed in range(4):
        for at, value in ((0, 1.0), (4, -1.0), (7, 0.75)):
            changed = list(rows)
            changed[at] = value
            a = run_file(checked, definition, write_csv(SCHEMA, tuple((r,) for r in rows), tmp_path), seed)
            b = run_file(checked, definition, write_csv(SCHEMA, tuple((r,) for r in changed), tmp_path), seed)
            assert a.kind == "released" and b.kind == "released"
            x, y = normalise(a.value, ty), normalise(b.value, ty)
            assert abs(Fraction(x) - Fraction(y)) <= bound, (definition, seed, at, x, y)
