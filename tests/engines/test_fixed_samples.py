"""`choose[m]` and `bootstrap[m]` on the query engines: the relation's rows
are read into the in-memory interpreter, which draws the sample exactly, so
a seeded run releases the same value on every engine (and says, once, that
the sample is drawn in Python)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzpy.api import loads

SOURCE = """
def picked(db : bag num) : fuzzy num = choose[7] (fun b -> laplace[1] (sum[-1, 1] b)) db;
def drawn(db : bag num) : fuzzy num =
  bootstrap[9] (fun b -> laplace[1] (sum[-1, 1] (filter (fun x -> x > 0) b))) db;
"""


@pytest.mark.parametrize("definition", ["picked", "drawn"])
def test_duckdb_releases_what_memory_releases(tmp_path: Path, definition: str) -> None:
    data = tmp_path / "rows.csv"
    data.write_text("v\n" + "".join(f"{(i % 5 - 2) / 2}\n" for i in range(40)), encoding="utf-8")
    program = loads(SOURCE)
    warnings: list[str] = []
    values = [
        program.run(definition, {"db": str(data)}, seed=11, budget="100", ledger=str(tmp_path / f"{engine}.db"),
                    engine=engine, on_warning=warnings.append).value
        for engine in ("memory", "duckdb")
    ]
    assert values[0] == values[1]
    name = "choose" if definition == "picked" else "bootstrap"
    assert any(f"`{name}` cannot run in duckdb" in w for w in warnings)


def test_sample_events_round_trip_through_the_ledger_codec() -> None:
    from fractions import Fraction

    from fuzzpy.accounting.events import Gaussian, Repeat, Sample
    from fuzzpy.ledger.event_codec import events_from_json, events_to_json

    events = (Repeat(3, (Sample(True, 5, False, (Sample(False, 2, True, (Gaussian(Fraction(1), Fraction(3, 2)),)),)),)),)
    assert events_from_json(events_to_json(events)) == events
