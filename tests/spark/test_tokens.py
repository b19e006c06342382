"""transforms.silver.tokens (and the token columns of transforms.silver.request_log.parse): delegation-token
operations from the request log and the token managers -> silver.token_events rows."""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Iterator

import pytest
from chispa import assert_df_equality
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from schemas.raw_lines import FAMILY_REQUEST, FAMILY_TOKEN
from schemas.request_events import REQUEST_EVENTS
from schemas.token_events import TOKEN_EVENTS
from tests.support.bronze_rows import Record, bronze_df
from tests.support.request_lines import (
    FP_A,
    FP_B,
    FP_C,
    REQUEST_LOGGER,
    assert_rows,
    header,
    json_message,
    placeholder,
    string_message,
)
from transforms.quarantine import parsed_rows
from transforms.silver.request_log.parse import parse_request_events
from transforms.silver.tokens import (
    is_token_record,
    parse_token_manager,
    token_events_from_requests,
)

ZK = "kafka.server.DelegationTokenManagerZk"
ZK_PRE_3_6 = "kafka.server.DelegationTokenManager"
KRAFT = "org.apache.kafka.controller.DelegationTokenControlManager"
PUBLISHER = "kafka.server.metadata.DelegationTokenPublisher"
LOGGED = dt.datetime(2023, 11, 14, 22, 13, 21)


def utc(epoch_ms: int) -> dt.datetime:
    """Naive UTC datetime of epoch ms (the session time zone is UTC)."""
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=epoch_ms)


def user(name: str) -> dict[str, str]:
    return {"principalType": "User", "principalName": name}


T0, DAY, WEEK = 1_700_000_000_000, 86_400_000, 604_800_000
TOKEN_1, TOKEN_2 = "tOkEn-1_AbCdEfGhIjKlMn", "tOkEn-2_ZyXwVuTsRqPoNm"
CID = "10.0.0.1:9093-10.0.0.5:41000-3"
CONTROLLER_CID = "10.0.0.9:9090-10.0.0.1:52000-0-2"


def _created(
    owner: str, requester: str, token: str, hmac: str, *, error: int = 0, issued: int = T0
) -> dict[str, object]:
    times = (-1, -1, -1) if error else (issued, issued + DAY, issued + WEEK)
    return {"errorCode": error, **user(owner), "tokenRequesterPrincipalType": "User", "tokenRequesterPrincipalName": requester, "issueTimestampMs": times[0], "expiryTimestampMs": times[1], "maxTimestampMs": times[2], "tokenId": token, "hmac": placeholder(hmac), "throttleTimeMs": 0}  # fmt: skip


def _described(
    owner: str, requester: str, token: str, hmac: str, renewers: list[str]
) -> dict[str, object]:
    return {**user(owner), "tokenRequesterPrincipalType": "User", "tokenRequesterPrincipalName": requester, "issueTimestamp": T0, "expiryTimestamp": T0 + DAY, "maxTimestamp": T0 + WEEK, "tokenId": token, "hmac": placeholder(hmac), "renewers": [user(r) for r in renewers]}  # fmt: skip


