"""Approximate-DP mechanisms: `gauss(sigma) align d` draws and `privacy (eps, delta)` claims.

Not trusted (docs/verifier-kernel.md, "Gaussian draws"): this module only
*builds* a certificate in the simplest form the kernel's Gaussian rule
accepts and hands it to the kernel, which re-checks everything:

* every draw takes its `align` hint (none: shift 0), no selectors;
* a Gaussian draw's bound R (|shift| <= R sigma) from the shift's size (a
  number, or a vector distance: 1) and the least sigma the `requires` allow;
* every loop the invariant "each local is equal in both runs and the loop
  costs nothing" (the Laplace draws may sit outside loops only);
* a loop with Gaussian draws at most N trips, N from `requires len(q) <= N`
  (or a numeric bound);
* the epsilon share E of the Gaussian draws: the whole claim when there are
  no Laplace draws, else the least E with delta_mu(E) <= delta.

Whatever it cannot do is "unknown" with the reason.
"""

from __future__ import annotations

from fractions import Fraction

from fuzzpy.language.syntax import (
    Binary,
    Call,
    Dist,
    Expr,
    MechanismDecl,
    Noise,
    NumLit,
    Program,
    Stmt,
    TyList,
    TyVec,
    Unary,
    Var,
    VarDecl,
    While,
)
from fuzzpy.verifier.kernel import check
from fuzzpy.verifier.kernel.certificate import (
    Certificate,
    DrawAlignment,
    LoopInvariant,
    LoopTrips,
    Side,
    Where,
    numbering,
)
from fuzzpy.verifier.kernel.gaussian import counter_loop, delta_up, gauss_sites, noisy_variables
from fuzzpy.verifier.kernel.inputs import Reject, neighbours, walk
from fuzzpy.verifier.text import show
from fuzzpy.verifier.verdict import Verdict
from fuzzpy.verifier.walk import statements

__all__ = ["applies", "decide", "has_gauss", "prove_gaussian"]


class _Give(Exception):
    """The prover gives up: the reason."""


def applies(decl: MechanismDecl) -> bool:
    """An approximate-DP claim or a Gaussian draw: this prover (and the kernel's Gaussian rule)."""
    return decl.delta is not None or any(isinstance(e, Noise) and e.kind == "gauss"
                                         for s in statements(decl.body) for top in _exprs(s) for e in walk(top))


def decide(decl: MechanismDecl, program: Program | None, constants: dict[str, Fraction], claim_text: str) -> Verdict:
    """Proved (kernel-accepted), refuted (a certified counterexample), or unknown with the reason."""
    stream = isinstance(decl.result, TyList)
    cert, why = prove_gaussian(decl, program, constants)
    if cert is None and not has_gauss(decl):
        cert = _pure_then_delta(decl, program, constants) or None
    if cert is not None:
        return Verdict(decl.name, "proved", decl.privacy, claim_text, certificate=cert, stream=stream)
    from fuzzpy.verifier.gauss_refuter import refute_gaussian
    from fuzzpy.verifier.refuter import with_flags

    counterexample, searched = refute_gaussian(decl, constants)
    if counterexample is not None:
        return Verdict(decl.name, "refuted", decl.privacy, claim_text, f"the claim `privacy {claim_text}` is false",
                       counterexample=with_flags(counterexample, decl), stream=stream)
    return Verdict(decl.name, "unknown", decl.privacy, claim_text, f"no proof found ({why}); {searched}",
                   stream=stream)


def has_gauss(decl: MechanismDecl) -> bool:
    """Some draw of the body is Gaussian."""
    return any(isinstance(e, Noise) and e.kind == "gauss" for s in statements(decl.body) for top in _exprs(s) for e in walk(top))


def _pure_then_delta(decl: MechanismDecl, program: Program | None, constants: dict[str, Fraction]) -> Certificate | None:
    """No Gaussian draw: the pure claim eps proved by the usual search (and its
    kernel), then the same certificate, with the delta, checked by the kernel
    for `(eps, delta)` (eps-DP is (eps, delta)-DP for every delta >= 0)."""
    from dataclasses import replace

    from fuzzpy.verifier import prove_only

    pure = prove_only(replace(decl, delta=None), program, constants)
    if pure is None or pure.certificate is None or decl.delta is None:
        return None
    cert = replace(pure.certificate, delta=show(decl.delta))
    return cert if check(decl, program, cert).accepted else None


