"""gold.authorizer_readiness: one row per not-ready window of a KRaft node's StandardAuthorizer
(KIP-801): from the authorizer's configuration at start-up until ``Completed initial ACL load
process.``, which listeners already served requests in it, and which requests failed in it.

Sources (apache/kafka): ``StandardAuthorizer.configure`` (``[StandardAuthorizer N] set
super.users=..., default result=...``), ``StandardAuthorizer.completeInitialLoad`` (``Completed
initial ACL load process.`` / ``Failed to complete initial ACL load process.``),
``StandardAuthorizer.start`` (listeners of ``early.start.listeners`` are ready at once, the others
wait for the initial load), ``EndpointReadyFutures`` (``<stage> completed for endpoint X.
Endpoint is now READY.``), ``StandardAuthorizerData.authorize`` (a non-super-user before the
load gets ``AuthorizerNotReadyException``, which ``KafkaApis.handle`` logs as ``Unexpected
error handling request ...`` and answers with UNKNOWN_SERVER_ERROR, -1). Date-partitioned by
the window's start: a run replaces its dates.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

TABLE_NAME = "authorizer_readiness"
PARTITION_COLUMNS: tuple[str, ...] = ("event_date",)

_NAMES = ArrayType(StringType(), True)

AUTHORIZER_READINESS = StructType(
    [
        StructField("run_id", StringType(), False),
        StructField("node_id", StringType(), True),
        # UTC; the authorizer's configure line that opened the window (the earliest one when
        # a combined broker,controller node configures two authorizers before the first load).
        StructField("window_start_ts", TimestampType(), False),
        # UTC; 'Completed initial ACL load process.' closing the window; null when the run's
        # logs hold no such line after the start (still not ready, or the load failed).
        StructField("acl_loaded_ts", TimestampType(), True),
        # True when 'Failed to complete initial ACL load process.' ended the window.
        StructField("acl_load_failed", BooleanType(), False),
        # acl_loaded_ts - window_start_ts in ms; null while open.
        StructField("not_ready_ms", LongType(), True),
        # As the configure line logged them: 'ALLOWED' (allow.everyone.if.no.acl.found=true)
        # or 'DENIED', and the super users joined with ','.
        StructField("default_result", StringType(), True),
        StructField("super_users_logged", StringType(), True),
        # From the node's config: authorizer.class.name, and early.start.listeners (default:
        # controller.listener.names); null when the node's config is not in the input.
        StructField("authorizer_class_name", StringType(), True),
        StructField("early_start_listeners_config", _NAMES, True),
        # Listeners whose 'Endpoint is now READY' line falls inside the window, sorted.
        StructField("listeners_ready_early", _NAMES, False),
        # AuthorizerNotReadyException lines in the window, and their principals and listeners.
        StructField("not_ready_failures", LongType(), False),
        StructField("failed_principals", _NAMES, False),
        StructField("failed_listeners", _NAMES, False),
        # Request-log lines of the node in the window answered UNKNOWN_SERVER_ERROR (-1).
        StructField("unknown_server_error_requests", LongType(), False),
        # Source positions of the opening and closing lines.
        StructField("start_source_path", StringType(), False),
        StructField("start_line_number", LongType(), False),
        StructField("end_source_path", StringType(), True),
        StructField("end_line_number", LongType(), True),
        # UTC date of window_start_ts; partition column.
        StructField("event_date", DateType(), False),
    ]
)
