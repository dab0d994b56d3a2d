"""A proof as the verification game of Gaboardi's lecture, as data.

    build(verdict, decl, program, minimise=True) -> GameProof | None

The relational precondition, the program walked statement by statement with
the relational assertion after each, at every draw the named coupling rule
(Laplace rule, Laplace+ rules 1 and 2, the pointwise rule's case split) with
its instantiated pre/postcondition and cost, each loop invariant reduced to
the clauses the proof needs and grouped by case, and the closing cost
arithmetic. Everything is read from the certificate the kernel accepted (and
the prover's trace when there is one, for tidier text); ``minimise`` asks the
kernel itself which invariant clauses the proof uses: a clause is dropped only
when the kernel still accepts the certificate without it. Nothing here is
trusted: it describes a proof, it never makes one.

Notation: x<1>, x<2> are x in the run on the input and in the run on its
neighbour (`fuzzpy.verifier.text.in_run`: no identifier holds `<`, so a local
`eps1` is `eps1<1>`); dist(e) is e<2> - e<1> (the lecture's `q_i(d1) - q_i(d2)` turned round).
"""

from __future__ import annotations

import dataclasses
import re
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from fuzzpy.language.syntax import (
    Assign,
    Binary,
    Dist,
    Expr,
    IfStmt,
    Index,
    MechanismDecl,
    Noise,
    NumLit,
    Output,
    ReturnStmt,
    Unary,
    Var,
    VarDecl,
    While,
)
from fuzzpy.support.records import frozen
from fuzzpy.verifier.kernel.certificate import (
    Certificate,
    DrawAlignment,
    LoopInvariant,
    Side,
    numbering,
)
from fuzzpy.verifier.lecture import AND, Lecture, regroup
from fuzzpy.verifier.public_lists import as_vectors
from fuzzpy.verifier.text import in_run, show
from fuzzpy.verifier.walk import sub_expressions

if TYPE_CHECKING:
    from fuzzpy.language.syntax import Program, Stmt
    from fuzzpy.verifier.verdict import Verdict

#: the kernel re-checks at most this many trimmed certificates per proof (minimising)
MAX_KERNEL_CHECKS = 120
#: ... and stops trimming after this much CPU (the clauses left are then all shown)
MINIMISE_SECONDS = 60.0


# ---------------------------------------------------------------- the data


@frozen
class RuleUse:
    """One coupling rule applied at a draw (in one case of a pointwise split)."""

    case: str  # "" (every trip) or the case, e.g. "i<1> == s"
    rule: str  # "Laplace+ rule 2", "Laplace rule", ...
    shift: str  # the alignment: eta in run 1 is eta + shift in run 2
    pre: str
    post: str
    paid: str


@frozen
class Step:
    """A statement of the mechanism and what holds after it (the relational assertion)."""

    line: int
    depth: int
    statement: str
    assertion: str
    rules: tuple[RuleUse, ...] = ()


@frozen
class Clause:
    text: str  # in x<1> / x<2> notation
    case: str  # the antecedent ("" for the clauses that hold in every case)
    hint: bool = False  # written by the user (`invariant P`)


@frozen
class LoopClauses:
    line: int
    guard: str
    orientation: str
    clauses: tuple[Clause, ...]
    found: int  # clauses the prover's invariant had
    minimised: bool  # every clause left was shown needed by the kernel
    #: the invariant in the lecture's shape, re-checked by the kernel (fuzzpy.verifier.lecture)
    lecture: Lecture | None = None
    #: what held before the loop of the values no trip assigns, and what was paid then (paid0):
    #: the kernel's while rule keeps them at every trip, so the invariant is inductive with them
    entry: tuple[str, ...] = ()


@frozen
class GameProof:
    mechanism: str
    claim: str
    rule: str  # "pointwise" | "alignment"
    precondition: tuple[str, ...]
    postcondition: str
    steps: tuple[Step, ...]
    loops: tuple[LoopClauses, ...]
    closing: tuple[str, ...]
    orientations: tuple[str, ...]
    kernel_paths: int = 0
    #: what the kernel discharged, by kind and line (each path's obligations are one z3 validity check)
    obligations: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = _plain(self)
        return document


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------- building


def build(verdict: Verdict, decl: MechanismDecl, program: Program | None, minimise: bool = True) -> GameProof | None:
    cert = verdict.certificate
    if not verdict.proved or cert is None:
        return None
    if cert.delta or any(d.kind == "gauss" for side in cert.sides for d in side.draws):
        return None  # the Gaussian rule is not a game of Laplace shifts: report.gaussian_lines
    paths = 0
    found: dict[tuple[str, int], int] = {}
    # the kernel re-checks the mechanism the proof is about: public lists read
    # as vectors that move by 0 (`public_lists`), as `verify` proved it
    checked = as_vectors(decl)
    if minimise:
        cert, minimal, paths, found = _minimise(checked, program, cert)
    else:
        minimal = set()
    forward = next(s for s in cert.sides if s.orientation == "forward")
    context = _Context(decl, cert, forward, verdict)
    steps = context.walk(decl.body, 0)
    hints = {show(p) for s in _statements(decl.body) if isinstance(s, While) for p in s.invariants}
    loops = tuple(_loop_clauses(decl, side, inv, hints, (side.orientation, inv.at.node) in minimal, context,
                                found.get((side.orientation, inv.at.node), len(inv.labels)))
                  for side in cert.sides for inv in side.loops)
    loops = _with_lectures(checked, program, cert, verdict.certificate or cert, loops, minimise, hints)
    walked = {"forward": steps}
    for side in cert.sides:  # a reversed relation has draws of its own: its facts are read from them
        if side.orientation not in walked:
            other = _Context(decl, cert, side, verdict, trace=False)
            walked[side.orientation] = other.walk(decl.body, 0)
            context.paid_bounds += [f"{bound} (relation reversed)" for bound in other.paid_bounds
                                    if bound not in context.paid_bounds]
    loops = tuple(dataclasses.replace(loop, entry=_entry_facts(decl, loop, walked.get(loop.orientation, [])))
                  for loop in loops)
    return GameProof(decl.name, cert.claim, cert.rule, _precondition(decl), _postcondition(decl, cert.rule),
                     tuple(steps), loops, tuple(context.closing(loops, paths)),
                     tuple(s.orientation for s in cert.sides), paths, tuple(_obligations(decl, context)))


