"""Quiet the logging of libraries fuzzpy calls (no import of them here)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_absl() -> Iterator[None]:
    """dp-accounting logs through absl every fractional Renyi order whose
    series does not converge (`_compute_log_a_frac failed to converge`: 36
    lines on `budget --gaussian 1e6 --subsample 0.5 --rounds 100000 --delta
    1e-300`, issue 25); that order's value is then inf, which only loosens
    the curve, and the other orders still bound it. Its warnings are not
    shown."""
    logger = logging.getLogger("absl")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)
