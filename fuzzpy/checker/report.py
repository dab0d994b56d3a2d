"""What `fuzzpy check` prints (language design, sections 4 and 7).

Text: one line per definition, its type with each parameter's sensitivity,
and for a definition returning a distribution its privacy in each database:

    count_over  : (t :[inf] num) -> (db :[1] bag Row) -> num
    noisy_count : (db :[0.1] bag Row) -> fuzzy num         0.1-DP in db

Pure costs are exact sums of the events' epsilons. Approximate costs
(Gaussian, subsampling, approximate verified claims) come from the
accountant's tightest valid bound at the requested delta (1e-6 by default).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import sys
from collections.abc import Iterator
from fractions import Fraction

from fuzzpy.accounting.events import Event
from fuzzpy.accounting.neighbours import DEFAULT as DEFAULT_NEIGHBOURS
from fuzzpy.accounting.neighbours import REPLACE_ONE, Neighbours, has_sample, relation_of
from fuzzpy.checker.costs import pure_epsilon
from fuzzpy.checker.result import CheckedDef, CheckedProgram, ParamInfo
from fuzzpy.language import syntax as S
from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.figures import json_figure, text_up
from fuzzpy.language.sensitivity import Sens
from fuzzpy.language.symbolic import Poly
from fuzzpy.support.quiet import quiet_absl
from fuzzpy.support.records import frozen

DEFAULT_DELTA = 1e-6
REPLACE_ONE_TEXT = (
    "replace-one (local reports): datasets differing in one row's value, their sizes public; "
    "LDP: what each person's own report reveals, for any two values of their row"
)


@frozen
class PrivacyFigure:
    """The guarantee reported for one database of one definition."""

    epsilon: Fraction | float | None  # None: could not be computed
    delta: Fraction | float
    method: str
    pure_epsilon: Fraction | None
    note: str | None = None
    # local reports (`local`, `shuffle`): the guarantee is for replace-one
    # neighbours, and each person also holds a local one (`accounting.local`)
    neighbours: str = "add/remove"
    local_epsilon: Fraction | None = None
    #: `privacy zcdp[delta]`: the release's rho-zCDP (epsilon is its conversion at delta)
    rho: Fraction | None = None
    #: `privacy zcdp[delta]`: what the accountant proves for its events at that delta,
    #: when below the conversion (the basic rule charges it): (epsilon, delta)
    proved: tuple[Fraction | float, Fraction | float] | None = None
    #: `privacy zcdp[delta]` with another delta asked for (`--delta D`, `check(delta=D)`): the
    #: guarantee at D, (epsilon, D), shown beside the declared figure, which stays what `run`
    #: charges (docs/language-notes.md, "zCDP as a definition's measure")
    at_delta: tuple[Fraction | float, Fraction | float] | None = None

    def text(self) -> str:
        if self.epsilon is None and self.proved is None:
            return f"cost unavailable ({self.note})"
        if self.epsilon is None or self.rho is not None or self.proved is not None:
            return self._zcdp_text() + self._local_mark()
        if self.is_infinite:
            return f"infinite cost (no finite epsilon at delta = {_show(self.delta)})"
        eps = _show(self.epsilon)
        core = f"{eps}-DP" if self.delta == 0 else f"({eps}, {_show(self.delta)})-DP"
        return core + self._local_mark()

    def _local_mark(self) -> str:
        """`(replace-one; eps-LDP per person)` after a figure of local reports."""
        if self.neighbours != "replace-one":
            return ""
        local = f"; {_show(self.local_epsilon)}-LDP per person" if self.local_epsilon is not None else ""
        return f" (replace-one{local})"

    def _zcdp_text(self) -> str:
        if self.epsilon is None:
            conversion = f"no zCDP figure ({self.note})"
        else:
            eps = "unbounded" if self.is_infinite else _show(self.epsilon)
            conversion = f"{text_up(self.rho or 0)}-zCDP, so ({eps}, {_show(float(self.delta))})-DP"
        if self.proved is not None:
            proved_eps, proved_delta = self.proved
            core = (f"{_show(proved_eps)}-DP" if proved_delta == 0
                    else f"({_show(proved_eps)}, {_show(proved_delta)})-DP")
            conversion = f"{conversion}; its events are {core}, what a basic budget is charged"
        if self.at_delta is not None:
            at_eps, asked = self.at_delta
            shown = f"{_show(at_eps)}-DP" if asked == 0 else f"({_show(at_eps)}, {_show(float(asked))})-DP"
            conversion = f"{conversion}; at the --delta asked for: {shown} (not charged: `run` charges the declared delta)"
        return conversion

    def relation(self) -> str:
        """The relation this figure is for: replace-one for local reports
        (whatever was asked: `accounting.neighbours.relation_of`), else the
        one in force when it was computed."""
        return REPLACE_ONE if self.neighbours == REPLACE_ONE else _IN_FORCE.get().relation

    @property
    def is_infinite(self) -> bool:
        return isinstance(self.epsilon, float) and math.isinf(self.epsilon)

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "epsilon": None if self.epsilon is None else _upper_float(self.epsilon),
            "delta": _upper_float(self.delta),
            "method": self.method,
        }
        if self.pure_epsilon is not None:
            doc["pure_epsilon"] = _upper_float(self.pure_epsilon)
        if self.note:
            doc["note"] = self.note
        if self.neighbours != "add/remove":
            doc["neighbours"] = self.neighbours
        if self.local_epsilon is not None:
            doc["local_epsilon"] = _upper_float(self.local_epsilon)
        if self.rho is not None:
            doc["measure"] = "zcdp"
            doc["rho"] = _upper_float(self.rho)
        if self.proved is not None:  # below the conversion: what the basic rule charges
            doc["measure"] = "zcdp"
            doc["proved"] = {"epsilon": _upper_float(self.proved[0]), "delta": _upper_float(self.proved[1])}
        if self.at_delta is not None:  # the figure at the delta asked for, beside the declared one
            doc["at_delta"] = {"epsilon": _upper_float(self.at_delta[0]), "delta": _upper_float(self.at_delta[1])}
        return doc


#: The neighbour relation the figures are computed for (`check --neighbours`,
#: `Program.check(neighbours=...)`): set around one report by `under`, read by
#: `privacy_figure` and the report's text (fuzzpy.accounting.neighbours).
_IN_FORCE: contextvars.ContextVar[Neighbours] = contextvars.ContextVar("neighbours", default=DEFAULT_NEIGHBOURS)


@contextlib.contextmanager
def under(neighbours: Neighbours) -> Iterator[None]:
    token = _IN_FORCE.set(neighbours)
    try:
        yield
    finally:
        _IN_FORCE.reset(token)


def neighbours_in_force() -> Neighbours:
    return _IN_FORCE.get()


def symbolic_costs(d: CheckedDef) -> dict[str, Poly | None]:
    """A definition's pure costs over its static parameters, for the
    neighbours in force. The checker's are for add/remove; a replacement is
    two such steps, so under replace-one each doubles (group privacy over 2,
    Dwork & Roth 2014, Thm 2.2), never below what `resolve` charges a call
    (a review of issue 27, F1: the expression was printed at half)."""
    if _IN_FORCE.get().relation != REPLACE_ONE:
        return {name: None if name in d.symbolic_delta else cost for name, cost in d.symbolic_privacy.items()}
    return {name: None if cost is None or name in d.symbolic_delta else cost.scale(Fraction(2))
            for name, cost in d.symbolic_privacy.items()}


def symbolic_approx(d: CheckedDef) -> dict[str, tuple[Poly, Poly]]:
    """A definition's (eps, delta) costs over its static parameters
    (`gauss_dp[s, eps, delta]` with parameters: (eps, delta)-DP by the
    construction of sigma), for add/remove neighbours. Under replace-one
    none: a replacement is two steps and group privacy of an (eps, delta)
    cost is not a polynomial (Dwork & Roth 2014, Thm 2.2's k e^((k-1) eps)
    delta), so each call's cost is listed instead."""
    if _IN_FORCE.get().relation == REPLACE_ONE:
        return {}
    return {name: (eps, d.symbolic_delta[name]) for name, eps in d.symbolic_privacy.items()
            if eps is not None and name in d.symbolic_delta}


