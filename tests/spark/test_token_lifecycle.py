"""transforms.gold.kip48_tokens.lifecycle: KIP-48 token lifecycles replayed from token_events, in both
metadata modes, merged across runs. Every expected value below is derived by hand from the
rules of docs/kafka-log-formats.md section 6.3 (the arithmetic is written out in the comments)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from schemas.node_properties import NODE_PROPERTIES
from schemas.token_events import TOKEN_EVENTS
from schemas.token_lifecycle import TOKEN_LIFECYCLE
from transforms.gold.kip48_tokens.lifecycle import lifecycle_rows, replay_lifecycle, token_config

T0, H, DAY = 1_700_000_000_000, 3_600_000, 86_400_000  # T0 = 2023-11-14 22:13:20 UTC
FP_A, FP_B, FP_C = "a" * 32, "b" * 32, "c" * 32
FP_UNKNOWN = "0123456789abcdef" * 2
REQ, SRV = "/logs/b1/kafka-request.log", "/logs/b1/server.log"
ERRORS = {
    0: "NONE",
    62: "DELEGATION_TOKEN_NOT_FOUND",
    63: "DELEGATION_TOKEN_OWNER_MISMATCH",
    64: "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
    65: "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
    66: "DELEGATION_TOKEN_EXPIRED",
}


def utc(epoch_ms: int) -> dt.datetime:
    """Naive UTC datetime of epoch ms (the session time zone is UTC)."""
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=epoch_ms)


def event(line: int, op: str, ms: int, **kw: Any) -> tuple[Any, ...]:
    """One TOKEN_EVENTS row: request log by default; ``*_timestamp_ms`` also fill ``*_ts``."""
    row: dict[str, Any] = {
        "run_id": "r",
        "source_path": REQ,
        "line_number": line,
        "node_id": "1",
        "level": "DEBUG",
        "event_ts": utc(ms),
        "source": "request_log",
        "operation": op,
        "event_date": utc(ms).date(),
    }
    unknown = set(kw) - set(TOKEN_EVENTS.fieldNames())
    assert not unknown, unknown
    row.update(kw)
    if row["source"] == "request_log":
        row.setdefault("is_forwarded", False)
        row.setdefault("error_code", 0)
    if row.get("error_code") is not None:
        row["error_code_name"] = ERRORS[row["error_code"]]
    for name in ("issue", "expiry", "max"):
        value = row.get(f"{name}_timestamp_ms")
        if value is not None and value >= 0:
            row[f"{name}_ts"] = utc(value)
    return tuple(row.get(f) for f in TOKEN_EVENTS.fieldNames())


def create(
    line: int,
    ms: int,
    token: str,
    fp: str,
    *,
    issue: int,
    expiry: int,
    max_ts: int,
    lifetime: int,
    owner: str = "User:alice",
    renewers: tuple[str, ...] = (),
    **kw: Any,
) -> tuple[Any, ...]:
    return event(
        line,
        "create",
        ms,
        requester=kw.pop("requester", owner),
        owner=owner,
        renewers=list(renewers),
        token_id=token,
        hmac_fingerprint=fp,
        issue_timestamp_ms=issue,
        expiry_timestamp_ms=expiry,
        max_timestamp_ms=max_ts,
        max_lifetime_ms=lifetime,
        **kw,
    )


def renew(  # noqa: PLR0917
    line: int,
    ms: int,
    who: str,
    fp: str,
    period: int | None,
    observed: int | None,
    error: int = 0,
    **kw: Any,
) -> tuple[Any, ...]:
    return event(
        line,
        "renew",
        ms,
        requester=who,
        hmac_fingerprint=fp,
        renew_period_ms=period,
        expiry_timestamp_ms=observed,
        error_code=error,
        **kw,
    )


def expire(  # noqa: PLR0917
    line: int, ms: int, who: str, fp: str, period: int, observed: int, error: int = 0, **kw: Any
) -> tuple[Any, ...]:
    return event(
        line,
        "expire",
        ms,
        requester=who,
        hmac_fingerprint=fp,
        expiry_time_period_ms=period,
        expiry_timestamp_ms=observed,
        error_code=error,
        **kw,
    )


def entry(  # noqa: PLR0917
    line: int,
    ms: int,
    actor: str | None,
    op: str,
    new_expiry: int | None,
    error: int | None,
    req: int | None,
    observed: int | None,
    expected: int | None,
    expected_error: int | None,
    check: str,
    *,
    issue: int | None = None,
    max_ts: int | None = None,
    source: str = "request_log",
    mode: str | None = None,
    path: str = REQ,
    node: str = "1",
) -> tuple[Any, ...]:
    """One expected TOKEN_HISTORY_ENTRY."""
    name = None if error is None else ERRORS[error]
    new_ts = None if new_expiry is None else utc(new_expiry)
    return (
        utc(ms),
        actor,
        op,
        new_ts,
        error,
        name,
        req,
        observed,
        issue,
        max_ts,
        expected,
        expected_error,
        check,
        source,
        mode,
        node,
        path,
        line,
    )


def frame(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    return spark.createDataFrame(rows, TOKEN_EVENTS)


def props(spark: SparkSession, *pairs: tuple[str, str | None]) -> DataFrame:
    rows = [("1", "broker", "/c/server.properties", k, v, v is None) for k, v in pairs]
    return spark.createDataFrame(rows, NODE_PROPERTIES)


def empty(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame([], TOKEN_LIFECYCLE)


def lifecycle(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    return spark.createDataFrame(rows, TOKEN_LIFECYCLE)


def test_token_config_from_node_properties(spark: SparkSession) -> None:
    """Configured values win (both secret-key names count); an empty config gives Kafka's
    defaults (7 d, 1 d, 1 h) and unknown enabled / mode; a malformed number falls back."""
    configured = props(
        spark,
        ("delegation.token.max.lifetime.ms", "259200000"),
        ("delegation.token.master.key", None),
        ("zookeeper.connect", "zk:2181"),
        ("delegation.token.expiry.time.ms", "twelve"),
    )
    kraft = props(spark, ("process.roles", "broker"), ("delegation.token.secret.key", None))
    none = spark.createDataFrame([], NODE_PROPERTIES)
    actual = token_config(configured).unionByName(token_config(kraft))
    actual = actual.unionByName(token_config(none))
    expected = spark.createDataFrame(
        [
            (259_200_000, DAY, H, True, "zookeeper"),
            (7 * DAY, DAY, H, True, "kraft"),
            (7 * DAY, DAY, H, None, None),
        ],
        "max_lifetime_ms long, expiry_time_ms long, expiry_check_interval_ms long, "
        "tokens_enabled boolean, metadata_mode string",
    )
    assertDataFrameEqual(actual, expected)


def test_zookeeper_lifecycle_capped_renewed_rejected_expired_swept(spark: SparkSession) -> None:
    """ZooKeeper mode (zookeeper.connect), max lifetime 3 d: alice asks 7 d, gets 3 d."""
    config = token_config(
        props(
            spark,
            ("delegation.token.max.lifetime.ms", str(3 * DAY)),
            ("zookeeper.connect", "zk:2181"),
        )
    )
    rows = [
        # max = T0 + min(7 d, 3 d); expiry = min(max, T0 + 1 d).
        create(
            1,
            T0 + 5,
            "tokA",
            FP_A,
            issue=T0,
            expiry=T0 + DAY,
            max_ts=T0 + 3 * DAY,
            lifetime=7 * DAY,
            renewers=("User:bob",),
        ),
        # bob is a renewer; ZK does not cap the period: min(max, now + 2 d); Kafka's now 3 ms
        # before the log line.
        renew(2, T0 + 2 * H, "User:bob", FP_A, 2 * DAY, T0 + 2 * H + 2 * DAY - 3),
        renew(3, T0 + 3 * H, "User:mallory", FP_A, -1, -1, 63),
        # expire with a period: min(max, now + 1 h).
        expire(4, T0 + 4 * H, "User:alice", FP_A, H, T0 + 5 * H - 2),
        # past expiry (T0 + 5 h): owner check passes, then 66.
        renew(5, T0 + 6 * H, "User:alice", FP_A, -1, -1, 66),
        event(
            7,
            "sweep",
            T0 + 6 * H + 1_800_000,
            source="token_manager",
            source_path=SRV,
            metadata_mode="zookeeper",
            token_id="tokA",
            owner="User:alice",
            level="INFO",
        ),
    ]
    replayed = replay_lifecycle(empty(spark), frame(spark, rows), config, as_of=utc(T0 + DAY))
    history = [
        entry(
            1,
            T0 + 5,
            "User:alice",
            "create",
            T0 + DAY,
            0,
            7 * DAY,
            T0 + DAY,
            T0 + DAY,
            None,
            "ok",
            issue=T0,
            max_ts=T0 + 3 * DAY,
        ),
        entry(
            2,
            T0 + 2 * H,
            "User:bob",
            "renew",
            T0 + 2 * H + 2 * DAY - 3,
            0,
            2 * DAY,
            T0 + 2 * H + 2 * DAY - 3,
            T0 + 2 * H + 2 * DAY,
            0,
            "ok",
        ),
        entry(3, T0 + 3 * H, "User:mallory", "renew", None, 63, -1, -1, None, 63, "ok"),
        entry(
            4,
            T0 + 4 * H,
            "User:alice",
            "expire",
            T0 + 5 * H - 2,
            0,
            H,
            T0 + 5 * H - 2,
            T0 + 5 * H,
            0,
            "ok",
        ),
        entry(5, T0 + 6 * H, "User:alice", "renew", None, 66, -1, -1, None, 66, "ok"),
        entry(
            7,
            T0 + 6 * H + 1_800_000,
            None,
            "sweep",
            None,
            None,
            None,
            None,
            None,
            None,
            "ok",
            source="token_manager",
            mode="zookeeper",
            path=SRV,
        ),
    ]
    expected = [
        (
            "tokA",
            "tokA",
            FP_A,
            "User:alice",
            "User:alice",
            ["User:bob"],
            "zookeeper",
            utc(T0),
            utc(T0 + 3 * DAY),
            utc(T0 + 5 * H - 2),
            3 * DAY,
            1,
            history,
            "swept",
            utc(T0 + DAY),
            utc(T0 + 6 * H + 1_800_000),
            utc(T0 + 5),
            utc(T0 + 6 * H + 1_800_000),
            0,
            None,
        )
    ]
    assertDataFrameEqual(lifecycle_rows(replayed), lifecycle(spark, expected))


KRAFT_EVENTS = [
    # Broker line, and the controller's forwarded copy of the same request (dropped).
    create(
        1,
        T0 + 5,
        "tokB",
        FP_B,
        issue=T0,
        expiry=T0 + DAY,
        max_ts=T0 + 7 * DAY,
        lifetime=-1,
        correlation_id=7,
        client_id="cli",
    ),
    create(
        1,
        T0 + 4,
        "tokB",
        FP_B,
        issue=T0,
        expiry=T0 + DAY,
        max_ts=T0 + 7 * DAY,
        lifetime=-1,
        correlation_id=7,
        client_id="cli",
        is_forwarded=True,
        source_path="/logs/c1/kafka-request.log",
        node_id="3000",
    ),
    # KRaft caps the period at delegation.token.expiry.time.ms: now + min(1 d, 2 d).
    renew(2, T0 + H, "User:alice", FP_B, 2 * DAY, T0 + H + DAY - 1),
    # A broker that did not cap (misconfigured, or another cluster's logs).
    renew(3, T0 + 2 * H, "User:alice", FP_B, 2 * DAY, T0 + 2 * H + 2 * DAY),
    # Expire now, answered with the negative period (KRaft 3.6-3.9, KAFKA-17315).
    expire(4, T0 + 3 * H, "User:alice", FP_B, -1, -1),
    renew(5, T0 + 4 * H, "User:alice", FP_B, -1, -1, 62),
    create(
        6,
        T0 + 10,
        "tokC",
        FP_C,
        issue=T0,
        expiry=T0 + DAY,
        max_ts=T0 + 7 * DAY,
        lifetime=0,
        renewers=("User:bob",),
    ),
    # mallory, not a renewer, on an expired token: KRaft checks expiry first (66) ...
    renew(7, T0 + 2 * DAY, "User:mallory", FP_C, -1, -1, 66),
    # ... so a 63 here disagrees with the KRaft replay.
    expire(8, T0 + 2 * DAY + 1000, "User:mallory", FP_C, H, -1, 63),
    # A failed create has no token: no lifecycle row.
    event(
        9,
        "create",
        T0 + 20,
        requester="User:bob",
        owner="User:carol",
        error_code=65,
        issue_timestamp_ms=-1,
        expiry_timestamp_ms=-1,
        max_timestamp_ms=-1,
    ),
    # An HMAC no create / describe response carried: keyed by its fingerprint.
    renew(10, T0 + 30, "User:eve", FP_UNKNOWN, -1, -1, 62),
    # A line without a timestamp cannot be placed in a history.
    event(11, "renew", 0, event_ts=None, requester="User:alice", hmac_fingerprint=FP_B),
]


def test_kraft_lifecycle_quirk_mismatch_and_check_order(spark: SparkSession) -> None:
    """KRaft inferred from the forwarded line; Kafka's defaults (7 d max, 1 d renew)."""
    config = token_config(spark.createDataFrame([], NODE_PROPERTIES))
    replayed = replay_lifecycle(
        empty(spark), frame(spark, KRAFT_EVENTS), config, as_of=utc(T0 + 3 * DAY)
    )
    b_history = [
        entry(
            1,
            T0 + 5,
            "User:alice",
            "create",
            T0 + DAY,
            0,
            -1,
            T0 + DAY,
            T0 + DAY,
            None,
            "ok",
            issue=T0,
            max_ts=T0 + 7 * DAY,
        ),
        entry(
            2,
            T0 + H,
            "User:alice",
            "renew",
            T0 + H + DAY - 1,
            0,
            2 * DAY,
            T0 + H + DAY - 1,
            T0 + H + DAY,
            0,
            "ok",
        ),
        entry(
            3,
            T0 + 2 * H,
            "User:alice",
            "renew",
            T0 + 2 * H + 2 * DAY,
            0,
            2 * DAY,
            T0 + 2 * H + 2 * DAY,
            T0 + 2 * H + DAY,
            0,
            "expiry_mismatch",
        ),
        entry(
            4,
            T0 + 3 * H,
            "User:alice",
            "expire",
            T0 + 3 * H,
            0,
            -1,
            -1,
            T0 + 3 * H,
            0,
            "kraft_negative_expiry",
        ),
        entry(5, T0 + 4 * H, "User:alice", "renew", None, 62, -1, -1, None, 62, "ok"),
    ]
    c_history = [
        entry(
            6,
            T0 + 10,
            "User:alice",
            "create",
            T0 + DAY,
            0,
            0,
            T0 + DAY,
            T0 + DAY,
            None,
            "ok",
            issue=T0,
            max_ts=T0 + 7 * DAY,
        ),
        entry(7, T0 + 2 * DAY, "User:mallory", "renew", None, 66, -1, -1, None, 66, "ok"),
        entry(
            8,
            T0 + 2 * DAY + 1000,
            "User:mallory",
            "expire",
            None,
            63,
            H,
            -1,
            None,
            66,
            "error_code_mismatch",
        ),
    ]
    eve = [entry(10, T0 + 30, "User:eve", "renew", None, 62, -1, -1, None, None, "unchecked")]
    as_of = utc(T0 + 3 * DAY)
    expected = [
        (
            "tokB",
            "tokB",
            FP_B,
            "User:alice",
            "User:alice",
            [],
            "kraft",
            utc(T0),
            utc(T0 + 7 * DAY),
            utc(T0 + 3 * H),
            7 * DAY,
            2,
            b_history,
            "expired_early",
            as_of,
            utc(T0 + 3 * H),
            # First seen on the controller's forwarded copy (T0 + 4 ms).
            utc(T0 + 4),
            utc(T0 + 4 * H),
            1,
            None,
        ),
        (
            "tokC",
            "tokC",
            FP_C,
            "User:alice",
            "User:alice",
            ["User:bob"],
            "kraft",
            utc(T0),
            utc(T0 + 7 * DAY),
            utc(T0 + DAY),
            7 * DAY,
            0,
            c_history,
            "expired",
            as_of,
            utc(T0 + DAY),
            utc(T0 + 10),
            utc(T0 + 2 * DAY + 1000),
            1,
            None,
        ),
        (
            f"hmac:{FP_UNKNOWN}",
            None,
            FP_UNKNOWN,
            None,
            None,
            None,
            "kraft",
            None,
            None,
            None,
            None,
            0,
            eve,
            "active",
            as_of,
            None,
            utc(T0 + 30),
            utc(T0 + 30),
            0,
            None,
        ),
    ]
    assertDataFrameEqual(lifecycle_rows(replayed), lifecycle(spark, expected))


