"""Modules imported on first use.

A query engine's whole run on a large file spends less time on its own
work than Python spends importing a few heavy modules it never calls
(`pyarrow.compute` alone: 20-40 ms); those are reached through `lazy`.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any


class LazyModule:
    """Stands for a module; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)  # later reads are plain attribute reads (hot loops read `np.int64`)
        return value


def lazy(name: str) -> Any:
    return LazyModule(name)


def is_instance(value: object, module: str, name: str) -> bool:
    """``isinstance(value, module.name)`` without importing ``module``: no
    value is an instance of a class from a module nothing has imported."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))