def symbolic_cost_text(d: CheckedDef, name: str) -> str | None:
    """`eps` (pure) or `eps, delta` (approximate) over the static parameters; None: see each call."""
    pair = symbolic_approx(d).get(name)
    if pair is not None:
        return f"{pair[0]}, {pair[1]}"
    cost = symbolic_costs(d).get(name)
    return None if cost is None else str(cost)


def privacy_figure(events: tuple[Event, ...], delta: float | None, parameter: str | None = None) -> PrivacyFigure:
    """The guarantee of ``events`` at ``delta`` for the neighbours in force
    (the events restated for them first: `accounting.neighbours.resolve`)."""
    from fuzzpy.accounting.local import has_local, has_shuffled, local_epsilon_of, shuffle_method

    neighbours = _IN_FORCE.get().for_parameter(parameter)  # the row count of this bag parameter's dataset
    sampled = has_sample(events)
    local = has_local(events)
    local_epsilon = local_epsilon_of(events) if local else None
    shuffled = has_shuffled(events)
    if relation_of(events, neighbours.relation) != neighbours.relation:
        # a release of local reports is a replace-one release: the only relation it is private for
        # (`accounting.neighbours`); its figure says so, whatever the relation in force
        neighbours = Neighbours(REPLACE_ONE)
    events = neighbours.resolve(events)
    figure = _figure(events, delta, shuffled)
    if sampled and figure.note is None:
        note = ("`choose[m]` and `bootstrap[m]` of the dataset amplified (n public); "
                "fixed-size samples of a derived bag unamplified"
                if neighbours.rows is not None
                else "fixed-size samples charged unamplified (m/n is known only for replace-one "
                "neighbours of a dataset of public size: --neighbours replace-one --rows N)")
        figure = dataclasses.replace(figure, note=note)
    if local:
        figure = dataclasses.replace(figure, neighbours="replace-one", local_epsilon=local_epsilon)
    if shuffled and figure.epsilon is not None and local_epsilon is not None and figure.epsilon < local_epsilon:
        # below the reports' own local epsilon: shuffling amplified it (FMT 2021), say so
        figure = dataclasses.replace(figure, method=shuffle_method(events, figure.method))
    return figure


