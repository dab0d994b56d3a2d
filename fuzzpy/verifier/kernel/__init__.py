"""The proof kernel: checks a prover's certificate on its own (docs/verifier-kernel.md).

    check(decl, program, certificate) -> Decision      (checker.py)

Loaded on first use (PEP 562), so that reading a cached proof's certificate
(`certificate.py`) loads neither the kernel nor z3.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Decision", "check"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("fuzzpy.verifier.kernel.checker"), name)
