"""transforms.silver.connect.worker: herder / RestClient request events -> silver.connect_requests rows.

Messages verbatim from apache/kafka DistributedHerder.java, RestClient.java and
ConnectExceptionMapper.java at the tags named in transforms.silver.connect.worker.
"""

from __future__ import annotations

from chispa import assert_df_equality
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.spark.test_connect import HERDER, MAPPER, REST_CLIENT, WORKER, assert_rows, parse_worker
from tests.support.bronze_rows import Record
from transforms.silver.connect.worker import is_connect_worker_record, signature_failure_code

KIP_507 = "https://cwiki.apache.org/confluence/display/KAFKA/KIP-507%3A+Securing+Internal+Connect+REST+Endpoints"
DISABLED = (
    "Internal request verification will be disabled for this cluster as this worker's connect.protocol"
    " configuration has been set to 'compatible'. If this is not intentional, either remove the"
    " 'connect.protocol' configuration from the worker config file or change its value to 'SESSIONED'."
    f" If this configuration is left as-is, the cluster will be insecure; for more information, see KIP-507: {KIP_507}"
)
DOWNGRADED = (
    "The protocol used by this Connect cluster has been downgraded from 'SESSIONED' to 'COMPATIBLE' and"
    " internal request validation is now disabled. This is most likely caused by a new worker joining"
    " the cluster with an older protocol specified for the connect.protocol configuration; if this is"
    " not intentional, either remove the connect.protocol configuration from that worker's config"
    " file, or change its value to 'SESSIONED'. If this configuration is left as-is, the cluster will"
    f" be insecure; for more information, see KIP-507: {KIP_507}"
)
EVENT_COLUMNS = (
    "line_number", "level", "event_type", "kafka_versions", "worker_client_id", "worker_group_id",
    "connector_name", "target_url", "forward_failure_kind", "config_name", "config_value",
    "previous_config_value", "reason_code",
)  # fmt: skip


