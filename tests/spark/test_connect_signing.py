"""transforms.gold.kip507_connect_signing: KIP-507 internal requests, stale-key grace, session-key rotations
and the config-side rules, on silver rows parsed from log lines in Kafka's exact wordings
(DistributedHerder.java / RestClient.java at trunk 1eb7644349c; docs/kafka-log-formats.md section 8).

Expected values are derived by hand in the comments next to them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    BooleanType,
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from pyspark.testing import assertDataFrameEqual

from schemas.connect_internal_requests import CONNECT_INTERNAL_REQUESTS
from schemas.connect_requests import CONNECT_REQUESTS
from schemas.connect_session_keys import CONNECT_SESSION_KEYS
from schemas.node_properties import NODE_PROPERTIES
from schemas.raw_lines import FAMILY_CONNECT_REST, FAMILY_CONNECT_WORKER, RAW_LINES
from tests.spark.test_connect import HERDER, REST
from tests.support.bronze_rows import Record, bronze_row
from transforms.gold.kip507_connect_signing import (
    internal_attempts,
    internal_request_counts,
    node_activity,
    session_key_rotations,
    unverifiable_signature_algorithms,
    verification_disabled,
)
from transforms.quarantine import parsed_rows
from transforms.silver.connect.claims import parse_connect_rest, parse_connect_worker

DAY = dt.datetime(2026, 11, 20)
T, FENCE = "POST /connectors/<name>/tasks", "PUT /connectors/<name>/fence"
W1, W2 = "connect-1", "connect-2:8083"
PREFIX = "[Worker clientId=connect-2:8083, groupId=connect-cluster] "
INVALID = (
    "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException: Internal request contained"
    " invalid signature.\n\tat org.apache.kafka.connect.runtime.rest.RestClient.httpRequest"
)
CONFLICT = (
    "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException: Cannot complete request"
    " because of a conflicting operation (e.g. worker rebalance)"
)
ALGORITHM = (
    "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: This worker does not"
    " support the 'HmacSHA1' key signing algorithm used by other workers. This worker is currently"
    " configured to use: [HmacSHA256]. Check that all workers' configuration files permit the same"
    " set of signature algorithms, and correct any misconfigured worker and restart it."
)
DISABLED = (
    "Internal request verification will be disabled for this cluster as this worker's"
    " connect.protocol configuration has been set to 'compatible'. If this is not intentional,"
    " either remove the 'connect.protocol' configuration from the worker config file or change its"
    " value to 'SESSIONED'. If this configuration is left as-is, the cluster will be insecure; for"
    " more information, see KIP-507: https://cwiki.apache.org/confluence/display/KAFKA/"
    "KIP-507%3A+Securing+Internal+Connect+REST+Endpoints"
)
STALE = "Failed to reconfigure connector's tasks (jdbc-sink), possibly due to expired session key. Retrying after backoff"
OLD_RETRY = "Failed to reconfigure connector's tasks, retrying after backoff:"
RETRY = "Failed to reconfigure connector's tasks (jdbc-sink), retrying after backoff."


def at(hour: int, minute: int, second: int = 0) -> dt.datetime:
    return DAY.replace(hour=hour, minute=minute, second=second)


def access(
    client: str, request: str, status: int, agent: str | None, ts: dt.datetime | None
) -> Record:
    """A 3.1+ access-log record (Jetty writes '-' for no User-Agent); %t = ts, else 10:00."""
    when = (ts or at(10, 0)).strftime("%d/%b/%Y:%H:%M:%S")
    line = f'{client} - - [{when} +0000] "{request} HTTP/1.1" {status} 71 "-" "{agent or "-"}" 3'
    return Record("INFO", REST, line, log_ts=ts)


def herder(level: str, text: str, ts: dt.datetime, trace: str | None = None) -> Record:
    return Record(level, HERDER, PREFIX + text, continuation=trace, log_ts=ts)


def bronze_of(spark: SparkSession, records: Sequence[tuple[str | None, Record]]) -> DataFrame:
    """Bronze rows of (node_id, record) pairs, lines numbered 1.. in order."""
    rows = []
    for number, (node, record) in enumerate(records, 1):
        family = FAMILY_CONNECT_REST if record.logger == REST else FAMILY_CONNECT_WORKER
        row = list(bronze_row(record, number, family))
        row[4] = node
        rows.append(tuple(row))
    return spark.createDataFrame(rows, RAW_LINES)


def silver(
    spark: SparkSession, records: Sequence[tuple[str | None, Record]]
) -> tuple[DataFrame, DataFrame]:
    """(bronze, silver connect_requests) of (node_id, record) pairs, through the real parsers."""
    bronze = bronze_of(spark, records)
    rest = parse_connect_rest(bronze.where(bronze.family == FAMILY_CONNECT_REST))
    worker = parse_connect_worker(bronze.where(bronze.family == FAMILY_CONNECT_WORKER))
    parsed = parsed_rows(rest, CONNECT_REQUESTS).unionByName(parsed_rows(worker, CONNECT_REQUESTS))
    # Materialised once: the rules then run on small local frames, not on the parse plan.
    return bronze, spark.createDataFrame(parsed.collect(), CONNECT_REQUESTS)


TASKS = "POST /connectors/jdbc-sink/tasks"
OLD_LAYOUT = (
    '10.0.0.4 - - [20/Nov/2026:11:00:00 +0000] "POST /connectors/old/tasks HTTP/1.1" 200 0  5'
)
#: Leader connect-1's access log, then follower connect-2's retry lines (node id unknown: the
#: worker id falls back to the [Worker clientId=...] prefix).
SCENARIO: list[tuple[str | None, Record]] = [
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", at(10, 0, 0))),  # 1 episode start
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", at(10, 0, 30))),  # 2 +30 s
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", at(10, 1, 0))),  # 3 +60 s: inclusive
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", at(10, 1, 5))),  # 4 +65 s: beyond
    (W1, access("10.0.0.2", TASKS, 200, "kafka-connect", at(10, 1, 10))),  # 5 ends the episode
    (W1, access("10.0.0.9", TASKS, 403, "curl/8.4.0", at(10, 5))),  # 6 not a worker
    (W1, access("10.0.0.3", "PUT /connectors/pg-src/fence", 200, "kafka-connect", at(10, 2))),
    (W1, access("10.0.0.2", "GET /connectors/jdbc-sink/tasks", 200, "curl/8", at(10, 2, 30))),
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", at(10, 30))),  # 9 after a 200: new
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", at(10, 33))),  # 10 180 s pause: new
    (W1, access("10.0.0.2", TASKS, 503, "kafka-connect", at(10, 33, 10))),  # 11
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", at(10, 35))),  # 12 +120 s: beyond
    (W1, access("10.0.0.2", TASKS, 403, "kafka-connect", None)),  # 13 no log time
    (W1, Record("INFO", REST, OLD_LAYOUT, log_ts=at(11, 0))),  # 14 <=2.3: no User-Agent
    (W1, access("10.0.0.2", TASKS, 400, "kafka-connect", at(11, 10))),  # 15
    (None, herder("DEBUG", STALE, at(10, 0, 1))),  # 16
    (None, herder("ERROR", RETRY, at(10, 35, 1), INVALID)),  # 17
    (None, herder("ERROR", RETRY, at(10, 40), CONFLICT)),  # 18
    (None, herder("ERROR", OLD_RETRY, at(10, 45), ALGORITHM)),  # 19 <=2.7 wording
    (None, herder("INFO", "Session key updated", at(10, 50))),  # 20 not a request
]

ATTEMPT_SCHEMA = StructType(
    [
        StructField("worker_id", StringType()),
        StructField("observed_by", StringType()),
        StructField("client_address", StringType()),
        StructField("connector_name", StringType()),
        StructField("endpoint", StringType()),
        StructField("status", IntegerType()),
        StructField("user_agent", StringType()),
        StructField("is_worker_agent", BooleanType()),
        StructField("stale_key_class", StringType()),
        StructField("line_number", LongType()),
    ]
)


def types(schema: StructType) -> list[tuple[str, object]]:
    """Column names and types in order (nullability is the writer's: the declared contract)."""
    return [(f.name, f.dataType) for f in schema.fields]


@pytest.fixture(scope="module")
def scenario(spark: SparkSession) -> DataFrame:
    """SCENARIO's silver rows, parsed once for the module."""
    return silver(spark, SCENARIO)[1]


def attempts_of(requests: DataFrame, grace_ms: int = 60_000) -> DataFrame:
    return internal_attempts(
        requests, grace_ms=grace_ms, retry_gap_ms=120_000, worker_agent="kafka-connect"
    )


def test_internal_attempts_grade_403s_by_retry_episode(
    spark: SparkSession, scenario: DataFrame
) -> None:
    leader = (W1, "leader", "10.0.0.2", "jdbc-sink", T)
    ok, within, beyond = ("kafka-connect", True), "within_grace", "beyond_grace"
    follower = (W2, "follower", None, "jdbc-sink", T)
    expected = [
        (*leader, 403, *ok, within, 1),
        (*leader, 403, *ok, within, 2),
        (*leader, 403, *ok, within, 3),
        (*leader, 403, *ok, beyond, 4),
        (*leader, 200, *ok, None, 5),
        (W1, "leader", "10.0.0.9", "jdbc-sink", T, 403, "curl/8.4.0", False, None, 6),
        (W1, "leader", "10.0.0.3", "pg-src", FENCE, 200, *ok, None, 7),
        (*leader, 403, *ok, within, 9),
        (*leader, 403, *ok, within, 10),
        (*leader, 503, *ok, None, 11),
        (*leader, 403, *ok, beyond, 12),
        (*leader, 403, *ok, None, 13),
        (W1, "leader", "10.0.0.4", "old", T, 200, None, None, None, 14),
        (*leader, 400, *ok, None, 15),
        (*follower, 403, None, None, within, 16),
        (*follower, 403, None, None, beyond, 17),
        (*follower, None, None, None, None, 18),
        (W2, "follower", None, None, T, 400, None, None, None, 19),
    ]
    actual = attempts_of(scenario).select(*ATTEMPT_SCHEMA.fieldNames())
    assertDataFrameEqual(actual, spark.createDataFrame(expected, ATTEMPT_SCHEMA))


def test_a_shorter_grace_moves_403s_beyond_it(spark: SparkSession, scenario: DataFrame) -> None:
    # grace 30 s: lines 1 (+0 s), 2 (+30 s), 9, 10 stay within; 3 (+60 s) joins 4 and 12.
    actual = attempts_of(scenario, grace_ms=30_000).where("observed_by = 'leader'")
    rows = actual.where("stale_key_class = 'beyond_grace'").select("line_number")
    assertDataFrameEqual(rows, spark.createDataFrame([(3,), (4,), (12,)], "line_number long"))


def test_internal_request_counts_per_hour(spark: SparkSession, scenario: DataFrame) -> None:
    h10, h11 = at(10, 0), at(11, 0)
    end10, end11, day = at(11, 0), at(12, 0), DAY.date()
    leader = (W1, "leader", "10.0.0.2", "jdbc-sink", T)
    follower = (W2, "follower", None, "jdbc-sink", T)
    expected = [
        # lines 1 2 3 4 9 10 12: 5 within (1 2 3 9 10), 2 beyond (4 12)
        (*leader, 403, h10, end10, 7, 0, 5, 2, at(10, 0), at(10, 35), "r", day),
        (*leader, 200, h10, end10, 1, 0, 0, 0, at(10, 1, 10), at(10, 1, 10), "r", day),
        (*leader, 503, h10, end10, 1, 0, 0, 0, at(10, 33, 10), at(10, 33, 10), "r", day),
        (*leader, 403, None, None, 1, 0, 0, 0, None, None, "r", None),
        (*leader, 400, h11, end11, 1, 0, 0, 0, at(11, 10), at(11, 10), "r", day),
        (W1, "leader", "10.0.0.9", "jdbc-sink", T, 403, h10, end10, 1, 1, 0, 0,
         at(10, 5), at(10, 5), "r", day),
        (W1, "leader", "10.0.0.3", "pg-src", FENCE, 200, h10, end10, 1, 0, 0, 0,
         at(10, 2), at(10, 2), "r", day),
        (W1, "leader", "10.0.0.4", "old", T, 200, h11, end11, 1, None, 0, 0,
         at(11, 0), at(11, 0), "r", day),
        (*follower, 403, h10, end10, 2, None, 1, 1, at(10, 0, 1), at(10, 35, 1), "r", day),
        (*follower, None, h10, end10, 1, None, 0, 0, at(10, 40), at(10, 40), "r", day),
        (W2, "follower", None, None, T, 400, h10, end10, 1, None, 0, 0,
         at(10, 45), at(10, 45), "r", day),
    ]  # fmt: skip
    actual = internal_request_counts(attempts_of(scenario), "r")
    assert types(actual.schema) == types(CONNECT_INTERNAL_REQUESTS)
    assertDataFrameEqual(actual, spark.createDataFrame(expected, CONNECT_INTERNAL_REQUESTS))


def properties(
    rows: Sequence[tuple[str | None, str, str | None]], spark: SparkSession
) -> DataFrame:
    """NODE_PROPERTIES rows of Connect workers: (node_id, property, value)."""
    data = [
        (n, "connect", f"/etc/{n}/connect-distributed.properties", p, v, False) for n, p, v in rows
    ]
    return spark.createDataFrame(data, NODE_PROPERTIES)


def key_line(worker: str, ts: dt.datetime) -> tuple[str | None, Record]:
    prefix = f"[Worker clientId={worker}, groupId=connect-cluster] "
    return worker, Record("INFO", HERDER, prefix + "Session key updated", log_ts=ts)


def test_session_key_rotations_against_each_workers_ttl(spark: SparkSession) -> None:
    _, requests = silver(
        spark,
        [
            key_line("w1", at(0, 10)),  # 1: previous 23:40 the day before (lake): 1800000
            key_line("w1", at(0, 40).replace(microsecond=500_000)),  # 2: 1800500
            key_line("w1", at(0, 45)),  # 3: 299500, early
            key_line("w2", at(1, 0)),  # 4: first seen
            key_line("w2", at(2, 5)),  # 5: 3900000, default TTL 3600000, late
            key_line("w3", at(3, 0)),  # 6
            key_line("w3", at(4, 0)),  # 7: 3600000, TTL '1h' is not a number
            ("w4", Record("INFO", HERDER, "[Worker clientId=w4, groupId=g] Session key updated")),
        ],
    )
    ttls = properties(
        [("w1", "inter.worker.key.ttl.ms", "1800000"), ("w3", "inter.worker.key.ttl.ms", "1h"),
         ("w2", "group.id", "connect-cluster")],
        spark,
    )  # fmt: skip
    before = dt.datetime(2026, 11, 19, 23, 40)
    previous = spark.createDataFrame(
        [
            ("w1", "w1", "connect-cluster", before, None, None, 1800000, "config", None, None,
             "/old.log", 9, "r0", before.date()),
            # on the replaced date: not a predecessor (this run rewrites it)
            ("w1", "w1", "connect-cluster", at(0, 5), None, None, 1800000, "config", None, None,
             "/old.log", 10, "r0", DAY.date()),
        ],
        CONNECT_SESSION_KEYS,
    )  # fmt: skip
    dates = spark.createDataFrame(
        [(DAY.date(),)], StructType([StructField("event_date", DateType())])
    )
    actual = session_key_rotations(requests, ttls, previous, dates, tolerance_ms=60_000, run_id="r")
    path, g, day = "file:/logs/test.log", "connect-cluster", DAY.date()
    expected = [
        ("w1", "w1", g, at(0, 10), before, 1800000, 1800000, "config", 0, False, path, 1, "r", day),
        ("w1", "w1", g, at(0, 40).replace(microsecond=500_000), at(0, 10), 1800500, 1800000,
         "config", 500, False, path, 2, "r", day),
        ("w1", "w1", g, at(0, 45), at(0, 40).replace(microsecond=500_000), 299500, 1800000,
         "config", -1500500, True, path, 3, "r", day),
        ("w2", "w2", g, at(1, 0), None, None, 3600000, "default", None, None, path, 4, "r", day),
        ("w2", "w2", g, at(2, 5), at(1, 0), 3900000, 3600000, "default", 300000, True, path, 5,
         "r", day),
        ("w3", "w3", g, at(3, 0), None, None, None, "config", None, None, path, 6, "r", day),
        ("w3", "w3", g, at(4, 0), at(3, 0), 3600000, None, "config", None, None, path, 7, "r", day),
    ]  # fmt: skip
    assert types(actual.schema) == types(CONNECT_SESSION_KEYS)
    assertDataFrameEqual(actual, spark.createDataFrame(expected, CONNECT_SESSION_KEYS))


FINDING_COLUMNS = StructType(
    [
        StructField("subject", StringType()),
        StructField("discriminator", StringType()),
        StructField("node_id", StringType()),
        StructField("first_seen_ts", CONNECT_INTERNAL_REQUESTS["first_seen_ts"].dataType),
        StructField("last_seen_ts", CONNECT_INTERNAL_REQUESTS["last_seen_ts"].dataType),
        StructField("count", LongType()),
        StructField("lines", StringType()),
    ]
)


def candidate_rows(candidates: DataFrame) -> DataFrame:
    """The candidates' generic columns, evidence as 'line,line' (one source file)."""
    return candidates.selectExpr(
        "subject", "discriminator", "node_id", "first_seen_ts", "last_seen_ts", "count",
        "array_join(transform(evidence, e -> e.line_number), ',') AS lines",
    )  # fmt: skip


def test_verification_disabled_from_warning_and_or_config(spark: SparkSession) -> None:
    warning = Record("WARN", HERDER, PREFIX + DISABLED, log_ts=at(8, 0))
    _, requests = silver(spark, [("connect-2", warning)])  # line 1
    bronze = bronze_of(
        spark,
        [
            ("connect-2", warning),
            ("connect-3", Record("INFO", REST, "x", log_ts=at(9, 0))),  # activity only
            ("connect-3", Record("INFO", REST, "y", log_ts=at(9, 30))),
            ("connect-1", Record("INFO", REST, "z", log_ts=at(7, 0))),
        ],
    )
    config = properties(
        [("connect-2", "connect.protocol", "compatible"), ("connect-3", "connect.protocol", "EAGER"),
         ("connect-1", "connect.protocol", "sessioned"), ("connect-4", "connect.protocol", "eager"),
         (None, "connect.protocol", "eager")],
        spark,
    )  # fmt: skip
    actual = verification_disabled(requests, config, node_activity(bronze))
    # connect-2: warning line 1 + its config (one event, dated by its only record at 08:00);
    # connect-3: config only, dated 09:00-09:30, no line; connect-1 sessioned; connect-4 and
    # the config without a node id have no records in the run.
    expected = [
        ("connect-2", "", "connect-2", at(8, 0), at(8, 0), 2, "1", "compatible",
         "/etc/connect-2/connect-distributed.properties"),
        ("connect-3", "", "connect-3", at(9, 0), at(9, 30), 1, "", "eager",
         "/etc/connect-3/connect-distributed.properties"),
    ]  # fmt: skip
    schema = StructType(
        [*FINDING_COLUMNS.fields, StructField("protocols", StringType()),
         StructField("config_path", StringType())]
    )  # fmt: skip
    assertDataFrameEqual(
        candidate_rows(actual).join(
            actual.select("subject", "protocols", "config_path"), "subject"
        ),
        spark.createDataFrame(expected, schema),
    )


def test_signature_algorithm_not_verifiable_between_workers_of_a_group(spark: SparkSession) -> None:
    bronze = bronze_of(
        spark,
        [("w1", Record("INFO", REST, "a", log_ts=at(6, 0))),
         ("w2", Record("INFO", REST, "b", log_ts=at(6, 5))),
         ("w3", Record("INFO", REST, "c", log_ts=at(6, 10)))],
    )  # fmt: skip
    config = properties(
        [
            ("w1", "group.id", "g1"), ("w1", "inter.worker.signature.algorithm", "HmacSHA512"),
            ("w1", "inter.worker.verification.algorithms", "HmacSHA512, HmacSHA256"),
            ("w2", "group.id", "g1"),  # signs HmacSHA256 (default): w1 verifies it
            ("w3", "group.id", "g2"),  # another group
            ("w4", "group.id", "g1"),  # no records: never a subject, but verifies (default)
            ("w5", "inter.worker.signature.algorithm", "HmacMD5"),  # no group.id
        ],
        spark,
    )  # fmt: skip
    actual = unverifiable_signature_algorithms(config, node_activity(bronze))
    # w1's HmacSHA512 is not in the default [HmacSHA256] of w2 and w4.
    expected = [
        ("w1", "w2", "w1", at(6, 0), at(6, 0), 1, "", "HmacSHA512", "HmacSHA256"),
        ("w1", "w4", "w1", at(6, 0), at(6, 0), 1, "", "HmacSHA512", "HmacSHA256"),
    ]
    schema = StructType(
        [*FINDING_COLUMNS.fields, StructField("algorithm", StringType()),
         StructField("verifier_algorithms", StringType())]
    )  # fmt: skip
    rows = (
        candidate_rows(actual)
        .join(actual.select("discriminator", "algorithm", "verifier_algorithms"), "discriminator")
        .select(*schema.fieldNames())
    )
    assertDataFrameEqual(rows, spark.createDataFrame(expected, schema))
