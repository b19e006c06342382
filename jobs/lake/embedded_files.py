"""Files of the embedded Delta engine: Parquet data files and their Delta add actions.

Spark's own Parquet writer writes a write's rows into a staging folder, Hive-style
(``log_date=2026-11-20/``, null -> ``log_date=__HIVE_DEFAULT_PARTITION__/``), partition columns
left out of the files (Delta convention), one file per partition per task.
:func:`staged_adds` moves them into the table folder and describes each with the statistics
Delta expects (numRecords, minValues, maxValues, nullCount of the top-level primitive columns),
read from the Parquet footers.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import posixpath
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

NULL_PARTITION_DIR = "__HIVE_DEFAULT_PARTITION__"
STRING_STATS_PREFIX = 32  # Delta's default: string min/max statistics keep 32 characters
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclasses.dataclass(frozen=True)
class WriteSpec:
    """What one write of the embedded engine needs: where, which partitions, which transaction.

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


def _ts_text(millis: int, tz: bool) -> str | None:
    """Delta's JSON form of a timestamp statistic; None (no bound recorded: readers then skip
    no file on it) outside years 1-9999, which Spark's timestamps reach and Python's do not."""
    try:
        moment = _EPOCH + datetime.timedelta(milliseconds=millis)
    except OverflowError:
        return None
    clock = moment.strftime("-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}"
    return f"{moment.year:04d}{clock}" + ("Z" if tz else "")


@dataclasses.dataclass
class _ColumnStats:
    """Min, max and null count of one column of one file."""

    kind: str
    tz: bool = False
    nulls: int = 0
    low: Any = None
    high: Any = None

    def min_max(self) -> tuple[Any, Any]:
        """Returns: (min, max) in Delta's JSON form; either is None when not recorded."""
        if self.low is None:
            return None, None
        if self.kind == "ts":  # Delta keeps milliseconds: round min down and max up
            return _ts_text(self.low // 1000, self.tz), _ts_text(-(-self.high // 1000), self.tz)
        if self.kind == "date":
            return self.low.isoformat(), self.high.isoformat()
        if self.kind == "str":
            high = self.high if len(self.high) <= STRING_STATS_PREFIX else None
            return self.low[:STRING_STATS_PREFIX], high
        return self.low, self.high


def _partition_value(folder: str) -> str | None:
    """``log_date=2026-11-20`` -> ``2026-11-20``; Spark's null partition folder -> None."""
    value = folder.split("=", 1)[1]
    return None if value == NULL_PARTITION_DIR else value


def _file_stats(metadata: pq.FileMetaData, schema: pa.Schema) -> str:
    """Delta statistics JSON of one Parquet file, from its footer (every row group).

    numRecords; nullCount, minValues and maxValues of the top-level primitive columns
    (``_ColumnStats``: timestamps in milliseconds, min rounded down and max up; strings cut to
    Delta's 32-character prefix, no max when longer). Floating-point columns get no min/max
    (NaN has no place in an order), nested columns no statistics. A column whose footer
    statistics are missing in any row group gets none of those it lacks.
    """
    stats: dict[str, Any] = {"numRecords": metadata.num_rows, "minValues": {}, "maxValues": {}}
    stats["nullCount"] = {}
    leaves = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
    for field in schema:
        kind = _stats_kind(field.type)
        index = leaves.get(field.name)
        if kind is None or index is None:
            continue
        column = _ColumnStats(kind, tz=getattr(field.type, "tz", None) is not None)
        bounds_known, nulls_known = kind not in ("", "float"), True
        for group in range(metadata.num_row_groups):
            found = metadata.row_group(group).column(index).statistics
            if found is None or not found.has_null_count:
                nulls_known = False
            else:
                column.nulls += found.null_count
            if not bounds_known:
                continue
            if found is None or not found.has_min_max:
                if found is None or found.null_count != metadata.row_group(group).num_rows:
                    bounds_known = False  # values without bounds: none for the file
                continue
            low, high = (found.min_raw, found.max_raw) if kind == "ts" else (found.min, found.max)
            column.low = low if column.low is None else min(column.low, low)
            column.high = high if column.high is None else max(column.high, high)
        if nulls_known:
            stats["nullCount"][field.name] = column.nulls
        low, high = column.min_max() if bounds_known else (None, None)
        if low is not None:
            stats["minValues"][field.name] = low
        if high is not None:
            stats["maxValues"][field.name] = high
    return json.dumps(stats)


def staged_adds(spec: WriteSpec, schema: StructType, staging: str) -> list[dict[str, Any]]:
    """Moves the Parquet files Spark wrote under ``staging`` into the table folder and returns
    their add actions (not committed yet).

    Args:
        spec: The write.
        schema: Spark schema of the rows (partition column included).
        staging: folder of a ``DataFrameWriter.partitionBy(...).parquet`` write (Hive-style
            partition folders, Spark's null partition folder for a null date).

    Returns:
        The add actions, as ``AddAction`` keyword arguments. Files without rows (Spark writes
        one for an empty unpartitioned write) stay in the staging folder, which the caller
        deletes. When a move fails, the files already moved are deleted again.
    """
    fs, root = pafs.FileSystem.from_uri(spec.path)
    _, staged_root = pafs.FileSystem.from_uri(staging)
    target = arrow_schema(schema)
    column = spec.partition_by[0] if spec.partition_by else None
    file_schema = target if column is None else target.remove(target.get_field_index(column))
    staged = []
    for info in fs.get_file_info(pafs.FileSelector(staged_root, recursive=True)):
        name = posixpath.basename(info.path)
        if info.type != pafs.FileType.File or not name.endswith(".parquet") or name[0] in "._":
            continue
        metadata = pq.read_metadata(info.path, filesystem=fs)
        if metadata.num_rows:
            staged.append((info, posixpath.relpath(info.path, staged_root), metadata))
    adds: list[dict[str, Any]] = []
    try:
        for info, relative, metadata in staged:
            final = f"{root.rstrip('/')}/{relative}"
            fs.create_dir(posixpath.dirname(final), recursive=True)
            fs.move(info.path, final)
            folder = posixpath.dirname(relative)
            adds.append(
                {
                    "path": relative,
                    "size": info.size,
                    "partition_values": {column: _partition_value(folder)} if column else {},
                    "modification_time": int(time.time() * 1000),
                    "data_change": True,
                    "stats": _file_stats(metadata, file_schema),
                }
            )
    except BaseException:
        delete_files(spec, adds)  # no file of an uncommitted write stays in the table folder
        raise
    return adds


def delete_files(spec: WriteSpec, adds: Sequence[Mapping[str, Any]]) -> None:
    """Deletes written data files that will not be committed.

    Args:
        spec: The write.
        adds: Add actions returned by :func:`staged_adds`.
    """
    fs, root = pafs.FileSystem.from_uri(spec.path)
    for add in adds:
        fs.delete_file(f"{root.rstrip('/')}/{add['path']}")
