"""Spark (PySpark) for data past one machine: `local[*]` in the tests, a
cluster in production (`FUZZPY_SPARK_MASTER`, or the active session).

The session is the active one if the caller started one (a notebook, a
cluster job), else one started here once per process and kept: Spark's
start-up takes seconds."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from collections.abc import Callable, Iterator

import pyarrow as pa

from fuzzpy.engines.scan import ROW_ID, pattern_obstacle
from fuzzpy.engines.sql import DIALECTS, SIGMOID_TABLE

_SESSION = None


def session():  # type: ignore[no-untyped-def]
    """The active Spark session, or a local one started once."""
    global _SESSION
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if _SESSION is None:
        builder = (
            SparkSession.builder.master(os.environ.get("FUZZPY_SPARK_MASTER", "local[*]"))
            .appName("fuzzpy")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.driver.memory", os.environ.get("FUZZPY_SPARK_DRIVER_MEMORY", "2g"))
        )
        _SESSION = _keeping_signal_handlers(builder.getOrCreate)
        # a failed task's log quotes the cell it failed on (a cast of a file
        # replaced during the run): fuzzpy reports the failure itself, with no
        # engine text (as on DuckDB, a20 F2); FUZZPY_DEBUG=1 keeps Spark's errors
        _SESSION.sparkContext.setLogLevel("ERROR" if os.environ.get("FUZZPY_DEBUG") else "OFF")
    return _SESSION


def _keeping_signal_handlers(start):  # type: ignore[no-untyped-def]
    """Start Spark without letting it replace fuzzpy's signal handlers
    (`fuzzpy.support.interrupts`): PySpark installs its own for SIGINT, which would
    turn Ctrl-C into a plain `KeyboardInterrupt`. Outside a fuzzpy command
    (the API) PySpark's handler is left as PySpark sets it."""
    from fuzzpy.support.interrupts import handling

    if not handling():
        return start()
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        return start()
    finally:
        for signum, handler in before.items():
            if handler is not None and signal.getsignal(signum) is not handler:
                signal.signal(signum, handler)