def test_every_event_type_and_wording(spark: SparkSession) -> None:
    url = "http://10.0.0.7:8083/connectors/jdbc-sink/tasks"
    records = [
        Record("ERROR", REST_CLIENT, f"Error forwarding REST request to {url} :"),
        Record("ERROR", REST_CLIENT, f"IO error forwarding REST request to {url} :"),
        Record("ERROR", REST_CLIENT, f"Thread was interrupted forwarding REST request to {url} :"),
        Record("ERROR", REST_CLIENT, "IO error forwarding REST request: "),
        Record("ERROR", REST_CLIENT, "Error forwarding REST request"),
        Record("ERROR", HERDER, WORKER + "Request to leader to reconfigure connector tasks failed"),
        Record("DEBUG", HERDER, WORKER + "Failed to reconfigure connector's tasks (jdbc-sink), possibly due to expired session key. Retrying after backoff"),
        Record("DEBUG", HERDER, WORKER + "Failed to reconfigure connector's tasks, possibly due to expired session key. Retrying after backoff"),
        Record("ERROR", HERDER, WORKER + "Failed to reconfigure connector's tasks (jdbc-sink), retrying after backoff."),
        Record("ERROR", HERDER, WORKER + "Failed to reconfigure connector's tasks (jdbc-sink), retrying after backoff:"),
        Record("ERROR", HERDER, WORKER + "Failed to reconfigure connector's tasks, retrying after backoff:"),
        Record("ERROR", HERDER, WORKER + "Failed to reconfigure connector's tasks (), retrying after backoff."),
        Record("ERROR", HERDER, WORKER + "Unexpected error during connector task reconfiguration: "),
        Record("ERROR", HERDER, WORKER + "Unexpected error during task reconfiguration: "),
        Record("ERROR", HERDER, WORKER + "Task reconfiguration for jdbc-sink failed unexpectedly, this connector will not be properly reconfigured unless manually triggered."),
        Record("DEBUG", HERDER, WORKER + "Distributing new session key"),
        Record("DEBUG", HERDER, WORKER + "Internal request signing is enabled but no session key has been distributed yet. Distributing new key now."),
        Record("DEBUG", HERDER, WORKER + "Existing key has expired. Distributing new key now."),
        Record("DEBUG", HERDER, WORKER + "Previously-distributed key uses different algorithm/key size than required by current worker configuration. Distributing new key now."),
        Record("INFO", HERDER, WORKER + "Failed to write new session key to config topic; forcing a read to the end of the config topic before possibly retrying"),
        Record("INFO", HERDER, WORKER + "Session key updated"),
        Record("WARN", HERDER, WORKER + DISABLED),
        Record("INFO", HERDER, WORKER + "Internal request validation has been re-enabled"),
        Record("WARN", HERDER, WORKER + DOWNGRADED),
        Record("DEBUG", MAPPER, "Uncaught exception in REST call to /connectors/jdbc-sink/tasks"),
    ]  # fmt: skip
    parsed = parse_worker(spark, records)
    w, n = ("connect-1:8083", "connect-cluster"), "jdbc-sink"
    none2, none3 = (None, None), (None, None, None)
    expected = [
        (1, "ERROR", "forward_failed", "3.9+", *none2, n, url, "error", *none3, None),
        (2, "ERROR", "forward_failed", "3.9+", *none2, n, url, "io_error", *none3, None),
        (3, "ERROR", "forward_failed", "3.9+", *none2, n, url, "interrupted", *none3, None),
        (4, "ERROR", "forward_failed", "<=3.8", *none2, None, None, "io_error", *none3, None),
        (5, "ERROR", "forward_failed", "3.3-3.8", *none2, None, None, "error", *none3, None),
        (6, "ERROR", "reconfigure_request_failed", None, *w, None, None, None, *none3, None),
        (7, "DEBUG", "reconfigure_retry_expected_stale_key", "2.8+", *w, n, None, None, *none3, None),
        (8, "DEBUG", "reconfigure_retry_expected_stale_key", "2.4-2.7", *w, None, None, None, *none3, None),
        (9, "ERROR", "reconfigure_retry", "3.5+", *w, n, None, None, *none3, None),
        (10, "ERROR", "reconfigure_retry", "2.8-3.4", *w, n, None, None, *none3, None),
        (11, "ERROR", "reconfigure_retry", "<=2.7", *w, None, None, None, *none3, None),
        (12, "ERROR", "reconfigure_retry", "3.5+", *w, None, None, None, *none3, None),
        (13, "ERROR", "reconfigure_unexpected_error", None, *w, None, None, None, *none3, None),
        (14, "ERROR", "reconfigure_unexpected_error", None, *w, None, None, None, *none3, None),
        (15, "ERROR", "task_reconfiguration_failed", None, *w, n, None, None, *none3, None),
        (16, "DEBUG", "session_key_distributing", None, *w, None, None, None, *none3, None),
        (17, "DEBUG", "session_key_missing_distributing", None, *w, None, None, None, *none3, None),
        (18, "DEBUG", "session_key_expired_distributing", None, *w, None, None, None, *none3, None),
        (19, "DEBUG", "session_key_algorithm_changed_distributing", None, *w, None, None, None, *none3, None),
        (20, "INFO", "session_key_write_failed", None, *w, None, None, None, *none3, None),
        (21, "INFO", "session_key_updated", None, *w, None, None, None, *none3, None),
        (22, "WARN", "request_verification_disabled", None, *w, None, None, None, "connect.protocol", "compatible", None, None),
        (23, "INFO", "request_verification_reenabled", None, *w, None, None, None, *none3, None),
        (24, "WARN", "request_verification_downgrade", None, *w, None, None, None, "connect.protocol", "COMPATIBLE", "SESSIONED", None),
        (25, "DEBUG", "rest_call_exception", None, *none2, n, None, None, *none3, None),
    ]  # fmt: skip
    assert_rows(spark, parsed, EVENT_COLUMNS, expected)
    claimed = parsed.select(is_connect_worker_record(F.col("logger"), F.col("message")).alias("c"))
    all_claimed = spark.createDataFrame([(True,)] * len(records), "c boolean")
    assert_df_equality(claimed, all_claimed, ignore_nullable=True)


SIGNATURE_COLUMNS = (
    "line_number", "event_type", "uri", "uri_path", "connector_name", "endpoint_kind",
    "is_internal_endpoint", "is_forwarded_request", "exception_class", "exception_message",
    "signature_failure_code", "reason_code",
)  # fmt: skip


