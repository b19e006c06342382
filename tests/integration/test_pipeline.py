"""The whole pipeline on the bundled real samples: tables, accounting, idempotent re-runs."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest
from deltalake import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from jobs.config import RunConfig, SourceSpec, parse_instant
from jobs.fingerprint_keys import lake_key_path
from jobs.lake.tables import Engine, Lake
from jobs.pipeline import run
from jobs.summary import RunSummary
from schemas import (
    auth_events,
    authz_decisions,
    connect_requests,
    quarantine,
    raw_lines,
    request_events,
    security_metrics,
    token_events,
)
from transforms.silver.registry import SILVER_TABLES

TABLES = {
    raw_lines.TABLE_NAME: (raw_lines.RAW_LINES, "log_date"),
    **{name: (schema, "event_date") for name, (schema, _) in SILVER_TABLES.items()},
    quarantine.TABLE_NAME: (quarantine.QUARANTINE, "log_date"),
    security_metrics.TABLE_NAME: (security_metrics.SECURITY_METRICS, "window_date"),
}


# A token HMAC (the token's password) and SASL auth bytes as Kafka's DEBUG request log prints
# them (docs/kafka-log-formats.md section 2.3): JSON since 2.8, Arrays.toString before.
HMAC_B64 = "Zm9vYmFyLXNlY3JldC1obWFjLXZhbHVlLTEyMzQ1Njc4OTAtYWJjZGVm"
HMAC_BYTES = "[102, 111, 111, 98, 97, 114, 45, 115, 101, 99]"
AUTH_BYTES = "AHVzZXIAcGFzc3dvcmQtaW4tY2xlYXI="
_TAIL = (
    ',"connection":"10.0.0.1:9093-10.0.0.9:50000-0-1","totalTimeMs":1.0,"requestQueueTimeMs":0.1,'
    '"localTimeMs":0.5,"remoteTimeMs":0.2,"throttleTimeMs":0,"responseQueueTimeMs":0.1,'
    '"sendTimeMs":0.1,"securityProtocol":"SASL_SSL","principal":"User:alice","listener":"SASL_SSL",'
    '"clientInformation":{"softwareName":"apache-kafka-java","softwareVersion":"3.9.0"}}'
)


def _json_line(second: int, api_key: int, name: str, request: str, response: str) -> str:
    header = (
        f'{{"isForwarded":false,"requestHeader":{{"requestApiKey":{api_key},"requestApiVersion":2,'
        f'"correlationId":{second},"clientId":"adm","requestApiKeyName":"{name}"}}'
    )
    body = f',"request":{request},"response":{response}'
    return f"[2026-11-20 10:00:0{second},000] DEBUG Completed request:{header}{body}{_TAIL} (kafka.request.logger)"


SECRET_LINES = [
    _json_line(1, 38, "CREATE_DELEGATION_TOKEN", '{"renewers":[],"maxLifetimeMs":-1}',
               '{"errorCode":0,"principalType":"User","principalName":"alice","issueTimestampMs":1,'
               '"expiryTimestampMs":2,"maxTimestampMs":3,"tokenId":"tok1","hmac":"' + HMAC_B64 + '","throttleTimeMs":0}'),
    _json_line(2, 39, "RENEW_DELEGATION_TOKEN", '{"hmac":"' + HMAC_B64 + '","renewPeriodMs":-1}',
               '{"errorCode":0,"expiryTimestampMs":4,"throttleTimeMs":0}'),
    _json_line(3, 36, "SASL_AUTHENTICATE", '{"authBytes":"' + AUTH_BYTES + '"}',
               '{"errorCode":34,"errorMessage":"SaslAuthenticate request received after successful authentication","authBytes":"","sessionLifetimeMs":0}'),
    "[2026-11-20 10:00:04,000] DEBUG Completed request:RequestHeader(apiKey=RENEW_DELEGATION_TOKEN, apiVersion=1, "
    "clientId=adm, correlationId=8) -- RenewDelegationTokenRequestData(hmac=" + HMAC_BYTES + ", renewPeriodMs=-1),"
    "response:RenewDelegationTokenResponseData(errorCode=0, expiryTimestampMs=4, throttleTimeMs=0) from connection "
    "10.0.0.1:9093-10.0.0.9:50000-1;totalTime:1.0,requestQueueTime:0.1,localTime:0.5,remoteTime:0.0,throttleTime:0,"
    "responseQueueTime:0.1,sendTime:0.1,securityProtocol:SASL_SSL,principal:User:alice,listener:SASL_SSL,"
    "clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.7.0) (kafka.request.logger)",
]  # fmt: skip


def _run(spark: SparkSession, inputs: list[Path], lake: Path, **window: str) -> RunSummary:
    config = RunConfig(
        sources=tuple(SourceSpec(str(path)) for path in inputs),
        lake=str(lake),
        engine="embedded",
        **{k: parse_instant(v, k) for k, v in window.items()},  # type: ignore[arg-type]
    )
    return run(spark, config)


def _table(spark: SparkSession, lake: Path, name: str) -> DataFrame:
    schema, _ = TABLES[name]
    return Lake(spark, str(lake), Engine.EMBEDDED).read(name, schema)


# Malformed input beside good lines: a truncated authorizer line, a 1 MB request line, stray
# bytes (in no layout: a record of its own, out of scope, never folded into the record above
# it), a blank line, and a good failure.
BAD_LINES = [
    b"[2026-11-20 11:00:00,000] INFO Principal = User:bob is Den (kafka.authorizer.logger)",
    b'[2026-11-20 11:00:01,000] DEBUG Completed request:{"isForwarded":false,"requestHeader":'
    + b"x" * 1_000_000
    + b" (kafka.request.logger)",
    b"\x00\xff\xfe stray bytes",
    b"",
    b"[2026-11-20 11:00:02,000] INFO [SocketServer listenerType=BROKER, nodeId=7] Failed "
    b"authentication with /10.0.0.9 (channelId=10.0.0.1:9093-10.0.0.9:50000-0-1) "
    b"(Authentication failed: Invalid username or password) (org.apache.kafka.common.network.Selector)",
]


# Layouts beside Kafka's own (docs/layouts.md). broker-7 has no logging config: a Confluent for
# Kubernetes authorizer line (a built-in layout), and a file in a layout nobody declared (two
# security records quarantined as unrecognized_layout, one out of scope, a summary warning).
# broker-8 has its own log4j.properties: broker.log and the console capture kafka.out are read
# with the ConversionPattern of their appenders.
CFK_DENIAL = (
    "[INFO] 2026-11-20 12:00:00,000 [data-plane-kafka-request-handler-3] kafka.authorizer.logger "
    "logAuditMessage - Principal = User:c3 is Denied Operation = Describe from host = 172.17.0.12 "
    "on resource = Topic:LITERAL:_confluent-license for request = Metadata with resourceRefCount = 1"
)
UNKNOWN_LAYOUT = [
    "2026-11-20T12:00:00Z | INFO | kafka.authorizer.logger | Principal = User:eve is Denied "
    "Operation = Read from host = 10.0.0.66 on resource = Topic:LITERAL:payments",
    "2026-11-20T12:00:01Z | INFO | org.apache.kafka.common.network.Selector | Failed "
    "authentication with /10.0.0.66 (Authentication failed: Invalid username or password)",
    "2026-11-20T12:00:02Z | INFO | kafka.server.KafkaServer | started",
]
LOG4J_PROPERTIES = """log4j.rootLogger=INFO, stdout, kafkaAppender
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=%d{ISO8601} [%t] %-5p %c - %m%n
log4j.appender.kafkaAppender=org.apache.log4j.DailyRollingFileAppender
log4j.appender.kafkaAppender.File=${kafka.logs.dir}/broker.log
log4j.appender.kafkaAppender.layout=org.apache.log4j.PatternLayout
log4j.appender.kafkaAppender.layout.ConversionPattern=%d{yyyy-MM-dd HH:mm:ss} <%p> %c: %m%n
"""
BROKER_8_FAILURE = (
    "2026-11-21 09:00:00 <INFO> org.apache.kafka.common.network.Selector: [SocketServer "
    "listenerType=BROKER, nodeId=8] Failed authentication with /10.0.0.10 "
    "(channelId=10.0.0.1:9093-10.0.0.10:50001-0-2) (Authentication failed during authentication "
    "due to invalid credentials with SASL mechanism SCRAM-SHA-256)"
)
BROKER_8_DENIAL = (
    "2026-11-21 09:00:01,000 [data-plane-kafka-request-handler-3] INFO  kafka.authorizer.logger - "
    "Principal = User:dave is Denied Operation = Write from host = 10.0.0.10 on resource = "
    "Topic:LITERAL:orders for request = Produce with resourceRefCount = 1"
)


@pytest.fixture(scope="module")
def inputs(samples_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The bundled samples, a broker folder whose request log leaks secrets and whose files
    include other layouts, and a broker folder with its own log4j config."""
    broker = tmp_path_factory.mktemp("broker-7")
    (broker / "kafka-request.log").write_text("\n".join(SECRET_LINES) + "\n", encoding="utf-8")
    (broker / "server.properties").write_text("node.id=7\nprocess.roles=broker\n", encoding="utf-8")
    (broker / "server.log").write_bytes(b"\n".join(BAD_LINES) + b"\n")
    (broker / "kafka-authorizer.log").write_text(CFK_DENIAL + "\n", encoding="utf-8")
    (broker / "weird.log").write_text("\n".join(UNKNOWN_LAYOUT) + "\n", encoding="utf-8")
    configured = tmp_path_factory.mktemp("broker-8")
    (configured / "server.properties").write_text("node.id=8\n", encoding="utf-8")
    (configured / "log4j.properties").write_text(LOG4J_PROPERTIES, encoding="utf-8")
    (configured / "broker.log").write_text(BROKER_8_FAILURE + "\n", encoding="utf-8")
    (configured / "kafka.out").write_text(BROKER_8_DENIAL + "\n", encoding="utf-8")
    return [samples_dir, broker, configured]


