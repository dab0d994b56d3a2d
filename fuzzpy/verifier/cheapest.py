"""What a refuted mechanism does achieve: the cheapest claim the verifier proves.

    cheapest_claim(decl, program, constants, counterexample) -> Cheaper | None

Candidates are costs a proof could pay: for each draw of scale b, a shift of
0, 1 or 2 (an input or a threshold moved by 1, a comparison kept by moving
both sides: LightDP's usual alignments), costing shift / b (Zhang & Kifer
2017, Thm. 1) once, or, for a draw in a loop, once per trip that pays, at most
the loop's counter bound (`count < N`) or the input's length. A candidate the
counterexample already refutes (its value at the counterexample's parameters
is below the log-ratio found) is skipped; the others are proved cheapest
first, each by the prover and then the proof kernel (a candidate is "proved"
only as every claim is). The first one proved is reported, with the
obligation the kernel finds failing when that proof is checked against the
original claim.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.language.syntax import Binary, Call, Expr, MechanismDecl, NumLit, Var, While
from fuzzpy.support.records import frozen
from fuzzpy.verifier.text import show
from fuzzpy.verifier.walk import statements, sub_expressions

if TYPE_CHECKING:
    from fuzzpy.language.syntax import Program
    from fuzzpy.verifier.refuter import Counterexample

#: candidates carried to a proof attempt, and a CPU cap over all of them
MAX_ATTEMPTS = 12
SECONDS = 90.0


@frozen
class Cheaper:
    claim: str  # the cheapest claim proved
    tried: tuple[str, ...]  # the claims tried before it (not proved)
    failing: str  # the obligation that fails for the original claim under that proof ("" if not found)
    costs: tuple[str, ...] = ()  # the claim's terms, each with the draw it budgets


def cheapest_claim(decl: MechanismDecl, program: Program | None, constants: dict[str, Fraction],
                   counterexample: Counterexample | None) -> Cheaper | None:
    from fuzzpy.verifier import prove_only
    from fuzzpy.verifier.kernel.inputs import parse_head

    started = time.process_time()
    tried: list[str] = []
    terms = _terms_of(decl, counterexample)
    for text in candidates(decl, counterexample):
        if len(tried) >= MAX_ATTEMPTS or time.process_time() - started > SECONDS:
            break
        try:
            _, claim, _ = parse_head(tuple(show(r) for r in decl.requires), text)
        except Exception:  # noqa: BLE001 - a candidate that does not parse is skipped
            continue
        trial = dataclasses.replace(decl, privacy=claim)
        verdict = prove_only(trial, program, constants)
        if verdict is not None and verdict.proved and verdict.certificate is not None:
            # the claim's terms, each with the draw it budgets (issue 30 review: the
            # game's per-draw lines left out the per-trip factor and unbounded draws,
            # so they did not add up to the claim); the kernel checked the sum
            return Cheaper(text, tuple(tried), _failing(decl, program, verdict.certificate), terms.get(text, ()))
        tried.append(text)
    return None


def _failing(decl: MechanismDecl, program: Program | None, certificate: object) -> str:
    """The kernel's verdict on the cheaper proof held to the original claim."""
    from fuzzpy.verifier.kernel import check

    moved = dataclasses.replace(certificate, claim=show(decl.privacy))  # type: ignore[type-var]
    decision = check(decl, program, moved)
    return "" if decision.accepted else decision.reason.replace(" (line 0)", "")


# ---------------------------------------------------------------- candidates


def candidates(decl: MechanismDecl, counterexample: Counterexample | None) -> list[str]:
    """Claims as text, cheapest first (at sample parameter values), above what
    the counterexample shows."""
    return list(_ranked(decl, counterexample))


def _terms_of(decl: MechanismDecl, counterexample: Counterexample | None) -> dict[str, tuple[str, ...]]:
    return _ranked(decl, counterexample)


