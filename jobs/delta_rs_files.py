"""Task side of the embedded Delta engine: Parquet data files and their Delta add actions.

A Spark task writes its rows straight into the table folder, Hive-style
(``log_date=2026-11-20/``, null -> ``log_date=__HIVE_DEFAULT_PARTITION__/``), partition columns
left out of the files (Delta convention), one file per partition per task, with the statistics
Delta expects (numRecords, minValues, maxValues, nullCount of the top-level primitive columns).

Runs in Spark's Python workers; ``jobs.lake`` ships this module by value, so it imports nothing
from the project and other modules import names from it (``from ... import``), never the module.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import posixpath
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

NULL_PARTITION_DIR = "__HIVE_DEFAULT_PARTITION__"
STRING_STATS_PREFIX = 32  # Delta's default: string min/max statistics keep 32 characters
ROW_GROUP_ROWS = 131_072  # rows buffered per file before a Parquet row group is written
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclasses.dataclass(frozen=True)
class WriteSpec:
    """What one write needs on the workers; travels as the JSON ``spec`` option.

    Attributes:
        path: Table root: absolute local path or URI.
        partition_by: Partition columns (none or one date column).
        replace: Partitions (ISO dates, None = null partition) whose files the commit removes;
            None appends.
        app_id: Application transaction id recorded in the commit.
        app_version: Application transaction version recorded in the commit.
        write_id: Unique id of this write, stored in the commit info to find the commit later.
        replace_all: The commit removes every current file of the table (a full overwrite in
            one transaction; used for small gold tables merged in Spark, e.g. on a key).
    """

    path: str
    partition_by: tuple[str, ...]
    replace: tuple[str | None, ...] | None
    app_id: str
    app_version: int
    write_id: str
    replace_all: bool = False

    def to_json(self) -> str:
        """Returns: the spec as JSON."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WriteSpec:
        """Args: text: output of :meth:`to_json`. Returns: the spec."""
        raw = json.loads(text)
        replace = raw.pop("replace")
        raw["partition_by"] = tuple(raw["partition_by"])
        return cls(**raw, replace=None if replace is None else tuple(replace))


def arrow_schema(schema: StructType) -> pa.Schema:
    """Spark schema -> Arrow schema of the table (timestamps UTC microseconds, nullability kept).

    Args:
        schema: Spark schema.

    Returns:
        The Arrow schema; ``deltalake.Schema.from_arrow`` maps it to Delta types.
    """
    return to_arrow_schema(schema, timezone="UTC")


def _stats_kind(arrow_type: pa.DataType) -> str | None:
    """Min/max kind of a column, ``""`` for null count only, None for no statistics."""
    if pa.types.is_nested(arrow_type):
        return None
    kinds = {"int": pa.types.is_integer, "float": pa.types.is_floating}
    kinds |= {"ts": pa.types.is_timestamp, "date": pa.types.is_date32, "str": pa.types.is_string}
    return next((kind for kind, test in kinds.items() if test(arrow_type)), "")


def _ts_text(millis: int, tz: bool) -> str:
    moment = _EPOCH + datetime.timedelta(milliseconds=millis)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}" + ("Z" if tz else "")


