"""A run: release a checked definition's result on data, under a budget.

`execute(RunRequest)` is what `fuzzpy run` (`fuzzpy.commands.run`) calls.

The order is what makes a run safe (language design, section 6, and
docs/semantics.md, "Data loading and the order of a run"):

1. parse and check the program; refuse what the checker did not accept
   (exit 1) -- the checker also refuses every call of a mechanism that the
   coupling verifier has not proved (FZ310);
2. name each `bag` parameter's dataset (`fuzzpy.data.datasets`), take
   the definition's privacy events per dataset and quote them against its
   budget, refusing (exit 3) before the data is read;
3. read each data file and check what is public about it: it is the file
   registered for its dataset (unchanged), its format and header, and the
   columns and types the row type reads (exit 2, nothing charged). A first
   run types its dataset here, as `dataset register` would, before the row
   type is judged against those types (issue 31, F1); the registration is
   recorded, with the budget, only in the charge's transaction (step 5), so
   a refused run writes nothing to the ledger (review s30 E);
4. load the rows under the row rules: this cannot fail, whatever the rows
   hold (a row that does not fit is dropped or its cell replaced);
5. charge the ledger (committed before anything is computed or shown),
   recording the data file's hash, whether the run is seeded and what the
   row rules did (for the data owner);
6. compute, sample with the exact samplers, record the released value in
   the ledger, print.

Nothing after step 3 depends on the rows except the release itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from fuzzpy.accounting.events import Event
from fuzzpy.checker.result import CheckedDef, CheckedProgram
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN, Source, Span
from fuzzpy.language.types import (
    LenVar,
    TBag,
    TBool,
    TFuzzy,
    TInt,
    TList,
    TNum,
    TString,
    TVec,
    Type,
    holds_function,
)

if TYPE_CHECKING:  # the runtime's numeric modules load only when a run starts
    from fuzzpy.ledger.book import Budget, Receipt
    from fuzzpy.ledger.quotes import Quote
    from fuzzpy.release.accuracy import Accuracy
    from fuzzpy.runtime.lengths import FrameBuilder
    from fuzzpy.runtime.randomness import RandomSource

Value = Any

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_BUDGET = 0, 1, 2, 3


class Refusal(FuzzError):
    """A run stopped with diagnostics and a chosen exit code (a `FuzzError`
    whose exit code is fixed rather than read off the codes: FZ522 is a data
    code but a rejection)."""

    def __init__(self, exit_code: int, diagnostics: tuple[Diagnostic, ...]) -> None:
        super().__init__(tuple(diagnostics))
        self._exit_code = exit_code

    @property
    def exit_code(self) -> int:
        return self._exit_code


def refuse(exit_code: int, code: str, message: str, hint: str | None = None, span: Span = NO_SPAN) -> Refusal:
    return Refusal(exit_code, (Diagnostic(code, message, span, hint=hint),))


@dataclass
class RunRequest:
    file: str
    definition: str
    data: dict[str, Any] = field(default_factory=dict)  # path or name, or data in memory (fuzzpy.data)
    args: dict[str, str] = field(default_factory=dict)
    budget: str | None = None
    rule: str = "basic"
    ledger: str | None = None
    datasets: dict[str, str] = field(default_factory=dict)
    seed: int | None = None
    delta: str | None = None
    engine: str = "auto"  # memory | duckdb | spark; auto: DuckDB for files (fuzzpy.engines)
    source_text: str | None = None  # the program's text, when not read from `file` (the Python API)
    confidence: Fraction | None = None  # the level of the accuracy intervals (default 95%; fuzzpy.release.accuracy)
    neighbours: str | None = None  # the relation charged (None: the datasets' own; fuzzpy.accounting.neighbours)
    # with replace-one: the dataset's public number of rows (one bag parameter), or per bag
    # parameter {name: rows} (`accounting.row_counts`); checked once loaded
    rows: int | dict[str, int] | None = None


@dataclass
class RunResult:
    value: Value
    receipts: list[Receipt]
    private: bool
    warnings: list[str]
    files: dict[str, str] = field(default_factory=dict)  # dataset key -> data file
    type: Type | None = None  # the definition's result type (the API converts the value by it)
    accuracy: tuple[Accuracy, ...] = ()  # each released part's noise and interval (fuzzpy.release.accuracy)
    neighbours: str = "add-remove-one"  # the relation every charge is for
    rows: int | dict[str, int] | None = None  # the public row count(s) it was charged with (replace-one)
    rests_on_unchecked: tuple[str, ...] = ()  # the unchecked `assume def`s the charge rests on (FZ318)

    def neighbours_text(self) -> str:
        from fuzzpy.accounting.neighbours import Neighbours

        return Neighbours.of(self.neighbours, self.rows).text()

    def to_json(self) -> dict[str, object]:
        from fuzzpy.runtime.values import to_json

        first = self.receipts[0] if self.receipts else None
        zero = {"epsilon": 0.0, "delta": 0.0}
        return {
            "released": to_json(self.value),
            "charged": first.charged_json() if first else zero,
            "remaining": first.remaining_json() if first else None,
            "datasets": [r.to_json() for r in self.receipts],
            "accuracy": [a.to_json() for a in self.accuracy],
            "private": self.private,
            "warnings": self.warnings,
            "neighbours": self.neighbours,
            "rows": self.rows,
            **({"rests_on_unchecked": list(self.rests_on_unchecked)} if self.rests_on_unchecked else {}),
        }


# ---------------------------------------------------------------- the steps


def check(source: Source) -> CheckedProgram:
    from fuzzpy.checker import check_program
    from fuzzpy.release.pipeline import parse

    try:
        return check_program(parse(source))
    except FuzzError as exc:
        raise Refusal(EXIT_REJECTED, exc.diagnostics) from None


def find_definition(checked: CheckedProgram, name: str) -> CheckedDef:
    if name not in checked.definitions:
        known = ", ".join(sorted(checked.definitions)) or "none"
        raise refuse(EXIT_USAGE, "FZ521", f"the program has no definition `{name}`", f"its definitions: {known}")
    return checked.definitions[name]


def at_static_values(checked: CheckedProgram, definition: CheckedDef, public: dict[str, Value]) -> CheckedDef:
    """A definition whose noise scales name its parameters, at the numbers
    given (`--arg eps=0.1`): checked again there, its events are what the
    run charges; the interpreter reads the same exact numbers."""
    from fuzzpy.checker import instantiate_definition

    values = {name: Fraction(public[name]) for name in definition.static_params}
    try:
        return instantiate_definition(checked.program, definition.name, values)
    except FuzzError as exc:
        raise Refusal(EXIT_REJECTED, exc.diagnostics) from None


def refuse_unsafe_release(definition: CheckedDef) -> None:
    """A result that is not `fuzzy` may only depend on public parameters;
    and only data is released, never a function (a24 F1: a closure's value
    is its code and what it captured -- a bag it never reads, say, whose
    rows the type system rightly charges nothing for, would be shown)."""
    if holds_function(definition.result):
        raise refuse(
            EXIT_REJECTED,
            "FZ526",
            f"`{definition.name}` returns `{definition.result}`, which holds a function: only data "
            f"(numbers, strings, vectors, lists, records, ...) can be released",
            "release the function's results instead: apply it inside the definition",
            definition.decl.name_span,
        )
    if isinstance(definition.result, TFuzzy):
        return
    for param in definition.params:
        if isinstance(param.type, TBag) and not param.sensitivity.is_zero:
            raise refuse(
                EXIT_REJECTED,
                "FZ522",
                f"`{definition.name}` returns `{definition.result}`, not a `fuzzy` value: releasing it "
                f"would publish `{param.name}` without noise",
                "run a definition whose result is `fuzzy` (add noise with laplace, gauss or expmech)",
                definition.decl.name_span,
            )


def _relation(request: RunRequest, ledger: Any, keys: dict[str, str],
              events: dict[str, tuple[Event, ...]]) -> RunRequest:
    """The request with its neighbour relation settled: the one asked for,
    else replace-one for a release of local reports (the only relation they
    are private for; a dataset for the other refuses it, FZ605), else the
    one the datasets' charges are for (add/remove-one for a new dataset;
    FZ605 if two datasets of one release disagree)."""
    from dataclasses import replace

    from fuzzpy.accounting.neighbours import relation_of_release

    if request.neighbours is not None:
        return request
    implied = relation_of_release(tuple(e for evs in events.values() for e in evs), None)
    if implied is not None:
        return replace(request, neighbours=implied)
    found = {ledger.neighbours(key) for key in keys.values()} or {"add-remove-one"}
    if len(found) > 1:
        raise refuse(EXIT_BUDGET, "FZ605", "the datasets of this release are charged for different neighbour "
                     f"relations ({', '.join(sorted(found))}); one release is for one relation",
                     "give --neighbours; the datasets of the other relation refuse it")
    return replace(request, neighbours=found.pop())


def _for_relation(events: dict[str, tuple[Event, ...]], request: RunRequest) -> dict[str, tuple[Event, ...]]:
    """The events restated for the request's neighbour relation (no fixed-size
    sample left: fuzzpy.accounting.neighbours); FZ523 for a bad relation."""
    from fuzzpy.accounting.neighbours import LocalNeedsReplaceOne, Neighbours
    from fuzzpy.accounting.row_counts import for_parameters

    try:
        # a bare --rows N for one bag parameter only; NAME=N for bag parameters of this definition
        rows = for_parameters(request.rows, events, f"`{request.definition}`")
        relation = Neighbours.of(request.neighbours or "add-remove-one", rows)
    except ValueError as exc:
        raise refuse(EXIT_USAGE, "FZ523", str(exc)) from None
    try:
        return {name: relation.for_parameter(name).resolve(evs) for name, evs in events.items()}
    except LocalNeedsReplaceOne as exc:  # the same refusal as the ledger's (fuzzpy.ledger.neighbours)
        raise refuse(EXIT_BUDGET, "FZ605", f"refused: {exc}; this release asks for {relation.relation}",
                     "local reports need --neighbours replace-one, on a dataset for replace-one") from None


def _check_public_rows(request: RunRequest, opened: dict[str, Any], loaded: dict[str, Any]) -> None:
    """With replace-one and a row count, `choose[m]` was charged at m/rows:
    sound only if the bag the program reads has exactly that many rows on
    every neighbour. So no row rule may drop a row (a replaced row that does
    not fit would leave a neighbour one row short), no line of this file is
    dropped as malformed (such a file is not among the neighbours of the
    relation's domain: N well-formed rows), and the bag has `rows` rows.
    All public under replace-one: refusing tells nothing more. Checked
    before anything is charged (FZ606)."""
    if request.rows is None:
        return
    for name, o in opened.items():
        given = request.rows if isinstance(request.rows, int) else request.rows.get(name)
        if given is None:  # no count for this bag parameter: charged unamplified, any size
            continue
        registration = getattr(o, "registration", None)
        dropping = [c.name for c in getattr(registration, "columns", ()) if c.policy.kind == "drop"]
        if dropping:
            raise refuse(EXIT_USAGE, "FZ606",
                         f"--rows needs a fixed number of rows, but the row rule of {', '.join(dropping)} "
                         f"in `{name}`'s dataset drops rows that do not fit",
                         "register the dataset with --missing value:V or --missing refuse for every column")
        bag, counts = loaded[name]
        if counts.get("rows_dropped") or counts.get("malformed_lines"):
            raise refuse(EXIT_USAGE, "FZ606", f"--rows: `{name}`'s file has lines that are not rows of its dataset")
        size = _row_count(bag, registration)
        if size is None:
            raise refuse(EXIT_USAGE, "FZ606", f"--rows: the number of rows of `{name}` is not known before the run",
                         "register the dataset (`fuzzpy dataset register`), or run with --engine memory")
        if size != given:
            raise refuse(EXIT_USAGE, "FZ606", f"`{name}` has {size} rows, not the {given} given by --rows")


def _row_count(bag: Any, registration: Any) -> int | None:
    """The rows of a loaded bag: counted in memory, else the records its
    owner's validation of this very file found (a run refuses a changed file)."""
    if getattr(bag, "source", None) is not None:
        return len(bag)
    records = getattr(registration, "report", {}).get("records")
    return int(records) if isinstance(records, int) else None


def privacy_events(definition: CheckedDef) -> dict[str, tuple[Event, ...]]:
    from fuzzpy.runtime.noise import check_discretisable

    events = {p.name: tuple(definition.privacy.get(p.name, ())) for p in definition.params if isinstance(p.type, TBag)}
    for name, evs in events.items():
        reason = check_discretisable(evs)
        if reason:
            raise refuse(
                EXIT_REJECTED,
                "FZ520",
                f"the release in `{name}` is too small for the exact noise grid: {reason}",
                "each Laplace release must cost at least eps = 2^-23 (1.2e-7)",
            )
    return events


def refuse_unrunnable(checked: CheckedProgram, definition: CheckedDef, public: dict[str, Value] | None = None) -> None:
    """What the runtime could not carry out exactly is refused before the
    ledger is touched (fuzzpy.release.feasible), the run's public arguments
    (``public``) included."""
    from fuzzpy.release.feasible import refusals

    found = refusals(checked, definition, public or {})
    if found:
        raise Refusal(EXIT_REJECTED, tuple(found))


def public_arguments(definition: CheckedDef, request: RunRequest) -> dict[str, Value]:
    bag_names = {p.name for p in definition.params if isinstance(p.type, TBag)}
    known = {p.name for p in definition.params}
    for name in [*request.data, *request.args, *request.datasets]:
        if name and name not in known:
            raise refuse(EXIT_USAGE, "FZ508", f"`{definition.name}` has no parameter `{name}`",
                          "its parameters: " + ", ".join(p.name for p in definition.params))
    values: dict[str, Value] = {}
    for param in definition.params:
        if param.name in bag_names:
            if param.name not in request.data:
                raise refuse(EXIT_USAGE, "FZ508", f"no data for `{param.name}`", f"give --data {param.name}=FILE.csv")
        elif param.name not in request.args:
            raise refuse(EXIT_USAGE, "FZ508", f"no value for parameter `{param.name} : {param.type}`",
                          f"give --arg {param.name}=VALUE")
        else:
            values[param.name] = parse_argument(param.name, param.type, request.args[param.name])
    return values


def parse_argument(name: str, kind: Type, text: Value) -> Value:
    """A public argument as given on the command line (text), or as a Python
    value through the API (`fuzzpy.release.arguments`)."""
    if not isinstance(text, str):
        from fuzzpy.release.arguments import python_argument

        return python_argument(name, kind, text)
    try:
        if isinstance(kind, TInt):
            return int(text)
        if isinstance(kind, TNum):
            value = Fraction(text.strip())
            float(value)  # OverflowError (refused below) beyond the largest double
            return value  # exact, as every macro-level number (docs/semantics.md)
        if isinstance(kind, TBool) and text.strip().lower() in ("true", "false", "1", "0"):
            return text.strip().lower() in ("true", "1")  # spelled as data files may spell it
        if isinstance(kind, TString):
            return text
        if isinstance(kind, (TList, TVec)):  # numbers kept as written (1e400 is refused as 1e400, not `Infinity`)
            items = json.loads(text if text.strip().startswith("[") else f"[{text}]", parse_float=Decimal)
            return _list_argument(name, kind, items, text)
    except (ValueError, json.JSONDecodeError, ZeroDivisionError, OverflowError, ArithmeticError):
        pass
    raise refuse(EXIT_USAGE, "FZ509", f"`{text}` is not a value of type `{kind}` for parameter `{name}`")


def _list_argument(name: str, kind: TList | TVec, items: list[Value], text: str) -> list[Value]:
    """The entries of a list argument read from JSON. An entry of a list of
    lists (a matrix's row) must itself be in brackets: `[5, 7]` for a
    `mat` parameter was read as the rows [5] and [7] (review s28d F8)."""
    elem = kind.elem
    nested = isinstance(elem, (TList, TVec))
    out: list[Value] = []
    for item in items:
        if nested and not isinstance(item, list):
            raise refuse(EXIT_USAGE, "FZ509", f"`{text}` is not a value of type `{kind}` for parameter `{name}`: "
                         "each of its elements is itself a list (a row), written in brackets, e.g. `[[5, 7]]` "
                         "for one row of two entries or `[[5], [7]]` for two rows of one")
        if isinstance(item, list):
            out.append(_list_argument(name, elem, item, text) if isinstance(elem, (TList, TVec)) else
                       parse_argument(name, elem, json.dumps(item, default=str)))
        else:
            out.append(parse_argument(name, elem, item if isinstance(item, str) else
                                      str(item) if isinstance(item, Decimal) else json.dumps(item)))
    return out


# ---------------------------------------------------------------- the whole run


Warn = Callable[[str], None]


Show = Callable[["RunResult"], None]


def execute(request: RunRequest, warn: Warn = lambda message: None, show: Show | None = None,
            progress: Warn | None = None) -> RunResult:
    """The whole run, in the order of the module docstring. ``show`` prints
    the result; it is called once the release is recorded, and the two
    happen together even if a signal arrives (`fuzzpy.support.interrupts.held`).
    ``progress`` (if given) receives messages about long work: rows
    scanned, rounds of `loop`. The bag operations run in `request.engine`
    (`fuzzpy.engines`, docs/engines.md).

    Stopped by a signal (`Interrupted`): before the charge nothing is
    changed; after it, the ledger keeps the release as "charged" (not
    released) and the exception's note says what was spent.
    """
    from fuzzpy.engines import engine_for

    request = _placed(request)
    engine = engine_for(request.engine, warn, progress)
    try:
        return _execute(request, warn, show, engine)
    finally:
        engine.close()


def _placed(request: RunRequest, read_streams: bool = True) -> RunRequest:
    """The request with its data recognised (paths, names, data in memory)
    and the engine that data lives in (`fuzzpy.data`)."""
    from fuzzpy.data.memory import home_engine, recognise

    data = {param: recognise(param, value, read_streams) for param, value in request.data.items()}
    return replace(request, data=data, engine=home_engine(data, request.engine))


def _execute(request: RunRequest, warn: Warn, show: Show | None, engine: Any) -> RunResult:
    from fuzzpy.data.datasets import name_sources
    from fuzzpy.data.loader import numbers_as_int, numbers_as_int_note
    from fuzzpy.ledger.book import DataUse, Ledger
    from fuzzpy.ledger.errors import LOOSE_CHARGE
    from fuzzpy.release.accuracy import derive
    from fuzzpy.release.columns import fields_read, read_type
    from fuzzpy.runtime.accuracy import DEFAULT_CONFIDENCE
    from fuzzpy.runtime.bag import auditing_groups
    from fuzzpy.runtime.randomness import SecureSource, SeededSource
    from fuzzpy.support.interrupts import Interrupted, held

    source, checked, definition, events, public, lengths, budget = prepare(request)
    warnings: list[str] = []

    def record(message: str) -> None:
        warnings.append(message)
        warn(message)

    request = _measured(request, checked, definition, record)  # FZ318 is in the result's warnings too
    used = fields_read(checked.program, definition.name, definition.result)
    types = {p.name: read_type(p.type, used) for p in definition.params}  # the columns read (issue 31)
    receipts: list[Receipt] = []
    said: list[str] = []  # the notes before the release, kept for its warnings too

    def say(message: str) -> None:
        said.append(message)
        warn(message)

    try:
        with Ledger(request.ledger) as ledger:
            sources = name_sources(ledger, request.data, request.datasets, list(events), reader=engine.reader)
            keys = {name: s.dataset for name, s in sources.items()}
            request = _relation(request, ledger, keys, events)
            kept = {n for n, evs in events.items() if keeps_size(evs)} if request.neighbours == "replace-one" else set()
            events = _for_relation(events, request)
            draws = _one_draw(definition, request)
            for key, evs in _events_by_dataset(events, keys, draws).items():  # refuse before the data is read
                ledger.quote(key, evs, budget, release_delta=request.delta, neighbours=request.neighbours,
                             zcdp=definition.zcdp_delta is not None)
            # the registration note is not a warning of the release: a CSV's first-run types come from its cells,
            # and a release's warnings are the same on every neighbour (tests/neighbour)
            # a first run types its file before it judges (F1), but records the registration only in the
            # charge's transaction (`confirm_registration`, same rows checked again there): a refused run
            # writes nothing to the ledger (review s30 E)
            opened = {name: engine.open(ledger, s, types[name], None) for name, s in sources.items()}
            _one_file_per_dataset(opened)
            for column in dict.fromkeys(c for o in opened.values() for c in numbers_as_int(o.header, o.plan)):
                say(numbers_as_int_note(column))  # from the schema and the program only: every neighbour alike
            for name, o in opened.items():  # a bag of vectors is as wide as its file has columns (the header)
                _checked_lengths(definition, lambda: lengths.width(name, len(o.plan.columns)))  # noqa: B023
            _check_local_rows(events, opened)  # from the public row rule, before the data is read
            for name in kept:
                _check_kept_size(name, opened[name])
            loaded = {name: engine.load(o) for name, o in opened.items()}  # total: no refusal after this
            for name in kept:
                if loaded[name][1].get("rows_dropped") or loaded[name][1].get("malformed_lines"):
                    raise refuse(EXIT_USAGE, "FZ556", f"`{name}`'s file has lines that are not rows of its dataset, and "
                                 "it is charged for replace-one neighbours with its number of rows kept")
            _check_public_rows(request, opened, loaded)  # but of a public row count (replace-one)
            _check_local_counts(events, opened, loaded)
            by_dataset = _events_by_dataset(events, keys, draws)  # one entry per dataset, as quoted
            reader = {keys[name]: name for name in reversed(list(events))}  # its first parameter
            uses = [DataUse(opened[reader[key]].registration, opened[reader[key]].implicit,
                            loaded[reader[key]][1], opened[reader[key]].fingerprint,
                            opened[reader[key]].same_rows) for key in by_dataset]
            with held():  # charged and known to be, or not charged at all
                receipts = ledger.charge_many(
                    [(key, evs, budget) for key, evs in by_dataset.items()],
                    program=request.file,
                    definition=definition.name,
                    program_source=source.text,
                    release_delta=request.delta,
                    uses=uses,
                    seeded=request.seed is not None,
                    neighbours=request.neighbours or "add-remove-one",
                    arguments=recorded_arguments(request),
                    zcdp=definition.zcdp_delta is not None,
                    assumptions=unchecked_assumptions(checked, definition),
                ) if events else []
            for registration in _registered_by(uses):
                warn(registered_text(registration))
        source_of_noise: RandomSource = SecureSource() if request.seed is None else SeededSource(request.seed)
        warnings[0:0] = said  # the notes said before the release come first
        for note in dict.fromkeys(note for receipt in receipts for note in receipt.cost.notes):
            record(f"warning[{LOOSE_CHARGE}]: {note}")  # the zcdp rule's un-amplified subsampling

        bags = {name: bag for name, (bag, _) in loaded.items()}
        notes: list[tuple[Value, Any]] = []
        with auditing_groups() as outside:
            value = compute(checked, definition, {**public, **bags}, source_of_noise, record, lengths.frame,
                            engine.interpreter, notes)
    except Interrupted as stop:
        stop.note = interrupted_note(receipts)
        raise
    files = {keys[name]: opened[name].file.path for name in events}
    accuracy = derive(checked.program, definition.decl, value, notes, request.confidence or DEFAULT_CONFIDENCE)
    result = RunResult(value, receipts, source_of_noise.private, warnings, files, definition.result, accuracy,
                       request.neighbours or "add-remove-one", request.rows, definition.rests_on)
    with held(finish=True) as late:  # recorded as released and shown, together
        if receipts:
            _record_release(request.ledger, receipts, value, outside[0], record)
        if show is not None:
            show(result)
    if late.signum is not None:
        warn("note: the interrupt came as the result was being released; the release is complete")
    return result


def prepare(request: RunRequest) -> tuple[Source, CheckedProgram, CheckedDef, dict[str, tuple[Event, ...]],
                                           dict[str, Value], FrameBuilder, Budget | None]:
    """Steps 1 and 2 up to the datasets: everything a run settles from the
    program and its public arguments alone, refusing before any data is named."""
    from fuzzpy.ledger.book import Budget
    from fuzzpy.release.pipeline import load_source

    source = load_source(request.file) if request.source_text is None else Source(request.file, request.source_text)
    checked = check(source)
    definition = find_definition(checked, request.definition)
    if definition.static_params:
        definition = at_static_values(checked, definition, public_arguments(definition, request))
    refuse_unsafe_release(definition)
    public = public_arguments(definition, request)
    refuse_unrunnable(checked, definition, public)
    events = privacy_events(definition)  # restated for the relation once the datasets are named (`_relation`)
    lengths = argument_lengths(definition, public)  # public lengths: refused before the data is named
    budget = Budget.parse(request.budget, request.rule) if request.budget else None
    return source, checked, definition, events, public, lengths, budget


def quote(request: RunRequest, warn: Warn = lambda message: None,
          assumed: list[str] | None = None) -> list[Quote]:
    """What `execute(request)` would charge each dataset and leave of its
    budget, refused (FZ601, exit 3) as the run would be; nothing is charged
    and no rows are read (a data file is read only if naming its dataset
    needs its content, as for the run). ``assumed`` receives the unchecked
    `assume def`s the charges rest on (FZ318, also given to ``warn``)."""
    from fuzzpy.data.datasets import name_sources
    from fuzzpy.engines import engine_for
    from fuzzpy.ledger.book import Ledger

    request = _placed(request, read_streams=False)
    _, checked, definition, events, _, _, budget = prepare(request)
    request = _measured(request, checked, definition, warn)
    if assumed is not None:
        assumed.extend(definition.rests_on)
    engine = engine_for(request.engine, warn, None)
    try:
        with Ledger(request.ledger) as ledger:
            sources = name_sources(ledger, request.data, request.datasets, list(events), reader=engine.reader)
            keys = {name: s.dataset for name, s in sources.items()}
            request = _relation(request, ledger, keys, events)
            events = _for_relation(events, request)
            return [ledger.quote(key, evs, budget, release_delta=request.delta, neighbours=request.neighbours or "add-remove-one",
                                 zcdp=definition.zcdp_delta is not None)
                    for key, evs in _events_by_dataset(events, keys, _one_draw(definition, request)).items()]
    finally:
        engine.close()


def _measured(request: RunRequest, checked: CheckedProgram, definition: CheckedDef, warn: Warn) -> RunRequest:
    """A definition that declares `privacy zcdp[delta]` is charged at its
    delta (a `--delta` that differs is refused: the declaration is the
    definition's); one whose figures rest on an `assume def` z3 could not
    check says so before anything is charged."""
    for name, text in unchecked_assumptions(checked, definition):
        claim = f" that `{name}` is {text}" if text else ""
        warn(f"warning[FZ318]: this release's privacy rests on the UNCHECKED ASSUMPTION{claim} "
             "(declared by `assume def`, not proved)")
    if definition.zcdp_delta is None:
        return request
    if request.delta is not None and Fraction(str(request.delta)) != definition.zcdp_delta:
        raise refuse(EXIT_USAGE, "FZ703", f"`{definition.name}` declares `privacy zcdp[{float(definition.zcdp_delta):g}]`: "
                     f"its cost is converted at that delta, not at --delta {request.delta} "
                     f"(`check --delta {request.delta}` shows its guarantee there, not charged)")
    return replace(request, delta=str(definition.zcdp_delta))


def unchecked_assumptions(checked: CheckedProgram, definition: CheckedDef) -> tuple[tuple[str, str], ...]:
    """The unchecked `assume def`s the definition's figures rest on: (name,
    its declared claim), as the warning and the ledger's entry name them."""
    found = [(name, checked.definitions[name].assumption) for name in definition.rests_on]
    return tuple((name, "" if a is None else a.claim_text()) for name, a in found)


def interrupted_note(receipts: list[Receipt]) -> str:
    """What a signal left behind: nothing, or a charge without a release."""
    from fuzzpy.ledger.quotes import describe_amount

    if not receipts:
        return "stopped before the budget was charged: nothing was charged and nothing was released"
    spent = ", ".join(f"{describe_amount(r.cost.spend, r.budget)} of dataset `{r.dataset}`" for r in receipts)
    ids = ", ".join(f"#{r.id}" for r in receipts)
    return (f"stopped after the budget was charged: {spent} was spent and nothing was released "
            f"(the ledger lists {ids} as charged, not released)")


def _check_local_rows(events: dict[str, tuple[Event, ...]], opened: dict[str, Any]) -> None:
    """Local and shuffled reports are charged for replace-one neighbours: the
    number of reports is the number of rows, public. A row rule that drops a
    row whose cell does not fit lets one person's replaced row (`maybe` for a
    bool) remove a report, and the released number moves (adversarial review
    B, e0.csv / e1.csv). So every column's rule must keep the row (`refuse`
    or `value:V`): decided from the dataset's public rules, never from its
    counts, before anything is read or charged (FZ556)."""
    from fuzzpy.accounting.local import has_local

    for name, o in opened.items():
        if not has_local(events.get(name, ())):
            continue
        which = _rule_that_drops(o)
        if which is not None:
            raise refuse(EXIT_USAGE, "FZ556",
                         f"`{name}` is released as local reports, one per row, but {which} drops rows that do not "
                         "fit: a neighbour's replaced row could remove a report, and the number of reports is released",
                         "register the dataset with --missing refuse (or value:V) for every column")


def _rule_that_drops(o: Any) -> str | None:
    """The row rule of an opened dataset that may drop a row, in words, or
    None when every column keeps its rows (`refuse` or `value:V`); an
    unregistered file's default rule drops."""
    columns = getattr(getattr(o, "registration", None), "columns", None)
    dropping = [c.name for c in columns or () if c.policy.kind == "drop"]
    if columns is not None and not dropping:
        return None
    return f"the row rule of {', '.join(dropping)}" if dropping else "its row rule"


def keeps_size(events: tuple[Event, ...]) -> bool:
    """Whether an event was charged for a replaced row with the bag's size
    kept (a Laplace count or sum at its replace-one move, the replace-one
    pair of a Poisson subsample): restated for replace-one only."""
    from fuzzpy.accounting.events import Group, Repeat, Sample, Subsample, replaced_move

    for event in events:
        if replaced_move(event) is not None:
            return True
        if isinstance(event, Subsample) and (event.replace or keeps_size(event.body)):
            return True
        if isinstance(event, (Repeat, Sample, Group)) and keeps_size(event.body):
            return True
    return False


def _check_kept_size(name: str, o: Any) -> None:
    """A replace-one charge that keeps the bag's size (above) holds only if no
    row rule can drop a row: a replaced row that does not fit would leave a
    neighbour one row short, and `size db` would move though charged 0 (fifth
    review, F1). Decided from the public rules, before anything is read (FZ556)."""
    which = _rule_that_drops(o)
    if which is not None:
        raise refuse(EXIT_USAGE, "FZ556",
                     f"`{name}` is charged for replace-one neighbours with its number of rows kept (a count or sum at "
                     f"its replace-one move, or a sample's replace-one pair), but {which} drops rows that do not fit: "
                     "a neighbour's replaced row could remove a row",
                     "register the dataset with --missing refuse (or value:V) for every column")


def _check_local_counts(events: dict[str, tuple[Event, ...]], opened: dict[str, Any], loaded: dict[str, Any]) -> None:
    """After reading, before the charge: no line was dropped as malformed (a
    file with one is outside the relation's domain of well-formed rows), and
    `shuffle[n]` has at least n rows (FZ519). Both depend on the number of
    rows only, which is public under replace-one neighbours, the relation
    local reports are charged for: refusing reveals nothing more."""
    from fuzzpy.accounting.local import has_local

    for name, (bag, counts) in loaded.items():
        evs = events.get(name, ())
        if not has_local(evs):
            continue
        if counts.get("rows_dropped") or counts.get("malformed_lines"):
            raise refuse(EXIT_USAGE, "FZ556", f"`{name}`'s file has lines that are not rows of its dataset, and "
                         "it is released as local reports (one per row)")
        least = _least_reports(evs)
        if not least:
            continue
        size = _local_row_count(bag, getattr(opened[name], "registration", None))
        if size is None:
            raise refuse(EXIT_USAGE, "FZ519", f"`shuffle[{least}]` needs the number of rows of `{name}` before the run",
                         "register the dataset (`fuzzpy dataset register`), or run with --engine memory")
        if size < least:
            raise refuse(EXIT_USAGE, "FZ519",
                         f"`shuffle[{least}]` is charged for at least {least} reports, but `{name}` has fewer rows")


def _local_row_count(bag: Any, registration: Any) -> int | None:
    """The rows of a loaded bag: counted in memory, else the records the
    owner's validation of this very file found (a run refuses a changed file)."""
    if getattr(bag, "source", None) is not None:
        return len(bag)
    records = getattr(registration, "report", {}).get("records")
    return int(records) if isinstance(records, int) else None


def _least_reports(events: tuple[Event, ...]) -> int:
    """The largest `shuffle[n]` among the events (0 without one)."""
    from fuzzpy.accounting.events import Group, Repeat, ShuffledReports, Subsample

    most = 0
    for event in events:
        if isinstance(event, ShuffledReports):
            most = max(most, int(event.reports))
        elif isinstance(event, Repeat | Subsample | Group):
            most = max(most, _least_reports(event.body))
    return most


def _registered_by(uses: list[Any]) -> list[Any]:
    """The registrations this run's charge recorded (a first run's, once per dataset)."""
    return list({use.registration.name: use.registration for use in uses if use.implicit}.values())


def registered_text(registration: Any) -> str:
    """What a first run says of the registration its charge recorded."""
    types = ", ".join(f"{c.name}: {c.kind or 'any'}" for c in registration.columns)
    change = "" if registration.format == "frame" else \
        f"; to change one: `fuzzpy dataset update {registration.name} --type COL=KIND`"
    return (f"note: registered {registration.name} with types {types} -- typed as `fuzzpy dataset register` "
            "types them (a stored column by its stored type, a column of text from its cells): the act of the data's holder, public from now on (this run and every "
            f"later one are judged against these types{change}; to type a dataset without reading its cells, "
            "register it before its first run: `fuzzpy dataset register NAME FILE --type COL=KIND ...`)")


def _one_file_per_dataset(opened: dict[str, Any]) -> None:
    """Two parameters read one dataset only from one file, and one file only
    as one dataset (its data has one budget, whatever it is called)."""
    files: dict[str, str] = {}
    paths: dict[str, str] = {}
    datasets: dict[str, str] = {}
    for name, data in opened.items():
        dataset, digest = data.source.dataset, data.file.sha256
        other = paths.setdefault(dataset, str(data.file.path))
        if files.setdefault(dataset, digest) != digest:  # a CSV and its Parquet copy, both `people` by name
            raise refuse(EXIT_USAGE, "FZ545", f"{data.file.path} would be dataset `{dataset}` (its file's name), "
                         f"but `{dataset}` is {other} in this run: one dataset has one file. If the two hold "
                         "the same rows (a CSV and its Parquet copy), they are one dataset under two file "
                         f"names, with one budget: bind every parameter to one of them (--data PARAM={other}); "
                         "if not, name this one: --dataset PARAM=NAME",
                         "a dataset's rows have one budget, whatever file or form they come in")
        if datasets.setdefault(digest, dataset) != dataset:
            raise refuse(EXIT_USAGE, "FZ545", f"`{name}` reads {data.file.path} as dataset `{dataset}`, but "
                         "another parameter reads this dataset from another file, or this file as another "
                         "dataset", "one dataset has one file, and one file is one dataset")


def _record_release(ledger_path: str | None, receipts: list[Receipt], value: Value, outside: int, warn: Warn) -> None:
    """Mark the charged releases released, with the value (public: it is
    being shown) and, for the data owner, the rows `group` dropped -- only
    for a release that reads one dataset: with two, whose rows they were is
    not known, and each owner would see a count of the other's (a22 F1)."""
    from fuzzpy.ledger.book import Ledger
    from fuzzpy.runtime.values import to_json

    audit = {"group_keys_outside": outside} if outside and len(receipts) == 1 else None
    try:
        with Ledger(ledger_path) as ledger:
            ledger.record_release([r.id for r in receipts], to_json(value), audit)
    except FuzzError as exc:  # the charge stands; the release is still shown
        warn(f"warning: the ledger could not mark this release as released: {exc}")


def recorded_arguments(request: RunRequest) -> dict[str, str]:
    """The run's public arguments as the ledger records them: each as given
    (the `--arg` text; an API value's text, a float as its shortest decimal)."""
    return {name: value if isinstance(value, str) else _argument_text(value) for name, value in request.args.items()}


def _argument_text(value: object) -> str:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Fraction):
        return str(value)
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def _one_draw(definition: CheckedDef, request: RunRequest) -> dict[str, int]:
    """The parameters whose whole cost is one noise draw, by draw
    (`CheckedDef.draws`), under either relation. Under replace-one each
    parameter's event is already restated for a replaced row of its dataset
    (`Neighbours.resolve`: the query's replace-one move, or twice its
    sensitivity), so a draw read through several parameters moves by at
    most the sum of those moves when one row of the dataset is replaced (the
    triangle inequality through (x', x), as for add/remove), and different
    draws, each read through its own parameters only, compose adaptively on
    the same pair of datasets (review of issue 28: two Gaussian draws on two
    parameters given one dataset were chained at 3.977 under replace-one,
    the exact composition being 2.7607, as under add/remove)."""
    del request  # the relation is in the events (resolved before)
    return dict(definition.draws)


