"""How `fuzzpy run` uses an engine: open the data, load it, interpret.

`engine_for(name)` gives the object `fuzzpy.release.run.execute` calls at its
seams (docs/engines.md):

* `open(ledger, source, bag_type)`: read what is public about a bag
  parameter's file (its hash, header, schema) and plan its columns, refusing
  before any charge exactly as `fuzzpy.data.datasets.open_source` does;
* `load(opened)`: the bag (after the row rules) and the owner's report;
* `interpreter(program, source, warn, checked)`: the interpreter that computes.

`MemoryEngine` is fuzzpy's own interpreter with the whole file in memory;
`QueryEngine` holds the rows in DuckDB or Spark. A query engine hashes a
file by streaming it (the bytes are not kept), or recalls the hash of that
version of the file (`filehash`); a Parquet file, and a CSV file on DuckDB,
are then read by the engine itself, so the run checks, after computing,
that the file is still the one hashed (its device, inode, size,
modification and change times: a file replaced in between is refused
before anything is released; the charge stands).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from fuzzpy.data.columntypes import TEXT, ColumnType, column_type, from_json, to_json
from fuzzpy.data.loader import DataFile, Header, Plan, file_format, load, read_header
from fuzzpy.engines.csvscan import (
    CHUNK,
    CsvFacts,
    Scanner,
    csv_report,
    csv_selects,
    csv_source,
    marked_source,
    streams_once_marked,
    without_lone_returns,
)
from fuzzpy.engines.execute import Executor
from fuzzpy.engines.filehash import (
    recall,
    recall_counts,
    recall_schema,
    remember,
    remember_counts,
    remember_schema,
)
from fuzzpy.engines.plan import Scan
from fuzzpy.engines.scan import (
    ROW_ID,
    arrow_table,
    column_name,
    compilable,
    parquet_report,
    parquet_select,
)
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN
from fuzzpy.runtime.bag import Bag
from fuzzpy.support.lazy import lazy

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)

ENGINES = ("memory", "duckdb", "spark")
#: A file whose rows have more columns than this is evaluated in memory: the
#: width is public (the header), so this is decided, and said, before the
#: charge. The SQL is linear in the width, but the engines' planning time and
#: memory grow faster (DuckDB at 3000 columns: seconds to tens of seconds
#: and gigabytes of plan for a query on 20 rows; docs/engines.md).
MAX_QUERY_COLUMNS = 2048
Warn = Callable[[str], None]


class MemoryEngine:
    """fuzzpy's in-memory interpreter: the reference semantics."""

    name = "memory"

    def reader(self, path: str) -> DataFile:
        from fuzzpy.data.loader import read_data_file

        return read_data_file(path)

    def open(self, ledger, source, bag_type, register=None):  # type: ignore[no-untyped-def]
        from fuzzpy.data.datasets import open_source
        from fuzzpy.engines.content import file_content

        if source.frame is not None:
            from fuzzpy.engines.frames import open_in_memory

            return open_in_memory(ledger, source, bag_type, register)
        return open_source(ledger, source, bag_type, file_content=file_content, register=register)

    def load(self, opened) -> tuple[Bag, dict[str, object]]:  # type: ignore[no-untyped-def]
        return load(opened.header, opened.plan)

    def interpreter(self, program, source, warn, checked=None):  # type: ignore[no-untyped-def]
        from fuzzpy.runtime.interpreter import Interpreter

        return Interpreter(program, source, warn, checked)

    def close(self) -> None:
        pass


class _Unread:
    """A file's bytes, not read into memory: their number, the file's
    identity when hashed (`_stat`) and, for a CSV file, what DuckDB needs to
    know to read it (`csvscan.CsvFacts`)."""

    def __init__(self, size: int, stat: tuple[int, ...] | None = None, facts: CsvFacts | None = None) -> None:
        self.size = size
        self.stat = stat
        self.facts = facts

    def __len__(self) -> int:
        return self.size


