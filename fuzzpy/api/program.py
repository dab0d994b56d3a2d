"""fuzzpy's Python API: the one way in, for programs and for the CLI.

    import fuzzpy

    program = fuzzpy.load("examples/noisy_count.fz")   # or fuzzpy.loads(text)
    report = program.check()                             # types, sensitivities, costs
    report["noisy_count"].costs["db"].epsilon            # Fraction(1, 10)
    program.quote("noisy_count", data={"db": "people.csv"}, budget=1.0)   # charges nothing
    release = program.run("noisy_count", data={"db": "people.csv"}, budget=1.0)
    release.value, release.charges["people"].remaining.epsilon

Every failure raises a `fuzzpy.FuzzError` (`fuzzpy.api.errors`): its
``diagnostics`` are the CLI's, ``exit_code`` the CLI's exit code, and
``str()`` renders them as the CLI does. A run does what `fuzzpy run` does,
in the same order (`fuzzpy.release.run`): the program is checked again,
the budget quoted and refused before any data is read, then charged before
anything is computed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from fuzzpy.api.errors import (
    BudgetExceeded,
    InvalidInput,
    ProgramError,
    Rejected,
    api_error,
    in_python,
)
from fuzzpy.api.reports import CheckReport, DefinitionReport, VerifyResult
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN, Source

if TYPE_CHECKING:
    from fuzzpy.accounting.neighbours import Neighbours
    from fuzzpy.api.releases import Charge, Release
    from fuzzpy.language import syntax as S
    from fuzzpy.ledger.book import DatasetState
    from fuzzpy.ledger.quotes import Entry
    from fuzzpy.release.run import RunRequest, RunResult
    from fuzzpy.runtime.audit import AuditResult

Warn = Callable[[str], None]
_T = TypeVar("_T")

__all__ = [
    "BudgetExceeded",
    "CheckReport",
    "DefinitionReport",
    "FuzzError",
    "InvalidInput",
    "Ledger",
    "Program",
    "Rejected",
    "VerifyResult",
    "load",
    "loads",
    "run_file",
]


def load(path: str | os.PathLike[str]) -> Program:
    """Read and parse a program file (syntax errors raise `Rejected`, an
    unreadable file `InvalidInput`)."""
    from fuzzpy.release.pipeline import load_source

    try:
        source = load_source(path)
    except FuzzError as error:
        raise api_error(error) from None
    return Program(source)


def loads(text: str, name: str = "<string>") -> Program:
    """Parse a program from its text; ``name`` is the file name its
    diagnostics (and the ledger's records) show."""
    return Program(Source(name, text))


class Program:
    """A parsed program. `check`, `verify`, `quote` and `run` it."""

    def __init__(self, source: Source) -> None:
        from fuzzpy.release.pipeline import parse

        self.source = source
        self.syntax: S.Program = self._guarded(lambda: parse(source))
        self._derivations: dict[str, str] = {}

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def text(self) -> str:
        return self.source.text

    @property
    def definitions(self) -> list[str]:
        """The names of the program's `def`s, in order."""
        from fuzzpy.language.syntax import DefDecl

        return [d.name for d in self.syntax.decls if isinstance(d, DefDecl)]

    @property
    def mechanisms(self) -> list[str]:
        """The names of the program's `mechanism`s, in order."""
        from fuzzpy.language.syntax import MechanismDecl

        return [d.name for d in self.syntax.decls if isinstance(d, MechanismDecl)]

    def __repr__(self) -> str:
        return f"<fuzzpy.Program {self.name!r}>"

    # ------------------------------------------------------------ check

    def check(self, delta: float | None = None, neighbours: str | None = None,
              rows: int | Mapping[str, int] | None = None, group: int = 1) -> CheckReport:
        """Types, sensitivities and privacy costs of every definition
        (approximate costs at ``delta``, default 1e-6; with ``group`` k, the
        costs for one person's up to k rows, by group privacy), for
        ``neighbours`` "add-remove-one" (the default) or "replace-one" with
        ``rows`` the datasets' public size: one count where no definition
        has two bag parameters, or {parameter: count} (`choose[m]` and
        `bootstrap[m]` of one are amplified at its count). Raises `Rejected`
        with every error found; a program that checks but has no finite
        epsilon at ``delta`` (FZ314) raises `Rejected` whose ``report`` is
        the report. Mechanisms it calls must be proved (the proof cache is
        used, as by `fuzzpy check`)."""
        from fuzzpy.api.reports import check_report
        from fuzzpy.checker import check_program
        from fuzzpy.verifier import proof_cache

        delta = _check_delta(delta)
        relation = _check_neighbours(neighbours, rows)
        with proof_cache.enabled():
            checked = self._guarded(lambda: check_program(self.syntax))
            _rows_fit(relation, checked)
            if group != 1:  # costs for a person holding up to `group` rows (`checker.group`)
                from fuzzpy.checker.group import grouped

                checked = grouped(checked, _check_group(group))
            report = check_report(self.name, checked, delta, self.explain, relation)
        if report.errors:
            raise Rejected(report.errors, self._sources(), report)
        return report

    def explain(self, definition: str) -> str:
        """The derivation of one definition, rule by rule (`check --explain`);
        shown also for a rejected definition, up to where it is rejected."""
        from fuzzpy.checker.driver import explain_definition
        from fuzzpy.verifier import proof_cache

        if definition not in self._derivations:
            with proof_cache.enabled():
                self._derivations[definition] = self._guarded(
                    lambda: explain_definition(self.syntax, definition, self.text))
        return self._derivations[definition]

    # ------------------------------------------------------------ verify

    def verify(self, fresh: bool = False) -> list[VerifyResult]:
        """A verdict for every `mechanism`, in order (proved, refuted or
        unknown). ``fresh``: prove again rather than reuse the proof cache.
        A malformed mechanism raises `Rejected` (the others' verdicts are
        its ``report``)."""
        results: list[VerifyResult] = []
        errors: list[Diagnostic] = []
        for outcome in self.verify_each(fresh):
            if isinstance(outcome, ProgramError):
                errors.extend(outcome.diagnostics)
            else:
                results.append(outcome)
        if errors:
            raise Rejected(errors, self._sources(), results)
        return results

    def verify_each(self, fresh: bool = False) -> Iterator[VerifyResult | ProgramError]:
        """`verify` one mechanism at a time: each verdict as it is decided, or
        the error of a malformed mechanism (for the CLI's streaming output)."""
        from fuzzpy.checker.scope import library_home, static_constants
        from fuzzpy.language.syntax import MechanismDecl
        from fuzzpy.verifier import proof_cache, verify_mechanism

        try:  # the file's top-level scope, as `check` reads it: its errors once, not per mechanism
            constants = static_constants(self.syntax)
        except FuzzError as error:
            yield api_error(error, self._sources())
            return
        for decl in [d for d in self.syntax.decls if isinstance(d, MechanismDecl)]:
            with proof_cache.enabled(read=not fresh):
                try:
                    home = library_home(decl)  # an imported mechanism: in its module's scope
                    verdict = (verify_mechanism(decl, self.syntax, constants=constants) if home is None
                               else verify_mechanism(decl, home, constants=static_constants(home)))
                except FuzzError as error:
                    verdict = None
                    failure = api_error(error, self._sources())
                cached = verdict is not None and proof_cache.from_disk(verdict)
            if verdict is None:
                yield failure
                continue
            warnings: tuple[Diagnostic, ...] = ()
            if verdict.vacuous:
                warnings = (Diagnostic(
                    "FZ406", f"the proof of `{decl.name}` is {verdict.reason}", decl.name_span, severity="warning",
                    hint="check the preconditions: a mechanism proved for no inputs tells nothing"),)
            yield VerifyResult(verdict, cached, warnings, decl, self.syntax)

    # ------------------------------------------------------------ quote and run

    def quote(self, definition: str, data: Mapping[str, Any] | None = None, *,
              args: Mapping[str, Any] | None = None, datasets: Mapping[str, str] | str | None = None,
              ledger: str | os.PathLike[str] | Ledger | None = None, budget: Any = None, rule: str = "basic",
              delta: Any = None, engine: str = "auto", neighbours: str | None = None,
              rows: int | Mapping[str, int] | None = None) -> dict[str, Charge]:
        """What running ``definition`` would charge each dataset and leave of
        its budget, without charging or reading any rows. Refused as the run
        would be: over budget raises `BudgetExceeded` (exit 3). Arguments as
        for `run`."""
        from fuzzpy.api.releases import charge
        from fuzzpy.release.run import quote

        try:
            request = self._request(definition, data, args, datasets, ledger, budget, rule, None, delta, engine,
                                    neighbours, rows)
            assumed: list[str] = []  # FZ318: the charges rest on these unchecked `assume def`s
            quotes = _guarded(lambda: quote(request, assumed=assumed), self._sources())
            return {q.dataset: charge(q, tuple(assumed)) for q in quotes}
        except ProgramError as error:
            raise in_python(error) from None

    def run(self, definition: str, data: Mapping[str, Any] | None = None, *,
            args: Mapping[str, Any] | None = None, datasets: Mapping[str, str] | str | None = None,
            ledger: str | os.PathLike[str] | Ledger | None = None, budget: Any = None, rule: str = "basic",
            seed: int | None = None, delta: Any = None, engine: str = "auto", confidence: Any = None,
            on_warning: Warn | None = None, progress: Warn | None = None, neighbours: str | None = None,
            rows: int | Mapping[str, int] | None = None) -> Release:
        """Release ``definition``'s result on data, charged to the ledger.

        ``data``: each `bag` parameter's data (a CSV or Parquet path, or a
        registered dataset's name). ``args``: the public parameters, as
        Python values (numbers, bools, strings, lists) or as CLI text.
        ``datasets``: the dataset each parameter's data is (a name for the
        only one, or a mapping). ``ledger``: a path or `Ledger` (default:
        $FUZZPY_LEDGER, else the user's). ``budget``: the dataset's total
        budget, fixed by its first release: a number (epsilon), a pair
        (epsilon, delta), or "EPS[,DELTA]"; ``rule``: "basic" or "zcdp".
        ``seed``: reproducible noise (the release is then NOT private).
        ``delta``: the delta an approximate release is charged at (default
        1e-6). ``engine``: "auto" (DuckDB), "memory", "duckdb" or "spark".
        ``on_warning``/``progress`` receive messages (warnings are also in
        the release's ``warnings``). ``confidence``: the level of the
        release's accuracy intervals (``Release.accuracy``; default 0.95).
        ``neighbours``: "add-remove-one" or "replace-one" (default: the
        datasets' own, fixed by their registration or first charge);
        ``rows``: with replace-one, the dataset's public number of rows (a
        definition with one bag parameter), or {parameter: rows} (`choose[m]`
        of one is charged at m/rows; checked once loaded)."""
        try:
            request = self._request(definition, data, args, datasets, ledger, budget, rule, seed, delta, engine,
                                    neighbours, rows)
            request.confidence = check_confidence(confidence)
            return _release(request, self._sources(), on_warning, None, progress)
        except ProgramError as error:
            raise in_python(error) from None

    # ------------------------------------------------------------ audit

    def audit(self, name: str, *, samples: int | None = None, pilot: int | None = None,
              confidence: float = 0.95, seed: int = 0, args: Mapping[str, Any] | None = None) -> AuditResult:
        """An empirical lower bound on the epsilon of the definition or mechanism
        ``name`` (what `fuzzpy audit` prints; `fuzzpy.runtime.audit` has the method):
        ``samples`` fresh runs per input (default 100000 for a mechanism, 5000 for
        a definition), chosen events tested at ``confidence``. The result's
        ``lower`` / ``best.bound``, ``best.claim`` and ``leak`` say what it found;
        ``text()`` renders it, and `fuzzpy.runtime.audit_plot.figure(result)` plots
        it. ``args`` fixes public parameters as `fuzzpy audit --arg` does (a
        mechanism's public number or bool, a vector's length; a definition's
        public and static parameters). A program that cannot be audited raises
        `InvalidInput`."""
        from fuzzpy.checker.driver import check_program
        from fuzzpy.runtime.audit import AuditError, audit_definition, audit_mechanism, safe_audit

        if not 0.5 <= confidence < 1:
            raise api_error(_option_error("the confidence must be at least 0.5 and below 1"), {})
        self._guarded(lambda: check_program(self.syntax))
        mechanism = name in self.mechanisms
        try:
            if mechanism:
                return safe_audit(lambda: audit_mechanism(self.syntax, name, samples=samples or 100_000,
                                                          pilot=pilot, confidence=confidence, seed=seed,
                                                          arguments=args))
            return safe_audit(lambda: audit_definition(self.syntax, name, samples=samples or 5_000,
                                                       pilot=pilot, confidence=confidence, seed=seed,
                                                       arguments=args))
        except AuditError as error:
            raise api_error(_option_error(f"cannot audit `{name}`: {error}"), {}) from None

    # ------------------------------------------------------------ internals

    def _request(self, definition: str, data: Mapping[str, Any] | None, args: Mapping[str, Any] | None,
                 datasets: Mapping[str, str] | str | None, ledger: Any, budget: Any, rule: str,
                 seed: int | None, delta: Any, engine: str, neighbours: str | None = None,
                 rows: int | Mapping[str, int] | None = None) -> RunRequest:
        self._guarded(lambda: _check_mappings(data, args, datasets, self._bag_parameters(definition)))
        return _guarded(lambda: run_request(
            self.name, definition, data=data, args=args, datasets=datasets, ledger=ledger, budget=budget,
            rule=rule, seed=seed, delta=delta, engine=engine, source_text=self.text, neighbours=neighbours,
            rows=rows), self._sources())

    def _bag_parameters(self, definition: str) -> list[str]:
        """The names of a definition's bag parameters (for a hint)."""
        from fuzzpy.language.syntax import DefDecl, TyBag

        decl = next((d for d in self.syntax.decls if isinstance(d, DefDecl) and d.name == definition), None)
        return [] if decl is None else [p.name for p in decl.params if isinstance(p.type, TyBag)]

    def _sources(self) -> dict[str, Source]:
        return {self.source.name: self.source}

    def _guarded(self, step: Callable[[], _T]) -> _T:
        return _guarded(step, self._sources())


# ---------------------------------------------------------------- runs (CLI too)


def run_file(path: str, definition: str, *, on_release: Callable[[Release], None] | None = None,
             on_warning: Warn | None = None, progress: Warn | None = None, **options: Any) -> Release:
    """`fuzzpy run PATH DEF ...`: as `Program.run`, the program read from
    ``path`` by the run itself; ``on_release`` is called with the release as
    it is recorded in the ledger (the two happen together, even if a signal
    arrives)."""
    request = _guarded(lambda: run_request(path, definition, **options), None)
    return _release(request, None, on_warning, on_release, progress)


def run_request(file: str, definition: str, *, data: Mapping[str, Any] | None = None,
                args: Mapping[str, Any] | None = None, datasets: Mapping[str, str] | str | None = None,
                ledger: Any = None, budget: Any = None, rule: str = "basic", seed: int | None = None,
                delta: Any = None, engine: str = "auto", source_text: str | None = None,
                confidence: Any = None, neighbours: str | None = None,
                rows: int | Mapping[str, int] | None = None) -> RunRequest:
    """The runtime's request for these options, checked as the CLI checks its own."""
    from fuzzpy.release.run import RunRequest

    _check_mappings(data, args, datasets, [])
    return RunRequest(
        file=file,
        definition=definition,
        data={name: os.fspath(v) if isinstance(v, os.PathLike) else v for name, v in (data or {}).items()},
        args=dict(args or {}),
        budget=_budget_text(budget),
        rule=rule,
        ledger=_ledger_path(ledger),
        datasets={"": datasets} if isinstance(datasets, str) else dict(datasets or {}),
        seed=check_seed(seed),
        delta=_delta_text(delta),
        engine=_engine(engine),
        source_text=source_text,
        confidence=check_confidence(confidence),
        # no relation given: the datasets' own, settled when they are named (`--rows` then needs replace-one)
        neighbours=None if neighbours is None else _check_neighbours(neighbours, rows).relation,
        rows=_check_rows(rows),
    )


def _check_mappings(data: object, args: object, datasets: object, bags: list[str]) -> None:
    """`data` and `args` are mappings, `datasets` a name or a mapping: any
    other value (a DataFrame or a path given as `data` itself) is refused
    as the API's error, naming the form expected (review s27c: pandas'
    ValueError and an AttributeError escaped)."""
    value = f'"{data}"' if isinstance(data, str) else "frame" if hasattr(data, "columns") else "..."
    example = ", ".join(f'"{name}": {value if len(bags) == 1 else "..."}' for name in bags) or f'"db": {value}'
    what = f"{type(data).__module__.split('.')[0]}.{type(data).__name__}" if not isinstance(data, str) else "a str"
    if data is not None and not isinstance(data, Mapping):
        raise _option_error(
            f"`data` maps each bag parameter to its data, not {what}: give `data={{{example}}}` (a CSV or "
            "Parquet path, a registered dataset's name, or a pandas/polars/Arrow table for each)")
    if data is not None and not all(isinstance(key, str) for key in data):
        raise _option_error(f"`data`'s keys are the definition's bag parameters (strings): `data={{{example}}}`")
    if args is not None and not isinstance(args, Mapping):
        raise _option_error(f"`args` maps each public parameter to its value, not {type(args).__name__}: "
                            'give `args={"name": value}`')
    if datasets is not None and not isinstance(datasets, str | Mapping):
        raise _option_error("`datasets` is a dataset's name (the only bag parameter's) or a mapping "
                            f"{{parameter: name}}, not {type(datasets).__name__}")


def _check_group(group: object) -> int:
    """`check --group k`: a whole number of rows per person, 1 to 10^6."""
    if isinstance(group, bool) or not isinstance(group, int) or not 1 <= group <= 1_000_000:
        raise _option_error(f"--group takes a whole number of rows per person from 1 to 1000000, not {group!r}")
    return group


def check_seed(seed: int | None) -> int | None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise _option_error(f"--seed must be a non-negative integer, not {seed}")
    return seed


def check_confidence(confidence: Any) -> Fraction | None:
    """The accuracy intervals' level, strictly between 0 and 1 (None: the default, 95%)."""
    if confidence is None:
        return None
    try:
        # a float by its shortest decimal: 0.8 is 4/5, not the double just below it
        value = Fraction(confidence.strip() if isinstance(confidence, str) else
                         repr(confidence) if isinstance(confidence, float) else confidence)
    except (TypeError, ValueError, ZeroDivisionError):
        raise _option_error(f"--confidence takes a number, not {confidence!r}") from None
    if isinstance(confidence, bool) or not 0 < value < 1:
        raise _option_error(f"--confidence must be strictly between 0 and 1, not {confidence}")
    return value


def _engine(name: str) -> str:
    from fuzzpy.engines import ENGINES

    if name != "auto" and name not in ENGINES:
        raise _option_error(f"unknown engine `{name}`: one of auto, {', '.join(ENGINES)}")
    return name


def _release(request: RunRequest, sources: dict[str, Source] | None, on_warning: Warn | None,
             on_release: Callable[[Release], None] | None, progress: Warn | None) -> Release:
    from fuzzpy.api.releases import release
    from fuzzpy.release.run import execute
    from fuzzpy.support import interrupts
    from fuzzpy.verifier import proof_cache

    released: list[Release] = []

    def show(result: RunResult) -> None:
        released.append(release(result))
        if on_release is not None:
            on_release(released[0])

    def run() -> RunResult:
        # Ctrl-C raises `Interrupted` (a KeyboardInterrupt) only where the
        # ledger is consistent: charged and known to be, or not at all.
        with interrupts.handled(), proof_cache.enabled():
            return execute(request, warn=on_warning or (lambda message: None), show=show, progress=progress)

    if sources is None:
        sources = _file_sources(request.file)
    _guarded(run, sources)
    return released[0]


def _file_sources(path: str) -> dict[str, Source]:
    try:
        return {path: Source(path, Path(path).read_text(encoding="utf-8"))}
    except (OSError, UnicodeDecodeError):
        return {}


def _guarded(step: Callable[[], _T], sources: dict[str, Source] | None) -> _T:
    """``step()``, its FuzzError raised as the API's (with the sources to render)."""
    try:
        return step()
    except ProgramError:
        raise
    except FuzzError as error:
        raise api_error(error, sources if sources is not None else {}) from None


def _option_error(message: str) -> FuzzError:
    from fuzzpy.release.run import EXIT_USAGE, refuse

    return refuse(EXIT_USAGE, "FZ523", message)


def _check_neighbours(neighbours: str | None, rows: Any) -> Neighbours:
    """The relation asked for, or a usage error (FZ523) naming the choices."""
    from fuzzpy.accounting.neighbours import ADD_REMOVE, RELATIONS, Neighbours

    counts = _check_rows(rows)
    try:
        return Neighbours.of(neighbours or ADD_REMOVE, counts)
    except (ValueError, TypeError) as exc:
        raise InvalidInput((Diagnostic("FZ523", f"{exc} (relations: {', '.join(RELATIONS)})", NO_SPAN),)) from None


def _check_rows(rows: Any) -> int | dict[str, int] | None:
    """``rows``: a count (one bag parameter), {name: count}, or the CLI's
    `--rows` values ("N" or "NAME=N", `accounting.row_counts`); FZ523 else."""
    from fuzzpy.accounting.row_counts import RowsError, checked, parse

    try:
        if isinstance(rows, list | tuple):
            return parse([str(value) for value in rows])
        return checked(rows)
    except RowsError as exc:
        raise InvalidInput((Diagnostic("FZ523", str(exc), NO_SPAN),)) from None


def _rows_fit(relation: Neighbours, checked: Any) -> None:
    """`check`'s row counts against the program's bag parameters: a bare N
    where no definition has two, each NAME=N a bag parameter of one (FZ523)."""
    from fuzzpy.accounting.row_counts import RowsError, for_parameters

    rows: int | dict[str, int] | None = relation.rows if relation.rows is not None else (
        dict(relation.named) if relation.named else None)
    if rows is None:
        return
    definitions = list(checked.own_definitions().values())
    try:
        for d in definitions:
            if isinstance(rows, int):
                for_parameters(rows, [*d.privacy, *d.symbolic_privacy], f"`{d.name}`")
        if isinstance(rows, dict):
            names = [n for d in definitions for n in (*d.privacy, *d.symbolic_privacy)]
            for_parameters(rows, names, "the program")
    except RowsError as exc:
        raise InvalidInput((Diagnostic("FZ523", str(exc), NO_SPAN),)) from None


def _check_delta(delta: Any) -> float | None:
    if delta is None:
        return None
    try:
        value = Fraction(delta) if not isinstance(delta, float) else Fraction(repr(delta))
    except (TypeError, ValueError, ZeroDivisionError):
        raise InvalidInput((Diagnostic("FZ523", f"delta must be a number, not {delta!r}", NO_SPAN),)) from None
    if not 0 < value < 1:
        raise InvalidInput((Diagnostic("FZ523", f"delta must be strictly between 0 and 1, not {delta}", NO_SPAN),))
    return float(value)


def _delta_text(delta: Any) -> str | None:
    """A delta as the ledger reads it: exactly as written (a float by its shortest decimal)."""
    if delta is None:
        return None
    _check_delta(delta)
    return delta.strip() if isinstance(delta, str) else repr(delta) if isinstance(delta, float) else str(delta)


def _budget_text(budget: Any) -> str | None:
    """A budget as `--budget` takes it: a number is epsilon, a pair (epsilon, delta)."""
    if budget is None or isinstance(budget, str):
        return budget
    if isinstance(budget, (tuple, list)) and len(budget) == 2:
        return f"{_number_text(budget[0])},{_number_text(budget[1])}"
    if isinstance(budget, (int, float, Fraction)) and not isinstance(budget, bool):
        return _number_text(budget)
    raise _option_error(f"a budget is a number (epsilon), a pair (epsilon, delta) or \"EPS,DELTA\", not {budget!r}")


def _number_text(number: Any) -> str:
    return repr(number) if isinstance(number, float) else str(number)


def _ledger_path(ledger: Any) -> str | None:
    if ledger is None:
        return None
    if isinstance(ledger, Ledger):
        return str(ledger.path)
    path: str = os.fspath(ledger)
    return path


# ---------------------------------------------------------------- the ledger


class Ledger:
    """A budget ledger file: its datasets, their remaining budgets and
    releases. ``path`` None: $FUZZPY_LEDGER, else the user's ledger. Each
    call opens the file and closes it again (the ledger is shared with
    other processes)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        from fuzzpy.ledger.book import default_ledger_path

        self.path = Path(path).expanduser() if path is not None else default_ledger_path()

    def __repr__(self) -> str:
        return f"<fuzzpy.Ledger {str(self.path)!r}>"

    def datasets(self) -> list[DatasetState]:
        """Each dataset with its budget, what was spent and what remains."""
        return self._read(lambda book: book.datasets())

    def entries(self, dataset: str | DatasetState | None = None) -> list[Entry]:
        """Every release (of ``dataset`` -- a name, or an item of
        `datasets()` -- or all), oldest first, as `fuzzpy ledger` shows them:
        without the row rules' counts, which are exact counts of the private
        rows and the data owner's (`fuzzpy dataset show`; review a25 F3)."""
        from dataclasses import replace

        dataset = self._name(dataset)
        found = [replace(e, row_rules=None) for e in self._read(lambda book: book.history(dataset))]
        if dataset is not None and not found:
            known = [s.dataset for s in self.datasets()]
            if dataset not in known:  # a misspelled name is not an empty history (review s29c)
                raise InvalidInput((Diagnostic("FZ508", f"the ledger {self.path} has no dataset `{dataset}`",
                                               NO_SPAN, hint=f"its datasets: {', '.join(known) or 'none'}"),))
        return found

    def remaining(self, dataset: str | DatasetState) -> tuple[float, float]:
        """What remains of ``dataset``'s budget (a name, or an item of
        `datasets()`), as (epsilon, delta); the dataset must have a budget
        (`InvalidInput` otherwise)."""
        from fuzzpy.language.figures import double_down
        from fuzzpy.ledger.rules import rule_named

        dataset = self._name(dataset)
        for state in self.datasets():
            if state.dataset == dataset:
                epsilon, delta = rule_named(state.budget.rule).as_guarantee(state.remaining, state.budget)
                return double_down(epsilon), double_down(delta)  # what remains: never shown larger
        known = ", ".join(s.dataset for s in self.datasets()) or "none"
        raise InvalidInput((Diagnostic("FZ508", f"the ledger {self.path} has no dataset `{dataset}`", NO_SPAN,
                                       hint=f"its datasets: {known}"),))

    @staticmethod
    def _name(dataset: object) -> Any:
        """A dataset's name from a name or a `datasets()` item; anything else
        is refused as the argument it is (FZ509), not blamed on the file."""
        if dataset is None or isinstance(dataset, str):
            return dataset
        name = getattr(dataset, "dataset", None)
        if isinstance(name, str):
            return name
        raise InvalidInput((Diagnostic(
            "FZ509", f"`{dataset!r}` is not a dataset: give its name or an item of `Ledger.datasets()`",
            NO_SPAN),))

    def _read(self, read: Callable[[Any], _T]) -> _T:
        from fuzzpy.ledger.book import Ledger as Book

        def step() -> _T:
            with Book(self.path, create=False) if self.path.exists() else _Empty() as book:
                return read(book)

        return _guarded(step, {})


class _Empty:
    """A ledger file that does not exist yet: no datasets, no releases."""

    def __enter__(self) -> _Empty:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass

    def datasets(self) -> list[DatasetState]:
        return []

    def history(self, dataset: str | None = None) -> list[Entry]:
        return []