def token_request_records() -> list[Record]:
    """Lines 1-11: every delegation-token API, with successes, errors and edge cases."""
    create_v1 = _created("alice", "alice", TOKEN_2, FP_B, issued=T0 + 100_000)
    del create_v1["tokenRequesterPrincipalType"], create_v1["tokenRequesterPrincipalName"]
    messages = [
        # 1 Create v3 with an explicit owner, on the broker.
        json_message(header(38, 3, 11, "CREATE_DELEGATION_TOKEN", "admin-cli"), {"ownerPrincipalType": "User", "ownerPrincipalName": "alice", "renewers": [user("bob"), user("carol")], "maxLifetimeMs": WEEK}, _created("alice", "admin", TOKEN_1, FP_A), CID, principal="User:admin"),
        # 2 Create v1 (no owner, no requester) forwarded to the KRaft controller (KIP-590).
        json_message(header(38, 1, 12, "CREATE_DELEGATION_TOKEN", "alice-cli"), {"renewers": [], "maxLifetimeMs": -1}, create_v1, CONTROLLER_CID, principal="User:alice", forwarded=True, listener="CONTROLLER", software=("unknown", "unknown")),
        # 3 Create refused: bob may not create tokens for carol (65); Kafka returns an empty hmac.
        json_message(header(38, 3, 13, "CREATE_DELEGATION_TOKEN", "bob-cli"), {"ownerPrincipalType": "User", "ownerPrincipalName": "carol", "renewers": [], "maxLifetimeMs": -1}, _created("carol", "bob", "", FP_C, error=65), CID, principal="User:bob"),
        # 4 Renew.
        json_message(header(39, 2, 14, "RENEW_DELEGATION_TOKEN", "bob-cli"), {"hmac": placeholder(FP_A), "renewPeriodMs": 3_600_000}, {"errorCode": 0, "expiryTimestampMs": T0 + 3_600_000, "throttleTimeMs": 0}, CID, principal="User:bob"),
        # 5 Renew by someone neither owner nor renewer (63).
        json_message(header(39, 2, 15, "RENEW_DELEGATION_TOKEN", "m-cli"), {"hmac": placeholder(FP_A), "renewPeriodMs": -1}, {"errorCode": 63, "expiryTimestampMs": -1, "throttleTimeMs": 0}, CID, principal="User:mallory"),
        # 6 Expire now (period < 0); KRaft 3.6-3.9 answered with the negative period (KAFKA-17315).
        json_message(header(40, 2, 16, "EXPIRE_DELEGATION_TOKEN", "alice-cli"), {"hmac": placeholder(FP_B), "expiryTimePeriodMs": -1}, {"errorCode": 0, "expiryTimestampMs": -1, "throttleTimeMs": 0}, CID, principal="User:alice"),
        # 7 Describe alice's tokens: two.
        json_message(header(41, 3, 17, "DESCRIBE_DELEGATION_TOKEN", "admin-cli"), {"owners": [user("alice")]}, {"errorCode": 0, "tokens": [_described("alice", "admin", TOKEN_1, FP_A, ["bob", "carol"]), _described("alice", "alice", TOKEN_2, FP_B, [])], "throttleTimeMs": 0}, CID, principal="User:admin"),
        # 8 Describe all (owners null, deprecated v0): none visible.
        json_message(header(41, 0, 18, "DESCRIBE_DELEGATION_TOKEN", "bob-cli") | {"requestApiVersionDeprecated": True}, {"owners": None}, {"errorCode": 0, "tokens": [], "throttleTimeMs": 0}, CID, principal="User:bob"),
        # 9 Describe with tokens disabled (61).
        json_message(header(41, 3, 19, "DESCRIBE_DELEGATION_TOKEN", "bob-cli"), {"owners": [user("bob")]}, {"errorCode": 61, "tokens": [], "throttleTimeMs": 0}, CID, principal="User:bob"),
        # 10 Not a token API: no token row.
        json_message(header(3, 12, 20, "METADATA"), {"topics": None}, {"throttleTimeMs": 0, "brokers": []}, CID),
        # 11 Pre-2.8 Renew: only the hmac fingerprint and the error code are typed.
        string_message(("RENEW_DELEGATION_TOKEN", 1, "bob-cli", 21), f"{{hmac={placeholder(FP_A)},renew_period_ms=3600000}}", "{error_code=0,expiry_timestamp_ms=1700003600000,throttle_time_ms=0}", f"{CID};totalTime:1.0,requestQueueTime:0.1,localTime:0.2,remoteTime:0.0,throttleTime:0,responseQueueTime:0.1,sendTime:0.1,securityProtocol:SASL_SSL,principal:User:bob,listener:SASL_SSL,clientInformation:ClientInformation(softwareName=apache-kafka-java, softwareVersion=2.6.0)"),
    ]  # fmt: skip
    return [Record("DEBUG", REQUEST_LOGGER, m, log_ts=LOGGED) for m in messages]


@pytest.fixture(scope="module")
def requests(spark: SparkSession) -> Iterator[DataFrame]:
    """Lines 1-11 parsed once into request_events rows (the table contract), cached."""
    parsed = parse_request_events(bronze_df(spark, token_request_records(), FAMILY_REQUEST))
    table = parsed_rows(parsed, REQUEST_EVENTS).persist()
    yield table
    table.unpersist()