def prove_gaussian(decl: MechanismDecl, program: Program | None,
                   constants: dict[str, Fraction]) -> tuple[Certificate | None, str]:
    """A kernel-accepted certificate, or None and the reason."""
    try:
        cert = _certificate(decl, constants)
    except (_Give, Reject) as why:
        return None, str(why)
    decision = check(decl, program, cert)
    if not decision.accepted:
        unaligned = _unaligned(decl)
        if unaligned is not None and "delta_mu" not in decision.reason:
            return None, unaligned
        note = "" if "delta_mu" in decision.reason else f"; {_NOISE_FREE}"
        laplace = _laplace_note(decl, cert, decision.reason)
        if laplace is not None:
            note = f"; {laplace}"
        return None, f"the proof kernel rejected the Gaussian proof ({decision.reason}){note}"
    return cert, ""


def _laplace_note(decl: MechanismDecl, cert: Certificate, reason: str) -> str | None:
    """Why a mix of Laplace and Gaussian draws was rejected, when this prover
    knows it: a Laplace draw it took at shift 0 (no `align`: it searches no
    Laplace shifts here), or a cost over the claim once the Gaussian share is in."""
    draws = [e for s in statements(decl.body) for top in _exprs(s) for e in walk(top)
             if isinstance(e, Noise) and e.kind != "gauss"]
    if not draws:
        return None
    bare = next((e for e in draws if e.align is None), None)
    if bare is not None:
        return (f"line {bare.span.line}: the Laplace draw `{show(bare)}` has no `align`, and beside Gaussian draws "
                "this prover searches no Laplace shifts (it takes shift 0); add an `align` to it")
    if "cost <= claim" in reason:
        share = f"{float(Fraction(cert.sides[0].gauss_eps)):.4g}" if cert.sides else "?"
        return (f"the Gaussian draws take E ~ {share} of the claim's epsilon (the least E with delta_mu(E) <= "
                "delta), and the Laplace draws' cost does not fit in the rest")
    return None


def _unaligned(decl: MechanismDecl) -> str | None:
    """The first Gaussian draw without an `align` hint, as advice (its shift is
    then 0, so a draw that masks a private value leaves the runs apart), or None."""
    for s in statements(decl.body):
        for top in _exprs(s):
            for e in walk(top):
                if isinstance(e, Noise) and e.kind == "gauss" and e.align is None:
                    masked = _masked(top, e)
                    hint = f"0 - dist({show(masked)})" if masked is not None else "0 - dist(...)"
                    return (f"line {e.span.line}: the Gaussian draw `{show(e)}` has no `align`; the Gaussian rule "
                            f"needs an `align` on every Gaussian draw; add `align ({hint})`")
    return None


def _masked(top: Expr, draw: Noise) -> Expr | None:
    """The expression a draw is added to (`q[i] + gauss(s)`: `q[i]`), if any."""
    for e in walk(top):
        if isinstance(e, Binary) and e.op in ("+", "-"):
            if e.right is draw:
                return e.left
            if e.left is draw and e.op == "+":
                return e.right
    return None


#: what this version's Gaussian rule cannot do (docs/verifier-kernel.md, "Gaussian draws")
_NOISE_FREE = ("Gaussian draws take shifts independent of the noise only: selectors and the pointwise "
               "rule are not available for them in this version")


