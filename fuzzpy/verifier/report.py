"""Rendering verdicts: the one-line summary, the lecture-style proof, refutations."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import mpmath

from fuzzpy.language.figures import text_down, text_up
from fuzzpy.verifier.lecture import AND
from fuzzpy.verifier.verdict import Verdict, output_json

if TYPE_CHECKING:  # not at run time: rendering a cached proof loads neither the prover nor z3
    from fuzzpy.verifier.cheapest import Cheaper
    from fuzzpy.verifier.game import GameProof, LoopClauses
    from fuzzpy.verifier.kernel.certificate import Certificate
    from fuzzpy.verifier.path_shift import PathObligation
    from fuzzpy.verifier.prover import ProofTrace
    from fuzzpy.verifier.refuter import Counterexample


def summary(verdict: Verdict) -> str:
    head = f"{verdict.name}: {verdict.status}, privacy {verdict.claim_text}"
    if verdict.status == "unknown":
        return f"{head}\n  reason: {verdict.reason}"
    if verdict.vacuous:
        return f"{head}\n  note: {verdict.reason}"
    return head


def render(verdict: Verdict, explain: bool | str, game: GameProof | None = None) -> str:
    """``explain``: False, "summary" (or True: the short proof), "game" (the
    verification game, from ``game``; the short proof when there is none)."""
    lines = [summary(verdict)]
    if verdict.counterexample is not None:
        lines += refutation_lines(verdict.counterexample, verdict.stream)
    cert = verdict.certificate
    if explain and verdict.proved and cert is not None and (cert.delta or any(
            d.kind == "gauss" for side in cert.sides for d in side.draws)):
        lines += gaussian_lines(cert)
    elif explain == "game" and game is not None:
        lines += game_lines(game)
    elif explain and verdict.proof is not None:
        lines += proof_lines(verdict.proof, verdict.certificate)
    return "\n".join(lines)


def gaussian_lines(cert: Certificate) -> list[str]:
    """An approximate-DP proof (docs/verifier-kernel.md, "Gaussian draws"): what the kernel checked."""
    lines = ["  the Gaussian rule (randomness alignment; every Gaussian shift independent of the noise):"]
    for side in cert.sides:
        if len(cert.sides) > 1:
            lines.append(f"    relation {side.orientation}:")
        for d in side.draws:
            if d.kind == "gauss":
                lines.append(f"    line {d.at.line}: gauss, shift {d.shift}: |shift| <= {d.bound} * sigma on every path")
            else:
                lines.append(f"    line {d.at.line}: {d.kind}, shift {d.shift}: pays |shift| / scale (pure)")
        lines += [f"    the loop at line {t.at.line} makes at most {t.trips} trips (its counter, checked at entry)"
                  for t in side.trips]
        lines.append(f"    mu^2 <= the sum of bound^2 over the Gaussian draws, times their loop's trips; the Gaussian "
                     f"part's share of eps: E = {_number(Fraction(side.gauss_eps))}")
        lines.append("    the Laplace draws pay at most eps - E on every path, and delta >= delta_mu(E) = "
                     "Phi(-E/mu + mu/2) - e^E Phi(-E/mu - mu/2), rounded up (Balle & Wang 2018, Thm. 8)")
    return lines


def cheaper_lines(verdict: Verdict, cheaper: Cheaper | None, obligation: PathObligation | None = None) -> list[str]:
    """Why a refuted claim fails, and what the mechanism does achieve; with no
    cheaper claim, the obligation the counterexample's paths break (issue 30, item 3)."""
    claim = verdict.claim_text
    if cheaper is None:
        return [f"  no claim above `privacy {claim}` was proved among the costs a proof could pay (a shift of",
                "    0, 1 or 2 per draw, once or once per paying trip)", *obligation_lines(obligation)]
    lines = [f"  cheapest claim the verifier proves: privacy {cheaper.claim}"]
    if cheaper.costs:
        lines.append("    its terms (a budget per draw; the proof kernel checked every path's cost against their sum):")
        lines += [f"      {cost}" for cost in cheaper.costs]
    if cheaper.tried:
        lines.append(f"    (not proved, cheaper: {'; '.join(cheaper.tried)})")
    if cheaper.failing:
        lines.append(f"  held to `privacy {claim}`, that proof fails: {cheaper.failing}")
    return lines


