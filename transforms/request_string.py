"""The 1.0-2.7 string form of ``Completed request:`` (``RequestChannel.updateRequestMetrics``).

``Completed request:`` + ``RequestHeader(apiKey=<ApiKeys name>, apiVersion=n, clientId=c,
correlationId=k) -- <request.toString>`` + ``,response:<response>`` + `` from connection <id>``
+ ``;totalTime:d,requestQueueTime:d,localTime:d,remoteTime:d,throttleTime:l,
responseQueueTime:d,sendTime:d,securityProtocol:p,principal:<type:name>,listener:l`` then
``,clientInformation:ClientInformation(softwareName=n, softwareVersion=v)`` (2.5+),
``,temporaryMemoryBytes:l`` and ``,messageConversionsTime:d`` (only when > 0). Checked at tags
1.0.0, 1.1.0, 2.0.0, 2.3.0, 2.4.0 and 2.7.0. Doubles are Java ``Double.toString``; request and
response are ``Struct.toString`` (``{name=value,...}``).

Long lines are split in stages (last `` from connection ``, then the header, then the first
``,response:``) so that no regex nests two unbounded groups.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from transforms.columns import group as _group
from transforms.kafka_apis import api_key_of
from transforms.quarantine import Check

HEADER_RE = (
    r"^RequestHeader\(apiKey=([A-Za-z0-9_]+), apiVersion=(-?\d+), clientId=(.*?),"
    r" correlationId=(-?\d+)\) -- "
)
_CONNECTION_SEP = " from connection "
_AFTER_CONNECTION_RE = r"(?s)^.* from connection (.*)$"
#: The text after `` from connection ``: connection id, then the metrics.
METRICS_RE = (
    r"^(\S+);totalTime:([^,]*),requestQueueTime:([^,]*),localTime:([^,]*),remoteTime:([^,]*),"
    r"throttleTime:([^,]*),responseQueueTime:([^,]*),sendTime:([^,]*),securityProtocol:([^,]*),"
    r"principal:(.*?),listener:([^,]*?)"
    r"(?:,clientInformation:ClientInformation\(softwareName=(.*?), softwareVersion=(.*?)\))?"
    r"(?:,temporaryMemoryBytes:([^,]*))?(?:,messageConversionsTime:([^,]*))?$"
)
_METRIC_NAMES = (
    "connection_id", "_total", "_request_queue", "_local", "_remote", "_throttle",
    "_response_queue", "_send", "security_protocol", "principal", "listener",
    "client_software_name", "client_software_version", "_temporary_memory", "_conversions",
)  # fmt: skip
#: Text metric -> (silver column, type).
_NUMBERS: dict[str, tuple[str, str]] = {
    "_total": ("total_time_ms", "double"),
    "_request_queue": ("request_queue_time_ms", "double"),
    "_local": ("local_time_ms", "double"),
    "_remote": ("remote_time_ms", "double"),
    "_throttle": ("throttle_time_ms", "long"),
    "_response_queue": ("response_queue_time_ms", "double"),
    "_send": ("send_time_ms", "double"),
    "_temporary_memory": ("temporary_memory_bytes", "long"),
    "_conversions": ("message_conversions_time_ms", "double"),
}
#: Nested ``{...}`` / ``[...]`` groups without nested brackets; removed innermost first.
_INNERMOST_GROUP_RE = r"\{[^{}\[\]]*\}|\[[^{}\[\]]*\]"
_FLATTEN_PASSES = 12


def split_string_form(body: Column) -> dict[str, Column]:
    """Intermediate columns to materialise before ``string_fields``: ``_s_tail`` (text after the
    last `` from connection ``) and ``_s_rest`` (after the header: request, response)."""
    tail = _group(body, _AFTER_CONNECTION_RE, 1)
    before = F.when(
        tail.isNotNull(),
        body.substr(F.lit(1), F.length(body) - F.length(tail) - len(_CONNECTION_SEP)),
    ).otherwise(body)
    header = F.regexp_extract(before, HEADER_RE, 0)
    rest = F.when(header != "", before.substr(F.length(header) + 1, F.length(before)))
    return {"_s_tail": tail, "_s_rest": rest, "_s_head": F.nullif(header, F.lit(""))}


def string_fields(head: Column, rest: Column, tail: Column) -> dict[str, Column]:
    """Silver columns of the string form from the ``split_string_form`` columns.

    Returns:
        name -> Column; numbers parsed with ``try_cast`` (null when not a number), the
        principal verbatim, request/response toString text in request_text / response_text.
    """
    metrics = {name: _group(tail, METRICS_RE, i) for i, name in enumerate(_METRIC_NAMES, 1)}
    numbers = {silver: metrics[text].try_cast(kind) for text, (silver, kind) in _NUMBERS.items()}
    fields = {name: value for name, value in metrics.items() if not name.startswith("_")}
    api_key_name = _group(head, HEADER_RE, 1)
    return (
        fields
        | numbers
        | {
            "is_forwarded": F.lit(False),
            "api_key_name": api_key_name,
            "api_key": api_key_of(api_key_name),
            "api_version": _group(head, HEADER_RE, 2).try_cast("int"),
            "client_id": F.regexp_extract(head, HEADER_RE, 3),
            "correlation_id": _group(head, HEADER_RE, 4).try_cast("int"),
            "request_text": F.regexp_extract(rest, r"(?s)^(.*?),response:", 1),
            "response_text": F.regexp_extract(rest, r"(?s)^.*?,response:(.*)$", 1),
        }
    )


def string_checks(
    is_string: Column, body: Column, head: Column, rest: Column, tail: Column
) -> list[Check]:
    """Quarantine checks of the string form, in priority order.

    A line that stops before its fixed parts are complete (inside the header, before
    ``,response:``, `` from connection `` or ``,listener:``) is ``request_truncated``; complete
    parts that do not match are ``request_malformed_header`` / ``request_malformed_metrics``;
    a metric that is not a number is ``request_wrong_type_<column>``.
    """
    no_head = is_string & head.isNull()
    metrics_ok = tail.rlike(METRICS_RE)
    checks: list[Check] = [
        (no_head & ~body.rlike(r"\) -- "), "request_truncated", "cut inside RequestHeader(...)"),
        (no_head, "request_malformed_header", "RequestHeader(...) -- does not match"),
        (
            is_string & ~F.coalesce(rest.contains(",response:"), F.lit(False)),
            "request_truncated",
            "no ',response:'",
        ),
        (is_string & tail.isNull(), "request_truncated", "no ' from connection '"),
        (
            is_string & ~metrics_ok & ~tail.contains(",listener:"),
            "request_truncated",
            "metrics cut before ',listener:'",
        ),
        (is_string & ~metrics_ok, "request_malformed_metrics", "metrics do not match"),
        (
            is_string & _group(head, HEADER_RE, 2).try_cast("int").isNull(),
            "request_wrong_type_api_version",
            "apiVersion",
        ),
        (
            is_string & _group(head, HEADER_RE, 4).try_cast("int").isNull(),
            "request_wrong_type_correlation_id",
            "correlationId",
        ),
    ]
    for text, (silver, kind) in _NUMBERS.items():
        value = _group(tail, METRICS_RE, _METRIC_NAMES.index(text) + 1)
        bad = is_string & value.isNotNull() & value.try_cast(kind).isNull()
        checks.append((bad, f"request_wrong_type_{silver}", F.substring(value, 1, 200)))
    return checks


def struct_top_level_error_code(text: Column) -> Column:
    """Top-level ``error_code=N`` of a ``Struct.toString`` text (``{error_code=34,...}``).

    Nested groups are removed innermost first (12 passes) so that only depth-1 fields remain.

    Returns:
        int Column; null when the text has no top-level error_code, or for null.
    """
    flat = F.regexp_extract(text, r"(?s)^\{(.*)\}$", 1)
    for _ in range(_FLATTEN_PASSES):
        flat = F.regexp_replace(flat, _INNERMOST_GROUP_RE, "")
    return _group(flat, r"(?:^|,)error_code=(-?\d+)(?:,|$)", 1).try_cast("int")