def _draws_merged(nonempty: list[tuple[Event, ...]], numbers: list[int | None],
                  merge_events: Callable[[list[Event]], tuple[Event, tuple[Fraction, ...]] | None]
                  ) -> tuple[Event, ...] | None:
    """Parameters bound to one dataset whose whole costs are single draws
    (``numbers``: each one's draw): the routes into one draw merge at their
    summed sensitivity, different draws compose as the independent draws
    they are (`checker.costs.compose_draws`); None for any other shape."""
    if len(nonempty) < 2 or None in numbers or any(len(evs) != 1 for evs in nonempty):
        return None
    groups: dict[int | None, list[Event]] = {}
    for number, evs in zip(numbers, nonempty, strict=True):
        groups.setdefault(number, []).append(evs[0])
    out: list[Event] = []
    for group in groups.values():
        merged = merge_events(group) if len(group) > 1 else (group[0], ())
        if merged is None:
            return None
        out.append(merged[0])
    return tuple(out)


def _events_by_dataset(events: dict[str, tuple[Event, ...]], keys: dict[str, str],
                       draws: dict[str, int] | None = None) -> dict[str, tuple[Event, ...]]:
    """Two parameters given the same dataset both spend its budget, so the
    quote covers their events together. They are one mechanism's costs, not
    independent releases (one noise draw may read both parameters), so a
    row of the dataset moves both at once. When every such parameter's whole
    cost is the same single noise draw (``draws``, `CheckedDef.draws`), the
    dataset reaches that draw by several routes: one event at the summed
    sensitivity (the application rule is a substitution, Reed & Pierce
    2010; as the checker charges `g2 db db`, `checker.costs.merge_draw`).
    Otherwise pure costs add along the chain; any other cost is charged
    group privacy over the k parameters of all their events together
    (`checker.apply._one_mechanism`; fourth adversarial review, U1/U2), or,
    the accountant's other option, the chain of the parameters' own
    guarantees, one step each (`events.Group.chained`)."""
    from fuzzpy.accounting.accountant import pure_epsilon
    from fuzzpy.accounting.events import Group, Repeat
    from fuzzpy.accounting.local import has_local
    from fuzzpy.checker.costs import merge_events, pure_routes

    parts: dict[str, list[tuple[Event, ...]]] = {}
    names: dict[str, list[str]] = {}
    for name, evs in events.items():
        parts.setdefault(keys[name], []).append(evs)
        if evs:
            names.setdefault(keys[name], []).append(name)
    combined: dict[str, tuple[Event, ...]] = {}
    for key, lists in parts.items():
        joined = tuple(e for evs in lists for e in evs)
        nonempty = [evs for evs in lists if evs]
        routes = names.get(key, [])
        merged = _draws_merged(nonempty, [(draws or {}).get(n) for n in routes], merge_events)
        if merged is not None:
            combined[key] = merged
        elif len(nonempty) <= 1:
            combined[key] = joined
        elif pure_epsilon(joined) is not None:  # the sum, never the curve of independent releases
            combined[key] = joined if has_local(joined) else (pure_routes(joined),)
        else:  # each parameter's events one route of the chain (`events.Group.chained`)
            chain = tuple(Repeat(1, evs) for evs in nonempty)
            combined[key] = (Group(Fraction(len(nonempty)), chain, chained=True),)
    return combined


