"""Running a program's evaluation on a large stack.

`def rec` may recurse `MAX_RECURSIVE_CALLS` deep (the data-independent
budget of docs/semantics.md, "Recursion"); each level takes a few dozen
Python frames, more than the main thread's stack holds. A program with a
`def rec` is therefore evaluated on a thread with a 512 MiB stack and a
matching recursion limit, so that the budget, not Python's stack, is the
limit.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from fuzzpy.runtime.values import Function, Fuzzy, Value

#: Python frames one level of recursion may take, and the stack they need.
FRAMES_PER_CALL = 40
STACK_BYTES = 512 * 1024 * 1024


def outside(value: Value) -> Value:
    if isinstance(value, Fuzzy):
        return Fuzzy(lambda: on_large_stack(value.sample))
    if isinstance(value, Function):
        return Function(value.name, value.arity - len(value.args),
                        lambda *args: outside(on_large_stack(lambda: _apply(value, args))))
    return value


def _apply(func: Function, args: tuple[Value, ...]) -> Value:
    for arg in args:
        func = func(arg)
    return func


_STACK = threading.local()


def on_large_stack(work: Callable[[], Value]) -> Value:
    """Run `work` on a thread with a large stack and a matching recursion
    limit (at once if this is that thread already); its exception, if any,
    is raised here."""
    if getattr(_STACK, "large", False):
        return work()
    result: list[Value] = []
    error: list[BaseException] = []

    def target() -> None:
        _STACK.large = True
        try:
            result.append(work())
        except BaseException as exc:  # noqa: BLE001  # re-raised in the caller's thread
            error.append(exc)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _recursive_calls() * FRAMES_PER_CALL + 10_000))
    previous = threading.stack_size(STACK_BYTES)
    try:
        thread = threading.Thread(target=target, name="fuzzpy-run")
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
        sys.setrecursionlimit(limit)
    if error:
        raise error[0]
    return result[0]


def _recursive_calls() -> int:
    from fuzzpy.runtime.interpreter import MAX_RECURSIVE_CALLS

    return MAX_RECURSIVE_CALLS