ZCDP_METHOD = "zCDP (Bun & Steinke 2016; converted by Canonne, Kamath & Steinke 2020)"


def zcdp_figure(events: tuple[Event, ...], delta: Fraction, parameter: str | None = None) -> PrivacyFigure:
    """A release in its declared measure, rho-zCDP (`privacy zcdp[delta]`):
    rho rounded up and its (eps, delta) conversion, for the neighbours in
    force (the events restated for them first), as `run` charges it; with
    ``proved`` what the accountant proves for the events at that delta when
    it is smaller (a basic budget is charged the better of the two, both
    valid: `ledger.rules.zcdp_measure_cost`)."""
    from fuzzpy.accounting.accountant import zcdp_guarantee
    from fuzzpy.accounting.local import has_local, local_epsilon_of

    neighbours = _IN_FORCE.get().for_parameter(parameter)
    local = has_local(events)
    if relation_of(events, neighbours.relation) != neighbours.relation:
        neighbours = Neighbours(REPLACE_ONE)  # local reports: a replace-one release (as in `privacy_figure`)
    local_epsilon = local_epsilon_of(events) if local else None
    events = neighbours.resolve(events)
    relation = REPLACE_ONE if local else "add/remove"  # the figure's mark (`PrivacyFigure.neighbours`)
    found = zcdp_guarantee(events, delta)
    direct = _basic_figure(events, delta)
    proved = None
    if direct is not None and (found is None or math.isinf(found[1]) or Fraction(direct[0]) < Fraction(found[1])):
        proved = direct
    if found is None:
        return PrivacyFigure(None, delta, ZCDP_METHOD, None, note="an event has no zCDP bound", proved=proved,
                             neighbours=relation, local_epsilon=local_epsilon)
    rho, epsilon = found
    return PrivacyFigure(epsilon, delta, ZCDP_METHOD, None, rho=rho, proved=proved, neighbours=relation,
                         local_epsilon=local_epsilon)


def _declared_zcdp(events: tuple[Event, ...], declared: Fraction, asked: float | None,
                   parameter: str) -> PrivacyFigure:
    """The declared delta wins (it is the definition's, as its type is: the
    signature's figure and what `run` charges, which refuses another
    --delta, FZ703); a --delta D that differs is never ignored silently: the
    guarantee at D is shown beside it. rho-zCDP implies (eps(D), D)-DP for
    every D (CKS 2020, Cor. 13), and so does what the accountant proves for
    the events at D: the smaller of the two is reported."""
    figure = zcdp_figure(events, declared, parameter)
    if asked is None or exact_delta(asked) == declared:
        return figure
    other = zcdp_figure(events, exact_delta(asked), parameter)
    candidates = [c for c in (other.epsilon, None if other.proved is None else other.proved[0])
                  if c is not None and not (isinstance(c, float) and math.isinf(c))]
    if not candidates:
        return figure
    best = min(candidates, key=lambda c: Fraction(c))
    shown_delta = other.proved[1] if other.proved is not None and best == other.proved[0] else exact_delta(asked)
    return dataclasses.replace(figure, at_delta=(best, shown_delta))