def _ranked(decl: MechanismDecl, counterexample: Counterexample | None) -> dict[str, tuple[str, ...]]:
    """The candidate claims, cheapest first, each with its terms explained
    (which draw, which shift, once or per trip)."""
    from fuzzpy.language.syntax import Noise

    draws: list[tuple[Expr, Expr | None, int]] = []  # (scale, trips bound or None outside loops, line)
    for stmt in decl.body:
        from fuzzpy.verifier.walk import stmt_expressions

        loop_bound = _trip_bound(decl, stmt) if isinstance(stmt, While) else None
        # every draw: a loop's guard and body, an `if`'s arms (issue 30 review: a
        # draw in a loop guard was left out, so `3 * eps / 2` was never tried)
        tops = [stmt.cond] if isinstance(stmt, While) else []
        tops += [t for s in statements(stmt.body if isinstance(stmt, While) else (stmt,)) for t in stmt_expressions(s)]
        for top in tops:
            for e in sub_expressions(top):
                if isinstance(e, Noise):
                    draws.append((e.scale, loop_bound, e.span.line))
    if not draws or len(draws) > 4:
        return {}
    options = []
    for scale, bound, line in draws:
        choices: list[tuple[str, str]] = [("", "")]
        for shift in (1, 2):
            term = _per_draw(shift, scale)
            how = f"budget for the draw at line {line}: a shift of {shift} at scale {show(scale)}"
            choices.append((term, f"{term}: {how}, once"))
            if bound is not None:
                many = f"{show(bound, 5)} * {term}"
                choices.append((many, f"{many}: {how}, on each of at most {show(bound)} trips"))
        options.append(choices)
    sample = _sample(decl, counterexample)  # where the counterexample is: a claim must reach its log-ratio
    ranking = {p.name: Fraction(2) for p in decl.params}  # where claims are ranked (a bound N counts there)
    ranking.update({k: v for k, v in sample.items() if k == "eps"})
    found: dict[str, tuple[float, float]] = {}
    explained: dict[str, tuple[str, ...]] = {}
    for combo in itertools.product(*options):
        terms = [t for t, _ in combo if t]
        if not terms:
            continue
        text = " + ".join(terms)
        value, rank = _value(text, sample), _value(text, ranking)
        if value is None or rank is None:
            continue
        found.setdefault(text, (value, rank))
        explained.setdefault(text, tuple(why for _, why in combo if why))
    floor = counterexample.log_ratio if counterexample is not None else 0.0
    claim_value = _value(show(decl.privacy), ranking) or 0.0
    # a candidate the refuted claim bounds everywhere is refuted too; one above it
    # for long inputs or large parameters is not (`len(q) * eps / 4` against `eps`)
    far = {p.name: Fraction(1000) for p in decl.params}
    far.update({k: v for k, v in sample.items() if k == "eps"})
    far.update({f"len:{name}": Fraction(1000) for name in _vector_names(decl)})
    claim_far = _value(show(decl.privacy), far) or 0.0

    def above(text: str, rank: float) -> bool:
        return rank > claim_value or (_value(text, far) or 0.0) > claim_far

    ranked = sorted((r, len(t), t) for t, (v, r) in found.items() if above(t, r) and v >= floor - 1e-9)
    seen_values: set[tuple[float, float]] = set()
    out: dict[str, tuple[str, ...]] = {}
    for v, _, t in ranked:
        key = (round(v, 9), round(_value(t, far) or 0.0, 9))  # equal at one length need not be equal
        if key in seen_values:
            continue
        seen_values.add(key)
        out[t] = explained[t]
    return out


def _vector_names(decl: MechanismDecl) -> list[str]:
    from fuzzpy.language.syntax import TyVec

    return [p.name for p in decl.params if isinstance(p.type, TyVec)]


def _per_draw(shift: int, scale: Expr) -> str:
    """shift / scale as text: `2 / (4 / (3 * eps))` as `3 * eps / 2`."""
    if isinstance(scale, Binary) and scale.op == "/" and isinstance(scale.left, NumLit):
        k = Fraction(shift) / scale.left.value
        right = show(scale.right, 5)
        head = right if k.numerator == 1 else f"{k.numerator} * {right}"
        return head if k.denominator == 1 else f"{head} / {k.denominator}"
    return f"{shift} / ({show(scale)})"


def _trip_bound(decl: MechanismDecl, loop: While) -> Expr | None:
    """How many trips may pay: N in a guard `count < N` (N a parameter), else the input's length."""
    params = {p.name for p in decl.params}
    for e in sub_expressions(loop.cond):
        if isinstance(e, Binary) and e.op in ("<", "<=") and isinstance(e.right, Var) and e.right.name in params:
            return e.right
    for e in sub_expressions(loop.cond):
        if isinstance(e, Call) and e.func == "len":
            return e
    return None


def _sample(decl: MechanismDecl, counterexample: Counterexample | None) -> dict[str, Fraction]:
    values = {p.name: Fraction(2) for p in decl.params}
    if counterexample is not None:
        values.update(counterexample.params)
        values["eps"] = counterexample.eps
        for name, vector in counterexample.inputs.items():
            values[f"len:{name}"] = Fraction(len(vector))
    return values


def _value(text: str, sample: dict[str, Fraction]) -> float | None:
    from fuzzpy.verifier.kernel.inputs import parse_head

    try:
        _, expr, _ = parse_head((), text)
        return float(_eval(expr, sample))
    except Exception:  # noqa: BLE001 - a claim we cannot evaluate is not ranked
        return None


def _eval(e: Expr, sample: dict[str, Fraction]) -> Fraction:
    if isinstance(e, NumLit):
        return e.value
    if isinstance(e, Var):
        return sample[e.name]
    if isinstance(e, Call) and e.func == "len" and isinstance(e.args[0], Var):
        return sample.get(f"len:{e.args[0].name}", Fraction(3))
    if isinstance(e, Binary):
        a, b = _eval(e.left, sample), _eval(e.right, sample)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b}[e.op]()
    raise ValueError(type(e).__name__)
