"""Embedded Delta engine: Spark's Parquet writer, then one deltalake transaction.

:func:`write` has Spark write the rows as Parquet into a staging folder of the table
(``_kafka_audit_staging/<write id>``), moves the files into the table folder with their Delta
add actions (:func:`jobs.lake.embedded_files.staged_adds`: statistics from the Parquet footers) and
records them in ONE Delta commit on the driver (:func:`commit_files`), together with the remove
actions of the replaced partitions and the application transaction ``(app_id, app_version)``.
A failed Spark job means no commit and no file in the table folder; a failed commit deletes the
moved files; a killed driver can leave orphan files, which VACUUM removes.

Spark's own writer replaced a Python data source writer (tasks that wrote Parquet with pyarrow
from Arrow batches): on 278,613 ``request_events`` rows 2.1 s instead of 7.5 s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import DeltaTable, Schema
from deltalake.transaction import (
    AddAction,
    CommitProperties,
    RemoveAction,
    Transaction,
    create_table_with_add_actions,
)
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from jobs.errors import EngineError
from jobs.lake.embedded_files import WriteSpec, arrow_schema, delete_files, staged_adds
from jobs.lake.settings import runtime_settings
from transforms.frames import local_frame

WRITE_ID_KEY = "kafkaAuditWriteId"  # commit info keys
ROWS_KEY = "kafkaAuditRowsWritten"
STAGING_DIR = "_kafka_audit_staging"
#: Parquet as Delta readers expect it: timestamps as INT64 microseconds (Spark's default is
#: the legacy INT96, which carries no statistics).
PARQUET_CONF = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}


def _removes(table: DeltaTable, spec: WriteSpec) -> list[RemoveAction]:
    """Remove actions of every current file in the replaced partitions (all with
    ``replace_all``)."""
    column = spec.partition_by[0] if spec.partition_by else None
    files = pa.table(table.get_add_actions(flatten=True))
    now_ms = int(time.time() * 1000)
    values = files.column(f"partition.{column}").to_pylist() if column else [None] * files.num_rows
    removes = []
    for path, size, value in zip(
        files.column("path").to_pylist(),
        files.column("size_bytes").to_pylist(),
        values,
        strict=True,
    ):
        text = None if value is None else value.isoformat()
        if spec.replace_all or text in (spec.replace or ()):
            partition = {column: text} if column else {}
            removes.append(RemoveAction(path, True, now_ms, size, partition))
    return removes


def commit_files(spec: WriteSpec, schema: StructType, adds: list[dict[str, Any]]) -> None:
    """Commits written files as one Delta transaction tagged with the application transaction.

    Creates the table when it does not exist. When the table already records ``app_version``
    or later for ``app_id``, commits nothing and deletes the files: a retried commit is a no-op.

    Args:
        spec: The write.
        schema: Spark schema of the whole table (partition column included).
        adds: Add actions (``AddAction`` keyword arguments) of the tasks.
    """
    rows = sum(json.loads(add["stats"])["numRecords"] for add in adds)
    info: dict[str, Any] = {WRITE_ID_KEY: spec.write_id, ROWS_KEY: rows}
    if spec.replace_all:
        info |= {"isBlindAppend": False, "operationParameters": {"predicate": "true"}}
    elif spec.replace is not None:  # shown by DESCRIBE HISTORY; the commit removes files
        column = spec.partition_by[0]
        tests = [f"{column} IS NULL" if v is None else f"{column} = '{v}'" for v in spec.replace]
        info |= {
            "isBlindAppend": False,
            "operationParameters": {"predicate": " OR ".join(tests) or "false"},
        }
    properties = CommitProperties(
        custom_metadata=info,
        app_transactions=[Transaction(spec.app_id, spec.app_version)],
    )
    actions = [AddAction(**add) for add in adds]
    partition_by = list(spec.partition_by)
    if not DeltaTable.is_deltatable(spec.path):
        create_table_with_add_actions(
            spec.path,
            Schema.from_arrow(arrow_schema(schema)),
            actions,
            partition_by=partition_by,
            commit_properties=properties,
        )
        return
    table = DeltaTable(spec.path)
    done = table.transaction_version(spec.app_id)
    if done is not None and done >= spec.app_version:
        delete_files(spec, adds)
        return
    removes = _removes(table, spec) if spec.replace is not None or spec.replace_all else []
    table.create_write_transaction(
        [*actions, *removes],
        mode="append",
        schema=table.schema(),
        partition_by=partition_by,
        commit_properties=properties,
    )


@contextmanager
def session_settings(spark: SparkSession) -> Iterator[None]:
    """``PARQUET_CONF`` for the span of the block (the session's values put back after)."""
    with runtime_settings(spark, PARQUET_CONF):
        yield


def _guarded(df: DataFrame, spec: WriteSpec, schema: StructType) -> DataFrame:
    """``df`` cast to ``schema``, failing the write on a null in a NOT NULL column or a row
    outside the replaced partitions (``raise_error``: the job fails, nothing is committed).
    A column of the field's type already (and no metadata of its own) is not cast."""
    given = {f.name: f for f in df.schema.fields}
    columns: list[Column] = []
    for field in schema.fields:
        source = given.get(field.name)
        value = F.col(field.name)
        if source is None or source.dataType != field.dataType or source.metadata:
            value = value.cast(field.dataType)
        if not field.nullable:
            refusal = f"column {field.name} is NOT NULL in the table but a row has null"
            value = F.when(value.isNull(), F.raise_error(F.lit(refusal))).otherwise(value)
        columns.append(value.alias(field.name))
    guarded = df.select(*columns)
    if spec.replace is None:
        return guarded
    name = spec.partition_by[0]
    column = F.col(name)
    known = [F.lit(day).cast("date") for day in spec.replace if day is not None]
    inside = column.isin(*known) if known else F.lit(False)
    if None in spec.replace:
        inside = inside | column.isNull()
    message = F.concat(
        F.lit(f"row with {name}="),
        F.coalesce(column.cast("string"), F.lit("None")),
        F.lit(f" is outside the replaced partitions {list(spec.replace)} of {spec.path}"),
    )
    return guarded.withColumn(
        name, F.when(F.coalesce(inside, F.lit(False)), column).otherwise(F.raise_error(message))
    )


def write_files(
    spark: SparkSession, df: DataFrame, spec: WriteSpec, schema: StructType
) -> list[dict[str, Any]]:
    """Writes ``df`` as Parquet files into the table folder, not committed.

    Args:
        spark: The session.
        df: The rows; cast to ``schema``'s column types, in its order.
        spec: The write.
        schema: The table's declared schema.

    Returns:
        The add actions of the files (``AddAction`` keyword arguments) for :func:`commit_files`.

    Raises:
        PySparkException: the Spark job failed (a null in a NOT NULL column, a row outside the
            replaced partitions, a failing row): no file is left in the table folder.
    """
    staging = f"{spec.path.rstrip('/')}/{STAGING_DIR}/{spec.write_id}"
    try:
        with session_settings(spark):
            writer = _guarded(df, spec, schema).write.mode("errorifexists")
            writer.partitionBy(*spec.partition_by).parquet(staging)
        return staged_adds(spec, schema, staging)
    finally:
        _remove_staging(staging)


def _remove_staging(staging: str) -> None:
    """Deletes a write's staging folder, and the staging root when no other write uses it."""
    fs, folder = pafs.FileSystem.from_uri(staging)
    if fs.get_file_info(folder).type != pafs.FileType.NotFound:
        fs.delete_dir(folder)
    parent = folder.rsplit("/", 1)[0]
    empty = not fs.get_file_info(pafs.FileSelector(parent, allow_not_found=True))
    if empty and fs.get_file_info(parent).type == pafs.FileType.Directory:
        fs.delete_dir(parent)


def write(
    spark: SparkSession, df: DataFrame, spec: WriteSpec, schema: StructType
) -> tuple[int | None, bool, int]:
    """Writes ``df`` as one commit of the embedded engine.

    Args:
        spark: The session.
        df: The rows; cast to ``schema``'s column types, in its order.
        spec: The write.
        schema: The table's declared schema (nullability included): the table is created with
            it and must still have it; a null in one of its non-null columns fails the write.

    Returns:
        (table version after the write, skipped, rows written).

    Raises:
        EngineError: The table schema or partitioning differs from the DataFrame's, or the
            commit cannot be found afterwards.
        PySparkException: the Spark job failed (nothing committed).
    """
    before = _check_table(spec, schema)
    if before is not None and before[1]:
        return before[0], True, 0
    adds = write_files(spark, df, spec, schema)
    try:
        commit_files(spec, schema, adds)
    except BaseException:
        delete_files(spec, adds)
        raise
    table = DeltaTable(spec.path)
    version = table.version()
    for commit in table.history(version - (-1 if before is None else before[0])):
        if commit.get(WRITE_ID_KEY) == spec.write_id:
            return int(commit["version"]), False, int(commit.get(ROWS_KEY, 0))
    done = table.transaction_version(spec.app_id)
    if done is not None and done >= spec.app_version:
        return version, True, 0
    raise EngineError(f"commit of write {spec.write_id} to {spec.path} not found in its history")


def _check_table(spec: WriteSpec, schema: StructType) -> tuple[int, bool] | None:
    """Returns: None without table, else (version, whether app_id already has app_version)."""
    if not DeltaTable.is_deltatable(spec.path):
        return None
    table = DeltaTable(spec.path)
    current = pa.schema(table.schema().to_arrow())
    if sorted(current.names) != sorted(schema.fieldNames()):
        raise EngineError(
            f"columns {schema.fieldNames()} differ from those of {spec.path}: {current}"
        )
    for field in arrow_schema(schema):
        known = current.field(field.name) if field.name in current.names else None
        if known is None or known.type != field.type or field.nullable != known.nullable:
            raise EngineError(
                f"column {field} differs from the table's {known} at {spec.path}: the table "
                "was created with another schema version; rebuild it (delete the folder) or "
                "migrate it"
            )
    partitions = table.metadata().partition_columns
    if list(partitions) != list(spec.partition_by):
        raise EngineError(f"{spec.path} is partitioned by {partitions}, not {spec.partition_by}")
    done = table.transaction_version(spec.app_id)
    return table.version(), done is not None and done >= spec.app_version


def exists(path: str) -> bool:
    """Args: path: table location. Returns: whether a Delta table is there."""
    return bool(DeltaTable.is_deltatable(path))


def size_bytes(path: str) -> int:
    """Args: path: table location. Returns: on-disk bytes of its current files."""
    files = pa.table(DeltaTable(path).get_add_actions(flatten=True))
    return int(sum(size or 0 for size in files.column("size_bytes").to_pylist()))


def read(spark: SparkSession, path: str, schema: StructType) -> DataFrame:
    """Reads the current snapshot of the table at ``path`` with ``schema``.

    Args:
        spark: The session.
        path: Table location.
        schema: Columns to return, in order; partition columns come from directory names.

    Returns:
        The rows; an empty DataFrame of ``schema`` when there is no table or no file.
    """
    uris = DeltaTable(path).file_uris() if DeltaTable.is_deltatable(path) else []
    if not uris:
        return local_frame(spark, [], schema)
    files = spark.read.schema(schema).option("basePath", path).parquet(*uris)
    return files.select(*schema.fieldNames())
