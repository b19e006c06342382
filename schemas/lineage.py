"""Columns every silver event table carries: where the event came from, and when."""

from __future__ import annotations

from pyspark.sql.types import (
    DateType,
    LongType,
    StringType,
    StructField,
    TimestampType,
)

#: Leading columns of a silver event table, copied from bronze.raw_lines.
LINEAGE_FIELDS: tuple[StructField, ...] = (
    StructField("run_id", StringType(), False),
    StructField("source_path", StringType(), False),
    StructField("line_number", LongType(), False),
    StructField("node_id", StringType(), True),
    StructField("level", StringType(), True),
    # bronze log_ts (UTC); null for pasted lines without a timestamp.
    StructField("event_ts", TimestampType(), True),
)
#: The last column and partition of a silver event table: the UTC date of event_ts.
EVENT_DATE_FIELD = StructField("event_date", DateType(), True)
EVENT_PARTITION_COLUMNS: tuple[str, ...] = ("event_date",)
