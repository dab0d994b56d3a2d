"""Check a program and run one definition on two neighbouring datasets.

Only the public pipeline is used (`fuzzpy.release.pipeline.parse / check / run`, the
loader that `pipeline.run` documents for its bags, and the `fuzzpy` command),
so that refactors of the checker and the runtime do not break the harness.

Every way a run can end is an `Outcome`: a released value, a failure with
fuzzpy's diagnostics, a crash (any other exception: a bug), or a timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.source import Source
from fuzzpy.release import pipeline

from .datasets import Pair, Schema, write_csv

#: One run may take this much CPU time before it counts as a hang (a
#: data-dependent hang is a different outcome too). CPU time, not wall time,
#: so that a loaded machine does not turn slow runs into hangs.
RUN_SECONDS = 30.0


class TimedOut(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in
    the code under test swallows it."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Interrupt the block after `seconds` of CPU time (main thread only;
    elsewhere the block just runs). Cannot interrupt one long C call (a huge
    power): `isolated` handles those."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def ring(signum: int, frame: object) -> None:
        raise TimedOut

    previous = signal.signal(signal.SIGPROF, ring)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@dataclass(frozen=True)
class Outcome:
    """How one run ended. `kind` is "released", "failed", "crashed" or "timed out"."""

    kind: str
    value: Any = None
    codes: tuple[str, ...] = ()
    detail: str = ""

    def same_ending(self, other: Outcome) -> bool:
        """Both released, or both ended the same other way with the same words."""
        if self.kind != other.kind:
            return False
        return self.kind == "released" or (self.codes, self.detail) == (other.codes, other.detail)

    def describe(self) -> str:
        if self.kind == "released":
            text = repr(self.value)
            return f"released {text if len(text) <= 160 else text[:150] + '...'}"
        return f"{self.kind} {' '.join(self.codes)} {self.detail}".strip()


def _failure(exc: FuzzError) -> Outcome:
    codes = tuple(d.code for d in exc.diagnostics)
    return Outcome("failed", codes=codes, detail="; ".join(d.message for d in exc.diagnostics))


def _crash(exc: BaseException) -> Outcome:
    return Outcome("crashed", detail=f"{type(exc).__name__}: {exc}"[:300])


# ---------------------------------------------------------------- checking


@dataclass(frozen=True)
class Checked:
    """`program` is the checker's result when it accepted, else None with the
    rejection's `outcome` (failed with codes, or crashed / timed out)."""

    program: Any
    outcome: Outcome

    @property
    def accepted(self) -> bool:
        return self.program is not None


def check_text(text: str, name: str = "neighbour.fz", seconds: float = RUN_SECONDS) -> Checked:
    try:
        with deadline(seconds):
            program = pipeline.check(pipeline.parse(Source(name, text)))
    except FuzzError as exc:
        return Checked(None, _failure(exc))
    except TimedOut:
        return Checked(None, Outcome("timed out"))
    except Exception as exc:  # a checker bug: never a correct answer
        return Checked(None, _crash(exc))
    return Checked(program, Outcome("released"))


# ---------------------------------------------------------------- running


def bag_parameter(checked: Any, definition: str) -> tuple[str, Any]:
    """The definition's only parameter, which must be a `bag` (name, type)."""
    from fuzzpy.language.types import TBag

    params = checked.definitions[definition].params
    if len(params) != 1 or not isinstance(params[0].type, TBag):
        raise ValueError(f"`{definition}` must take exactly one `bag` parameter")
    return params[0].name, params[0].type


def run_file(checked: Any, definition: str, data: Path, seed: int, seconds: float = RUN_SECONDS) -> Outcome:
    """`definition` on the data file with noise seeded by `seed`."""
    from fuzzpy.data.loader import load_bag

    name, bag_type = bag_parameter(checked, definition)
    try:
        bag = load_bag(data, bag_type)
    except FuzzError as exc:
        return Outcome("unloadable", codes=tuple(d.code for d in exc.diagnostics))
    try:
        with deadline(seconds):
            value = pipeline.run(checked, definition, {name: bag}, seed=seed)
    except FuzzError as exc:
        return _failure(exc)
    except TimedOut:
        return Outcome("timed out")
    except RecursionError as exc:
        return _crash(exc)
    except Exception as exc:
        return _crash(exc)
    return Outcome("released", value)


def run_pair(
    checked: Any, definition: str, pair: Pair, schema: Schema, folder: Path, seed: int
) -> tuple[Outcome, Outcome]:
    """The definition on both neighbours, with the same seed (the same noise draws)."""
    small = write_csv(schema, pair.smaller, folder)
    large = write_csv(schema, pair.larger, folder)
    return run_file(checked, definition, small, seed), run_file(checked, definition, large, seed)


