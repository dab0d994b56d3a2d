"""The coupling verifier for `mechanism` declarations (language.md §5, verifier.md).

    verify_mechanism(decl, program) -> Verdict

first looks for a proof (randomness alignments and loop invariants, checked
with z3, epsilon symbolic, any input length); failing that, for a
counterexample on short inputs with exactly computed probabilities; failing
both within the time limits, the verdict is "unknown" with the reason.
Verdicts are cached per mechanism within a process (the checker asks again
for every call site).
"""

from __future__ import annotations

import time

from fuzzpy.diagnostics import FuzzError
from fuzzpy.syntax import MechanismDecl, Program
from fuzzpy.verifier.mirror import mirrored
from fuzzpy.verifier.model import MechanismInfo, analyse, static_constants
from fuzzpy.verifier.prover import scale_diagnostics, search, vacuity
from fuzzpy.verifier.refuter import Counterexample, refute
from fuzzpy.verifier.text import show
from fuzzpy.verifier.verdict import Verdict

__all__ = ["Verdict", "verify_mechanism", "PROOF_SECONDS", "REFUTE_SECONDS"]

PROOF_SECONDS = 6.0
REFUTE_SECONDS = 8.0
QUICK_REFUTE_SECONDS = 0.4
_cache: dict[tuple[MechanismDecl, tuple[tuple[str, object], ...]], Verdict] = {}


def verify_mechanism(
    decl: MechanismDecl,
    program: Program | None = None,
    proof_seconds: float = PROOF_SECONDS,
    refute_seconds: float = REFUTE_SECONDS,
) -> Verdict:
    """Prove, refute, or give up on the mechanism's privacy claim.

    Raises `FuzzError` (FZ4xx) when the mechanism is malformed. Any other
    failure inside the verifier is a bug: the verdict is then "unknown" (with
    the error as its reason), never "proved", and never an exception that
    would hide the verdicts of the other mechanisms of the file.
    """
    constants = static_constants(program)
    key = (decl, tuple(sorted(constants.items())))
    if key in _cache:
        return _cache[key]
    started = time.monotonic()
    claim_text = show(decl.privacy)
    try:
        verdict = _decide(decl, constants, claim_text, proof_seconds, refute_seconds)
    except FuzzError:
        raise
    except Exception as exc:  # noqa: BLE001 - a verifier bug proves nothing
        verdict = Verdict(decl.name, "unknown", decl.privacy, claim_text,
                          f"internal error in the verifier ({type(exc).__name__}: {exc}); nothing is proved")
    verdict = _timed(verdict, time.monotonic() - started)
    _cache[key] = verdict
    return verdict


def _decide(decl: MechanismDecl, constants: dict, claim_text: str, proof_seconds: float,
            refute_seconds: float) -> Verdict:
    info = analyse(decl, constants)
    bad_scales = scale_diagnostics(info)
    if bad_scales:
        raise FuzzError(tuple(bad_scales))
    # both orientations of a one-sided neighbour relation (mirror.py)
    mirror = mirrored(decl, info)
    infos = [info] + ([analyse(mirror, constants)] if mirror is not None else [])
    stream = info.result_sort == "stream"
    for each in infos:
        quick, _ = refute(each, QUICK_REFUTE_SECONDS, max_length=2, quick=True)  # most bugs show on tiny inputs
        if quick is not None:
            return _refuted(info, claim_text, quick)
    results = [search(each, proof_seconds) for each in infos]
    failed = next((r for r in results if not r.proved), None)
    if failed is None:
        vacuous = vacuity(info)
        return Verdict(decl.name, "proved", decl.privacy, claim_text, vacuous, results[0].trace,
                       stream=stream, vacuous=vacuous is not None)
    why = ""
    counterexample = None
    for each in infos:
        counterexample, why = refute(each, refute_seconds / len(infos))
        if counterexample is not None:
            return _refuted(info, claim_text, counterexample)
    side = "" if failed is results[0] else " for the neighbour relation reversed"
    reason = f"no proof found{side} ({failed.reason}); {why}"
    return Verdict(decl.name, "unknown", decl.privacy, claim_text, reason, stream=stream)


def _refuted(info: MechanismInfo, claim_text: str, counterexample: Counterexample) -> Verdict:
    decl = info.decl
    return Verdict(decl.name, "refuted", decl.privacy, claim_text, f"the claim `privacy {claim_text}` is false",
                   None, counterexample, stream=info.result_sort == "stream")


def _timed(verdict: Verdict, seconds: float) -> Verdict:
    from dataclasses import replace

    return replace(verdict, seconds=seconds)
