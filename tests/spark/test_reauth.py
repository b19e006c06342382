"""KIP-368 replay: scenario tests with hand-derived expectations.

One broker (node 1), listener SASL_SSL, config:
``listener.name.sasl_ssl.scram-sha-256.connections.max.reauth.ms=3600000`` (1 h) and no
unprefixed value (Kafka's default 0). The run's evidence ends at 11:15 (as_of).

Connections (client ip:port, software):
* A 10.0.0.1:5001 apache-kafka-java 3.6.0: authenticates 10:00:00.020 with a lifetime line
  (3600000 ms), re-authenticates 10:55:00.000-10:55:00.030 (latency 30 ms), requests until
  11:10 -> session 1 reauthenticated, session 2 open at the window end.
* B 10.0.0.2:5002 sarama 1.30.0 (cannot re-authenticate, capability table): authenticates
  10:01:00, no lifetime line -> configured 1 h; killed at 11:01:30 (Disconnecting expired
  channel).
* C 10.0.0.3:5003 sarama 1.30.0: authenticates 10:02:00, one request 10:02:01, then idle:
  never killed; silent > 10 min before 11:15 -> closed.
* E 10.0.0.5:5005 apache-kafka-java 3.6.0: OAUTHBEARER-like credential bound session: the
  lifetime line says 600000 ms (credential expiry) although the listener allows 1 h.
* G 10.0.0.7:5007 PLAIN on SASL_SSL: no prefixed value for PLAIN, no unprefixed one -> 0 =
  no expiry ('default').
* F 10.0.0.6:5006: re-authentication fails: principal change User:alice -> User:bob.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from pyspark.testing import assertDataFrameEqual

from jobs.reuse import release, reused
from schemas.auth_events import AUTH_EVENTS
from schemas.node_properties import NODE_PROPERTIES
from schemas.reauth_sessions import REAUTH_SESSIONS
from schemas.request_events import REQUEST_EVENTS
from tests.support.plans import checkpoint_reads
from transforms.gold.kip368_reauth.config import (
    DEFAULT_CAPABILITIES,
    capabilities_frame,
    version_key,
)
from transforms.gold.kip368_reauth.outputs import (
    kill_times,
    readiness,
    reauth_findings,
    reauth_metrics,
)
from transforms.gold.kip368_reauth.replay import connections
from transforms.gold.kip368_reauth.sessions import Replay, ReplayWindows
from transforms.gold.kip368_reauth.sessions import replay as replay_frames

PATH = "file:/logs/broker-1/server.log"
REQ_PATH = "file:/logs/broker-1/kafka-request.log"
DAY = dt.date(2026, 11, 20)
AS_OF = dt.datetime(2026, 11, 20, 11, 15)


def t(h: int, m: int, s: int = 0, ms: int = 0, day: int = 20) -> dt.datetime:
    return dt.datetime(2026, 11, day, h, m, s, ms * 1000)


def frame(spark: SparkSession, schema: StructType, rows: list[dict[str, Any]]) -> DataFrame:
    """Rows of ``schema`` from dicts; missing fields are null."""
    return spark.createDataFrame(
        [tuple(row.get(f.name) for f in schema.fields) for row in rows], schema
    )


def auth(line: int, ts: dt.datetime, event_type: str, **values: Any) -> dict[str, Any]:
    return {
        "run_id": "r", "source_path": PATH, "line_number": line, "node_id": "1",
        "level": "DEBUG", "event_ts": ts, "event_type": event_type, "side": "broker",
        "source_format": "log4j", "event_date": ts.date(), **values,
    }  # fmt: skip


def ok(line: int, ts: dt.datetime, ip: str, reauth: bool = False) -> dict[str, Any]:
    kind = "reauthentication_succeeded" if reauth else "authentication_succeeded"
    return auth(line, ts, kind, peer_ip=ip, is_reauthentication=reauth)


CONN = {
    "A": ("10.0.0.1", 5001, "apache-kafka-java", "3.6.0", "User:alice"),
    "B": ("10.0.0.2", 5002, "sarama", "1.30.0", "User:bob"),
    "C": ("10.0.0.3", 5003, "sarama", "1.30.0", "User:carol"),
    "E": ("10.0.0.5", 5005, "apache-kafka-java", "3.6.0", "User:erin"),
    "G": ("10.0.0.7", 5007, "apache-kafka-java", "3.6.0", "User:gina"),
}


def conn_id(name: str) -> str:
    ip, port, *_ = CONN[name]
    return f"10.0.0.100:9093-{ip}:{port}-1"


def request(line: int, ts: dt.datetime, name: str) -> dict[str, Any]:
    ip, port, software, version, principal = CONN[name]
    return {
        "run_id": "r", "source_path": REQ_PATH, "line_number": line, "node_id": "1",
        "level": "DEBUG", "event_ts": ts, "log_format": "json", "is_forwarded": False,
        "api_version": 12, "api_key_name": "FETCH", "correlation_id": line,
        "client_id": f"client-{name}", "connection_id": conn_id(name), "local_ip": "10.0.0.100",
        "local_port": 9093, "remote_ip": ip, "remote_port": port, "throttle_time_ms": 0,
        "security_protocol": "SASL_SSL", "principal": principal, "listener": "SASL_SSL",
        "client_software_name": software, "client_software_version": version,
        "event_date": ts.date(),
    }  # fmt: skip


AUTH_ROWS = [
    auth(1, t(10, 0, 0, 0), "mechanism_selected", mechanism="SCRAM-SHA-256"),
    auth(2, t(10, 0, 0, 10), "session_lifetime", sent_session_lifetime_ms=3_600_000),
    ok(3, t(10, 0, 0, 20), "10.0.0.1"),
    auth(4, t(10, 1), "mechanism_selected", mechanism="SCRAM-SHA-256"),
    ok(5, t(10, 1, 0, 5), "10.0.0.2"),
    auth(6, t(10, 2), "mechanism_selected", mechanism="SCRAM-SHA-256"),
    ok(7, t(10, 2, 0, 5), "10.0.0.3"),
    auth(8, t(10, 3), "mechanism_selected", mechanism="SCRAM-SHA-256"),
    auth(9, t(10, 3, 0, 2), "session_lifetime", sent_session_lifetime_ms=600_000),
    ok(10, t(10, 3, 0, 4), "10.0.0.5"),
    auth(11, t(10, 4), "mechanism_selected", mechanism="PLAIN"),
    ok(12, t(10, 4, 0, 5), "10.0.0.7"),
    auth(13, t(10, 55), "reauthentication_started", is_reauthentication=True),
    auth(14, t(10, 55, 0, 5), "session_lifetime", sent_session_lifetime_ms=3_600_000),
    ok(15, t(10, 55, 0, 30), "10.0.0.1", reauth=True),
    auth(
        16,
        t(10, 58),
        "reauthentication_failed",
        level="INFO",
        peer_ip="10.0.0.6",
        connection_id="10.0.0.100:9093-10.0.0.6:5006-1",
        is_reauthentication=True,
        failure_reason_code="PRINCIPAL_CHANGE_DURING_REAUTH",
        reauth_old_principal="User:alice",
        reauth_new_principal="User:bob",
    ),
    auth(
        17,
        t(11, 1, 30),
        "expired_channel_disconnected",
        connection_id=conn_id("B"),
        remote_ip="10.0.0.2",
        api_key_name="FETCH",
        client_id="client-B",
        side=None,
    ),
]
REQUEST_ROWS = [
    request(1, t(10, 0, 1), "A"),
    request(2, t(10, 1, 1), "B"),
    request(3, t(10, 2, 1), "C"),
    request(4, t(10, 3, 1), "E"),
    request(5, t(10, 4, 1), "G"),
    request(6, t(10, 30), "A"),
    request(7, t(10, 40), "B"),
    request(8, t(10, 56), "A"),
    request(9, t(11, 10), "A"),
]
PROPERTIES = [
    ("1", "broker", "/logs/broker-1/server.properties", "listeners",
     "SASL_SSL://:9093,PLAINTEXT://:9092", False),
    ("1", "broker", "/logs/broker-1/server.properties",
     "listener.name.sasl_ssl.scram-sha-256.connections.max.reauth.ms", "3600000", False),
]  # fmt: skip


def replay_scenario(
    spark: SparkSession, materialise: Callable[[DataFrame], DataFrame] | None = None
) -> tuple[Replay, DataFrame]:
    """The module's scenario replayed (``materialise`` as the pipeline's builder passes it, or
    none), and its request rows."""
    auth_df = frame(spark, AUTH_EVENTS, AUTH_ROWS)
    # The kill line is a Processor line: the broker side.
    auth_df = auth_df.withColumn("side", F.coalesce("side", F.lit("broker")))
    requests = frame(spark, REQUEST_EVENTS, REQUEST_ROWS)
    props = spark.createDataFrame(PROPERTIES, NODE_PROPERTIES)
    extra = {} if materialise is None else {"materialise": materialise}
    replayed = replay_frames(
        auth_df,
        connections(requests),
        props,
        spark.createDataFrame([], REAUTH_SESSIONS),
        capabilities_frame(spark, DEFAULT_CAPABILITIES),
        windows=ReplayWindows(),
        as_of=AS_OF,
        run_id="r",
        **extra,
    )
    return replayed, requests


@pytest.fixture(scope="module")
def replay(spark: SparkSession) -> Iterator[dict[str, DataFrame]]:
    """The scenario's replay as the pipeline's builder plans it: its handshakes computed once
    (``jobs.reuse.reused``)."""
    replayed, requests = replay_scenario(spark, reused)
    result = replayed.sessions.cache()
    shakes, kill_lines = replayed.handshakes, replayed.kills
    yield {
        "sessions": result,
        "shakes": shakes,
        "kills": kill_lines,
        "requests": requests,
    }
    release([shakes, result])


def test_handshakes_computed_once_same_replay(
    spark: SparkSession, replay: dict[str, DataFrame]
) -> None:
    """``materialise`` gets the handshakes once and every branch of the sessions reads what it
    returns (pairing, re-authentications, failures, starts: the checkpoint is a leaf of the
    sessions' plan at least four times); the handshakes, kills and sessions are the same as
    when each branch plans its own handshakes."""
    kept: list[DataFrame] = []

    def materialise(df: DataFrame) -> DataFrame:
        kept.append(reused(df))
        return kept[-1]

    planned, _ = replay_scenario(spark)
    recorded, _ = replay_scenario(spark, materialise)
    assert len(kept) == 1
    assert recorded.handshakes is kept[0]
    assert kept[0].columns == planned.handshakes.columns
    rdd_id = kept[0]._jdf.queryExecution().analyzed().rdd().id()
    assert [i for i, _ in checkpoint_reads(recorded.sessions)].count(rdd_id) >= 4
    assert rdd_id not in [i for i, _ in checkpoint_reads(planned.sessions)]
    for name in ("handshakes", "kills", "sessions"):
        assertDataFrameEqual(getattr(recorded, name), getattr(planned, name))
    assertDataFrameEqual(replay["shakes"], planned.handshakes)
    release(kept)


SESSION_COLUMNS = (
    "connection_id", "session_seq", "mechanism", "principal", "client_ip", "supports_reauth",
    "supports_reauth_source", "start_ts", "start_source", "lifetime_ms", "lifetime_source",
    "expiry_ts", "reauth_start_ts", "reauth_end_ts", "latency_ms", "outcome", "outcome_ts",
)  # fmt: skip


def test_sessions_per_connection(spark: SparkSession, replay: dict[str, DataFrame]) -> None:
    a, b, c, e, g = (conn_id(n) for n in "ABCEG")
    f = "10.0.0.100:9093-10.0.0.6:5006-1"
    scram, hour = "SCRAM-SHA-256", 3_600_000
    expected = [
        # A: lifetime from the line; re-authenticated 10:55:00.000-.030 (30 ms) before expiry.
        (a, 1, scram, "User:alice", "10.0.0.1", True, "observed", t(10, 0, 0, 20),
         "authentication_line", hour, "session_lifetime_line", t(11, 0, 0, 20),
         t(10, 55), t(10, 55, 0, 30), 30, "reauthenticated", t(10, 55, 0, 30)),
        # A, session 2: still active at 11:10 (< 10 min before 11:15).
        (a, 2, scram, "User:alice", "10.0.0.1", True, "observed", t(10, 55, 0, 30),
         "reauthentication_line", hour, "session_lifetime_line", t(11, 55, 0, 30),
         None, None, None, "open_at_window_end", None),
        # B: configured 1 h (listener + mechanism prefix); sarama 1.30.0 < 1.33.0; killed.
        (b, 1, scram, "User:bob", "10.0.0.2", False, "capability_table", t(10, 1, 0, 5),
         "authentication_line", hour, "config_listener_mechanism", t(11, 1, 0, 5),
         None, None, None, "killed", t(11, 1, 30)),
        # C: idle after 10:02:01: never killed, closed (silent > connections.max.idle.ms).
        (c, 1, scram, "User:carol", "10.0.0.3", False, "capability_table", t(10, 2, 0, 5),
         "authentication_line", hour, "config_listener_mechanism", t(11, 2, 0, 5),
         None, None, None, "closed", None),
        # E: the credential bounds the session: 600000 ms from the line, not the 1 h config.
        (e, 1, scram, "User:erin", "10.0.0.5", True, "observed_same_software",
         t(10, 3, 0, 4), "authentication_line", 600_000, "session_lifetime_line",
         t(10, 13, 0, 4), None, None, None, "closed", None),
        # G: PLAIN has no prefixed value and there is no unprefixed one: Kafka's 0.
        (g, 1, "PLAIN", "User:gina", "10.0.0.7", True, "observed_same_software",
         t(10, 4, 0, 5), "authentication_line", None, "default", None,
         None, None, None, "closed", None),
    ]  # fmt: skip
    got = replay["sessions"].where(F.col("connection_id") != f).select(*SESSION_COLUMNS)
    schema = REAUTH_SESSIONS
    want = spark.createDataFrame(expected, StructType([schema[name] for name in SESSION_COLUMNS]))
    assertDataFrameEqual(got, want, checkRowOrder=False)


def test_failed_reauthentication_without_session_is_not_a_session(
    replay: dict[str, DataFrame],
) -> None:
    # F has no request-log line and no authentication line in the run: the failure cannot
    # end a known session, and the principal-change finding still reports it.
    f = replay["sessions"].where(F.col("client_ip") == "10.0.0.6")
    assert f.isEmpty()


def test_kill_evidence_and_listener(spark: SparkSession, replay: dict[str, DataFrame]) -> None:
    got = replay["kills"].select("connection_id", "peer_ip", "event_ts", "listener", "line_number")
    want = spark.createDataFrame(
        [(conn_id("B"), "10.0.0.2", t(11, 1, 30), "SASL_SSL", 17)],
        "connection_id string, peer_ip string, event_ts timestamp, listener string, "
        "line_number long",
    )
    assertDataFrameEqual(got, want)


def test_metrics_equal_the_brokers_counters(
    spark: SparkSession, replay: dict[str, DataFrame]
) -> None:
    got = reauth_metrics(replay["sessions"], replay["kills"], "r").select(
        "metric_name", "window", "window_start_ts", "listener", "mechanism", "value",
        "event_count",
    )  # fmt: skip
    h10, h11, d = t(10, 0), t(11, 0), t(0, 0)
    scram = "SCRAM-SHA-256"
    expected = [
        # B and C: first authentications of clients that cannot re-authenticate.
        ("successful-authentication-no-reauth-total", "1h", h10, "SASL_SSL", scram, 2.0, 2),
        ("successful-authentication-no-reauth-total", "1d", d, "SASL_SSL", scram, 2.0, 2),
        ("expired-connections-killed-count", "1h", h11, "SASL_SSL", None, 1.0, 1),
        ("expired-connections-killed-count", "1d", d, "SASL_SSL", None, 1.0, 1),
        # One re-authentication of 30 ms.
        ("reauthentication-latency-avg", "1h", h10, "SASL_SSL", scram, 30.0, 1),
        ("reauthentication-latency-max", "1h", h10, "SASL_SSL", scram, 30.0, 1),
        ("reauthentication-latency-p99", "1h", h10, "SASL_SSL", scram, 30.0, 1),
        ("reauthentication-latency-avg", "1d", d, "SASL_SSL", scram, 30.0, 1),
        ("reauthentication-latency-max", "1d", d, "SASL_SSL", scram, 30.0, 1),
        ("reauthentication-latency-p99", "1d", d, "SASL_SSL", scram, 30.0, 1),
    ]
    want = spark.createDataFrame(
        expected,
        "metric_name string, window string, window_start_ts timestamp, listener string, "
        "mechanism string, value double, event_count long",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)


def test_readiness_what_if(spark: SparkSession, replay: dict[str, DataFrame]) -> None:
    # Candidates 15 min and 1 h. Examined: the 5 SASL sessions 1 with a connection.
    # 15 min: B (start 10:01:00.005) requests at 10:40 > 10:16 -> killed at 10:40; C idle.
    #   A, E, G re-authenticate (observed or same software). 1 h: B's last request 10:40 <
    #   11:01 -> nobody.
    got = readiness(replay["sessions"], replay["requests"], (900_000, 3_600_000), "r").select(
        "candidate_ms", "sessions", "sessions_killed", "sessions_at_risk_unknown_client",
        "principals_killed", "distinct_principals_killed", "client_software_killed",
        "first_kill_ts", "activity_date",
    )  # fmt: skip
    want = spark.createDataFrame(
        [
            (900_000, 5, 1, 0, ["User:bob"], 1, ["sarama/1.30.0"], t(10, 40), DAY),
            (3_600_000, 5, 0, 0, [], 0, [], None, DAY),
        ],
        "candidate_ms long, sessions long, sessions_killed long, "
        "sessions_at_risk_unknown_client long, principals_killed array<string>, "
        "distinct_principals_killed long, client_software_killed array<string>, "
        "first_kill_ts timestamp, activity_date date",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)


def test_kill_times_at_hour_boundaries(spark: SparkSession) -> None:
    # kill_ts is the connection's first request strictly after start + candidate, wherever
    # the hours fall: requests are grouped by UTC hour, so the cases sit around 11:00 UTC
    # (aware datetimes: naive ones would be read in the test process's local time zone).
    def u(h: int, m: int, s: int = 0, ms: int = 0) -> dt.datetime:
        return t(h, m, s, ms).replace(tzinfo=dt.UTC)

    examined_schema = (
        "broker_id string, connection_id string, start_ts timestamp, candidate_ms long, "
        "supports_reauth boolean, principal string, software string, activity_date date"
    )
    m15, h1 = 900_000, 3_600_000

    def session(conn: str, start: dt.datetime | None, candidate: int | None) -> tuple[Any, ...]:
        return ("1", conn, start, candidate, False, "User:x", "sarama/1.30.0", DAY)

    examined = spark.createDataFrame(
        [
            session("exact", u(10, 45), m15),  # a request at the deadline itself is not after it
            session("same_hour", u(10, 0), m15),  # first after 10:15 in the deadline's hour
            session("later_hour", u(10, 50), m15),  # none after 11:05 in 11:00; 13:30 later
            session("empty_hour", u(10, 50), m15),  # no request in 11:00 at all; 12:05 later
            session("earlier", u(10, 0), h1),  # requests before the deadline only
            session("idle", u(10, 0), m15),  # no request at all
            session("other_node", u(10, 0), m15),  # requests on another node only
            session("no_start", None, m15),
            session("no_candidate", u(10, 0), None),
            session("same_hour", u(10, 0), m15),  # the same session twice: one row
        ],
        examined_schema,
    )
    # Request times per connection on node 1 (unordered, as the log may interleave them).
    times: dict[str, list[dt.datetime | None]] = {
        "exact": [u(11, 0), u(11, 0, 0, 1)],
        "same_hour": [u(10, 10), u(10, 40), u(10, 20), u(11, 1), None],
        "later_hour": [u(11, 4), u(13, 45), u(13, 30)],
        "empty_hour": [u(10, 55), u(12, 10), u(12, 5, 0, 1)],
        "earlier": [u(10, 30), u(11, 0)],
        "no_start": [u(10, 30)],
        "no_candidate": [u(10, 30)],
    }
    rows = [("1", conn, ts) for conn, listed in times.items() for ts in listed]
    rows.append(("2", "other_node", u(10, 30)))
    requests = spark.createDataFrame(
        rows, "node_id string, connection_id string, event_ts timestamp"
    )
    got = kill_times(examined, requests).select("connection_id", "start_ts", "kill_ts")
    want = spark.createDataFrame(
        [
            ("exact", u(10, 45), u(11, 0, 0, 1)),
            ("same_hour", u(10, 0), u(10, 20)),
            ("later_hour", u(10, 50), u(13, 30)),
            ("empty_hour", u(10, 50), u(12, 5, 0, 1)),
            ("earlier", u(10, 0), None),
            ("idle", u(10, 0), None),
            ("other_node", u(10, 0), None),
            ("no_start", None, None),
            ("no_candidate", u(10, 0), None),
        ],
        "connection_id string, start_ts timestamp, kill_ts timestamp",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)


def test_findings(spark: SparkSession, replay: dict[str, DataFrame]) -> None:
    parts = reauth_findings(replay["sessions"], replay["shakes"], 3, "r")
    got = parts[0]
    for part in parts[1:]:
        got = got.unionByName(part)
    got = got.select("rule_id", "severity", "subject", "discriminator", "count", "last_seen_ts")
    want = spark.createDataFrame(
        [
            # B and C: sarama 1.30.0 on SASL_SSL whose sessions last 1 h.
            (
                "reauth.no_reauth_client_on_expiring_listener",
                "medium",
                "User:bob",
                "listener=SASL_SSL software=sarama/1.30.0",
                1,
                t(10, 1, 0, 5),
            ),
            (
                "reauth.no_reauth_client_on_expiring_listener",
                "medium",
                "User:carol",
                "listener=SASL_SSL software=sarama/1.30.0",
                1,
                t(10, 2, 0, 5),
            ),
            ("reauth.principal_change_attempt", "high", "User:alice", "User:bob", 1, t(10, 58)),
        ],
        "rule_id string, severity string, subject string, discriminator string, count long, "
        "last_seen_ts timestamp",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)


def test_session_crossing_midnight_continues_from_the_previous_run(
    spark: SparkSession, replay: dict[str, DataFrame]
) -> None:
    """Day 2: A's session 2 (open at day 1's end) continues; A re-authenticates at 00:50 on
    day 2 (latency 20 ms). One session row continues (seq 2, start from day 1), one starts."""
    previous = replay["sessions"].where(F.col("outcome") == "open_at_window_end")
    auth_df = frame(spark, AUTH_EVENTS, [
        auth(1, t(0, 50, 0, 0, day=21), "reauthentication_started", is_reauthentication=True),
        ok(2, t(0, 50, 0, 20, day=21), "10.0.0.1", reauth=True),
    ])  # fmt: skip
    requests = frame(spark, REQUEST_EVENTS, [
        request(1, t(0, 5, day=21), "A"), request(2, t(0, 55, day=21), "A"),
    ])  # fmt: skip
    day2 = replay_frames(
        auth_df,
        connections(requests),
        spark.createDataFrame(PROPERTIES, NODE_PROPERTIES),
        previous,
        capabilities_frame(spark, DEFAULT_CAPABILITIES),
        windows=ReplayWindows(),
        as_of=dt.datetime(2026, 11, 22),
        run_id="r2",
    ).sessions
    got = day2.select(
        "session_seq", "start_ts", "start_source", "lifetime_ms", "expiry_ts", "latency_ms",
        "outcome", "activity_date",
    )  # fmt: skip
    want = spark.createDataFrame(
        [
            (
                2,
                t(10, 55, 0, 30),
                "previous_run",
                3_600_000,
                t(11, 55, 0, 30),
                20,
                "reauthenticated",
                dt.date(2026, 11, 21),
            ),
            # No lifetime line for the new session: configured 1 h; idle since 00:55 -> closed.
            (
                3,
                t(0, 50, 0, 20, day=21),
                "reauthentication_line",
                3_600_000,
                t(1, 50, 0, 20, day=21),
                None,
                "closed",
                dt.date(2026, 11, 21),
            ),
        ],
        "session_seq int, start_ts timestamp, start_source string, lifetime_ms long, "
        "expiry_ts timestamp, latency_ms long, outcome string, activity_date date",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)
    # B's day-1 row continued on day 2 (a sarama client on an expiring listener): reported
    # on day 1 only, so no finding of day 2 is dated outside day 2's partition.
    continued_b = (
        replay["sessions"]
        .where(F.col("client_ip") == "10.0.0.2")
        .withColumns(
            {"start_source": F.lit("previous_run"), "outcome": F.lit("open_at_window_end")}
        )
    )
    day2_findings = reauth_findings(continued_b, replay["shakes"].limit(0), 3, "r2")[0]
    assert day2_findings.isEmpty()
    # Same session, same id on both days.
    ids = {r["session_id"] for r in previous.select("session_id").collect()}
    assert ids == {r["session_id"] for r in day2.where("session_seq = 2").collect()}


def test_version_key_orders_versions_numerically(spark: SparkSession) -> None:
    rows = spark.createDataFrame(
        [("2.10.1",), ("2.9.0",), ("2.2",), ("3.6.1-SNAPSHOT",), ("v1",), (None,)], "v string"
    )
    got = [r["v"] for r in rows.orderBy(version_key(F.col("v")).asc_nulls_first(), "v").collect()]
    assert got == [None, "v1", "2.2", "2.9.0", "2.10.1", "3.6.1-SNAPSHOT"]
