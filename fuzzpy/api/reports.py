"""What the Python API's `check` and `verify` return (`fuzzpy.api`).

A `CheckReport` holds, per definition, its type, each parameter's
sensitivity and, for each `bag` parameter of a `fuzzy` result, its privacy
cost (the events, epsilon and delta at the requested delta, and the
accounting method); `to_json()` is `fuzzpy check --json`'s document and
`text` what `fuzzpy check` prints. A `VerifyResult` is one mechanism's
verdict. Both are plain data: the checker and verifier built them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from fuzzpy.accounting.neighbours import DEFAULT as DEFAULT_NEIGHBOURS
from fuzzpy.accounting.neighbours import Neighbours
from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.support.records import frozen

if TYPE_CHECKING:
    from fuzzpy.accounting.events import Event
    from fuzzpy.checker.report import PrivacyFigure
    from fuzzpy.checker.result import CheckedDef, CheckedProgram
    from fuzzpy.language.sensitivity import Sens
    from fuzzpy.verifier.cheapest import Cheaper
    from fuzzpy.verifier.game import GameProof
    from fuzzpy.verifier.path_shift import PathObligation
    from fuzzpy.verifier.verdict import Verdict


@frozen
class Cost:
    """The privacy cost of a definition's `fuzzy` result in one database."""

    database: str  # the `bag` parameter
    events: tuple[Event, ...]  # the mechanisms it performs there (the accountant's input)
    epsilon: Fraction | float | None  # None: no method could bound it (see ``note``)
    delta: Fraction | float
    method: str  # the accounting method that gave the figure
    pure_epsilon: Fraction | None  # the exact pure cost, when reported beside an approximate one
    text: str  # as `fuzzpy check` prints it: "0.1-DP", "(1.2, 1e-06)-DP"
    note: str | None = None
    rho: Fraction | None = None  # `privacy zcdp[delta]`: the rho-zCDP (epsilon is its conversion at delta)
    #: the neighbour relation the figure is for: "add-remove-one" (a row added or removed, the
    #: `bag` metric) or "replace-one" (`fuzzpy.accounting.neighbours`)
    neighbours: str = "add-remove-one"
    #: `privacy zcdp[delta]`: what the accountant proves for the events at that delta,
    #: (epsilon, delta), when below the conversion (what a basic budget is charged)
    proved: tuple[Fraction | float, Fraction | float] | None = None
    #: `privacy zcdp[delta]` checked at another delta D (`check(delta=D)`): the guarantee at D,
    #: (epsilon, D), beside the declared figure (which stays what `run` charges)
    at_delta: tuple[Fraction | float, Fraction | float] | None = None

    @property
    def events_text(self) -> str:
        from fuzzpy.checker.costs import describe_events

        return describe_events(self.events)

    def __str__(self) -> str:
        from fuzzpy.accounting.neighbours import phrase

        return f"{self.text} in {self.database}, {phrase(self.neighbours)} (by {self.method})"

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {"epsilon": _number(self.epsilon), "delta": _number(self.delta),
                                  "method": self.method}
        if self.pure_epsilon is not None:
            doc["pure_epsilon"] = _number(self.pure_epsilon)
        if self.note:
            doc["note"] = self.note
        if self.rho is not None:
            doc["measure"] = "zcdp"
            doc["rho"] = _number(self.rho)
        if self.proved is not None:
            doc["measure"] = "zcdp"
            doc["proved"] = {"epsilon": _number(self.proved[0]), "delta": _number(self.proved[1])}
        if self.at_delta is not None:
            doc["at_delta"] = {"epsilon": _number(self.at_delta[0]), "delta": _number(self.at_delta[1])}
        return doc


@frozen
class Parameter:
    """A parameter of a definition: its type and sensitivity (the algebra's
    value: `sensitivity.value` is an exact Fraction, None for infinity)."""

    name: str
    type: str
    sensitivity: Sens
    cost: Cost | None  # its privacy cost: a database of a `fuzzy` result, or an argument's (eps, delta) cost
    #: for a definition with static parameters (docs/language-notes.md):
    #: "static" for such a parameter, the cost's expression over them for a
    #: database (``sensitivity`` is then infinite: it is not one number)
    symbolic: str | None = None

    @property
    def sensitivity_text(self) -> str:
        if self.symbolic is not None:
            return self.symbolic
        if self.cost is not None and self.cost.pure_epsilon is None and self.cost.delta != 0:
            return f"approximate: {self.cost.text}"  # not a bare `inf` (it reads as "not private")
        return str(self.sensitivity)

    @property
    def is_static(self) -> bool:
        """A static parameter: a number each call gives, at which the
        definition is checked again (its ``sensitivity`` is the checker's
        figure for the number as data, not a cost)."""
        return self.symbolic == "static"


