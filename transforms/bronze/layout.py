"""Recognise the log4j line layouts Kafka brokers, controllers and Connect workers write.

Source of the formats: Kafka's ``config/log4j.properties`` (``[%d] %p %m (%c)%n``, <= 3.9),
``config/log4j2.yaml`` (4.x, same prefix), ``config/connect-log4j.properties``
(``[%d] %p %X{connector.context}%m (%c:%L)%n``), Strimzi's ``%d %p %m (%c) [%t]`` and the
container / syslog prefixes seen in public logs (docs/kafka-log-formats.md section 1): one fast
regex, ``HEADER_PATTERN``. Then, for lines it does not match, the other layouts real
deployments ship (``transforms.bronze.log4j_pattern.BUILTIN_LAYOUTS``: Confluent for Kubernetes,
Debezium's Connect image, ...), and first of all, for the files whose layout is declared (a
``layout_pattern`` of the source, or the ConversionPattern of the node's own logging config),
that layout (docs/layouts.md).

A line that no layout matches is a continuation of the record before it (a stack trace) only
when it looks like one (``looks_like_continuation``); otherwise it is a record of its own, of
layout ``unrecognized`` (``transforms.bronze.records.number_lines``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from transforms.bronze.log4j_pattern import BUILTIN_LAYOUTS, CompiledLayout
from transforms.bronze.native import HEADER_FIELDS_FUNCTION
from transforms.columns import split_groups
from transforms.native import registered_function

#: One pattern for every layout. Groups: 1 prefix a container runtime or syslog put before the
#: header (``kafka-0 kafka ``, ``name_1  | ``, ``2025-02-16 11:46:34 ``), 2 ``[`` when the date
#: is bracketed (log4j) or empty (Strimzi), 3 timestamp, 4 level, 5 message, 6 logger,
#: 7 ``:NNN`` source line of the ``(%c:%L)`` layout, 8 Strimzi thread. Without a timestamp the
#: line must start with the level (a record pasted without its date).
#:
#: The message group is greedy: the logger is the last `` (...)`` that can end the line, as
#: log4j writes ``%m`` before ``(%c)`` and ``[%t]``. The message is what a client can put text
#: into (a client id, a principal); a lazy group would take the first `` (x.Y) [`` inside it as
#: the logger and thread of a Strimzi line. It is also half the cost: the regex walks back from
#: the end of the line over the short tail, instead of trying the tail at every character of
#: the message (issue 15).
HEADER_PATTERN = (
    r"^(?:(.*?)(\[?)(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[,.]\d{3})\]? )?"
    r"(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL) (.*)"
    r" \(([A-Za-z_$][\w$.\-]*?)(?::(\d+))?\)(?: \[(.*)\])?\s*$"
)
#: ConversionPatterns whose lines ``HEADER_PATTERN`` already parses into the same fields (Kafka's,
#: Connect's and Strimzi's shipped ones): a file declared with one of them needs no regex of its
#: own (``needs_own_regex``).
HEADER_PATTERN_LAYOUTS = frozenset(
    {
        "[%d] %p %m (%c)%n",
        "[%d] %p %m (%c:%L)%n",
        "[%d] %p %X{connector.context}%m (%c:%L)%n",
        "[%d] %p %X{connector.context}%m (%c)%n",
        "%d{ISO8601} %p %m (%c) [%t]%n",
        "%d %p %m (%c) [%t]%n",
        "%d{ISO8601} %p %X{connector.context}%m (%c) [%t]%n",
    }
)
#: A record that is one JSON object per line (Confluent audit-log CloudEvents); its time is the
#: event's ``time`` field (ISO-8601, UTC), not a log4j prefix.
JSON_LINE_PATTERN = r"^\s*\{.*\}\s*$"
JSON_TIME_PATTERN = r'"time"\s*:\s*"([^"]+)"'
#: What a line that continues the record before it looks like (log4j writes a throwable and
#: multi-line messages after ``%n``): indented lines (stack frames ``\tat ...``, config dumps),
#: ``at ...``, ``Caused by:`` / ``Suppressed:``, ``... N more``, ``Exception in thread``, and
#: ``Throwable.toString`` (``org.apache.kafka.common.errors.SaslAuthenticationException: ...``).
CONTINUATION_PATTERN = (
    r"^(?:\s|at |Caused by:|Suppressed:|\.\.\. ?\d+ (?:more|common frames omitted)"
    r"|Exception in thread "
    r"|(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*(?:Exception|Error|Throwable)(?::|\s*$))"
)
_SEP = "\u0001"
_GROUPS = 8
# regexp_replace rewrites a matching line into its groups joined by _SEP: one regex pass per
# line instead of one per field.
_REPLACEMENT = _SEP.join(f"${i}" for i in range(1, _GROUPS + 1))
#: The fields of a compiled layout, in the order of ``HEADER_PATTERN``'s groups; its second
#: group (``[`` or nothing) carries the compiled layout's name instead.
_FIELD_ORDER = ("prefix", None, "ts", "level", "message", "logger", "logger_line", "thread")


def header_fields(value: Column) -> Column:
    """The header groups of a physical line as an array<string>, or null if it has no header.

    Args:
        value: one physical log line.

    Returns:
        array<string> Column of 8 elements (see ``HEADER_PATTERN``; absent groups are ``''``),
        null when the line does not match (a continuation line such as a stack trace), or when
        the line itself contains the U+0001 separator.

    With the project's JVM functions in the active session (``jobs.jvm_parsers``), a line in
    Kafka's or Strimzi's own layout is read without the regex
    (``transforms.bronze.native.HEADER_FIELDS_FUNCTION``: the same groups, null for every other
    line, which ``header_fields_by_regex`` then reads): the regex was a fifth of the CPU of
    bronze's persisted layer at 1M lines (issue 15).
    """
    by_regex = header_fields_by_regex(value)
    native = registered_function(HEADER_FIELDS_FUNCTION)
    return F.coalesce(native(value), by_regex) if native else by_regex


def header_fields_by_regex(value: Column) -> Column:
    """``header_fields`` by ``HEADER_PATTERN`` alone."""
    # One regex pass per line (``split_groups``); a line holding the separator itself takes
    # the two-pass form, whose result it keeps (null unless it splits into exactly 8 parts).
    parts = F.split(F.regexp_replace(value, HEADER_PATTERN, _SEP + _REPLACEMENT), _SEP)
    split_twice = F.split(F.regexp_replace(value, HEADER_PATTERN, _REPLACEMENT), _SEP)
    guarded = F.when(F.size(split_twice) == _GROUPS, split_twice)
    return split_groups(parts, _GROUPS, value.contains(_SEP), guarded)


def compiled_fields(value: Column, layout: CompiledLayout) -> Column:
    """``header_fields`` for a compiled log4j layout: the same 8 elements, the second holding
    the layout's name; null when the line does not match ``layout.regex``."""
    refs = [
        layout.name
        if name is None
        else (f"${layout.groups[name]}" if name in layout.groups else "")
        for name in _FIELD_ORDER
    ]
    parts = F.split(F.regexp_replace(value, layout.regex, _SEP.join(refs)), _SEP)
    return F.when(F.size(parts) == _GROUPS, parts)


