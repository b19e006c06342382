"""jobs.gold.kip507_connect_signing.build: a mixed KIP-507 scenario gives exactly the expected findings and
tables; [rules.connect] is validated.

The scenario is tests.spark.test_connect_signing.SCENARIO (leader connect-1's access log, follower
connect-2's retry lines) plus session-key lines, a disabled-verification warning, a leader-side
algorithm refusal and the workers' configs. Expected values are derived by hand.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from jobs.config import RunConfig, SourceSpec
from jobs.errors import ConfigError
from jobs.gold.context import GoldContext
from jobs.gold.kip507_connect_signing import build
from schemas.connect_internal_requests import CONNECT_INTERNAL_REQUESTS
from schemas.connect_session_keys import CONNECT_SESSION_KEYS
from schemas.findings import FINDINGS
from schemas.node_properties import NODE_PROPERTIES
from schemas.raw_lines import RAW_LINES
from tests.spark.test_connect import HERDER, MAPPER
from tests.spark.test_connect_signing import (
    ALGORITHM,
    DAY,
    DISABLED,
    SCENARIO,
    at,
    properties,
    silver,
)
from tests.support.bronze_rows import Record

PATH = "file:/logs/test.log"
CONFIG_3 = "/etc/connect-3/connect-distributed.properties"
TASKS = "POST /connectors/<name>/tasks"


def key_updated(ts: dt.datetime) -> tuple[str, Record]:
    return "connect-1", Record(
        "INFO", HERDER, "[Worker clientId=connect-1, groupId=g] Session key updated", log_ts=ts
    )


MIXED = [
    *SCENARIO,  # lines 1-20
    key_updated(at(9, 0)),  # 21
    key_updated(at(10, 0)),  # 22: 3600000, on schedule
    key_updated(at(10, 20)),  # 23: 1200000, 40 min early
    ("connect-3", Record("WARN", HERDER, "[Worker clientId=connect-3, groupId=g] " + DISABLED,
                         log_ts=at(9, 0))),  # 24
    ("connect-1", Record("DEBUG", MAPPER, "Uncaught exception in REST call to /connectors/jdbc-sink/tasks",
                         continuation=ALGORITHM, log_ts=at(11, 10, 30))),  # 25
]  # fmt: skip


def context(
    spark: SparkSession, tmp_path: Path, rules: dict[str, dict[str, object]]
) -> GoldContext:
    bronze, requests = silver(spark, MIXED)
    config = properties(
        [("connect-1", "group.id", "g"), ("connect-1", "connect.protocol", "sessioned"),
         ("connect-3", "group.id", "g"), ("connect-3", "connect.protocol", "compatible"),
         ("connect-3", "inter.worker.signature.algorithm", "HmacSHA512"),
         ("connect-3", "inter.worker.verification.algorithms", "HmacSHA512,HmacSHA256")],
        spark,
    )  # fmt: skip

    return GoldContext(
        spark=spark,
        silver={"connect_requests": requests},
        bronze=bronze,
        node_properties=config,
        config=RunConfig(sources=(SourceSpec("x"),), lake=str(tmp_path), run_id="r", rules=rules),
    )


def test_build_gives_the_tables_and_exactly_the_expected_findings(
    spark: SparkSession, tmp_path: Path
) -> None:
    output = build(context(spark, tmp_path, {}))
    assert [(t.name, t.schema, t.partition_by) for t in output.tables] == [
        ("connect_internal_requests", CONNECT_INTERNAL_REQUESTS, ("event_date",)),
        ("connect_session_keys", CONNECT_SESSION_KEYS, ("event_date",)),
    ]
    assert output.metrics == ()
    findings = output.findings[0]
    for frame in output.findings[1:]:
        findings = findings.unionByName(frame)
    actual = findings.select(
        "rule_id", "kip", "severity", "subject_type", "subject", "discriminator", "node_id",
        "first_seen_ts", "last_seen_ts", "count",
        F.array_join(F.transform("evidence", lambda e: e.line_number), ",").alias("lines"),
        "explanation", "run_id", "finding_date",
    )  # fmt: skip
    day, k = DAY.date(), "KIP-507"
    expected = [
        ("connect.invalid_signature_beyond_grace", k, "medium", "client_address", "10.0.0.2",
         f"connect-1|jdbc-sink|{TASKS}", "connect-1", at(10, 1, 5), at(10, 35), 2, "4,12",
         "2 internal request(s) for connector(s) jdbc-sink got 403 (invalid signature) more than"
         " 60000 ms into the worker's retries: not a key rotation; a worker with a wrong key or a"
         " forged request", "r", day),
        ("connect.invalid_signature_beyond_grace", k, "medium", "worker", "connect-2:8083",
         f"jdbc-sink|{TASKS}", "connect-2:8083", at(10, 35, 1), at(10, 35, 1), 1, "17",
         "1 task-config forward(s) for connector(s) jdbc-sink were refused with 403 after Kafka's"
         " one-minute stale-key grace", "r", day),
        ("connect.internal_endpoint_non_worker_agent", k, "high", "client_address", "10.0.0.9",
         "connect-1|curl/8.4.0", "connect-1", at(10, 5), at(10, 5), 1, "6",
         "1 call(s) to Connect's internal endpoints (connectors jdbc-sink; statuses 403) with"
         " User-Agent 'curl/8.4.0', not 'kafka-connect': not a worker", "r", day),
        ("connect.internal_request_bad_request", k, "medium", "client_address", "10.0.0.2",
         f"connect-1|jdbc-sink|{TASKS}", "connect-1", at(11, 10), at(11, 10), 1, "15",
         "1 internal request(s) for connector(s) jdbc-sink got 400: unsigned, or signed with an"
         " algorithm the leader's inter.worker.verification.algorithms does not permit", "r", day),
        ("connect.signature_algorithm_not_permitted", k, "medium", "worker", "connect-2:8083",
         "HmacSHA1", "connect-2:8083", at(10, 45), at(10, 45), 1, "19",
         "1 line(s): the leader refused the key signing algorithm 'HmacSHA1' (400)", "r", day),
        ("connect.signature_algorithm_not_permitted", k, "medium", "worker", "connect-1",
         "HmacSHA1", "connect-1", at(11, 10, 30), at(11, 10, 30), 1, "25",
         "1 line(s): the leader refused the key signing algorithm 'HmacSHA1' (400)", "r", day),
        # the warning line and the config (one event, dated by connect-3's only record)
        ("connect.request_verification_disabled", k, "high", "worker", "connect-3", "",
         "connect-3", at(9, 0), at(9, 0), 2, "24",
         f"connect.protocol is 'compatible' (config {CONFIG_3}): internal request verification"
         " is disabled, anyone reaching the REST port can write task configs", "r", day),
        # connect-3 signs HmacSHA512; connect-1 verifies only the default HmacSHA256
        ("connect.signature_algorithm_not_verifiable", k, "medium", "worker", "connect-3",
         "connect-1", "connect-3", at(9, 0), at(9, 0), 1, "",
         "signs with HmacSHA512, which worker connect-1 does not verify (HmacSHA256): its"
         f" internal requests get 400 whenever that worker leads (config {CONFIG_3})", "r", day),
        ("connect.session_key_rotation_off_schedule", k, "medium", "worker", "connect-1", "",
         "connect-1", at(10, 20), at(10, 20), 1, "23",
         "1 session-key update(s) 1200000-1200000 ms after the previous one, key TTL 3600000 ms",
         "r", day),
    ]  # fmt: skip
    assertDataFrameEqual(actual, spark.createDataFrame(expected, actual.schema))
    assert findings.schema.fieldNames() == FINDINGS.fieldNames()
    one = findings.where("rule_id = 'connect.request_verification_disabled'").first()
    key = "connect.request_verification_disabled\u001fworker\u001fconnect-3\u001f"
    assert one is not None and one["finding_id"] == hashlib.sha256(key.encode()).hexdigest()

    keys = output.tables[1].df.select("worker_id", "updated_ts", "interval_ms", "off_schedule")
    assertDataFrameEqual(
        keys,
        spark.createDataFrame(
            [("connect-2:8083", at(10, 50), None, None), ("connect-1", at(9, 0), None, None),
             ("connect-1", at(10, 0), 3600000, False), ("connect-1", at(10, 20), 1200000, True)],
            keys.schema,
        ),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (
            {"grace_ms": 1},
            r"unknown key rules\.connect\.grace_ms: did you mean stale_key_grace_ms\?",
        ),
        (
            {"stale_key_grace_ms": "1m"},
            r"rules\.connect\.stale_key_grace_ms: expected an integer, got '1m'",
        ),
    ],
)
def test_rules_connect_keys_are_validated(
    spark: SparkSession, tmp_path: Path, rules: dict[str, object], message: str
) -> None:
    empty = spark.createDataFrame([], RAW_LINES)
    config = RunConfig(
        sources=(SourceSpec("x"),), lake=str(tmp_path), run_id="r", rules={"connect": rules}
    )
    bare = GoldContext(
        spark=spark,
        silver={},
        bronze=empty,
        node_properties=spark.createDataFrame([], NODE_PROPERTIES),
        config=config,
    )
    with pytest.raises(ConfigError, match=message):
        build(bare)
