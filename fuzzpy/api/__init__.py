"""The Python API: Program, Ledger, load/loads, reports and releases, the notebook magic.
May import `release` and every layer below it; never the command line.

`from fuzzpy.api import load` (the module this package replaced) still works:
the names of `fuzzpy.api.program` are read from it on first use.
"""

from __future__ import annotations

import importlib


def __getattr__(name: str) -> object:
    program = importlib.import_module("fuzzpy.api.program")
    try:
        return getattr(program, name)
    except AttributeError:
        raise AttributeError(f"module 'fuzzpy.api' has no attribute {name!r}") from None
