"""silver.connect_requests: Kafka Connect REST access-log lines and herder-side request events.

One table for two record kinds (``record_kind``):
* ``rest_access``: a Jetty request-log line of ``org.apache.kafka.connect.runtime.rest.RestServer``
  (docs/kafka-log-formats.md section 8.5), parsed by ``transforms.silver.connect.rest``.
* ``worker_event``: a ``DistributedHerder`` / ``RestClient`` / ``ConnectExceptionMapper`` line about
  request forwarding, task reconfiguration, session keys or request verification (KIP-507,
  sections 8.3 and 8.4), parsed by ``transforms.silver.connect.worker``.

Columns one kind does not carry are null for the other.
"""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from schemas.lineage import EVENT_DATE_FIELD, EVENT_PARTITION_COLUMNS, LINEAGE_FIELDS

TABLE_NAME = "connect_requests"
PARTITION_COLUMNS = EVENT_PARTITION_COLUMNS

#: ``record_kind`` values.
KIND_REST_ACCESS = "rest_access"
KIND_WORKER_EVENT = "worker_event"
RECORD_KINDS: tuple[str, ...] = (KIND_REST_ACCESS, KIND_WORKER_EVENT)

#: ``access_log_format`` values: Kafka <=2.3 Slf4jRequestLog (NCSA + two spaces + latency ms),
#: 2.4-3.0 CustomRequestLog ``EXTENDED_NCSA_FORMAT + " %msT"`` (``%m`` = method, then literal
#: ``sT``), 3.1+ ``EXTENDED_NCSA_FORMAT + " %{ms}T"`` (commit db42afd6e24).
FORMAT_NCSA_LATENCY = "ncsa_latency"
FORMAT_EXTENDED_TYPO = "extended_ncsa_typo"
FORMAT_EXTENDED_LATENCY = "extended_ncsa_latency"
ACCESS_LOG_FORMATS: tuple[str, ...] = (
    FORMAT_NCSA_LATENCY,
    FORMAT_EXTENDED_TYPO,
    FORMAT_EXTENDED_LATENCY,
)

#: ``endpoint_kind`` values. The internal (worker-to-worker, signed) endpoints of KIP-507 / KIP-618.
ENDPOINT_INTERNAL_TASKS = "internal_tasks"
ENDPOINT_INTERNAL_FENCE = "internal_fence"
ENDPOINT_KINDS: tuple[str, ...] = (
    ENDPOINT_INTERNAL_TASKS,
    ENDPOINT_INTERNAL_FENCE,
    "connectors",
    "connector_plugins",
    "root",
    "other",
)

#: ``event_type`` values of worker events (transforms.silver.connect.worker.EVENT_PATTERNS has the
#: wording each one matches).
WORKER_EVENT_TYPES: tuple[str, ...] = (
    "forward_failed",
    "reconfigure_request_failed",
    "reconfigure_retry_expected_stale_key",
    "reconfigure_retry",
    "reconfigure_unexpected_error",
    "task_reconfiguration_failed",
    "session_key_distributing",
    "session_key_missing_distributing",
    "session_key_expired_distributing",
    "session_key_algorithm_changed_distributing",
    "session_key_write_failed",
    "session_key_updated",
    "request_verification_disabled",
    "request_verification_reenabled",
    "request_verification_downgrade",
    "rest_call_exception",
)

#: ``signature_failure_code`` -> the HTTP status the leader answers with
#: (``DistributedHerder.requestNotSignedProperly``, section 8.3).
SIGNATURE_FAILURE_STATUS: dict[str, int] = {
    "missing_signature": 400,
    "algorithm_not_permitted": 400,
    "no_session_key": 503,
    "invalid_signature": 403,
}

