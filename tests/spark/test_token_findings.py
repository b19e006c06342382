"""transforms.gold.kip48_tokens.findings: every tokens.* rule on one KRaft scenario (the lifecycle test's
events plus describes, channel rejections and a burst), each expected finding written by
hand; finding ids checked against an independent sha256."""

from __future__ import annotations

import hashlib
from functools import reduce
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from schemas.node_properties import NODE_PROPERTIES
from tests.spark.test_token_hmac import FP_KEY, SECRET, json_form
from tests.spark.test_token_lifecycle import (
    DAY,
    FP_B,
    FP_C,
    FP_UNKNOWN,
    KRAFT_EVENTS,
    REQ,
    T0,
    H,
    create,
    empty,
    event,
    frame,
    utc,
)
from transforms.gold.kip48_tokens import findings as tf
from transforms.gold.kip48_tokens.lifecycle import replay_lifecycle, token_config

C1 = "/logs/c1/kafka-request.log"
DESCRIBED = {
    "owner": "User:alice",
    "renewers": ["User:bob"],
    "token_id": "tokC",
    "hmac_fingerprint": FP_C,
    "issue_timestamp_ms": T0,
    "expiry_timestamp_ms": T0 + DAY,
    "max_timestamp_ms": T0 + 7 * DAY,
}
EXTRA = [
    # admin (neither owner nor renewer) and bob (renewer) describe tokC two days after issue.
    event(12, "describe", T0 + 2 * DAY, requester="User:admin", **DESCRIBED),
    event(13, "describe", T0 + 2 * DAY + 500, requester="User:bob", **DESCRIBED),
    # Token requests over a channel that does not allow them.
    event(14, "describe", T0 + 5 * H, requester="User:ANONYMOUS", error_code=64),
    event(
        15,
        "create",
        T0 + 5 * H + 1,
        requester="User:ANONYMOUS",
        owner="User:ANONYMOUS",
        error_code=64,
        issue_timestamp_ms=-1,
        expiry_timestamp_ms=-1,
        max_timestamp_ms=-1,
    ),
    # alice's third create within an hour (lines 1 and 6 are the others); a genuine HMAC.
    create(
        16,
        T0 + 1_800_000,
        "tokE",
        json_form("tokE"),
        issue=T0 + 1_800_000,
        expiry=T0 + 1_800_000 + DAY,
        max_ts=T0 + 1_800_000 + 7 * DAY,
        lifetime=-1,
    ),
]
COLUMNS = (
    "rule_id",
    "severity",
    "subject_type",
    "subject",
    "discriminator",
    "node_id",
    "first_seen_ts",
    "last_seen_ts",
    "count",
    "evidence",
    "finding_date",
)
SCHEMA = (
    "rule_id string, severity string, subject_type string, subject string, "
    "discriminator string, node_id string, first_seen_ts timestamp, last_seen_ts timestamp, "
    "count long, evidence array<struct<source_path:string,line_number:long>>, "
    "finding_date date"
)


def found(  # noqa: PLR0917
    rule: str,
    severity: str,
    kind: str,
    subject: str,
    disc: str,
    first: int,
    last: int,
    count: int,
    lines: list[tuple[str, int]],
    node: str = "1",
) -> tuple[Any, ...]:
    return (
        rule,
        severity,
        kind,
        subject,
        disc,
        node,
        utc(first),
        utc(last),
        count,
        lines,
        utc(last).date(),
    )


