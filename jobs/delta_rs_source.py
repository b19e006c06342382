"""Embedded Delta engine: a Spark Python Data Source whose commit is one deltalake transaction.

Tasks write Parquet files with :func:`jobs.delta_rs_files.write_files` and return their add
actions; :func:`commit_files` records them in ONE Delta commit, together with the remove
actions of the replaced partitions and the application transaction ``(app_id, app_version)``.
A failed task means no commit; ``abort`` deletes the files of the tasks that finished (a killed
task can leave orphan files, which VACUUM removes).

``commit`` and ``abort`` run in a Python worker process, not in the driver's Python: all they
need travels in the ``spec`` option. :func:`register` ships this module and
:mod:`jobs.delta_rs_files` to the workers by value, so the worker side uses only names imported
with ``from ... import`` and nothing from the project; the driver side (:func:`write`,
:func:`read`) may.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import weakref
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, Schema
from deltalake.transaction import (
    AddAction,
    CommitProperties,
    RemoveAction,
    Transaction,
    create_table_with_add_actions,
)
from pyspark import cloudpickle
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from jobs.delta_rs_files import WriteSpec, arrow_schema, delete_files, write_files
from jobs.errors import EngineError
from transforms.frames import local_frame

SOURCE_NAME = "kafka_audit_delta_rs"
WRITE_ID_KEY = "kafkaAuditWriteId"  # commit info keys
ROWS_KEY = "kafkaAuditRowsWritten"
_REGISTERED: weakref.WeakSet[SparkSession] = weakref.WeakSet()


@dataclasses.dataclass
class AddedFiles(WriterCommitMessage):
    """Commit message of one task: the add actions (keyword arguments) of its files."""

    actions: list[dict[str, Any]]


def _actions(messages: list[WriterCommitMessage | None]) -> list[dict[str, Any]]:
    return [add for message in messages for add in getattr(message, "actions", None) or ()]


class DeltaRsWriter(DataSourceArrowWriter):
    """Writes Arrow batches as Parquet files in the table folder; commits them with deltalake.

    Args:
        spec: The write.
        schema: Spark schema of the DataFrame.
    """

    def __init__(self, spec: WriteSpec, schema: StructType) -> None:
        self.spec = spec
        self.schema = schema

    def write(self, iterator: Any) -> AddedFiles:
        """Args: iterator: the task's Arrow record batches. Returns: add actions of its files."""
        return AddedFiles(write_files(self.spec, self.schema, iterator))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Args: messages: the tasks' :class:`AddedFiles`, all committed in one transaction."""
        commit_files(self.spec, self.schema, _actions(messages))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Deletes the files of the tasks that succeeded; the table is untouched."""
        delete_files(self.spec, _actions(messages))


class DeltaRsDataSource(DataSource):
    """``df.write.format(SOURCE_NAME).option("spec", WriteSpec(...).to_json()).save()``."""

    @classmethod
    def name(cls) -> str:
        """Returns: the format name."""
        return SOURCE_NAME

    def writer(self, schema: StructType, overwrite: bool) -> DeltaRsWriter:
        """The table's writer.

        Args:
            schema: the DataFrame's; the ``table_schema`` option (the table's contract, JSON)
                replaces it, so the table gets the declared nullability, not the plan's.
            overwrite: unused (``WriteSpec.replace`` decides).
        """
        declared = self.options.get("table_schema")
        table_schema = schema if declared is None else StructType.fromJson(json.loads(declared))
        return DeltaRsWriter(WriteSpec.from_json(self.options["spec"]), table_schema)


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


def register(spark: SparkSession) -> None:
    """Registers the data source in ``spark`` (once per session) and ships its code by value.

    By-value pickling lets the workers run it without the project being importable there.
    The workers' interpreter must have pyarrow and deltalake: ``jobs.session`` points
    ``PYSPARK_PYTHON`` at the driver's interpreter for local sessions.

    Args:
        spark: The session.
    """
    if spark in _REGISTERED:
        return
    for module in (__name__, WriteSpec.__module__):
        cloudpickle.register_pickle_by_value(sys.modules[module])  # type: ignore[no-untyped-call]
    spark.dataSource.register(DeltaRsDataSource)
    _REGISTERED.add(spark)


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
    """
    before = _check_table(spec, schema)
    if before is not None and before[1]:
        return before[0], True, 0
    register(spark)
    conformed = df.select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in schema.fields])
    writer = conformed.write.format(SOURCE_NAME).mode("append").option("spec", spec.to_json())
    writer.option("table_schema", schema.json()).save()
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