TOKEN_COLUMNS = (
    "line_number", "error_code", "error_code_name", "token_owner_principal_type",
    "token_owner_principal_name", "token_renewers", "token_max_lifetime_ms",
    "token_renew_period_ms", "token_expiry_time_period_ms", "token_owner", "token_requester",
    "token_issue_timestamp_ms", "token_issue_ts", "token_expiry_timestamp_ms", "token_expiry_ts",
    "token_max_timestamp_ms", "token_max_ts", "token_id", "token_hmac_fingerprint",
    "token_describe_owners", "token_described",
)  # fmt: skip


def test_token_api_columns_of_request_events(spark: SparkSession, requests: DataFrame) -> None:
    t0, t1 = utc(T0), utc(T0 + 100_000)
    described = [
        ("User:alice", "User:admin", t0, utc(T0 + DAY), utc(T0 + WEEK), TOKEN_1, FP_A, ["User:bob", "User:carol"]),
        ("User:alice", "User:alice", t0, utc(T0 + DAY), utc(T0 + WEEK), TOKEN_2, FP_B, []),
    ]  # fmt: skip
    n16 = (None,) * 16  # owner_principal_type .. hmac_fingerprint
    expected = [
        (1, 0, "NONE", "User", "alice", ["User:bob", "User:carol"], WEEK, None, None, "User:alice", "User:admin", T0, t0, T0 + DAY, utc(T0 + DAY), T0 + WEEK, utc(T0 + WEEK), TOKEN_1, FP_A, None, None),
        (2, 0, "NONE", None, None, [], -1, None, None, "User:alice", None, T0 + 100_000, t1, T0 + 100_000 + DAY, utc(T0 + 100_000 + DAY), T0 + 100_000 + WEEK, utc(T0 + 100_000 + WEEK), TOKEN_2, FP_B, None, None),
        (3, 65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", "User", "carol", [], -1, None, None, "User:carol", "User:bob", -1, None, -1, None, -1, None, None, None, None, None),
        (4, 0, "NONE", None, None, None, None, 3_600_000, None, None, None, None, None, T0 + 3_600_000, utc(T0 + 3_600_000), None, None, None, FP_A, None, None),
        (5, 63, "DELEGATION_TOKEN_OWNER_MISMATCH", None, None, None, None, -1, None, None, None, None, None, -1, None, None, None, None, FP_A, None, None),
        (6, 0, "NONE", None, None, None, None, None, -1, None, None, None, None, -1, None, None, None, None, FP_B, None, None),
        (7, 0, "NONE", *n16, ["User:alice"], described),
        (8, 0, "NONE", *n16, None, []),
        (9, 61, "DELEGATION_TOKEN_AUTH_DISABLED", *n16, ["User:bob"], []),
        (10, None, None, *n16, None, None),
        (11, 0, "NONE", *n16[:15], FP_A, None, None),
    ]  # fmt: skip
    assert_rows(spark, requests, TOKEN_COLUMNS, expected)


EVENT_COLUMNS = tuple(
    name for name in TOKEN_EVENTS.fieldNames() if name not in ("run_id", "source_path")
)


def test_token_events_from_requests(spark: SparkSession, requests: DataFrame) -> None:
    events = token_events_from_requests(requests)
    assert events.schema == TOKEN_EVENTS
    r, d = "request_log", LOGGED.date()
    ctx = ("1", "DEBUG", LOGGED, r)
    week, day = utc(T0 + WEEK), utc(T0 + DAY)
    bob_carol = ["User:bob", "User:carol"]
    expected = [
        (1, *ctx, "create", None, "User:admin", "User:alice", bob_carol, TOKEN_1, FP_A, T0, utc(T0), T0 + DAY, day, T0 + WEEK, week, WEEK, None, None, None, 0, "NONE", False, "admin-cli", "10.0.0.5", 11, None, d),
        (2, *ctx, "create", None, "User:alice", "User:alice", [], TOKEN_2, FP_B, T0 + 100_000, utc(T0 + 100_000), T0 + 100_000 + DAY, utc(T0 + 100_000 + DAY), T0 + 100_000 + WEEK, utc(T0 + 100_000 + WEEK), -1, None, None, None, 0, "NONE", True, "alice-cli", "10.0.0.1", 12, None, d),
        (3, *ctx, "create", None, "User:bob", "User:carol", [], None, None, -1, None, -1, None, -1, None, -1, None, None, None, 65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "bob-cli", "10.0.0.5", 13, None, d),
        (4, *ctx, "renew", None, "User:bob", None, None, None, FP_A, None, None, T0 + 3_600_000, utc(T0 + 3_600_000), None, None, None, 3_600_000, None, None, 0, "NONE", False, "bob-cli", "10.0.0.5", 14, None, d),
        (5, *ctx, "renew", None, "User:mallory", None, None, None, FP_A, None, None, -1, None, None, None, None, -1, None, None, 63, "DELEGATION_TOKEN_OWNER_MISMATCH", False, "m-cli", "10.0.0.5", 15, None, d),
        (6, *ctx, "expire", None, "User:alice", None, None, None, FP_B, None, None, -1, None, None, None, None, None, -1, None, 0, "NONE", False, "alice-cli", "10.0.0.5", 16, None, d),
        (7, *ctx, "describe", None, "User:admin", "User:alice", bob_carol, TOKEN_1, FP_A, T0, utc(T0), T0 + DAY, day, T0 + WEEK, week, None, None, None, ["User:alice"], 0, "NONE", False, "admin-cli", "10.0.0.5", 17, None, d),
        (7, *ctx, "describe", None, "User:admin", "User:alice", [], TOKEN_2, FP_B, T0, utc(T0), T0 + DAY, day, T0 + WEEK, week, None, None, None, ["User:alice"], 0, "NONE", False, "admin-cli", "10.0.0.5", 17, None, d),
        (8, *ctx, "describe", None, "User:bob", None, None, None, None, None, None, None, None, None, None, None, None, None, None, 0, "NONE", False, "bob-cli", "10.0.0.5", 18, None, d),
        (9, *ctx, "describe", None, "User:bob", None, None, None, None, None, None, None, None, None, None, None, None, None, ["User:bob"], 61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "bob-cli", "10.0.0.5", 19, None, d),
        (11, *ctx, "renew", None, "User:bob", None, None, None, FP_A, None, None, None, None, None, None, None, None, None, None, 0, "NONE", False, "bob-cli", "10.0.0.5", 21, None, d),
    ]  # fmt: skip
    assert_rows(spark, events, EVENT_COLUMNS, expected, order_by=("line_number", "token_id"))


ZK_PREFIX, KRAFT_PREFIX = "[Token Manager on Node 1]: ", "[QuorumController id=3000] "
KRAFT_TOKEN = "kR4ft_Tok3n_IdAbCdEfGh"
STACK = "java.lang.IllegalStateException: boom\n\tat kafka.server.DelegationTokenManagerZk.getToken(DelegationTokenManagerZk.scala:205)"


def manager_records() -> list[Record]:
    """Every section 6.4 wording in both metadata modes, then cut and unknown lines."""
    return [
        Record("INFO", ZK, f"{ZK_PREFIX}Created a delegation token: {TOKEN_1} for owner: User:alice", log_ts=LOGGED),
        Record("INFO", ZK, f"{ZK_PREFIX}Delegation token renewed for token: {TOKEN_1} for owner: User:alice"),
        Record("INFO", ZK, f"{ZK_PREFIX}Token expired for token: {TOKEN_1} for owner: User:alice"),
        Record("INFO", ZK, f"{ZK_PREFIX}Updated expiry time for token: {TOKEN_2} for owner: User:CN=svc, O=Acme:1"),
        Record("INFO", ZK, f"{ZK_PREFIX}Delegation token expired for token: {TOKEN_2} for owner: User:CN=svc, O=Acme:1"),
        Record("INFO", ZK, f"{ZK_PREFIX}Loading the token cache. Total token count: 3"),
        Record("INFO", ZK, f"{ZK_PREFIX}Processing Token Notification for tokenId: {TOKEN_2}"),
        Record("ERROR", ZK, f"{ZK_PREFIX}Exception while getting token for hmac", continuation=STACK),
        Record("ERROR", ZK, f"{ZK_PREFIX}Error while getting Token for tokenId: {TOKEN_1}", continuation=STACK),
        # Before 3.6: DelegationTokenManager, "on Broker".
        Record("INFO", ZK_PRE_3_6, f"[Token Manager on Broker 0]: Created a delegation token: {TOKEN_2} for owner: User:carol"),
        # KRaft controller (DelegationTokenControlManager, QuorumController LogContext).
        Record("INFO", KRAFT, f"{KRAFT_PREFIX}Delegation token expired for token: {KRAFT_TOKEN} for owner: User:alice"),
        Record("INFO", KRAFT, f"{KRAFT_PREFIX}Replayed DelegationTokenRecord for {KRAFT_TOKEN}."),
        Record("INFO", KRAFT, f"{KRAFT_PREFIX}Replayed RemoveDelegationTokenRecord for {KRAFT_TOKEN}."),
        # Quarantined.
        Record("INFO", ZK, f"{ZK_PREFIX}Created a delegation token: {TOKEN_1} for ow"),
        Record("INFO", ZK, "[Token Manager on No"),
        Record("INFO", KRAFT, f"{KRAFT_PREFIX}Replayed DelegationTokenRecord for "),
        Record("INFO", PUBLISHER, "[DelegationTokenPublisher broker id=1] Something new about tokens"),
        Record("INFO", ZK, None),
        Record("INFO", ZK, "   "),
    ]  # fmt: skip


MANAGER_COLUMNS = (
    "line_number", "event_ts", "source", "operation", "metadata_mode", "owner", "token_id",
    "token_count", "requester", "hmac_fingerprint", "error_code", "reason_code",
)  # fmt: skip


def test_token_manager_lines(spark: SparkSession) -> None:
    parsed = parse_token_manager(bronze_df(spark, manager_records(), FAMILY_TOKEN)).persist()
    m, zk, kraft = "token_manager", "zookeeper", "kraft"
    svc, cut = "User:CN=svc, O=Acme:1", "token_truncated_message"
    nothing = (None, None, None)
    expected = [
        (1, LOGGED, m, "create", zk, "User:alice", TOKEN_1, None, *nothing, None),
        (2, None, m, "renew", zk, "User:alice", TOKEN_1, None, *nothing, None),
        (3, None, m, "expire", zk, "User:alice", TOKEN_1, None, *nothing, None),
        (4, None, m, "update_expiry", zk, svc, TOKEN_2, None, *nothing, None),
        (5, None, m, "sweep", zk, svc, TOKEN_2, None, *nothing, None),
        (6, None, m, "cache_load", zk, None, None, 3, *nothing, None),
        (7, None, m, "notification", zk, None, TOKEN_2, None, *nothing, None),
        (8, None, m, "error", zk, None, None, None, *nothing, None),
        (9, None, m, "error", zk, None, TOKEN_1, None, *nothing, None),
        (10, None, m, "create", zk, "User:carol", TOKEN_2, None, *nothing, None),
        (11, None, m, "sweep", kraft, "User:alice", KRAFT_TOKEN, None, *nothing, None),
        (12, None, m, "replay_record", kraft, None, KRAFT_TOKEN, None, *nothing, None),
        (13, None, m, "replay_remove", kraft, None, KRAFT_TOKEN, None, *nothing, None),
        (14, None, m, None, zk, None, None, None, *nothing, cut),
        (15, None, m, None, zk, None, None, None, *nothing, cut),
        (16, None, m, None, kraft, None, None, None, *nothing, cut),
        (17, None, m, None, kraft, None, None, None, *nothing, "token_unrecognized_format"),
        (18, None, m, None, zk, None, None, None, *nothing, "missing_field_message"),
        (19, None, m, None, zk, None, None, None, *nothing, "missing_field_message"),
    ]  # fmt: skip
    assert_rows(spark, parsed, MANAGER_COLUMNS, expected)
    # Both sources end in one contract: the accepted rows union with the request-log rows.
    table = parsed_rows(parsed, TOKEN_EVENTS)
    assert table.schema == TOKEN_EVENTS
    lines = table.select("line_number").orderBy("line_number")
    expected_lines = spark.createDataFrame([(n,) for n in range(1, 14)], "line_number long")
    assert_df_equality(lines, expected_lines, ignore_nullable=True)
    parsed.unpersist()


def test_is_token_record_claims_the_token_manager_loggers(spark: SparkSession) -> None:
    rows = [
        (ZK, "[Token Manager on Node 1]: Created a deleg"),  # cut: still claimed
        (ZK_PRE_3_6, "anything"),
        (KRAFT, "[QuorumController id=1] Replayed DelegationTokenRecord for x."),
        (f"{KRAFT}:350", "x"),
        (PUBLISHER, "[DelegationTokenPublisher broker id=1] x"),
        ("org.apache.kafka.controller.QuorumController", "Delegation token expired for token: x for owner: User:a"),
        ("kafka.server.DelegationTokenManagerZkX", "Created a delegation token: x for owner: User:a"),
        (ZK, None),
        (None, "Created a delegation token: x for owner: User:a"),
    ]  # fmt: skip
    df = spark.createDataFrame(rows, "logger string, message string")
    actual = df.select(is_token_record(F.col("logger"), F.col("message")).alias("claimed"))
    claimed = [True, True, True, True, True, False, False, False, False]
    expected = spark.createDataFrame([(c,) for c in claimed], "claimed boolean")
    assert_df_equality(actual, expected, ignore_nullable=True)


# Hypothesis round trip: render token-manager lines in Kafka's exact wording, parse them back.
_TOKEN_ID = st.text(string.ascii_letters + string.digits + "-_", min_size=1, max_size=24)
_OWNER = st.text(string.ascii_letters + string.digits + " ,=#/@:._-", min_size=1, max_size=24)
_ZK_WORDINGS = {
    "create": "Created a delegation token: {t} for owner: {o}",
    "renew": "Delegation token renewed for token: {t} for owner: {o}",
    "expire": "Token expired for token: {t} for owner: {o}",
    "update_expiry": "Updated expiry time for token: {t} for owner: {o}",
    "sweep": "Delegation token expired for token: {t} for owner: {o}",
    "notification": "Processing Token Notification for tokenId: {t}",
    "cache_load": "Loading the token cache. Total token count: {n}",
}
_KRAFT_WORDINGS = {
    "sweep": "Delegation token expired for token: {t} for owner: {o}",
    "replay_record": "Replayed DelegationTokenRecord for {t}.",
    "replay_remove": "Replayed RemoveDelegationTokenRecord for {t}.",
}
_ROUND_TRIP_COLUMNS = ("line_number", "operation", "metadata_mode", "owner", "token_id", "token_count", "reason_code")  # fmt: skip


@st.composite
def rendered_manager_lines(draw: st.DrawFn) -> tuple[Record, tuple[object, ...]]:
    kraft = draw(st.booleans())
    wordings = _KRAFT_WORDINGS if kraft else _ZK_WORDINGS
    operation = draw(st.sampled_from(sorted(wordings)))
    token, owner = draw(_TOKEN_ID), f"User:{draw(_OWNER)}"
    count, node = draw(st.integers(0, 10**6)), draw(st.integers(0, 9999))
    text = wordings[operation].format(t=token, o=owner, n=count)
    if kraft:
        record = Record("INFO", KRAFT, f"[QuorumController id={node}] {text}")
    else:
        word = draw(st.sampled_from(("Node", "Broker")))
        record = Record("INFO", ZK, f"[Token Manager on {word} {node}]: {text}")
    has_owner, counted = "{o}" in wordings[operation], operation == "cache_load"
    return record, (
        operation, "kraft" if kraft else "zookeeper", owner if has_owner else None,
        None if counted else token, count if counted else None, None,
    )  # fmt: skip


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rendered_manager_lines(), min_size=5, max_size=20))
def test_round_trip_rendered_manager_lines(
    spark: SparkSession, lines: list[tuple[Record, tuple[object, ...]]]
) -> None:
    parsed = parse_token_manager(bronze_df(spark, [record for record, _ in lines], FAMILY_TOKEN))
    expected = [(i, *row) for i, (_, row) in enumerate(lines, 1)]
    assert_rows(spark, parsed, _ROUND_TRIP_COLUMNS, expected)