@pytest.fixture(scope="module")
def sample_lake(
    spark: SparkSession, inputs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, RunSummary]:
    lake = tmp_path_factory.mktemp("lake")
    return lake, _run(spark, inputs, lake)


def test_every_table_is_a_real_delta_table(sample_lake: tuple[Path, RunSummary]) -> None:
    lake, summary = sample_lake
    assert summary.engine == "embedded"
    for name, (schema, partition) in TABLES.items():
        table = DeltaTable(str(lake / name))
        assert table.metadata().partition_columns == [partition], name
        assert [f.name for f in table.schema().fields] == schema.names, name
        assert table.protocol().min_reader_version >= 1
    counts = {name: len(DeltaTable(str(lake / name)).to_pandas()) for name in TABLES}
    # Hand-counted: samples/ has 12 authorizer records, 10 Selector / NetworkClient
    # authentication lines (+1 LDAP callback line no family claims), 2 request-log records
    # (both the ENVELOPE line), 4 Connect REST access lines and 2 worker lines; the broker-7
    # folder adds 4 request-log lines, 3 of them delegation-token operations.
    # broker-7/server.log adds 4 records: 2 quarantined, 1 out of scope, 1 failed
    # authentication (which adds failed-authentication-total and -rate for its hour and its
    # day). The other layouts add 6 records: broker-7's CFK denial, weird.log's 3 (2
    # quarantined), broker-8's failed authentication (+4 metrics) and denial; the two denials
    # add authorization-denied-rate-per-minute for their node's hour and day (+4).
    assert counts == {
        raw_lines.TABLE_NAME: 31 + 4 + 4 + 6,
        authz_decisions.TABLE_NAME: 12 + 2,
        auth_events.TABLE_NAME: 10 + 1 + 1,
        request_events.TABLE_NAME: 2 + 4,
        token_events.TABLE_NAME: 3,
        connect_requests.TABLE_NAME: 6,
        quarantine.TABLE_NAME: 2 + 2,
        # + KIP-590 (gold): forwarding-failures-total for the 2 failed ENVELOPEs and
        # forwarded-requests-total for broker 7's CREATE and RENEW_DELEGATION_TOKEN (a KRaft
        # broker forwards them), per API, 1h and 1d.
        security_metrics.TABLE_NAME: 14 + 4 + 2 + 4 + 4 + 4,
    }


