"""The ``Lake``: the tables' root, the engine choice, writes and Spark reads (``jobs.lake`` is the
only package that knows which Delta engine runs).

Two engines write the same Delta tables (docs/architecture.md, Delta):

- ``native``: delta-spark, when Delta's JVM classes load in the session.
- ``embedded``: deltalake (delta-rs) behind Spark: Spark's Parquet writer writes the files, the
  driver commits them with deltalake (:mod:`jobs.lake.embedded`); one commit per write.

Every write is idempotent: ``replace_partitions`` replaces whole partitions in one commit and
``(app_id, app_version)`` is recorded as a Delta application transaction, so a retried write
whose commit already landed is skipped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import enum
import logging
import os
import uuid
from collections.abc import Iterator, Sequence

from delta.tables import DeltaTable as SparkDeltaTable
from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DateType, StructType

from jobs.errors import EngineError
from jobs.lake import embedded
from jobs.lake.embedded_files import WriteSpec
from transforms.frames import local_frame

logger = logging.getLogger(__name__)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CLASSES = ("io.delta.tables.DeltaTable", "org.apache.spark.sql.delta.DeltaLog")
NATIVE_HOWTO = (
    "add the Delta jars: spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.1 where Maven "
    "Central is reachable, or --jars delta-spark_4.2_2.13-4.4.1.jar,delta-storage-4.4.1.jar from a "
    f"local copy, with --conf spark.sql.extensions={DELTA_EXTENSION} --conf "
    "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog"
)


class Engine(enum.StrEnum):
    """The Delta engine behind :class:`Lake`."""

    NATIVE = "native"
    EMBEDDED = "embedded"


def delta_jvm_available(spark: SparkSession) -> bool:
    """Whether delta-spark runs in this session.

    Args:
        spark: The session.

    Returns:
        True when Delta's classes load in the driver JVM and ``spark.sql.extensions`` names
        the Delta extension.
    """
    jvm = spark.sparkContext._jvm
    if jvm is None:
        return False
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    for name in DELTA_CLASSES:
        try:
            jvm.java.lang.Class.forName(name, False, loader)
        except Py4JError:
            return False
    return DELTA_EXTENSION in (spark.conf.get("spark.sql.extensions", "") or "")


def choose_engine(spark: SparkSession, requested: str = "auto") -> Engine:
    """Picks the Delta engine for this run and logs the choice.

    Args:
        spark: The session.
        requested: ``auto`` (native when available, else embedded), ``native`` or ``embedded``.

    Returns:
        The engine.

    Raises:
        EngineError: ``native`` requested without the Delta jars, or an unknown value.
    """
    if requested not in ("auto", *Engine):
        raise EngineError(f"unknown Delta engine {requested!r}: expected auto, native or embedded")
    available = requested != Engine.EMBEDDED and delta_jvm_available(spark)
    if requested == Engine.NATIVE and not available:
        raise EngineError(
            f"Delta engine 'native' requested but Delta is not loaded: {NATIVE_HOWTO}"
        )
    engine = Engine.NATIVE if available else Engine.EMBEDDED
    logger.info("Delta engine: %s (requested %s)", engine, requested)
    return engine


@dataclasses.dataclass(frozen=True)
class WriteResult:
    """Outcome of :meth:`Lake.write`.

    Attributes:
        table: Table name.
        path: Table location.
        engine: Engine that wrote it.
        version: Table version after the write (None if the table does not exist).
        skipped: True when ``(app_id, app_version)`` was already committed: nothing written.
        rows_written: Rows added by the commit (0 when skipped), None if unknown.
    """

    table: str
    path: str
    engine: Engine
    version: int | None
    skipped: bool
    rows_written: int | None


class Lake:
    """Reads and writes the project's Delta tables under one root with one engine.

    Args:
        spark: The session.
        root: Folder of the tables: a local path or a URI.
        engine: Engine from :func:`choose_engine`.
    """

    def __init__(self, spark: SparkSession, root: str, engine: Engine) -> None:
        self._spark = spark
        self._root = root if "://" in root else os.path.abspath(root)
        self._engine = engine

    @property
    def engine(self) -> Engine:
        """The engine that reads and writes the tables."""
        return self._engine

    @property
    def spark(self) -> SparkSession:
        """The session the lake reads and writes with."""
        return self._spark

    def table_path(self, table: str) -> str:
        """Args: table: table name. Returns: its location, ``root/table``."""
        return f"{self._root.rstrip('/')}/{table}"

    def exists(self, table: str) -> bool:
        """Args: table: table name. Returns: whether a Delta table is at its location."""
        if self._engine is Engine.NATIVE:
            return bool(SparkDeltaTable.isDeltaTable(self._spark, self.table_path(table)))
        return embedded.exists(self.table_path(table))

    def write(
        self,
        df: DataFrame,
        table: str,
        *,
        schema: StructType,
        partition_by: Sequence[str],
        replace_partitions: Sequence[datetime.date | None] | None,
        app_id: str,
        app_version: int = 1,
        replace_all: bool = False,
    ) -> WriteResult:
        """Writes ``df`` to ``table`` in one commit, creating the table on first write.

        Args:
            df: Rows to write, with the columns of ``schema``.
            table: Table name.
            schema: The table's declared schema (``schemas/``): the table is created with it,
                nullability included, whatever nullability Spark infers for ``df``.
            partition_by: Partition columns: none or one ``DateType`` column.
            replace_partitions: None appends. Otherwise the files of these partitions (None =
                the null partition) are removed in the same commit that adds the new rows
                (replaceWhere semantics); every row must be in one of them.
            app_id: Application transaction id (stable across retries of the same write).
            app_version: Application transaction version.
            replace_all: Replace the whole table in the commit (``replace_partitions`` must
                then be None): for small gold tables merged in Spark on a key.

        Returns:
            The outcome; ``skipped`` when ``app_id`` already has ``app_version`` or later.

        Raises:
            EngineError: Unsupported partitioning, schema mismatch, or the write failed (the
                table is then unchanged).
        """
        if replace_all and replace_partitions is not None:
            raise EngineError("replace_all and replace_partitions exclude each other")
        column = _partition_column(schema, partition_by, replace_partitions)
        replace = None if replace_partitions is None else tuple(map(_iso, replace_partitions))
        spec = WriteSpec(
            path=self.table_path(table),
            partition_by=() if column is None else (column,),
            replace=replace,
            app_id=app_id,
            app_version=app_version,
            write_id=uuid.uuid4().hex,
            replace_all=replace_all,
        )
        write = _native_write if self._engine is Engine.NATIVE else embedded.write
        try:
            outcome = write(self._spark, df, spec, schema)
        except PySparkException as err:
            raise EngineError(f"write to Delta table {spec.path} failed: {_reason(err)}") from err
        result = WriteResult(table, spec.path, self._engine, *outcome)
        rows = "?" if result.rows_written is None else f"{result.rows_written:,}"
        outcome_text = (
            "already committed by this run, skipped"
            if result.skipped
            else f"version {result.version}, {rows} rows"
        )
        logger.info("Delta write %s: %s (%s engine)", table, outcome_text, self._engine.value)
        return result

    @contextlib.contextmanager
    def writes(self) -> Iterator[None]:
        """Within the block, the session settings this engine's writes need (the embedded
        engine's Parquet settings, ``jobs.lake.embedded.PARQUET_CONF``), set once.

        ``write`` sets them itself for its own span and then restores the session's values:
        when several threads write at once (``jobs.concurrency``), one write's restoring
        would change them under another. Inside this block there is nothing different to
        restore. The session's own values come back at the end.
        """
        if self._engine is Engine.NATIVE:
            yield
            return
        with embedded.session_settings(self._spark):
            yield

    def size_bytes(self, tables: Sequence[str]) -> int:
        """On-disk bytes of the current files of ``tables`` (a missing table counts 0)."""
        total = 0
        for table in tables:
            if not self.exists(table):
                continue
            path = self.table_path(table)
            if self._engine is Engine.EMBEDDED:
                total += embedded.size_bytes(path)
            else:
                detail = self._spark.sql(f"DESCRIBE DETAIL delta.`{path}`")
                total += int(detail.select("sizeInBytes").first()[0] or 0)  # type: ignore[index]
        return total

    def read(self, table: str, schema: StructType) -> DataFrame:
        """Reads the current snapshot of ``table``.

        Args:
            table: Table name.
            schema: Columns to return, in this order, with these types.

        Returns:
            The rows, or an empty DataFrame of ``schema`` when the table does not exist.
        """
        path = self.table_path(table)
        if self._engine is Engine.EMBEDDED:
            return embedded.read(self._spark, path, schema)
        if not self.exists(table):
            return local_frame(self._spark, [], schema)
        return self._spark.read.format("delta").load(path).select(*schema.fieldNames())


def local_size_bytes(root: str, tables: Sequence[str]) -> int | None:
    """On-disk bytes of every file under ``root/table`` for each of ``tables``, read from the
    file system without Spark (a JVM's start-up options depend on it: ``jobs.jvm_startup``).

    Files of older table versions count too: an upper bound. Returns None when ``root`` is not
    a local folder path (``s3://``, ``abfss://``...): unknown. A missing table counts 0.
    """
    if "://" in root and not root.startswith("file://"):
        return None
    base = root.removeprefix("file://")
    total = 0
    for table in tables:
        for folder, _, files in os.walk(os.path.join(base, table)):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.path.getsize(os.path.join(folder, name))
    return total


def _reason(error: Exception) -> str:
    """The line of a Spark error that says what went wrong (a Python worker's is the last)."""
    lines = [line for line in str(error).splitlines() if line.strip()] or [repr(error)]
    if lines[0].rstrip().endswith(":"):
        return [line for line in lines if not line[0].isspace()][-1]
    return lines[0]


def _iso(day: datetime.date | None) -> str | None:
    return None if day is None else day.isoformat()


def _partition_column(
    schema: StructType,
    partition_by: Sequence[str],
    replace_partitions: Sequence[datetime.date | None] | None,
) -> str | None:
    """Checks the partitioning. Returns: the partition column or None. Raises: EngineError."""
    if len(partition_by) > 1:
        raise EngineError(f"partition_by {list(partition_by)}: at most one column is supported")
    if not partition_by:
        if replace_partitions is not None:
            raise EngineError("replace_partitions needs a partition column (partition_by)")
        return None
    column = partition_by[0]
    if column not in schema.fieldNames() or not isinstance(schema[column].dataType, DateType):
        raise EngineError(f"partition column {column!r} must be a DateType column of {schema}")
    return column


def _native_write(
    spark: SparkSession, df: DataFrame, spec: WriteSpec, schema: StructType
) -> tuple[int | None, bool, int | None]:
    """delta-spark write: replaceWhere, txnAppId/txnVersion, commit found by its userMetadata.

    The table is first created (if absent) with the declared ``schema``, so Delta enforces its
    NOT NULL columns.

    Returns:
        (table version after the write, skipped, rows written or None if unknown).
    """
    builder = SparkDeltaTable.createIfNotExists(spark).location(spec.path).addColumns(schema)
    builder.partitionedBy(*spec.partition_by).execute()
    df = df.select(*[df[f.name].cast(f.dataType).alias(f.name) for f in schema.fields])
    writer = df.write.format("delta").option("txnAppId", spec.app_id)
    writer = writer.option("txnVersion", spec.app_version).option("userMetadata", spec.write_id)
    writer = writer.partitionBy(*spec.partition_by)
    if spec.replace_all:
        writer = writer.mode("overwrite")
    elif spec.replace is None:
        writer = writer.mode("append")
    else:
        col = f"`{spec.partition_by[0]}`"
        tests = [f"{col} IS NULL" if v is None else f"{col} = DATE'{v}'" for v in spec.replace]
        writer = writer.mode("overwrite").option("replaceWhere", " OR ".join(tests) or "false")
    writer.save(spec.path)
    history = SparkDeltaTable.forPath(spark, spec.path).history(20)
    mine = history.where(history.userMetadata == spec.write_id).collect()
    if not mine:  # Delta skipped the write: the app transaction was already there
        return max(int(row["version"]) for row in history.collect()), True, 0
    rows = (mine[0]["operationMetrics"] or {}).get("numOutputRows")
    return int(mine[0]["version"]), False, None if rows is None else int(rows)