class SparkBackend:
    name = "spark"
    dialect = DIALECTS["spark"]

    def __init__(self, progress: Callable[[str], None] | None = None) -> None:
        self.spark = session()
        self._sigmoid = False  # the sigmoid view, made (once per session) before the first query reading it
        self._names = itertools.count()
        self._views: list[str] = []
        self.progress = progress
        #: raises FZ541 if a data file a query reads changed since it was hashed (set by the engine)
        self.check_sources: Callable[[], None] = lambda: None

    def fresh_name(self) -> str:
        name = f"_fz_scan_{os.getpid()}_{id(self)}_{next(self._names)}"
        self._views.append(name)
        return name

    def register_arrow(self, table: pa.Table) -> str:
        name = self.fresh_name()
        try:
            frame = self.spark.createDataFrame(table)
        except (TypeError, ValueError):  # a PySpark before 4.0 takes pandas
            frame = self.spark.createDataFrame(table.to_pandas(), schema=_spark_schema(table.schema))
        frame.createOrReplaceTempView(name)
        return name

    def register_dataframe(self, frame: object) -> str:
        name = self.fresh_name()
        frame.createOrReplaceTempView(name)  # type: ignore[attr-defined]
        return name

    def register_view(self, select: str) -> str:
        """The rows of `select`, as a source a query's FROM names: the
        subquery itself. Spark analyses a temporary view's text again at
        each use anyway, and creating then dropping one costs a few hundred
        milliseconds of driver round trips (the view's analysis, the cache
        checks of `dropTempView`) in a run whose query takes one second."""
        return f"({select})"

    def path_obstacle(self, path: str) -> str | None:
        """Why this file (an absolute path) is not read by Spark itself:
        Hadoop reads a pattern in it, takes a `:` for a URI's scheme, and
        skips a file whose name starts with `_` or `.` (a query on it
        fails: UNABLE_TO_INFER_SCHEMA)."""
        name = os.path.basename(path)
        if ":" in path or name.startswith(("_", ".")):
            return "Spark does not read a file whose path has a `:` or whose name starts with `_` or `.`"
        return pattern_obstacle(path, "Spark")

    def parquet_source(self, path: str) -> tuple[str, str]:
        quoted = path.replace("`", "``")
        return f"parquet.`{quoted}`", "_metadata.row_index"

    def _with_sigmoid(self, sql: str) -> str:
        if not self._sigmoid and SIGMOID_TABLE in sql:
            if not self.spark.catalog.tableExists(SIGMOID_TABLE):
                self.spark.sql(f"CREATE TEMPORARY VIEW {SIGMOID_TABLE} AS {self.dialect.sigmoid_table_sql()}")
            self._sigmoid = True
        return sql

    def rows(self, sql: str, meanwhile: Callable[[], object] | None = None) -> list[tuple]:
        """The query's rows. ``meanwhile`` (see `DuckDBBackend.rows`) is
        preparation its caller does again when needed: not done here."""
        sql = _unused_row_index_dropped(self._with_sigmoid(sql))
        return self._interruptible(lambda: [tuple(row) for row in self.spark.sql(sql).collect()])

    def arrow(self, sql: str) -> pa.Table:
        sql = self._with_sigmoid(sql)

        def fetch() -> pa.Table:
            frame = self.spark.sql(sql)
            if hasattr(frame, "toArrow"):
                return frame.toArrow()
            return pa.Table.from_pandas(frame.toPandas(), preserve_index=False)

        return self._interruptible(fetch)

    def _interruptible(self, work: Callable[[], object]):  # type: ignore[no-untyped-def]
        """A query a signal may stop (`interrupts.foreign`): its jobs are
        cancelled, as PySpark's own SIGINT handler cancels them. A query
        that fails first checks the run's files: Spark lists a file and
        reads its footer again for each query, so one replaced after its
        hash (another schema: a cast of one of its cells fails, or a column
        cannot be converted; or deleted: PATH_NOT_FOUND) is FZ541, not
        Spark's error (a22 F2)."""
        from fuzzpy.support.interrupts import Interrupted, foreign

        try:
            with foreign(), _quiet_query_loggers():
                return work()
        except Interrupted:
            with contextlib.suppress(Exception):
                self.spark.sparkContext.cancelAllJobs()
            raise
        except Exception:
            self.check_sources()
            raise

    def close(self) -> None:
        for name in self._views:
            self.spark.catalog.dropTempView(name)
        self._views = []


#: PySpark logs a failed query's error (its text may quote a cell) to stderr
#: through these loggers before raising it (`pyspark.errors` `_log_exception`)
_QUERY_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


@contextlib.contextmanager
def _quiet_query_loggers() -> Iterator[None]:
    """PySpark's loggers of a failed query's error silenced while fuzzpy's
    own query runs: fuzzpy reports the failure itself."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # a PySpark before 4.0 logs no query error
        loggers = []
    else:  # made as PySpark makes them (with their handler), if not yet made
        loggers = [PySparkLogger.getLogger(name) for name in _QUERY_LOGGERS]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = not os.environ.get("FUZZPY_DEBUG")
    try:
        yield
    finally:
        for logger, disabled in zip(loggers, before, strict=True):
            logger.disabled = disabled


_ROW_INDEX = f", _metadata.row_index AS {DIALECTS['spark'].ident(ROW_ID)}"


def _unused_row_index_dropped(sql: str) -> str:
    """`sql` without the scan's row position where nothing else reads it:
    Spark computes `_metadata.row_index` for every row even when the query
    never reads it (a filtered count at 10M rows: 0.30 s against 0.19 s).
    The position only keys `subsample`'s hash; the rows are the same."""
    if sql.count(_ROW_INDEX) == 1 and sql.count(DIALECTS["spark"].ident(ROW_ID)) == 1:
        return sql.replace(_ROW_INDEX, "")
    return sql


def _spark_schema(schema: pa.Schema):  # type: ignore[no-untyped-def]
    from pyspark.sql.types import (
        BooleanType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    types = {pa.int64(): LongType(), pa.float64(): DoubleType(), pa.bool_(): BooleanType(), pa.string(): StringType()}
    return StructType([StructField(f.name, types[f.type], True) for f in schema])
