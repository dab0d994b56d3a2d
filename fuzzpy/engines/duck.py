"""DuckDB, the embedded default engine for files: streams Parquet larger
than memory and uses every core."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable

from fuzzpy.engines.scan import pattern_obstacle
from fuzzpy.engines.sql import DIALECTS, SIGMOID_TABLE
from fuzzpy.language.diagnostics import Diagnostic, FuzzError
from fuzzpy.language.source import NO_SPAN
from fuzzpy.runtime.sigmoid import _table as sigmoid_nodes
from fuzzpy.support.lazy import lazy

pa = lazy("pyarrow")  # a DuckDB run on a Parquet file never loads it (issue 11)


class DuckDBBackend:
    name = "duckdb"
    dialect = DIALECTS["duckdb"]

    def __init__(self, memory_limit: str | None = None, threads: int | None = None,
                 progress: Callable[[str], None] | None = None, connection: object = None) -> None:
        """`connection`: the caller's, where the data lives (its settings are
        restored and what this backend creates in it is dropped by `close`);
        None: a connection of our own."""
        import duckdb

        self.own = connection is None
        self.con = duckdb.connect() if connection is None else connection
        self.temporary: list[tuple[str, str]] = []  # (VIEW | TABLE, name) made in a caller's connection
        self._restore: list[str] = []
        wanted = (("enable_progress_bar", "false"),
                  # DuckDB folds comparisons and `isnan` from a Parquet file's min/max
                  # statistics, which pyarrow writes without NaN: `isnan(x)` of a NaN
                  # cell then reads false. The row rules and the per-row semantics
                  # need IEEE answers for every cell (tests/engines/test_rules.py).
                  ("disabled_optimizers", "'statistics_propagation,common_subexpressions'"))
        # read, then set, in one statement each: each statement costs a short run its parsing and binding
        current = self.con.execute("SELECT " + ", ".join(f"current_setting('{s}')" for s, _ in wanted)).fetchone()
        changes = []
        for (setting, value), before in zip(wanted, current, strict=True):
            if _setting_literal(before) == value:
                continue  # in Jupyter the progress bar is off, and setting it at all needs ipywidgets
            if not self.own:
                self._restore.append(f"SET {setting} = {_setting_literal(before)}")
            changes.append(f"SET {setting} = {value}")
        if memory_limit and self.own:
            changes.append(f"SET memory_limit = '{memory_limit}'")
        if threads and self.own:
            changes.append(f"SET threads = {int(threads)}")
        if changes:
            self.con.execute("; ".join(changes))
        self._sigmoid = False  # the sigmoid table, made by the first query that reads it
        self._names = itertools.count()
        self._tables: list[object] = []  # Arrow tables registered: kept alive
        self.progress = progress
        #: raises FZ541 if a data file a query reads changed since it was hashed (set by the engine)
        self.check_sources: Callable[[], None] = lambda: None

    def fresh_name(self) -> str:
        return f"_fz_scan{id(self)}_{next(self._names)}"

    def register_arrow(self, table: pa.Table) -> str:
        name = self.fresh_name()
        self._tables.append(table)
        self.con.register(name, table)
        self.temporary.append(("ARROW", name))
        return name

    def _with_sigmoid(self, sql: str) -> str:
        """`sql`, once the sigmoid table it may read exists. Made on first
        use (most queries never read it), from the table's values bound as
        one parameter: parsing them as a literal list takes 25 times longer."""
        if not self._sigmoid and SIGMOID_TABLE in sql:
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {SIGMOID_TABLE} AS SELECT $1::BIGINT[] AS _fz_t",
                             [list(sigmoid_nodes())]).fetchall()
            self._sigmoid = True
        return sql

    def register_view(self, select: str) -> str:
        select = self._with_sigmoid(select)
        name = self.fresh_name()
        self.con.execute(f"CREATE TEMP VIEW {name} AS {select}").fetchall()
        self.temporary.append(("VIEW", name))
        return name

    def register_table(self, select: str, row_id: str) -> str:
        """The rows of `select`, in its order, written to a table (DuckDB's
        buffer manager spills it past the memory limit); each row's id is
        its position in the table."""
        select = self._with_sigmoid(select)
        name = self.fresh_name()
        self._watch(lambda: self.con.execute(f"CREATE TEMP TABLE {name}_rows AS {select}").fetchall())
        self.temporary.append(("TABLE", f"{name}_rows"))
        self.con.execute(f"CREATE TEMP VIEW {name} AS SELECT *, rowid AS {row_id} FROM {name}_rows").fetchall()
        self.temporary.append(("VIEW", name))
        return name

    def path_obstacle(self, path: str) -> str | None:
        """Why this file (an absolute path) is not read by DuckDB itself."""
        return pattern_obstacle(path, "DuckDB")

    def parquet_source(self, path: str) -> tuple[str, str]:
        """The FROM text reading a Parquet file, and its row position column."""
        quoted = path.replace("'", "''")
        # never a column from a folder named `v=0.5` (hive partitioning; review a26 F3)
        return f"read_parquet('{quoted}', file_row_number = true, hive_partitioning = false)", "file_row_number"

    def rows(self, sql: str, meanwhile: Callable[[], object] | None = None) -> list[tuple]:
        """The query's rows. ``meanwhile``: work this thread does while the
        query runs (an import its caller needs next: `Executor._run_counts`)."""
        sql = self._with_sigmoid(sql)
        return self._watch(lambda: self.con.execute(sql).fetchall(), meanwhile)

    def arrow(self, sql: str) -> pa.Table:
        sql = self._with_sigmoid(sql)

        def fetch() -> pa.Table:
            relation = self.con.sql(sql)
            table = getattr(relation, "to_arrow_table", None) or relation.arrow  # DuckDB 2 / 1
            return table()

        return self._watch(fetch)

    def _watch(self, work: Callable[[], object], meanwhile: Callable[[], object] | None = None) -> object:
        """Run a query, reporting its progress (the share of rows scanned).
        Data DuckDB cannot decode (a damaged Parquet page, a compressed block
        that fails) is refused as the loader refuses it (FZ505), not as an
        internal error; the message carries none of DuckDB's text, which may
        quote a cell (a20 F2)."""
        import duckdb

        try:
            return interruptible(self.con, work, self._report if self.progress is not None else None, meanwhile)
        except duckdb.Error as exc:
            # DuckDB opens a file again for each query: one replaced after it was
            # hashed (another schema) fails to bind; that is FZ541, not an
            # internal error (a22 F2)
            self.check_sources()
            if isinstance(exc, (duckdb.IOException, duckdb.InvalidInputException)):
                raise undecodable_data_error() from None
            raise

    def _report(self) -> None:
        try:
            share = self.con.query_progress()
        except Exception:  # noqa: BLE001 -- progress is best effort
            return
        if share >= 0 and self.progress is not None:
            self.progress(f"duckdb: {share:.0f}% of the rows scanned")

    def close(self) -> None:
        if self.own:
            self.con.close()
            return
        for kind, name in reversed(self.temporary):  # a caller's connection: left as it was
            if kind == "ARROW":
                self.con.unregister(name)
            else:
                self.con.execute(f"DROP {kind} IF EXISTS {name}")
        if self._sigmoid:
            self.con.execute(f"DROP TABLE IF EXISTS {SIGMOID_TABLE}")
        for statement in self._restore:
            self.con.execute(statement)
        self.temporary = []


def _setting_literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "'" + str(value).replace("'", "''") + "'"


def interruptible(con: object, work: Callable[[], object], report: Callable[[], None] | None = None,
                  meanwhile: Callable[[], object] | None = None) -> object:
    """`work` (DuckDB calls on `con`) on a thread of its own, while this one
    waits: a signal (`fuzzpy.support.interrupts`) is then raised here, where it
    arrives, and the query is stopped by `con.interrupt()`. Called on the
    main thread, DuckDB reads the signals itself: it turns the handler's
    `Interrupted` into `RuntimeError: Query interrupted`, and may consume a
    SIGINT without stopping at all (a11 F6). ``report`` is called every
    second while the query runs (progress). ``meanwhile`` is done here
    while the query runs (DuckDB releases the GIL): preparation only, so
    its failure is ignored -- what needs it does it again."""
    if threading.current_thread() is not threading.main_thread():
        return work()
    outcome: dict[str, object] = {}
    done = threading.Event()  # not `Thread.join`: a join a signal interrupts can leave the thread marked ended

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 -- handed to the waiting thread
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="fuzzpy-duckdb", daemon=True).start()
    try:
        if meanwhile is not None:
            with contextlib.suppress(Exception):
                meanwhile()
        while not done.wait(1.0):
            if report is not None:
                report()
    except BaseException:  # the signal's `Interrupted`: stop the query, then go on stopping
        with contextlib.suppress(Exception):
            con.interrupt()  # type: ignore[attr-defined]
        done.wait(30.0)
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]


def undecodable_data_error() -> FuzzError:
    return FuzzError((Diagnostic(
        "FZ505", "DuckDB could not read the data: a file is damaged, or in a form it cannot decode", NO_SPAN,
        hint="check the file with `fuzzpy dataset check FILE`, or run with --engine memory"),))