def test_malformed_records_are_quarantined_with_a_reason(
    spark: SparkSession, sample_lake: tuple[Path, RunSummary]
) -> None:
    lake, _ = sample_lake
    got = _table(spark, lake, quarantine.TABLE_NAME).select(
        "line_number",
        "node_id",
        "family",
        "reason_code",
        "raw_truncated",
        F.length("raw").alias("raw_chars"),
    )
    expected = spark.createDataFrame(
        [(1, "7", "authz", "authz_truncated_message", False, len(BAD_LINES[0])),
         (2, "7", "request", "request_truncated", True, 8192),
         (1, "7", "authz", "unrecognized_layout", False, len(UNKNOWN_LAYOUT[0])),
         (2, "7", "auth", "unrecognized_layout", False, len(UNKNOWN_LAYOUT[1]))],
        "line_number long, node_id string, family string, reason_code string, raw_truncated boolean, raw_chars int",
    )  # fmt: skip
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def _contains_any(df: DataFrame, needles: list[str]) -> Column:
    """True for rows where any column, as text, contains any of ``needles``."""
    text = F.concat_ws("\u0001", *[F.col(f.name).cast("string") for f in df.schema.fields])
    return F.exists(F.array(*[F.lit(n) for n in needles]), lambda n: F.contains(text, n))