def streamed_data_file(path: str | Path) -> DataFile:
    """`loader.read_data_file` without keeping the bytes: hashed in chunks."""
    from fuzzpy.data.cells import INT_LIMIT  # noqa: F401 -- the loader's module is loaded
    from fuzzpy.data.csvframe import unreadable_file

    name = str(path)
    digest = hashlib.sha256()
    form = file_format(name)
    scanner = Scanner() if form == "csv" else None
    try:
        absolute = str(Path(path).resolve())
        with open(path, "rb") as handle:
            stat = _stat_of(os.fstat(handle.fileno()))
            known = recall(absolute, stat)
            if known is not None:
                return DataFile(name, absolute, form, _Unread(stat[2], stat, known[1]), known[0])  # type: ignore[arg-type]
            size = 0
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
                if scanner is not None:
                    scanner.update(chunk)
                size += len(chunk)
            unchanged = _stat_of(os.fstat(handle.fileno())) == stat
    except OSError as exc:
        raise unreadable_file(name, exc) from None
    facts = scanner.facts() if scanner is not None else None
    if unchanged and size == stat[2]:
        remember(absolute, stat, digest.hexdigest(), facts)
    return DataFile(name, absolute, form, _Unread(size, stat, facts), digest.hexdigest())  # type: ignore[arg-type]


