"""The coupling verifier for `mechanism` declarations (language.md §5, verifier.md).
May import `frontend`, `language`, `support`; independent of `accounting`.

    verify_mechanism(decl, program, constants=...) -> Verdict

first looks for a proof (randomness alignments and loop invariants, checked
with z3, epsilon symbolic, any input length); failing that, for a
counterexample on short inputs with exactly computed probabilities; failing
both within the time limits, the verdict is "unknown" with the reason.
Verdicts are cached per mechanism within a process (the checker asks again
for every call site), and proofs on disk across processes while a command
has the disk cache on (`proof_cache`).

This module imports the verifier's parts (and z3) only when a mechanism is
really verified: a proof found in a cache needs neither.
"""

from __future__ import annotations

import importlib
import sys
import time
from typing import TYPE_CHECKING, Any

from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.syntax import MechanismDecl, Program
from fuzzpy.verifier import proof_cache

if TYPE_CHECKING:
    from collections.abc import Mapping
    from fractions import Fraction

    from fuzzpy.verifier.model import MechanismInfo
    from fuzzpy.verifier.refuter import Counterexample
    from fuzzpy.verifier.verdict import Verdict

#: The verifier's parts, loaded on first use (PEP 562). They are looked up as
#: attributes of this package (`_part`), so that a test may replace one.
_PARTS = {
    "Verdict": "fuzzpy.verifier.verdict",
    "analyse": "fuzzpy.verifier.model",
    "mirrored": "fuzzpy.verifier.mirror",
    "negated": "fuzzpy.verifier.mirror",
    "scale_diagnostics": "fuzzpy.verifier.prover",
    "search": "fuzzpy.verifier.prover",
    "vacuity": "fuzzpy.verifier.prover",
    "refute": "fuzzpy.verifier.refuter",
    "with_flags": "fuzzpy.verifier.refuter",
    "show": "fuzzpy.verifier.text",
    "check": "fuzzpy.verifier.kernel",
    "certificate": "fuzzpy.verifier.export",
    "as_vectors": "fuzzpy.verifier.public_lists",
}


def __getattr__(name: str) -> Any:
    if name not in _PARTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_PARTS[name]), name)
    globals()[name] = value
    return value


def _part(name: str) -> Any:
    return getattr(sys.modules[__name__], name)

__all__ = ["Verdict", "verify_mechanism", "PROOF_SECONDS", "REFUTE_SECONDS", "REFUTE_CANDIDATES"]

#: a safety cap on the proof search, whose budget is counted (prover.MAX_SCREENED,
#: MAX_PROOF_ATTEMPTS, solver.RLIMIT); the suite's slowest proof takes 2.2 s of CPU
PROOF_SECONDS = 20.0
#: The searches for a counterexample are budgeted by input pairs examined, counted,
#: not timed, so that which counterexample they find, if any, does not depend on
#: the machine's load; their CPU seconds are only safety caps a normal run never
#: reaches (the measurements behind the numbers: examples/mechanisms/README.md).
REFUTE_SECONDS = 30.0
#: the full search after a failed proof; the suite's refutations need at most
#: 8,720 (a phase's natural end / its cumulative share), its slowest search
#: spends these in 14 s of CPU
REFUTE_CANDIDATES = 20_000
QUICK_REFUTE_SECONDS = 3.0
#: the quick first look (~0.4-1 s of CPU)
QUICK_REFUTE_CANDIDATES = 2000
_cache: dict[tuple[MechanismDecl, tuple[tuple[str, object], ...]], Verdict] = {}


def verify_mechanism(
    decl: MechanismDecl,
    program: Program | None = None,
    proof_seconds: float = PROOF_SECONDS,
    refute_seconds: float = REFUTE_SECONDS,
    *,
    constants: Mapping[str, Fraction],
) -> Verdict:
    """Prove, refute, or give up on the mechanism's privacy claim.

    Raises `FuzzError` (FZ4xx) when the mechanism is malformed. Any other
    failure inside the verifier is a bug: the verdict is then "unknown" (with
    the error as its reason), never "proved", and never an exception that
    would hide the verdicts of the other mechanisms of the file.
    """
    constants = dict(constants)  # the file's top-level scope, read by the checker (`checker.scope`)
    decl = _part("as_vectors")(decl)  # public list parameters: vectors that move by 0 (public_lists.py)
    key = (decl, tuple(sorted(constants.items())))
    if key in _cache:
        return _cache[key]
    if proof_cache.reading():
        stored = proof_cache.lookup(decl, constants)
        if stored is not None:
            _cache[key] = stored
            return stored
    verdict = _verify(decl, program, constants, proof_seconds, refute_seconds)
    _cache[key] = verdict
    if proof_cache.active():
        proof_cache.store(decl, constants, verdict)
    return verdict


