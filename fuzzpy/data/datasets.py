"""Which dataset each `bag` parameter of a run reads, and its data.

`--data PARAM=X` names a registered dataset when X is one's name; otherwise X
is a file, and its dataset is, in this order: the one `--dataset NAME` names;
the dataset registered with that file (by path, or by content: a copy is the
same data); a dataset keyed by the file's hash in a ledger written before
registration existed; else a new one named after the file (`people.csv` and
`people.parquet` are both `people`), registered by the run's charge (a first run types its file before it judges the program: issue 31, F1;
a refused run records nothing: review s30 E).

Two steps, because the budget is quoted between them (a run that would
overspend is refused before its data is read): `name_sources` only names the
datasets (reading a file only when its name depends on its content), and
`open_source` reads the file, checks it is the registered one, reads its
header and plans its columns. Every refusal of both depends only on public
things: the registry, the file's existence and format, and its header.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from fuzzpy.data.identity import (
    NO_RULES,
    Rules,
    cell_class,
    current,
    data_fingerprint,
    data_names,
    plain_names,
    rules_of,
    shared_columns,
)
from fuzzpy.data.loader import DataFile, Header, Plan, plan, read_data_file, read_header
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN
from fuzzpy.language.types import Type
from fuzzpy.ledger.book import Ledger
from fuzzpy.ledger.datasets import (
    LEGACY_PREFIX,
    Column,
    Registration,
    changed_file_error,
    is_name,
    name_from_path,
    other_datasets_file_error,
)
from fuzzpy.ledger.registry import SameRows
from fuzzpy.ledger.store import utc_now
from fuzzpy.support.records import frozen

#: A file's content key from its path, format and SHA-256, restricted to some columns if given
#: (`fuzzpy.engines.content.file_content`).
FileContent = Callable[[str, str, str, "frozenset[str] | None", Rules], "str | None"]

#: A new dataset's content key: its full key (None), or restricted to the columns it shares with a
#: registered one (`fuzzpy.data.identity.shared_columns`); None if it cannot be keyed. Under row
#: rules (`Rules`, a registered dataset's types): its rows those rules drop left out (review s30b).
Content = Callable[["frozenset[str] | None", Rules], "str | None"]


def file_keys(file_content: FileContent, path: str, form: str, sha256: str, full: str | None = None) -> Content:
    """A file's `Content` (its full key `full` if known already)."""
    def content(only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
        if only is None and full is not None and not rules:
            return full
        return file_content(path, form, sha256, only, rules)
    return content


def known_keys(full: str | None, restricted: Content) -> Content:
    """Data in memory's `Content`: its full key, computed at registration,
    and `restricted` for the keys restricted to shared columns."""
    def content(only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
        return full if only is None and not rules else restricted(only, rules)
    return content


def _no_content(only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
    return None

#: Records a first run's registration in the ledger (with the run's budget) and says so to the
#: data holder, before the program is judged against it (issue 31, F1); returns the registration
#: recorded (another parameter of the same run may have recorded it first).
Register = Callable[[Registration, "SameRows | None"], Registration]


@frozen
class Source:
    """A bag parameter's dataset, before its data is read."""

    param: str
    dataset: str  # the ledger's name
    path: str  # the file to read
    registration: Registration | None  # None: the run registers it (`open_source`)
    file: DataFile | None = None  # already read when naming needed its content
    frame: Any = None  # `fuzzpy.data.memory.InMemory`: data given as an object, not a file


@frozen
class Opened:
    """A bag parameter's data file, checked and planned (nothing private read)."""

    source: Source
    file: DataFile
    header: Header
    plan: Plan
    registration: Registration  # the registered one, or the one the charge records
    implicit: bool
    placed: Any = None  # data in memory: where the engine holds it (`fuzzpy.engines.frames`)
    fingerprint: str | None = None  # data in memory: the columns read (`engines.fingerprint`)
    same_rows: SameRows | None = None  # a first run's check for the same rows, made again by the charge


def usage(message: str, hint: str | None = None) -> FuzzError:
    return FuzzError((Diagnostic("FZ508", message, NO_SPAN, hint=hint),))


def name_sources(ledger: Ledger, data: dict[str, Any], names: dict[str, str], params: list[str],
                 reader: Callable[[str], DataFile] = read_data_file) -> dict[str, Source]:
    """`data[p]`: a path or name, or data in memory (`fuzzpy.data.memory.recognise`)."""
    from fuzzpy.data.memory import InMemory, recognise

    if "" in names and len(params) != 1:
        raise usage(
            f"--dataset {names['']} names no parameter, but the definition reads {len(params)} databases",
            "name each one: " + " ".join(f"--dataset {p}=NAME" for p in params),
        )
    given = {p: recognise(p, data[p]) for p in params}
    return {p: _frame_source(ledger, p, g, names.get(p) or names.get("")) if isinstance(g, InMemory)
            else _name_source(ledger, p, g, names.get(p) or names.get(""), reader) for p, g in given.items()}


def _frame_source(ledger: Ledger, param: str, frame: Any, chosen: str | None) -> Source:
    """Data in memory has no file to name it: its dataset is named (FZ550
    otherwise), registered or registered by the run's first charge."""
    from fuzzpy.data.memory import UNNAMED_FRAME, data_error
    from fuzzpy.ledger.datasets import check_name

    if not chosen:
        raise data_error(UNNAMED_FRAME, f"the data for `{param}` is {frame.describe()}, which has no file "
                         "to name its dataset", f'name it: datasets={{"{param}": "NAME"}} (a registered '
                         "dataset, or a new one that this run registers)")
    check_name(chosen)
    return Source(param, chosen, frame_path(chosen), ledger.registration(chosen), None, frame)


def frame_path(name: str) -> str:
    """What a dataset given in memory records as its file."""
    return f"frame:{name}"


def _name_source(ledger: Ledger, param: str, given: str, chosen: str | None,
                 reader: Callable[[str], DataFile] = read_data_file) -> Source:
    registered = ledger.registration(given) if _could_be_name(given) else None
    if chosen:
        if registered is not None and registered.name != chosen:
            raise usage(f"--data {param}={given} names dataset `{given}`, but --dataset names `{chosen}`")
        named = registered or ledger.registration(chosen)
        return Source(param, chosen, registered.file if registered else given, named)
    if registered is not None:
        return Source(param, registered.name, registered.file, registered)
    absolute = str(Path(given).resolve())
    by_path = ledger.registrations_holding(absolute)
    if by_path:
        return Source(param, by_path[0].name, given, by_path[0])
    try:
        file = reader(given)  # the dataset's name depends on the content
    except FuzzError as error:
        raise _maybe_a_name(error, ledger, given) from None
    holders = ledger.registrations_holding(file.absolute, file.sha256)
    if holders:
        return Source(param, holders[0].name, given, holders[0], file)
    legacy = LEGACY_PREFIX + file.sha256
    if ledger.budget(legacy) is not None:
        return Source(param, legacy, given, None, file)
    name = name_from_path(given)
    same_name = ledger.registration(name)
    if same_name is not None:  # e.g. people.csv converted to people.parquet, or a new export
        raise changed_file_error(same_name, param, file.absolute)
    return Source(param, name, given, None, file)


def _maybe_a_name(error: FuzzError, ledger: Ledger, given: str) -> FuzzError:
    """FZ501 for `--data PARAM=WORD` where WORD is no file: it may have been
    meant as a registered dataset's name (review s29c), so say which are."""
    if not _could_be_name(given) or Path(given).suffix or not error.diagnostics \
            or error.diagnostics[0].code != "FZ501":
        return error
    import difflib
    from dataclasses import replace as replaced

    names = [r.name for r in ledger.registrations()]
    close = difflib.get_close_matches(given, names, n=1)
    known = ", ".join(f"`{n}`" for n in names) or "none"
    hint = (f"no dataset named `{given}` is registered in this ledger (registered: {known})"
            + (f"; did you mean `{close[0]}`?" if close else ""))
    first = error.diagnostics[0]
    if first.hint:
        hint = f"{first.hint}; or {hint}"
    return FuzzError((replaced(first, hint=hint), *error.diagnostics[1:]))


def open_source(ledger: Ledger, source: Source, bag_type: Type,
                header_reader: Callable[[DataFile], Header] = read_header, *,
                file_content: FileContent,
                first_kinds: Callable[[DataFile, Header], dict[str, str | None] | None] | None = None,
                register: Register | None = None) -> Opened:
    """Read the source's file, check it is its dataset's, and plan how the
    row type reads it: refusals name the file and column, never a row.

    A first run (nothing registered) types its columns as `dataset
    register` types them before the row type is judged against them (issue
    31, F1). With `register` the registration is recorded here; the run
    passes none, and its charge records it (`DataUse.implicit`, the same rows
    checked again under the write lock), so a refused run writes nothing
    (review s30 E)."""
    file = source.file or read_data_file(source.path)
    registration = source.registration
    implicit = registration is None
    if registration is not None and file.sha256 != registration.sha256:
        raise changed_file_error(registration, source.param, file.absolute)  # the FILE to accept (review s29c)
    if registration is None:
        holders = [r for r in ledger.registrations_holding(file.absolute, file.sha256) if r.name != source.dataset]
        if holders:
            raise other_datasets_file_error(source.dataset, holders[0], param=source.param)
        earlier = [n for n in ledger.datasets_once_holding(file.sha256) if n != source.dataset]
        holder = ledger.registration(earlier[0]) if earlier else None
        if holder is not None:
            raise other_datasets_file_error(source.dataset, holder, earlier=True, param=source.param)
    header = header_reader(file)
    same_rows = None
    if registration is None:  # the header's own refusals (a column missing, unreadable) before any ledger write
        plan(header, bag_type, file.path, None, first=True)
        typed = first_kinds(file, header) if first_kinds is not None else None  # the engine's one pass
        registration = _first_run_registration(source.dataset, file, header, typed)
        content = refuse_same_rows(ledger, source.dataset, list(header.names),
                                   file_keys(file_content, file.absolute, file.format, file.sha256),
                                   file_content=file_content, param=source.param)
        registration = replace(registration, content=content)
        same_rows = same_rows_check(
            source.dataset, list(header.names),
            file_keys(file_content, file.absolute, file.format, file.sha256, content), file_content)
        if register is not None:
            registration, same_rows = register(registration, same_rows), None
    planned = plan(header, bag_type, file.path, registration, first=implicit)
    return Opened(source, file, header, planned, registration, implicit, same_rows=same_rows)


def refuse_same_rows(ledger: Ledger, name: str, names: list[str], content: Content,
                     eager: bool = False, *, file_content: FileContent, param: str = "PARAM") -> str | None:
    """Refuse (FZ545) a new dataset holding the rows of a registered one in
    another form (a frame read from its file, its CSV as Parquet: a14 F1),
    by content key (`fuzzpy.engines.content`). Only datasets one of whose
    column names are a subset of the other's are compared, on the columns
    they share (`shared_columns`: a projection, a copy with an index or id
    column added); keys are computed then, and a file's full key recorded.
    Returns the new dataset's full key (None if it was not needed and not
    `eager`).
    `file_content` computes a registered file's key (the engines' reader,
    passed in: this layer reads no engine)."""
    return _refuse_same_rows(name, names, content, eager, ledger.registrations(), ledger.earlier_contents(),
                             ledger.registration, ledger.record_content, file_content, param)


def same_rows_check(name: str, names: list[str], content: Content, file_content: FileContent) -> SameRows:
    """`refuse_same_rows` again, for the charge to make under its write lock
    with what is registered then (`DataUse.same_rows`): nothing recorded,
    each of the new dataset's keys computed at most once."""
    known: dict[tuple[frozenset[str] | None, Rules], str | None] = {}

    def once(only: frozenset[str] | None = None, rules: Rules = NO_RULES) -> str | None:
        if (only, rules) not in known:
            known[only, rules] = content(only, rules)
        return known[only, rules]

    def check(registrations: list[Registration], earlier: list[tuple[str, list[str], str]]) -> str | None:
        by_name = {r.name: r for r in registrations}
        return _refuse_same_rows(name, names, once, False, registrations, earlier, by_name.get,
                                 lambda *_: None, file_content)

    return check


def _refuse_same_rows(name: str, names: list[str], content: Content, eager: bool,
                      registrations: list[Registration], earlier_keys: list[tuple[str, list[str], str]],
                      registration_of: Callable[[str], Registration | None],
                      record: Callable[[str, str, str], None], file_content: FileContent,
                      param: str = "PARAM") -> str | None:
    # a copy with columns added or removed holds the same people: compared on the columns shared
    alike = [(r, shared) for r in registrations if r.name != name
             for shared in [shared_columns(names, [c.name for c in r.columns])] if shared is not None]
    # a frame's or an earlier version's full key only: compared when its columns are all shared
    earlier = [(holder, their_names, theirs, shared) for holder, their_names, theirs in earlier_keys
               if holder != name and current(theirs)
               for shared in [shared_columns(names, their_names)] if shared == frozenset(data_names(their_names))]
    keys: dict[tuple[frozenset[str] | None, Rules], str | None] = {}

    def mine(only: frozenset[str] | None, rules: Rules = NO_RULES) -> str | None:
        """The new dataset's key restricted to `only` (its full key when
        `only` is every one of its columns), under the row rules `rules`."""
        if only is not None and only == frozenset(data_names(names)) and plain_names(names):
            only = None
        if (only, rules) not in keys:
            keys[only, rules] = content(only, rules)
        return keys[only, rules]

    full = mine(None) if eager else None
    for other, shared in alike:
        _compare_registered(name, names, other, shared, mine, record, file_content, param)
    for holder, their_names, theirs, shared in earlier:  # an earlier version, in another form (a18 F2)
        registration = registration_of(holder)
        if registration is not None and _matches(theirs, True, shared, names, partial(_under, mine, NO_RULES)):
            raise other_datasets_file_error(name, registration, same_rows=True, earlier=True,
                                            shared=_named(shared, names, their_names), param=param)
    return keys.get((None, NO_RULES), full)


def _compare_registered(name: str, names: list[str], other: Registration, shared: frozenset[str],
                        mine: Callable[[frozenset[str] | None, Rules], str | None],
                        record: Callable[[str, str, str], None], file_content: FileContent,
                        param: str = "PARAM") -> None:
    """Refuse (FZ545) the new dataset if its rows restricted to `shared` are
    `other`'s so restricted. A registered file is keyed on the shared
    columns (its full key recorded when that is what was computed); a
    frame, gone, only by its recorded full key: compared only when all its
    columns are shared. A file is also compared under its row rules
    (`_matches_under_rules`)."""
    their_names = [c.name for c in other.columns]
    whole = shared == frozenset(data_names(their_names))
    theirs = other.content if whole and plain_names(their_names) and current(other.content) else None
    if theirs is None and other.format != "frame":
        theirs = file_content(other.file, other.format, other.sha256, None if whole and plain_names(their_names)
                              else shared, NO_RULES)
        if theirs is not None and whole and plain_names(their_names):
            record(other.name, other.sha256, theirs)
    elif theirs is None and whole and current(other.content):
        theirs = other.content  # a frame's own key: its columns with no name included
    if (theirs is not None and _matches(theirs, whole, shared, names, partial(_under, mine, NO_RULES))) \
            or _matches_under_rules(names, other, shared, mine, file_content):
        raise other_datasets_file_error(name, other, same_rows=True, shared=_named(shared, names, their_names),
                                        param=param)


def registration_rules(registration: Registration, only: frozenset[str] | None = None) -> Rules:
    """A registration's row rules (`rules_of`): its columns typed `int`,
    `num` or `bool`, among `only` if given. The loader drops a row whose
    cell does not fit (the default rule; under `refuse` no such row was
    registered, under `value:` it is read as the replacement: leaving it
    out of the key links more, never less)."""
    return rules_of(((c.name, c.kind) for c in registration.columns), only)


def _matches_under_rules(names: list[str], other: Registration, shared: frozenset[str],
                         mine: Callable[[frozenset[str] | None, Rules], str | None],
                         file_content: FileContent) -> bool:
    """Whether the new dataset's rows are a registered file's once both
    leave out the rows the file's row rules drop (its columns typed `int`,
    `num`, `bool`, on the shared columns; review s30b: `6,abc` or a UCI `?`
    in a `num` column, a junk row appended). Compared besides the keys with
    every row (`_compare_registered`): a link under either is a link, so
    the rules only ever link more (a key's fit is judged on a cell's
    spelling, which the key without rules reads alike for `3.0` and 3).
    A registered frame, gone, has its key with every row only."""
    rules = registration_rules(other, shared)
    if not rules or other.format == "frame":
        return False
    their_names = [c.name for c in other.columns]
    whole = shared == frozenset(data_names(their_names))
    theirs = file_content(other.file, other.format, other.sha256,
                          None if whole and plain_names(their_names) else shared, rules)
    return theirs is not None and _matches(theirs, whole, shared, names, partial(_under, mine, rules))


def _under(mine: Callable[[frozenset[str] | None, Rules], str | None], rules: Rules,
           only: frozenset[str] | None) -> str | None:
    return mine(only, rules)


def _matches(theirs: str, full: bool, shared: frozenset[str], names: list[str],
             mine: Callable[[frozenset[str] | None], str | None]) -> bool:
    """Whether the other table's key `theirs` (restricted to `shared`, or its
    `full` key) is the new data's: restricted to `shared`, or its full key
    too when it holds exactly the shared columns and columns with no name
    (a full key keeps a value in such a column, as the other's may)."""
    if mine(shared) == theirs:
        return True
    whole = shared == frozenset(data_names(names)) and not plain_names(names)
    return full and whole and mine(None) == theirs


def _named(shared: frozenset[str], names: list[str], their_names: list[str]) -> tuple[str, ...] | None:
    """The shared columns for FZ545's message, when they are not all of both
    tables' columns (None then: the same rows in another form)."""
    every = all(shared == frozenset(data_names(n)) and plain_names(n) for n in (names, their_names))
    return None if every else tuple(sorted(shared))


def open_frame(ledger: Ledger, source: Source, bag_type: Type, header: Header,
               digests: Callable[[list[int]], dict[str, str]], rows: Callable[[], int],
               content: Content = _no_content, *, file_content: FileContent,
               cells: Header | None = None, register: Register | None = None) -> Opened:
    """`open_source` for data in memory: the header is its columns' names and
    Arrow types; `digests(indices)` gives the named columns' digests
    (`fuzzpy.engines.fingerprint`). A registered dataset's columns read must
    have their registered digests (FZ541 otherwise, as for a changed file);
    a first run records the digests of every column."""
    registration = source.registration
    path = source.path
    if registration is not None and registration.format != "frame":
        raise FuzzError((Diagnostic(
            "FZ541", f"dataset `{registration.name}` is registered with the file {registration.file}: data "
            "in memory cannot be checked against a file's bytes", NO_SPAN,
            notes=("nothing was charged",),
            hint=f"give its file (--data {source.param}={registration.name}), or register the frame as a "
            "dataset of its own"),))
    if registration is not None:
        planned = plan(header, bag_type, path, registration)
        read = sorted({c.index for c in planned.columns})
        found = digests(read)
        for name, digest in found.items():
            column = registration.column(name)
            if column is None or column.sha256 != digest:
                raise changed_file_error(registration, source.param)
        implicit = False
    else:
        plan(header, bag_type, path, None, first=True)  # the header's own refusals before any ledger write
        hashable = [i for i, t in enumerate(header.arrow_types or ()) if cell_class(t) is not None]
        found = digests(hashable)
        fingerprint = data_fingerprint(found)
        holders = [r for r in ledger.registrations_holding(path, fingerprint) if r.name != source.dataset]
        if holders:
            raise other_datasets_file_error(source.dataset, holders[0], param=source.param)
        key = refuse_same_rows(ledger, source.dataset, list(header.names), content, eager=True,
                               file_content=file_content, param=source.param)
        now = utc_now()
        # each column typed by its own Arrow type, public, as `dataset register` types a Parquet file's
        # (issue 31); a column of bytes by its cells, a column with no value `none` (F2): `cells` are
        # fetched by the engine the data lives in, else `header`'s table; one function on every engine (F3)
        kinds: dict[str, str | None] = {}
        held = cells if cells is not None else header if header.table is not None else None
        if held is not None:
            from fuzzpy.data.validation import text_kinds

            kinds.update(text_kinds(held))
        columns = tuple(Column(n, kinds.get(n) if header.names.count(n) == 1 else None, sha256=found.get(n))
                        for n in dict.fromkeys(header.names))
        registration = Registration(source.dataset, path, "frame", fingerprint, rows(), columns,
                                    explicit=False, registered=now, validated=now, content=key)
        implicit = True
        known_key = key
        checked = same_rows_check(source.dataset, list(header.names), known_keys(known_key, content), file_content)
        if register is not None:  # recorded before the row type is judged (issue 31, F1)
            registration = register(registration, checked)
        planned = plan(header, bag_type, path, registration, first=True)
    read_names = {header.names[c.index] for c in planned.columns}
    fingerprint = data_fingerprint({n: d for n, d in found.items() if n in read_names})
    file = DataFile(path, path, "frame", b"", registration.sha256)
    known = registration.content
    same_rows = same_rows_check(source.dataset, list(header.names), known_keys(known, content), file_content) \
        if implicit and register is None else None
    return Opened(source, file, header, planned, registration, implicit, fingerprint=fingerprint,
                  same_rows=same_rows)


def _first_run_registration(name: str, file: DataFile, header: Header,
                            typed: dict[str, str | None] | None = None) -> Registration:
    """A dataset a run registers: its columns typed as `dataset register`
    types them without declarations (inferred from a CSV file's cells, a
    Parquet column's own type; the registration is its owner's act and the
    schema public from then on, docs/semantics.md "Columns no row can be read
    from") and the default row rule (drop)."""
    now = utc_now()
    kinds = typed if typed is not None else _first_run_kinds(file, header)
    columns = tuple(Column(n, kinds.get(n)) for n in dict.fromkeys(header.names))
    return Registration(name, file.absolute, file.format, file.sha256, len(file.data), columns,
                        explicit=False, registered=now, validated=now)


def _first_run_kinds(file: DataFile, header: Header) -> dict[str, str | None]:
    """`validation.first_run_kinds`: `dataset register`'s typing."""
    from fuzzpy.data.validation import first_run_kinds

    return first_run_kinds(file, header)


def _could_be_name(given: str) -> bool:
    return is_name(given) or given.startswith(LEGACY_PREFIX)
