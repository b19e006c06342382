"""transforms.gold.kip801_authorizer: KIP-801 decisions by rule, finding candidates, and the
StandardAuthorizer's not-ready windows from server-log lines."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from schemas.authorizer_readiness import AUTHORIZER_READINESS
from schemas.authz_decisions import AUTHZ_DECISIONS
from schemas.request_events import REQUEST_EVENTS
from tests.spark.test_forwarding import Line, bronze, properties, table_rows, ts
from transforms.gold.kip801_authorizer import (
    decisions_by_rule,
    default_allows,
    denial_bursts,
    early_client_listeners,
    not_ready_failures,
    readiness_events,
    readiness_windows,
    super_user_outside_config,
)

RUN = "r"
AUTHZ_LOG = "file:/logs/broker-1/kafka-authorizer.log"
SERVER_LOG = "file:/logs/broker-1/server.log"
SERVER2_LOG = "file:/logs/broker-2/server.log"
SERVER3_LOG = "file:/logs/node-3/server.log"
DAY = dt.date(2026, 11, 20)
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def decision(line: int, principal: str | None, **values: Any) -> dict[str, Any]:
    """A StandardAuthorizer decision row of node 1 (override any column)."""
    return {"run_id": RUN, "source_path": AUTHZ_LOG, "line_number": line, "node_id": "1",
            "record_type": "decision", "authorizer": "StandardAuthorizer", "source_format": "log4j",
            "principal": principal, "decision": "ALLOWED", "operation": "READ",
            "resource_type": "TOPIC", "pattern_type": "LITERAL", "resource_name": "orders",
            "event_date": DAY} | values  # fmt: skip


def denied(
    line: int, principal: str, at: dt.datetime | None, name: str, **values: Any
) -> dict[str, Any]:
    """An AclAuthorizer denial (no rule) on topic ``name``."""
    return decision(line, principal, event_ts=at, decision="DENIED", resource_name=name,
                    authorizer="AclAuthorizer") | values  # fmt: skip


def seconds(s: int) -> dt.datetime:
    return ts("10:00:00") + dt.timedelta(seconds=s)


@pytest.fixture(scope="module")
def authz(spark: SparkSession) -> Iterator[DataFrame]:
    rows = [
        # Super users: in the config (a DN with commas, ';'-separated), not in it, no config.
        decision(1, "User:admin", rule="SuperUser", event_ts=ts("09:00:00")),
        decision(2, "User:CN=ops,O=Acme", rule="SuperUser", event_ts=ts("09:00:01")),
        decision(3, "User:ghost", rule="SuperUser", event_ts=ts("09:00:02")),
        decision(4, "User:ghost", rule="SuperUser", event_ts=ts("09:00:03"), operation="WRITE"),
        decision(5, "User:ghost", rule="SuperUser", event_ts=ts("09:00:04"), node_id="2"),
        decision(6, "User:legacy", record_type="super_user", authorizer=None, operation=None,
                 resource_type=None, pattern_type=None, resource_name=None,
                 event_ts=ts("09:00:05")),
        # DefaultAllow on one resource through two brokers; DefaultDeny; a matching ACL.
        decision(7, "User:bob", rule="DefaultAllow", event_ts=ts("09:10:00")),
        decision(8, "User:bob", rule="DefaultAllow", event_ts=ts("09:11:00"), node_id="2",
                 operation="DESCRIBE"),
        decision(9, "User:bob", rule="DefaultDeny", decision="DENIED", event_ts=ts("09:12:00"),
                 resource_name="payments"),
        decision(10, "User:carol", rule="MatchingAcl", event_ts=ts("09:13:00"),
                 acl_resource_type="TOPIC", acl_resource_name="ord", acl_pattern_type="PREFIXED",
                 acl_principal="User:carol", acl_host="*", acl_operation="READ",
                 acl_permission_type="ALLOW"),
        # Denials (threshold 3 in 10 s): eve on 'secret' at 0, 2, 4 and 60, 65, 70 s are
        # bursts, 30 s is not; eve on 'other' twice and fred every 11 s are not; a denial
        # without a time and Confluent audit events do not count.
        *[denied(20 + i, "User:eve", seconds(s), "secret") for i, s in enumerate((0, 2, 4, 30, 60, 65, 70))],
        denied(30, "User:eve", seconds(0), "other"),
        denied(31, "User:eve", seconds(1), "other"),
        *[denied(32 + i, "User:fred", seconds(s), "secret") for i, s in enumerate((0, 11, 22))],
        denied(40, "User:eve", None, "secret"),
        denied(41, "User:eve", seconds(31), "secret", source_format="confluent_audit"),
        denied(42, "User:eve", seconds(32), "secret", source_format="confluent_audit"),
    ]  # fmt: skip
    frame = table_rows(spark, AUTHZ_DECISIONS, rows)
    frame.persist()
    yield frame
    frame.unpersist()


def nodes(spark: SparkSession) -> DataFrame:
    return properties(
        spark,
        [
            ("1", "broker", "super.users", "User:admin; User:CN=ops,O=Acme"),
            ("1", "broker", "authorizer.class.name", STANDARD),
            ("1", "broker", "controller.listener.names", "CONTROLLER"),
            ("1", "broker", "early.start.listeners", "CONTROLLER, EXTERNAL"),
            ("9", "connect", "super.users", "User:ghost"),  # a worker: ignored
        ],
    )


def candidates(df: DataFrame, *extra: str) -> DataFrame:
    columns = ("subject", "discriminator", "node_id", "first_seen_ts", "last_seen_ts", "count")
    return df.select(*columns, "evidence", *extra)


def test_super_user_outside_config(spark: SparkSession, authz: DataFrame) -> None:
    actual = candidates(super_user_outside_config(authz, nodes(spark)), "super_users")
    expected = spark.createDataFrame(
        [
            ("User:ghost", "1", "1", ts("09:00:02"), ts("09:00:03"), 2,
             [(AUTHZ_LOG, 3), (AUTHZ_LOG, 4)], "User:admin; User:CN=ops,O=Acme"),
            ("User:legacy", "1", "1", ts("09:00:05"), ts("09:00:05"), 1, [(AUTHZ_LOG, 6)],
             "User:admin; User:CN=ops,O=Acme"),
        ],
        actual.schema,
    )  # fmt: skip
    assertDataFrameEqual(actual, expected)


def test_default_allow_and_decisions_by_rule(spark: SparkSession, authz: DataFrame) -> None:
    allows = candidates(default_allows(authz), "operations")
    expected = spark.createDataFrame(
        [("User:bob", "TOPIC:LITERAL:orders", None, ts("09:10:00"), ts("09:11:00"), 2,
          [(AUTHZ_LOG, 7), (AUTHZ_LOG, 8)], ["DESCRIBE", "READ"])],
        allows.schema,
    )  # fmt: skip
    assertDataFrameEqual(allows, expected)
    by_rule = decisions_by_rule(authz)
    t, rows = "TOPIC", []
    for node, principal, op, rule, at in (
        ("1", "User:admin", "READ", "SuperUser", "09:00:00"),
        ("1", "User:CN=ops,O=Acme", "READ", "SuperUser", "09:00:01"),
        ("1", "User:ghost", "READ", "SuperUser", "09:00:02"),
        ("1", "User:ghost", "WRITE", "SuperUser", "09:00:03"),
        ("2", "User:ghost", "READ", "SuperUser", "09:00:04"),
        ("1", "User:bob", "READ", "DefaultAllow", "09:10:00"),
        ("2", "User:bob", "DESCRIBE", "DefaultAllow", "09:11:00"),
    ):
        rows.append((node, principal, "ALLOWED", rule, op, t, "LITERAL", "orders", *[None] * 7,
                     1, ts(at), ts(at)))  # fmt: skip
    rows += [
        ("1", "User:bob", "DENIED", "DefaultDeny", "READ", t, "LITERAL", "payments", *[None] * 7,
         1, ts("09:12:00"), ts("09:12:00")),
        ("1", "User:carol", "ALLOWED", "MatchingAcl", "READ", t, "LITERAL", "orders", t, "ord",
         "PREFIXED", "User:carol", "*", "READ", "ALLOW", 1, ts("09:13:00"), ts("09:13:00")),
    ]  # fmt: skip
    assertDataFrameEqual(by_rule, spark.createDataFrame(rows, by_rule.schema))


def test_denial_bursts(spark: SparkSession, authz: DataFrame) -> None:
    actual = candidates(denial_bursts(authz, threshold=3, window_ms=10_000), "peak")
    positions = [(AUTHZ_LOG, n) for n in (20, 21, 22, 24, 25, 26)]
    expected = spark.createDataFrame(
        [("User:eve", "TOPIC:LITERAL:secret", "1", seconds(0), seconds(70), 6, positions, 3)],
        actual.schema,
    )
    assertDataFrameEqual(actual, expected)


SERVER = "org.apache.kafka.metadata.authorizer.StandardAuthorizerData"
READY = "org.apache.kafka.server.network.EndpointReadyFutures"
APIS = "kafka.server.KafkaApis"


def not_ready_line(path: str, number: int, at: dt.datetime, request: tuple[str, str, str]) -> Line:
    """KafkaApis.handle's ERROR line for an AuthorizerNotReadyException (stack trace folded).

    request: (api key name, principal, listener)."""
    api, principal, listener = request
    head = f"RequestHeader(apiKey={api}, apiVersion=7, clientId=admin-1, correlationId={number}, headerVersion=2)"
    message = (
        f"[KafkaApi-1] Unexpected error handling request {head} -- CreateTopicsRequestData(topics=[]) "
        f"with context RequestContext(header={head}, connectionId='10.0.0.1:9094-10.0.0.50:51000-3', "
        f"clientAddress=/10.0.0.50, principal={principal}, listenerName=ListenerName({listener}), "
        "securityProtocol=SASL_SSL, clientInformation=ClientInformation(softwareName=apache-kafka-java, "
        "softwareVersion=3.9.0), fromPrivilegedListener=false, principalSerde=Optional.empty)"
    )
    trace = "org.apache.kafka.common.errors.AuthorizerNotReadyException\n\tat kafka.server.KafkaApis.handle(KafkaApis.scala:1)"
    return Line(path, number, "1", at, APIS, message, None, "ERROR", trace)


def server_lines() -> list[Line]:
    """Expectations in test_readiness_windows."""

    def log(
        path: str, number: int, node: str, at: dt.datetime, logger_message: tuple[str, str | None]
    ) -> Line:
        return Line(path, number, node, at, logger_message[0], logger_message[1], None, "INFO")

    def ready(listener: str) -> tuple[str, str]:
        return READY, f"authorizerStart completed for endpoint {listener}. Endpoint is now READY."

    configured = (
        SERVER,
        "[StandardAuthorizer 1] set super.users=User:admin,User:CN=ops,O=Acme, default result=ALLOWED",
    )
    loaded = (SERVER, "[StandardAuthorizer 1] Completed initial ACL load process.")
    npe = not_ready_line(SERVER_LOG, 8, ts("10:00:06"), ("CREATE_TOPICS", "User:bob", "EXTERNAL"))
    s, s2, s3 = SERVER_LOG, SERVER2_LOG, SERVER3_LOG
    return [
        # Node 1: EXTERNAL starts early (it is in early.start.listeners), two requests fail.
        log(s, 1, "1", ts("10:00:00"), configured),
        log(s, 2, "1", ts("10:00:00.100"), ready("CONTROLLER")),
        log(s, 3, "1", ts("10:00:00.200"), ready("EXTERNAL")),
        not_ready_line(s, 4, ts("10:00:01"), ("CREATE_TOPICS", "User:bob", "EXTERNAL")),
        not_ready_line(s, 5, ts("10:00:02"), ("CREATE_TOPICS", "User:bob", "EXTERNAL")),
        log(s, 6, "1", ts("10:00:05"), loaded),
        # Same millisecond as the load, logged after it: not early.
        log(s, 7, "1", ts("10:00:05"), ready("INTERNAL")),
        # Another exception: not an authorizer failure.
        npe._replace(continuation="java.lang.NullPointerException"),
        log(s, 9, "1", ts("10:00:07"), (SERVER, None)),
        # Node 1 restarts; no load line follows in the run: the window stays open.
        log(s, 20, "1", ts("12:00:00"), configured),
        not_ready_line(s, 21, ts("12:00:01"), ("DESCRIBE_CONFIGS", "User:carol", "CONTROLLER")),
        # Node 2 (no config in the input): the initial load fails.
        log(s2, 1, "2", ts("11:00:00"), (SERVER, "[StandardAuthorizer 2] set super.users=, default result=DENIED")),
        log(s2, 2, "2", ts("11:00:00.500"), ready("CONTROLLER")),
        log(s2, 3, "2", ts("11:00:00.700"), ready("PLAINTEXT")),
        log(s2, 4, "2", ts("11:00:03"), (SERVER, "[StandardAuthorizer 2] Failed to complete initial ACL load process.")),
        # Node 3, combined broker,controller: two authorizers, one merged window.
        log(s3, 1, "3", ts("09:00:00"), (SERVER, "[StandardAuthorizer 3] set super.users=, default result=DENIED")),
        log(s3, 2, "3", ts("09:00:00.010"), (SERVER, "[StandardAuthorizer 3] set super.users=, default result=DENIED")),
        log(s3, 3, "3", ts("09:00:00.020"), ready("CONTROLLER")),
        log(s3, 4, "3", ts("09:00:01"), (SERVER, "[StandardAuthorizer 3] Completed initial ACL load process.")),
        log(s3, 5, "3", ts("09:00:02"), (SERVER, "[StandardAuthorizer 3] Completed initial ACL load process.")),
        log(s3, 6, "3", ts("09:00:02"), ready("BROKER")),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def events(spark: SparkSession) -> Iterator[DataFrame]:
    frame = readiness_events(bronze(spark, server_lines()))
    frame.persist()
    yield frame
    frame.unpersist()


def test_readiness_events_parse_the_failure_line(spark: SparkSession, events: DataFrame) -> None:
    failures = events.where("kind = 'not_ready_failure'").select(
        "source_path", "line_number", "listener", "principal", "api_key_name", "client_id",
        "client_address",
    )  # fmt: skip
    expected = spark.createDataFrame(
        [
            (SERVER_LOG, 4, "EXTERNAL", "User:bob", "CREATE_TOPICS", "admin-1", "10.0.0.50"),
            (SERVER_LOG, 5, "EXTERNAL", "User:bob", "CREATE_TOPICS", "admin-1", "10.0.0.50"),
            (SERVER_LOG, 21, "CONTROLLER", "User:carol", "DESCRIBE_CONFIGS", "admin-1", "10.0.0.50"),
        ],
        failures.schema,
    )  # fmt: skip
    assertDataFrameEqual(failures, expected)


def test_readiness_windows(spark: SparkSession, events: DataFrame) -> None:
    errors = table_rows(
        spark,
        REQUEST_EVENTS,
        [
            {"run_id": RUN, "source_path": "file:/logs/broker-1/kafka-request.log",
             "line_number": n, "node_id": "1", "event_ts": at, "log_format": "json",
             "is_forwarded": False, "api_version": 7, "api_key_name": "CREATE_TOPICS",
             "correlation_id": n, "connection_id": "c", "throttle_time_ms": 0,
             "security_protocol": "SASL_SSL", "principal": "User:bob", "listener": "EXTERNAL",
             "error_code": code}
            for n, at, code in ((1, ts("10:00:01"), -1), (2, ts("10:00:02"), -1),
                                (3, ts("10:00:06"), -1), (4, ts("10:00:03"), 0),
                                (5, ts("12:00:01"), -1))
        ],
    )  # fmt: skip
    actual = readiness_windows(events, errors, nodes(spark), RUN)
    admins = "User:admin,User:CN=ops,O=Acme"
    common = {"run_id": RUN, "acl_load_failed": False, "not_ready_failures": 0,
              "failed_principals": [], "failed_listeners": [], "listeners_ready_early": [],
              "unknown_server_error_requests": 0, "event_date": DAY}  # fmt: skip
    node1 = common | {"node_id": "1", "default_result": "ALLOWED", "super_users_logged": admins,
                      "authorizer_class_name": STANDARD, "start_source_path": SERVER_LOG,
                      "early_start_listeners_config": ["CONTROLLER", "EXTERNAL"]}  # fmt: skip
    expected = [
        node1 | {"window_start_ts": ts("10:00:00"), "acl_loaded_ts": ts("10:00:05"),
                 "not_ready_ms": 5000, "listeners_ready_early": ["CONTROLLER", "EXTERNAL"],
                 "not_ready_failures": 2, "failed_principals": ["User:bob"],
                 "failed_listeners": ["EXTERNAL"], "unknown_server_error_requests": 2,
                 "start_line_number": 1, "end_source_path": SERVER_LOG, "end_line_number": 6},
        node1 | {"window_start_ts": ts("12:00:00"), "not_ready_failures": 1,
                 "failed_principals": ["User:carol"], "failed_listeners": ["CONTROLLER"],
                 "unknown_server_error_requests": 1, "start_line_number": 20},
        common | {"node_id": "2", "window_start_ts": ts("11:00:00"), "acl_load_failed": True,
                  "default_result": "DENIED", "super_users_logged": "",
                  "listeners_ready_early": ["CONTROLLER", "PLAINTEXT"],
                  "start_source_path": SERVER2_LOG, "start_line_number": 1,
                  "end_source_path": SERVER2_LOG, "end_line_number": 4},
        common | {"node_id": "3", "window_start_ts": ts("09:00:00"),
                  "acl_loaded_ts": ts("09:00:01"), "not_ready_ms": 1000,
                  "default_result": "DENIED", "super_users_logged": "",
                  "listeners_ready_early": ["CONTROLLER"], "start_source_path": SERVER3_LOG,
                  "start_line_number": 1, "end_source_path": SERVER3_LOG, "end_line_number": 4},
    ]  # fmt: skip
    assertDataFrameEqual(actual, table_rows(spark, AUTHORIZER_READINESS, expected))


def test_readiness_finding_candidates(spark: SparkSession, events: DataFrame) -> None:
    failures = candidates(not_ready_failures(events), "listeners", "apis")
    expected_failures = spark.createDataFrame(
        [
            ("User:bob", "1", "1", ts("10:00:01"), ts("10:00:02"), 2,
             [(SERVER_LOG, 4), (SERVER_LOG, 5)], ["EXTERNAL"], ["CREATE_TOPICS"]),
            ("User:carol", "1", "1", ts("12:00:01"), ts("12:00:01"), 1, [(SERVER_LOG, 21)],
             ["CONTROLLER"], ["DESCRIBE_CONFIGS"]),
        ],
        failures.schema,
    )  # fmt: skip
    assertDataFrameEqual(failures, expected_failures)
    early = candidates(early_client_listeners(events, nodes(spark)), "loaded_ts")
    expected_early = spark.createDataFrame(
        [
            ("EXTERNAL", "1", "1", ts("10:00:00.200"), ts("10:00:00.200"), 1, [(SERVER_LOG, 3)],
             ts("10:00:05")),
            ("PLAINTEXT", "2", "2", ts("11:00:00.700"), ts("11:00:00.700"), 1,
             [(SERVER2_LOG, 3)], None),
        ],
        early.schema,
    )  # fmt: skip
    assertDataFrameEqual(early, expected_early)