# ---------------------------------------------------------------- the command


@dataclass(frozen=True)
class CliOutcome:
    """`fuzzpy run --json` on one dataset: exit code, released JSON value (exit
    0), error codes, and whether the ledger recorded a charge."""

    exit: int
    released: Any = None
    codes: tuple[str, ...] = ()
    charged: bool = False
    warnings: tuple[str, ...] = field(default=())


def run_cli(program: Path, definition: str, data: Path, seed: int, ledger: Path) -> CliOutcome:
    """`fuzzpy run` in this process, on a fresh ledger with a large budget."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from fuzzpy.cli import main

    if ledger.exists():
        ledger.unlink()
    name, _ = _cli_bag_parameter(program, definition)
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", str(program), definition, "--data", f"{name}={data}", "--budget", "1e12,0.5",
            "--ledger", str(ledger), "--dataset", "harness", "--seed", str(seed), "--json"]
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    codes = tuple(part.split("]")[0] for part in err.getvalue().split("error[")[1:])
    charged = _ledger_has_charge(ledger)
    if code != 0:
        return CliOutcome(code, None, codes, charged)
    document = json.loads(out.getvalue())
    return CliOutcome(code, document["released"], codes, charged, tuple(document.get("warnings", [])))


def _cli_bag_parameter(program: Path, definition: str) -> tuple[str, Any]:
    checked = check_text(program.read_text(encoding="utf-8"), str(program))
    if not checked.accepted:
        return "db", None
    return bag_parameter(checked.program, definition)


def _ledger_has_charge(ledger: Path) -> bool:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from fuzzpy.cli import main

    if not ledger.exists():
        return False
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        main(["ledger", "--ledger", str(ledger), "--json"])
    try:
        document = json.loads(out.getvalue())
    except json.JSONDecodeError:
        return True  # a ledger we cannot read: assume the worst
    return any(dataset.get("releases") for dataset in document.get("datasets", []))


# ---------------------------------------------------------------- isolation

R = TypeVar("R")


def warm_up() -> None:
    """Import what checking and running load lazily, so that forked children
    share it instead of importing it each time."""
    import fuzzpy.checker  # noqa: F401
    import fuzzpy.cli  # noqa: F401
    import fuzzpy.data.loader  # noqa: F401
    import fuzzpy.release.run  # noqa: F401
    import fuzzpy.runtime.interpreter  # noqa: F401
    import fuzzpy.verifier  # noqa: F401


def isolated(work: Callable[[], R], seconds: float) -> R | Outcome:
    """`work()` in a forked child (it inherits monkeypatches), stopped after
    `seconds` of CPU time (or ten times that of wall time, for a child that
    waits forever); a hang becomes Outcome("timed out") and a child that
    dies an Outcome("crashed"). Memory is capped so a huge literal cannot
    take the machine. Without fork, `work` runs here."""
    if not hasattr(os, "fork"):
        return work()
    warm_up()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_end)
            _cap_resources(seconds)
            try:
                result: Any = work()
            except BaseException as exc:  # reported, not raised: the parent decides
                result = _crash(exc)
            with os.fdopen(write_end, "wb") as pipe:
                pickle.dump(result, pipe)
        finally:
            os._exit(0)
    os.close(write_end)
    return _collect(pid, read_end, 10 * seconds)


def _cap_resources(seconds: float) -> None:
    try:
        import math
        import resource

        # 3 GB beyond what the child inherits: RLIMIT_DATA counts the parent's
        # mappings too (a pytest worker that ran DuckDB/Spark tests holds
        # gigabytes), and a run's 512 MB stack must still fit
        limit = _data_in_use() + (3 << 30)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU would dump core
        cpu = math.ceil(seconds)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # SIGXCPU, then SIGKILL
    except (ImportError, ValueError, OSError):
        pass


def _data_in_use() -> int:
    """This process's data segment (VmData: what RLIMIT_DATA counts), in bytes."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _collect(pid: int, read_end: int, seconds: float) -> Any:
    import selectors
    import time

    chunks: list[bytes] = []
    selector = selectors.DefaultSelector()
    selector.register(read_end, selectors.EVENT_READ)
    end = time.monotonic() + seconds
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not selector.select(left):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return Outcome("timed out")
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        selector.close()
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
            return Outcome("timed out")
        return Outcome("crashed", detail="the child process died")
    return pickle.loads(b"".join(chunks))
