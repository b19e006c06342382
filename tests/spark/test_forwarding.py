"""transforms.gold.kip590_forwarding: KIP-590 pairing of broker and controller request-log lines, the
ENVELOPE rows (the real sample decodes end to end), metrics and finding candidates."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from pyspark.testing import assertDataFrameEqual

from schemas.authz_decisions import AUTHZ_DECISIONS
from schemas.forwarded_requests import FORWARDED_REQUESTS
from schemas.node_properties import NODE_PROPERTIES
from schemas.raw_lines import FAMILY_REQUEST, RAW_LINES
from schemas.request_events import REQUEST_EVENTS
from schemas.security_metrics import SECURITY_METRICS
from tests.support.bronze_rows import sample_file_records
from tests.support.request_lines import FP_A, header, json_message, principal_data, redacted
from transforms.gold.kip590_forwarding import (
    envelope_denials,
    forwarded_requests,
    forwarding_metric_events,
    principal_mismatches,
)
from transforms.gold.metrics import windowed_counts
from transforms.quarantine import parsed_rows
from transforms.silver.request_log.parse import parse_request_events

RUN = "r"
BROKER_LOG = "file:/logs/broker-1/kafka-request.log"
BROKER2_LOG = "file:/logs/broker-2/kafka-request.log"
CONTROLLER_LOG = "file:/logs/controller-3000/kafka-request.log"
DAY = dt.date(2026, 11, 20)
WINDOW = (dt.datetime(2026, 11, 20, tzinfo=dt.UTC), dt.datetime(2026, 11, 21, tzinfo=dt.UTC))


def ts(hms: str) -> dt.datetime:
    """2026-11-20 at ``HH:MM:SS.fff`` (UTC, naive as Spark returns it)."""
    return dt.datetime.fromisoformat(f"2026-11-20T{hms}")


class Line(NamedTuple):
    """One bronze record: where it is, which node logged it, when, and what."""

    source_path: str
    line_number: int
    node_id: str | None
    log_ts: dt.datetime | None
    logger: str
    message: str | None
    family: str | None = FAMILY_REQUEST
    level: str = "DEBUG"
    continuation: str | None = None


def bronze(spark: SparkSession, lines: Sequence[Line]) -> DataFrame:
    """RAW_LINES rows for ``lines`` (run RUN, Kafka's log4j layout)."""
    rows = [
        (RUN, x.source_path, x.line_number, 1, x.node_id, "config", "log4j", None, x.log_ts,
         x.level, x.logger, None, None, x.message, x.continuation,
         f"[ts] {x.level} {x.message} ({x.logger})", x.family,
         x.log_ts.date() if x.log_ts else None)
        for x in lines
    ]  # fmt: skip
    return spark.createDataFrame(rows, RAW_LINES)


def request_events(spark: SparkSession, lines: Sequence[Line]) -> DataFrame:
    """silver.request_events rows parsed from ``lines`` (every line must parse), collected
    and re-created: the parser's plan is large, and the rules use the frame several times."""
    parsed = parsed_rows(parse_request_events(bronze(spark, lines)), REQUEST_EVENTS)
    return spark.createDataFrame(parsed.collect(), REQUEST_EVENTS)


def properties(spark: SparkSession, rows: Sequence[tuple[str, str, str, str]]) -> DataFrame:
    """NODE_PROPERTIES rows from (node_id, role, property, value)."""
    data = [(n, role, f"/conf/{n}/server.properties", p, v, False) for n, role, p, v in rows]
    return spark.createDataFrame(data, NODE_PROPERTIES)


def table_rows(
    spark: SparkSession, schema: StructType, rows: Sequence[dict[str, Any]]
) -> DataFrame:
    """Expected rows of ``schema`` from dicts naming only their non-null columns."""
    unknown = {k for row in rows for k in row} - set(schema.fieldNames())
    assert not unknown, unknown
    return spark.createDataFrame(
        [tuple(r.get(n) for n in schema.fieldNames()) for r in rows], schema
    )


LOGGER = "kafka.request.logger"


class Req(NamedTuple):
    """A request's API (key, version, name), correlation id, client id and principal."""

    api: tuple[int, int, str]
    correlation: int
    client: str
    principal: str


CREATE = (19, 7, "CREATE_TOPICS")
ELECT = (43, 2, "ELECT_LEADERS")
TOPICS_OK = {"throttleTimeMs": 0, "topics": [{"name": "t", "errorCode": 0}]}
ELECT_OK = {"throttleTimeMs": 0, "errorCode": 0, "replicaElectionResults": []}


def client_line(
    where: tuple[str, int, str | None],
    at: dt.datetime | None,
    req: Req,
    response: dict[str, Any],
    *,
    total: float = 5.0,
    remote: float = 4.0,
) -> Line:
    """A broker's line for a client request (isForwarded:false, client 10.0.0.50:51000)."""
    api, correlation, client, principal = req
    message = json_message(
        header(api[0], api[1], correlation, api[2], client),
        {},
        response,
        "10.0.0.1:9094-10.0.0.50:51000-3",
        principal=principal,
        listener="EXTERNAL",
        times=(total, 0.1, 0.2, remote, 0, 0.1, 0.1),
    )
    return Line(*where[:2], where[2], at, LOGGER, message)


def controller_line(
    number: int,
    at: dt.datetime,
    req: Req,
    response: dict[str, Any],
) -> Line:
    """The controller's line for a forwarded request (isForwarded:true, from broker 10.0.0.1)."""
    api, correlation, client, principal = req
    message = json_message(
        header(api[0], api[1], correlation, api[2], client),
        {},
        response,
        "10.0.0.9:9093-10.0.0.1:40000-1",
        principal=principal,
        forwarded=True,
        listener="CONTROLLER",
        software=("unknown", "unknown"),
        times=(2.5, 0.1, 2.0, 0.0, 0, 0.2, 0.2),
    )
    return Line(CONTROLLER_LOG, number, "3000", at, LOGGER, message)


def envelope_line(
    number: int, at: dt.datetime, sender: str, claimed: tuple[str, str], error: int
) -> Line:
    """A failed ENVELOPE on the controller from ``sender``, claiming the base64
    (requestPrincipal, clientHostAddress) ``claimed``; requestData redacted as bronze does."""
    principal, address = claimed
    request = {"requestData": "AAAA", "requestPrincipal": principal, "clientHostAddress": address}
    message = json_message(
        header(58, 0, 99, "ENVELOPE", "1"),
        request,
        {"responseData": None, "errorCode": error},
        "10.0.0.9:9093-10.0.0.66:41000-2",
        principal=sender,
        listener="CONTROLLER",
        times=(0.5, 0.1, 0.1, 0.0, 0, 0.1, 0.1),
    )
    return Line(CONTROLLER_LOG, number, "3000", at, LOGGER, redacted(message, FP_A))  # fmt: skip


def real_envelope(samples_dir: Path) -> Line:
    """samples/forwarding.log's ENVELOPE line (PR #13197), requestData redacted, on node 3000."""
    ((_, record),) = sample_file_records(samples_dir / "forwarding.log")
    message = redacted(record.message or "", FP_A)
    return Line(CONTROLLER_LOG, 90, "3000", dt.datetime(2023, 2, 3, 16, 29, 55, 747000), LOGGER,
                message)  # fmt: skip


def scenario_lines(samples_dir: Path) -> list[Line]:
    """The mixed scenario; expectations in test_pairing_scenario."""
    b, c = BROKER_LOG, controller_line
    return [
        # A: a plain pair, 100 ms apart.
        client_line((b, 1, "1"), ts("10:00:00.500"), Req(CREATE, 7, "admin-1", "User:alice"), TOPICS_OK),
        c(1, ts("10:00:00.400"), Req(CREATE, 7, "admin-1", "User:alice"), TOPICS_OK),
        # B: paired, but the controller saw another principal.
        client_line((b, 2, "1"), ts("10:00:01.000"), Req(ELECT, 8, "admin-2", "User:bob"), ELECT_OK),
        c(2, ts("10:00:00.950"), Req(ELECT, 8, "admin-2", "User:admin"), ELECT_OK),
        # C: same request key 35 s apart: beyond the 30 s tolerance, both stay unpaired.
        client_line((b, 3, "1"), ts("10:00:40.000"), Req(CREATE, 9, "admin-1", "User:alice"), TOPICS_OK),
        c(3, ts("10:00:05.000"), Req(CREATE, 9, "admin-1", "User:alice"), TOPICS_OK),
        # D: two controller candidates; the closer one (50 ms) pairs.
        c(4, ts("10:00:10.000"), Req(CREATE, 10, "admin-3", "User:carol"), TOPICS_OK),
        c(5, ts("10:00:10.900"), Req(CREATE, 10, "admin-3", "User:carol"), TOPICS_OK),
        client_line((b, 4, "1"), ts("10:00:10.950"), Req(CREATE, 10, "admin-3", "User:carol"), TOPICS_OK),
        # E: broker 2 has no process.roles: counted, since the input holds forwarded lines.
        client_line((BROKER2_LOG, 1, "2"), ts("11:00:00.000"), Req(CREATE, 11, "admin-4", "User:dan"), TOPICS_OK),
        # F: not a forwardable API: not a forwarding row.
        client_line((b, 5, "1"), ts("10:00:02.000"), Req((3, 12, "METADATA"), 12, "admin-1", "User:alice"), {"topics": []}),
        # G: the controller-only node answering a direct (KIP-919) request: not forwarded.
        client_line((CONTROLLER_LOG, 6, "3000"), ts("10:00:03.000"), Req(CREATE, 13, "admin-5", "User:erin"), TOPICS_OK),
        # H: 15 s before the window's end: its controller line may be in the next window.
        client_line((b, 6, "1"), ts("23:59:45.000"), Req(CREATE, 14, "admin-1", "User:alice"), TOPICS_OK),
        # I: no timestamp (a pasted line).
        client_line((b, 7, "1"), None, Req(CREATE, 15, "admin-1", "User:alice"), TOPICS_OK),
        # J: an ENVELOPE refused for lack of CLUSTER_ACTION, sent by a non-broker.
        envelope_line(7, ts("12:00:00.000"), "User:mallory", (principal_data("User", "alice", False), "CgAAQg=="), 31),
        # K: the real ENVELOPE sample (NOT_CONTROLLER).
        real_envelope(samples_dir),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def scenario(spark: SparkSession, samples_dir: Path) -> Iterator[DataFrame]:
    events = request_events(spark, scenario_lines(samples_dir))
    nodes = properties(
        spark, [("1", "broker", "process.roles", "broker"),
                ("3000", "controller", "process.roles", "controller")],
    )  # fmt: skip
    table = forwarded_requests(events, nodes, tolerance_ms=30_000, window=WINDOW, run_id=RUN)
    table.persist()
    yield table
    table.unpersist()


def pair(b_line: int, c_line: int, **values: Any) -> dict[str, Any]:
    return {"run_id": RUN, "record_type": "paired", "broker_source_path": BROKER_LOG,
            "broker_line_number": b_line, "controller_source_path": CONTROLLER_LOG,
            "controller_line_number": c_line, "broker_id": "1", "controller_id": "3000",
            "client_address": "10.0.0.50", "client_port": 51000, "broker_listener": "EXTERNAL",
            "forwarding_broker_address": "10.0.0.1", "controller_listener": "CONTROLLER",
            "client_software_name": "apache-kafka-java", "client_software_version": "3.9.0",
            "broker_total_time_ms": 5.0, "broker_remote_time_ms": 4.0,
            "controller_total_time_ms": 2.5, "event_date": DAY} | values  # fmt: skip


def broker_only(path: str, line: int, node: str, reason: str, **values: Any) -> dict[str, Any]:
    return {"run_id": RUN, "record_type": "broker_only", "unpaired_reason": reason,
            "broker_source_path": path, "broker_line_number": line, "broker_id": node,
            "client_address": "10.0.0.50", "client_port": 51000, "broker_listener": "EXTERNAL",
            "client_software_name": "apache-kafka-java", "client_software_version": "3.9.0",
            "broker_total_time_ms": 5.0, "broker_remote_time_ms": 4.0,
            "api_key_name": "CREATE_TOPICS", "api_version": 7, "client_id": "admin-1",
            "principal": "User:alice", "event_date": DAY} | values  # fmt: skip


def controller_only(line: int, **values: Any) -> dict[str, Any]:
    return {"run_id": RUN, "record_type": "controller_only",
            "unpaired_reason": "no_match_in_tolerance", "controller_source_path": CONTROLLER_LOG,
            "controller_line_number": line, "controller_id": "3000",
            "forwarding_broker_address": "10.0.0.1", "controller_listener": "CONTROLLER",
            "controller_total_time_ms": 2.5, "api_key_name": "CREATE_TOPICS", "api_version": 7,
            "event_date": DAY} | values  # fmt: skip


def envelope(line: int, at: dt.datetime, **values: Any) -> dict[str, Any]:
    return {"run_id": RUN, "record_type": "envelope", "api_key_name": "ENVELOPE", "api_version": 0,
            "controller_source_path": CONTROLLER_LOG, "controller_line_number": line,
            "controller_id": "3000", "controller_ts": at, "event_date": at.date(),
            "principal_token_authenticated": False} | values  # fmt: skip


def test_pairing_scenario(spark: SparkSession, scenario: DataFrame) -> None:
    expected = [
        pair(1, 1, api_key_name="CREATE_TOPICS", api_version=7, client_id="admin-1",
             correlation_id=7, principal="User:alice", controller_principal="User:alice",
             principal_matches=True, broker_ts=ts("10:00:00.500"),
             controller_ts=ts("10:00:00.400"), pairing_gap_ms=100),
        pair(2, 2, api_key_name="ELECT_LEADERS", api_version=2, client_id="admin-2",
             correlation_id=8, principal="User:bob", controller_principal="User:admin",
             principal_matches=False, error_code=0, error_code_name="NONE",
             controller_error_code=0, controller_error_code_name="NONE",
             broker_ts=ts("10:00:01.000"), controller_ts=ts("10:00:00.950"), pairing_gap_ms=50),
        pair(4, 5, api_key_name="CREATE_TOPICS", api_version=7, client_id="admin-3",
             correlation_id=10, principal="User:carol", controller_principal="User:carol",
             principal_matches=True, broker_ts=ts("10:00:10.950"),
             controller_ts=ts("10:00:10.900"), pairing_gap_ms=50),
        broker_only(BROKER_LOG, 3, "1", "no_match_in_tolerance", correlation_id=9,
                    broker_ts=ts("10:00:40.000")),
        broker_only(BROKER2_LOG, 1, "2", "no_match_in_tolerance", correlation_id=11,
                    client_id="admin-4", principal="User:dan", broker_ts=ts("11:00:00.000")),
        broker_only(BROKER_LOG, 6, "1", "outside_window", correlation_id=14,
                    broker_ts=ts("23:59:45.000")),
        broker_only(BROKER_LOG, 7, "1", "no_timestamp", correlation_id=15, event_date=None),
        controller_only(3, client_id="admin-1", correlation_id=9, principal="User:alice",
                        controller_principal="User:alice", controller_ts=ts("10:00:05.000")),
        controller_only(4, client_id="admin-3", correlation_id=10, principal="User:carol",
                        controller_principal="User:carol", controller_ts=ts("10:00:10.000")),
        envelope(7, ts("12:00:00.000"), principal="User:alice", client_address="10.0.0.66",
                 forwarding_broker_address="10.0.0.66", envelope_sender_principal="User:mallory",
                 controller_listener="CONTROLLER", error_code=31,
                 error_code_name="CLUSTER_AUTHORIZATION_FAILED", controller_error_code=31,
                 controller_error_code_name="CLUSTER_AUTHORIZATION_FAILED",
                 controller_total_time_ms=0.5),
        # The real sample: requestPrincipal AAAFVXNlcgpBTk9OWU1PVVMAAA== and fwAAAQ==.
        envelope(90, dt.datetime(2023, 2, 3, 16, 29, 55, 747000), principal="User:ANONYMOUS",
                 client_address="127.0.0.1", forwarding_broker_address="127.0.0.1",
                 envelope_sender_principal="User:ANONYMOUS", controller_listener="EXTERNAL",
                 error_code=41, error_code_name="NOT_CONTROLLER", controller_error_code=41,
                 controller_error_code_name="NOT_CONTROLLER", controller_total_time_ms=0.362),
    ]  # fmt: skip
    assertDataFrameEqual(scenario, table_rows(spark, FORWARDED_REQUESTS, expected))


def test_missing_sides_and_zookeeper_brokers(spark: SparkSession) -> None:
    """Only a KRaft broker's lines: 'controller_logs_missing'; only the controller's:
    'broker_logs_missing'; a broker without process.roles and no forwarded line in the input
    (a ZooKeeper-mode broker answers these APIs itself): no row."""
    kraft = properties(spark, [("1", "broker", "process.roles", "broker")])
    broker = client_line((BROKER_LOG, 1, "1"), ts("10:00:00.000"), Req(CREATE, 7, "admin-1", "User:alice"), TOPICS_OK)  # fmt: skip
    controller = controller_line(1, ts("10:00:00.000"), Req(CREATE, 7, "admin-1", "User:alice"), TOPICS_OK)  # fmt: skip
    no_window = (None, None)
    both = request_events(spark, [broker, controller])
    broker_side, controller_side, zookeeper = (
        forwarded_requests(events, nodes, tolerance_ms=30_000, window=no_window, run_id=RUN)
        for events, nodes in (
            (both.where(~F.col("is_forwarded")), kraft),
            (both.where(F.col("is_forwarded")), kraft),
            (both.where(~F.col("is_forwarded")), properties(spark, [])),
        )
    )
    expected = [
        broker_only(BROKER_LOG, 1, "1", "controller_logs_missing", correlation_id=7,
                    broker_ts=ts("10:00:00.000")),
        controller_only(1, unpaired_reason="broker_logs_missing", client_id="admin-1",
                        correlation_id=7, principal="User:alice",
                        controller_principal="User:alice", controller_ts=ts("10:00:00.000")),
    ]  # fmt: skip
    actual = broker_side.unionByName(controller_side).unionByName(zookeeper)
    assertDataFrameEqual(actual, table_rows(spark, FORWARDED_REQUESTS, expected))


def test_metric_events(spark: SparkSession, scenario: DataFrame) -> None:
    """forwarded-requests-total: one per forwarded request with a timestamp (A, B, D, C twice:
    its two unpaired lines, E, H) per hour; forwarding-failures-total: the two ENVELOPEs."""
    metrics = windowed_counts(forwarding_metric_events(scenario), RUN).where(
        F.col("window") == "1h"
    )

    def row(name: str, hour: dt.datetime, dims: tuple[str | None, ...], n: int) -> dict[str, Any]:
        """A 1h row; dims = (broker_id, listener, principal, api_key_name)."""
        broker, listener, principal, api = dims
        return {"metric_name": name, "window": "1h", "window_start_ts": hour,
                "window_end_ts": hour + dt.timedelta(hours=1), "broker_id": broker,
                "listener": listener, "principal": principal, "api_key_name": api,
                "value": float(n), "event_count": n, "run_id": RUN,
                "window_date": hour.date()}  # fmt: skip

    ten, eleven, late = ts("10:00:00"), ts("11:00:00"), ts("23:00:00")
    requests = "forwarded-requests-total"
    expected = [
        row(requests, ten, ("1", "EXTERNAL", "User:alice", "CREATE_TOPICS"), 2),  # A, C broker
        row(requests, ten, (None, None, "User:alice", "CREATE_TOPICS"), 1),  # C controller
        row(requests, ten, ("1", "EXTERNAL", "User:bob", "ELECT_LEADERS"), 1),  # B
        row(requests, ten, ("1", "EXTERNAL", "User:carol", "CREATE_TOPICS"), 1),  # D pair
        row(requests, ten, (None, None, "User:carol", "CREATE_TOPICS"), 1),  # D left over
        row(requests, eleven, ("2", "EXTERNAL", "User:dan", "CREATE_TOPICS"), 1),  # E
        row(requests, late, ("1", "EXTERNAL", "User:alice", "CREATE_TOPICS"), 1),  # H
        row("forwarding-failures-total", ts("12:00:00"), ("3000", "CONTROLLER", "User:alice", "ENVELOPE"), 1),
        row("forwarding-failures-total", dt.datetime(2023, 2, 3, 16), ("3000", "EXTERNAL", "User:ANONYMOUS", "ENVELOPE"), 1),
    ]  # fmt: skip
    assertDataFrameEqual(metrics, table_rows(spark, SECURITY_METRICS, expected))


def test_finding_candidates(spark: SparkSession, scenario: DataFrame) -> None:
    """Envelope denial: the request-log line (J) and its authorizer line count once; an
    authorizer-only denial by another sender counts alone. Mismatch: pair B."""
    authz_log = "file:/logs/controller-3000/kafka-authorizer.log"
    denied = {"run_id": RUN, "source_path": authz_log, "node_id": "3000",
              "record_type": "decision", "source_format": "log4j", "decision": "DENIED",
              "operation": "CLUSTER_ACTION", "api_name": "Envelope"}  # fmt: skip
    authz = table_rows(
        spark,
        AUTHZ_DECISIONS,
        [
            denied | {"line_number": 5, "principal": "User:mallory", "event_ts": ts("12:00:00")},
            denied | {"line_number": 6, "principal": "User:eve", "event_ts": ts("12:30:00")},
            # Allowed, or another operation: not an envelope denial.
            denied | {"line_number": 8, "principal": "User:eve", "decision": "ALLOWED"},
            denied | {"line_number": 9, "principal": "User:eve", "operation": "DESCRIBE"},
        ],
    )
    denials = envelope_denials(scenario, authz).select(
        "subject", "discriminator", "node_id", "first_seen_ts", "last_seen_ts", "count",
        "evidence", "claimed_principals", "claimed_addresses",
    )  # fmt: skip
    expected_denials = spark.createDataFrame(
        [
            ("User:mallory", "3000", "3000", ts("12:00:00"), ts("12:00:00"), 1,
             [(authz_log, 5), (CONTROLLER_LOG, 7)], ["User:alice"], ["10.0.0.66"]),
            ("User:eve", "3000", "3000", ts("12:30:00"), ts("12:30:00"), 1, [(authz_log, 6)],
             [], []),
        ],
        denials.schema,
    )  # fmt: skip
    assertDataFrameEqual(denials, expected_denials)
    mismatches = principal_mismatches(scenario).select(
        "subject", "discriminator", "node_id", "first_seen_ts", "last_seen_ts", "count", "evidence"
    )
    expected_mismatch = spark.createDataFrame(
        [("1", "User:bob -> User:admin", "1", ts("10:00:00.950"), ts("10:00:01.000"), 1,
          [(BROKER_LOG, 2), (CONTROLLER_LOG, 2)])],
        mismatches.schema,
    )  # fmt: skip
    assertDataFrameEqual(mismatches, expected_mismatch)
