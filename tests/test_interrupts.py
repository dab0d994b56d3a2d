"""Ctrl-C (SIGINT) and SIGTERM at each phase of a command, sent for real.

Each test starts `fuzzpy` in a subprocess through a small driver that holds
the process in one phase (it announces `PHASE` on stderr, then waits there,
or runs a long z3 query there) and sends the signal once the phase is
reached. What must hold (README, "Stopping a command"):

* start-up, checking, z3 in `check`/`run`, reading the data: the command
  stops with exit 130 (143 for SIGTERM) and one FZ720 line, nothing charged;
* after the charge: the ledger keeps the release as "charged" (not
  released), and the message says what was spent;
* `verify`: stops, printing the verdicts decided so far;
* a signal while the charge is written is held until it is known whether
  the charge happened; one while the result is being released lets it finish;
* never a Python traceback.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fuzzpy.ledger.book import Ledger

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PEOPLE = EXAMPLES / "data" / "people.csv"

# Patches a driver can apply: each holds the process in one phase.
PREAMBLE = """
import sys, time, importlib, importlib.abc
phase = sys.argv[1]

def announce():
    sys.stderr.write("PHASE\\n")
    sys.stderr.flush()

def wait_here(*args, **kwargs):
    announce()
    time.sleep(120)

hard_done = []

def hard_z3():
    # pigeonhole: 12 pigeons, 11 holes; z3 needs far longer than the test waits.
    # Only once: a signal swallowed by z3 must show as a command that goes on.
    if hard_done:
        return None
    hard_done.append(True)
    import z3
    n = 12
    p = [[z3.Bool(f"p{i}_{j}") for j in range(n - 1)] for i in range(n)]
    s = z3.Solver()
    for i in range(n):
        s.add(z3.Or(p[i]))
    for j in range(n - 1):
        for i in range(n):
            for k in range(i + 1, n):
                s.add(z3.Not(z3.And(p[i][j], p[k][j])))
    import threading
    threading.Timer(1.0, announce).start()  # once z3 is surely inside the check
    return s.check()

if phase == "startup":
    class SlowImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.startswith("fuzzpy.commands.") and not name.endswith("common"):
                sys.meta_path.remove(self)
                wait_here()
            return None
    sys.meta_path.insert(0, SlowImport())
elif phase in ("z3", "verify-second"):
    import fuzzpy.verifier as verifier
    import fuzzpy.verifier.solver as solver
    real_check, real_verify, current = solver.check_valid, verifier._verify, []
    def verify(decl, *args):
        current.append(decl.name)
        return real_verify(decl, *args)
    def check_valid(*args, **kwargs):
        if phase == "z3" or current[-1] == "second":
            hard_z3()
        return real_check(*args, **kwargs)
    verifier._verify, solver.check_valid = verify, check_valid
elif phase == "load":  # whichever engine reads the rows (DuckDB streams a CSV itself)
    import fuzzpy.engines.engine as engines
    import fuzzpy.data.loader as loader
    loader.load = wait_here
    engines.QueryEngine.load = engines.MemoryEngine.load = lambda self, *args: wait_here()
elif phase == "compute":
    import fuzzpy.release.run as run
    run.compute = wait_here
elif phase == "duckdb-query":  # a long query, through the backend's own path, after the charge
    import threading
    import fuzzpy.engines.execute as execute
    real_query = execute.Executor._query
    def slow_query(self, sql, what):
        threading.Timer(1.0, announce).start()  # once DuckDB is surely running it
        return real_query(self, "SELECT sum(hash(i)) FROM range(100000000000) t(i)", what)
    execute.Executor._query = slow_query