def _basic_figure(events: tuple[Event, ...], delta: Fraction) -> tuple[Fraction | float, Fraction | float] | None:
    """What the basic rule charges the events at ``delta`` (`ledger.rules.BasicRule`):
    their pure epsilon when they have one (shuffled reports aside), else the
    accountant's epsilon at ``delta``; None: no finite figure."""
    from fuzzpy.accounting.local import has_shuffled

    if not events:
        return None
    pure = pure_epsilon(events)
    if pure is not None and not has_shuffled(events):
        return pure, 0
    figure = _figure(events, float(delta), approximate=True)
    if figure.epsilon is None or figure.is_infinite:
        return None
    return figure.epsilon, (0 if figure.method.startswith("pure") else figure.delta)


def _figure(events: tuple[Event, ...], delta: float | None, approximate: bool = False) -> PrivacyFigure:
    """``approximate``: shuffled reports, pure only at their local epsilon,
    are reported at a delta even without `--delta`."""
    pure = pure_epsilon(events)
    if not events:
        return PrivacyFigure(Fraction(0), 0, "no release", Fraction(0) if delta is not None else None)
    if delta is None and pure is not None and not approximate:
        return PrivacyFigure(pure, 0, "pure (basic composition)", None)
    target = DEFAULT_DELTA if delta is None else delta
    try:
        from fuzzpy.accounting.accountant import charged_epsilon  # type: ignore[import-not-found]
    except ImportError:
        if pure is not None:
            return PrivacyFigure(pure, 0, "pure (basic composition)", pure)
        return PrivacyFigure(None, target, "none", None, note="the accountant is not available")
    try:
        with quiet_absl():  # what `run` charges, by the same function (review s28)
            charged, method = charged_epsilon(events, exact_delta(target))
    except Exception as exc:  # an accountant failure must not hide the exact pure cost
        if pure is not None:
            return PrivacyFigure(pure, 0, "pure (basic composition)", pure)
        return PrivacyFigure(None, target, "none", None, note=f"the accountant failed: {exc}")
    epsilon: Fraction | float = math.inf if charged is None else charged
    if charged is not None and Fraction(float(charged)) == charged:
        epsilon = float(charged)  # the accountant's float, shown as it always was
    if pure is not None and (math.isinf(epsilon) or pure <= Fraction(epsilon) or _show(epsilon) == _show(pure)):
        # the pure figure is no worse: it needs no delta (review s30a: shuffle[2] of rr[3]
        # was printed (3, 1e-06)-DP, the reports' own 3-DP with a delta wasted)
        return PrivacyFigure(pure, 0, "pure (basic composition)", pure if delta is not None else None)
    return PrivacyFigure(epsilon, target, method, pure if delta is not None else None)


def exact_delta(delta: float) -> Fraction:
    """The delta a user typed, from the float `check` parsed it into: the
    shortest decimal that reads back as that float (`1e-7`, not the float's
    binary value just below 1/10^7), as `run` keeps the typed text exactly."""
    return Fraction(repr(float(delta)))


# ---------------------------------------------------------------- definitions


def _written_type(checked: CheckedDef, p: ParamInfo) -> str:
    """A parameter's type; as written when it names a static parameter of a
    definition checked at each call (`num -[n]-> num`): its checked type is
    the generic pass's, at the placeholder 1 (review s30c)."""
    written = next((q.type for q in checked.decl.params if q.name == p.name), None)
    if not checked.deferred or written is None:
        return str(p.type)
    names = set(checked.static_params)
    stack: list[object] = [written]
    while stack:
        item = stack.pop()
        if isinstance(item, S.Var) and item.name in names:
            return _type_text(written)
        if isinstance(item, tuple):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item) if f.name != "span")
    return str(p.type)