def _with_lectures(decl: MechanismDecl, program: Program | None, cert: Certificate, source: Certificate,
                   loops: tuple[LoopClauses, ...], minimise: bool, hints: set[str]) -> tuple[LoopClauses, ...]:
    """Each loop's invariant regrouped in the lecture's shape; every regrouping
    replaces its loop's invariant in one certificate the kernel accepts whole."""
    out = []
    k = 0
    for side in cert.sides:
        for loop_index, _inv in enumerate(side.loops):
            minimal = loops[k].minimised and len(loops[k].clauses) > 0
            lecture, cert = regroup(decl, program, cert, source, side.orientation, loop_index, minimise, hints,
                                    minimal)
            out.append(dataclasses.replace(loops[k], lecture=lecture))
            k += 1
    return tuple(out)


def _entry_facts(decl: MechanismDecl, loop: LoopClauses, steps: list[Step]) -> tuple[str, ...]:
    """The facts the statements before a loop established about the values the
    loop reads but never assigns (`tn<1> + 1 = tn<2>`), and what was paid before
    it (`paid0 <= eps / 2`). The kernel checks the loop from the path that enters
    it: only the variables a trip assigns are replaced by fresh values at the
    head (docs/verifier-kernel.md, "Loops"), so these facts hold at every trip
    and the invariant is inductive together with them (issue 30 review: above_t's
    invariant alone is not, without `tn<1> + 1 = tn<2>` and paid0 <= eps / 2)."""
    index = next((k for k, st in enumerate(decl.body) if isinstance(st, While) and st.span.line == loop.line), None)
    if index is None:
        return ()
    stmt = decl.body[index]
    assert isinstance(stmt, While)
    inside = _statements(stmt.body)
    assigned = {st.name for st in inside if isinstance(st, (VarDecl, Assign))}
    tops = [stmt.cond] + [getattr(st, n) for st in inside for n in ("expr", "cond", "index")
                          if getattr(st, n, None) is not None]
    reads = {e.name for top in tops for e in sub_expressions(top) if isinstance(e, Var)}
    facts: list[str] = []
    paid: list[str] = []
    for before in decl.body[:index]:
        mine = [step for step in steps if step.line == before.span.line and step.depth == 0]
        relevant = isinstance(before, (VarDecl, Assign)) and before.name not in assigned and before.name in reads
        for step in mine:
            if relevant and step.assertion.startswith("["):
                facts.append(step.assertion[1:step.assertion.index("]")].strip())
            for use in step.rules:
                if relevant and use.post.startswith("[") and not use.case:
                    facts.append(use.post[1:use.post.index("]")].strip())
            costs = list(dict.fromkeys(use.paid.rpartition("<= ")[2].strip() for use in step.rules
                                       if use.paid.strip() != "0"))
            if costs:
                paid.append(costs[0] if len(costs) == 1 else f"max({', '.join(costs)})")
    shown = list(loop.lecture.formula) if loop.lecture is not None and loop.lecture.checked else \
        [c.text for c in loop.clauses]
    if any("paid0" in text or "entry cost" in text for text in shown):  # what paid0 / entry cost is
        word = "paid0" if any("paid0" in text for text in shown) else "entry cost"
        facts.append(f"{word} <= {' + '.join(paid)}" if paid else f"{word} = 0")
    return tuple(dict.fromkeys(facts))


def _obligations(decl: MechanismDecl, context: _Context) -> list[str]:
    """The kinds of obligation the kernel discharges for this proof (docs/verifier-kernel.md)."""
    found = []
    apart = _inside_arms_apart(decl.body, context)
    for stmt in _statements(decl.body):
        line = stmt.span.line
        if id(stmt) in apart and isinstance(stmt, IfStmt):
            continue  # each run executes its own arm: covered by the combinations of the enclosing `if`
        if isinstance(stmt, While):
            guard = show(stmt.cond)
            found += [f"line {line}: the loop invariant holds when the loop is entered (initiation)",
                      f"line {line}: one more trip keeps the invariant (consecution)",
                      f"line {line}: both runs agree on the guard `{guard}`"]
        elif isinstance(stmt, IfStmt):
            number = context.numbers.get(id(stmt), -1)
            if number in context.either:
                found.append(f"line {line}: every combination of the runs' arms of `if ({show(stmt.cond)})`")
            elif not context._public(stmt.cond):
                found.append(f"line {line}: both runs take the same arm of `if ({show(stmt.cond)})`")
        elif isinstance(stmt, ReturnStmt):
            found.append(f"line {line}: " + ("out<1> = s ==> out<2> = s (pointwise rule)" if context.pointwise
                                             else "both runs return equal values"))
        elif isinstance(stmt, Output):
            found.append(f"line {line}: both runs release equal values")
    for step in context.steps:
        for use in step.rules:
            if use.rule.startswith("Laplace+ rule 2"):
                found.append(f"line {step.line}: the one-sided draw's shift is >= 0 ({use.shift})")
    found.append(f"every path: cost <= {show(decl.privacy)}")
    return list(dict.fromkeys(found))


def _inside_arms_apart(body: tuple[Stmt, ...], context: _Context) -> set[int]:
    """The statements inside the arms of an `if` the runs may take apart
    (the kernel runs each run's arm on its own, so no agreement is checked
    there; a review found `both runs take the same arm` listed for one)."""
    inside: set[int] = set()
    for stmt in _statements(body):
        if isinstance(stmt, IfStmt) and context.numbers.get(id(stmt), -1) in context.either:
            inside |= {id(s) for s in _statements(stmt.then) + _statements(stmt.orelse or ())}
    return inside


def _statements(body: tuple[Stmt, ...]) -> list[Stmt]:
    found: list[Stmt] = []
    for stmt in body:
        found.append(stmt)
        if isinstance(stmt, While):
            found += _statements(stmt.body)
        if isinstance(stmt, IfStmt):
            found += _statements(stmt.then) + _statements(stmt.orelse or ())
    return found