def test_no_secret_reaches_any_table(
    spark: SparkSession, sample_lake: tuple[Path, RunSummary]
) -> None:
    lake, _ = sample_lake
    secrets = [HMAC_B64, AUTH_BYTES, HMAC_BYTES, "foobar-secret-hmac", "102, 111, 111"]
    for name in TABLES:
        df = _table(spark, lake, name)
        leaks = df.where(_contains_any(df, secrets))
        assert leaks.isEmpty(), name
    # The records are kept with each secret replaced by its keyed fingerprint (recomputed here
    # with the standard library from the key the run generated in the lake), and attributed to
    # node 7 by the server.properties beside the log.
    key = lake_key_path(str(lake)).read_text(encoding="utf-8").strip().encode()

    def fp(value: str) -> str:
        return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:32]

    bronze = _table(spark, lake, raw_lines.TABLE_NAME).where(
        (F.col("node_id") == "7") & F.col("source_path").endswith("/kafka-request.log")
    )
    got = bronze.select(
        "line_number",
        "node_id_source",
        F.regexp_extract(
            "message", r"(?:hmac|authBytes)\W+\[REDACTED hmac-sha256:(\w+)\]", 1
        ).alias("fp"),
    )
    expected = spark.createDataFrame(
        [
            (1, "config", fp(HMAC_B64)),
            (2, "config", fp(HMAC_B64)),
            (3, "config", fp(AUTH_BYTES)),
            (4, "config", fp(HMAC_BYTES)),
        ],
        "line_number long, node_id_source string, fp string",
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def test_accounting_balances_per_file(sample_lake: tuple[Path, RunSummary]) -> None:
    _, summary = sample_lake
    got = {
        Path(row["source_path"]).name: (
            row["physical_lines"], row["comment_lines"], row["bronze_records"], row["parsed"],
            row["quarantined"], row["out_of_scope"], row["pending"], row["balanced"],
        )
        for row in summary.accounting
    }  # fmt: skip
    assert got == {
        "authorizer.log": (21, 9, 12, 12, 0, 0, 0, True),
        "connect-rest-access.log": (14, 10, 4, 4, 0, 0, 0, True),
        # The RestClient ERROR line folds its exception line in: 2 physical lines, 1 record.
        "connect-worker.log": (10, 7, 2, 2, 0, 0, 0, True),
        "forwarding.log": (5, 4, 1, 1, 0, 0, 0, True),
        "request-log.log": (62, 61, 1, 1, 0, 0, 0, True),
        "sasl-authentication.log": (26, 15, 11, 10, 0, 1, 0, True),
        "kafka-request.log": (4, 0, 4, 4, 0, 0, 0, True),
        # 5 lines: 1 blank, 4 records (the stray-bytes line is one of its own, out of scope).
        "server.log": (5, 0, 4, 1, 2, 1, 0, True),
        "kafka-authorizer.log": (1, 0, 1, 1, 0, 0, 0, True),
        # In no known layout: the two security records quarantined, the third out of scope.
        "weird.log": (3, 0, 3, 0, 2, 1, 0, True),
        "broker.log": (1, 0, 1, 1, 0, 0, 0, True),
        "kafka.out": (1, 0, 1, 1, 0, 0, 0, True),
    }
    assert summary.balanced
    unknown = {Path(row["source_path"]).name: row["unrecognized"] for row in summary.accounting}
    assert {name: n for name, n in unknown.items() if n} == {"server.log": 1, "weird.log": 3}
    # Only the file made mostly of unknown lines is named, with how to declare its layout.
    named = [w for w in summary.warnings if "log layout the pipeline does not know" in w]
    assert len(named) == 1 and "weird.log: 3 of 3 records" in named[0]
    assert "layout_pattern" in named[0]


def test_each_file_is_read_in_its_own_layout(
    spark: SparkSession, sample_lake: tuple[Path, RunSummary]
) -> None:
    lake, _ = sample_lake
    got = (
        _table(spark, lake, raw_lines.TABLE_NAME)
        .where(F.col("node_id").isin("7", "8"))
        .groupBy(F.regexp_extract("source_path", r"[^/]+$", 0).alias("file"), "layout")
        .count()
    )
    expected = spark.createDataFrame(
        [
            ("kafka-request.log", "log4j", 4),
            ("server.log", "log4j", 3),
            ("server.log", "unrecognized", 1),
            ("kafka-authorizer.log", "confluent_operator", 1),
            ("weird.log", "unrecognized", 3),
            ("broker.log", "logging_config", 1),
            ("kafka.out", "logging_config", 1),
        ],
        "file string, layout string, count long",
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def test_authorizer_samples_end_to_end(
    spark: SparkSession, sample_lake: tuple[Path, RunSummary]
) -> None:
    lake, _ = sample_lake
    got = _table(spark, lake, authz_decisions.TABLE_NAME).select(
        F.regexp_extract("source_path", r"[^/]+$", 0).alias("file"), "line_number", "node_id",
        "record_type", "decision", "operation", "host", "resource_type", "resource_name",
    )  # fmt: skip
    sky = ("DENIED", "DESCRIBE", "10.16.19.213", "TOPIC")
    local = "127.0.0.1"
    expected = spark.createDataFrame(
        [
            ("authorizer.log", 5, "samples", "decision", *sky, "__consumer_offsets"),
            ("authorizer.log", 6, "samples", "decision", *sky, "test"),
            ("authorizer.log", 7, "samples", "decision", *sky, "qa.dcSacramento.skydrivetest"),
            ("authorizer.log", 8, "samples", "decision", *sky, "__confluent.support.metrics"),
            ("authorizer.log", 11, "samples", "acl_match", "ALLOWED", "WRITE", local, "TOPIC", "ssl"),
            ("authorizer.log", 12, "samples", "decision", "ALLOWED", "DESCRIBE", local, "TOPIC", "ssl"),
            ("authorizer.log", 13, "samples", "acl_match", "ALLOWED", "WRITE", local, "TOPIC", "ssl"),
            ("authorizer.log", 14, "samples", "decision", "ALLOWED", "WRITE", local, "TOPIC", "ssl"),
            ("authorizer.log", 15, "samples", "acl_match", "ALLOWED", "READ", local, "TOPIC", "ssl"),
            ("authorizer.log", 16, "samples", "decision", "ALLOWED", "READ", local, "TOPIC", "ssl"),
            ("authorizer.log", 19, "samples", "decision", "ALLOWED", "WRITE", local, "TOPIC", "customerOrders"),
            ("authorizer.log", 20, "samples", "decision", "DENIED", "DESCRIBE", "10.0.0.13", "TOPIC", "customerOrders"),
            # A built-in layout (Confluent for Kubernetes) and a node's own log4j config.
            ("kafka-authorizer.log", 1, "7", "decision", "DENIED", "DESCRIBE", "172.17.0.12", "TOPIC", "_confluent-license"),
            ("kafka.out", 1, "8", "decision", "DENIED", "WRITE", "10.0.0.10", "TOPIC", "orders"),
        ],
        "file string, line_number long, node_id string, record_type string, decision string, "
        "operation string, host string, resource_type string, resource_name string",
    )  # fmt: skip
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def test_failed_authentication_metric_from_samples(
    spark: SparkSession, sample_lake: tuple[Path, RunSummary]
) -> None:
    lake, _ = sample_lake
    got = (
        _table(spark, lake, security_metrics.TABLE_NAME)
        .where((F.col("metric_name") == "failed-authentication-total") & (F.col("window") == "1d"))
        .select(F.date_format("window_start_ts", "yyyy-MM-dd").alias("day"), "broker_id", "listener", "event_count")
    )  # fmt: skip
    expected = spark.createDataFrame(
        [
            ("2023-01-19", "1", None, 5),  # the five METADATA-during-handshake lines, nodeId=1
            ("2022-11-23", "0", "TLS-9093", 1),  # Strimzi: listener from the network thread name
            ("2020-09-22", "1", None, 1),  # [SocketServer brokerId=1]
            ("2026-11-20", "7", None, 1),  # broker-7/server.log, node id from server.properties
            ("2026-11-21", "8", None, 1),  # broker-8/broker.log, in its log4j.properties' layout
        ],
        "day string, broker_id string, listener string, event_count long",
    )
    assertDataFrameEqual(got, expected, checkRowOrder=False)


def _contents(spark: SparkSession, lake: Path) -> dict[str, list[tuple[object, ...]]]:
    out = {}
    for name in TABLES:
        df = _table(spark, lake, name).drop("run_id")
        out[name] = sorted(tuple(r) for r in df.collect())
    return out


def test_reruns_replace_and_never_duplicate(
    spark: SparkSession, inputs: list[Path], sample_lake: tuple[Path, RunSummary]
) -> None:
    """Runs after the module's first run on the same lake: a full re-run, then a one-day run."""
    lake, first = sample_lake
    before = _contents(spark, lake)
    versions = {name: DeltaTable(str(lake / name)).version() for name in TABLES}

    second = _run(spark, inputs, lake)
    assert second.run_id != first.run_id
    assert _contents(spark, lake) == before
    # The accounting reads what the run wrote back from the lake: the same, file by file.
    assert second.accounting == first.accounting
    for name in TABLES:  # one replace commit per table, nothing appended beside it
        assert DeltaTable(str(lake / name)).version() == versions[name] + 1, name

    day = _run(spark, inputs, lake, start="2020-06-03", end="2020-06-04")
    totals = day.totals()
    # Only the four SimpleAclAuthorizer lines of 2020-06-03 are inside the window.
    assert (totals["bronze_records"], totals["parsed"], totals["records"]) == (4, 4, 45)
    assert day.balanced
    assert _contents(spark, lake) == before
