"""Counterexamples for approximate-DP claims (stub, filled in below)."""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.language.syntax import MechanismDecl


def refute_gaussian(decl: MechanismDecl, constants: dict[str, Fraction]) -> tuple[None, str]:
    return None, "no counterexample searched"