def param_text(checked: CheckedDef, figures: dict[str, PrivacyFigure]) -> list[str]:
    parts = []
    for p in checked.params:
        if p.name in checked.static_params:  # a static index: no sensitivity, a number at each call
            written = next((q.type for q in checked.decl.params if q.name == p.name), None)
            nat = isinstance(written, S.TyName) and written.name == "nat"
            parts.append(f"({p.name} : {'nat' if nat else p.type})")
            continue
        if p.name in checked.symbolic_privacy:
            text = symbolic_cost_text(checked, p.name)
            # not pure (a Gaussian beside a symbolic epsilon): no one expression; each call's cost is listed
            parts.append(f"({p.name} :[{'at each call' if text is None else text}] {_written_type(checked, p)})")
            continue
        sens: str = str(p.sensitivity)
        figure = figures.get(p.name)
        if figure is not None and figure.pure_epsilon is None and figure.delta != 0 and figure.epsilon is not None:
            sens = _show(figure.epsilon)  # an approximate cost: show the epsilon at this delta
            if isinstance(figure.epsilon, float) and math.isinf(figure.epsilon):
                sens = "unbounded at this delta"  # words, not a bare `inf` (which reads as "not private")
        elif figure is not None and figure.epsilon is not None and (
                _IN_FORCE.get() != DEFAULT_NEIGHBOURS or _grouped(checked.privacy.get(p.name, ()))):
            # the checker's sensitivity is for add/remove and one row: show this relation's (and
            # this group's, as for an approximate cost: review s30a) cost
            sens = _show(figure.epsilon)
        parts.append(f"({p.name} :[{sens}] {p.type})")
    return parts


def _grouped(events: tuple[Event, ...]) -> bool:
    """Whether a person's group (`check --group k`) is among a parameter's events."""
    from fuzzpy.accounting.events import Group

    return any(isinstance(e, Group) and e.rows for e in events)


def signature(checked: CheckedDef, figures: dict[str, PrivacyFigure]) -> str:
    return " -> ".join([*param_text(checked, figures), str(checked.result)])


def figures_for(checked: CheckedDef, delta: float | None) -> dict[str, PrivacyFigure]:
    """The guarantee in each database, then in each argument whose cost is
    (eps, delta) (`CheckedDef.argument_privacy`), reported alike."""
    events_of = checked.privacy | checked.argument_privacy
    order = [p.name for p in checked.params if p.name in events_of]  # the signature's order
    order += [name for name in events_of if name not in order]
    if checked.zcdp_delta is not None:  # the declared measure: rho-zCDP in every database
        return {name: _declared_zcdp(events_of[name], checked.zcdp_delta, delta, name) if name in checked.privacy
                else privacy_figure(events_of[name], delta, name) for name in order}
    return {name: privacy_figure(events_of[name], delta, name) for name in order}


#: Each definition's figures, by definition name: computed once and passed to
#: the functions below, which otherwise compute them (the accountant may be slow).
Figures = dict[str, dict[str, PrivacyFigure]]


def all_figures(checked: CheckedProgram, delta: float | None) -> Figures:
    return {d.name: figures_for(d, delta) for d in checked.definitions.values()}


def symbolic_text(d: CheckedDef) -> str:
    """A definition's cost over its static parameters: `eps-DP in db`; for
    one checked at each call's numbers only, which parameter made it so."""
    if d.deferred:
        name, why = d.deferred[0]
        more = f" (and {', '.join(n for n, _ in d.deferred[1:])})" if len(d.deferred) > 1 else ""
        return f"cost checked at each call's numbers: `{name}` is {why}{more}"
    parts = []
    approx = symbolic_approx(d)
    for name, cost in symbolic_costs(d).items():
        if name in d.local_reports:  # as a call's figure says it: the relation, each person's LDP
            local = d.local_reports[name]
            parts.append(f"local reports (replace-one; {'' if local is None else f'{_show(local)}-'}LDP per person) "
                         f"in {name}: its epsilon at each call's numbers")
            continue
        if name in approx:  # by the construction of `gauss_dp`'s sigma
            eps, delta = (str(x) for x in approx[name])
            parts.append(f"({eps}, {delta})-DP in {name}")
            continue
        if cost is None:
            parts.append(f"approximate in {name}: see each call")
            continue
        text = str(cost)
        parts.append(f"{f'({text})' if ' ' in text else text}-DP in {name}")
    if not d.result_is_fuzzy and _nat_params(d):  # a deterministic definition: its sensitivities over the indices (DFuzz)
        for p in d.params:
            if p.name not in d.static_params and not p.sensitivity.is_zero:
                text = str(p.sensitivity)
                parts.append(f"{f'({text})' if ' ' in text else text}-sensitive in {p.name}")
    shown = symbolic_costs(d)
    if not parts or all(shown[n] is None and n not in approx for n in shown) and shown:
        return ", ".join(parts)
    nats = _nat_params(d)
    ranges = ", ".join(f"whole {p} >= 1" if p in nats else f"{p} > 0" for p in d.static_params)
    if approx:  # a call whose `gauss_dp` delta is not below 1 is refused
        ranges += " (at each call: every `gauss_dp` delta below 1)"
    return ", ".join(parts) + f"  for all {ranges}"