def needs_own_regex(pattern: str) -> bool:
    """False for a ConversionPattern ``HEADER_PATTERN`` parses as such
    (``HEADER_PATTERN_LAYOUTS``, surrounding whitespace ignored), true otherwise."""
    return pattern.strip() not in HEADER_PATTERN_LAYOUTS


def looks_like_continuation(value: Column) -> Column:
    """True for a line that continues the record before it (``CONTINUATION_PATTERN``);
    false for null."""
    return F.coalesce(value.rlike(CONTINUATION_PATTERN), F.lit(False))


#: A declared layout and the files (``source_path``) it was declared for.
DeclaredLayout = tuple[CompiledLayout, Sequence[str]]


def any_header_fields(
    value: Column, source_path: Column, declared: Sequence[DeclaredLayout] = ()
) -> Column:
    """The header fields of a line in whichever layout matches first: the layout declared for
    its file, then ``HEADER_PATTERN``, then ``BUILTIN_LAYOUTS`` in order (these only for lines
    that do not look like a continuation or a JSON object, so stack traces and audit events
    pay for one regex, as before).

    Returns:
        array<string> of 8 elements as ``header_fields`` (second element: ``[``, ``''`` or a
        compiled layout's name), or null.
    """
    own = [F.when(source_path.isin(list(paths)), compiled_fields(value, layout))
           for layout, paths in declared]  # fmt: skip
    others = F.when(
        ~looks_like_continuation(value) & ~value.rlike(JSON_LINE_PATTERN),
        F.coalesce(*[compiled_fields(value, layout) for layout in BUILTIN_LAYOUTS]),
    )
    return F.coalesce(*own, header_fields(value), others)