def _precondition(decl: MechanismDecl) -> tuple[str, ...]:
    from fuzzpy.language.syntax import TyVec

    parts = []
    for p in decl.params:
        if isinstance(p.type, TyVec):
            norm = p.type.norm
            if norm == "1":
                one, two = in_run(p.name, 1), in_run(p.name, 2)
                parts.append(f"{one} ~ {two}: sum over j of |{two}[j] - {one}[j]| <= 1 (vec[1]), "
                             "same length")
            else:
                one, two = in_run(p.name, 1), in_run(p.name, 2)
                parts.append(f"{one} ~ {two}: |{two}[j] - {one}[j]| <= 1 for every j (vec[{norm}]), "
                             "same length")
    private = {e.expr.name for r in decl.requires for e in sub_expressions(r)
               if isinstance(e, Dist) and isinstance(e.expr, Var)}
    public = [p.name for p in decl.params if not isinstance(p.type, TyVec) and p.name not in private]
    if public:
        parts.append(" , ".join(f"{in_run(n, 1)} = {in_run(n, 2)}" for n in public) + " (public)")
    for r in decl.requires:
        text = show(r)
        parts.append(f"{text}  (dist(e) = e<2> - e<1>)" if any(isinstance(e, Dist) for e in sub_expressions(r)) else text)
    return tuple(parts)


def _postcondition(decl: MechanismDecl, rule: str) -> str:
    if rule == "pointwise":
        return ("[ out<1> = s ==> out<2> = s ] and paid <= " + show(decl.privacy)
                + ", for every value s (the pointwise rule: the result is discrete, so "
                "P[out<1> = s] <= e^claim P[out<2> = s] for each s is enough)")
    return f"[ out<1> = out<2> ] and paid <= {show(decl.privacy)}"