def _nat_params(d: CheckedDef) -> frozenset[str]:
    """The definition's `(n : nat)` parameters (written so)."""
    return frozenset(q.name for q in d.decl.params if isinstance(q.type, S.TyName) and q.type.name == "nat")


def instance_lines(checked: CheckedProgram, d: CheckedDef, delta: float | None) -> list[str]:
    """Each call's numbers and the cost there (`check` prints them under the definition)."""
    lines = []
    for instance in checked.instances.get(d.name, ()):
        figures = {name: privacy_figure(events, delta, name) for name, events in instance.privacy.items()}
        cost = ", ".join(f"{fig.text()} in {name}" for name, fig in figures.items())
        if not cost and not d.result_is_fuzzy:  # a deterministic definition: its sensitivities there
            cost = ", ".join(f"{s}-sensitive in {name}" for name, s in instance.sensitivities) or "no parameter"
        cost = cost or "no release in a database"
        lines.append(f"    at {instance.assignment()}: {cost}")
    return lines


def text_report(checked: CheckedProgram, delta: float | None, known: Figures | None = None) -> str:
    rows = []
    extra: dict[str, list[str]] = {}
    for d in checked.own_definitions().values():
        figures = known[d.name] if known is not None else figures_for(d, delta)
        if d.static_params:
            rows.append((d.name, signature(d, figures), symbolic_text(d)))
            # its figure at every number rests on the same unchecked `assume def`s as a caller's (review s30c)
            extra[d.name] = assumption_lines(checked, d) + instance_lines(checked, d, delta)
            continue
        privacy = ", ".join(f"{fig.text()} in {name}" for name, fig in figures.items())
        approx = [f for f in figures.values() if f.delta != 0 and f.epsilon is not None and not f.is_infinite
                  and f.rho is None]
        extra[d.name] = assumption_lines(checked, d)
        if approx and delta is None:
            privacy += f"  (at delta = {_show(approx[0].delta)}, by {approx[0].method})"
        elif approx:
            privacy += f"  (by {approx[0].method})"
        rows.append((d.name, signature(d, figures), privacy))
    blocks = [_align(group, extra) for group in (rows, _mechanism_rows(checked)) if group]
    if any(privacy for _, _, privacy in rows):  # costs are shown: say for which neighbours
        blocks.append(_IN_FORCE.get().text())
        if any("(replace-one" in privacy for _, _, privacy in rows):
            blocks.append(REPLACE_ONE_TEXT)
    return "\n".join(blocks) if blocks else "(no definitions)"


def assumption_lines(checked: CheckedProgram, d: CheckedDef) -> list[str]:
    """Under an `assume def`, how its declaration stands; under a definition
    that uses one z3 could not check, that its figures rest on it."""
    lines = []
    if d.assumption is not None and d.assumption.status != "typed":
        lines.append(f"    {d.assumption.text()}")
    for name in d.rests_on:
        if name == d.name:
            continue
        found = checked.definitions[name].assumption
        claim = "" if found is None else f" ({found.claim_text()})"
        lines.append(f"    rests on an UNCHECKED ASSUMPTION: `{name}`{claim} is declared, not proved")
    return lines


def _align(rows: list[tuple[str, str, str]], extra: dict[str, list[str]] | None = None) -> str:
    name_width = max(len(n) for n, _, _ in rows)
    sig_width = max((len(s) for _, s, p in rows if p), default=0)
    lines = []
    for name, sig, privacy in rows:
        line = f"{name.ljust(name_width)} : {sig}"
        if privacy:
            line = f"{name.ljust(name_width)} : {sig.ljust(sig_width)}  {privacy}"
        lines.append(line)
        lines.extend((extra or {}).get(name, []))
    return "\n".join(lines)


def _mechanism_rows(checked: CheckedProgram) -> list[tuple[str, str, str]]:
    """Mechanisms are listed with their claim; `fuzzpy verify` proves it."""
    rows = []
    for name, mech in checked.mechanisms.items():
        params = " -> ".join(f"({p.name} : {_type_text(p.type)})" for p in mech.params)
        rows.append((name, f"mechanism {params} -> {_type_text(mech.result)}", f"claims {claim_text(mech)}-DP (see `fuzzpy verify`)"))
    return rows


