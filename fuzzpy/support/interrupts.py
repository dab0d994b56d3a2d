"""What Ctrl-C (SIGINT) and SIGTERM mean to a fuzzpy command.

`handled()` (entered first thing by `fuzzpy.cli.main`) makes both signals
raise `Interrupted` in the main thread, wherever it is: while modules are
imported, while the data is read, while a program runs, and while z3 works.
z3 would otherwise catch Ctrl-C itself and turn it into an "unknown" answer
that the verifier then reports as such (the signal swallowed); instead, z3's
own handling is turned off (`prepare_z3`) and a watcher thread asks z3 to stop
as soon as a signal arrives, so that the exception is raised the moment the
solver returns.

`held()` marks a step that must happen entirely or not at all, *and* whose
outcome the caller must know: a signal that arrives inside it is raised when
the block ends, or earlier at a `checkpoint()` inside it (where stopping is
still clean). The ledger's charge is such a step: a run stopped by a signal
either charged nothing or knows that it charged (docs in README, "Stopping a
command").

This module imports only the standard library, so that it can be installed
before anything else is loaded.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The command was stopped by SIGINT (Ctrl-C) or SIGTERM.

    ``note`` says what had already happened (e.g. that a budget was charged),
    for the one-line message the command prints.
    """

    def __init__(self, signum: int, note: str | None = None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.note = note

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process it stopped."""
        return 128 + self.signum


class _State:
    def __init__(self) -> None:
        self.installed = 0  # nesting depth of `handled()`
        self.held: list[Held] = []  # the open `held()` blocks, innermost last
        self.pending: int | None = None  # a signal that arrived while held
        self.wakeup_write: int | None = None  # the watcher thread's pipe
        self.z3_prepared = False
        self.raised = 0  # how many signals `_on_signal` raised as `Interrupted`
        self.last_raised: int | None = None


_state = _State()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _state.held:
        if _state.pending is None:
            _state.pending = signum
        return
    _state.raised += 1
    _state.last_raised = signum
    raise Interrupted(signum)


@contextmanager
def handled() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise `Interrupted` (main thread
    only; elsewhere the block changes nothing). The previous handlers are
    restored when it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _on_signal) for signum in SIGNALS}
    previous_wakeup = signal.set_wakeup_fd(_watcher_pipe(), warn_on_full_buffer=False)
    _state.installed += 1
    try:
        yield
    finally:
        _state.installed -= 1
        signal.set_wakeup_fd(previous_wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def handling() -> bool:
    """Whether signals raise `Interrupted` here (inside `handled()`, main thread)."""
    return bool(_state.installed) and threading.current_thread() is threading.main_thread()


class Held:
    """What `held()` yields: after the block, the signal that arrived in it
    and was not raised (``finish=True``), if any."""

    def __init__(self, finish: bool) -> None:
        self.finish = finish
        self.signum: int | None = None


@contextmanager
def held(finish: bool = False) -> Iterator[Held]:
    """A signal arriving inside the block is not raised where it arrives.

    By default it is raised at a `checkpoint()` inside the block (where
    stopping is still clean), else when the block ends. With ``finish`` the
    block always runs to its end and the signal is only recorded on the
    yielded `Held` (the caller has finished what the user asked for)."""
    handle = Held(finish)
    _state.held.append(handle)
    try:
        yield handle
    finally:
        _state.held.pop()
        if not _state.held:
            signum, _state.pending = _state.pending, None
            handle.signum = signum
    if handle.signum is not None and not finish:
        raise Interrupted(handle.signum)


@contextmanager
def foreign() -> Iterator[None]:
    """Around a call into a query engine that catches the `Interrupted` a
    signal raises inside it and raises an error of its own instead (DuckDB
    runs the handler while it waits for a query, then raises `RuntimeError:
    Query interrupted`; PySpark's own SIGINT handler raises a plain
    `KeyboardInterrupt`): such an error is the signal's `Interrupted`, so
    that the command ends as any interrupted command does (FZ720, exit 130
    or 143), not as an internal error."""
    seen = _state.raised
    try:
        yield
    except Interrupted:
        raise
    except KeyboardInterrupt:
        if not _state.installed:
            raise
        raise Interrupted(_state.last_raised if _state.raised != seen and _state.last_raised else
                          signal.SIGINT) from None
    except Exception:
        if _state.raised == seen or _state.last_raised is None:
            raise
        raise Interrupted(_state.last_raised) from None


def checkpoint() -> None:
    """Inside `held()`: raise a signal that has arrived, if any, unless the
    block must finish. Outside it: nothing."""
    if _state.held and not any(h.finish for h in _state.held) and _state.pending is not None:
        signum, _state.pending = _state.pending, None
        raise Interrupted(signum)


# ---------------------------------------------------------------- z3


def prepare_z3() -> None:
    """Called before z3 first solves anything: within `handled()`, turn off
    z3's own Ctrl-C handling, which would swallow the signal (the watcher
    thread interrupts z3 instead). Outside it, z3 keeps its default."""
    if _state.installed and not _state.z3_prepared:
        import z3

        z3.set_param("ctrl_c", False)
        _state.z3_prepared = True


def _watcher_pipe() -> int:
    """The write end of a pipe the C-level signal handler writes to (Python's
    `set_wakeup_fd`); a daemon thread reads it and interrupts z3, which runs
    in C and would not return to Python before its time limit otherwise."""
    if _state.wakeup_write is None:
        read, write = os.pipe()
        os.set_blocking(write, False)
        threading.Thread(target=_watch, args=(read,), name="fuzzpy-signals", daemon=True).start()
        _state.wakeup_write = write
    return _state.wakeup_write


def _watch(read: int) -> None:
    while os.read(read, 1):
        z3 = sys.modules.get("z3.z3")
        context = getattr(z3, "_main_ctx", None)  # the verifier's; None until z3 is first used
        if context is not None:
            context.interrupt()  # thread-safe in z3; harmless when nothing is solving
