"""transforms.silver.auth.principals: who authenticated and how, linked from the request log
and the handshake (scenario with hand-derived expectations).

One broker (node 1) on 2026-11-20; its server log (Selector, SaslServerAuthenticator,
Processor, NetworkClient lines in Kafka's exact formats) and its request log (2.8+ JSON
``Completed request:`` lines). Connections of the request log (connection id
``10.0.0.100:9093-<client>-n``):

* A 10.0.0.1 User:alice, requests 10:00:00.030, 10:30, 10:56.
* B 10.0.0.2 User:bert, 10:05, 10:50 (its client's success line at 10:02 is 3 min before:
  outside the 60 s pairing window).
* C1 10.0.0.3 User:carol (10:40-10:59) and C2 10.0.0.3 User:dave (10:41-10:58): one host, two
  principals.
* D 10.0.0.4 User:dan, one request at 10:03 (idle from 10:13).
* E 10.0.0.5 User:erin, 10:10, 10:20.
* F 10.0.0.6 User:frank, first request 2026-11-21 00:00:00.010 (its success line is 20 ms
  earlier, on the 20th).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.reuse import release, reused
from schemas.auth_events import AUTH_EVENTS
from schemas.raw_lines import FAMILY_AUTH, FAMILY_REQUEST
from schemas.request_events import REQUEST_EVENTS
from tests.support.bronze_rows import Record, bronze_df
from tests.support.request_lines import REQUEST_LOGGER, header, json_message
from transforms.auth_links import DAY_SCOPE, connections
from transforms.quarantine import parsed_rows
from transforms.silver.auth.parse import parse_auth_events
from transforms.silver.auth.principals import with_linked_principals
from transforms.silver.request_log.parse import parse_request_events

SELECTOR = "org.apache.kafka.common.network.Selector"
SERVER = "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator"
PROCESSOR = "kafka.network.Processor"
NETWORK_CLIENT = "org.apache.kafka.clients.NetworkClient"
BROKER = "[SocketServer listenerType=BROKER, nodeId=1] "
OLD_BROKER = "[SocketServer brokerId=1] "
REQUEST_PATH = "file:/logs/broker-1/kafka-request.log"
CONNECTIONS = {
    "A": ("10.0.0.1:5001", "User:alice"),
    "B": ("10.0.0.2:5002", "User:bert"),
    "C1": ("10.0.0.3:5003", "User:carol"),
    "C2": ("10.0.0.3:5004", "User:dave"),
    "D": ("10.0.0.4:5006", "User:dan"),
    "E": ("10.0.0.5:5005", "User:erin"),
    "F": ("10.0.0.6:5007", "User:frank"),
}


def t(h: int, m: int, s: int = 0, ms: int = 0, day: int = 20) -> dt.datetime:
    return dt.datetime(2026, 11, day, h, m, s, ms * 1000)


def cid(name: str) -> str:
    index = list(CONNECTIONS).index(name) + 1
    return f"10.0.0.100:9093-{CONNECTIONS[name][0]}-{index}"


def request(at: dt.datetime, name: str, correlation: int) -> Record:
    message = json_message(
        header(3, 12, correlation, "METADATA", f"client-{name}"),
        {"topics": []},
        {"throttleTimeMs": 0, "brokers": [], "topics": []},
        cid(name),
        principal=CONNECTIONS[name][1],
        listener="EXTERNAL",
    )
    return Record("DEBUG", REQUEST_LOGGER, message, log_ts=at)


REQUESTS = [
    request(t(10, 0, 0, 30), "A", 1),
    request(t(10, 3), "D", 2),
    request(t(10, 5), "B", 3),
    request(t(10, 10), "E", 4),
    request(t(10, 20), "E", 5),
    request(t(10, 30), "A", 6),
    request(t(10, 40), "C1", 7),
    request(t(10, 41), "C2", 8),
    request(t(10, 50), "B", 9),
    request(t(10, 56), "A", 10),
    request(t(10, 58), "C2", 11),
    request(t(10, 59), "C1", 12),
    request(t(0, 0, 0, 10, day=21), "F", 13),
]
SCRAM = "Authentication failed during {} due to invalid credentials with SASL mechanism {}"
KAFKA_CHANNEL = "org.apache.kafka.common.network.KafkaChannel@5c1a2b3d"
#: (record, node id, expected principal, principal_source, mechanism, mechanism_source).
LINES: list[tuple[Record, str, str | None, str | None, str | None, str | None]] = [
    (Record("DEBUG", SERVER, "Using SASL mechanism 'SCRAM-SHA-256' provided by client", log_ts=t(10, 0)), "1", None, None, "SCRAM-SHA-256", "line"),
    # 2: paired with A (first request 20 ms later).
    (Record("DEBUG", SELECTOR, BROKER + "Successfully authenticated with /10.0.0.1", log_ts=t(10, 0, 0, 10)), "1", "User:alice", "session", "SCRAM-SHA-256", "handshake"),
    # 3, 4: failed initial authentications from alice's host: a channel id the request log
    # does not show, no channel id (2.x): never linked by address.
    (Record("INFO", SELECTOR, BROKER + "Failed authentication with /10.0.0.1 (channelId=10.0.0.100:9093-10.0.0.1:6000-50) (" + SCRAM.format("authentication", "PLAIN") + ")", log_ts=t(10, 1)), "1", None, None, "PLAIN", "line"),
    (Record("INFO", SELECTOR, OLD_BROKER + "Failed authentication with /10.0.0.1 (Authentication failed: Invalid username or password)", log_ts=t(10, 1, 10)), "1", None, None, None, None),
    # 5: Confluent Server prints the user.
    (Record("INFO", SELECTOR, BROKER + "Failed authentication with /10.0.0.9 (channelId=10.0.0.100:9093-10.0.0.9:6001-51) (userId=mallory, errorMessage=Authentication failed: Invalid username or password)", log_ts=t(10, 1, 30)), "1", "User:mallory", "line", None, None),
    # 6: B's first request is 3 min later: outside the pairing window.
    (Record("DEBUG", SELECTOR, BROKER + "Successfully authenticated with /10.0.0.2", log_ts=t(10, 2)), "1", None, None, None, None),
    # 7: channel id of E in the request log.
    (Record("INFO", SELECTOR, BROKER + f"Failed re-authentication with /10.0.0.5 (channelId={cid('E')}) (" + SCRAM.format("re-authentication", "OAUTHBEARER") + ")", log_ts=t(10, 25)), "1", "User:erin", "request_log", "OAUTHBEARER", "line"),
    (Record("DEBUG", SERVER, "Using SASL mechanism 'PLAIN' provided by client", log_ts=t(10, 49, 59, 990)), "1", None, None, "PLAIN", "line"),
    # 9: D has been idle for 47 min: no open connection.
    (Record("DEBUG", SELECTOR, BROKER + "Successfully re-authenticated with /10.0.0.4", log_ts=t(10, 50)), "1", None, None, "PLAIN", "handshake"),
    (Record("DEBUG", SERVER, "Beginning re-authentication: org.apache.kafka.common.security.authenticator.SaslServerAuthenticator@1b2c3d4e", log_ts=t(10, 55)), "1", None, None, None, None),
    (Record("DEBUG", SERVER, "Using SASL mechanism 'SCRAM-SHA-256' provided by client", log_ts=t(10, 55, 0, 5)), "1", None, None, "SCRAM-SHA-256", "line"),
    # 12: A is the one connection of 10.0.0.1 open.
    (Record("DEBUG", SELECTOR, BROKER + "Successfully re-authenticated with /10.0.0.1", log_ts=t(10, 55, 0, 30)), "1", "User:alice", "session", "SCRAM-SHA-256", "handshake"),
    # 13: the line's principal (the one asked for) wins over A's in the request log.
    (Record("INFO", SELECTOR, BROKER + f"Failed re-authentication with /10.0.0.1 (channelId={cid('A')}) (Cannot change principals during re-authentication from User.alice: User.bob)", log_ts=t(10, 57)), "1", "User:bob", "line", None, None),
    # 14: C1 and C2 open from 10.0.0.3, two principals: no link.
    (Record("INFO", SELECTOR, OLD_BROKER + "Failed re-authentication with /10.0.0.3 (" + SCRAM.format("re-authentication", "SCRAM-SHA-512") + ")", log_ts=t(11, 0)), "1", None, None, "SCRAM-SHA-512", "line"),
    (Record("DEBUG", PROCESSOR, f"Disconnecting expired channel: {KAFKA_CHANNEL} id={cid('B')} : RequestHeader(apiKey=FETCH, apiVersion=12, clientId=client-B, correlationId=9, headerVersion=2)", log_ts=t(11, 1)), "1", "User:bert", "request_log", None, None),
    (Record("ERROR", NETWORK_CLIENT, "[Producer clientId=p] Connection to node 1 (b1/10.0.0.100:9093) failed authentication due to: Authentication failed: Invalid username or password", log_ts=t(11, 2)), "1", None, None, None, None),
    # 17: F's first request is on the next UTC day: silver links within a day only.
    (Record("DEBUG", SELECTOR, BROKER + "Successfully authenticated with /10.0.0.6", log_ts=t(23, 59, 59, 990)), "1", None, None, None, None),
    # 18: another broker; 19: no timestamp.
    (Record("DEBUG", SELECTOR, "[SocketServer listenerType=BROKER, nodeId=2] Successfully authenticated with /10.0.0.1", log_ts=t(10, 0, 0, 15)), "2", None, None, None, None),
    (Record("DEBUG", SELECTOR, BROKER + "Successfully authenticated with /10.0.0.1"), "1", None, None, None, None),
]  # fmt: skip
LINKED = ("principal", "principal_source", "mechanism", "mechanism_source")


def silver(spark: SparkSession, family: str, records: list[Record], **columns: Any) -> DataFrame:
    """Parsed silver rows of ``records`` (bronze numbered 1..), ``columns`` overridden."""
    bronze = bronze_df(spark, records, family).withColumns(columns)
    parse = parse_auth_events if family == FAMILY_AUTH else parse_request_events
    schema = AUTH_EVENTS if family == FAMILY_AUTH else REQUEST_EVENTS
    return parsed_rows(parse(bronze), schema)


def scenario(spark: SparkSession) -> tuple[DataFrame, DataFrame]:
    nodes = [(i, node) for i, (_, node, *_) in enumerate(LINES, 1) if node != "1"]
    node_id = F.lit("1")
    for line, node in nodes:
        node_id = F.when(F.col("line_number") == line, F.lit(node)).otherwise(node_id)
    auth = silver(spark, FAMILY_AUTH, [line[0] for line in LINES], node_id=node_id)
    requests = silver(spark, FAMILY_REQUEST, REQUESTS, source_path=F.lit(REQUEST_PATH))
    return auth, requests


@pytest.mark.parametrize("checkpointed", [False, True], ids=["planned", "checkpointed"])
def test_principals_and_mechanisms_linked(spark: SparkSession, checkpointed: bool) -> None:
    """The same links whether the connections aggregate and the keyed auth rows are planned
    under each join or, as ``jobs.pipeline.build_silver`` does, computed once
    (``materialise=reused``)."""
    auth, requests = scenario(spark)
    assert auth.count() == len(LINES)
    assert requests.count() == len(REQUESTS)
    linked = [(i, *values) for i, (_, _, *values) in enumerate(LINES, 1)]
    schema = "line_number long, " + ", ".join(f"{name} string" for name in LINKED)
    wanted = spark.createDataFrame(linked, schema)
    expected = auth.drop(*LINKED).join(wanted, "line_number").select(*AUTH_EVENTS.fieldNames())
    kept: list[DataFrame] = []

    def materialise(df: DataFrame) -> DataFrame:
        kept.append(reused(df) if checkpointed else df)
        return kept[-1]

    actual = with_linked_principals(auth, requests, materialise=materialise)
    # One aggregate of the request log and one keyed copy of the auth rows, whatever reads them.
    assert [sorted(df.columns) for df in kept] == [
        sorted(connections(requests, DAY_SCOPE).columns),
        sorted([*AUTH_EVENTS.fieldNames(), "_shake_connection", "_shake_mechanism", "_connection"]),
    ]
    assert actual.columns == AUTH_EVENTS.fieldNames()
    assert_df_equality(
        actual.orderBy("line_number"), expected.orderBy("line_number"), ignore_nullable=True
    )
    release(kept)


def test_without_requests_only_what_lines_say(spark: SparkSession) -> None:
    """No request log for the day: only the line's own principal and the handshake's mechanism
    remain; every other row keeps a null principal."""
    auth, requests = scenario(spark)
    actual = with_linked_principals(auth, requests.limit(0)).select("line_number", *LINKED)
    rows = []
    for i, (_, _, principal, source, mechanism, mechanism_source) in enumerate(LINES, 1):
        from_line = source == "line"
        rows.append(
            (i, principal if from_line else None, source if from_line else None, mechanism,
             mechanism_source)
        )  # fmt: skip
    schema = "line_number long, " + ", ".join(f"{name} string" for name in LINKED)
    assert_df_equality(
        actual.orderBy("line_number"), spark.createDataFrame(rows, schema), ignore_nullable=True
    )
