"""Which dataset each `bag` parameter of a run reads, and its data.

`--data PARAM=X` names a registered dataset when X is one's name; otherwise X
is a file, and its dataset is, in this order: the one `--dataset NAME` names;
the dataset registered with that file (by path, or by content: a copy is the
same data); a dataset keyed by the file's hash in a ledger written before
registration existed; else a new one named after the file (`people.csv` and
`people.parquet` are both `people`), registered by the run's charge.

Two steps, because the budget is quoted between them (a run that would
overspend is refused before its data is read): `name_sources` only names the
datasets (reading a file only when its name depends on its content), and
`open_source` reads the file, checks it is the registered one, reads its
header and plans its columns. Every refusal of both depends only on public
things: the registry, the file's existence and format, and its header.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fuzzpy.diagnostics import Diagnostic, FuzzError
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
from fuzzpy.ledger.store import utc_now
from fuzzpy.runtime.loader import DataFile, Header, Plan, plan, read_data_file, read_header
from fuzzpy.source import NO_SPAN
from fuzzpy.types import Type


@dataclass(frozen=True)
class Source:
    """A bag parameter's dataset, before its data is read."""

    param: str
    dataset: str  # the ledger's name
    path: str  # the file to read
    registration: Registration | None  # None: the run's charge registers it
    file: DataFile | None = None  # already read when naming needed its content


@dataclass(frozen=True)
class Opened:
    """A bag parameter's data file, checked and planned (nothing private read)."""

    source: Source
    file: DataFile
    header: Header
    plan: Plan
    registration: Registration  # the registered one, or the one the charge records
    implicit: bool


def usage(message: str, hint: str | None = None) -> FuzzError:
    return FuzzError((Diagnostic("FZ508", message, NO_SPAN, hint=hint),))


def name_sources(ledger: Ledger, data: dict[str, str], names: dict[str, str], params: list[str],
                 reader: Callable[[str], DataFile] = read_data_file) -> dict[str, Source]:
    if "" in names and len(params) != 1:
        raise usage(
            f"--dataset {names['']} names no parameter, but the definition reads {len(params)} databases",
            "name each one: " + " ".join(f"--dataset {p}=NAME" for p in params),
        )
    return {p: _name_source(ledger, p, data[p], names.get(p) or names.get(""), reader) for p in params}


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
    file = reader(given)  # the dataset's name depends on the content
    holders = ledger.registrations_holding(file.absolute, file.sha256)
    if holders:
        return Source(param, holders[0].name, given, holders[0], file)
    legacy = LEGACY_PREFIX + file.sha256
    if ledger.budget(legacy) is not None:
        return Source(param, legacy, given, None, file)
    name = name_from_path(given)
    same_name = ledger.registration(name)
    if same_name is not None:  # e.g. people.csv converted to people.parquet, or a new export
        raise changed_file_error(same_name)
    return Source(param, name, given, None, file)


def open_source(ledger: Ledger, source: Source, bag_type: Type,
                header_reader: Callable[[DataFile], Header] = read_header) -> Opened:
    """Read the source's file, check it is its dataset's, and plan how the
    row type reads it: refusals name the file and column, never a row."""
    file = source.file or read_data_file(source.path)
    registration = source.registration
    implicit = registration is None
    if registration is not None and file.sha256 != registration.sha256:
        raise changed_file_error(registration)
    if registration is None:
        holders = [r for r in ledger.registrations_holding(file.absolute, file.sha256) if r.name != source.dataset]
        if holders:
            raise other_datasets_file_error(source.dataset, holders[0])
    header = header_reader(file)
    if registration is None:
        registration = _first_run_registration(source.dataset, file, header)
    return Opened(source, file, header, plan(header, bag_type, file.path, registration), registration, implicit)


def _first_run_registration(name: str, file: DataFile, header: Header) -> Registration:
    """A dataset a run registers: its columns untyped (each program's row type
    says how it reads them) and the default row rule (drop)."""
    now = utc_now()
    columns = tuple(Column(n) for n in dict.fromkeys(header.names))
    return Registration(name, file.absolute, file.format, file.sha256, len(file.data), columns,
                        explicit=False, registered=now, validated=now)


def _could_be_name(given: str) -> bool:
    return is_name(given) or given.startswith(LEGACY_PREFIX)
