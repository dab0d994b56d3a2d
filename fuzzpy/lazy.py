"""Modules imported on first use.

A query engine's whole run on a large file spends less time on its own
work than Python spends importing a few heavy modules it never calls
(`pyarrow.compute` alone: 20-40 ms); those are reached through `lazy`.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for a module; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


def lazy(name: str) -> Any:
    return LazyModule(name)
