"""The kernel's rule for Gaussian draws (docs/verifier-kernel.md, "Gaussian draws").

A `gauss(sigma)` draw is eta in run 1 and eta + a in run 2 where the shift a
must NOT depend on any draw: the alignment mentions no variable that depends
on a draw (data or control dependence, `noisy_variables`), the draw sits under
no `if`/`while` whose condition depends on a draw, and its scale is
noise-free. Then, given the two inputs, the whole vector of Gaussian shifts
is a constant and the Gaussian part of the coupling is a shifted Gaussian
vector N(0, diag sigma^2) against N(a, diag sigma^2), mu^2 = sum (a_i /
sigma_i)^2. With the Laplace part's pure cost eps_L on every path (LightDP,
for each fixed value of the Gaussian draws), the mechanism is
(eps_L + E, delta_mu(E))-DP for any E >= 0, where

    delta_mu(E) = Phi(-E/mu + mu/2) - e^E Phi(-E/mu - mu/2)

is the hockey-stick divergence of two Gaussians at distance mu (Balle &
Wang, ICML 2018, Thm. 8; Dong, Roth & Su 2022, Cor. 2.13). The bound
P1[S] <= e^(eps_L + E) P2[S] + delta_mu(E) follows by splitting
P1[S] = E_g[u(g)] with 0 <= u <= min(1, e^eps_L h(g + a)) (the Laplace part
for fixed g) against the Gaussian densities (basic composition of a pure and
an approximate part, Dwork & Roth 2014, Thm. 3.16).

This module: the dependence analysis, the loop trip bound (a syntactic
counter), and delta_mu computed with mpmath and rounded UP. It trusts nothing
in the certificate: the per-draw bounds are obligations of the product
program, the trip bounds obligations at loop entry.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    Expr,
    If,
    IfStmt,
    Noise,
    NumLit,
    Stmt,
    Var,
    VarDecl,
    While,
)
from fuzzpy.verifier.kernel.inputs import Reject, statements, walk

__all__ = ["gauss_bound", "noisy_variables", "gauss_sites", "counter_loop", "delta_up", "mentions_noise"]


def mentions_noise(e: Expr, noisy: frozenset[str]) -> bool:
    """Does the value of e depend on a draw (a draw in e, or a noisy variable)?"""
    return any(isinstance(x, Noise) or (isinstance(x, Var) and x.name in noisy) for x in walk(e))


def noisy_variables(body: tuple[Stmt, ...]) -> frozenset[str]:
    """Variables whose value may depend on a draw: assigned an expression that
    draws or reads a noisy variable (data), or assigned under an `if`/`while`
    whose condition does (control: which assignment happens depends on the
    noise). A fixpoint over the whole body (loops carry values around)."""
    noisy: set[str] = set()

    def visit(stmts: tuple[Stmt, ...], tainted: bool) -> bool:
        grew = False
        for s in stmts:
            if isinstance(s, (VarDecl, Assign)):
                deps = mentions_noise(s.expr, frozenset(noisy)) or tainted
                if isinstance(s, Assign) and s.index is not None:
                    deps = deps or mentions_noise(s.index, frozenset(noisy))
                if deps and s.name not in noisy:
                    noisy.add(s.name)
                    grew = True
            elif isinstance(s, IfStmt):
                inner = tainted or mentions_noise(s.cond, frozenset(noisy))
                grew = visit(s.then, inner) or grew
                grew = visit(s.orelse, inner) or grew
            elif isinstance(s, While):
                inner = tainted or mentions_noise(s.cond, frozenset(noisy))
                grew = visit(s.body, inner) or grew
        return grew

    while visit(body, False):
        pass
    return frozenset(noisy)


def gauss_sites(body: tuple[Stmt, ...], noisy: frozenset[str]) -> list[tuple[Noise, While | None]]:
    """Every `gauss` draw with its enclosing loop (None: outside loops). Rejects
    a draw under a condition that depends on a draw, or with a noisy scale."""
    found: list[tuple[Noise, While | None]] = []

    def exprs(s: Stmt) -> list[Expr]:
        return [e for e in (getattr(s, "expr", None), getattr(s, "index", None), getattr(s, "cond", None))
                if e is not None]

    def visit(stmts: tuple[Stmt, ...], under_noise: bool, loop: While | None) -> None:
        for s in stmts:
            for top in exprs(s):
                _no_conditional_draw(top, isinstance(s, While))
                for e in walk(top):
                    if isinstance(e, Noise) and e.kind == "gauss":
                        if under_noise:
                            raise Reject(f"line {e.span.line}: a Gaussian draw under a condition that depends "
                                         "on a draw (its shift would depend on the noise)")
                        if mentions_noise(e.scale, noisy):
                            raise Reject(f"line {e.span.line}: a Gaussian draw whose scale depends on a draw")
                        found.append((e, loop))
            if isinstance(s, IfStmt):
                inner = under_noise or mentions_noise(s.cond, noisy)
                visit(s.then, inner, loop)
                visit(s.orelse, inner, loop)
            elif isinstance(s, While):
                visit(s.body, under_noise or mentions_noise(s.cond, noisy), s)

    visit(body, False, None)
    return found


def _no_conditional_draw(top: Expr, guard: bool) -> None:
    """A Gaussian draw runs exactly once where its statement runs: not in a loop
    guard, nor under `&&`, `||`, `==>` or `c ? a : b` (which may not evaluate it)."""
    for e in walk(top):
        lazy = guard and e is top or isinstance(e, If) or isinstance(e, Binary) and e.op in ("&&", "||", "==>")
        if lazy and any(isinstance(x, Noise) and x.kind == "gauss" for x in walk(e)):
            raise Reject(f"line {e.span.line}: a Gaussian draw in a loop guard or under `&&`, `||`, `==>` or "
                         "`? :` (it may not run exactly once)")


def counter_loop(loop: While) -> tuple[str, Expr]:
    """A loop whose trips are bounded by a counter: the guard is `i < E` (or
    a conjunction `i < E && ...`), i is assigned exactly once in the body, by
    an unconditional top-level `i = i + 1`, and E reads nothing the body
    assigns and draws nothing. Then the loop makes at most max(0, E - i0)
    trips, i0 the counter on entry."""
    guard = loop.cond
    while isinstance(guard, Binary) and guard.op == "&&" and not _is_counter_test(guard):
        guard = guard.left
    if not _is_counter_test(guard):
        raise Reject(f"line {loop.span.line}: a loop with Gaussian draws needs the guard `i < E` (or "
                     "`i < E && ...`) to bound its trips")
    assert isinstance(guard, Binary) and isinstance(guard.left, Var)
    counter, bound = guard.left.name, guard.right
    assigned = [s for s in statements(loop.body) if isinstance(s, (VarDecl, Assign))]
    top = [s for s in loop.body if isinstance(s, Assign) and s.name == counter and s.index is None]
    increments = [s for s in top if isinstance(s.expr, Binary) and s.expr.op == "+"
                  and isinstance(s.expr.left, Var) and s.expr.left.name == counter
                  and isinstance(s.expr.right, NumLit) and s.expr.right.is_int and int(s.expr.right.value) == 1]
    if len([s for s in assigned if s.name == counter]) != 1 or len(increments) != 1:
        raise Reject(f"line {loop.span.line}: the loop counter `{counter}` must be assigned only by one "
                     f"unconditional `{counter} = {counter} + 1;` in the body")
    names = {s.name for s in assigned}
    if any(isinstance(e, Noise) or (isinstance(e, Var) and e.name in names) for e in walk(bound)):
        raise Reject(f"line {loop.span.line}: the loop bound changes in the loop or draws")
    return counter, bound


def _is_counter_test(e: Expr) -> bool:
    return isinstance(e, Binary) and e.op == "<" and isinstance(e.left, Var)


#: working precision (decimal digits) of delta_mu; the result is rounded up by far more than its error
_DIGITS = 60


def delta_up(mu_squared: Fraction, e: Fraction) -> Fraction:
    """An upper bound (a rational, rounded up) of delta_mu(e) = Phi(-e/mu + mu/2)
    - e^e Phi(-e/mu - mu/2), the least delta for which mu-GDP implies
    (e, delta)-DP (Balle & Wang 2018, Thm. 8; Dong, Roth & Su 2022, Cor. 2.13).
    mu = 0 (no shift): 0. delta_mu(e) <= 1 always."""
    if mu_squared < 0 or e < 0:
        raise Reject("a negative mu^2 or epsilon share for the Gaussian draws")
    if mu_squared == 0:
        return Fraction(0)
    with mpmath.workdps(_DIGITS):
        mu = mpmath.sqrt(mpmath.mpf(mu_squared.numerator) / mu_squared.denominator)
        eps = mpmath.mpf(e.numerator) / e.denominator
        value = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
        # the error of a 60-digit evaluation is far below 1e-40: round up past it
        bound = value + mpmath.mpf(10) ** -40
        scaled = int(mpmath.ceil(bound * 10**45))
    return min(Fraction(1), max(Fraction(0), Fraction(scaled, 10**45)))


def gauss_bound(text: str, line: int) -> Fraction:
    """The certificate's R for a Gaussian draw (|shift| <= R sigma): a non-negative rational."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError) as exc:
        raise Reject(f"line {line}: the Gaussian draw's bound `{text}` is not a rational number") from exc
    if value < 0:
        raise Reject(f"line {line}: a negative bound for a Gaussian draw")
    return value
