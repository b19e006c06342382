"""KIP-368 end to end: a broker's real log lines (server.log DEBUG, request log JSON, its
server.properties) through the whole pipeline into reauth_sessions, reauth_readiness,
security_metrics and findings; re-running the day changes nothing.

Broker 1 (listener SASL_SSL on 9093, SCRAM-SHA-256 sessions limited to 1 h):
* A 10.0.0.1:5001 (apache-kafka-java 3.6.0) authenticates at 10:00:00.020 (lifetime line:
  3600000 ms), re-authenticates 10:55:00.000-.030, last request 11:10.
* B 10.0.0.2:5002 (sarama 1.30.0, cannot re-authenticate) authenticates at 10:01:00.005,
  requests until 10:40, killed at 11:01:30 (Disconnecting expired channel).
The run window is 2026-11-20: at its end (midnight) both connections have been silent for
more than 10 minutes.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

import jobs.pipeline
from jobs.config import RunConfig, SourceSpec, parse_instant
from jobs.gold import kip368_reauth, kip590_forwarding, kip801_authorizer
from jobs.gold.context import GoldContext, Reduction
from jobs.gold.registry import reductions
from jobs.lake.tables import Engine, Lake
from jobs.pipeline import run
from jobs.summary import RunSummary
from schemas import (
    authorizer_readiness,
    findings,
    forwarded_requests,
    reauth_readiness,
    reauth_sessions,
    security_metrics,
)
from tests.support.request_lines import header, json_message

SERVER = "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator"
SELECTOR = "org.apache.kafka.common.network.Selector"
PREFIX = "[SocketServer listenerType=BROKER, nodeId=1] "
MECH = "Using SASL mechanism 'SCRAM-SHA-256' provided by client"
LIFETIME = (
    "Authentication complete; session max lifetime from broker config=3600000 ms, no "
    "credential expiration; session expiration = {} (3600000 ms), sending 3600000 ms to client"
)
SERVER_LOG = [
    ("10:00:00,000", "DEBUG", MECH, SERVER),
    ("10:00:00,010", "DEBUG", LIFETIME.format("Fri Nov 20 11:00:00 UTC 2026"), SERVER),
    ("10:00:00,020", "DEBUG", PREFIX + "Successfully authenticated with /10.0.0.1", SELECTOR),
    ("10:01:00,000", "DEBUG", MECH, SERVER),
    ("10:01:00,005", "DEBUG", PREFIX + "Successfully authenticated with /10.0.0.2", SELECTOR),
    ("10:55:00,000", "DEBUG", "Beginning re-authentication: "
     "org.apache.kafka.common.security.authenticator.SaslServerAuthenticator@1b2c3d4e", SERVER),
    ("10:55:00,030", "DEBUG", PREFIX + "Successfully re-authenticated with /10.0.0.1", SELECTOR),
    ("11:01:30,000", "DEBUG", "Disconnecting expired channel: "
     "org.apache.kafka.common.network.KafkaChannel@5f1a2b3c id=10.0.0.100:9093-10.0.0.2:5002-1"
     " : RequestHeader(apiKey=METADATA, apiVersion=12, clientId=client-B, correlationId=9, "
     "headerVersion=2)", "kafka.network.Processor"),
]  # fmt: skip
CLIENTS = {
    "A": ("10.0.0.100:9093-10.0.0.1:5001-1", ("apache-kafka-java", "3.6.0"), "User:alice"),
    "B": ("10.0.0.100:9093-10.0.0.2:5002-1", ("sarama", "1.30.0"), "User:bob"),
}
REQUESTS = [("10:00:01,000", "A"), ("10:01:01,000", "B"), ("10:30:00,000", "A"),
            ("10:40:00,000", "B"), ("10:56:00,000", "A"), ("11:10:00,000", "A")]  # fmt: skip
PROPERTIES = """node.id=1
process.roles=broker
listeners=SASL_SSL://:9093
listener.name.sasl_ssl.scram-sha-256.connections.max.reauth.ms=3600000
"""


def _request_line(index: int, time: str, client: str) -> str:
    connection, software, principal = CLIENTS[client]
    message = json_message(
        header(3, 12, index, "METADATA", f"client-{client}"),
        {"topics": [], "allowAutoTopicCreation": True},
        {"throttleTimeMs": 0, "brokers": [], "topics": []},
        connection,
        principal=principal,
        listener="SASL_SSL",
        software=software,
    )
    return f"[2026-11-20 {time}] DEBUG {message} (kafka.request.logger)"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("broker-1")
    (folder / "server.properties").write_text(PROPERTIES, encoding="utf-8")
    lines = [f"[2026-11-20 {t}] {level} {msg} ({logger})" for t, level, msg, logger in SERVER_LOG]
    (folder / "server.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    requests = [_request_line(i, t, c) for i, (t, c) in enumerate(REQUESTS, start=1)]
    (folder / "kafka-request.log").write_text("\n".join(requests) + "\n", encoding="utf-8")
    return folder


def _run(spark: SparkSession, broker: Path, lake: Path, run_id: str = "day-1") -> RunSummary:
    config = RunConfig(
        sources=(SourceSpec(str(broker)),),
        lake=str(lake),
        engine="embedded",
        start=parse_instant("2026-11-20", "start"),
        end=parse_instant("2026-11-21", "end"),
        run_id=run_id,
    )
    return run(spark, config)


@pytest.fixture(scope="module")
def lake(spark: SparkSession, broker: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lake")
    _run(spark, broker, path)
    return path


def _read(spark: SparkSession, lake: Path, module: object) -> DataFrame:
    name, schema = module.TABLE_NAME, getattr(module, module.TABLE_NAME.upper())  # type: ignore[attr-defined]
    return Lake(spark, str(lake), Engine.EMBEDDED).read(name, schema)


def t(h: int, m: int, s: int = 0, ms: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, 20, h, m, s, ms * 1000)


def test_sessions_from_real_lines(spark: SparkSession, lake: Path) -> None:
    got = _read(spark, lake, reauth_sessions).select(
        "broker_id", "connection_id", "session_seq", "listener", "mechanism", "principal",
        "client_software_name", "supports_reauth", "start_ts", "lifetime_ms",
        "lifetime_source", "latency_ms", "outcome", "outcome_ts",
    )  # fmt: skip
    a, b = CLIENTS["A"][0], CLIENTS["B"][0]
    scram, hour = "SCRAM-SHA-256", 3_600_000
    want = spark.createDataFrame(
        [
            (
                "1",
                a,
                1,
                "SASL_SSL",
                scram,
                "User:alice",
                "apache-kafka-java",
                True,
                t(10, 0, 0, 20),
                hour,
                "session_lifetime_line",
                30,
                "reauthenticated",
                t(10, 55, 0, 30),
            ),
            # No lifetime line for the re-authentication: the configured 1 h.
            (
                "1",
                a,
                2,
                "SASL_SSL",
                scram,
                "User:alice",
                "apache-kafka-java",
                True,
                t(10, 55, 0, 30),
                hour,
                "config_listener_mechanism",
                None,
                "closed",
                None,
            ),
            (
                "1",
                b,
                1,
                "SASL_SSL",
                scram,
                "User:bob",
                "sarama",
                False,
                t(10, 1, 0, 5),
                hour,
                "config_listener_mechanism",
                None,
                "killed",
                t(11, 1, 30),
            ),
        ],
        "broker_id string, connection_id string, session_seq int, listener string, "
        "mechanism string, principal string, client_software_name string, "
        "supports_reauth boolean, start_ts timestamp, lifetime_ms long, "
        "lifetime_source string, latency_ms long, outcome string, outcome_ts timestamp",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)


def test_reauth_metrics_and_findings(spark: SparkSession, lake: Path) -> None:
    names = ("successful-authentication-no-reauth-total", "expired-connections-killed-count",
             "reauthentication-latency-max")  # fmt: skip
    got = (
        _read(spark, lake, security_metrics)
        .where(F.col("metric_name").isin(*names) & (F.col("window") == "1d"))
        .select("metric_name", "broker_id", "listener", "value")
    )
    want = spark.createDataFrame(
        [
            ("successful-authentication-no-reauth-total", "1", "SASL_SSL", 1.0),
            ("expired-connections-killed-count", "1", "SASL_SSL", 1.0),
            ("reauthentication-latency-max", "1", "SASL_SSL", 30.0),
        ],
        "metric_name string, broker_id string, listener string, value double",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)
    rules = _read(spark, lake, findings).select("rule_id", "subject", "severity")
    assertDataFrameEqual(
        rules,
        spark.createDataFrame(
            [("reauth.no_reauth_client_on_expiring_listener", "User:bob", "medium")],
            "rule_id string, subject string, severity string",
        ),
    )


def test_readiness_table(spark: SparkSession, lake: Path) -> None:
    # B (sarama) sends requests until 10:40: killed at 15 min (10:16:00.005 < 10:40), not at
    # 1 h or later. A re-authenticates.
    got = _read(spark, lake, reauth_readiness).select(
        "candidate_ms", "sessions", "sessions_killed", "principals_killed", "first_kill_ts"
    )
    want = spark.createDataFrame(
        [
            (900_000, 2, 1, ["User:bob"], t(10, 40)),
            (3_600_000, 2, 0, [], None),
            (28_800_000, 2, 0, [], None),
            (86_400_000, 2, 0, [], None),
        ],
        "candidate_ms long, sessions long, sessions_killed long, "
        "principals_killed array<string>, first_kill_ts timestamp",
    )
    assertDataFrameEqual(got, want, checkRowOrder=False)


def test_rerun_leaves_gold_unchanged(
    spark: SparkSession, broker: Path, lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun gives the same gold. It runs as a large input whose silver is small would: the
    builders' whole-lake reductions (``jobs.gold.registry.reductions``: the connections, the
    forwarded requests, the authorizer's start-up lines) computed by the pipeline before
    gold's small-input settings, not by the builders, with the same tables."""
    modules = (reauth_sessions, reauth_readiness, forwarded_requests, authorizer_readiness,
               findings)  # fmt: skip
    before = {m.TABLE_NAME: _read(spark, lake, m).drop("run_id").collect() for m in modules}
    computed: dict[str, int] = {}  # the rows of each reduction the pipeline computed
    originals = dict(reductions())

    def spied(name: str, reduction: Reduction) -> Reduction:
        def compute(context: GoldContext) -> DataFrame:
            frame = reduction(context)
            computed[name] = frame.count()
            return frame

        return compute

    def not_again(context: GoldContext) -> DataFrame:
        raise AssertionError("a builder computed a reduction the pipeline had")

    monkeypatch.setattr(jobs.pipeline, "small_input_active", lambda _spark: False)
    spies = {name: spied(name, r) for name, r in originals.items()}
    monkeypatch.setattr(jobs.pipeline, "reductions", lambda: spies)
    for builder in (kip368_reauth, kip590_forwarding, kip801_authorizer):
        monkeypatch.setattr(builder, "REDUCTIONS", dict.fromkeys(builder.REDUCTIONS, not_again))
    _run(spark, broker, lake, run_id="day-1-again")  # a new run id: the writes happen
    # One connection per client on the one broker; no forwarding, no KRaft authorizer here.
    assert computed == {
        kip368_reauth.CONNECTIONS: len(CLIENTS),
        kip590_forwarding.FORWARDED: 0,
        kip801_authorizer.EVENTS: 0,
    }
    for module in modules:
        after = _read(spark, lake, module).drop("run_id")
        assertDataFrameEqual(after, before[module.TABLE_NAME], checkRowOrder=False)