@dataclasses.dataclass
class _ColumnStats:
    """Running min, max and null count of one column of one file."""

    kind: str
    tz: bool = False
    nulls: int = 0
    low: Any = None
    high: Any = None
    unusable: bool = False  # NaN or infinity seen: no min/max for this file

    def update(self, values: pa.ChunkedArray) -> None:
        """Args: values: the column's values in the rows just written."""
        self.nulls += values.null_count
        if not self.kind or self.unusable:
            return
        if self.kind == "ts":
            values = values.cast(pa.int64())
        elif self.kind == "float" and pc.any(pc.invert(pc.is_finite(values))).as_py():
            self.unusable = True
            return
        low, high = (pc.min_max(values)[key].as_py() for key in ("min", "max"))
        if low is not None:
            self.low = low if self.low is None else min(self.low, low)
            self.high = high if self.high is None else max(self.high, high)

    def min_max(self) -> tuple[Any, Any]:
        """Returns: (min, max) in Delta's JSON form; either is None when not recorded."""
        if self.low is None or self.unusable:
            return None, None
        if self.kind == "ts":  # Delta keeps milliseconds: round min down and max up
            return _ts_text(self.low // 1000, self.tz), _ts_text(-(-self.high // 1000), self.tz)
        if self.kind == "date":
            return self.low.isoformat(), self.high.isoformat()
        if self.kind == "str":
            high = self.high if len(self.high) <= STRING_STATS_PREFIX else None
            return self.low[:STRING_STATS_PREFIX], high
        return self.low, self.high


class _PartFile:
    """One Parquet data file being written by a task, with its statistics."""

    def __init__(self, spec: WriteSpec, partition: str | None, schema: pa.Schema) -> None:
        self.fs, root = pafs.FileSystem.from_uri(spec.path)
        self.relative_path = f"part-{uuid.uuid4()}.c000.snappy.parquet"
        if spec.partition_by:
            folder = NULL_PARTITION_DIR if partition is None else partition
            self.relative_path = f"{spec.partition_by[0]}={folder}/{self.relative_path}"
        self.full_path = f"{root.rstrip('/')}/{self.relative_path}"
        self.partition_values = {column: partition for column in spec.partition_by}
        self.fs.create_dir(posixpath.dirname(self.full_path), recursive=True)
        self.writer = pq.ParquetWriter(
            self.full_path, schema, filesystem=self.fs, compression="snappy"
        )
        self.rows = 0
        self.pending: list[pa.Table] = []
        self.stats = {
            field.name: _ColumnStats(kind, tz=getattr(field.type, "tz", None) is not None)
            for field in schema
            if (kind := _stats_kind(field.type)) is not None
        }

    def write(self, table: pa.Table) -> None:
        """Args: table: rows of this file's partition, without the partition column."""
        self.pending.append(table)
        self.rows += table.num_rows
        for name, column_stats in self.stats.items():
            column_stats.update(table.column(name))
        if sum(pending.num_rows for pending in self.pending) >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            self.writer.write_table(pa.concat_tables(self.pending))
            self.pending = []

    def close(self) -> dict[str, Any]:
        """Returns: the add action of the finished file, as ``AddAction`` keyword arguments."""
        self._flush()
        self.writer.close()
        stats: dict[str, Any] = {"numRecords": self.rows, "minValues": {}, "maxValues": {}}
        stats["nullCount"] = {name: s.nulls for name, s in self.stats.items()}
        for name, column_stats in self.stats.items():
            low, high = column_stats.min_max()
            if low is not None:
                stats["minValues"][name] = low
            if high is not None:
                stats["maxValues"][name] = high
        return {
            "path": self.relative_path,
            "size": self.fs.get_file_info(self.full_path).size,
            "partition_values": self.partition_values,
            "modification_time": int(time.time() * 1000),
            "data_change": True,
            "stats": json.dumps(stats),
        }

    def discard(self) -> None:
        """Closes and deletes the file (task failure)."""
        self.writer.close()
        self.fs.delete_file(self.full_path)


def _split(table: pa.Table, column: str | None) -> Iterator[tuple[str | None, pa.Table]]:
    """Yields (partition value as ISO date or None, its rows without the partition column)."""
    if column is None:
        yield None, table
        return
    values = table.column(column)
    for value in pc.unique(values).to_pylist():
        mask = pc.is_null(values) if value is None else pc.equal(values, pa.scalar(value))
        rows = table.filter(mask).drop_columns([column])
        yield (None if value is None else value.isoformat()), rows


def write_files(
    spec: WriteSpec, schema: StructType, batches: Iterable[pa.RecordBatch]
) -> list[dict[str, Any]]:
    """Writes one task's rows as Parquet files in the table folder, one file per partition.

    Args:
        spec: The write.
        schema: Spark schema of the rows (partition column included).
        batches: The task's rows.

    Returns:
        The add actions of the files, as ``AddAction`` keyword arguments.

    Raises:
        ValueError: A row's partition is not one of the replaced partitions (nothing is left
            behind: the task's files are deleted).
    """
    target = arrow_schema(schema)
    column = spec.partition_by[0] if spec.partition_by else None
    file_schema = target if column is None else target.remove(target.get_field_index(column))
    files: dict[str | None, _PartFile] = {}
    try:
        for batch in batches:
            for value, rows in _split(_conform(pa.Table.from_batches([batch]), target), column):
                if spec.replace is not None and value not in spec.replace:
                    raise ValueError(
                        f"row with {column}={value} is outside the replaced partitions "
                        f"{list(spec.replace)} of {spec.path}"
                    )
                if value not in files:
                    files[value] = _PartFile(spec, value, file_schema)
                files[value].write(rows)
    except BaseException:
        for part_file in files.values():
            part_file.discard()
        raise
    return [part_file.close() for part_file in files.values()]


def _conform(rows: pa.Table, target: pa.Schema) -> pa.Table:
    """Cast a task's rows to the table schema, refusing nulls in its non-null columns.

    Raises:
        ValueError: a non-null column of the table holds a null (the table's contract is
            broken upstream; nothing of the task is committed).
    """
    for field in target:
        if not field.nullable and rows.column(field.name).null_count:
            raise ValueError(f"column {field.name} is NOT NULL in the table but a row has null")
    return rows.cast(target)


def delete_files(spec: WriteSpec, adds: Sequence[Mapping[str, Any]]) -> None:
    """Deletes written data files that will not be committed.

    Args:
        spec: The write.
        adds: Add actions returned by :func:`write_files`.
    """
    fs, root = pafs.FileSystem.from_uri(spec.path)
    for add in adds:
        fs.delete_file(f"{root.rstrip('/')}/{add['path']}")
