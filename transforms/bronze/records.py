"""Bronze: physical lines -> one log record per row, with layout, time, node identity, family.

The steps, each a pure transform the ingest job chains with ``DataFrame.transform``:
``number_lines`` -> ``continuation_runs`` + ``fold_records`` -> ``with_node_id`` ->
``transforms.silver.families.with_family`` -> ``to_raw_lines``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas.raw_lines import LAYOUT_UNRECOGNIZED, RAW_LINES
from transforms.bronze.layout import (
    DeclaredLayout,
    local_log_ts,
    looks_like_continuation,
    with_header_fields,
)
from transforms.bronze.native import NODE_ID_FUNCTION
from transforms.bronze.redaction import ends_inside_secret, with_secrets_fingerprinted
from transforms.frames import union_by_name
from transforms.native import registered_function

#: Physical line kinds that are not log records (``line_kind``).
COMMENT = "comment"
BLANK = "blank"
HEADER = "header"
CONTINUATION = "continuation"
#: A line in no known layout that does not look like a continuation: a record of its own.
UNRECOGNIZED = "unrecognized"
#: Line kinds that start a record.
RECORD_STARTS = (HEADER, UNRECOGNIZED)
#: A date and time anywhere near the start of a line of an unknown layout (its time, if any).
_ANY_TIME = r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{3})?)"

#: Prefixes under which Kafka writes its own node id (docs/kafka-log-formats.md sections 1, 3,
#: 4, 6): SocketServer 2.8+/2.x, QuorumController, the token manager, StandardAuthorizer,
#: KafkaServer, ReplicaManager / state-change ``[Broker id=N]``, the ZooKeeper-mode
#: ``[Controller id=N]``, ``KafkaApis``' ``[KafkaApi-N]``, and the Connect herder's LogContext
#: (the worker's client id). ``NodeIdInMessage.java`` holds the same list.
NODE_ID_PREFIXES = (
    "nodeId=", "brokerId=", "[QuorumController id=", "[Token Manager on Node ",
    "[StandardAuthorizer ", "[KafkaServer id=", "[BrokerServer id=", "[ControllerServer id=",
    "[Broker id=", "[Controller id=", "[KafkaApi-", "[Worker clientId=",
)  # fmt: skip
# The prefixes' only regex metacharacter is ``[``.
_NODE_ID_PATTERN = (
    "(?:" + "|".join(p.replace("[", r"\[") for p in NODE_ID_PREFIXES) + r")([^,\]\s]+)"
)
#: Substrings every ``_NODE_ID_PATTERN`` match contains (`` id=`` covers the four
#: ``[... id=`` prefixes). Not ``Id=`` alone: every pre-2.8 request-log line has
#: ``clientId=`` and ``correlationId=`` and would go through the regex.
_NODE_ID_MARKERS = (
    "nodeId=", "brokerId=", " id=", "[Token Manager on Node ", "[StandardAuthorizer ",
    "[KafkaApi-", "[Worker clientId=",
)  # fmt: skip


def number_lines(lines: DataFrame, declared: Sequence[DeclaredLayout] = ()) -> DataFrame:
    """Number physical lines within each file and mark what kind of line each one is.

    Args:
        lines: source_path (string), block_start (long): byte offset of the file split the
            line was read from, row_order (long): a ``monotonically_increasing_id`` taken right
            after the read, so consecutive in read order within a split; value (string).
        declared: layouts declared for some files (``transforms.bronze.layout``).

    Output columns:
        source_path, value, line_number (long, 1-based), line_kind (string: comment, blank,
        header, continuation, unrecognized), plus the header fields of
        ``layout.with_header_fields`` and own_node_id (string: the node id the message prints,
        ``node_id_in_message``; null when it prints none or for a continuation line).

    A line no layout matches is a continuation only when it looks like one
    (``layout.looks_like_continuation``); otherwise it is ``unrecognized``: layout
    ``unrecognized``, message = the whole line, ts_text = a date-time near its start if it has
    one, no level or logger. It starts a record of its own, so a security line in an unknown
    layout is never folded into the record before it. One exception: a line that follows a
    line ending inside a secret value (``redaction.ends_inside_secret``: a record cut in two)
    is that record's continuation, so the rest of the secret it starts with is redacted with
    the record (``redaction.redact_split_values``) instead of kept in a record of its own.

    A line's number is its place in its split plus the lines of the file's earlier splits: one
    small aggregate per split (first row id, line count) and a running sum over the splits of
    each file, joined back by broadcast, so the lines themselves are never sorted or shuffled.
    Lines starting with ``#`` are comments (the bundled corpus's ``# source:`` notes), not log
    records. Null ``value`` counts as blank.
    """
    return numbered_lines(with_line_headers(lines, declared))


def with_line_headers(lines: DataFrame, declared: Sequence[DeclaredLayout] = ()) -> DataFrame:
    """Each physical line's own work, which needs no other line: its header fields, the node
    id its message prints, and whether it ends inside a secret. ``numbered_lines`` of this is
    ``number_lines``; a run persists this layer and numbers the lines from it, so the files
    are read once (issue 15: the line counts per split came from a second read of every file).

    Args:
        lines: as for ``number_lines``.
        declared: layouts declared for some files (``transforms.bronze.layout``).

    Output columns: ``lines``' columns, the header fields of ``layout.with_header_fields``,
    own_node_id (string: ``node_id_in_message`` of the header's message; null for a line
    without a header) and _ends_open (boolean: ``redaction.ends_inside_secret``).
    """
    return (
        lines.transform(with_header_fields, declared)
        .withColumn("own_node_id", node_id_in_message(F.col("message")))
        .withColumn("_ends_open", ends_inside_secret(F.col("value")))
    )


def numbered_lines(headed: DataFrame) -> DataFrame:
    """``number_lines`` of the lines whose ``with_line_headers`` is ``headed``: the same
    output columns, from a scan of ``headed`` for the line counts per split and a broadcast
    join of them."""
    splits = _splits(headed)
    line_number = F.col("row_order") - F.col("_first_row") + F.col("_before") + 1
    follows_open = F.array_contains("_open_rows", F.col("row_order") - 1) | (
        (F.col("row_order") == F.col("_first_row")) & F.col("_after_open")
    )
    kind = (
        F.when(F.col("value").isNull() | (F.trim("value") == ""), F.lit(BLANK))
        .when(F.col("value").startswith("#"), F.lit(COMMENT))
        .when(F.col("layout").isNotNull(), F.lit(HEADER))
        .when(follows_open | looks_like_continuation(F.col("value")), F.lit(CONTINUATION))
        .otherwise(F.lit(UNRECOGNIZED))
    )
    # An unrecognized line's message becomes the whole line: the id it prints is read there.
    own_node_id = F.when(
        F.col("line_kind") == UNRECOGNIZED, node_id_in_message(F.col("value"))
    ).otherwise(F.col("own_node_id"))
    columns = [c for c in headed.columns if c not in ("block_start", "row_order", "_ends_open")]
    return (
        headed.join(F.broadcast(splits), ["source_path", "block_start"])
        .select(*columns, line_number.cast("long").alias("line_number"), kind.alias("line_kind"))
        .transform(_unrecognized_as_records)
        .withColumn("own_node_id", own_node_id)
    )


def _splits(lines: DataFrame) -> DataFrame:
    """One row per file split (``with_line_headers``' output): source_path, block_start, _first_row
    (its first row id), _before (lines of the file's earlier splits), _open_rows
    (array<long>: the row ids of its lines that end inside a secret) and _after_open (whether
    the file's previous split ends inside one)."""
    earlier_splits = (
        Window.partitionBy("source_path")
        .orderBy("block_start")
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    previous_split = Window.partitionBy("source_path").orderBy("block_start")
    ends_open = F.col("_ends_open")
    return (
        lines.groupBy("source_path", "block_start")
        .agg(
            F.min("row_order").alias("_first_row"),
            F.count(F.lit(1)).alias("_split_lines"),
            F.collect_list(F.when(ends_open, F.col("row_order"))).alias("_open_rows"),
            F.max_by(ends_open, F.col("row_order")).alias("_last_open"),
        )
        .select(
            "source_path",
            "block_start",
            "_first_row",
            F.coalesce(F.sum("_split_lines").over(earlier_splits), F.lit(0)).alias("_before"),
            "_open_rows",
            F.coalesce(F.lag("_last_open").over(previous_split), F.lit(False)).alias("_after_open"),
        )
    )


def _unrecognized_as_records(numbered: DataFrame) -> DataFrame:
    """Unrecognized lines get layout ``unrecognized``, the whole line as message and the
    date-time near their start (if any) as ts_text."""
    unrecognized = F.col("line_kind") == UNRECOGNIZED
    head = F.substring(F.col("value"), 1, 64)
    return numbered.withColumns(
        {
            "layout": F.when(unrecognized, F.lit(LAYOUT_UNRECOGNIZED)).otherwise(F.col("layout")),
            "message": F.when(unrecognized, F.col("value")).otherwise(F.col("message")),
            "ts_text": F.when(
                unrecognized, F.nullif(F.regexp_extract(head, _ANY_TIME, 1), F.lit(""))
            ).otherwise(F.col("ts_text")),
        }
    )


#: ``number_lines`` columns that ``narrow_lines`` keeps: all but the text.
NARROW_COLUMNS = ("source_path", "line_number", "line_kind", "layout", "ts_text", "own_node_id")


def narrow_lines(numbered: DataFrame) -> DataFrame:
    """The numbered lines without their text, for what reads every line but no record's text:
    the continuation runs, the record dates, the node ids printed in each file and the
    accounting.

    Input columns: the output of ``number_lines``.
    Output columns: ``NARROW_COLUMNS`` (source_path string, line_number long, line_kind
    string, layout string, ts_text string, own_node_id string) and value (string: the line,
    only for a line that does not start a record, null for the rest: ``continuation_runs``
    reads it).

    Persisted beside the numbered lines (issue 15): at 10M lines those spill to disk, and each
    scan of them reads every column back, the text of every line twice over (line and
    message), however few columns it needs.
    """
    starts = F.col("line_kind").isin(*RECORD_STARTS)
    return numbered.select(*NARROW_COLUMNS, F.when(~starts, F.col("value")).alias("value"))


def continuation_runs(numbered: DataFrame) -> DataFrame:
    """The continuation lines (stack traces) of each file, grouped by the record they belong to.

    Input columns: the output of ``number_lines`` or ``narrow_lines``.
    Output columns: source_path (string), anchor_line (long: the line number of the header
    line the run follows; null for a run at the start of a file, before any header),
    lines (array<struct<line_number long, value string>>, the run's continuation lines in
    file order; never empty).

    Only the lines that do not start a record (continuation, blank and comment lines, rare in
    real logs) are shuffled and ordered: consecutive line numbers among them form a run (gaps
    and islands: ``line_number - row_number`` is constant within a run), and the line just
    before a run is, by construction, a record's first line (a header or an unrecognized
    line). Blank and comment lines inside a run are not
    record text and are left out, as are runs made of them alone.
    """
    in_file = Window.partitionBy("source_path").orderBy("line_number")
    others = numbered.where(~F.col("line_kind").isin(*RECORD_STARTS)).select(
        "source_path",
        "line_number",
        "line_kind",
        "value",
        (F.col("line_number") - F.row_number().over(in_file)).alias("_island"),
    )
    trace_line = F.when(F.col("line_kind") == CONTINUATION, F.struct("line_number", "value"))
    runs = others.groupBy("source_path", "_island").agg(
        F.min("line_number").alias("_run_start"),
        F.sort_array(F.collect_list(trace_line)).alias("lines"),
    )
    return runs.where(F.size("lines") > 0).select(
        "source_path",
        F.when(F.col("_run_start") > 1, F.col("_run_start") - 1).alias("anchor_line"),
        "lines",
    )


_HEADER_FIELDS = (
    "line_prefix", "ts_text", "level", "logger", "logger_line", "thread", "message", "own_node_id",
)  # fmt: skip


def fold_records(numbered: DataFrame, runs: DataFrame | None = None) -> DataFrame:
    """Fold continuation lines (stack traces) into the record whose header precedes them.

    Args:
        numbered: the output of ``number_lines``.
        runs: ``continuation_runs(numbered)``, when the caller has it already (persisted and
            counted, its true size lets Spark broadcast it to the headers instead of
            shuffling every record); computed here otherwise.

    Output columns: source_path, line_number (long, the record's first line), line_count (int),
    layout (string; ``unknown`` for continuation lines before any header in the file), raw
    (string, the first line), line_prefix, ts_text, level, logger, logger_line (int), thread,
    message, own_node_id (those of these header fields that ``numbered`` has: all of them
    from ``number_lines``, fewer from ``narrow_lines``), continuation (string: continuation
    lines joined by ``\\n``, null if none).

    Comment and blank lines are not records and are dropped here; ``line_accounting`` counts
    them. Continuation lines at the start of a file (a rotated file that begins mid-trace) form
    one record of layout ``unknown``. Header lines are never shuffled: each is joined by
    equality to the run that follows it (``continuation_runs``).
    """
    runs = continuation_runs(numbered) if runs is None else runs
    traces = runs.where(F.col("anchor_line").isNotNull()).select(
        "source_path",
        F.col("anchor_line").alias("line_number"),
        F.size("lines").alias("_traced"),
        F.array_join(F.transform("lines", lambda x: x["value"]), "\n").alias("continuation"),
    )
    fields = [name for name in _HEADER_FIELDS if name in numbered.columns]
    headers = (
        numbered.where(F.col("line_kind").isin(*RECORD_STARTS))
        .join(traces, ["source_path", "line_number"], "left")
        .select(
            "source_path",
            "line_number",
            (F.coalesce(F.col("_traced"), F.lit(0)) + 1).cast("int").alias("line_count"),
            "layout",
            F.col("value").alias("raw"),
            *fields,
            "continuation",
        )
    )
    first = F.get(F.col("lines"), 0)
    rest = F.slice(F.col("lines"), 2, F.size("lines"))
    orphans = runs.where(F.col("anchor_line").isNull()).select(
        "source_path",
        first["line_number"].alias("line_number"),
        F.size("lines").cast("int").alias("line_count"),
        F.lit("unknown").alias("layout"),
        first["value"].alias("raw"),
        *[F.lit(None).cast(numbered.schema[name].dataType).alias(name) for name in fields],
        F.nullif(F.array_join(F.transform(rest, lambda x: x["value"]), "\n"), F.lit("")).alias(
            "continuation"
        ),
    )
    return union_by_name([headers, orphans])


def node_id_in_message(message: Column) -> Column:
    """The node id a record names in its own log prefix, else null.

    Recognises ``nodeId=N`` / ``brokerId=N`` (SocketServer), ``[QuorumController id=N]``,
    ``[Token Manager on Node N]``, ``[StandardAuthorizer N]``, ``[KafkaServer id=N]``,
    ``[Broker id=N]``, ``[Controller id=N]``, ``[KafkaApi-N]`` and the Connect herder's
    ``[Worker clientId=<id>, ...]``: the first of those prefixes in the text followed by an
    id (``_NODE_ID_PATTERN``'s group). Null in, null out.

    With the project's JVM functions in the active session (``jobs.jvm_parsers``), one scan of
    the text (``transforms.bronze.native.NODE_ID_FUNCTION``, the same answers); otherwise
    ``node_id_in_message_by_expressions``, whose seven substring searches over every line's
    message cost a third of bronze's persisted layer at 1M lines (issue 15).
    """
    native = registered_function(NODE_ID_FUNCTION)
    return native(message) if native else node_id_in_message_by_expressions(message)


def node_id_in_message_by_expressions(message: Column) -> Column:
    """``node_id_in_message`` by Spark expressions alone: ``_NODE_ID_MARKERS``' substring
    searches, then the regex on the few texts that hold one."""
    # Every prefix above contains one of these; a substring search skips the regex for the
    # rest (most lines), which is several times cheaper than the alternation at every position.
    pretest = reduce(operator.or_, [message.contains(marker) for marker in _NODE_ID_MARKERS])
    return F.when(pretest, F.nullif(F.regexp_extract(message, _NODE_ID_PATTERN, 1), F.lit("")))


def with_node_id(
    records: DataFrame, sources: DataFrame, printed: DataFrame | None = None
) -> DataFrame:
    """Attach each record's node id and UTC timestamp, using its source file's metadata.

    Precedence (docs/architecture.md, node identity): the node's own properties file beside the log
    (``node.id`` / ``broker.id``), then the id the record itself prints, then the only id
    printed anywhere in the same file, then anywhere in the same node folder, then the folder
    name.

    Input columns:
        records: ``fold_records`` output (own_node_id: the id the record's message prints,
        computed once by ``number_lines``). sources (small, broadcast): source_path (string),
        node_key (string: the node folder), node_folder_name (string), config_node_id
        (string, nullable), time_zone (string). printed: source_path and own_node_id of
        every record (the record-start lines of ``narrow_lines``), read for the ids printed
        in each file instead of ``records`` (which then need not be computed twice); the
        ids of ``records`` when None.
    Output columns: records' columns except own_node_id + node_id (string), node_id_source
    (string: config, log_prefix, folder), log_ts (timestamp, UTC: log4j times converted from
    the source's zone, JSON records' ISO-8601 times with their own offset), log_date (date).
    """
    with_source = records.join(F.broadcast(sources), "source_path", "left").withColumnRenamed(
        "own_node_id", "_own_id"
    )
    ids = with_source
    if printed is not None:
        nodes = F.broadcast(sources.select("source_path", "node_key"))
        ids = printed.withColumnRenamed("own_node_id", "_own_id").join(nodes, "source_path", "left")
    # One pass over the records for both levels: per file, then per node from the (small)
    # per-file result.
    per_file = ids.groupBy("source_path", "node_key").agg(
        F.min("_own_id").alias("_file_min"), F.max("_own_id").alias("_file_max")
    )
    per_node = per_file.groupBy("node_key").agg(
        F.min("_file_min").alias("_node_min"), F.max("_file_max").alias("_node_max")
    )
    unique_in_file = F.when(F.col("_file_min") == F.col("_file_max"), F.col("_file_min"))
    unique_in_node = F.when(F.col("_node_min") == F.col("_node_max"), F.col("_node_min"))
    from_logs = F.coalesce(F.col("_own_id"), unique_in_file, unique_in_node)
    log_ts = record_log_ts(F.col("layout"), F.col("ts_text"), F.col("time_zone"))
    return (
        with_source.join(F.broadcast(per_file.drop("node_key")), "source_path", "left")
        .join(F.broadcast(per_node), "node_key", "left")
        .withColumn(
            "node_id",
            F.coalesce(F.col("config_node_id"), from_logs, F.col("node_folder_name")),
        )
        .withColumn(
            "node_id_source",
            F.when(F.col("config_node_id").isNotNull(), F.lit("config"))
            .when(from_logs.isNotNull(), F.lit("log_prefix"))
            .when(F.col("node_folder_name").isNotNull(), F.lit("folder")),
        )
        .withColumn("log_ts", log_ts)
        .withColumn("log_date", F.to_date("log_ts"))
    )


def record_log_ts(layout: Column, ts_text: Column, time_zone: Column) -> Column:
    """A record's UTC timestamp: a log4j time read in its source's zone (UTC when null), a JSON
    record's ISO-8601 time with its own offset (CloudEvents ``time``); null when there is no
    time or it does not parse."""
    log4j_ts = local_log_ts(ts_text, F.coalesce(time_zone, F.lit("UTC")))
    return F.when(layout == "json", ts_text.try_cast("timestamp")).otherwise(log4j_ts)


def record_dates(numbered: DataFrame, runs: DataFrame, sources: DataFrame) -> DataFrame:
    """The distinct ``log_date`` values of the records ``fold_records`` and ``with_node_id``
    make of these lines, read from the lines alone (a record's time is its header line's).

    Input columns: ``number_lines`` or ``narrow_lines`` output (source_path, line_kind,
    layout, ts_text); ``continuation_runs`` output; sources as for
    ``with_node_id`` (source_path, time_zone).
    Output columns: log_date (date; null for records without a time, such as the continuation
    lines at the start of a file), one row per value.
    """
    zones = F.broadcast(sources.select("source_path", "time_zone"))
    headers = (
        numbered.where(F.col("line_kind").isin(*RECORD_STARTS))
        .join(zones, "source_path", "left")
        .select(
            F.to_date(record_log_ts(F.col("layout"), F.col("ts_text"), F.col("time_zone"))).alias(
                "log_date"
            )
        )
    )
    orphans = runs.where(F.col("anchor_line").isNull()).select(
        F.lit(None).cast("date").alias("log_date")
    )
    return union_by_name([headers, orphans]).distinct()


def to_raw_lines(records: DataFrame, run_id: str, fingerprint_key: bytes) -> DataFrame:
    """Shape records into the ``bronze.raw_lines`` contract, secrets fingerprinted and removed.

    Token HMACs, SASL ``authBytes`` and Envelope payloads become
    ``[REDACTED hmac-sha256:<fingerprint>]`` at this first point where a record becomes a row
    (``transforms.bronze.redaction``), so no table ever holds them.

    Args:
        records: ``transforms.silver.families.with_family`` output.
        run_id: the run's id.
        fingerprint_key: the lake's fingerprint key (``jobs.fingerprint_keys``).

    Output columns: exactly ``schemas.raw_lines.RAW_LINES``.
    """
    columns = {field.name: F.col(field.name) for field in RAW_LINES.fields}
    columns["run_id"] = F.lit(run_id)
    secret_columns = ("raw", "message", "continuation")
    # A record's message is a piece of its raw line: the pre-test reads raw and continuation.
    redacted = with_secrets_fingerprinted(
        records, secret_columns, fingerprint_key, covering=("raw", "continuation")
    )
    return redacted.select(
        *[columns[f.name].cast(f.dataType).alias(f.name) for f in RAW_LINES.fields]
    )