class _Context:
    def _in_run_one(self, test: str) -> str:
        """The selector's expression in run 1's notation: `i<1>`, or `(i<1> - 1)`
        for `i - 1` (a review found `i - 11` printed)."""
        names = {p.name for p in self.decl.params} | {
            st.name for st in _statements(self.decl.body) if isinstance(st, VarDecl)}
        renamed = _NAME.sub(lambda m: in_run(m.group(0), 1) if m.group(0) in names else m.group(0), test)
        return renamed if _NAME.fullmatch(test) else f"({renamed})"

    def __init__(self, decl: MechanismDecl, cert: Certificate, side: Side, verdict: Verdict, trace: bool = True) -> None:
        self.decl = decl
        self.cert = cert
        numbers = numbering(decl)
        self.draw_of: dict[int, tuple[int, DrawAlignment]] = {}
        for k, d in enumerate(side.draws):
            self.draw_of[d.at.node] = (k, d)
        self.numbers = numbers
        self.either = {b.at.node for b in side.branches if b.rule == "either"}
        self.either |= {b.at.node for other in cert.sides for b in other.branches if b.rule == "either"}
        self.trace = verdict.proof if trace else None  # the prover's texts are the forward side's
        self.pointwise = cert.rule == "pointwise"
        from fuzzpy.language.syntax import TyVec

        self.vectors = {p.name for p in decl.params if isinstance(p.type, TyVec)}
        private = {e.expr.name for r in decl.requires for e in sub_expressions(r)
                   if isinstance(e, Dist) and isinstance(e.expr, Var)}
        self.public = {p.name for p in decl.params if not isinstance(p.type, TyVec) and p.name not in private}
        self.same = _same_in_both_runs(decl, self.public, self.either, numbers)
        self.paid_bounds: list[str] = []
        self.in_loop = False
        #: the variable the statement being walked assigns (`dist(x before)`)
        self.assigning = ""
        #: the lines of the statements inside loops (their cost is the invariant's)
        self.loop_lines: set[int] = set()
        self.loop_heads: set[int] = set()
        self.steps: list[Step] = []
        #: dist(x) of a local assigned once, outside loops, when it is a constant (`tt1 + 1 = tt2`)
        self.known: dict[str, Fraction] = {}
        counts: dict[str, int] = {}
        for s in _statements(decl.body):
            if isinstance(s, (VarDecl, Assign)):
                counts[s.name] = counts.get(s.name, 0) + 1
        self.once = {n for n, c in counts.items() if c == 1 and any(
            isinstance(s, (VarDecl, Assign)) and s.name == n for s in decl.body)}

    # ------------------------------------------------------------ statements

    def walk(self, body: tuple[Stmt, ...], depth: int, apart: bool = False) -> list[Step]:
        steps: list[Step] = []
        for stmt in body:
            steps += self.step(stmt, depth, apart)
        self.steps = steps
        return steps

    def step(self, stmt: Stmt, depth: int, apart: bool) -> list[Step]:
        line = stmt.span.line
        if isinstance(stmt, (VarDecl, Assign)) and (not isinstance(stmt, Assign) or stmt.index is None):
            name, value = stmt.name, stmt.expr
            text = f"{'var ' if isinstance(stmt, VarDecl) else ''}{name} = {show(value)};"
            noises = [e for e in sub_expressions(value) if isinstance(e, Noise)]
            # dist(e) is read after the statement: a value the statement overwrites
            # is named `dist(x before)` (issue 30 review: `dist(total)` there read as
            # the new total made `total2 - total1 = dist(q[i]) + dist(total)` false)
            self.assigning = name
            try:
                if noises:
                    rules = tuple(r for n in noises for r in self.rules(n, name, value))
                    return [Step(line, depth, text, "", rules)]
                if apart:
                    return [Step(line, depth, text, "(each run on its own arm)")]
                return [Step(line, depth, text, self.assertion(name, value))]
            finally:
                self.assigning = ""
        if isinstance(stmt, IfStmt):
            number = self.numbers.get(id(stmt), -1)
            cond = show(stmt.cond)
            if apart:
                how = "(each run on its own arm)"
            elif number in self.either:
                how = ("the runs may take different arms: the arms only assign, so each run executes its own "
                       "(apRHL's one-sided rules); every combination is checked")
            elif self._public(stmt.cond):
                how = f"both runs take the same arm: `{cond}` reads only values equal in both runs"
            else:
                how = f"both runs take the same arm: obligation {in_run(cond, 1)} <=> {in_run(cond, 2)}"
            split = apart or number in self.either
            steps = [Step(line, depth, f"if ({cond})", how, tuple(self.expression_rules(stmt.cond)))]
            steps += self.walk(stmt.then, depth + 1, split)
            if stmt.orelse:
                steps.append(Step(stmt.orelse[0].span.line, depth, "else", ""))
                steps += self.walk(stmt.orelse, depth + 1, split)
            return steps
        if isinstance(stmt, While):
            guard = show(stmt.cond)
            self.in_loop = True
            # a draw in the guard is drawn at every test, the failing last one included:
            # its rule is shown and its cost counted like any other draw's
            head = [Step(line, depth, f"while ({guard})",
                         f"[ the loop invariant (below) ] and both runs agree on the guard: {in_run(guard, 1)} <=> {in_run(guard, 2)}",
                         tuple(self.expression_rules(stmt.cond)))]
            body = self.walk(stmt.body, depth + 1)
            self.loop_lines |= {s.line for s in body}
            self.loop_heads.add(line)
            self.in_loop = False
            after = Step(line, depth, f"(after the loop at line {line})", f"[ the loop invariant and !({guard}) ]")
            return head + body + [after]
        if isinstance(stmt, ReturnStmt):
            shown = show(stmt.expr)
            one, two = in_run(shown, 1), in_run(shown, 2)
            # a draw in the released expression is a rule use like any other (issue 30 review)
            released = tuple(self.release_rules(stmt.expr))
            if self.pointwise:
                return [Step(line, depth, f"return {shown};", f"[ {one} = s ==> {two} = s ] (pointwise rule)",
                             released)]
            return [Step(line, depth, f"return {shown};", f"[ {one} = {two} ]", released)]
        if isinstance(stmt, Output):
            shown = show(stmt.expr)
            if self._public(stmt.expr):
                return [Step(line, depth, f"output {shown};", "(released: the same in both runs, it reads only public "
                                                               "values)")]
            return [Step(line, depth, f"output {shown};", f"[ {in_run(shown, 1)} = {in_run(shown, 2)} ] (released: equal in both runs)",
                         tuple(self.release_rules(stmt.expr)))]
        return [Step(line, depth, type(stmt).__name__, "")]

    def expression_rules(self, e: Expr) -> list[RuleUse]:
        """The rules of the draws inside a condition or a release: the carrier is
        the side of the comparison that holds the draw (`q[i] + lap(b)`)."""
        uses: list[RuleUse] = []
        for node in sub_expressions(e):
            if isinstance(node, Binary) and node.op in ("<", "<=", ">", ">=", "==", "!="):
                for part in (node.left, node.right):
                    for noise in [x for x in sub_expressions(part) if isinstance(x, Noise)]:
                        carrier = show(part) if isinstance(part, Binary) else show(noise)
                        uses += self.rules(noise, f"({carrier})", part)
        if not uses:
            for noise in [x for x in sub_expressions(e) if isinstance(x, Noise)]:
                uses += self.rules(noise, f"({show(noise)})", noise)
        return uses

    def release_rules(self, e: Expr) -> list[RuleUse]:
        """The rules of the draws in a released expression: the carrier is the
        whole released value (`total + lap(1 / eps)`)."""
        carrier = show(e) if isinstance(e, Noise) else f"({show(e)})"
        return [r for noise in sub_expressions(e) if isinstance(noise, Noise) for r in self.rules(noise, carrier, e)]

    def _public(self, e: Expr) -> bool:
        """Equal in both runs: literals, public parameters, lengths (neighbours have
        the same length) and locals that only ever hold such values."""
        from fuzzpy.language.syntax import Call

        if isinstance(e, Call) and e.func == "len":
            return True
        if isinstance(e, (Index, Noise, Dist)):
            return False
        if isinstance(e, Var):
            return e.name in self.same or e.name in self.public
        from fuzzpy.verifier.walk import children

        return all(self._public(c) for c in children(e))

    def assertion(self, name: str, value: Expr) -> str:
        if self._public(value):
            return f"[ {in_run(name, 1)} = {in_run(name, 2)} ]"
        linear = self.dist_linear(value)
        if linear is None:
            return f"[ {in_run(name, 2)} - {in_run(name, 1)} = dist({self._atom(value)}) ]"
        return f"[ {in_run(name, 2)} - {in_run(name, 1)} = {_linear_text(linear)} ]"

    def dist_linear(self, e: Expr) -> dict[str, Fraction] | None:
        """dist(e) as a linear form over atoms `dist(..)` (None when not linear)."""
        if self._public(e):
            return {}
        if isinstance(e, Binary) and e.op in ("+", "-"):
            left, right = self.dist_linear(e.left), self.dist_linear(e.right)
            if left is None or right is None:
                return None
            sign = 1 if e.op == "+" else -1
            return _add(left, right, sign)
        if isinstance(e, Unary) and e.op == "-":
            inner = self.dist_linear(e.operand)
            return None if inner is None else {k: -v for k, v in inner.items()}
        if isinstance(e, (Var, Index)):
            return {f"dist({self._atom(e)})": Fraction(1)}
        return None

    def _atom(self, e: Expr) -> str:
        """`e`, or `e before` when it reads the variable being assigned."""
        text = show(e)
        if self.assigning and any(isinstance(x, Var) and x.name == self.assigning for x in sub_expressions(e)):
            return f"{text} before"
        return text

    # ------------------------------------------------------------ draws

    def rules(self, noise: Noise, carrier: str, value: Expr) -> list[RuleUse]:
        found = self.draw_of.get(self.numbers.get(id(noise), -1))
        if found is None:
            return []
        index, cert = found
        nice = self._nice(index)
        scale = show(noise.scale)
        rest = _rest(value, noise)
        if nice is not None and nice[0] == "alone":
            return [RuleUse("", "one-sided random sampling (apRHL): each run draws on its own", "none",
                            f"the scale {scale} > 0 in that run", "(no relation: what follows holds for every value)",
                            "0")]
        if cert.selector == "":
            shift = nice[2] if nice else _tidy(cert.shift)
            rule = self.one_rule(noise, carrier, rest, shift, scale, mirror=cert.mirror)
            return [rule]
        then = nice[2] if nice else _tidy(cert.shift)
        other = nice[3] if nice else _tidy(cert.otherwise)
        if cert.selector == "pointwise":
            test = nice[1].partition(" == ")[0] if nice else _tidy(cert.test)
            test = self._in_run_one(test)
            first = dataclasses.replace(self.one_rule(noise, carrier, rest, then, scale), case=f"{test} == s")
            second = dataclasses.replace(self.one_rule(noise, carrier, rest, other, scale), case=f"{test} != s")
            return [first, second]
        test = nice[1] if nice else _tidy(cert.test)
        when = "later comparison" if cert.selector == "branch" else "state test"
        first = dataclasses.replace(self.one_rule(noise, carrier, rest, then, scale), case=f"{test} ({when}: true)")
        second = dataclasses.replace(self.one_rule(noise, carrier, rest, other, scale), case=f"{test} ({when}: false)")
        return [first, second]

    def _nice(self, index: int) -> tuple[str, str, str, str] | None:
        trace = self.trace
        if trace is None or index >= len(trace.shifts):
            return None
        return trace.shifts[index]

    def one_rule(self, noise: Noise, carrier: str, rest: tuple[Expr, int, int] | None, shift: str, scale: str,
                 mirror: str = "") -> RuleUse:
        one_sided = noise.kind == "lapplus"
        zero = shift.strip() in ("0", "(0)")
        found = None if rest is None else self.dist_linear(rest[0])
        moved = None if found is None or rest is None else {k: rest[1] * v for k, v in found.items()}
        noise_sign = 1 if rest is None else rest[2]
        a = _parse_linear(shift)
        # the shift is evaluated before the statement assigns: `dist(next)` there is
        # `dist(next before)`, as in the input it moves (issue 30 review: prefix_sum's
        # post printed `next2 - next1 = dist(next before) - dist(next)`, a garble of
        # the two readings; it is `next<1> = next<2>`)
        shift = self._before(shift)
        # a public parameter is the same in both runs: its distance is 0
        a = None if a is None else {self._before(k): v for k, v in a.items()
                                    if not re.fullmatch(r"dist\((\w+)\)", k) or k[5:-1] not in self.public}
        bound = _bound(self._substitute(a), self.vectors) if a is not None else None
        if zero:
            rule = "Laplace+ rule 1 (the same noise in both runs)" if one_sided else \
                "Laplace rule with shift 0 (the same noise in both runs)"
            moved = None if moved is None else self._substitute(moved)
            post = (f"[ {in_run(carrier, 1)} = {in_run(carrier, 2)} ]" if moved == {}
                    else f"[ {_diff(carrier)} = {_linear_text(moved)} ]" if moved is not None
                    else f"[ {_diff(carrier)} = dist(input) ]")
            return RuleUse("", rule, "0", "true", post, "0")
        rule = "Laplace+ rule 2 (shift the noise up)" if one_sided else "Laplace rule (shift the noise)"
        if mirror:
            rule = f"Laplace rule, mirrored where the runs disagree on `{mirror}` (run 2 draws -eta + shift)"
        constant = a is not None and set(a) <= {"1"}
        if constant:
            pre = "true (a constant shift)"
        elif one_sided:
            pre = f"0 <= {shift}" + (f" <= {_fraction(bound)}" if bound is not None else "")
        else:
            pre = f"|{shift}|" + (f" <= {_fraction(bound)}" if bound is not None else " bounded (see the cost)")
        post = self._post(carrier, moved, None if a is None else {k: noise_sign * v for k, v in a.items()}, shift)
        shown = shift if (one_sided or constant) and re.fullmatch(r"[\w.()\[\]]+", shift) else f"({shift})"
        paid = f"{shown if one_sided or constant else '|' + shift + '|'} / ({scale})"
        if bound is not None:
            paid += f" <= {_over_scale(bound, noise.scale)}"
            self.paid_bounds.append(f"the draw at line {noise.span.line} pays at most {_fraction(bound)} / ({scale}) = "
                                    f"{_over_scale(bound, noise.scale)} when shifted")
        return RuleUse("", rule, shift, pre, post, paid)

    def _before(self, text: str) -> str:
        """`dist(x)` as `dist(x before)` for the variable the statement assigns."""
        if not self.assigning:
            return text
        name = re.escape(self.assigning)
        return re.sub(rf"dist\(([^()]*\b{name}\b[^()]*?)\)",
                      lambda m: m.group(0) if m.group(1).endswith(" before") else f"dist({m.group(1)} before)", text)

    def _substitute(self, form: dict[str, Fraction]) -> dict[str, Fraction]:
        out: dict[str, Fraction] = {}
        for key, v in form.items():
            m = re.fullmatch(r"dist\((\w+)\)", key)
            if m is not None and m.group(1) in self.known:
                out["1"] = out.get("1", Fraction(0)) + v * self.known[m.group(1)]
            else:
                out[key] = out.get(key, Fraction(0)) + v
        return {k: v for k, v in out.items() if v != 0}

    def _post(self, carrier: str, moved: dict[str, Fraction] | None, a: dict[str, Fraction] | None,
              shift: str) -> str:
        if moved is not None and a is not None:
            # a local assigned once before (`tt<1> + 1 = tt<2>`): its distance is that constant
            total = self._substitute(_add(moved, a, 1))
            if set(total) <= {"1"}:
                k = total.get("1", Fraction(0))
                if carrier in self.once and not self.in_loop:
                    self.known[carrier] = k
                if k == 0:
                    return f"[ {in_run(carrier, 1)} = {in_run(carrier, 2)} ]"
                if k < 0:
                    return f"[ {in_run(carrier, 1)} - {_fraction(-k)} = {in_run(carrier, 2)} ]"
                return f"[ {in_run(carrier, 1)} + {_fraction(k)} = {in_run(carrier, 2)} ]"
            return f"[ {_diff(carrier)} = {_linear_text(total)} ]"
        return f"[ {_diff(carrier)} = dist(the value, its draw shifted by {shift}) ]"

    # ------------------------------------------------------------ closing

    def closing(self, loops: tuple[LoopClauses, ...], paths: int) -> list[str]:
        lines = list(dict.fromkeys(self.paid_bounds))
        lines += self._unbounded_draws(lines)
        for step in self.steps:
            if any(r.case.endswith("== s") for r in step.rules):
                lines.append(f"the draw at line {step.line} is shifted only when its index equals s; at every other "
                             "index it pays 0")
        # the draws outside loops pay on top of what the loops' invariants carry
        # (issue 30 review: `return total + lap(1 / eps)` paid eps unmentioned)
        # (a draw before a loop is already in the invariant's entry cost)
        last = max(self.loop_lines, default=0)
        outside = [(step.line, use.paid) for step in self.steps if step.line > last
                   for use in step.rules if use.paid.strip() != "0"]
        for loop in loops:
            cost = [c for c in loop.clauses if "cost" in c.text]
            side = "" if loop.orientation == "forward" else " (relation reversed)"
            if loop.lecture is not None and loop.lecture.checked and loop.lecture.cost:
                what = "what its trips pay" if outside else "what is paid"
                lines.append(f"the invariant at line {loop.line}{side} carries {what}: " + AND.join(loop.lecture.cost))
            elif cost:
                shown = "; ".join((f"{c.case} ==> " if c.case else "") + c.text for c in cost)
                what = "the cost of its trips" if outside else "the cost"
                lines.append(f"the invariant at line {loop.line}{side} carries {what}: {shown}")
        plural = "s" if len({loop.line for loop in loops}) > 1 else ""
        where = f"after the loop{plural}" if loops else "outside any loop"
        for line, paid in dict.fromkeys(outside):
            lines.append(f"the draw at line {line} ({where}) pays {paid}")
        tail = f" on each of its {paths} paths" if paths else ""
        parts = ([f"(the cost at the loop{plural}' exit)" if plural else "(the cost at the loop's exit)"] if loops else []) + \
            [f"(the draw at line {line})" for line in dict.fromkeys(line for line, _ in outside)]
        total = f"cost = {' + '.join(parts)} <= {self.cert.claim}" if len(parts) > 1 else f"cost <= {self.cert.claim}"
        lines.append(f"{total} for every path: checked by the proof kernel{tail}")
        return lines


    def _unbounded_draws(self, bounded: list[str]) -> list[str]:
        """Every draw that may pay has its cost in the arithmetic: one whose shift
        has no constant bound here (NumericSparse's comparison, shifted by
        dist(tt) - dist(q[i]) with tt redrawn in the loop) is named with what it
        pays, per case, and what bounds it (the kernel checked the total)."""
        named = {int(m) for text in bounded for m in re.findall(r"the draw at line (\d+) pays", text)}
        last = max(self.loop_lines, default=0)
        out = []
        for step in self.steps:
            if step.line in named or step.line > last:  # after the loops: the closing's own lines
                continue
            paying = [use for use in step.rules if use.paid.strip() != "0"]
            if not paying:
                continue
            named.add(step.line)
            where = " (in a loop guard: at every test, the failing last one included)" \
                if step.statement.startswith("while (") else ""
            cases = "; ".join(use.paid + " when shifted" + (f" in the case {use.case}" if use.case else "")
                              for use in paying)
            free = ", 0 in the other case" if len(paying) < len(step.rules) else ""
            heads = [loop for loop in self.loop_heads if loop <= step.line]
            carried = f": the invariant at line {max(heads)} carries what it pays" if heads else ""
            out.append(f"the draw at line {step.line}{where} pays {cases}{free} (no constant bound "
                       f"on its shift is derived here{carried})")
        return out