def obligation_lines(obligation: PathObligation | None) -> list[str]:
    """The failed obligation of `path_shift.path_obligation`, for a reader."""
    if obligation is None:
        return []
    lines = ["  the obligation that fails on the counterexample's two paths (run 2 draws eta + s where run 1",
             "    draws eta; each test of run 1 must still hold in run 2, each released value stay equal;",
             "    a Laplace draw of scale b pays |s| / b, a one-sided Lap+ draw allows only s >= 0):"]
    if obligation.cost is None:
        lines.append("    no shift s keeps both paths and the output (the cost of any proof is unbounded):")
        lines += [f"      {need}" for need in obligation.conflict]
        lines.append("    these requirements on s contradict each other")
        return lines
    for s in obligation.shifts:
        noise = f"{'Lap+' if s.kind == 'lapplus' else 'Lap'}({_number(s.scale)})"
        lines.append(f"    eta{s.index + 1} ~ {noise} needs a shift of {_number(s.by)}: it pays {_number(s.pays)}")
    lines.append(f"    the cheapest shift costs {_number(obligation.cost)} > the claim {_number(obligation.claim)}")
    return lines


def game_lines(game: GameProof) -> list[str]:
    """The proof as the lecture plays the verification game."""
    rule = "pointwise rule" if game.rule == "pointwise" else "randomness alignment"
    lines = [f"  the verification game ({rule}; x<1>, x<2>: x in the run on the input and on its neighbour;",
             "    dist(e) = e<2> - e<1>; a draw eta in run 1 is eta + shift in run 2):",
             "    precondition:"]
    lines += [f"      {p}" for p in game.precondition]
    lines.append(f"    postcondition: {game.postcondition}")
    if len(game.orientations) > 1:
        lines.append("    (the relation is one-sided: the game is played for it reversed too, every distance negated)")
    lines.append("    statement by statement (assertion after each):")
    if any(" before)" in step.assertion or any(" before)" in r.post + r.shift for r in step.rules)
           for step in game.steps):
        lines.append("      (dist(x before): x as the statement found it, before its assignment)")
    for step in game.steps:
        pad = "  " * step.depth
        head = f"      line {step.line:<3} {pad}{step.statement}"
        lines.append(f"{head}  {step.assertion}" if step.assertion and len(head) + len(step.assertion) < 110
                     else head)
        if step.assertion and len(head) + len(step.assertion) >= 110:
            lines.append(f"               {pad}  {step.assertion}")
        for use in step.rules:
            case = f"case {use.case}: " if use.case else ""
            lines.append(f"               {pad}  {case}{use.rule}, shift {use.shift}")
            lines.append(f"               {pad}    pre {use.pre}; post {use.post}; paid {use.paid}")
    for loop in game.loops:
        side = "" if loop.orientation == "forward" else " (relation reversed)"
        if loop.lecture is not None and loop.lecture.checked:
            lines += lecture_lines(loop, side)
            continue
        if loop.lecture is not None and loop.lecture.note:
            lines.append(f"    (loop at line {loop.line}: not shown in the lecture's shape: {loop.lecture.note})")
        if loop.minimised:
            how = f"the clauses the kernel needs (of the {loop.found} found)"
        elif len(loop.clauses) < loop.found:
            how = f"the clauses left of the {loop.found} found (the kernel's trimming stopped at its budget)"
        else:
            how = "the clauses as found"
        lines.append(f"    loop invariant at line {loop.line}, while ({loop.guard}){side}: {how}")
        cases: dict[str, list[str]] = {}
        for clause in loop.clauses:
            cases.setdefault(clause.case, []).append(clause.text + ("  (your hint)" if clause.hint else ""))
        for case, texts in cases.items():
            label = f"when {case}:" if case else "in every case:"
            lines.append(f"      {label}")
            lines += [f"        {text}" for text in texts]
        lines += entry_lines(loop)
    if game.obligations:
        lines.append("    obligations the kernel discharged (z3, one validity check per path):")
        lines += [f"      {text}" for text in game.obligations]
    lines.append("    cost:")
    lines += [f"      {text}" for text in game.closing]
    return lines


