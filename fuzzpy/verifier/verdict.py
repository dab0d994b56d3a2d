"""What `verify` concludes about one mechanism, and its JSON form (language.md §7)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import mpmath

from fuzzpy.language.syntax import Expr
from fuzzpy.support.records import frozen

if TYPE_CHECKING:  # not at run time: a cached proof is read without loading the prover (and z3)
    from fuzzpy.verifier.kernel.certificate import Certificate
    from fuzzpy.verifier.prover import ProofTrace
    from fuzzpy.verifier.refuter import Counterexample


@frozen
class Verdict:
    """``status`` is "proved", "refuted" or "unknown".

    ``claim`` is the mechanism's privacy expression over its parameters (what
    a caller is charged once the parameters are known); ``claim_text`` its
    source text. ``proof`` is set when proved, ``counterexample`` when refuted,
    ``reason`` says why a mechanism is not proved, or, for a vacuous proof
    (contradictory `requires`), that it is vacuous.
    """

    name: str
    status: str
    claim: Expr
    claim_text: str
    reason: str | None = None
    proof: ProofTrace | None = None
    counterexample: Counterexample | None = None
    stream: bool = False  # the mechanism releases a list of outputs
    seconds: float = 0.0
    vacuous: bool = False  # proved only because no inputs satisfy the `requires` (reason says which)
    certificate: Certificate | None = None  # the proof the kernel accepted (when proved)

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "claim": self.claim_text,
            "verdict": self.status,
            "counterexample": (
                counterexample_json(self.counterexample, self.stream) if self.counterexample else None
            ),
            "reason": self.reason,
            **({"certificate": self.certificate.to_json()} if self.proved and self.certificate is not None else {}),
        }


def number_json(value: Fraction | float) -> float | int | str:
    """Numbers as JSON numbers (integers stay integers); infinity as "inf"."""
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else float(value)
    if math.isinf(value):
        return "inf"
    return value


def _vector_json(vectors: dict[str, list[Fraction]], scalars: dict[str, Fraction],
                 flags: tuple[str, ...] = ()) -> dict[str, object]:
    document: dict[str, object] = {name: [number_json(x) for x in values] for name, values in vectors.items()}
    document.update({name: value == 1 if name in flags and value in (0, 1) else number_json(value)
                     for name, value in scalars.items()})
    return document


def output_json(value: object) -> object:
    if isinstance(value, bool):
        return value
    if isinstance(value, Fraction):
        return number_json(value)
    return str(value)


def _mp_json(value: mpmath.mpf) -> float | str:
    """A probability or ratio as a JSON number, or as decimal text where a
    double would round it to 0 or inf (a ratio of e^1000 is finite)."""
    as_float = float(value)
    if (as_float == 0.0 and value != 0) or math.isinf(as_float):
        return mpmath.nstr(value, 17)
    return as_float


def counterexample_json(cx: Counterexample, stream: bool) -> dict[str, object]:
    output = [output_json(v) for v in cx.output]
    return {
        "inputs": _vector_json(cx.inputs, cx.params, cx.flags),
        "neighbour": _vector_json(cx.neighbour, cx.neighbour_params, cx.flags),
        # a path that ends without `return` releases nothing: `null` (issue 30 review)
        "output": output if stream else (output[0] if output else None),
        "eps": number_json(cx.eps),
        "ratio": "inf" if cx.infinite else _mp_json(cx.p_inputs / cx.p_neighbour),
        "log_ratio": number_json(cx.log_ratio),
        "p_inputs": _mp_json(cx.p_inputs),
        "p_neighbour": _mp_json(cx.p_neighbour),
        "density": cx.density,
        # `privacy (eps, delta)`: p_inputs > e^eps * p_neighbour + delta (p_inputs a lower, p_neighbour an upper bound)
        **({"delta": number_json(cx.delta)} if cx.delta is not None else {}),
    }