def _diff(carrier: str) -> str:
    """`x<2> - x<1>`: how far run 2's value is from run 1's."""
    return f"{in_run(carrier, 2)} - {in_run(carrier, 1)}"


def _same_in_both_runs(decl: MechanismDecl, public: set[str], either: set[int], numbers: dict[int, int]) -> set[str]:
    """Locals equal in both runs on every path: every assignment reads only
    literals, public parameters, lengths and such locals (a greatest fixpoint)."""
    assigns: dict[str, list[Expr]] = {}
    for s in _statements(decl.body):
        if isinstance(s, (VarDecl, Assign)):
            assigns.setdefault(s.name, []).append(s.expr)
    same = set(assigns)
    changed = True
    while changed:
        changed = False
        for name in sorted(same):
            for value in assigns[name]:
                bad = any(isinstance(x, (Index, Noise, Dist)) or (isinstance(x, Var) and x.name not in same
                                                                   and x.name not in public and not _length_of(x, value))
                          for x in sub_expressions(value))
                if bad:
                    same.discard(name)
                    changed = True
                    break
    # assigned in an `if` whose arms the runs may take apart: they may differ there
    return same - _assigned_apart(decl, either, numbers)


def _length_of(var: Var, value: Expr) -> bool:
    """``var`` appears in ``value`` only as `len(var)` (a public number)."""
    from fuzzpy.language.syntax import Call

    return any(isinstance(x, Call) and x.func == "len" and x.args and x.args[0] is var for x in sub_expressions(value))