def _part(fields: Column, index: int) -> Column:
    return F.nullif(F.get(fields, index - 1), F.lit(""))


def local_log_ts(ts_text: Column, time_zone: Column) -> Column:
    """Parse a log4j timestamp written in ``time_zone`` and return it as a UTC timestamp.

    Args:
        ts_text: ``yyyy-MM-dd HH:mm:ss,SSS`` (``T`` and ``.`` separators accepted; without
            the milliseconds too) or null.
        time_zone: the source's declared zone id (``UTC``, ``Europe/Berlin``): log4j prefixes
            carry no offset (docs/kafka-log-formats.md section 1).

    Returns:
        timestamp Column in UTC (the session time zone is pinned to UTC); null when
        ``ts_text`` is null or not a valid date-time.
    """
    normalised = F.translate(ts_text, "T,", " .")
    local = F.coalesce(
        F.try_to_timestamp(normalised, F.lit("yyyy-MM-dd HH:mm:ss.SSS")),
        # %d{yyyy-MM-dd HH:mm:ss}: a declared layout without milliseconds.
        F.when(
            F.length(normalised) == 19,
            F.try_to_timestamp(normalised, F.lit("yyyy-MM-dd HH:mm:ss")),
        ),
    )
    return F.to_utc_timestamp(local, time_zone)


def with_header_fields(lines: DataFrame, declared: Sequence[DeclaredLayout] = ()) -> DataFrame:
    """Split each physical line into its log4j header fields (``any_header_fields``).

    Args:
        lines: value (string): one physical line; source_path (string) when ``declared``.
        declared: layouts declared for some files (``jobs.inputs.declared_layouts``).

    Output columns (added):
        layout (string): ``log4j`` (``[ts] LEVEL msg (logger)``), ``log4j_line``
        (``(logger:NNN)``), ``strimzi`` (``ts LEVEL msg (logger) [thread]``), ``bare`` (no
        timestamp), a compiled layout's name (``BUILTIN_LAYOUTS``, ``declared``,
        ``logging_config``), ``json`` (a JSON object per line: message = the object, ts_text =
        its ``time``, no level or logger), null for a line without a header;
        line_prefix, ts_text, level (WARNING folded to WARN), logger (string),
        logger_line (int), thread, message (string).

    Null ``value`` gives null fields.
    """
    fields = F.col("_header")
    marker = F.get(fields, 1)
    bracket = marker == "["
    is_json = fields.isNull() & F.col("value").rlike(JSON_LINE_PATTERN)
    json_time = F.nullif(F.regexp_extract(F.col("value"), JSON_TIME_PATTERN, 1), F.lit(""))
    layout = (
        F.when(is_json, F.lit("json"))
        .when(fields.isNull(), F.lit(None).cast("string"))
        .when(~marker.isin("[", ""), marker)
        .when(_part(fields, 3).isNull(), F.lit("bare"))
        .when(bracket & _part(fields, 7).isNotNull(), F.lit("log4j_line"))
        .when(bracket, F.lit("log4j"))
        .otherwise(F.lit("strimzi"))
    )
    level = _part(fields, 4)
    header = any_header_fields(F.col("value"), F.col("source_path"), declared)
    return lines.withColumn("_header", header).select(
        *[c for c in lines.columns],
        layout.alias("layout"),
        _part(fields, 1).alias("line_prefix"),
        F.when(is_json, json_time).otherwise(_part(fields, 3)).alias("ts_text"),
        F.when(level == "WARNING", F.lit("WARN")).otherwise(level).alias("level"),
        _part(fields, 6).alias("logger"),
        _part(fields, 7).try_cast("int").alias("logger_line"),
        _part(fields, 8).alias("thread"),
        # The message may be empty (''), which is not the same as absent.
        F.when(is_json, F.trim(F.col("value")))
        .when(fields.isNotNull(), F.get(fields, 4))
        .alias("message"),
    )