elif phase in ("charging", "charged", "releasing"):
    import fuzzpy.ledger.book as book
    import fuzzpy.ledger.store as store
    def slowly(work):
        def wrapped(*args, **kwargs):
            if phase == "charging":  # inside the write transaction, before COMMIT
                announce(); time.sleep(3)
                return work(*args, **kwargs)
            result = work(*args, **kwargs)
            announce(); time.sleep(3)  # the charge (or the release record) is committed
            return result
        return wrapped
    if phase == "charging":
        book.insert_release_row = slowly(store.insert_release_row)
    elif phase == "charged":
        book.Ledger.charge_many = slowly(book.Ledger.charge_many)
    else:
        book.Ledger.record_release = slowly(book.Ledger.record_release)

from fuzzpy.cli import entry
sys.argv = ["fuzzpy", *sys.argv[2:]]
entry()
"""


class Finished:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def codes(self) -> list[str]:
        return [line.split("]")[0].split("[")[1] for line in self.err.splitlines() if line.startswith("error[")]


def interrupt_at(phase: str, argv: list[str], tmp_path: Path, signum: int = signal.SIGINT) -> Finished:
    """Run `fuzzpy argv` held in `phase`, send `signum` once it is there."""
    env = {**os.environ, "FUZZPY_LEDGER": str(tmp_path / "ledger.sqlite"), "FUZZPY_CACHE": str(tmp_path / "cache")}
    child = subprocess.Popen([sys.executable, "-c", PREAMBLE, phase, *argv], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str | None] = queue.Queue()

    def read_stderr() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    err: list[str] = []
    sent = False
    while True:
        line = lines.get(timeout=float(os.environ.get("INTERRUPT_WAIT", "180")))
        if line is None:
            break
        if line == "PHASE\n":
            if not sent:  # one signal, as a user presses Ctrl-C once
                child.send_signal(signum)
                sent = True
            continue
        err.append(line)
    assert child.stdout is not None
    out = child.stdout.read()
    code = child.wait(timeout=180)
    reader.join(timeout=5)
    assert "Traceback" not in "".join(err), "".join(err)
    return Finished(code, out, "".join(err))


def _ledger_history(tmp_path: Path) -> list:
    path = tmp_path / "ledger.sqlite"
    if not path.exists():
        return []
    with Ledger(path) as ledger:
        return ledger.history()


def _run_argv(tmp_path: Path, *extra: str) -> list[str]:
    return ["run", str(EXAMPLES / "noisy_count.fz"), "noisy_count", "--data", f"db={PEOPLE}",
            "--budget", "1", *extra]


# ---------------------------------------------------------------- before anything is charged


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_during_start_up_the_command_stops_without_a_traceback(tmp_path: Path, signum: int) -> None:
    done = interrupt_at("startup", ["check", str(EXAMPLES / "noisy_count.fz")], tmp_path, signum)
    assert done.code == 128 + signum
    assert done.codes() == ["FZ720"] and done.err.count("\n") == 1 and done.out == ""


def test_z3_in_check_is_interrupted_not_read_as_unknown(tmp_path: Path) -> None:
    done = interrupt_at("z3", ["check", str(EXAMPLES / "age_brackets_svt.fz")], tmp_path)
    assert done.code == 130 and done.codes() == ["FZ720"]  # not FZ310 ("not proved"), not 0


def test_z3_in_run_is_interrupted_and_nothing_is_charged_or_released(tmp_path: Path) -> None:
    argv = ["run", str(EXAMPLES / "age_brackets_svt.fz"), "first_large_bracket", "--data", f"db={PEOPLE}",
            "--budget", "1"]
    done = interrupt_at("z3", argv, tmp_path)
    assert (done.code, done.codes(), done.out) == (130, ["FZ720"], "")
    assert _ledger_history(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_while_the_data_is_read_nothing_is_charged(tmp_path: Path, signum: int) -> None:
    done = interrupt_at("load", _run_argv(tmp_path), tmp_path, signum)
    assert (done.code, done.codes(), done.out) == (128 + signum, ["FZ720"], "")
    assert "nothing was charged" in done.err
    assert _ledger_history(tmp_path) == []


def test_a_signal_inside_the_charge_rolls_it_back(tmp_path: Path) -> None:
    done = interrupt_at("charging", _run_argv(tmp_path), tmp_path)
    assert (done.code, done.codes(), done.out) == (130, ["FZ720"], "")
    assert "nothing was charged" in done.err
    assert _ledger_history(tmp_path) == []


def test_json_mode_reports_the_interrupt_as_a_document(tmp_path: Path) -> None:
    done = interrupt_at("load", _run_argv(tmp_path, "--json"), tmp_path)
    document = json.loads(done.out)
    assert done.code == 130 and document["ok"] is False
    assert [d["code"] for d in document["diagnostics"]] == ["FZ720"]


# ---------------------------------------------------------------- after the charge


@pytest.mark.parametrize("phase", ["charged", "compute"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_after_the_charge_the_ledger_says_charged_not_released(tmp_path: Path, phase: str, signum: int) -> None:
    done = interrupt_at(phase, _run_argv(tmp_path), tmp_path, signum)
    assert (done.code, done.codes(), done.out) == (128 + signum, ["FZ720"], "")
    assert "eps=0.1" in done.err and "nothing was released" in done.err  # what was spent
    (entry,) = _ledger_history(tmp_path)
    assert entry.status == "charged" and entry.released is None
    shown = subprocess.run([sys.executable, "-m", "fuzzpy", "ledger", "--ledger", str(tmp_path / "ledger.sqlite")],
                           capture_output=True, text=True, timeout=120)
    assert "charged, not released" in shown.stdout


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_duckdb_query_ends_as_an_interrupt(tmp_path: Path, signum: int) -> None:
    """DuckDB runs the signal handler while it waits and raises its own
    `RuntimeError: Query interrupted` (a11 F6): still FZ720, exit 130/143."""
    done = interrupt_at("duckdb-query", _run_argv(tmp_path, "--engine", "duckdb"), tmp_path, signum)
    assert (done.code, done.codes(), done.out) == (128 + signum, ["FZ720"], "")
    assert "nothing was released" in done.err
    (entry,) = _ledger_history(tmp_path)
    assert entry.status == "charged" and entry.released is None


def test_a_signal_while_the_result_is_released_lets_it_finish(tmp_path: Path) -> None:
    done = interrupt_at("releasing", _run_argv(tmp_path), tmp_path)
    assert done.code == 0 and done.out.startswith("released:")
    (entry,) = _ledger_history(tmp_path)
    assert entry.status == "released" and entry.released is not None


# ---------------------------------------------------------------- verify


TWO_MECHANISMS = """
mechanism first (x : num, eps : num) : num
  requires eps > 0
  requires abs(dist(x)) <= 1
  privacy eps
{
  return x + lap(1 / eps);
}

mechanism second (x : num, eps : num) : num
  requires eps > 0
  requires abs(dist(x)) <= 1
  privacy eps
{
  return x + lap(2 / eps);
}
"""


@pytest.mark.parametrize("as_json", [False, True])
def test_verify_stops_and_prints_what_was_decided(tmp_path: Path, as_json: bool) -> None:
    program = tmp_path / "two.fz"
    program.write_text(TWO_MECHANISMS)
    argv = ["verify", str(program), *(["--json"] if as_json else [])]
    done = interrupt_at("verify-second", argv, tmp_path)
    assert done.code == 130
    if as_json:
        document = json.loads(done.out)
        assert document["ok"] is False and document["interrupted"] is True
        assert [(m["name"], m["verdict"]) for m in document["mechanisms"]] == [("first", "proved")]
        assert [d["code"] for d in document["diagnostics"]] == ["FZ720"]
    else:
        assert done.out.splitlines()[0].startswith("first: proved")
        assert "second" not in done.out  # never reported as unknown, let alone proved
        assert done.codes() == ["FZ720"]