def argument_lengths(definition: CheckedDef, arguments: dict[str, Value]) -> FrameBuilder:
    """The vector lengths of the public arguments, checked against the
    parameters' types (FZ525, exit 2: nothing is read or charged yet)."""
    from fuzzpy.runtime.lengths import FrameBuilder

    builder = FrameBuilder(definition)
    for name, value in arguments.items():
        _checked_lengths(definition, lambda: builder.value(name, value))  # noqa: B023
    return builder


def _checked_lengths(definition: CheckedDef, check: Callable[[], None]) -> None:
    from fuzzpy.runtime.lengths import LengthMismatch

    try:
        check()
    except LengthMismatch as mismatch:
        span = next((p.span for p in definition.decl.params if p.name == mismatch.param), definition.decl.name_span)
        raise refuse(EXIT_USAGE, "FZ525", f"the argument for `{mismatch.param}`: {mismatch.message}",
                     "vectors of one type have one length (their length is part of the type)", span) from None


def compute(
    checked: CheckedProgram,
    definition: CheckedDef,
    arguments: dict[str, Value],
    source: RandomSource,
    warn: Warn,
    frame: dict[LenVar, int] | None = None,
    interpreter: Callable[..., Any] | None = None,
    notes: list[tuple[Value, Any]] | None = None,
) -> Value:
    """Apply the definition to its arguments and sample its `fuzzy` result;
    ``frame``: the lengths of its signature (`fuzzpy.runtime.lengths`), read
    off the arguments when not given; ``interpreter``: a factory like
    `Interpreter`'s (an engine's: `fuzzpy.engines`); ``notes``, when given,
    receives each noise draw's public parameters (`fuzzpy.release.accuracy`)."""
    from fuzzpy.runtime.interpreter import Interpreter
    from fuzzpy.runtime.values import RuntimeFailure

    if frame is None:
        try:
            frame = argument_lengths(definition, arguments).frame
        except Refusal as refusal:
            raise FuzzError(refusal.diagnostics) from None
    interp = (interpreter or Interpreter)(checked.program, source, warn, checked)
    if notes is not None:
        interp.noise_notes = notes
    try:
        return interp.call_definition(definition.name, [arguments[p.name] for p in definition.params], frame)
    except RuntimeFailure as failure:
        raise _failed(failure.code, failure.message) from None
    except RecursionError:
        raise _failed("FZ519", "the program recursed too deeply") from None


def _failed(code: str, message: str) -> FuzzError:
    note = "if a budget was charged for this run, the charge stands; nothing was released"
    return FuzzError((Diagnostic(code, message, NO_SPAN, notes=(note,)),))
