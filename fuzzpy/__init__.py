"""fuzzpy: a Fuzz-style language for differentially private programs.

The Python API (`fuzzpy.api`) is imported on first use, so that `import
fuzzpy` and `fuzzpy --help` stay fast:

    import fuzzpy
    report = fuzzpy.load("examples/noisy_count.fz").check()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fuzzpy.support.version import VERSION as __version__

#: The names `fuzzpy` re-exports from its API, and the module each lives in.
_API = {
    "load": "fuzzpy.api.program",
    "loads": "fuzzpy.api.program",
    "Program": "fuzzpy.api.program",
    "Ledger": "fuzzpy.api.program",
    "CheckReport": "fuzzpy.api.reports",
    "DefinitionReport": "fuzzpy.api.reports",
    "VerifyResult": "fuzzpy.api.reports",
    "Release": "fuzzpy.api.releases",
    "Charge": "fuzzpy.api.releases",
    "FuzzError": "fuzzpy.language.diagnostics",
    "Diagnostic": "fuzzpy.language.diagnostics",
    "Rejected": "fuzzpy.api.errors",
    "InvalidInput": "fuzzpy.api.errors",
    "BudgetExceeded": "fuzzpy.api.errors",
}

__all__ = [
    "__version__", "load", "loads", "Program", "Ledger", "CheckReport", "DefinitionReport", "VerifyResult",
    "Release", "Charge", "FuzzError", "Diagnostic", "Rejected", "InvalidInput", "BudgetExceeded",
]

if TYPE_CHECKING:
    from fuzzpy.api.errors import BudgetExceeded, InvalidInput, Rejected
    from fuzzpy.api.program import Ledger, Program, load, loads
    from fuzzpy.api.releases import Charge, Release
    from fuzzpy.api.reports import CheckReport, DefinitionReport, VerifyResult
    from fuzzpy.language.diagnostics import Diagnostic, FuzzError


def __getattr__(name: str) -> object:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'fuzzpy' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext fuzzpy`: the `%%fuzzpy` cell magic (`fuzzpy.api.notebook`)."""
    from fuzzpy.api.notebook import load_ipython_extension as load_extension

    load_extension(ipython)
