"""Parse Kafka Connect REST access-log lines into silver.connect_requests rows (rest_access).

Jetty writes them through logger ``org.apache.kafka.connect.runtime.rest.RestServer`` at INFO
(docs/kafka-log-formats.md section 8.5; ``RestServer.java`` at the tags named):
* <=2.3 ``Slf4jRequestLog`` with ``setLogLatency(true)``: ``%{client}a - %u [%t] "%r" %s %O``,
  then ``' '`` after the byte count and ``' ' + latency``: two spaces before the latency (ms);
  an unknown length is written `` - ``.
* 2.4-3.0 ``CustomRequestLog(EXTENDED_NCSA_FORMAT + " %msT")``: Jetty's token pattern reads
  ``%m`` (request method) then the literal ``sT``, so the line ends ``"<referer>" "<agent>" GETsT``.
* 3.1+ ``EXTENDED_NCSA_FORMAT + " %{ms}T"`` (commit db42afd6e24): ``... "<referer>" "<agent>"
  <ms>``.
* ``%t`` is ``[dd/MMM/yyyy:HH:mm:ss ZZZ]`` in GMT; IPv6 clients are bracketed (``[::1]``).
* Forwarded requests: ``RestClient`` sends User-Agent ``kafka-connect``;
  ``HerderRequestHandler.completeOrForwardRequest`` adds ``forward=true|false`` to the URL.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import connect_requests as schema
from transforms.columns import group as _group
from transforms.columns import lookup
from transforms.quarantine import Check, first_failure

LOGGER_RE = r"^org\.apache\.kafka\.connect\.runtime\.rest\.RestServer(?::\d+)?$"
#: Claim: a client address, then ' -' (every layout). Cut lines are claimed and quarantined; the
#: server's own messages ('REST server listening at ...', 'Advertised URI: ...') never match.
CLAIM_RE = r"^(?:\[[0-9A-Fa-f:.]+(?:%[\w.]+)?\]|[\w.:%-]+) -(?: |$)"
#: Groups: 1 client, 2 user, 3 time, 4 request line, 5 status, 6 bytes, 7 <=2.3 latency,
#: 8 referer, 9 user agent, 10 last token (latency ms, or '<METHOD>sT').
ACCESS_RE = r'^(\S+) - (.+?) \[([^\]]*)\] "([^"]*)" (\S+) (\d+|-)(?:  (\S+)| "(.*?)" "(.*)" (\S+))$'
REQUEST_LINE_RE = r"^(\S+) (\S+) (\S+)$"
REQUEST_TS_PATTERN = "dd/MMM/yyyy:HH:mm:ss Z"
_TYPO_RE = r"^(?:[A-Z]+|-)sT$"
_PATH_RE = r"^(?:[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*)?([^?#]*)"
_CONNECTOR_RE = r"^/connectors/([^/]+)"
#: A query parameter's value, for the 'forward' / 'validated' flags Jersey reads as Boolean.
_FLAG_RE = r"(?:^|&){name}=([^&#]*)"
#: rest_access versions by access_log_format.
_VERSIONS = {
    schema.FORMAT_NCSA_LATENCY: "<=2.3",
    schema.FORMAT_EXTENDED_TYPO: "2.4-3.0",
    schema.FORMAT_EXTENDED_LATENCY: "3.1+",
}
_FIELDS: tuple[str, ...] = (
    "_client", "_user", "_time", "_request", "_status", "_bytes", "_old_latency", "_referer",
    "_agent", "_last",
)  # fmt: skip


def _dash_null(value: Column) -> Column:
    """Jetty writes '-' for an absent value (``CustomRequestLog.append``)."""
    return F.nullif(value, F.lit("-"))


def is_connect_rest_record(logger: Column, message: Column) -> Column:
    """True for the Connect REST server's access-log lines, including cut ones.

    Args:
        logger: logger name (``:NNN`` suffix allowed); only ``...connect.runtime.rest.RestServer``.
        message: must start with a client address followed by `` -`` (``CLAIM_RE``), so that
            the server's start/stop messages stay out of scope.

    Returns:
        boolean Column, never null (null logger or message gives false).
    """
    return F.coalesce(logger.rlike(LOGGER_RE) & message.rlike(CLAIM_RE), F.lit(False))


def client_address(raw: Column) -> Column:
    """Jetty ``%{client}a`` without IPv6 brackets (``[0:0:0:0:0:0:0:1]`` -> ``0:0:0:0:0:0:0:1``);
    '-' and null give null."""
    return F.regexp_replace(_dash_null(raw), r"^\[(.*)\]$", "$1")


def request_path(target: Column) -> Column:
    """Path of a request target or absolute URL, still encoded; null if empty or null."""
    return _group(target, _PATH_RE, 1)


def request_query(target: Column) -> Column:
    """Query string (after '?', before '#') of a request target or URL; null if none."""
    return _group(target, r"^[^?#]*\?([^#]*)", 1)


def query_flag(query: Column, name: str) -> Column:
    """Boolean query parameter ``name`` ('true'/'false', any case); null if absent or other."""
    value = F.lower(F.regexp_extract(query, _FLAG_RE.format(name=name), 1))
    return F.when(value == "true", F.lit(True)).when(value == "false", F.lit(False))


def connector_in_path(path: Column, *, decode: bool) -> Column:
    """The ``<name>`` of ``/connectors/<name>/...``; null for other paths or null.

    Args:
        path: a request path.
        decode: percent-decode the name (access-log URIs are encoded; ``ConnectExceptionMapper``
            logs the decoded path). '+' is kept: in a path it is not a space.
    """
    name = _group(path, _CONNECTOR_RE, 1)
    if not decode:
        return name
    return F.coalesce(F.try_url_decode(F.regexp_replace(name, r"\+", "%2B")), name)


def endpoint_kind(method: Column, path: Column) -> Column:
    """Which Connect REST resource a request targets (ENDPOINT_KINDS); null for a null path.

    The internal endpoints (section 8.1) are ``POST /connectors/<name>/tasks`` and
    ``PUT /connectors/<name>/fence``; other methods on those paths are public (``GET .../tasks``
    lists tasks). A null method counts as neither POST nor PUT.
    """
    tasks = path.rlike(r"^/connectors/[^/]+/tasks/?$") & (method == "POST")
    fence = path.rlike(r"^/connectors/[^/]+/fence/?$") & (method == "PUT")
    return (
        F.when(path.isNull(), F.lit(None).cast("string"))
        .when(path.rlike(r"^/?$"), F.lit("root"))
        .when(path.rlike(r"^/connector-plugins(?:/|$)"), F.lit("connector_plugins"))
        .when(F.coalesce(tasks, F.lit(False)), F.lit(schema.ENDPOINT_INTERNAL_TASKS))
        .when(F.coalesce(fence, F.lit(False)), F.lit(schema.ENDPOINT_INTERNAL_FENCE))
        .when(path.rlike(r"^/connectors(?:/|$)"), F.lit("connectors"))
        .otherwise(F.lit("other"))
    )


def is_internal_endpoint(kind: Column) -> Column:
    """True for internal_tasks / internal_fence, false for other kinds, null for null."""
    return kind.isin(schema.ENDPOINT_INTERNAL_TASKS, schema.ENDPOINT_INTERNAL_FENCE)


def connect_request_columns(bronze_columns: list[str], values: dict[str, Column]) -> list[Column]:
    """The CONNECT_REQUESTS columns not in bronze, in table order, typed; absent ones null."""
    return [
        values.get(f.name, F.lit(None)).cast(f.dataType).alias(f.name)
        for f in schema.CONNECT_REQUESTS.fields
        if f.name not in bronze_columns
    ]


def _access_format(old_latency: Column, last: Column) -> Column:
    return (
        F.when(old_latency.isNotNull(), F.lit(schema.FORMAT_NCSA_LATENCY))
        .when(last.rlike(r"^\d+$"), F.lit(schema.FORMAT_EXTENDED_LATENCY))
        .when(last.rlike(_TYPO_RE), F.lit(schema.FORMAT_EXTENDED_TYPO))
    )


def _checks() -> list[Check]:
    """Quarantine checks in priority order (the first failing one wins)."""
    c, unmatched = F.col, F.col("_request").isNull()
    blank = F.trim(F.coalesce(c("message"), F.lit(""))) == ""
    cut = "starts like a Jetty access line (address - ...), then stops matching: cut short"
    last = F.coalesce(c("_old_latency"), c("_last"))
    status, time, request = c("_status"), c("_time"), c("_request")

    def bad(what: str, value: Column) -> Column:
        return F.concat(F.lit(f"not {what}: "), value)

    return [
        (blank, "missing_field_message", "message is null or blank"),
        (unmatched & c("message").rlike(CLAIM_RE), "connect_rest_truncated_line", cut),
        (unmatched, "connect_rest_unrecognized_format", "no Jetty access-log layout (8.5)"),
        (c("http_protocol").isNull(), "connect_rest_bad_request_line", bad("'M URI P'", request)),
        (~status.rlike(r"^[1-5]\d\d$"), "connect_rest_bad_status", bad("an HTTP status", status)),
        (c("access_log_format").isNull(), "connect_rest_bad_latency", bad("ms or '<M>sT'", last)),
        (c("request_ts").isNull(), "connect_rest_bad_timestamp", bad(REQUEST_TS_PATTERN, time)),
    ]  # fmt: skip


def parse_connect_rest(bronze: DataFrame) -> DataFrame:
    """Parse Connect REST access-log records (family 'connect_rest'); no row dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES); uses message (string), log_ts (timestamp, UTC),
        log_date (date).

    Output columns:
        every input column, then the CONNECT_REQUESTS columns not already in bronze (event_ts
        timestamp = log_ts, record_kind 'rest_access', client_address, request_ts timestamp
        (UTC, from the GMT ``%t``), status int, response_bytes long, latency_ms long (ms),
        access_log_format, endpoint_kind ... event_date date; worker-only columns null), then
        reason_code (string, null = parsed) and reason_detail (string).
        See schemas.connect_requests for each column.

    Null behaviour: a null or blank message gets 'missing_field_message'; '-' fields (user,
    bytes, referer, user agent) are null; latency_ms is null for the 2.4-3.0 '%msT' layout.
    Month names must be English (Jetty uses the JVM default locale): others quarantine as
    'connect_rest_bad_timestamp'.
    """
    c = F.col
    extracted = bronze.withColumns(
        {name: _group(c("message"), ACCESS_RE, i) for i, name in enumerate(_FIELDS, 1)}
    )
    request = {
        name: _group(c("_request"), REQUEST_LINE_RE, i)
        for i, name in enumerate(("http_method", "uri", "http_protocol"), 1)
    }
    fields = extracted.withColumns(
        {
            **request,
            "access_log_format": _access_format(c("_old_latency"), c("_last")),
            "request_ts": F.try_to_timestamp(c("_time"), F.lit(REQUEST_TS_PATTERN)),
            "client_address": client_address(c("_client")),
            "user_agent": _dash_null(c("_agent")),
        }
    )
    path, query = request_path(c("uri")), request_query(c("uri"))
    kind = endpoint_kind(c("http_method"), path)
    forwarded = query.rlike(r"(?:^|&)forward=") | (c("user_agent") == "kafka-connect")
    values = {
        "event_ts": c("log_ts"),
        "event_date": c("log_date"),
        "record_kind": F.lit(schema.KIND_REST_ACCESS),
        "kafka_versions": lookup(_VERSIONS, c("access_log_format")),
        "client_address": c("client_address"),
        "remote_user": _dash_null(c("_user")),
        "request_ts": c("request_ts"),
        **{name: c(name) for name in ("http_method", "uri", "http_protocol", "user_agent")},
        "uri_path": path,
        "query": query,
        "status": F.when(c("_status").rlike(r"^\d{1,9}$"), c("_status").cast("int")),
        "response_bytes": F.when(c("_bytes").rlike(r"^\d{1,18}$"), c("_bytes").cast("long")),
        "referer": _dash_null(c("_referer")),
        "latency_ms": F.coalesce(c("_old_latency"), c("_last")).try_cast("long"),
        "access_log_format": c("access_log_format"),
        "connector_name": connector_in_path(path, decode=True),
        "endpoint_kind": kind,
        "is_internal_endpoint": is_internal_endpoint(kind),
        "is_forwarded_request": F.coalesce(forwarded, F.lit(False)),
        "forward_param": query_flag(query, "forward"),
        "validated_param": query_flag(query, "validated"),
    }
    failed = fields.withColumn("_failure", first_failure(_checks()))
    reasons = ("_failure.reason_code", "_failure.reason_detail")
    return failed.select(
        *bronze.columns, *connect_request_columns(bronze.columns, values), *reasons
    )