CONNECT_REQUESTS = StructType(
    [
        *LINEAGE_FIELDS,
        # One of RECORD_KINDS.
        StructField("record_kind", StringType(), False),
        # Worker events: one of WORKER_EVENT_TYPES; null for rest_access rows.
        StructField("event_type", StringType(), True),
        # Kafka versions whose wording or access-log layout the line matches ('<=2.3', '3.1+',
        # '2.8-3.4'...); null when every version that writes the line writes it the same way.
        StructField("kafka_versions", StringType(), True),
        # --- rest_access ---
        # Jetty %{client}a; IPv6 brackets removed ('[::1]' -> '::1').
        StructField("client_address", StringType(), True),
        # %u: the authenticated principal; null for '-'.
        StructField("remote_user", StringType(), True),
        # %t: the request start time Jetty writes in GMT ('[dd/MMM/yyyy:HH:mm:ss +0000]'),
        # converted to UTC with its offset. Not event_ts (the log4j time the line was written).
        StructField("request_ts", TimestampType(), True),
        StructField("http_method", StringType(), True),
        # The request target verbatim (still URL-encoded). Worker 'rest_call_exception' rows:
        # '/' + the decoded JAX-RS path ConnectExceptionMapper logs.
        StructField("uri", StringType(), True),
        # Path and query string of uri, or of target_url for forwarding failures.
        StructField("uri_path", StringType(), True),
        StructField("query", StringType(), True),
        StructField("http_protocol", StringType(), True),
        StructField("status", IntegerType(), True),
        # %O bytes sent; null for '-' (Slf4jRequestLog writes '-' for an unknown length).
        StructField("response_bytes", LongType(), True),
        # Extended NCSA only (2.4+); null for '-' and for the <=2.3 layout.
        StructField("referer", StringType(), True),
        StructField("user_agent", StringType(), True),
        # Time from request start to log write, ms; null for the 2.4-3.0 '%msT' layout.
        StructField("latency_ms", LongType(), True),
        # One of ACCESS_LOG_FORMATS.
        StructField("access_log_format", StringType(), True),
        # --- request target (rest_access; worker forward_failed / rest_call_exception) ---
        # '/connectors/<name>/...', URL-decoded; else the reconfiguration message's name, else
        # mdc_connector.
        StructField("connector_name", StringType(), True),
        # One of ENDPOINT_KINDS; null when the row names no request target.
        StructField("endpoint_kind", StringType(), True),
        # endpoint_kind is internal_tasks or internal_fence; null when endpoint_kind is null.
        StructField("is_internal_endpoint", BooleanType(), True),
        # A worker sent it: 'forward' query parameter present or User-Agent 'kafka-connect'
        # (RestClient); true for forward_failed; null for other worker events.
        StructField("is_forwarded_request", BooleanType(), True),
        # The 'forward' / 'validated' query parameters; null when absent or not true/false.
        StructField("forward_param", BooleanType(), True),
        StructField("validated_param", BooleanType(), True),
        # --- worker_event ---
        # DistributedHerder LogContext '[Worker clientId=<id>, groupId=<group>] '.
        StructField("worker_client_id", StringType(), True),
        StructField("worker_group_id", StringType(), True),
        # Connect MDC connector.context '[<name>|<scope>] ': the name, and the scope verbatim
        # ('worker', 'task-0', 'task-0|offsets').
        StructField("mdc_connector", StringType(), True),
        StructField("mdc_task", StringType(), True),
        # forward_failed: the leader URL RestClient tried (3.9+ wording only).
        StructField("target_url", StringType(), True),
        # forward_failed: 'io_error' | 'interrupted' | 'error' (which RestClient catch block).
        StructField("forward_failure_kind", StringType(), True),
        # request_verification_disabled / _downgrade: the configuration named ('connect.protocol')
        # and its value; previous_config_value = the protocol before a downgrade.
        StructField("config_name", StringType(), True),
        StructField("config_value", StringType(), True),
        StructField("previous_config_value", StringType(), True),
        # First line of the folded stack trace: 'pkg.Class: message'.
        StructField("exception_class", StringType(), True),
        StructField("exception_message", StringType(), True),
        # A key of SIGNATURE_FAILURE_STATUS when the message or its stack trace carries one of the
        # leader's KIP-507 verification errors; else null.
        StructField("signature_failure_code", StringType(), True),
        # bronze log_date; partition column.
        EVENT_DATE_FIELD,
    ]
)