def _verify(decl: MechanismDecl, program: Program | None, constants: dict[str, Fraction], proof_seconds: float,
             refute_seconds: float) -> Verdict:
    from fuzzpy.support.interrupts import prepare_z3

    prepare_z3()
    started = time.monotonic()
    claim_text = _part("show")(decl.privacy)
    if decl.delta is not None:  # `privacy (eps, delta)`
        claim_text = f"({claim_text}, {_part('show')(decl.delta)})"
    try:
        verdict = _decide(decl, program, constants, claim_text, proof_seconds, refute_seconds)
    except FuzzError:
        raise
    except Exception as exc:  # noqa: BLE001 - a verifier bug proves nothing
        verdict = _part("Verdict")(decl.name, "unknown", decl.privacy, claim_text,
                          f"internal error in the verifier ({type(exc).__name__}: {exc}); nothing is proved")
    return _timed(verdict, time.monotonic() - started)


def _decide(decl: MechanismDecl, program: Program | None, constants: dict, claim_text: str, proof_seconds: float,
            refute_seconds: float) -> Verdict:
    analyse, refute, search, Verdict = _part("analyse"), _part("refute"), _part("search"), _part("Verdict")
    info = analyse(decl, constants)  # well-formedness (FZ4xx) for every mechanism
    bad_scales = _part("scale_diagnostics")(info)
    if bad_scales:
        raise FuzzError(tuple(bad_scales))
    from fuzzpy.verifier import gaussian

    if gaussian.applies(decl) and gaussian.has_gauss(decl):  # the Gaussian rule (docs/verifier-kernel.md)
        return gaussian.decide(decl, program, constants, claim_text)
    if gaussian.applies(decl):  # `privacy (eps, delta)` with Laplace draws only
        return _laplace_delta(info, program, constants, claim_text, proof_seconds, refute_seconds)
    # both orientations of a one-sided neighbour relation (mirror.py)
    mirror = _part("mirrored")(decl, info)
    infos = [info] + ([analyse(mirror, constants)] if mirror is not None else [])
    stream = info.result_sort == "stream"
    for each in infos:
        quick, _ = refute(each, QUICK_REFUTE_SECONDS, max_length=2, quick=True,  # most bugs show on tiny inputs
                          candidates=QUICK_REFUTE_CANDIDATES)
        if quick is not None:
            return _refuted(info, claim_text, quick)
    results = [search(each, proof_seconds) for each in infos]
    failed = next((r for r in results if not r.proved), None)
    if failed is None:
        verdict = _kernel_checked(info, program, results, claim_text)
        if verdict.status == "proved" or mirror is not None:
            return verdict
        # the kernel's own symmetry test is stricter than the prover's: prove the
        # relation reversed too, and let the kernel check both orientations
        reversed_decl = _part("negated")(decl)
        if reversed_decl is not None:
            reversed_result = search(analyse(reversed_decl, constants), proof_seconds)
            if reversed_result.proved:
                return _kernel_checked(info, program, [*results, reversed_result], claim_text)
        return verdict
    why = ""
    counterexample = None
    cap = time.process_time() + refute_seconds  # over both orientations
    for each in infos:
        counterexample, why = refute(each, max(0.0, cap - time.process_time()), candidates=REFUTE_CANDIDATES)
        if counterexample is not None:
            return _refuted(info, claim_text, counterexample)
    side = "" if failed is results[0] else " for the neighbour relation reversed"
    reason = f"no proof found{side} ({failed.reason}); {why}"
    return Verdict(decl.name, "unknown", decl.privacy, claim_text, reason, stream=stream)


