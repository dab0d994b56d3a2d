"""Engines (memory, DuckDB, Spark): compute a checked definition over a data source.
May import `data`, `ledger`, `runtime` and below; never `release`, `api`, the command line.

* `rows`, `symops`: per-row expressions, with exactly the in-memory per-row
  semantics (docs/semantics.md);
* `trace`: the interpreter with bags held by an engine (functions given to
  bag primitives are traced into expressions);
* `plan`, `execute`, `sql`: relations and exact aggregates, as SQL per dialect;
* `scan`: a bag parameter's rows inside an engine, under the row rules;
* `subsample`: `subsample[q]` as a keyed hash of row ids;
* `duck`, `spark`: the backends; `engine`: what `fuzzpy run` calls.
"""

from __future__ import annotations

from fuzzpy.engines.engine import ENGINES, MemoryEngine, QueryEngine


def engine_for(name: str, warn, progress=None, **options):  # type: ignore[no-untyped-def]
    """The engine `fuzzpy run --engine NAME` uses ("auto": DuckDB)."""
    from fuzzpy.engines.engine import engine_for as make

    return make("duckdb" if name == "auto" else name, warn, progress, **options)


__all__ = ["ENGINES", "MemoryEngine", "QueryEngine", "engine_for"]