def lecture_lines(loop: LoopClauses, side: str) -> list[str]:
    """A loop invariant as the lecture states it: public equalities, before s,
    after s, every case, paid (fuzzpy.verifier.lecture)."""
    lecture = loop.lecture
    assert lecture is not None
    how = "the clauses the kernel needs" if lecture.minimised else "the proof's clauses"
    lines = [f"    loop invariant at line {loop.line}, while ({loop.guard}){side}, in the lecture's shape ({how};",
             "      the kernel re-checked it in place of the proof's: initiation, consecution, what follows the loop):"]
    lines += [f"        {text}" for text in lecture.formula]
    groups = [("public", lecture.public), (f"before s ({lecture.split})", lecture.before),
              ("after s", lecture.after), ("in every case", lecture.relational), ("paid", lecture.cost)]
    named = "; ".join(name for name, texts in groups if texts)
    lines.append(f"      (the clauses, in order: {named}" + ("; paid0: what was paid when the loop was entered)"
                                                          if any("paid0" in t for t in lecture.formula) else ")"))
    lines += entry_lines(loop)
    if lecture.note:
        lines.append(f"      {lecture.note}")
    return lines


def entry_lines(loop: LoopClauses) -> list[str]:
    """What the loop's invariant is inductive together with: the facts from before
    the loop about the values no trip assigns, and paid0 (fuzzpy.verifier.game._entry_facts)."""
    if not loop.entry:
        return []
    return ["      inductive together with what held when the loop was entered (the kernel keeps, at every trip,",
            "      the values no trip assigns, and what was paid before the loop):",
            "        " + AND.join(loop.entry)]


def proof_lines(proof: ProofTrace, certificate: Certificate | None = None) -> list[str]:
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
    released = "out = s implies out' = s" if proof.pointwise else "both runs release equal values"
    apart = sorted({b.at.line for side in (certificate.sides if certificate is not None else ())
                    for b in side.branches if b.rule == "either"})
    if apart:  # the runs may branch apart there (issue 30: never claim they take the same branches)
        where = ", ".join(str(line) for line in apart)
        lines.append(f"    the `if` at line{'s' if len(apart) > 1 else ''} {where} may take different arms in the two "
                     "runs (its arms only assign:")
        lines.append("      each run executes its own, every combination checked); every other branch and loop guard")
        lines.append(f"      is taken alike by both runs; at the end {released}")
    else:
        lines.append(f"    every path: both runs take the same branches, and {released}")
    lines.append(f"    cost <= {proof.claim} for every path")
    return lines


def _number(value: object) -> str:
    text = output_json(value)
    if isinstance(text, bool):
        return "true" if text else "false"
    return str(text)


def _scalar(name: str, value: object, flags: tuple[str, ...]) -> str:
    """A parameter's value; a `bool` parameter's 0/1 as false/true."""
    if name in flags and value in (0, 1):
        return "true" if value == 1 else "false"
    return _number(value)


def _vectors(vectors: dict, scalars: dict) -> str:
    parts = [f"{name} = [{', '.join(_number(x) for x in values)}]" for name, values in vectors.items()]
    return ", ".join(parts) if parts else "(no vector inputs)"


NO_VALUE = "no value returned (the run ends without `return`)"


def refutation_lines(cx: Counterexample, stream: bool) -> list[str]:
    kind = "density" if cx.density else "P"
    params = ", ".join(f"{k} = {_scalar(k, v, cx.flags)}" for k, v in cx.params.items())
    changed = {k: v for k, v in cx.neighbour_params.items() if cx.params.get(k) != v}
    output = [_number(v) for v in cx.output]
    shown = f"[{', '.join(output)}]" if stream else (output[0] if output else NO_VALUE)
    word = _claim_word(cx)
    at = f"at eps = {_number(cx.eps)}" if word == "eps" else f"where the claim is {_number(cx.eps)}"
    lines = [
        f"  counterexample {at} (parameters: {params or 'none'})",
        f"    inputs     {_vectors(cx.inputs, cx.params)}",
        f"    neighbour  {_vectors(cx.neighbour, cx.neighbour_params)}"
        + (f" with {', '.join(f'{k} = {_scalar(k, v, cx.flags)}' for k, v in changed.items())}" if changed else ""),
        f"    output     {shown}",
        f"    {kind}[output | inputs]    = {mpmath.nstr(cx.p_inputs, 12)}",
        f"    {kind}[output | neighbour] = {mpmath.nstr(cx.p_neighbour, 12)}",
    ]
    if cx.delta is not None:
        lines += _delta_lines(cx)
        return lines
    lines.append(_ratio_line(cx))
    lines.append("    (probabilities in closed form, evaluated to 50 significant digits)")
    lines += _window_lines(cx)
    if cx.eps < 0:
        lines.append("    (a claim below 0 is false for every mechanism: the event `any output` has probability 1")
        lines.append(f"     under both inputs, and 1 > e^{word} = {_text(_exp(cx.eps), up=True)})")
    return lines