def _laplace_delta(info: MechanismInfo, program: Program | None, constants: dict, claim_text: str,
                   proof_seconds: float, refute_seconds: float) -> Verdict:
    """`privacy (eps, delta)` on a mechanism whose draws are all Laplace: proved
    through the pure claim (eps-DP is (eps, delta)-DP for every delta >= 0,
    Dwork & Roth Def. 2.4) with the kernel re-checking the certificate at the
    delta; refuted by an output whose exact probabilities break
    P1 <= e^eps P2 + delta; else unknown, with the pure search's reason."""
    from dataclasses import replace

    from fuzzpy.verifier import gaussian

    decl, Verdict = info.decl, _part("Verdict")
    stream = info.result_sort == "stream"
    cert, _ = gaussian.prove_gaussian(decl, program, constants)  # the kernel's rule, Laplace draws outside loops
    why = ""
    if cert is None:
        pure, why = _prove_pure(replace(decl, delta=None), program, constants, proof_seconds)
        if pure is not None and pure.certificate is not None:
            cert = replace(pure.certificate, delta=_part("show")(decl.delta))
            if not _part("check")(decl, program, cert).accepted:
                cert, why = None, "the proof kernel rejected the pure proof at the claim's delta"
    if cert is not None:
        return Verdict(decl.name, "proved", decl.privacy, claim_text, certificate=cert, stream=stream)
    mirror = _part("mirrored")(decl, info)
    infos = [info] + ([_part("analyse")(mirror, constants)] if mirror is not None else [])
    searched = ""
    cap = time.process_time() + refute_seconds
    for each in infos:
        counterexample, searched = _part("refute")(each, max(0.0, cap - time.process_time()),
                                                   candidates=REFUTE_CANDIDATES)
        if counterexample is not None:
            return _refuted(info, claim_text, counterexample)
    pure_text = _part("show")(decl.privacy)
    reason = (f"no proof found (the pure claim `privacy {pure_text}`, which would give the (eps, delta) claim for "
              f"every delta, has none: {why}; this version proves `privacy (eps, delta)` with Laplace draws only "
              f"through the pure claim); {searched}")
    return Verdict(decl.name, "unknown", decl.privacy, claim_text, reason, stream=stream)


def _kernel_checked(info: MechanismInfo, program: Program | None, results: list, claim_text: str) -> Verdict:
    """"proved" only when the independent kernel accepts the prover's
    certificate (the de Bruijn criterion, architecture.md); a certificate it
    rejects is a prover bug: the verdict is then "unknown", naming the failed
    obligation."""
    from dataclasses import replace

    decl, Verdict = info.decl, _part("Verdict")
    stream = info.result_sort == "stream"
    sides = [results[0].trace.side] + [replace(r.trace.side, orientation="reversed") for r in results[1:]]
    certificate = _part("certificate")(info, sides, info.whole)
    decision = _part("check")(decl, program, certificate)
    if not decision.accepted:
        reason = (f"internal error: the proof kernel rejected the prover's proof ({decision.reason}); "
                  "nothing is proved")
        return Verdict(decl.name, "unknown", decl.privacy, claim_text, reason, stream=stream)
    vacuous = _part("vacuity")(info)
    return Verdict(decl.name, "proved", decl.privacy, claim_text, vacuous, results[0].trace,
                   stream=stream, vacuous=vacuous is not None, certificate=certificate)


def prove_only(decl: MechanismDecl, program: Program | None, constants: Mapping[str, Fraction],
               proof_seconds: float = PROOF_SECONDS) -> Verdict | None:
    """The proof search and the kernel alone (no refutation, no caches): a
    kernel-accepted "proved" verdict, or None. For trying other claims
    (`cheapest.cheapest_claim`)."""
    from fuzzpy.support.interrupts import prepare_z3

    prepare_z3()
    try:
        return _prove_pure(_part("as_vectors")(decl), program, dict(constants), proof_seconds)[0]
    except FuzzError:
        return None


def _prove_pure(decl: MechanismDecl, program: Program | None, constants: dict[str, Fraction],
                proof_seconds: float) -> tuple[Verdict | None, str]:
    """`prove_only`'s search: a kernel-accepted verdict, or None and why no proof was found."""
    analyse, search = _part("analyse"), _part("search")
    info = analyse(decl, constants)
    mirror = _part("mirrored")(decl, info)
    infos = [info] + ([analyse(mirror, constants)] if mirror is not None else [])
    results = [search(each, proof_seconds) for each in infos]
    failed = next((r for r in results if not r.proved), None)
    if failed is not None:
        return None, failed.reason
    verdict = _kernel_checked(info, program, results, _part("show")(decl.privacy))
    if verdict.proved or mirror is not None:
        return (verdict, "") if verdict.proved else (None, verdict.reason or "")
    reversed_decl = _part("negated")(decl)
    if reversed_decl is not None:
        reversed_result = search(analyse(reversed_decl, constants), proof_seconds)
        if reversed_result.proved:
            verdict = _kernel_checked(info, program, [*results, reversed_result], verdict.claim_text)
    return (verdict, "") if verdict.proved else (None, verdict.reason or "")


def _refuted(info: MechanismInfo, claim_text: str, counterexample: Counterexample) -> Verdict:
    decl = info.decl
    return _part("Verdict")(decl.name, "refuted", decl.privacy, claim_text, f"the claim `privacy {claim_text}` is false",
                   None, _part("with_flags")(counterexample, decl), stream=info.result_sort == "stream")


def _timed(verdict: Verdict, seconds: float) -> Verdict:
    from dataclasses import replace

    return replace(verdict, seconds=seconds)