def test_every_token_rule_on_one_scenario(spark: SparkSession) -> None:
    events = frame(spark, [*KRAFT_EVENTS, *EXTRA])
    config = token_config(spark.createDataFrame([], NODE_PROPERTIES))
    # Cached: every rule reads the replay (the builder's caller decides for the pipeline).
    replayed = replay_lifecycle(empty(spark), events, config, as_of=utc(T0 + 3 * DAY)).cache()
    entries = tf.run_entries(replayed)
    parts: list[DataFrame] = [
        *tf.rejection_findings(entries, "r"),
        tf.not_allowed_findings(events, "r"),
        tf.mismatch_findings(entries, "r"),
        tf.burst_findings(events, 3, H, 60_000, "r"),
        # 0.25 x 7 d = 1.75 d: only tokC, described 2 d after issue.
        tf.lifetime_findings(entries, replayed, events, 0.25, "r"),
        tf.describe_findings(events, "r"),
        tf.hmac_findings(events, SECRET, FP_KEY, "r"),
    ]
    actual = reduce(DataFrame.unionByName, parts)
    expected = [
        found(
            "tokens.token_not_found",
            "medium",
            "principal",
            "User:alice",
            "renew tokB",
            T0 + 4 * H,
            T0 + 4 * H,
            1,
            [(REQ, 5)],
        ),
        found(
            "tokens.token_not_found",
            "medium",
            "principal",
            "User:eve",
            f"renew hmac:{FP_UNKNOWN}",
            T0 + 30,
            T0 + 30,
            1,
            [(REQ, 10)],
        ),
        found(
            "tokens.owner_mismatch",
            "medium",
            "principal",
            "User:mallory",
            "expire tokC",
            T0 + 2 * DAY + 1000,
            T0 + 2 * DAY + 1000,
            1,
            [(REQ, 8)],
        ),
        found(
            "tokens.expired_token_used",
            "low",
            "principal",
            "User:mallory",
            "renew tokC",
            T0 + 2 * DAY,
            T0 + 2 * DAY,
            1,
            [(REQ, 7)],
        ),
        found(
            "tokens.request_not_allowed",
            "medium",
            "principal",
            "User:ANONYMOUS",
            "describe",
            T0 + 5 * H,
            T0 + 5 * H,
            1,
            [(REQ, 14)],
        ),
        found(
            "tokens.request_not_allowed",
            "medium",
            "principal",
            "User:ANONYMOUS",
            "create",
            T0 + 5 * H + 1,
            T0 + 5 * H + 1,
            1,
            [(REQ, 15)],
        ),
        found(
            "tokens.replay_mismatch",
            "medium",
            "token",
            "tokB",
            "expiry_mismatch",
            T0 + 2 * H,
            T0 + 2 * H,
            1,
            [(REQ, 3)],
        ),
        found(
            "tokens.replay_mismatch",
            "medium",
            "token",
            "tokC",
            "error_code_mismatch",
            T0 + 2 * DAY + 1000,
            T0 + 2 * DAY + 1000,
            1,
            [(REQ, 8)],
        ),
        # Lines 1 (the forwarded copy counted once), 6 and 16 within one hour.
        found(
            "tokens.creation_burst",
            "medium",
            "principal",
            "User:alice",
            "",
            T0 + 5,
            T0 + 1_800_000,
            3,
            [(REQ, 1), (REQ, 6), (REQ, 16)],
        ),
        found(
            "tokens.lifetime_exceeds_max",
            "high",
            "token",
            "tokC",
            "",
            T0 + 2 * DAY,
            T0 + 2 * DAY + 500,
            2,
            [(REQ, 12), (REQ, 13)],
        ),
        found(
            "tokens.describe_by_non_owner",
            "low",
            "principal",
            "User:admin",
            "tokC",
            T0 + 2 * DAY,
            T0 + 2 * DAY,
            1,
            [(REQ, 12)],
        ),
        # FP_B / FP_C are made up: not minted by SECRET; tokE's is (no finding).
        found(
            "tokens.hmac_not_verified",
            "high",
            "token",
            "tokB",
            FP_B,
            T0 + 4,
            T0 + 5,
            2,
            [(REQ, 1), (C1, 1)],
        ),
        found(
            "tokens.hmac_not_verified",
            "high",
            "token",
            "tokC",
            FP_C,
            T0 + 10,
            T0 + 2 * DAY + 500,
            3,
            [(REQ, 6), (REQ, 12), (REQ, 13)],
        ),
    ]
    actual = actual.cache()
    assertDataFrameEqual(actual.select(*COLUMNS), spark.createDataFrame(expected, SCHEMA))
    sha = hashlib.sha256(b"tokens.replay_mismatch\x1ftoken\x1ftokB\x1fexpiry_mismatch")
    ids = actual.where(F.col("subject") == "tokB").where(
        F.col("discriminator") == "expiry_mismatch"
    )
    assert [r.finding_id for r in ids.collect()] == [sha.hexdigest()]
    actual.unpersist()
    replayed.unpersist()


def test_refused_forwarded_token_request_counts_once(spark: SparkSession) -> None:
    """KRaft: the broker's line and the controller's ``isForwarded`` line of one refused
    request (ControllerApis.allowTokenRequests refuses it too) are one request: count 1, the
    broker's node, both lines as evidence. A second request seen only by the broker counts 1
    more; a controller line alone still counts."""
    ctl = "/logs/controller-3000/kafka-request.log"
    rows = [
        event(1, "renew", T0, requester="User:carol", error_code=64),
        event(2, "renew", T0 + 5, requester="User:carol", error_code=64, is_forwarded=True,
              node_id="3000", source_path=ctl),
        event(3, "renew", T0 + 9, requester="User:carol", error_code=64),
        event(4, "expire", T0 + 20, requester="User:dave", error_code=64, is_forwarded=True,
              node_id="3000", source_path=ctl),
    ]  # fmt: skip
    actual = tf.not_allowed_findings(frame(spark, rows), "r").select(*COLUMNS)
    expected = spark.createDataFrame(
        [
            found(
                "tokens.request_not_allowed",
                "medium",
                "principal",
                "User:carol",
                "renew",
                T0,
                T0 + 9,
                2,
                [(REQ, 1), (REQ, 3), (ctl, 2)],
            ),
            found(
                "tokens.request_not_allowed",
                "medium",
                "principal",
                "User:dave",
                "expire",
                T0 + 20,
                T0 + 20,
                1,
                [(ctl, 4)],
                node="3000",
            ),
        ],
        SCHEMA,
    )
    assertDataFrameEqual(actual, expected, checkRowOrder=False)
