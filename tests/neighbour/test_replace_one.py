"""Seeded runs on neighbouring datasets under each relation, for the
fixed-size samplers (issue 28).

Replace-one pairs (same rows, one value changed at one position) with the
same seed: `choose[m]` draws the same positions on both (its draws depend
on n and m only), so the batches differ by the replaced row when it is
drawn, else not at all. A release is then within the replace-one
sensitivity of the noised query (2 for `sum[-1, 1]`, times the noise
grid's slack), and identical when the row is not drawn; `bootstrap[m]`
moves by 2 per draw of the row. Add/remove pairs (the harness's
catalogue) under the same seed only have to end the same way: their sizes
differ, so no coupling by seed exists (docs/semantics.md).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.language import types as T

from .compare import SLACK, Claim, judge, normalise
from .datasets import Schema, catalogue, write_csv
from .runner import check_text, run_file

SOURCE = """
def batch(db : bag num) : fuzzy num = choose[4] (fun b -> laplace[1] (sum[-1, 1] b)) db;
def boot(db : bag num) : fuzzy num = bootstrap[3] (fun b -> laplace[1] (sum[-1, 1] b)) db;
def vector(db : bag num) : fuzzy (vec[2] num) =
  choose[5] (fun b -> gauss[2] (vsum[1] (map (fun x -> [clip[-1, 1] x, 1]) b))) db;
"""

SCHEMA = Schema.of(T.TBag(T.NUM))


def _replaced(rows: list[float], at: int, value: float) -> tuple[tuple[tuple[float], ...], tuple[tuple[float], ...]]:
    changed = list(rows)
    changed[at] = value
    return tuple((r,) for r in rows), tuple((r,) for r in changed)


def _value(outcome: object, ty: T.Type) -> object:
    assert outcome.kind == "released", outcome.describe()  # type: ignore[attr-defined]
    return normalise(outcome.value, ty)  # type: ignore[attr-defined]


@pytest.mark.parametrize("definition", ["batch", "boot", "vector"])
def test_replace_one_pairs_move_by_the_replaced_row_only(tmp_path: Path, definition: str) -> None:
    checked = check_text(SOURCE).program
    assert checked is not None
    ty = checked.definitions[definition].result.inner
    rows = [(-1.0) ** i * (i % 3) / 2 for i in range(12)]
    bound = {"batch": Fraction(2), "boot": Fraction(6), "vector": Fraction(2)}[definition] * (1 + SLACK)
    identical = moved = 0
    for seed in range(12):
        for at, value in ((0, 1.0), (5, -1.0), (11, 0.75)):
            first_rows, second_rows = _replaced(rows, at, value)
            a = run_file(checked, definition, write_csv(SCHEMA, first_rows, tmp_path), seed)
            b = run_file(checked, definition, write_csv(SCHEMA, second_rows, tmp_path), seed)
            x, y = _value(a, ty), _value(b, ty)
            if x == y:
                identical += 1
                continue
            moved += 1
            xs, ys = (x, y) if isinstance(x, (list, tuple)) else ((x,), (y,))
            if definition == "vector":  # L2 distance of the noised sum
                gap = sum((Fraction(p) - Fraction(q)) ** 2 for p, q in zip(xs, ys, strict=True))
                assert gap <= bound**2
            else:
                assert abs(Fraction(xs[0]) - Fraction(ys[0])) <= bound
    assert identical > 0 and moved > 0  # the row is drawn on some seeds only


@pytest.mark.parametrize("definition", ["batch", "boot"])
def test_add_remove_pairs_end_alike(tmp_path: Path, definition: str) -> None:
    checked = check_text(SOURCE).program
    assert checked is not None
    claim = Claim.of(checked, definition)
    for pair in catalogue(SCHEMA, many=200)[:12]:
        first = run_file(checked, definition, write_csv(SCHEMA, pair.smaller, tmp_path), 7)
        second = run_file(checked, definition, write_csv(SCHEMA, pair.larger, tmp_path), 7)
        assert judge(claim, "unsynced", first, second) is None, pair.describe()
