"""The ledger across processes: concurrent runs, and runs killed mid-way."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

import fuzzpy.accounting.accountant  # noqa: F401 - imported once, before the forks
from fuzzpy.accounting.events import Laplace
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.book import Budget, Ledger

TENTH = (Laplace(Fraction(1), Fraction(10)),)
WORKERS = 20


def _charge_once(path: str, start: multiprocessing.synchronize.Barrier, results) -> None:
    start.wait()
    try:
        with Ledger(path) as ledger:
            receipt = ledger.charge("people", TENTH, Budget(1.0), definition="noisy_count")
        results.put(("charged", receipt.id))
    except FuzzError as error:
        results.put(("refused", error.diagnostics[0].code))


@pytest.mark.skipif(sys.platform == "win32", reason="uses fork")
def test_twenty_concurrent_runs_against_ten_releases_of_budget(tmp_path: Path) -> None:
    """The file does not exist yet: the processes also race to create it."""
    path = str(tmp_path / "ledger.sqlite")
    context = multiprocessing.get_context("fork")
    start = context.Barrier(WORKERS)
    results = context.Queue()
    workers = [
        context.Process(target=_charge_once, args=(path, start, results)) for _ in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    charged = sorted(value for kind, value in outcomes if kind == "charged")
    refused = [value for kind, value in outcomes if kind == "refused"]
    assert charged == list(range(1, 11))
    assert refused == ["FZ601"] * 10
    with Ledger(path) as ledger:
        assert len(ledger.history("people")) == 10
        ((_, _, spent, _),) = ledger.datasets()
    assert spent.epsilon == 1


def _run_child(script: str, path: Path) -> subprocess.Popen[str]:
    code = textwrap.dedent(
        f"""
        import sys, time
        from fractions import Fraction
        from fuzzpy.accounting.events import Laplace
        from fuzzpy.ledger.book import Budget, Ledger
        ledger = Ledger({str(path)!r})
        events = (Laplace(Fraction(1), Fraction(10)),)
        """
    ) + textwrap.dedent(script)
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )


def _kill_after_line(child: subprocess.Popen[str]) -> str:
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    return line


@pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL")
def test_kill_between_charge_and_print_keeps_the_charge(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    child = _run_child(
        """
        receipt = ledger.charge("people", events, Budget(0.25), definition="noisy")
        print("charged", receipt.id, flush=True)
        time.sleep(60)  # killed here, before any value would be printed
        print(42)
        """,
        path,
    )
    assert _kill_after_line(child) == "charged 1"
    with Ledger(path) as ledger:
        (entry,) = ledger.history()
        assert entry.definition == "noisy" and entry.cost.spend.epsilon == Fraction(1, 10)
        ledger.charge("people", TENTH, Budget(0.25))
        with pytest.raises(FuzzError):  # the killed run's charge still counts
            ledger.quote("people", TENTH, Budget(0.25))


@pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL")
def test_kill_inside_an_uncommitted_charge_leaves_none_and_a_usable_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ledger.charge("people", TENTH, Budget(1))
    child = _run_child(
        """
        with ledger._store.writing() as connection:
            connection.execute(
                "INSERT INTO releases (dataset, time, events, spend_epsilon, spend_delta,"
                " spend_rho, epsilon, delta, method)"
                " VALUES ('people', 'now', '[]', '1/2', '0', '0', '1/2', '0', 'pure')"
            )
            print("inserted", flush=True)
            time.sleep(60)
        """,
        path,
    )
    assert _kill_after_line(child) == "inserted"
    with Ledger(path, timeout=5) as ledger:
        assert [e.cost.spend.epsilon for e in ledger.history()] == [Fraction(1, 10)]
        ledger.charge("people", TENTH, Budget(1))