def _assigned_apart(decl: MechanismDecl, either: set[int], numbers: dict[int, int]) -> set[str]:
    found: set[str] = set()
    for s in _statements(decl.body):
        if isinstance(s, IfStmt) and numbers.get(id(s), -1) in either:
            found |= {t.name for t in _statements(s.then) + _statements(s.orelse or ())
                      if isinstance(t, (VarDecl, Assign))}
    return found


def _rest(value: Expr, noise: Noise) -> tuple[Expr, int, int] | None:
    """The input the noise is added to or subtracted from, with the signs of
    both in the value: (`q[i]`, 1, 1) for `q[i] + lap(b)`, (`q[i]`, 1, -1) for
    `q[i] - lap(b)`, (`q[i]`, -1, 1) for `lap(b) - q[i]`; NumLit 0 when alone."""
    if value is noise:
        return NumLit("0", noise.span), 1, 1
    if isinstance(value, Binary) and value.op in ("+", "-"):
        minus = -1 if value.op == "-" else 1
        if value.right is noise:
            return value.left, 1, minus
        if value.left is noise:
            return value.right, minus, 1
    return None


# ---------------------------------------------------------------- linear forms and text


def _add(a: dict[str, Fraction], b: dict[str, Fraction], sign: int) -> dict[str, Fraction]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + sign * v
    return {k: v for k, v in out.items() if v != 0}


