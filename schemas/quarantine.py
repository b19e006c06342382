"""silver.quarantine: bronze records a silver parser claimed but could not parse, and why."""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "quarantine"
PARTITION_COLUMNS: tuple[str, ...] = ("log_date",)

#: Longest ``raw`` kept, in characters; longer lines are cut and flagged ``raw_truncated``.
RAW_MAX_CHARS = 8192

QUARANTINE = StructType(
    [
        StructField("run_id", StringType(), False),
        StructField("source_path", StringType(), False),
        StructField("line_number", LongType(), False),
        StructField("node_id", StringType(), True),
        StructField("log_ts", TimestampType(), True),
        # bronze family ('authz', 'auth'...) of the parser that rejected the record.
        StructField("family", StringType(), True),
        # Stable snake_case code, e.g. 'authz_not_kafka_format', 'missing_field_message'.
        StructField("reason_code", StringType(), False),
        # Human-readable explanation; may be null.
        StructField("reason_detail", StringType(), True),
        # bronze raw, cut to RAW_MAX_CHARS characters.
        StructField("raw", StringType(), False),
        StructField("raw_truncated", BooleanType(), False),
        StructField("log_date", DateType(), True),
    ]
)