def _certificate(decl: MechanismDecl, constants: dict[str, Fraction]) -> Certificate:
    numbers = numbering(decl)
    env = dict(constants)
    noisy = noisy_variables(decl.body)
    sites = gauss_sites(decl.body, noisy)
    for noise, _ in sites:
        if noise.align is not None and any(isinstance(e, Noise) or isinstance(e, Var) and e.name in noisy
                                           for e in walk(noise.align)):
            raise _Give(f"line {noise.span.line}: the Gaussian draw's shift `{show(noise.align)}` depends on the "
                        f"noise; {_NOISE_FREE}")
    _public_scales(decl, [noise for noise, _ in sites])
    hinted = next((s for s in statements(decl.body) if isinstance(s, While) and s.invariants), None)
    if hinted is not None:  # never prove with a hint nobody checked (review s27e: a false hint was "proved")
        raise _Give(f"line {hinted.span.line}: `invariant` hints are not checked by the Gaussian rule in this "
                    "version (its own invariant is that every local is equal in both runs); remove the hint "
                    "to let that invariant prove the mechanism")
    laplace = [e for s in statements(decl.body) for top in _exprs(s) for e in walk(top)
               if isinstance(e, Noise) and e.kind != "gauss"]
    draws = []
    for s in statements(decl.body):
        for top in _exprs(s):
            for e in walk(top):
                if isinstance(e, Noise):
                    shift = show(e.align) if e.align is not None else "0"
                    bound = str(_ratio_bound(decl, e, env)) if e.kind == "gauss" else ""
                    draws.append(DrawAlignment(Where.of(e, numbers), e.kind, shift, bound=bound))
    loops, trips = [], []
    for s in statements(decl.body):
        if isinstance(s, While):
            loops.append(LoopInvariant(Where.of(s, numbers), _equal_invariant(decl, s), ("equal runs",)))
            if any(loop is s for _, loop in sites):
                trips.append(LoopTrips(Where.of(s, numbers), _trips(decl, s, env)))
    mu_squared = sum((Fraction(d.bound) ** 2 * _count(d, sites, trips, numbers) for d in draws if d.kind == "gauss"),
                     Fraction(0))
    share = _share(decl, env, mu_squared, bool(laplace))
    side = Side("forward", tuple(draws), tuple(loops), (), tuple(trips), str(share))
    claim = show(decl.privacy)
    return Certificate(decl.name, claim, "alignment", tuple(show(r) for r in decl.requires),
                       tuple(sorted(neighbours(decl).items())), (), (side,),
                       show(decl.delta) if decl.delta is not None else "")


def _count(d: DrawAlignment, sites: list, trips: list[LoopTrips], numbers: dict[int, int]) -> int:
    for noise, loop in sites:
        if numbers[id(noise)] == d.at.node:
            if loop is None:
                return 1
            return next(t.trips for t in trips if t.at.node == numbers[id(loop)])
    return 1


def _share(decl: MechanismDecl, env: dict[str, Fraction], mu_squared: Fraction, laplace: bool) -> Fraction:
    eps = _value(decl.privacy, env)
    if not laplace:
        if eps is None:
            raise _Give("the claim's epsilon is not a number (the Gaussian rule needs numbers)")
        return eps
    delta = _value(decl.delta, env) if decl.delta is not None else Fraction(0)
    if eps is None or delta is None:
        raise _Give("the claim is not numeric: the Laplace and Gaussian shares cannot be split")
    low, high = Fraction(0), eps
    if delta_up(mu_squared, high) > delta:
        raise _Give(f"delta_mu(eps) > delta already (mu^2 <= {mu_squared})")
    for _ in range(40):  # the least share whose delta fits, to 2^-40 of eps
        mid = (low + high) / 2
        low, high = (mid, high) if delta_up(mu_squared, mid) > delta else (low, mid)
    return high.limit_denominator(10**6) if delta_up(mu_squared, high.limit_denominator(10**6)) <= delta else high


def _value(e: Expr | None, env: dict[str, Fraction]) -> Fraction | None:
    if isinstance(e, NumLit):
        return Fraction(e.text) if hasattr(e, "text") else Fraction(str(e.value))
    if isinstance(e, Var):
        return env.get(e.name)
    if isinstance(e, Unary) and e.op == "-":
        inner = _value(e.operand, env)
        return None if inner is None else -inner
    if isinstance(e, Binary) and e.op in "+-*/":
        a, b = _value(e.left, env), _value(e.right, env)
        if a is None or b is None or (e.op == "/" and b == 0):
            return None
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else a}[e.op]
    return None


def _public_scales(decl: MechanismDecl, draws: list[Noise]) -> None:
    """Every Gaussian scale the same in both runs: the kernel's Gaussian rule
    compares N(x, s^2) with N(x', s^2) (one s; docs/verifier-kernel.md)."""
    inputs = neighbours(decl)
    for noise in draws:
        private = sorted({e.name for e in walk(noise.scale) if isinstance(e, Var) and inputs.get(e.name, "public") != "public"})
        if private:
            raise _Give(f"line {noise.span.line}: the Gaussian scale `{show(noise.scale)}` depends on the private "
                        f"input `{private[0]}`, so it may differ between the two runs; the Gaussian rule needs the "
                        "same scale in both runs (a public or static parameter, or a number)")


