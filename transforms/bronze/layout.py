"""Recognise the log4j line layouts Kafka brokers, controllers and Connect workers write.

Source of the formats: Kafka's ``config/log4j.properties`` (``[%d] %p %m (%c)%n``, <= 3.9),
``config/log4j2.yaml`` (4.x, same prefix), ``config/connect-log4j.properties``
(``[%d] %p %X{connector.context}%m (%c:%L)%n``), Strimzi's ``%d %p %m (%c) [%t]`` and the
container / syslog prefixes seen in public logs (docs/kafka-log-formats.md section 1).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

#: One pattern for every layout. Groups: 1 prefix a container runtime or syslog put before the
#: header (``kafka-0 kafka ``, ``name_1  | ``, ``2025-02-16 11:46:34 ``), 2 ``[`` when the date
#: is bracketed (log4j) or empty (Strimzi), 3 timestamp, 4 level, 5 message, 6 logger,
#: 7 ``:NNN`` source line of the ``(%c:%L)`` layout, 8 Strimzi thread. Without a timestamp the
#: line must start with the level (a record pasted without its date).
HEADER_PATTERN = (
    r"^(?:(.*?)(\[?)(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[,.]\d{3})\]? )?"
    r"(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL) (.*?)"
    r" \(([A-Za-z_$][\w$.\-]*?)(?::(\d+))?\)(?: \[(.*)\])?\s*$"
)
#: A record that is one JSON object per line (Confluent audit-log CloudEvents); its time is the
#: event's ``time`` field (ISO-8601, UTC), not a log4j prefix.
JSON_LINE_PATTERN = r"^\s*\{.*\}\s*$"
JSON_TIME_PATTERN = r'"time"\s*:\s*"([^"]+)"'
_SEP = "\u0001"
_GROUPS = 8
# regexp_replace rewrites a matching line into its groups joined by _SEP: one regex pass per
# line instead of one per field.
_REPLACEMENT = _SEP.join(f"${i}" for i in range(1, _GROUPS + 1))


def header_fields(value: Column) -> Column:
    """The header groups of a physical line as an array<string>, or null if it has no header.

    Args:
        value: one physical log line.

    Returns:
        array<string> Column of 8 elements (see ``HEADER_PATTERN``; absent groups are ``''``),
        null when the line does not match (a continuation line such as a stack trace), or when
        the line itself contains the U+0001 separator.
    """
    parts = F.split(F.regexp_replace(value, HEADER_PATTERN, _REPLACEMENT), _SEP)
    return F.when(F.size(parts) == _GROUPS, parts)


def _part(fields: Column, index: int) -> Column:
    return F.nullif(F.get(fields, index - 1), F.lit(""))


def local_log_ts(ts_text: Column, time_zone: Column) -> Column:
    """Parse a log4j timestamp written in ``time_zone`` and return it as a UTC timestamp.

    Args:
        ts_text: ``yyyy-MM-dd HH:mm:ss,SSS`` (``T`` and ``.`` separators accepted) or null.
        time_zone: the source's declared zone id (``UTC``, ``Europe/Berlin``): log4j prefixes
            carry no offset (docs/kafka-log-formats.md section 1).

    Returns:
        timestamp Column in UTC (the session time zone is pinned to UTC); null when
        ``ts_text`` is null or not a valid date-time.
    """
    normalised = F.translate(ts_text, "T,", " .")
    local = F.try_to_timestamp(normalised, F.lit("yyyy-MM-dd HH:mm:ss.SSS"))
    return F.to_utc_timestamp(local, time_zone)


def with_header_fields(lines: DataFrame) -> DataFrame:
    """Split each physical line into its log4j header fields.

    Input columns:
        value (string): one physical line.
    Output columns (added):
        layout (string): ``log4j`` (``[ts] LEVEL msg (logger)``), ``log4j_line``
        (``(logger:NNN)``), ``strimzi`` (``ts LEVEL msg (logger) [thread]``), ``bare`` (no
        timestamp), ``json`` (a JSON object per line: message = the object, ts_text = its
        ``time``, no level or logger), null for a line without a header (continuation line);
        line_prefix, ts_text, level (WARNING folded to WARN), logger (string),
        logger_line (int), thread, message (string).

    Null ``value`` gives null fields.
    """
    fields = F.col("_header")
    bracket = F.get(fields, 1) == "["
    is_json = fields.isNull() & F.col("value").rlike(JSON_LINE_PATTERN)
    json_time = F.nullif(F.regexp_extract(F.col("value"), JSON_TIME_PATTERN, 1), F.lit(""))
    layout = (
        F.when(is_json, F.lit("json"))
        .when(fields.isNull(), F.lit(None).cast("string"))
        .when(_part(fields, 3).isNull(), F.lit("bare"))
        .when(bracket & _part(fields, 7).isNotNull(), F.lit("log4j_line"))
        .when(bracket, F.lit("log4j"))
        .otherwise(F.lit("strimzi"))
    )
    level = _part(fields, 4)
    return lines.withColumn("_header", header_fields(F.col("value"))).select(
        *[c for c in lines.columns],
        layout.alias("layout"),
        _part(fields, 1).alias("line_prefix"),
        F.when(is_json, json_time).otherwise(_part(fields, 3)).alias("ts_text"),
        F.when(level == "WARNING", F.lit("WARN")).otherwise(level).alias("level"),
        _part(fields, 6).alias("logger"),
        _part(fields, 7).cast("int").alias("logger_line"),
        _part(fields, 8).alias("thread"),
        # The message may be empty (''), which is not the same as absent.
        F.when(is_json, F.trim(F.col("value")))
        .when(fields.isNotNull(), F.get(fields, 4))
        .alias("message"),
    )