def claim_text(mech: S.MechanismDecl) -> str:
    from fuzzpy.frontend.printer import mexpr

    claim = mech.privacy  # a mechanism's claim is in the statement language (`abs(eps)`)
    if isinstance(claim, S.Tuple):
        return "(" + ", ".join(mexpr(item) for item in claim.items) + ")"
    if mech.delta is not None:  # `privacy (eps, delta)`
        return f"({mexpr(claim)}, {mexpr(mech.delta)})"
    return mexpr(claim)


def _type_text(ty: S.TypeExpr) -> str:
    from fuzzpy.frontend.printer import type_text

    return type_text(ty)


def json_mechanisms(checked: CheckedProgram) -> list[dict[str, object]]:
    return [{"name": name, "claim": claim_text(mech)} for name, mech in checked.mechanisms.items()]


def infinite_at_delta(checked: CheckedProgram, delta: float | None, known: Figures | None = None) -> list[Diagnostic]:
    """Definitions whose cost is finite in structure but whose epsilon no
    method bounds at this delta: `check` must not accept what `run` refuses
    (adversarial review of issue 9, F5)."""
    found = []
    decls = {d.name: d for d in checked.program.decls if isinstance(d, S.DefDecl)}
    for d in checked.own_definitions().values():
        for name, figure in (known[d.name] if known is not None else figures_for(d, delta)).items():
            if name in d.argument_privacy:  # an argument is not charged: `run` carries it out, the text says so
                continue
            epsilon = figure.epsilon
            if isinstance(epsilon, float) and math.isinf(epsilon):
                found.append(Diagnostic(
                    "FZ314",
                    f"`{d.name}` has no finite epsilon in `{name}` at delta = {_show(figure.delta)}: "
                    "no accounting method bounds its privacy loss there",
                    decls[d.name].name_span,
                    hint="add more noise (a larger sigma), or allow a larger `--delta`",
                ))
    return found


#: Above this epsilon a cost is no meaningful privacy (`ledger.policy.LARGE_EPSILON`, review s27c).
LARGE_EPSILON = 10


def large_costs(checked: CheckedProgram, known: Figures) -> list[Diagnostic]:
    """A warning (FZ315), never an error, for a definition whose epsilon
    exceeds `LARGE_EPSILON` in a parameter: `laplace[0.5]` of a
    `sum[0, 100000]` is 50000-DP, most often a noise scale meant for a
    sensitivity-1 query. It names the most sensitive noisy query and how to
    scale its noise (Dwork & Roth 2014, Thm 3.6: Laplace of scale s/eps on
    a query of L1 sensitivity s is eps-DP)."""
    found = []
    decls = {d.name: d for d in checked.program.decls if isinstance(d, S.DefDecl)}
    for d in checked.own_definitions().values():
        for name, figure in known[d.name].items():
            epsilon = figure.epsilon
            if name in d.argument_privacy or not isinstance(epsilon, float | int | Fraction) \
                    or isinstance(epsilon, float) and math.isinf(epsilon) or epsilon <= LARGE_EPSILON:
                continue  # an exact epsilon may be a Fraction beyond any float (1e300 * size db)
            found.append(Diagnostic(
                "FZ315", f"`{d.name}` costs eps={text_up(Fraction(epsilon))} in `{name}`, which is no meaningful "
                f"privacy (above {LARGE_EPSILON}){_sensitive_query(d.privacy.get(name, ()))}",
                decls[d.name].name_span, severity="warning", hint=_scale_hint(d.privacy.get(name, ()))))
    return found


def _noisy_queries(events: object) -> Iterator[tuple[Fraction, Fraction]]:
    """(sensitivity, epsilon) of every Laplace-like event, nested ones too."""
    from fuzzpy.accounting.events import Geometric, Laplace

    if isinstance(events, (tuple, list)):
        for event in events:
            yield from _noisy_queries(event)
    elif isinstance(events, (Laplace, Geometric)):
        if events.scale and events.sensitivity:
            yield Fraction(events.sensitivity), Fraction(events.sensitivity) / Fraction(events.scale)
    elif dataclasses.is_dataclass(events) and not isinstance(events, type):
        for f in dataclasses.fields(events):
            value = getattr(events, f.name)
            if isinstance(value, (tuple, list)) or dataclasses.is_dataclass(value):
                yield from _noisy_queries(value)


