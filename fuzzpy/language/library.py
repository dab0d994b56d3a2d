"""Where the standard library lives: `.fz` files shipped inside the package
(fuzzpy/std/, package data of the wheel), one file per module
(`import std.noisy_max;` reads fuzzpy/std/noisy_max.fz).

Only names: which modules exist and whether a source span is in one of them.
Reading and splicing the modules is `fuzzpy.frontend.imports`; verifying a
library mechanism in its own module's scope is `fuzzpy.checker.scope`.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The folder of the library's modules (beside this package's `language`).
STD_DIR = Path(__file__).resolve().parents[1] / "std"
#: The first part of every library module's path.
ROOT = "std"


def modules() -> tuple[str, ...]:
    """The library's module names (`noisy_max`, ...), sorted."""
    return tuple(sorted(p.stem for p in STD_DIR.glob("*.fz")))


def module_file(name: str) -> Path:
    """The file of module ``std.<name>`` (which may not exist)."""
    return STD_DIR / f"{name}.fz"


def is_library_file(file: str) -> bool:
    """Is ``file`` (a span's file name) one of the library's modules?"""
    return file.startswith(_PREFIX) and file.endswith(".fz")


_PREFIX = str(STD_DIR) + os.sep