def test_signature_failures_in_stack_traces_and_messages(spark: SparkSession) -> None:
    # Leader: ConnectExceptionMapper DEBUG with requestNotSignedProperly's exception (section 8.3).
    # Follower: the retry / forward lines carry the leader's answer in their stack trace.
    errors = "org.apache.kafka.connect.runtime.rest.errors."
    algorithm = "This worker does not support the 'HmacSHA1' key signing algorithm used by other workers. This worker is currently configured to use: [HmacSHA256]. Check that all workers' configuration files permit the same set of signature algorithms, and correct any misconfigured worker and restart it."
    starting = "This worker is still starting up and has not been able to read a session key from the config topic yet"
    trace = "\n\tat org.apache.kafka.connect.runtime.distributed.DistributedHerder.requestNotSignedProperly(DistributedHerder.java:2822)"
    tasks, fence = "/connectors/jdbc-sink/tasks", "/connectors/src/fence"
    uncaught = "Uncaught exception in REST call to "
    records = [
        Record("DEBUG", MAPPER, uncaught + tasks, continuation=errors + "BadRequestException: Internal request missing required signature" + trace),
        Record("DEBUG", MAPPER, uncaught + tasks, continuation=errors + "BadRequestException: " + algorithm + trace),
        Record("DEBUG", MAPPER, uncaught + tasks, continuation=errors + "ConnectRestException: " + starting + trace),
        Record("DEBUG", MAPPER, uncaught + fence, continuation=errors + "ConnectRestException: Internal request contained invalid signature." + trace),
        Record("DEBUG", MAPPER, uncaught + tasks, continuation=errors + "NotFoundException: Connector jdbc-sink not found"),
        Record("ERROR", HERDER, WORKER + "Failed to reconfigure connector's tasks (jdbc-sink), retrying after backoff.", continuation=errors + "ConnectRestException: Internal request contained invalid signature.\n\tat x.Y.z(Y.java:1)"),
        Record("ERROR", REST_CLIENT, "Error forwarding REST request to http://leader:8083/connectors/jdbc-sink/tasks :", continuation=errors + "ConnectRestException: Internal request contained invalid signature."),
        Record("ERROR", REST_CLIENT, "Error forwarding REST request to http://leader:8083/connectors/jdbc-sink/tasks?forward=true :", continuation="java.util.concurrent.TimeoutException"),
        # Claimed for the signature error in its message, then quarantined: not a 8.4 wording.
        Record("ERROR", HERDER, WORKER + "Rebalance failed: Internal request contained invalid signature."),
    ]  # fmt: skip
    parsed = parse_worker(spark, records)
    rest, forward, retry, exc = (
        "rest_call_exception",
        "forward_failed",
        "reconfigure_retry",
        errors + "ConnectRestException",
    )
    internal = ("jdbc-sink", "internal_tasks", True, None)
    invalid = "Internal request contained invalid signature."
    expected = [
        (1, rest, tasks, tasks, *internal, errors + "BadRequestException", "Internal request missing required signature", "missing_signature", None),
        (2, rest, tasks, tasks, *internal, errors + "BadRequestException", algorithm, "algorithm_not_permitted", None),
        (3, rest, tasks, tasks, *internal, exc, starting, "no_session_key", None),
        (4, rest, fence, fence, "src", "internal_fence", True, None, exc, invalid, "invalid_signature", None),
        # No signature error: the method is unknown, and GET .../tasks is public.
        (5, rest, tasks, tasks, "jdbc-sink", "connectors", False, None, errors + "NotFoundException", "Connector jdbc-sink not found", None, None),
        (6, retry, None, None, "jdbc-sink", None, None, None, exc, invalid, "invalid_signature", None),
        # The herder's own forward of task configs has no 'forward' parameter: the internal POST.
        (7, forward, None, "/connectors/jdbc-sink/tasks", "jdbc-sink", "internal_tasks", True, True, exc, invalid, "invalid_signature", None),
        (8, forward, None, "/connectors/jdbc-sink/tasks", "jdbc-sink", "connectors", False, True, "java.util.concurrent.TimeoutException", None, None, None),
        (9, None, None, None, None, None, None, None, None, None, "invalid_signature", "connect_worker_unrecognized_message"),
    ]  # fmt: skip
    assert_rows(spark, parsed, SIGNATURE_COLUMNS, expected)