def _window_lines(cx: Counterexample) -> list[str]:
    """The event a density's refutation was re-checked on (`_Search.confirm_density`)."""
    window = cx.window
    if window is None:
        return []
    side = ("within " + _number(window.high) if window.low == -window.high
            else "up to " + _number(window.high) + " above" if window.low == 0
            else "up to " + _number(-window.low) + " below")
    ratio = "inf" if window.p_neighbour == 0 else mpmath.nstr(window.p_inputs / window.p_neighbour, 6)
    return [f"    checked on an event: each released number {side} of it (every draw integrated, none pinned):",
            f"      P = {mpmath.nstr(window.p_inputs, 6)} vs {mpmath.nstr(window.p_neighbour, 6)}, ratio {ratio}"]


def _delta_lines(cx: Counterexample) -> list[str]:
    """An (eps, delta) refutation: P1 > e^eps P2 + delta, P1 rounded down and the right side up."""
    assert cx.delta is not None
    with mpmath.workdps(50):
        right = _exp(cx.eps) * cx.p_neighbour + mpmath.mpf(cx.delta.numerator) / cx.delta.denominator
        inequality = (f"    P[output | inputs] = {_text(cx.p_inputs, up=False)} > e^{_claim_word(cx)} * "
                      f"P[output | neighbour] + delta = {_text(right, up=True)}  (delta = {_number(cx.delta)})")
    if cx.exact:  # the Laplace refuter: exact probabilities, not bounds
        return [inequality, "    (probabilities in closed form, evaluated to 50 significant digits)"]
    return [inequality, "    (Gaussian probabilities in closed form, Phi evaluated to 50 significant digits; the",
            "     inputs' probability is a lower bound, the neighbour's an upper bound)"]


def _claim_word(cx: Counterexample) -> str:
    """`eps` for the claim's value, unless a parameter named `eps` holds another
    value (a claim `2 * eps` at eps = 1 printed `at eps = 2 (parameters: eps = 1)`
    and `e^eps = 7.389`): then `claim`."""
    value = cx.params.get("eps")
    return "eps" if value is None or value == cx.eps else "claim"


def _exp(value: Fraction) -> mpmath.mpf:
    with mpmath.workdps(50):
        return mpmath.exp(mpmath.mpf(value.numerator) / value.denominator)


def _ratio_line(cx: Counterexample) -> str:
    """`ratio > e^eps` as text that keeps the inequality true (issue 25): the
    ratio and its log rounded down, e^eps and eps up (`_text`)."""
    with mpmath.workdps(50):
        eps = mpmath.mpf(cx.eps.numerator) / cx.eps.denominator
        bound = _text(mpmath.exp(eps), up=True)
        eps_text = text_up(cx.eps)
        if cx.infinite:
            return f"    ratio = inf > e^{_claim_word(cx)} = {bound}  (the neighbour cannot produce this output)"
        log_ratio = _text(mpmath.log(cx.p_inputs) - mpmath.log(cx.p_neighbour), up=False)
        if math.isinf(cx.ratio):  # finite, beyond the double range
            ratio = f"e^{log_ratio}"
        else:
            ratio = _text(cx.p_inputs / cx.p_neighbour, up=False)
    return f"    ratio = {ratio} > e^{_claim_word(cx)} = {bound}  (log-ratio {log_ratio} > {eps_text})"


def _text(value: mpmath.mpf, up: bool) -> str:
    """A 50-digit value as 6 digits, rounded up or down. The values are
    closed forms evaluated to 50 digits: one within 10^-30 (relative) of a
    6-digit decimal is shown as that decimal (log-ratio 1.5, not 1.49999);
    any other is moved 10^-30 the safe way first, far beyond its error."""
    exact = _fraction(value)
    nearest = text_up(exact) if up else text_down(exact)
    if abs(Fraction(nearest) - exact) <= abs(exact) * Fraction(1, 10**30):
        return nearest
    padded = exact * (1 + Fraction(1, 10**30) * (1 if (exact > 0) == up else -1))
    return text_up(padded) if up else text_down(padded)


def _fraction(value: mpmath.mpf) -> Fraction:
    mantissa, exponent = value.man_exp
    return Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
