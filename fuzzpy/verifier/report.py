"""Rendering verdicts: the one-line summary, the lecture-style proof, refutations."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import mpmath

from fuzzpy.verifier.verdict import Verdict, output_json

if TYPE_CHECKING:  # not at run time: rendering a cached proof loads neither the prover nor z3
    from fuzzpy.verifier.prover import ProofTrace
    from fuzzpy.verifier.refuter import Counterexample


def summary(verdict: Verdict) -> str:
    head = f"{verdict.name}: {verdict.status}, privacy {verdict.claim_text}"
    if verdict.status == "unknown":
        return f"{head}\n  reason: {verdict.reason}"
    if verdict.vacuous:
        return f"{head}\n  note: {verdict.reason}"
    return head


def render(verdict: Verdict, explain: bool) -> str:
    lines = [summary(verdict)]
    if verdict.counterexample is not None:
        lines += refutation_lines(verdict.counterexample, verdict.stream)
    if explain and verdict.proof is not None:
        lines += proof_lines(verdict.proof)
    return "\n".join(lines)


def proof_lines(proof: ProofTrace) -> list[str]:
    lines = ["  proof (randomness alignment; a draw eta becomes eta + a in the neighbouring run):"]
    if proof.pointwise:
        lines.append("    rule: pointwise equality: fix an output s; show out = s implies out' = s,")
        lines.append("          with alignments that may depend on s")
        for name in proof.split_on:
            lines.append(f"    case split: {name} < s (before the output's draw), {name} == s (its draw is"
                         f" shifted), {name} > s (after it)")
    lines.append("    draws:")
    for number, (line, draw, alignment, rule) in enumerate(proof.alignments, start=1):
        lines.append(f"      a{number}  line {line:<3} {draw:<18} align {alignment}")
        lines.append(f"                {'':<18} {rule}")
    for loop in proof.loops:
        lines.append(f"    invariant at the loop head (line {loop.line}, while {loop.guard}):")
        lines += [f"      {atom}" for atom in loop.essential()]
    if proof.paths:
        lines.append("    cost paid per path (a_k: the shift of draw k):")
        lines += [f"      {path}" for path in proof.paths]
    released = "out = s implies out' = s" if proof.pointwise else "release equal values"
    lines.append("    every path: both runs take the same branches (an `if` whose arms only assign may")
    lines.append(f"      differ: merged per run, nested `if`s included), read the same entries, {released}")
    lines.append(f"    cost <= {proof.claim} for every path")
    return lines


def _number(value: object) -> str:
    text = output_json(value)
    if isinstance(text, bool):
        return "true" if text else "false"
    return str(text)


def _vectors(vectors: dict, scalars: dict) -> str:
    parts = [f"{name} = [{', '.join(_number(x) for x in values)}]" for name, values in vectors.items()]
    return ", ".join(parts) if parts else "(no vector inputs)"


def refutation_lines(cx: Counterexample, stream: bool) -> list[str]:
    kind = "density" if cx.density else "P"
    params = ", ".join(f"{k} = {_number(v)}" for k, v in cx.params.items())
    changed = {k: v for k, v in cx.neighbour_params.items() if cx.params.get(k) != v}
    output = [_number(v) for v in cx.output]
    shown = f"[{', '.join(output)}]" if stream else output[0]
    lines = [
        f"  counterexample at eps = {_number(cx.eps)} (parameters: {params or 'none'})",
        f"    inputs     {_vectors(cx.inputs, cx.params)}",
        f"    neighbour  {_vectors(cx.neighbour, cx.neighbour_params)}"
        + (f" with {', '.join(f'{k} = {_number(v)}' for k, v in changed.items())}" if changed else ""),
        f"    output     {shown}",
        f"    {kind}[output | inputs]    = {mpmath.nstr(cx.p_inputs, 12)}",
        f"    {kind}[output | neighbour] = {mpmath.nstr(cx.p_neighbour, 12)}",
    ]
    bound = math.exp(float(cx.eps))
    if cx.infinite:
        lines.append(f"    ratio = inf > e^eps = {bound:.6g}  (the neighbour cannot produce this output)")
    elif math.isinf(cx.ratio):  # finite, beyond the double range
        lines.append(f"    ratio = e^{cx.log_ratio:.6g} > e^eps = {bound:.6g}  (log-ratio {cx.log_ratio:.6g} > {float(cx.eps):.6g})")
    else:
        lines.append(f"    ratio = {cx.ratio:.6g} > e^eps = {bound:.6g}  (log-ratio {cx.log_ratio:.6g} > {float(cx.eps):.6g})")
    lines.append("    (probabilities in closed form, evaluated to 50 significant digits)")
    return lines
