"""Parse Connect herder-side request events into silver.connect_requests rows (worker_event).

Wordings (EVENT_PATTERNS; docs/kafka-log-formats.md sections 8.3, 8.4) checked in apache/kafka at
1.1.0, 2.4.0, 2.7.0, 2.8.0, 3.3.0, 3.4.0, 3.5.0, 3.8.0, 3.9.0-rc3 and trunk 1eb7644349c:
* ``RestClient.httpRequest`` ERROR ``... forwarding REST request ...`` (URL added in 3.9 by
  commit 966f2eb3efd), exception folded into ``continuation``.
* ``DistributedHerder`` (LogContext ``[Worker clientId=.., groupId=..] ``):
  ``reconfigureConnectorTasksWithExponentialBackoffRetries`` (<=3.4 ``...WithRetry``),
  ``reconfigureConnector``, ``requestTaskReconfiguration``, ``checkForKeyRotation``,
  ``onSessionKeyUpdate``, the constructor's and ``onAssigned``'s KIP-507 warnings.
* ``ConnectExceptionMapper.toResponse``: DEBUG (ERROR when DEBUG is off and the exception is not
  a ConnectRestException) ``Uncaught exception in REST call to /{}``, the path decoded.
* ``DistributedHerder.requestNotSignedProperly`` errors (SIGNATURE_FAILURES) are exception
  messages: they appear in the folded stack trace or the message.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas import connect_requests as schema
from transforms.columns import LineFormat, first_format, format_fields, lookup
from transforms.columns import group as _group
from transforms.quarantine import Check, first_failure
from transforms.silver.connect.rest import (
    connect_request_columns,
    connector_in_path,
    endpoint_kind,
    is_internal_endpoint,
    query_flag,
    request_path,
    request_query,
)

LOGGER_RE = (
    r"^org\.apache\.kafka\.connect\.runtime\.(?:distributed\.DistributedHerder|rest\.RestClient"
    r"|rest\.errors\.ConnectExceptionMapper)(?::\d+)?$"
)
#: Groups: 1 MDC connector, 2 MDC scope, 3 worker client id, 4 group id, 5 the text after them.
PREFIX_RE = r"(?s)^(?:\[([^\]|]+)\|([^\]]+)\] )?(?:\[Worker clientId=(.*?), groupId=(.*?)\] )?(.*)$"
_KIP = r" .*see KIP-507: \S+"
_NOW = r" Distributing new key now\."
#: event_type -> (head, rest, {column: group}) on the text after the prefixes; ``^head`` is how
#: the line starts (claimed; 'cut short' if the rest then fails), ``^head rest\s*$`` the wording.
EVENT_PATTERNS: dict[str, tuple[str, str, dict[str, int]]] = {
    "forward_failed": (
        r"(IO error|Thread was interrupted|Error) forwarding REST request", r"(?: to (.*) :|:)?",
        {"_forward": 1, "target_url": 2},
    ),
    "reconfigure_request_failed": (
        r"Request to leader to reconfigure", r" connector tasks failed", {},
    ),
    "reconfigure_retry_expected_stale_key": (
        r"Failed to reconfigure connector's tasks",
        r"( \((.*)\))?, possibly due to expired session key\. Retrying after backoff",
        {"_parens": 1, "_name": 2},
    ),
    # ' ' where '({})' belongs: the real sample of section 11, name removed by its reporter.
    "reconfigure_retry": (
        r"Failed to reconfigure connector's tasks", r"( \((.*)\)| )?, retrying after backoff([.:])",
        {"_parens": 1, "_name": 2, "_end": 3},
    ),
    "reconfigure_unexpected_error": (
        r"Unexpected error during (?:connector )?task reconfiguration", r":", {},
    ),
    "task_reconfiguration_failed": (
        r"Task reconfiguration for ",
        r"(.*) failed unexpectedly, this connector will not be properly reconfigured unless"
        r" manually triggered\.",
        {"_name": 1},
    ),
    "session_key_distributing": (r"Distributing new session key", "", {}),
    "session_key_missing_distributing": (
        r"Internal request signing is enabled",
        r" but no session key has been distributed yet\." + _NOW, {},
    ),
    "session_key_expired_distributing": (r"Existing key has expired", r"\." + _NOW, {}),
    "session_key_algorithm_changed_distributing": (
        r"Previously-distributed key",
        r" uses different algorithm/key size than required by current worker configuration\."
        + _NOW, {},
    ),
    "session_key_write_failed": (
        r"Failed to write new session key",
        r" to config topic; forcing a read to the end of the config topic before possibly"
        r" retrying", {},
    ),
    "session_key_updated": (r"Session key updated", "", {}),
    "request_verification_disabled": (
        r"Internal request verification will be disabled",
        r" for this cluster as this worker's (\S+) configuration has been set to '(.*?)'\. If this"
        r" is not intentional," + _KIP,
        {"config_name": 1, "config_value": 2},
    ),
    "request_verification_reenabled": (r"Internal request validation has been re-enabled", "", {}),
    "request_verification_downgrade": (
        r"The protocol used by this Connect cluster has been downgraded",
        r" from '(.*?)' to '(.*?)' and internal request validation is now disabled\. This is most"
        r" likely caused by a new worker joining the cluster with an older protocol specified for"
        r" the (\S+) configuration;" + _KIP,
        {"previous_config_value": 1, "config_value": 2, "config_name": 3},
    ),
    "rest_call_exception": (r"Uncaught exception in REST call to ", r"(/.*?)", {"uri": 1}),
}  # fmt: skip
HEAD_RE = "^(?:" + "|".join(head for head, _, _ in EVENT_PATTERNS.values()) + ")"
#: signature_failure_code -> the leader's error message (requestNotSignedProperly, 2.4+).
SIGNATURE_FAILURES: dict[str, str] = {
    "missing_signature": r"Internal request missing required signature",
    "algorithm_not_permitted": r"This worker does not support the '[^']*' key signing algorithm",
    "no_session_key": r"This worker is still starting up and has not been able to read a session",
    "invalid_signature": r"Internal request contained invalid signature",
}
_SIGNATURE_RE = "|".join(SIGNATURE_FAILURES.values())
#: Throwable.toString on the first stack-trace line: 'fully.qualified.Name[: message]'.
EXCEPTION_RE = r"^\s*((?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*)(?:: (.*?))?\s*$"
#: (event_type, the whole wording ``^head rest\s*$``, {column: group}) of each EVENT_PATTERNS entry.
_FORMATS: tuple[LineFormat, ...] = tuple(
    (event_type, rf"^{head}{rest}\s*$", fields)
    for event_type, (head, rest, fields) in EVENT_PATTERNS.items()
)
_FORWARD_KINDS = {"IO error": "io_error", "Thread was interrupted": "interrupted", "Error": "error"}


def is_connect_worker_record(logger: Column, message: Column) -> Column:
    """True for the herder-side request lines this module parses, including cut ones.

    Args:
        logger: DistributedHerder, RestClient or ConnectExceptionMapper (``:NNN`` allowed).
        message: after an optional MDC ``[name|scope] `` and LogContext ``[Worker ...] ``, starts
            like an EVENT_PATTERNS entry (HEAD_RE), or carries a SIGNATURE_FAILURES message.
            Other herder lines ('Skipping reconfiguration of ...', rebalances) are not claimed.

    Returns:
        boolean Column, never null (null logger or message gives false).
    """
    body = F.regexp_extract(message, PREFIX_RE, 5)
    claimed = logger.rlike(LOGGER_RE) & (body.rlike(HEAD_RE) | message.rlike(_SIGNATURE_RE))
    return F.coalesce(claimed, F.lit(False))


def signature_failure_code(text: Column) -> Column:
    """Key of SIGNATURE_FAILURES whose message ``text`` contains (first listed wins); null if
    none or null (section 8.3: 400 / 400 / 503 / 403)."""
    result = F.lit(None).cast("string")
    for code, regex in reversed(SIGNATURE_FAILURES.items()):
        result = F.when(text.rlike(regex), F.lit(code)).otherwise(result)
    return result


def _kafka_versions(event_type: Column, forward: Column) -> Column:
    """The Kafka versions a wording proves; null when all versions agree. RestClient: 'IO error
    forwarding REST request: ' <=3.8, 'Error forwarding REST request' 3.3-3.8, '... to {} :' 3.9+.
    Retry: 'tasks, ...backoff:' <=2.7, 'tasks ({}), ...backoff:' 2.8-3.4, '...backoff.' 3.5+;
    stale-key DEBUG: no '({})' before 2.8."""
    e, parens, end, url = event_type, F.col("_parens"), F.col("_end"), F.col("target_url")
    forward_failed, retry = e == "forward_failed", e == "reconfigure_retry"
    stale = e == "reconfigure_retry_expected_stale_key"
    return (
        F.when(forward_failed & url.isNotNull(), F.lit("3.9+"))
        .when(forward_failed & (forward == "IO error"), F.lit("<=3.8"))
        .when(forward_failed & (forward == "Error"), F.lit("3.3-3.8"))
        .when(stale, F.when(parens.isNull(), F.lit("2.4-2.7")).otherwise(F.lit("2.8+")))
        .when(retry & (end == "."), F.lit("3.5+"))
        .when(retry & parens.isNull(), F.lit("<=2.7"))
        .when(retry, F.lit("2.8-3.4"))
    )


def _target_columns(event_type: Column, signature_code: Column) -> dict[str, Column]:
    """Request-target columns from target_url (forward_failed) or uri (rest_call_exception).

    The method is not logged: ``/fence`` only takes PUT; ``/tasks`` counts as the internal POST
    when a signature error proves it or the herder's own forward (no 'forward' parameter) failed.
    """
    c = F.col
    url = F.coalesce(c("target_url"), c("uri"))
    path, query = request_path(url), request_query(url)
    forward_failed = event_type == "forward_failed"
    herder_forward = forward_failed & query_flag(query, "forward").isNull()
    internal_post = signature_code.isNotNull() | herder_forward
    method = F.when(path.rlike(r"/fence/?$"), F.lit("PUT")).when(internal_post, F.lit("POST"))
    kind = endpoint_kind(method, path)
    in_path = F.coalesce(
        connector_in_path(request_path(c("target_url")), decode=True),
        connector_in_path(request_path(c("uri")), decode=False),
    )
    return {
        "uri_path": path,
        "query": query,
        "connector_name": F.coalesce(c("_name"), in_path, c("mdc_connector")),
        "endpoint_kind": kind,
        "is_internal_endpoint": is_internal_endpoint(kind),
        "is_forwarded_request": F.when(forward_failed, F.lit(True)),
        "forward_param": query_flag(query, "forward"),
        "validated_param": query_flag(query, "validated"),
    }


def _checks() -> list[Check]:
    """Quarantine checks in priority order (the first failing one wins)."""
    c, unknown = F.col, F.col("event_type").isNull()
    blank = F.trim(F.coalesce(c("message"), F.lit(""))) == ""
    cut = "starts like a section 8.4 herder / RestClient line, then stops matching: cut short"
    return [
        (blank, "missing_field_message", "message is null or blank"),
        (unknown & c("_body").rlike(HEAD_RE), "connect_worker_truncated_message", cut),
        (unknown, "connect_worker_unrecognized_message", "no section 8.4 wording matches"),
    ]


def parse_connect_worker(bronze: DataFrame) -> DataFrame:
    """Parse Connect herder-side request records (family 'connect_worker'); no row dropped.

    Input columns:
        bronze.raw_lines (RAW_LINES); uses message (string), continuation (string, the folded
        stack trace), log_ts (timestamp, UTC), log_date (date).

    Output columns:
        every input column, then the CONNECT_REQUESTS columns not already in bronze (event_ts
        timestamp = log_ts, record_kind 'worker_event', event_type, worker_client_id,
        mdc_connector, target_url, exception_class, signature_failure_code ... event_date date;
        access-log-only columns null), then reason_code (string, null = parsed) and
        reason_detail (string). See schemas.connect_requests for each column.

    Null behaviour: a null or blank message gets 'missing_field_message'; a null continuation
    gives null exception_class / exception_message; an empty '()' connector name is null.
    """
    c = F.col
    prefix = {
        name: _group(c("message"), PREFIX_RE, i)
        for i, name in enumerate(("mdc_connector", "mdc_task", "worker_client_id"), 1)
    }
    first_line = F.substring_index(c("continuation"), "\n", 1)
    fields = (
        bronze.withColumns({**prefix, "_body": F.regexp_extract(c("message"), PREFIX_RE, 5)})
        .withColumn("_f", first_format(c("_body"), _FORMATS, "event_type"))
        .withColumns(format_fields(c("_f"), _FORMATS, "event_type"))
    )
    signature = signature_failure_code(F.concat_ws("\n", c("message"), c("continuation")))
    values = {
        "event_ts": c("log_ts"),
        "event_date": c("log_date"),
        "record_kind": F.lit(schema.KIND_WORKER_EVENT),
        "event_type": c("event_type"),
        "kafka_versions": _kafka_versions(c("event_type"), c("_forward")),
        "uri": c("uri"),
        **_target_columns(c("event_type"), signature),
        **{name: c(name) for name in prefix},
        "worker_group_id": _group(c("message"), PREFIX_RE, 4),
        "target_url": c("target_url"),
        "forward_failure_kind": lookup(_FORWARD_KINDS, c("_forward")),
        **{name: c(name) for name in ("config_name", "config_value", "previous_config_value")},
        "exception_class": _group(first_line, EXCEPTION_RE, 1),
        "exception_message": _group(first_line, EXCEPTION_RE, 2),
        "signature_failure_code": signature,
    }
    failed = fields.withColumn("_failure", first_failure(_checks()))
    reasons = ("_failure.reason_code", "_failure.reason_detail")
    return failed.select(
        *bronze.columns, *connect_request_columns(bronze.columns, values), *reasons
    )