def _fraction(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _linear_text(form: dict[str, Fraction] | None) -> str:
    if form is None:
        return "?"
    pieces = []
    for key in sorted(form, key=lambda k: (k == "1", k)):
        v = form[key]
        body = _fraction(abs(v)) if key == "1" else (key if abs(v) == 1 else f"{_fraction(abs(v))} * {key}")
        pieces.append(("-" if v < 0 else "+", body))
    if not pieces:
        return "0"
    text = ("-" if pieces[0][0] == "-" else "") + pieces[0][1]
    for sign, body in pieces[1:]:
        text += f" {sign} {body}"
    return text


def _parse_linear(text: str) -> dict[str, Fraction] | None:
    """A shift's text as a linear form over `dist(..)` atoms ("1" the constant)."""
    try:
        expr = _expression(text)
    except Exception:  # noqa: BLE001 - text only: no form then
        return None
    return _linear_of(expr)


def _expression(text: str) -> Expr:
    """A mechanism expression from its text (the parser alone: no z3)."""
    from fuzzpy.frontend.parser import parse_program

    decl = parse_program(f"mechanism k__ () : num privacy 0 {{ return ({text}); }}", "<proof>").decls[0]
    assert isinstance(decl, MechanismDecl) and isinstance(decl.body[0], ReturnStmt)
    return decl.body[0].expr


def _linear_of(e: Expr) -> dict[str, Fraction] | None:
    if isinstance(e, NumLit):
        return {"1": Fraction(e.value)} if e.value != 0 else {}
    if isinstance(e, Dist):
        return {f"dist({show(e.expr)})": Fraction(1)}
    if isinstance(e, Binary) and e.op in ("+", "-"):
        left, right = _linear_of(e.left), _linear_of(e.right)
        if left is None or right is None:
            return None
        return _add(left, right, 1 if e.op == "+" else -1)
    if isinstance(e, Binary) and e.op == "*":
        left, right = _linear_of(e.left), _linear_of(e.right)
        if left is None or right is None:
            return None
        for c, x in ((left, right), (right, left)):
            if set(c) <= {"1"}:
                k = c.get("1", Fraction(0))
                return {n: k * v for n, v in x.items() if k * v != 0}
        return None
    if isinstance(e, Unary) and e.op == "-":
        inner = _linear_of(e.operand)
        return None if inner is None else {k: -v for k, v in inner.items()}
    return None


def _bound(form: dict[str, Fraction], vectors: set[str]) -> Fraction | None:
    """The largest |shift| when each vector entry moves by at most 1 (None when
    the shift reads other distances)."""
    total = abs(form.get("1", Fraction(0)))
    for key, v in form.items():
        if key == "1":
            continue
        m = re.fullmatch(r"dist\((\w+)\[.*\]\)", key)
        if m is None or m.group(1) not in vectors:
            return None
        total += abs(v)
    return total


def _over_scale(bound: Fraction, scale: Expr) -> str:
    """bound / scale as text, `2 / (2 / eps)` as `eps`."""
    if isinstance(scale, Binary) and scale.op == "/" and isinstance(scale.left, NumLit):
        k = bound / Fraction(scale.left.value)
        right = show(scale.right, 5)
        if k == 1:
            return right
        head = right if k.numerator == 1 else f"{k.numerator} * {right}"
        return head if k.denominator == 1 else f"{head} / {k.denominator}"
    if isinstance(scale, Binary) and scale.op == "/":
        head = show(scale.right, 5) if bound == 1 else f"{_fraction(bound)} * {show(scale.right, 5)}"
        return f"{head} / ({show(scale.left)})"
    return f"{_fraction(bound)} / ({show(scale)})"


def _tidy(text: str) -> str:
    """A certificate shift (`(1 * (1 - dist(q[i])))`) as a reader writes it."""
    form = _parse_linear(text)
    if form is not None:
        return _linear_text(form)
    return text


# ---------------------------------------------------------------- loop invariants


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*'?")
_WORDS = {"s", "cost", "entry", "claim", "at", "len", "abs", "max", "min", "dist", "true", "false"}


def _two_runs(label: str, names: set[str]) -> str:
    """A prover label (`best`, `best'`, `dist(best)`) in the lecture's notation (best<1>, best<2>)."""
    label = label.replace("!=", " != ")
    label = re.sub(r"(\w+) == s\s+!=\s+(-?\d+)", r"\1 == s && s != \2", label)
    # `x@1`: x in run 1 already (`@` is in no name, so the renaming below leaves it)
    label = re.sub(r"dist\((\w+)\) == 0\b", r"\1@1 = \1@2", label)
    label = re.sub(r"dist\((\w+)\) == (\d+(?:/\d+)?)\b", r"\1@1 + \2 = \1@2", label)
    label = re.sub(r"dist\((\w+)\)", r"(\1@2 - \1@1)", label)

    def rename(m: re.Match[str]) -> str:
        word = m.group(0)
        base = word.rstrip("'")
        if m.string.startswith("@", m.end()):
            return word
        if base not in names or base in _WORDS and base not in names:
            return word
        return in_run(base, 2) if word.endswith("'") else in_run(base, 1)

    text = _NAME.sub(rename, label)
    text = re.sub(r"(\w+)@([12])", lambda m: in_run(m.group(1), m.group(2)), text)
    return re.sub(r"\s+", " ", text)


def _loop_clauses(decl: MechanismDecl, side: Side, inv: LoopInvariant, hints: set[str], minimal: bool,
                  context: _Context, found: int) -> LoopClauses:
    names = {p.name for p in decl.params} | {s.name for s in _statements(decl.body) if isinstance(s, VarDecl)}
    clauses = []
    loop = next((s for s in _statements(decl.body) if isinstance(s, While)
                 and context.numbers.get(id(s)) == inv.at.node), None)
    for label in inv.labels:
        shown = label.replace("COST", "cost").replace("V0", "entry cost").replace("param_", "")
        hint = shown in hints
        case, sep, body = shown.partition(" ==> ")
        if not sep or hint:
            case, body = "", shown
        if hint:  # the student's own words
            clauses.append(Clause(shown, "", True))
            continue
        clauses.append(Clause(_two_runs(body, names), _two_runs(case, names) if case else "", hint))
    clauses = _merge_abs(clauses)
    guard = show(loop.cond) if loop is not None else "?"
    return LoopClauses(inv.at.line, guard, side.orientation, tuple(clauses), found, minimal)


def _merge_abs(clauses: list[Clause]) -> list[Clause]:
    """`d <= c` and `d >= -c` (same case) as `|d| <= c`."""
    out: list[Clause] = []
    used: set[int] = set()
    for k, c in enumerate(clauses):
        if k in used:
            continue
        m = re.fullmatch(r"(.+) <= (\d+(?:/\d+)?)", c.text)
        if m is not None:
            twin = next((j for j, d in enumerate(clauses) if j not in used and j != k and d.case == c.case
                         and d.text == f"{m.group(1)} >= -{m.group(2)}"), None)
            if twin is not None:
                used.add(twin)
                inner = m.group(1)[1:-1] if m.group(1).startswith("(") and m.group(1).endswith(")") else m.group(1)
                out.append(Clause(f"|{inner}| <= {m.group(2)}", c.case, c.hint))
                continue
        out.append(c)
    return out


def _conjuncts(term: str) -> list[str]:
    """The top-level conjuncts of `(and t1 t2 ...)` (SMT-LIB text)."""
    term = term.strip()
    if not term.startswith("(and "):
        return [term]
    inner = term[len("(and "):-1]
    parts, depth, start, quoted = [], 0, None, False
    for k, ch in enumerate(inner):
        if ch == "|":
            quoted = not quoted
        if quoted:
            if start is None:
                start = k
            continue
        if ch == "(":
            if depth == 0 and start is None:
                start = k
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and start is not None:
                parts.append(inner[start:k + 1])
                start = None
        elif ch.isspace():
            if depth == 0 and start is not None:
                parts.append(inner[start:k])
                start = None
        elif start is None:
            start = k
    if start is not None:
        parts.append(inner[start:])
    return parts


def _with_clauses(cert: Certificate, orientation: str, loop_index: int, parts: list[str],
                  labels: tuple[str, ...], keep: list[int]) -> Certificate:
    """The certificate with only the conjuncts ``keep`` (of ``parts``) of one loop's invariant."""
    sides = []
    for side in cert.sides:
        if side.orientation != orientation:
            sides.append(side)
            continue
        loops = list(side.loops)
        inv = loops[loop_index]
        if not keep:
            body = "true"
        else:
            body = f"(and {' '.join(parts[k] for k in keep)})" if len(keep) > 1 else parts[keep[0]]
        loops[loop_index] = LoopInvariant(inv.at, body, tuple(labels[k] for k in keep))
        sides.append(dataclasses.replace(side, loops=tuple(loops)))
    return dataclasses.replace(cert, sides=tuple(sides))


def _minimise(decl: MechanismDecl, program: Program | None, cert: Certificate
              ) -> tuple[Certificate, set[tuple[str, int]], int, dict[tuple[str, int], int]]:
    """Drop every invariant clause the kernel does not need (greedy, last
    first: the prover lists the general clauses before the guarded ones).
    Returns the trimmed certificate (still accepted by the kernel), the loops
    whose every clause was tried, and the kernel's path count."""
    from fuzzpy.verifier.kernel import check

    started = time.process_time()
    checks = 0
    decision = check(decl, program, cert)
    found: dict[tuple[str, int], int] = {}
    if not decision.accepted:
        return cert, set(), 0, found
    paths = decision.paths
    complete: set[tuple[str, int]] = set()
    hints = {show(p) for s in _statements(decl.body) if isinstance(s, While) for p in s.invariants}
    for side in cert.sides:
        for loop_index, inv in enumerate(side.loops):
            parts = _conjuncts(inv.invariant)
            if len(parts) != len(inv.labels):
                continue  # labels do not match the conjuncts: show them all
            keep = list(range(len(parts)))
            fixed = {k for k in keep if inv.labels[k] in hints}  # the student's own clauses stay

            def accepted(trial: list[int], base: Certificate, side: Side = side, loop_index: int = loop_index,
                         parts: list[str] = parts, inv: LoopInvariant = inv) -> Certificate | None:
                nonlocal checks, paths
                checks += 1
                candidate = _with_clauses(base, side.orientation, loop_index, parts, inv.labels, trial)
                result = check(decl, program, candidate)
                if result.accepted:
                    paths = result.paths
                    return candidate
                return None

            # drop blocks of clauses, halving a block the kernel needs (delta debugging,
            # Zeller 2002): about (clauses needed) * log(block) kernel checks
            done = True
            blocks = [[k for k in reversed(keep) if k not in fixed]]
            tried: set[tuple[int, int]] = set()  # (clause, size of the set it was tried against)
            while blocks:
                if checks >= MAX_KERNEL_CHECKS or time.process_time() - started > MINIMISE_SECONDS:
                    done = False
                    break
                block = blocks.pop()
                trial = [k for k in keep if k not in block]
                found_cert = accepted(trial, cert)
                if found_cert is not None:
                    keep, cert = trial, found_cert
                elif len(block) > 1:
                    half = len(block) // 2
                    blocks += [block[half:], block[:half]]
                # a clause kept only to carry one dropped later may go now: once more, one by one,
                # until none can go (the invariant is not monotone in its clauses)
                if not blocks and done:
                    blocks = [[k] for k in reversed(keep) if k not in fixed and (k, len(keep)) not in tried]
                    tried.update((k, len(keep)) for k in keep)
            if done:
                complete.add((side.orientation, inv.at.node))
            found[(side.orientation, inv.at.node)] = len(inv.labels)
    return cert, complete, paths, found


__all__ = ["GameProof", "build", "Clause", "LoopClauses", "RuleUse", "Step"]