def _conjuncts(r: Expr) -> list[Expr]:
    if isinstance(r, Binary) and r.op == "&&":
        return _conjuncts(r.left) + _conjuncts(r.right)
    return [r]


def _least(decl: MechanismDecl, e: Expr, env: dict[str, Fraction]) -> Fraction | None:
    """A lower bound of e from the numbers and the `requires x >= c` clauses."""
    value = _value(e, env)
    if value is not None:
        return value
    if isinstance(e, Var):
        for r in (c for top in decl.requires for c in _conjuncts(top)):
            if isinstance(r, Binary) and isinstance(r.left, Var) and r.left.name == e.name and r.op in (">=", ">"):
                c = _value(r.right, env)
                if c is not None and c > 0:
                    return c
    return None


def _size(e: Expr, env: dict[str, Fraction]) -> Fraction | None:
    """A bound on |e| for a shift: numbers, and a distance of a vector entry (1)."""
    value = _value(e, env)
    if value is not None:
        return abs(value)
    if isinstance(e, Unary) and e.op == "-":
        return _size(e.operand, env)
    if isinstance(e, Dist):
        return Fraction(1)
    if isinstance(e, Call) and e.func == "abs" and len(e.args) == 1:
        return _size(e.args[0], env)
    if isinstance(e, Binary) and e.op in "+-":
        a, b = _size(e.left, env), _size(e.right, env)
        return None if a is None or b is None else a + b
    if isinstance(e, Binary) and e.op == "*":
        a, b = _size(e.left, env), _size(e.right, env)
        return None if a is None or b is None else a * b
    return None


def _ratio_bound(decl: MechanismDecl, noise: Noise, env: dict[str, Fraction]) -> Fraction:
    if noise.align is None:
        return Fraction(0)
    size = _size(noise.align, env)
    sigma = _least(decl, noise.scale, env)
    if size is None:
        raise _Give(f"line {noise.span.line}: no bound on the Gaussian draw's shift `{show(noise.align)}`")
    if sigma is None or sigma <= 0:
        raise _Give(f"line {noise.span.line}: no positive lower bound on the Gaussian scale `{show(noise.scale)}` "
                    "(a number, or a parameter with `requires x >= c`, c > 0)")
    return size / sigma


def _trips(decl: MechanismDecl, loop: While, env: dict[str, Fraction]) -> int:
    counter, bound = counter_loop(loop)
    start = next((s for s in decl.body if isinstance(s, VarDecl) and s.name == counter), None)
    first = _value(start.expr, env) if start is not None else None
    top = _value(bound, env)
    if top is None and isinstance(bound, Call) and bound.func == "len" and bound.args:
        for r in decl.requires:
            if isinstance(r, Binary) and r.op in ("<=", "<") and isinstance(r.left, Call) and r.left == bound:
                c = _value(r.right, env)
                if c is not None:
                    top = c if r.op == "<=" else c - 1
    if top is None or first is None:
        raise _Give(f"line {loop.span.line}: no numeric bound on the trips of this loop (add `requires "
                    f"{show(bound)} <= N`): mu cannot be bounded")
    return max(0, int(-(-(top - first) // 1)))


def _equal_invariant(decl: MechanismDecl, loop: While) -> str:
    before = decl.body[:next(k for k, s in enumerate(decl.body) if s is loop)] if any(s is loop for s in decl.body) else ()
    names = sorted({s.name for s in before if isinstance(s, VarDecl)})
    conjuncts = [f"(= |{n}.1| |{n}.2|)" for n in names] + ["(= |%cost| |%cost.entry|)"]
    # a `vec[1]` input's ghost budget stays within [0, 1] (each read takes at most what is left)
    conjuncts += [f"(and (<= 0.0 |%remaining.{p.name}| 1.0) (<= (- 1.0) |%lastd.{p.name}| 1.0))"
                  for p in decl.params if isinstance(p.type, TyVec) and p.type.norm == "1"]
    return f"(and {' '.join(conjuncts)})"


def _exprs(s: Stmt) -> list[Expr]:
    return [e for e in (getattr(s, "expr", None), getattr(s, "index", None), getattr(s, "cond", None))
            if e is not None]