@frozen
class StaticInstance:
    """A definition with static parameters at one call's numbers: ``values``
    (exact) and its privacy cost there in each database (``costs``, as a
    definition without static parameters has them)."""

    values: dict[str, Fraction]
    costs: dict[str, Cost]

    def __str__(self) -> str:
        at = ", ".join(f"{name} = {float(value):g}" for name, value in self.values.items())
        return f"at {at}: " + (", ".join(str(c) for c in self.costs.values()) or "no release in a database")


class StaticCosts(dict[str, "Cost"]):
    """The `costs` of a definition with static parameters: empty (its cost
    is not one number), and a lookup says where the cost is."""

    def __init__(self, definition: str, static: tuple[str, ...], expressions: dict[str, str | None]) -> None:
        super().__init__()
        shown = ", ".join(f"{db}: {e or 'approximate, see each call'}" for db, e in expressions.items()) or "none"
        self._why = (
            f"`{definition}` has static parameters ({', '.join(static)}): its cost is an expression over them "
            f"({shown}); "
            "see `.cost_expressions`, `.instances` (each call's numbers and costs), or `quote`/`run` with `args=`"
        )

    def __missing__(self, key: str) -> Cost:
        raise KeyError(self._why)


@frozen
class DefinitionReport:
    """One definition as `check` sees it."""

    name: str
    type: str  # the signature as `fuzzpy check` prints it
    result: str
    parameters: tuple[Parameter, ...]
    checked: CheckedDef = field(repr=False, compare=False)
    _json: dict[str, object] = field(repr=False, compare=False, default_factory=dict)
    _explain: Callable[[str], str] | None = field(repr=False, compare=False, default=None)

    #: a definition whose noise scales name its parameters (docs/language-notes.md
    #: "Static parameters"): those parameters, its cost in each database as an
    #: expression over them (None: approximate, see each call), and each call's
    #: numbers in the program with its cost there
    static_parameters: tuple[str, ...] = ()
    cost_expressions: dict[str, str | None] = field(default_factory=dict)
    instances: tuple[StaticInstance, ...] = ()

    @property
    def costs(self) -> dict[str, Cost]:
        """The privacy cost in each database (empty unless the result is
        `fuzzy`). A definition with static parameters has no single cost:
        its `costs` is empty and a lookup in it raises a KeyError saying so
        (`cost_expressions` and `instances` hold its costs)."""
        if self.static_parameters:
            return StaticCosts(self.name, self.static_parameters, self.cost_expressions)
        return {p.name: p.cost for p in self.parameters if p.cost is not None}

    @property
    def rests_on_unchecked(self) -> tuple[str, ...]:
        """The `assume def`s z3 could not check that this definition's
        figures rest on (FZ318; itself or those it calls): () when none."""
        return self.checked.rests_on

    @property
    def derivation(self) -> str:
        """The derivation, rule by rule, as `fuzzpy check --explain` prints it."""
        return self._explain(self.name) if self._explain is not None else ""

    def to_json(self) -> dict[str, object]:
        return dict(self._json)


@frozen
class MechanismClaim:
    """A `mechanism` of the program and the privacy it claims (`verify` proves it)."""

    name: str
    claim: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "claim": self.claim}