def test_connector_context_and_log_context_prefixes(spark: SparkSession) -> None:
    tail = "Unexpected error during task reconfiguration: "
    records = [
        Record("ERROR", HERDER, "[jdbc-sink|task-0] " + WORKER + tail),
        Record("ERROR", HERDER, "[jdbc-sink|worker] " + WORKER + tail),
        Record("ERROR", HERDER, "[my connector|task-12|offsets] " + tail),
        Record("ERROR", HERDER, "[Worker clientId=connect-10.0.0.1:8083, groupId=] " + tail),
    ]
    parsed = parse_worker(spark, records)
    columns = (
        "line_number",
        "mdc_connector",
        "mdc_task",
        "connector_name",
        "worker_client_id",
        "worker_group_id",
        "reason_code",
    )
    expected = [
        (1, "jdbc-sink", "task-0", "jdbc-sink", "connect-1:8083", "connect-cluster", None),
        (2, "jdbc-sink", "worker", "jdbc-sink", "connect-1:8083", "connect-cluster", None),
        (3, "my connector", "task-12|offsets", "my connector", None, None, None),
        (4, None, None, None, "connect-10.0.0.1:8083", None, None),
    ]  # fmt: skip
    assert_rows(spark, parsed, columns, expected)


def test_malformed_and_foreign_lines_get_reason_codes(spark: SparkSession) -> None:
    cases = [
        (HERDER, None, "missing_field_message"),
        (HERDER, "", "missing_field_message"),
        (HERDER, WORKER + "Failed to reconfigure connector's tasks (jdbc-si", "connect_worker_truncated_message"),
        (HERDER, WORKER + "Internal request verification will be disabled for this cluster as this worker's connect.protocol configuration has been set to 'eag", "connect_worker_truncated_message"),
        (REST_CLIENT, "Error forwarding REST request to http://leader:8083/connectors/a/tasks", "connect_worker_truncated_message"),
        (MAPPER, "Uncaught exception in REST call to ", "connect_worker_truncated_message"),
        (HERDER, WORKER + "Skipping reconfiguration of connector jdbc-sink since it is not running", "connect_worker_unrecognized_message"),
        (HERDER, WORKER + "Rebalance failed: Internal request contained invalid signature.", "connect_worker_unrecognized_message"),
    ]  # fmt: skip
    parsed = parse_worker(spark, [Record("ERROR", logger, m) for logger, m, _ in cases])
    actual = parsed.select(
        "line_number",
        "reason_code",
        is_connect_worker_record(F.col("logger"), F.col("message")).alias("claimed"),
    )
    claimed = (False, False, True, True, True, True, False, True)
    expected = [
        (i, code, c) for i, ((_, _, code), c) in enumerate(zip(cases, claimed, strict=True), 1)
    ]
    assert_rows(spark, actual, ("line_number", "reason_code", "claimed"), expected)


def test_is_connect_worker_record(spark: SparkSession) -> None:
    rows = [
        (HERDER + ":2197", WORKER + "Failed to reconfigure connector's tasks , retrying after backoff.", True),
        (HERDER, WORKER + "Requesting rebalance due to reconfiguration of tasks (needsReconfigRebalance: true)", False),
        (HERDER, WORKER + "Joined group at generation 3 with protocol version 2", False),
        (REST_CLIENT, "Request's response code: 403", False),
        (MAPPER, "Uncaught exception in REST call to /connectors", True),
        ("org.apache.kafka.connect.runtime.Worker", "Error forwarding REST request to http://x:8083/ :", False),
        ("org.apache.kafka.connect.runtime.rest.RestServer", "Internal request contained invalid signature.", False),
        (HERDER, None, False),
        (None, "Session key updated", False),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "logger string, message string, expected boolean")
    actual = df.select(is_connect_worker_record(F.col("logger"), F.col("message")).alias("c"))
    assert_df_equality(actual, df.select(F.col("expected").alias("c")), ignore_nullable=True)


def test_signature_failure_code_including_null(spark: SparkSession) -> None:
    rows = [
        ("x: Internal request missing required signature",),
        ("This worker does not support the 'HmacMD5' key signing algorithm used by other workers. ...",),
        ("still: This worker is still starting up and has not been able to read a session key from the config topic yet",),
        ("Internal request contained invalid signature.",),
        ("Internal request contained a valid signature",),
        (None,),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "text string")
    actual = df.select(signature_failure_code(F.col("text")).alias("code"))
    codes = [
        "missing_signature",
        "algorithm_not_permitted",
        "no_session_key",
        "invalid_signature",
        None,
        None,
    ]
    assert_df_equality(
        actual, spark.createDataFrame([(c,) for c in codes], "code string"), ignore_nullable=True
    )
