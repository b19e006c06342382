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
from transforms.columns import group_at, groups, rest_of
from transforms.kafka_apis import api_key_of
from transforms.quarantine import Check

HEADER_RE = (
    r"^RequestHeader\(apiKey=([A-Za-z0-9_]+), apiVersion=(-?\d+), clientId=(.*?),"
    r" correlationId=(-?\d+)\) -- "
)
_CONNECTION_SEP = " from connection "
_RESPONSE_SEP = ",response:"
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


def split_string_form(body: Column, materialised: bool = True) -> list[dict[str, Column]]:
    """Intermediate columns to materialise, stage after stage (each stage reads the columns of
    the ones before it), before ``string_groups``: ``_s_tail`` (text after the last
    `` from connection ``), ``_s_first`` (the text before the first one), ``_s_before`` (the
    text before the last one), ``_s_head`` (the header) and ``_s_rest`` (after the header:
    request, response). Plain string functions where a regex
    is not needed: a lazy or backtracking regex over a whole line costs several times more.
    Each value is computed once: one expression reused in several columns of one stage is
    evaluated once per use (a search from the end of the line for the tail, each time).

    ``materialised=False``: each stage reads the expressions of the ones before it instead of
    their columns, so that every column is an expression of ``body`` alone
    (``string_form_struct``): the same values, computed again at each use, for a plan in which
    few records take this path (issue 15, forty-eighth part)."""

    def ref(name: str, expression: Column) -> Column:
        return F.col(name) if materialised else expression

    tail = F.when(body.contains(_CONNECTION_SEP), F.nullif(
        F.substring_index(body, _CONNECTION_SEP, -1), F.lit("")
    ))  # fmt: skip
    first = F.substring_index(body, _CONNECTION_SEP, 1)
    tail_ref, first_ref = ref("_s_tail", tail), ref("_s_first", first)
    # With one separator (nearly always) the text before it is ``_s_first``: a check of byte
    # lengths tells, where character positions would walk the whole line twice.
    one_separator = F.octet_length(body) == (
        F.octet_length(first_ref) + len(_CONNECTION_SEP.encode()) + F.octet_length(tail_ref)
    )
    before = (
        F.when(tail_ref.isNull(), body)
        .when(one_separator, first_ref)
        .otherwise(
            body.substr(F.lit(1), F.length(body) - F.length(tail_ref) - len(_CONNECTION_SEP))
        )
    )
    before_ref = ref("_s_before", before)
    header = F.nullif(F.regexp_extract(before_ref, HEADER_RE, 0), F.lit(""))
    head_ref = ref("_s_head", header)
    rest = F.when(head_ref.isNotNull(), rest_of(before_ref, F.length(head_ref) + 1))
    return [
        {"_s_tail": tail, "_s_first": first},
        {"_s_before": before},
        {"_s_head": header},
        {"_s_rest": rest},
    ]


def string_groups(head: Column, tail: Column) -> dict[str, Column]:
    """The header's and the metrics' regex groups, each regex evaluated once
    (``transforms.columns.groups``): ``_s_hg`` (HEADER_RE, 4) and ``_s_mg`` (METRICS_RE, 15).
    Materialise them before ``string_fields`` / ``string_checks``, which read them many times."""
    return {"_s_hg": groups(head, HEADER_RE, 4), "_s_mg": groups(tail, METRICS_RE, 15)}


def string_form_struct(tail: Column, head: Column, rest: Column) -> Column:
    """The string form's parts as one struct, ``STRING_FORM_PARTS``: ``tail``, ``head``,
    ``rest`` (``split_string_form``'s ``_s_tail``, ``_s_head``, ``_s_rest``, strings) and
    their regex groups ``header_groups``, ``metric_groups`` (``string_groups``, array<string>).
    Materialise it: ``string_fields`` and ``string_checks`` read its fields many times."""
    found = string_groups(head, tail)
    return F.struct(
        tail.alias("tail"),
        head.alias("head"),
        rest.alias("rest"),
        found["_s_hg"].alias("header_groups"),
        found["_s_mg"].alias("metric_groups"),
    )


def _metric(metric_groups: Column, name: str) -> Column:
    return group_at(metric_groups, _METRIC_NAMES.index(name) + 1)