@frozen
class CheckReport:
    """The whole program as `check` sees it at one delta.

    ``report["noisy_count"]`` is a definition's `DefinitionReport`;
    ``report.definitions`` all of them, in source order.
    """

    name: str
    definitions: tuple[DefinitionReport, ...]
    mechanisms: tuple[MechanismClaim, ...]
    diagnostics: tuple[Diagnostic, ...]
    delta: float | None
    text: str  # what `fuzzpy check` prints
    checked: CheckedProgram = field(repr=False, compare=False)
    neighbours: Neighbours = field(default=DEFAULT_NEIGHBOURS)  # the relation every figure is for

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity != "error")

    def __getitem__(self, name: str) -> DefinitionReport:
        for definition in self.definitions:
            if definition.name == name:
                return definition
        known = ", ".join(d.name for d in self.definitions) or "none"
        raise KeyError(f"no definition `{name}` (definitions: {known})")

    def __contains__(self, name: object) -> bool:
        return any(d.name == name for d in self.definitions)

    def __iter__(self) -> Iterator[DefinitionReport]:
        return iter(self.definitions)

    def __len__(self) -> int:
        return len(self.definitions)

    def to_json(self) -> dict[str, object]:
        """`fuzzpy check --json`'s document for this program."""
        return {
            "ok": self.ok,
            **self.neighbours.to_json(),
            "definitions": [d.to_json() for d in self.definitions],
            "mechanisms": [m.to_json() for m in self.mechanisms],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        from fuzzpy.api.notebook import check_report_html

        return check_report_html(self)


def check_report(
    name: str,
    checked: CheckedProgram,
    delta: float | None,
    explain: Callable[[str], str] | None = None,
    neighbours: Neighbours = DEFAULT_NEIGHBOURS,
) -> CheckReport:
    """The report of a checked program at ``delta`` (None: the default one)
    for ``neighbours``; the accountant is asked once per definition."""
    from fuzzpy.checker import report as R

    with R.under(neighbours):
        return _check_report(name, checked, delta, explain, neighbours)


def _check_report(
    name: str, checked: CheckedProgram, delta: float | None, explain: Callable[[str], str] | None,
    neighbours: Neighbours,
) -> CheckReport:
    from fuzzpy.checker import report as R

    figures = R.all_figures(checked, delta)
    documents = R.json_definitions(checked, delta, figures)
    mechanisms = tuple(MechanismClaim(**m) for m in R.json_mechanisms(checked))  # type: ignore[arg-type]
    diagnostics = (*checked.warnings, *R.infinite_at_delta(checked, delta, figures), *R.large_costs(checked, figures))
    read = _columns_read(checked)
    for document in documents:
        if document.get("name") in read:
            document["columns_read"] = {p: list(c) for p, c in read[str(document["name"])].items()}
    definitions = tuple(
        _definition(d, figures[d.name], doc, explain, _instances(checked, d, delta))
        for d, doc in zip(checked.own_definitions().values(), documents, strict=True)
    )
    extra = _columns_text(read)
    if any("vec[" in d.type for d in definitions):  # `vec[2] num` read as "two entries" (issue 31)
        extra += ("\nvec[p] num: a vector of any length whose distance is the Lp norm (p = 1, 2 or inf); "
                  "p is not its length")
    text = _before_neighbours(R.text_report(checked, delta, figures), extra)
    return CheckReport(name, definitions, mechanisms, tuple(diagnostics), delta, text, checked, neighbours)


def _before_neighbours(text: str, extra: str) -> str:
    """``extra`` lines inserted before the report's closing `neighbours:`
    line (which stays last), or appended."""
    if not extra:
        return text
    head, sep, tail = text.rpartition("\nneighbours:")
    return f"{head}{extra}{sep}{tail}" if sep else text + extra


def _columns_read(checked: CheckedProgram) -> dict[str, dict[str, tuple[str, ...]]]:
    """For each definition with a `fuzzy` result, the columns each bag of
    records is read against when it is run (`fuzzpy.release.columns`)."""
    from fuzzpy.language.types import TFuzzy
    from fuzzpy.release.columns import columns_read, fields_read

    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for d in checked.definitions.values():
        if not isinstance(d.result, TFuzzy):
            continue
        names = fields_read(checked.program, d.name, d.result)
        params = {p.name: columns_read(p.type, names) for p in d.params}
        params = {p: c for p, c in params.items() if c is not None}
        if params:
            found[d.name] = params  # type: ignore[assignment]
    return found


def _columns_text(read: dict[str, dict[str, tuple[str, ...]]]) -> str:
    if not read:
        return ""
    lines = ["", "columns read by a run (a row with a missing value, or a value not of the column's type, in one "
             "of them is dropped; a declared column not read drops no row):"]
    for name, params in read.items():
        shown = "; ".join(f"{p}: {', '.join(c) if c else 'none (only the rows are counted)'}"
                          for p, c in params.items())
        lines.append(f"  {name}: {shown}")
    return "\n".join(lines)


def _definition(
    d: CheckedDef, figures: dict[str, PrivacyFigure], document: dict[str, object],
    explain: Callable[[str], str] | None, instances: tuple[StaticInstance, ...],
) -> DefinitionReport:
    parameters = tuple(
        Parameter(p.name, str(p.type), p.sensitivity, _cost(p.name, (d.privacy | d.argument_privacy).get(p.name, ()), figures[p.name])
                  if p.name in figures else None, _symbolic(d, p.name))
        for p in d.params
    )
    from fuzzpy.checker.report import symbolic_costs

    expressions = {name: None if cost is None else str(cost) for name, cost in symbolic_costs(d).items()}
    return DefinitionReport(d.name, str(document["type"]), str(d.result), parameters, d, document, explain,
                            d.static_params, expressions, instances)


def _instances(checked: CheckedProgram, d: CheckedDef, delta: float | None) -> tuple[StaticInstance, ...]:
    from fuzzpy.checker.report import privacy_figure

    return tuple(
        StaticInstance(dict(instance.values),
                       {db: _cost(db, events, privacy_figure(events, delta, db)) for db, events in instance.privacy.items()})
        for instance in checked.instances.get(d.name, ())
    )


def _symbolic(d: CheckedDef, name: str) -> str | None:
    from fuzzpy.checker.report import symbolic_cost_text

    if name in d.static_params:
        return "static"
    if name in d.symbolic_privacy:
        text = symbolic_cost_text(d, name)
        if text is None and name in d.local_reports:
            return "local reports, replace-one (see each call)"
        if text is None:
            return "checked at each call" if d.deferred else "not pure (see each call)"
        return text
    return None


def _cost(database: str, events: tuple[Event, ...], figure: PrivacyFigure) -> Cost:
    # `check_report` builds every cost under its relation (`checker.report.under`); a figure of
    # local reports is for replace-one whatever was asked (issue 28: it said add/remove-one)
    return Cost(database, tuple(events), figure.epsilon, figure.delta, figure.method, figure.pure_epsilon,
                figure.text(), figure.note, figure.rho, figure.relation(), figure.proved,
                figure.at_delta)


def _number(value: Fraction | float | None) -> object:
    from fuzzpy.checker.report import _upper_float

    return None if value is None else _upper_float(value)


# ---------------------------------------------------------------- verify


@frozen
class VerifyResult:
    """One mechanism's verdict: ``status`` is "proved", "refuted" or
    "unknown" (an honest answer: nothing is proved)."""

    verdict: Verdict = field(repr=False)
    cached: bool = False  # read from the proof cache
    warnings: tuple[Diagnostic, ...] = ()  # FZ406: proved only because no input meets `requires`
    decl: Any = field(default=None, repr=False, compare=False)  # the mechanism (for the proof as data)
    program: Any = field(default=None, repr=False, compare=False)
    _games: dict[object, Any] = field(default_factory=dict, repr=False, compare=False)  # built on request

    @property
    def name(self) -> str:
        return self.verdict.name

    @property
    def status(self) -> str:
        return self.verdict.status

    @property
    def proved(self) -> bool:
        return self.verdict.proved

    @property
    def claim(self) -> str:
        """The privacy cost the mechanism claims, as written (e.g. "eps")."""
        return self.verdict.claim_text

    @property
    def reason(self) -> str | None:
        return self.verdict.reason

    @property
    def counterexample(self) -> dict[str, object] | None:
        """For a refuted claim: inputs, neighbour, output and the exact
        probabilities that break it (as `verify --json` gives them)."""
        document = self.verdict.to_json()["counterexample"]
        return document if isinstance(document, dict) else None

    @property
    def steps(self) -> list[str]:
        """The proof as the verification game, or the refutation, line by line."""
        return self.text(explain=True).splitlines()[1:]

    def proof(self, minimise: bool = True) -> GameProof | None:
        """The proof as data (a tree of frozen dataclasses, `to_json()`-able):
        precondition, statements with their assertions, the coupling rule at
        each draw, loop invariants (``minimise``: only the clauses the proof
        kernel needs, which asks the kernel again), the closing cost. None
        unless proved."""
        if minimise not in self._games:
            from fuzzpy.verifier.game import build

            self._games[minimise] = None if self.decl is None else build(self.verdict, self.decl, self.program,
                                                                           minimise)
        return self._games[minimise]  # type: ignore[no-any-return]

    def text(self, explain: bool | str = False) -> str:
        """What `fuzzpy verify` prints for this mechanism: ``explain`` True or
        "game" adds the verification game, "summary" the short proof."""
        from fuzzpy.verifier.report import render

        mode = "game" if explain is True else explain
        game = self.proof() if mode == "game" and self.verdict.proved else None
        text = render(self.verdict, mode, game)
        if mode == "game" and self.verdict.status == "refuted" and not self._approximate():
            from fuzzpy.verifier.report import cheaper_lines

            cheaper = self.cheapest_claim()
            obligation = self.failed_obligation() if cheaper is None else None
            text += "\n" + "\n".join(self.derivation() + cheaper_lines(self.verdict, cheaper, obligation))
        return text

    def _approximate(self) -> bool:
        """A Gaussian draw or a `privacy (eps, delta)` claim: the Laplace derivation and cheaper claims do not apply."""
        from fuzzpy.verifier.gaussian import applies

        return self.decl is not None and applies(self.decl)

    def derivation(self) -> list[str]:
        """For a refuted claim: how both probabilities are computed (each path's
        region over the draws, its density equations, its integral), as text."""
        cx = self.verdict.counterexample
        if cx is None or self.decl is None or self._approximate():
            return []  # an (eps, delta) refutation prints its own numbers (verifier/gauss_refuter.py)
        from fuzzpy.checker.scope import static_constants
        from fuzzpy.verifier.model import analyse
        from fuzzpy.verifier.refuter import derivation

        try:
            info = analyse(self.decl, static_constants(self.program))
            return ["  derivation:", *derivation(info, cx)]
        except Exception as exc:  # noqa: BLE001 - text for a reader: the verdict stands without it
            return [f"  (no derivation: {type(exc).__name__})"]

    def failed_obligation(self) -> PathObligation | None:
        """For a refuted claim whose output comes from one path on each input:
        the cheapest shift of the draws that carries one path onto the other
        (its cost above the claim), or the requirements no shift meets."""
        cx = self.verdict.counterexample
        if cx is None or self.decl is None or self._approximate():
            return None
        from fuzzpy.checker.scope import static_constants
        from fuzzpy.verifier.model import analyse
        from fuzzpy.verifier.path_shift import path_obligation

        try:
            return path_obligation(analyse(self.decl, static_constants(self.program)), cx)
        except Exception:  # noqa: BLE001 - text for a reader: the verdict stands without it
            return None

    def cheapest_claim(self) -> Cheaper | None:
        """For a refuted claim: the cheapest claim the verifier proves among the
        costs a proof could pay (`fuzzpy.verifier.cheapest`), with the obligation
        that fails for the original claim; None when none is found."""
        if "cheapest" not in self._games:
            from fuzzpy.checker.scope import static_constants
            from fuzzpy.verifier.cheapest import cheapest_claim

            found = None
            if self.verdict.status == "refuted" and self.decl is not None and not self._approximate():
                found = cheapest_claim(self.decl, self.program, static_constants(self.program),
                                       self.verdict.counterexample)
            self._games["cheapest"] = found
        return self._games["cheapest"]  # type: ignore[no-any-return]

    def to_json(self, minimise: bool = False) -> dict[str, object]:
        """``minimise`` (`verify --json --explain`): the proof's invariants reduced
        to what the kernel needs, and for a refuted claim the cheapest claim proved."""
        document = {**self.verdict.to_json(), "cached": self.cached}
        game = self.proof(minimise) if self.verdict.proved else None
        if game is not None:
            document["proof"] = {**game.to_json(), "minimised": minimise}
        if minimise and self.verdict.status == "refuted":
            cheaper = self.cheapest_claim()
            document["cheapest_claim"] = None if cheaper is None else {
                "claim": cheaper.claim, "tried": list(cheaper.tried), "failing": cheaper.failing}
        return document

    def __repr__(self) -> str:
        return f"VerifyResult({self.text()!r})"