def _sensitive_query(events: object) -> str:
    queries = [q for q in _noisy_queries(events) if q[0] > 1]
    if not queries:
        return ""
    sensitivity, epsilon = max(queries)
    return (f": Laplace noise is added to a query of sensitivity {text_up(sensitivity)}, which costs "
            f"eps={text_up(epsilon)} (the noise's epsilon times the sensitivity)")


def _scale_hint(events: object) -> str:
    queries = [q for q in _noisy_queries(events) if q[0] > 1]
    if not queries:
        return "add more noise (a smaller epsilon in `laplace[...]`, a larger sigma)"
    sensitivity, epsilon = max(queries)
    meant, s = text_up(epsilon / sensitivity), text_up(sensitivity)
    return (f"scale the noise by the sensitivity: for eps={meant}, `laplace[{meant} / {s}]`, or release "
            f"`laplace[{meant}] (q / {s})` and multiply it back by {s} (free post-processing)")


def json_definitions(checked: CheckedProgram, delta: float | None, known: Figures | None = None) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for d in checked.own_definitions().values():
        figures = known[d.name] if known is not None else figures_for(d, delta)
        out.append(
            {
                "name": d.name,
                "type": signature(d, figures),
                "params": [{"name": p.name, "type": str(p.type), "sensitivity": _param_json(d, p)} for p in d.params],
                "result": str(d.result),
                "privacy": {name: fig.to_json() for name, fig in figures.items()},
            }
        )
        if d.assumption is not None:
            out[-1]["assumption"] = {"status": d.assumption.status, "reason": d.assumption.reason or None,
                                     "claims": {name: declared.to_json() for name, declared, _ in d.assumption.claims}}
        if d.rests_on:
            out[-1]["rests_on_unchecked"] = list(d.rests_on)
        if d.static_params:
            out[-1]["static_params"] = list(d.static_params)
            out[-1]["symbolic_privacy"] = {name: symbolic_cost_text(d, name) for name in d.symbolic_privacy}
            if d.local_reports:  # replace-one, each person's LDP: each instance's figure
                out[-1]["local_reports"] = {name: None if eps is None else _upper_float(eps)
                                            for name, eps in d.local_reports.items()}
            out[-1]["instances"] = [
                {
                    "values": {name: _argument_float(value) for name, value in instance.values},
                    "privacy": {name: privacy_figure(events, delta, name).to_json()
                                for name, events in instance.privacy.items()},
                }
                for instance in checked.instances.get(d.name, ())
            ]
    return out


def _param_json(d: CheckedDef, p: ParamInfo) -> object:
    """A parameter's sensitivity; for a static parameter "static", and for a
    cost over static parameters its expression (text)."""
    if p.name in d.static_params:
        return "static"
    if p.name in d.symbolic_privacy:
        return symbolic_cost_text(d, p.name)  # None: not expressible, see "instances"
    events = d.argument_privacy.get(p.name, d.privacy.get(p.name, ()))
    if events and pure_epsilon(events) is None:  # not a bare "inf": an (eps, delta) cost, under "privacy"
        return "approximate"
    return p.sensitivity.to_json()


# ---------------------------------------------------------------- numbers


def _show(x: Fraction | float) -> str:
    """A cost (epsilon or delta) as text, never below the computed value
    (`fuzzpy.language.figures`, issue 25): an exact Fraction as `Sens` shows it (exact,
    or rounded up), a float to 6 digits (3 below 1e-4), rounded up."""
    if isinstance(x, Fraction):
        return str(Sens(x)) if x >= 0 else str(x)
    return text_up(x, 6 if abs(x) >= 1e-4 else 3)


def _upper_float(x: Fraction | float) -> float | int | str:
    """A JSON number never below the exact value (privacy costs round up):
    the least double >= it (`fuzzpy.language.figures.json_figure`, the one
    conversion every cost a user reads goes through), an int when whole;
    "inf" (language design, section 7) for a value beyond the largest double."""
    if isinstance(x, Fraction) and x.denominator == 1 and x <= _LARGEST:
        return int(x)
    return json_figure(x)


def _argument_float(x: Fraction) -> float | int | str:
    """A call's number (not a cost) as JSON: its own short decimal when it has
    one (`eps = 7/10` is 0.7, as the program wrote it), else as a cost is
    shown (`_upper_float`)."""
    if x.denominator != 1 and abs(x) <= _LARGEST and Fraction(repr(float(x))) == x:
        return float(x)
    return _upper_float(x)


_LARGEST = Fraction(sys.float_info.max)