def string_fields(header_groups: Column, metric_groups: Column, rest: Column) -> dict[str, Column]:
    """Silver columns of the string form from the ``split_string_form`` / ``string_groups``
    columns.

    Returns:
        name -> Column; numbers parsed with ``try_cast`` (null when not a number), the
        principal verbatim, request/response toString text in request_text / response_text
        (text before / after the first ``,response:``; "" when there is none).
    """
    metrics = {name: _metric(metric_groups, name) for name in _METRIC_NAMES}
    numbers = {silver: metrics[text].try_cast(kind) for text, (silver, kind) in _NUMBERS.items()}
    fields = {name: value for name, value in metrics.items() if not name.startswith("_")}
    api_key_name = group_at(header_groups, 1)
    has_response = rest.contains(_RESPONSE_SEP)
    after_response = F.instr(rest, _RESPONSE_SEP) + len(_RESPONSE_SEP)
    return (
        fields
        | numbers
        | {
            "is_forwarded": F.lit(False),
            "api_key_name": api_key_name,
            "api_key": api_key_of(api_key_name),
            "api_version": group_at(header_groups, 2).try_cast("int"),
            "client_id": F.get(header_groups, 2),
            "correlation_id": group_at(header_groups, 4).try_cast("int"),
            "request_text": F.when(has_response, F.substring_index(rest, _RESPONSE_SEP, 1)).when(
                rest.isNotNull(), F.lit("")
            ),
            "response_text": F.when(has_response, rest_of(rest, after_response)).when(
                rest.isNotNull(), F.lit("")
            ),
        }
    )


def string_checks(
    is_string: Column,
    body: Column,
    *,
    head: Column,
    rest: Column,
    tail: Column,
    metric_groups: Column,
    header_groups: Column,
) -> list[Check]:
    """Quarantine checks of the string form, in priority order.

    A line that stops before its fixed parts are complete (inside the header, before
    ``,response:``, `` from connection `` or ``,listener:``) is ``request_truncated``; complete
    parts that do not match are ``request_malformed_header`` / ``request_malformed_metrics``;
    a metric that is not a number is ``request_wrong_type_<column>``.
    """
    no_head = is_string & head.isNull()
    metrics_ok = F.when(tail.isNotNull(), metric_groups.isNotNull())
    checks: list[Check] = [
        (no_head & ~body.contains(") -- "), "request_truncated", "cut inside RequestHeader(...)"),
        (no_head, "request_malformed_header", "RequestHeader(...) -- does not match"),
        (
            is_string & ~F.coalesce(rest.contains(_RESPONSE_SEP), F.lit(False)),
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
            is_string & group_at(header_groups, 2).try_cast("int").isNull(),
            "request_wrong_type_api_version",
            "apiVersion",
        ),
        (
            is_string & group_at(header_groups, 4).try_cast("int").isNull(),
            "request_wrong_type_correlation_id",
            "correlationId",
        ),
    ]
    for text, (silver, kind) in _NUMBERS.items():
        value = _metric(metric_groups, text)
        bad = is_string & value.isNotNull() & value.try_cast(kind).isNull()
        checks.append((bad, f"request_wrong_type_{silver}", F.substring(value, 1, 200)))
    return checks


def struct_top_level_error_code(text: Column) -> Column:
    """Top-level ``error_code=N`` of a ``Struct.toString`` text (``{error_code=34,...}``).

    A field is top-level when no ``{`` or ``[`` group encloses it. When ``error_code`` is a
    top-level field before the first group (``{error_code=..}``, Fetch's
    ``{throttle_time_ms=0,error_code=0,...,responses=[...]}``) one regex finds it; otherwise
    nested groups are removed innermost first (12 passes) so that only depth-1 fields remain.
    Either way the result is the first depth-1 ``error_code``; a text without
    ``error_code=`` skips both.

    Returns:
        int Column; null when the text has no top-level error_code, or for null.
    """
    top_level = r"(?:^|,)error_code=(-?\d+)(?:,|$)"
    flat = F.regexp_extract(text, r"(?s)^\{(.*)\}$", 1)
    before_groups = _group(flat, r"^(?:[^{}\[\]]*?,)?error_code=(-?\d+)(?:,|$)", 1)
    for _ in range(_FLATTEN_PASSES):
        flat = F.regexp_replace(flat, _INNERMOST_GROUP_RE, "")
    found = F.coalesce(before_groups, _group(flat, top_level, 1))
    return F.when(text.contains("error_code="), found).try_cast("int")
