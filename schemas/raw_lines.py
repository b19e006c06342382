"""bronze.raw_lines: one log record per row (multi-line records folded into their header line)."""

from __future__ import annotations

from pyspark.sql.types import (
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "raw_lines"
PARTITION_COLUMNS: tuple[str, ...] = ("log_date",)

#: Families a bronze record can belong to (``family`` column); null = out of scope.
FAMILY_AUTHZ = "authz"
FAMILY_AUTH = "auth"
FAMILY_REQUEST = "request"
FAMILY_TOKEN = "token"
FAMILY_CONNECT_REST = "connect_rest"
FAMILY_CONNECT_WORKER = "connect_worker"
FAMILY_CONFLUENT_AUDIT = "confluent_audit"
FAMILIES: tuple[str, ...] = (
    FAMILY_AUTHZ,
    FAMILY_AUTH,
    FAMILY_REQUEST,
    FAMILY_TOKEN,
    FAMILY_CONNECT_REST,
    FAMILY_CONNECT_WORKER,
    FAMILY_CONFLUENT_AUDIT,
)

#: ``layout`` of a record whose first line is in no layout the pipeline knows and does not look
#: like a continuation: the whole line is its message (docs/layouts.md).
LAYOUT_UNRECOGNIZED = "unrecognized"
#: ``layout`` of a record parsed with its source's ``layout_pattern`` ([[sources]] in the TOML).
LAYOUT_DECLARED = "declared"
#: ``layout`` of a record parsed with the ConversionPattern of its node's own log4j config.
LAYOUT_LOGGING_CONFIG = "logging_config"

RAW_LINES = StructType(
    [
        StructField("run_id", StringType(), False),
        # Absolute URI of the file as Spark read it (file:/..., s3a://...).
        StructField("source_path", StringType(), False),
        # 1-based number of the record's first physical line in its file.
        StructField("line_number", LongType(), False),
        # Physical lines folded into this record (1 + continuation lines such as a stack trace).
        StructField("line_count", IntegerType(), False),
        # Broker / controller node id or Connect worker id; see node_id_source.
        StructField("node_id", StringType(), True),
        # 'config' (server.properties beside the log), 'log_prefix' (nodeId=/brokerId=), 'folder'.
        StructField("node_id_source", StringType(), True),
        # 'log4j' [ts] LEVEL msg (logger), 'log4j_line' (logger:line), 'strimzi' ts LEVEL msg
        # (logger) [thread], 'bare' LEVEL msg (logger) with no timestamp, a compiled layout's
        # name ('confluent_operator', 'debezium', ...; 'declared' for a source's layout_pattern,
        # 'logging_config' for the node's own log4j config), 'json' (one JSON object per line,
        # e.g. Confluent audit events), 'unrecognized' (LAYOUT_UNRECOGNIZED), 'unknown'
        # (continuation lines before any record in the file).
        StructField("layout", StringType(), False),
        # Text before the log4j header that a container runtime or syslog added, if any.
        StructField("line_prefix", StringType(), True),
        # Log4j timestamp converted from the source's declared time zone to UTC.
        StructField("log_ts", TimestampType(), True),
        StructField("level", StringType(), True),
        StructField("logger", StringType(), True),
        # Source line number from '(logger:NNN)' layouts.
        StructField("logger_line", IntegerType(), True),
        # Thread name from the Strimzi layout's trailing '[thread]'.
        StructField("thread", StringType(), True),
        # Message text between the level and ' (logger)', secrets redacted.
        StructField("message", StringType(), True),
        # Continuation lines (stack trace) joined with '\n', secrets redacted.
        StructField("continuation", StringType(), True),
        # The record's first physical line, secrets redacted.
        StructField("raw", StringType(), False),
        # One of FAMILIES or null (out of scope).
        StructField("family", StringType(), True),
        StructField("log_date", DateType(), True),
    ]
)