def csv_header(file: DataFile) -> Header:
    """A CSV file's header from the file's first lines only: read up to the
    end of its first non-blank line (the loader's `frame` on those bytes
    finds the same header and refusals as on the whole file)."""
    from fuzzpy.data.csvframe import frame, schema_error, unreadable_file

    data = b""
    try:
        with open(file.path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                data += chunk
                if _holds_a_header(data):
                    break
    except OSError as exc:
        raise unreadable_file(file.path, exc) from None
    if not data:
        raise schema_error("FZ502", f"data file `{file.path}` is empty", file.path,
                           hint="the first line must name the columns")
    framed = frame(data, file.path)
    return Header(framed.names, None, framed, None)


def _holds_a_header(data: bytes) -> bool:
    """Whether `data` holds a whole non-blank line (a blank one is empty
    but for the carriage return before its newline)."""
    from fuzzpy.data.csvframe import UTF8_BOM

    complete = data[len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0 : data.rfind(b"\n") + 1]
    return any(line not in (b"", b"\r") for line in complete.split(b"\n")[:-1])


def _stat(path: str) -> tuple[int, ...]:
    return _stat_of(os.stat(path))


def _stat_of(info: os.stat_result) -> tuple[int, ...]:
    """A file's identity and version as the file system records them: a
    write or `utime` changes the change time, which user space cannot set
    back (but a write through an `mmap` to a page already written through
    it changes no time: docs/engines.md, "The file's hash")."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


class ScanBag(Bag):
    """A bag parameter's rows in an engine, before the interpreter starts
    (`EngineInterpreter.call_definition` makes it a `RelationBag`)."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.selection = None
        self._size = None
        self._view = None


class QueryEngine:
    """DuckDB or Spark: bag operations run as queries; only aggregates return."""

    def __init__(self, name: str, warn: Warn, progress: Warn | None = None, **options: object) -> None:
        self.name = name
        self.warn = warn
        self.progress = progress
        self.options = options
        self._backend = None
        self._watched: dict[str, tuple[int, int, int]] = {}
        #: audit counts a first run's typing pass counted (`_first_kinds`), by hash and query
        self._audits: dict[tuple[str, str], tuple[int, ...]] = {}
        self._copies: dict[str, str] = {}  # marked copies of CSV files by their hash (`_marked_copy`)

    @property
    def backend(self):  # type: ignore[no-untyped-def]
        if self._backend is None:
            if self.name == "duckdb":
                from fuzzpy.engines.duck import DuckDBBackend

                self._backend = DuckDBBackend(progress=self.progress, **self.options)  # type: ignore[arg-type]
            else:
                from fuzzpy.engines.spark import SparkBackend

                self._backend = SparkBackend(progress=self.progress, **self.options)  # type: ignore[arg-type]
            self._backend.check_sources = self.check_files
        return self._backend

    # ------------------------------------------------------------ the seams of `run`

    def open(self, ledger, source, bag_type, register=None):  # type: ignore[no-untyped-def]
        from fuzzpy.data.datasets import open_source
        from fuzzpy.engines.content import file_content

        if source.frame is not None:
            from fuzzpy.engines.frames import open_in_engine

            return open_in_engine(self, ledger, source, bag_type, register)
        if source.file is None or isinstance(source.file.data, _Unread):
            source = replace(source, file=source.file or streamed_data_file(source.path))
        return open_source(ledger, source, bag_type, header_reader=self._header, file_content=file_content,
                           first_kinds=lambda file, header: self._first_kinds(file, header, bag_type),
                           register=register)

    def _first_kinds(self, file: DataFile, header: Header, bag_type: object) -> dict[str, str | None] | None:
        """A first run's column types (issue 31), counted by DuckDB: a CSV
        file's in the pass of the audit query (`_csv_kinds`), a Parquet
        file's by their stored types and null counts in one query. None:
        the loader's typing (`datasets._first_run_kinds`)."""
        from fuzzpy.engines.csvscan import streamed_csv_kinds, streamed_parquet_kinds

        if file.format == "parquet" and header.table is None:
            return streamed_parquet_kinds(file.absolute, header)
        counted = self._csv_kinds(file, header, bag_type)
        return counted if counted is not None else streamed_csv_kinds(file, header)

    def _csv_kinds(self, file: DataFile, header: Header, bag_type: object) -> dict[str, str | None] | None:
        """A streamed CSV file's column types counted in the audit query's
        pass (`csv_selects`' `typed`), its audit counts kept for `load`
        (`_audit`): the first run reads the records once for both. The
        plan is the one `open_source` makes (a first run's rule: drop);
        where `load` would not stream the file, None."""
        from fuzzpy.data.loader import plan as plan_rows
        from fuzzpy.engines.csvscan import KIND_COUNTS, kinds_of, unique_columns

        facts = file.data.facts if isinstance(file.data, _Unread) else None
        width = len(header.names)
        if self.name != "duckdb" or file.format != "csv" or facts is None or header.csv is None \
                or (facts.obstacle(width) is not None and not streams_once_marked(facts, width)):
            return None
        planned = plan_rows(header, bag_type, file.path, None)  # type: ignore[arg-type]  # open_source's refusals
        path = os.path.realpath(file.path)
        if len(planned.columns) > MAX_QUERY_COLUMNS or self.backend.path_obstacle(path) is not None:
            return None
        self._watch(file, path)
        marked, bad_text = _marks(facts) if facts.obstacle(width) is not None else (None, None)
        if facts.obstacle(width) is not None:
            path, facts = self._marked_copy(file, path, facts), marked_source(facts)
        source = csv_source(path, facts, header.csv.header_line)
        typed = unique_columns(header.names)
        _, audit = csv_selects(self.backend.dialect, source, planned, width, marked=marked, bad_text=bad_text)
        _, both = csv_selects(self.backend.dialect, source, planned, width, typed, marked=marked,
                              bad_text=bad_text)
        (row,) = self.backend.rows(both)
        self.check_files()
        audited = len(row) - len(typed) * KIND_COUNTS
        counts = tuple(int(c or 0) for c in row[:audited])
        key = audit.replace(source, "<file>")
        self._audits[(file.sha256, key)] = counts
        remember_counts(file.sha256, key, counts)
        return kinds_of(header.names, typed, row[audited:])

    def _header(self, file: DataFile) -> Header:
        if not isinstance(file.data, _Unread):
            return read_header(file)
        if file.format == "csv":
            return csv_header(file)
        if file.format == "parquet":
            try:
                names, types = parquet_columns(file)
            except Exception:  # noqa: BLE001 -- the loader's refusal, from the whole file
                return read_header(_read_whole(file))
            if len(set(names)) != len(names) or any(n.casefold() == "file_row_number" for n in names):
                # the loader's refusal of duplicates (a15 F2); a column DuckDB's row number would shadow (a16 F4)
                return read_header(_read_whole(file))
            return Header(names, types, None, None)
        return read_header(_read_whole(file))

    def use_connection(self, connection: object):  # type: ignore[no-untyped-def]
        """The DuckDB backend on the connection data lives in (None: our own);
        data from two connections cannot meet in one run (FZ552)."""
        if self._backend is None:
            self.options["connection"] = connection
        elif self.options.get("connection") is not connection:
            from fuzzpy.data.memory import WRONG_ENGINE, data_error

            raise data_error(WRONG_ENGINE, "the data lives in more than one DuckDB connection",
                             "give every bag parameter's data in one connection")
        return self.backend

    def load(self, opened) -> tuple[Bag, dict[str, object]]:  # type: ignore[no-untyped-def]
        if opened.placed is not None:
            return self._frame(opened)
        file, plan = opened.file, opened.plan
        header = opened.header
        if len(plan.columns) > MAX_QUERY_COLUMNS:
            self.warn(f"warning: the rows of `{file.path}` have {len(plan.columns)} columns, more than "
                      f"{self.name} is given ({MAX_QUERY_COLUMNS}); they are evaluated by the in-memory interpreter")
            if isinstance(file.data, _Unread) and header.table is None:
                header = read_header(_read_whole(file))
            return load(header, plan)
        # Why a file is not scanned by the engine depends on its contents (text
        # that is not UTF-8, a stray carriage return): a fact about the private
        # data, so the analyst is not told it; it is kept for the data owner
        # with the row rules' counts (`loaded_by`), and the rows are the same.
        # Why a file is not given to the engine by its name is public (the
        # name): the analyst is told.
        obstacle = None
        parquet = file.format == "parquet" and header.table is None and _compilable(header, plan)
        csv = file.format == "csv" and isinstance(file.data, _Unread) and self.name == "duckdb"
        # the path the engine is given: resolved once, so that the name checked
        # here is the one it reads (and the one `_watch` checks against the hash)
        path = os.path.realpath(file.path) if parquet or csv else ""
        named = self.backend.path_obstacle(path) if parquet or csv else None
        if named is not None:
            self.warn(f"warning: `{file.path}` is read by fuzzpy's loader, not {self.name}: {named}")
            obstacle = named
        elif parquet:
            if _strings_are_utf8(file, path, header, plan):
                return self._parquet(file, header, plan, path)
            if self.name == "duckdb":  # one cell that is not UTF-8 must not send the file to
                # the loader, which holds it whole (review s29c): scanned from a copy
                return self._parquet(file, header, plan, path, self._valid_copy(file, path, header, plan))
            obstacle = "text that is not UTF-8"
        elif csv:
            facts = file.data.facts
            obstacle = "it was not scanned" if facts is None else facts.obstacle(len(header.names))
            if obstacle is None:
                return self._csv(file, header, plan, path)
            if facts is not None and streams_once_marked(facts, len(header.names)):
                return self._marked_csv(file, header, plan, path, facts)
        if isinstance(file.data, _Unread) and header.table is None:
            header = read_header(_read_whole(file))  # the loader reads the whole file
        bag, report = load(header, plan)
        if obstacle is not None:
            report = {**report, "loaded_by": f"fuzzpy's loader, not {self.name}: {obstacle}"}
        return self.from_bag(bag, plan), report

    def _watch(self, file: DataFile, path: str) -> None:
        """`path`, the file's real path that the engine is given, watched by
        `check_files` and checked now to be the file hashed. Given a symbolic
        link, the engine opened it again for each query: pointed at another
        dataset's file between the charge and the query and back, the engine
        read the other file, and the check of the link's target after
        computing saw the first (review a25 F4)."""
        seen = file.data.stat if isinstance(file.data, _Unread) else None
        self._watched[path] = seen or _stat(path)
        self.check_files()

    def _csv(self, file: DataFile, header: Header, plan: Plan, path: str) -> tuple[Bag, dict[str, object]]:
        """The CSV file streamed by DuckDB under the loader's rules (`csvscan`)."""
        d = self.backend.dialect
        self._watch(file, path)
        assert header.csv is not None and isinstance(file.data, _Unread) and file.data.facts is not None
        source = csv_source(path, file.data.facts, header.csv.header_line)
        select, audit = csv_selects(d, source, plan, len(header.names))
        counts = self._audit(file, audit, source)
        table = self.backend.register_table(select, ROW_ID)
        return ScanBag(scan_of(table, plan, counts[-1])), csv_report(plan, counts)

    def _marked_csv(self, file: DataFile, header: Header, plan: Plan, path: str,
                    facts: CsvFacts) -> tuple[Bag, dict[str, object]]:
        """A CSV file with a lone carriage return or bytes that are not
        UTF-8, streamed from its marked copy (`_marked_copy`), its lines and
        cells then read as the loader reads them: the same rows by the same
        path whatever one row holds."""
        assert header.csv is not None
        d = self.backend.dialect
        copy = self._marked_copy(file, path, facts)
        source = csv_source(copy, marked_source(facts), header.csv.header_line)
        marked, bad_text = _marks(facts)
        select, audit = csv_selects(d, source, plan, len(header.names), marked=marked, bad_text=bad_text)
        counts = self._audit(file, audit, source)
        table = self.backend.register_table(select, ROW_ID)
        return ScanBag(scan_of(table, plan, counts[-1])), csv_report(plan, counts)

    def _marked_copy(self, file: DataFile, path: str, facts: CsvFacts) -> str:
        """A copy of the file in which each lone carriage return and each
        byte that is not UTF-8 is marked (`csvscan.without_lone_returns`), made once per run: one row must not
        send a file to the loader, which holds it whole (review s29c). The
        copy is of the bytes hashed (else FZ541) and is removed when the
        engine closes."""
        import tempfile

        if file.sha256 in self._copies:
            return self._copies[file.sha256]
        self._watch(file, path)
        folder = tempfile.mkdtemp(prefix="fuzzpy-csv-")
        copy = os.path.join(folder, "marked.csv")
        self._copies[file.sha256] = copy
        with open(path, "rb") as source, open(copy, "wb") as target:
            digest = without_lone_returns(source, target, *_marks(facts))
        self.check_files()
        if digest != file.sha256:
            raise FuzzError((Diagnostic("FZ541", f"data file `{path}` changed while the run read it: nothing is "
                                        "released", NO_SPAN,
                                        notes=("if a budget was charged for this run, the charge stands",)),))
        return copy

    def _valid_copy(self, file: DataFile, path: str, header: Header, plan: Plan) -> str:
        """A copy of the columns the plan reads of a Parquet file, each text
        cell that is not UTF-8 emptied: the loader reads such a cell as no
        text, fitting no kind (`cells._as_text`), and so does the scan of an
        empty one (`scan._text_cell`): the same rows. Written batch by
        batch (memory of one batch, not of the file), once per run, removed
        when the engine closes; the file must still be the version hashed
        after (`check_files`, else FZ541)."""
        import tempfile

        import pyarrow.parquet as pq

        if file.sha256 in self._copies:
            return self._copies[file.sha256]
        self._watch(file, path)
        names = set(_text_columns(header, plan))
        folder = tempfile.mkdtemp(prefix="fuzzpy-parquet-")
        copy = os.path.join(folder, "valid.parquet")
        self._copies[file.sha256] = copy
        read = sorted({header.names[c.index] for c in plan.columns})  # the scan reads no other column
        reader = pq.ParquetFile(path)
        schema = pa.schema([reader.schema_arrow.field(name) for name in read])
        with pq.ParquetWriter(copy, schema) as writer:
            for batch in reader.iter_batches(batch_size=1 << 16, columns=read):
                writer.write_batch(_emptied(batch, names))
        self.check_files()
        return copy

    def _audit(self, file: DataFile, audit: str, source: str) -> tuple[int, ...]:
        """The audit query's counts, or those remembered for the same bytes
        and the same query (the file's path left out of the key). Counts
        read from a file replaced after its hash are refused (FZ541, before
        the charge), never remembered under the hash: they decide whether
        the scan checks the row rules at all (`all_fit`)."""
        key = audit.replace(source, "<file>")
        counts = self._audits.get((file.sha256, key)) or recall_counts(file.sha256, key)
        if counts is None:
            (row,) = self.backend.rows(audit)
            counts = tuple(int(c or 0) for c in row)
            self.check_files()
            remember_counts(file.sha256, key, counts)
        return counts

    def _parquet(self, file: DataFile, header: Header, plan: Plan, path: str,
                 copy: str | None = None) -> tuple[Bag, dict[str, object]]:
        """The Parquet file scanned by the engine (`copy`: its text made
        valid UTF-8, `_valid_copy`)."""
        d = self.backend.dialect
        self._watch(file, path)
        source, position = self.backend.parquet_source(copy or path)
        _, audit = parquet_select(d, source, position, plan, header.arrow_types, header.names, count_trims=True)
        *counts, trims = self._audit(file, audit, source)  # trims: text cells that trimming changes
        all_fit = not any(counts[1:-1]) and counts[-1] == counts[0]
        select, _ = parquet_select(d, source, position, plan, header.arrow_types, header.names, all_fit,
                                   untrimmed=not trims)
        table = self.backend.register_view(select)
        return ScanBag(scan_of(table, plan, counts[-1])), parquet_report(plan, tuple(counts))

    def _frame(self, opened) -> tuple[Bag, dict[str, object]]:  # type: ignore[no-untyped-def]
        """Data in memory (`fuzzpy.engines.frames`): the compiled scan over
        where the engine holds it, or the loader over its rows."""
        placed, header, plan = opened.placed, opened.header, opened.plan
        if placed.source and _compilable(header, plan):
            d = self.backend.dialect
            _, audit = parquet_select(d, placed.source, placed.position, plan, header.arrow_types, header.names)
            (counts,) = self.backend.rows(audit)
            all_fit = not any(counts[1:-1]) and counts[-1] == counts[0]
            select, _ = parquet_select(d, placed.source, placed.position, plan, header.arrow_types,
                                       header.names, all_fit)
            table = self.backend.register_view(select)
            counted = tuple(int(c or 0) for c in counts)
            return ScanBag(scan_of(table, plan, counted[-1])), parquet_report(plan, counted)
        table = placed.table
        if table is None:  # rows in the engine, in a type the scan does not compile: fetched
            names = ", ".join(self.backend.dialect.ident(n) for n in header.names)
            table = self.backend.arrow(f"SELECT {names} FROM {placed.source} ORDER BY {placed.position}")
            table = pa.table(table.columns, schema=pa.schema(
                [pa.field(n, t) for n, t in zip(header.names, header.arrow_types, strict=True)]))
        bag, report = load(replace(header, table=table), plan)
        return self.from_bag(bag, plan), report

    def from_bag(self, bag: Bag, plan: Plan) -> ScanBag:
        """A loaded bag, handed to the engine as an Arrow table."""
        return ScanBag(scan_of(self.backend.register_arrow(arrow_table(bag, plan)), plan, len(bag)))

    def reader(self, path: str) -> DataFile:
        return streamed_data_file(path)

    def interpreter(self, program, source, warn, checked=None):  # type: ignore[no-untyped-def]
        from fuzzpy.engines.trace import EngineInterpreter

        executor = Executor(self.backend, self.progress)
        executor.on_finish.append(self.check_files)
        return EngineInterpreter(program, source, warn, executor, checked)

    def check_files(self) -> None:
        """A file the engine read must still be the one hashed."""
        for path, seen in self._watched.items():
            try:
                now = _stat(path)
            except OSError:
                now = None
            if now != seen:
                raise FuzzError((Diagnostic(
                    "FZ541", f"data file `{path}` changed while the run read it: nothing is released",
                    NO_SPAN, notes=("if a budget was charged for this run, the charge stands",)),))

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        import shutil

        for copy in self._copies.values():
            shutil.rmtree(os.path.dirname(copy), ignore_errors=True)
        self._copies.clear()


def _marks(facts: CsvFacts) -> tuple[bytes | None, bytes | None]:
    """The marks of `_marked_copy`: of lone carriage returns, of bytes that
    are not UTF-8 (None where the file holds none)."""
    return (facts.spare if facts.lone_carriage_return else None,
            None if facts.utf8 else facts.spare_text)


def _read_whole(file: DataFile) -> DataFile:
    """The file's bytes, checked to be the ones hashed (so the bytes parsed
    are the bytes hashed)."""
    from fuzzpy.data.loader import read_data_file

    whole = read_data_file(file.path)
    if whole.sha256 != file.sha256:
        raise FuzzError((Diagnostic("FZ541", f"data file `{file.path}` changed while the run read it",
                                    NO_SPAN),))
    return whole


def _compilable(header: Header, plan: Plan) -> bool:
    types = header.arrow_types or ()
    return all(compilable(types[c.index], "num" if plan.shape == "vector" else c.kind) for c in plan.columns)


def _strings_are_utf8(file: DataFile, path: str, header: Header, plan: Plan) -> bool:
    """Whether every text cell the plan reads is valid UTF-8. The loader
    drops a row with an invalid one (`runtime.cells`); DuckDB refuses to
    read such a file and Spark reads the bytes as they are, so such a file
    is loaded by the loader instead. One streamed pass over those columns,
    remembered with the file's hash (`filehash`, as the audit's counts are:
    a function of the bytes and of the columns named) when the file read is
    still the version hashed, so a later run of the same bytes reads no
    column for it (issue 24)."""
    names = _text_columns(header, plan)
    if not names:
        return True
    key = UTF8_QUERY + json.dumps(names)
    remembered = recall_counts(file.sha256, key)
    if remembered is not None and len(remembered) == 1 and remembered[0] in (0, 1):
        return remembered[0] == 1
    valid = _read_utf8(path, names)
    seen = file.data.stat if isinstance(file.data, _Unread) else None
    if seen is not None and _stat(path) == seen:  # the bytes read are the bytes hashed
        remember_counts(file.sha256, key, (int(valid),))
    return valid


def _text_columns(header: Header, plan: Plan) -> list[str]:
    """The text columns the plan reads, whose cells DuckDB checks are UTF-8."""
    types = header.arrow_types or ()
    described = [(header.names[c.index], column_type(types[c.index])) for c in plan.columns]
    # a dictionary's values too: DuckDB refused a file whose dictionary held
    # one bad string (FZ505 where the loader released: one row told)
    return sorted({name for name, t in described if t.family in TEXT})


def _emptied(batch: pa.RecordBatch, names: set[str]) -> pa.RecordBatch:
    """`batch`, each cell of the columns `names` that is not UTF-8 emptied."""
    columns = []
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        if name in names:
            column = _emptied_text(column)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _emptied_text(column: pa.Array) -> pa.Array:
    """A text column (or a dictionary of text), each value that is not
    UTF-8 emptied."""
    try:
        column.validate(full=True)
        return column
    except pa.ArrowInvalid:
        pass
    if pa.types.is_dictionary(column.type):
        return pa.DictionaryArray.from_arrays(column.indices, _emptied_text(column.dictionary))
    raw = column.view(pa.large_binary() if pa.types.is_large_string(column.type) else pa.binary())
    return pa.array([_valid_or_empty(cell) for cell in raw.to_pylist()], column.type)


def _valid_or_empty(cell: bytes | None) -> bytes | None:
    if cell is None:
        return None
    try:
        cell.decode("utf-8")
    except UnicodeDecodeError:
        return b""
    return cell


#: The key, in `filehash`'s audit entries, of the UTF-8 validity of a
#: Parquet file's text columns (the names, as JSON, follow).
UTF8_QUERY = "fuzzpy-utf8-valid-1:"


def _read_utf8(path: str, names: list[str]) -> bool:
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches(columns=names, batch_size=1 << 16):
        for column in batch.columns:
            try:
                column.validate(full=True)
            except pa.ArrowInvalid:
                return False
    return True


def parquet_columns(file: DataFile) -> tuple[tuple[str, ...], tuple[ColumnType, ...]]:
    """The names and types of a Parquet file's columns as pyarrow reads its
    schema (`parquet_schema`), remembered by the file's hash and pyarrow's
    version (`filehash`): a later run of the same bytes classifies its
    columns without importing pyarrow (issue 11). Raises what
    `parquet_schema` raises."""
    reader = _parquet_reader()
    if reader is not None:
        remembered = _columns_of(recall_schema(file.sha256, reader))
        if remembered is not None:
            return remembered
    schema = parquet_schema(file.path)
    names, types = tuple(schema.names), tuple(column_type(t) for t in schema.types)
    seen = file.data.stat if isinstance(file.data, _Unread) else None
    if reader is not None and seen is not None and _stat(file.path) == seen:  # the bytes hashed
        remember_schema(file.sha256, reader, seen, [[n, *to_json(t)] for n, t in zip(names, types, strict=True)])
    return names, types


def _columns_of(entry: list[object] | None) -> tuple[tuple[str, ...], tuple[ColumnType, ...]] | None:
    if entry is None or not all(isinstance(c, list) and c and isinstance(c[0], str) for c in entry):
        return None
    types = [from_json(c[1:]) for c in entry]  # type: ignore[index]
    if any(t is None for t in types):
        return None
    return tuple(c[0] for c in entry), tuple(types)  # type: ignore[index,arg-type]


def _parquet_reader() -> str | None:
    """The installed pyarrow's version, found without importing it (nor
    `importlib.metadata`, which takes longer): its generated version file."""
    spec = importlib.util.find_spec("pyarrow")
    if spec is None or spec.origin is None:
        return None
    try:
        return "pyarrow:" + Path(spec.origin).with_name("_generated_version.py").read_text()
    except OSError:
        return None


def parquet_schema(path: str) -> pa.Schema:
    """The file's Arrow schema, as `pyarrow.parquet.read_schema` gives it,
    from pyarrow's own footer reader: importing `pyarrow.parquet` (its
    datasets and file systems) takes 20-40 ms, more than the rest of a short
    run's Python work (issue 11). tests/engines/test_short_path.py checks the
    two agree.
    """
    try:
        from pyarrow._parquet import ParquetReader

        reader = ParquetReader()
        reader.open(path, arrow_extensions_enabled=True)  # read_schema's default
    except (ImportError, TypeError, AttributeError):  # another pyarrow: its public reader
        import pyarrow.parquet as pq

        return pq.read_schema(path)
    try:
        return reader.schema_arrow
    finally:
        reader.close()


def scan_of(table: str, plan: Plan, size: int | None = None) -> Scan:
    kinds = ["num" if plan.shape == "vector" else c.kind for c in plan.columns]
    columns = tuple((column_name(i), kind) for i, kind in enumerate(kinds))
    return Scan(table, columns, plan.shape, plan.fields, ROW_ID, size)


def engine_for(name: str, warn: Warn, progress: Warn | None = None, **options: object):  # type: ignore[no-untyped-def]
    if name == "memory":
        return MemoryEngine()
    if name not in ENGINES:
        raise ValueError(f"unknown engine `{name}`")
    return QueryEngine(name, warn, progress, **options)
