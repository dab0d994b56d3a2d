"""Data: readers and row rules, validation, data in memory, dataset identity.
May import `ledger`, `runtime` and the layers below them; never `engines`, `release`, `api`.
"""

from __future__ import annotations

import importlib
import warnings

from fuzzpy.data.memory import DuckDBTable

__all__ = ["DuckDBTable", "register_frame"]


def __getattr__(name: str) -> object:
    """`fuzzpy.data.register_frame`, the old path, still works (a deprecation
    shim: the function reads the engines, so it lives in `fuzzpy.api.frames`,
    above them; imported by name so this layer does not import upward)."""
    if name != "register_frame":
        raise AttributeError(f"module 'fuzzpy.data' has no attribute {name!r}")
    warnings.warn("fuzzpy.data.register_frame moved to fuzzpy.api.frames.register_frame",
                  DeprecationWarning, stacklevel=2)
    return importlib.import_module("fuzzpy.api.frames").register_frame