DAY1 = [
    create(
        1,
        T0 + 5,
        "tokD",
        FP_A,
        issue=T0,
        expiry=T0 + DAY,
        max_ts=T0 + 7 * DAY,
        lifetime=-1,
        source_path="/logs/day1.log",
    ),
    renew(2, T0 + H, "User:alice", FP_A, 2 * DAY, T0 + H + 2 * DAY, source_path="/logs/day1.log"),
]
#: Day 2 renews by HMAC only: the token is found through day 1's row.
DAY2 = [renew(1, T0 + DAY, "User:alice", FP_A, -1, T0 + 2 * DAY, source_path="/logs/day2.log")]


def test_token_spanning_two_runs_and_reruns(spark: SparkSession) -> None:
    """Created day 1 and renewed day 2 (ZooKeeper forced): one row, the whole history;
    re-running either day on its own output changes nothing."""
    config = token_config(spark.createDataFrame([], NODE_PROPERTIES))

    def run(previous: DataFrame, rows: list[tuple[Any, ...]], as_of: int) -> DataFrame:
        replayed = replay_lifecycle(
            previous, frame(spark, rows), config, as_of=utc(as_of), metadata_mode="zookeeper"
        )
        return spark.createDataFrame(lifecycle_rows(replayed).collect(), TOKEN_LIFECYCLE)

    day1_history = [
        entry(
            1,
            T0 + 5,
            "User:alice",
            "create",
            T0 + DAY,
            0,
            -1,
            T0 + DAY,
            T0 + DAY,
            None,
            "ok",
            issue=T0,
            max_ts=T0 + 7 * DAY,
            path="/logs/day1.log",
        ),
        # ZooKeeper: min(max, now + 2 d) uncapped.
        entry(
            2,
            T0 + H,
            "User:alice",
            "renew",
            T0 + H + 2 * DAY,
            0,
            2 * DAY,
            T0 + H + 2 * DAY,
            T0 + H + 2 * DAY,
            0,
            "ok",
            path="/logs/day1.log",
        ),
    ]
    # Day 2, period -1: the default 1 d: min(T0 + 7 d, T0 + 1 d + 1 d).
    day2_entry = entry(
        1,
        T0 + DAY,
        "User:alice",
        "renew",
        T0 + 2 * DAY,
        0,
        -1,
        T0 + 2 * DAY,
        T0 + 2 * DAY,
        0,
        "ok",
        path="/logs/day2.log",
    )

    def row(
        history: list[tuple[Any, ...]], expiry: int, renews: int, as_of: int, last: int
    ) -> tuple[Any, ...]:
        return (
            "tokD",
            "tokD",
            FP_A,
            "User:alice",
            "User:alice",
            [],
            "zookeeper",
            utc(T0),
            utc(T0 + 7 * DAY),
            utc(expiry),
            7 * DAY,
            renews,
            history,
            "active",
            utc(as_of),
            None,
            utc(T0 + 5),
            utc(last),
            0,
            None,
        )

    day1 = run(empty(spark), DAY1, T0 + 2 * H)
    expected1 = lifecycle(spark, [row(day1_history, T0 + H + 2 * DAY, 1, T0 + 2 * H, T0 + H)])
    assertDataFrameEqual(day1, expected1)
    assertDataFrameEqual(run(day1, DAY1, T0 + 2 * H), expected1)
    day2 = run(day1, DAY2, T0 + DAY + H)
    history = [*day1_history, day2_entry]
    expected2 = lifecycle(spark, [row(history, T0 + 2 * DAY, 2, T0 + DAY + H, T0 + DAY)])
    assertDataFrameEqual(day2, expected2)
    assertDataFrameEqual(run(day2, DAY2, T0 + DAY + H), expected2)


def test_unknown_metadata_mode_is_rejected(spark: SparkSession) -> None:
    config = token_config(spark.createDataFrame([], NODE_PROPERTIES))
    with pytest.raises(ValueError, match="metadata_mode"):
        replay_lifecycle(empty(spark), frame(spark, DAY1), config, metadata_mode="etcd")
