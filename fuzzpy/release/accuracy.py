"""Which parts of a release carry an accuracy statement, and what it says
(docs/semantics.md, "Accuracy").

The rule is syntactic, on the released definition's body, so that an
interval is only claimed where the released number *is* a noisy query:

* the body is a noise primitive applied to its query (`laplace[eps] q`,
  `gauss[sigma] q`, `geometric[eps] q`, `dgauss[sigma] q`, `staircase[eps] q`,
  `expmech[eps] cands score db`, `ptr_median[eps, delta, b] db` and
  `ptr_quantile[eps, delta, b, p] db`: its answer `inl m` carries the
  Laplace of scale b / eps around the data's lower median or p-quantile,
  `inr ()` nothing; `wishart[eps, delta, b, k] db`: no interval, its noise
  scales with the private X^T X, so its law is stated, `wishart_note`;
  `smooth_median` / `smooth_quantile`: the continuous
  Laplace of scale 2 S / eps <= 2 (hi - lo) / eps around the clamped
  quantile, from the public bound, since S itself depends on the data), or a
  block whose result is one; or
* the body is a block ending in `return r`, where r is a variable, a tuple
  of variables or a record of variables, and a variable counts when its last
  binding in the block is `sample x = <noise primitive applied to a query>`,
  or `sample x = f a ...` with `f` a definition whose body is one.

Everything else -- an arithmetic on noisy values (a ratio, a clamp), a
branch, a call of another definition or mechanism -- is "accuracy not
derived for this expression": an honest unknown rather than an interval the
noise does not justify. The noise's parameters are those the run recorded
for the very value released (`fuzzpy.runtime.accuracy.NoiseNote`): public
parameters only, so the statement cannot depend on the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from fuzzpy.language import syntax as S
from fuzzpy.language.figures import json_figure, text_up

NOT_DERIVED = "accuracy not derived for this expression"
#: `ptr_median` answered `inr ()`: nothing was released to be accurate about (review s28c)
NO_ANSWER = "no interval: the mechanism gave no answer (`inr ()`), which carries no value to bound"
_NOISE = {"laplace": 1, "gauss": 1, "gauss_dp": 1, "geometric": 1, "dgauss": 1, "staircase": 1, "expmech": 3, "ptr_median": 1, "ptr_quantile": 1, "smooth_median": 1, "smooth_quantile": 1,
          "wishart": 1}  # primitive -> arguments after the static ones
_NAMES = {"laplace": "discrete Laplace", "gauss": "discrete Gaussian", "expmech": "exponential mechanism",
          "geometric": "two-sided geometric on the integers", "dgauss": "discrete Gaussian on the integers",
          "staircase": "staircase on its grid",
          "smooth": "continuous Laplace of scale 2 S / eps, S the data's smooth sensitivity (not shown) <= hi - lo"}


@dataclass(frozen=True)
class Accuracy:
    """One released part's accuracy: ``path`` names the part ("" the whole
    value, a field, a tuple position); ``noise`` None when not derived.
    ``bound`` is the interval's half-width (each entry of a vector), or for
    the exponential mechanism the utility gap; rounded up."""

    path: str
    noise: str | None
    confidence: Fraction
    bound: Fraction | None = None
    scale: Fraction | None = None
    entries: int = 0
    textbook: float | None = None
    #: the released part is `inr ()` (ptr_median's "no answer"): no interval, and none missing
    no_answer: bool = False
    #: why no interval can be stated, and what the noise is instead (`wishart`: it scales with the private data)
    explained: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"part": self.path or None, "noise": self.noise,
                                  "confidence": float(self.confidence)}
        if self.noise is None or self.bound is None:
            return {**out, "derived": False, "note": self.explained or (NO_ANSWER if self.no_answer else NOT_DERIVED)}
        key = "utility_gap" if self.noise == "expmech" else "half_width"
        # beyond the largest double (a static range near 1e308, review s30d): "inf", as a cost is
        out.update({"derived": True, key: json_figure(self.bound), "statement": self.statement()})
        if self.noise == "smooth":  # the scale is the public bound 2 (hi - lo) / eps, rounded up
            out["scale_at_most"] = json_figure(self.scale or Fraction(0))
        else:
            out["epsilon" if self.noise in ("laplace", "expmech", "geometric", "staircase") else "sigma"] = \
                float(1 / self.scale) if self.noise == "laplace" and self.scale else float(self.scale or 0)
        out["candidates" if self.noise == "expmech" else "entries"] = self.entries
        if self.textbook is not None:
            out["continuous_half_width"] = json_figure(self.textbook)
        return out

    def statement(self) -> str:
        level = f"{float(self.confidence * 100):g}%"
        if self.noise is None or self.bound is None or self.scale is None:
            return self.explained or (NO_ANSWER if self.no_answer else NOT_DERIVED)
        if self.noise == "expmech":
            return (f"with probability >= {level} the chosen candidate's score is within {text_up(self.bound)} "
                    f"of the best score (exponential mechanism, eps {text_up(self.scale)}, "
                    f"{self.entries} candidates; McSherry-Talwar)")
        each = " per entry" if self.entries > 1 else ""
        what = (f"scale {text_up(self.scale)}" if self.noise == "laplace"
                else f"the bound 2 (hi - lo) / eps = {text_up(self.scale)}" if self.noise == "smooth"
                else f"eps {text_up(self.scale)}" if self.noise in ("geometric", "staircase")
                else f"sigma {text_up(self.scale)}")
        return f"+/- {text_up(self.bound)}{each} at {level} ({_NAMES[self.noise]}, {what})"


def float_up(value: Fraction) -> float:
    """The least double at least ``value`` (a bound is never shown too small)."""
    f = float(value)
    return math.nextafter(f, math.inf) if Fraction(f) < value else f


def derive(program: S.Program, decl: S.DefDecl, value: Any, notes: list[tuple[Any, Any]],
           confidence: Fraction) -> tuple[Accuracy, ...]:
    """The accuracy of each released part (module note)."""
    from fuzzpy.runtime.accuracy import half_width, textbook_half_width
    from fuzzpy.runtime.values import Inr

    direct = {d.name for d in program.decls if isinstance(d, S.DefDecl) and is_noise_application(d.body)}
    out = []
    for path, eligible, part in _parts(decl.body, value, direct):
        note = _note_of(part, notes) if eligible else None
        if note is None:
            out.append(Accuracy(path, None, confidence, no_answer=eligible and isinstance(part, Inr)))
            continue
        if note.kind == "wishart":
            out.append(Accuracy(path, None, confidence, explained=wishart_note(note.scale, note.entries)))
            continue
        textbook = textbook_half_width(note, confidence) if note.kind != "expmech" else None
        out.append(Accuracy(path, note.kind, confidence, half_width(note, confidence), note.scale,
                            note.entries, textbook))
    return tuple(out)


def wishart_note(w2: Fraction, k: int) -> str:
    """`wishart`'s noise is relative to the private Sigma = X^T X + w^2 I: no
    interval in public numbers exists, so its law is stated instead
    (docs/semantics.md, "`wishart`")."""
    return (f"no interval: the Wishart noise scales with the private X^T X (entry (j, l) of the release has "
            f"standard deviation sqrt((S_jl^2 + S_jj S_ll) / k) around X^T X, S = X^T X + w^2 I, "
            f"w^2 = {text_up(w2)}, k = {k})")


def _note_of(part: Any, notes: list[tuple[Any, Any]]) -> Any:
    """The noise recorded for this very object: one note, or None when none
    or several different ones were (a candidate object chosen twice)."""
    found = {note for obj, note in notes if obj is part or _same_rows(obj, part)}
    return found.pop() if len(found) == 1 else None


def _same_rows(noted: Any, part: Any) -> bool:
    """A matrix (a list of rows) rebuilt around the very rows noted: the same release."""
    return (isinstance(noted, list) and isinstance(part, list) and bool(noted) and len(noted) == len(part)
            and all(a is b for a, b in zip(noted, part, strict=True)))


def _strip(expr: S.Expr) -> S.Expr:
    while isinstance(expr, S.Ann):
        expr = expr.expr
    return expr


def is_noise_application(expr: S.Expr) -> bool:
    """`laplace[eps] q`, `gauss[sigma] q`, `geometric[eps] q`, `dgauss[sigma] q`
    or `expmech[eps] c s db`, fully applied."""
    expr, applied = _strip(expr), 0
    while isinstance(expr, S.App):
        expr, applied = _strip(expr.func), applied + 1
    return isinstance(expr, S.Prim) and _NOISE.get(expr.name) == applied


def _is_direct_call(expr: S.Expr, direct: set[str]) -> bool:
    """`f a b ...` (or `f`) with `f` a definition whose body is a noise application."""
    expr = _strip(expr)
    while isinstance(expr, S.App):
        expr = _strip(expr.func)
    return isinstance(expr, S.Var) and expr.name in direct


def _parts(body: S.Expr, value: Any, direct: set[str]) -> list[tuple[str, bool, Any]]:
    body = _strip(body)
    if is_noise_application(body):
        return [("", True, value)]
    if not isinstance(body, S.Block):
        return [("", False, value)]
    result = _strip(body.result)
    if is_noise_application(result):
        return [("", True, value)]
    if not isinstance(result, S.Return):
        return [("", False, value)]
    sampled = _sampled_names(body.stmts, direct)
    returned = _strip(result.expr)
    if isinstance(returned, S.Var):
        return [("", returned.name in sampled, value)]
    if isinstance(returned, S.Tuple) and isinstance(value, tuple) and len(value) == len(returned.items):
        return [(str(i + 1), _is_sampled(item, sampled), part)
                for i, (item, part) in enumerate(zip(returned.items, value, strict=True))]
    fields = getattr(value, "fields", None)
    if isinstance(returned, S.RecordLit) and fields is not None:
        return [(name, _is_sampled(e, sampled), fields.get(name)) for name, e in returned.fields]
    return [("", False, value)]


def _is_sampled(expr: S.Expr, sampled: set[str]) -> bool:
    expr = _strip(expr)
    return isinstance(expr, S.Var) and expr.name in sampled


def _sampled_names(stmts: tuple[S.BlockStmt, ...], direct: set[str]) -> set[str]:
    """Names whose last binding in the block is `sample x = <noise application>`
    (or a call of a definition that is one)."""
    last: dict[str, bool] = {}
    for stmt in stmts:
        if isinstance(stmt, S.SampleStmt):
            last[stmt.name] = is_noise_application(stmt.expr) or _is_direct_call(stmt.expr, direct)
        elif isinstance(stmt, S.LetTuple):
            last.update(dict.fromkeys(stmt.names, False))
        else:
            last[stmt.name] = False
    return {name for name, direct in last.items() if direct}
