"""Shared helpers: one seeded release through `fuzzpy run`'s own path
(`execute`) on a chosen engine, and a Spark session started once."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.run import Refusal, RunRequest, execute

HAVE_SPARK = importlib.util.find_spec("pyspark") is not None


@dataclass(frozen=True)
class Ending:
    """A run's end: the released value's exact repr, or the failure's codes."""

    kind: str
    detail: str
    warnings: tuple[str, ...] = ()


def _warnings_of_the_release(warnings: list[str]) -> Callable[[str], None]:
    """What a run warns of its release: not the note of a first run's
    registration (its dataset's recorded types, issue 31 F1), which every
    run here makes on its fresh ledger."""
    def warn(message: str) -> None:
        if not message.startswith("note: registered "):
            warnings.append(message)

    return warn


def release(program: str | Path, definition: str, data: str | Path, engine: str, seed: int = 7,
            hashed_memory: bool = False, budget: str = "1e9,0.5", declared: dict[str, str] | None = None) -> Ending:
    """A seeded release of `definition` on `data`. `hashed_memory`: the
    in-memory interpreter subsamples by the engines' keyed-hash rule, so its
    releases can equal theirs. `declared`: the dataset is registered first by
    its owner with these column types (`dataset register --type`)."""
    import fuzzpy.engines as engines
    from fuzzpy.engines.engine import MemoryEngine
    from fuzzpy.engines.subsample import hashed_subsample_interpreter

    class HashedMemory(MemoryEngine):
        def interpreter(self, program, source, warn, checked=None):  # type: ignore[no-untyped-def]
            return hashed_subsample_interpreter(program, source, warn, checked)

    warnings: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        ledger = str(Path(tmp) / "ledger.sqlite")
        if declared is not None:
            from fuzzpy.cli import main

            types = [a for column, kind in declared.items() for a in ("--type", f"{column}={kind}")]
            assert main(["dataset", "register", "declared", str(data), "--budget", budget, "--ledger", ledger,
                         *types]) == 0
        request = RunRequest(str(program), definition, data={"db": str(data)},
                             budget=budget if declared is None else None, ledger=ledger, seed=seed, engine=engine)
        original = engines.engine_for
        if hashed_memory and engine == "memory":
            engines.engine_for = lambda *a, **k: HashedMemory()  # type: ignore[assignment]
        try:
            value = execute(request, warn=_warnings_of_the_release(warnings)).value
        except Refusal as refusal:
            return Ending("refused", ",".join(d.code for d in refusal.diagnostics))
        except FuzzError as error:
            return Ending("failed", ",".join(d.code for d in error.diagnostics))
        except Exception as error:  # noqa: BLE001 -- a crash (a bug, in memory too) must be the same
            return Ending("crashed", type(error).__name__)
        finally:
            engines.engine_for = original
    return Ending("released", repr(value), tuple(warnings))


@pytest.fixture(scope="session")
def spark():
    if not HAVE_SPARK:
        pytest.skip("pyspark is not installed (the [spark] extra)")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java: no `java` on PATH and no JAVA_HOME")
    from fuzzpy.engines.spark import session

    return session()


def release_with_queries(monkeypatch, program: str | Path, definition: str,  # type: ignore[no-untyped-def]
                         data: str | Path) -> tuple[Ending, list[str]]:
    """The release on DuckDB, and the text of every query it ran after the scan's audit."""
    from fuzzpy.engines.execute import Executor

    seen: list[str] = []
    original = Executor._query

    def recorded(self, sql: str, what: str, meanwhile=None):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return original(self, sql, what, meanwhile)

    monkeypatch.setattr(Executor, "_query", recorded)
    ending = release(program, definition, data, "duckdb")
    monkeypatch.setattr(Executor, "_query", original)
    return ending, seen
